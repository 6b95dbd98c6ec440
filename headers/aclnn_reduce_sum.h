/* pyaclnn: C declarations for cffi (ABI mode), header-shaped after CANN's aclnnop/aclnn_reduce_sum.h
 * (hicann/ops-math math/reduce_sum/op_api/aclnn_reduce_sum.h). Prototypes exactly as the real
 * header's (checked against ../shared/headers by tests/registry/test_headers.py). Declarations only: no
 * includes, no logic. */

aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor* self, const aclIntArray* dims, bool keepDims, aclDataType dtype, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
aclnnStatus aclnnReduceSum(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
