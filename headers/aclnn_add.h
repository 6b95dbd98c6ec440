/* pyaclnn: C declarations for cffi (ABI mode), header-shaped after CANN's aclnnop/aclnn_add.h
 * (hicann/ops-math math/add/op_api/aclnn_add.h): the two operators pyaclnn has a reference for,
 * aclnnAdd and aclnnInplaceAdd (aclnnAdds and aclnnInplaceAdds, declared there too, come from the
 * installed CANN's header). Prototypes exactly as the real header's (checked against
 * ../shared/headers by tests/registry/test_headers.py). Declarations only: no includes, no logic. */

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
aclnnStatus aclnnAdd(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor* selfRef, const aclTensor* other, const aclScalar* alpha, uint64_t* workspaceSize, aclOpExecutor** executor);
aclnnStatus aclnnInplaceAdd(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
