/* pyaclnn: C declarations for cffi (ABI mode), header-shaped after CANN's aclnnop/aclnn_cat.h
 * (hicann/ops-math conversion/concat_d/op_api/aclnn_cat.h). Prototypes exactly as the real
 * header's (checked against ../shared/headers by tests/test_headers.py). Declarations only. */

aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList* tensors, int64_t dim, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
aclnnStatus aclnnCat(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, const aclrtStream stream);
