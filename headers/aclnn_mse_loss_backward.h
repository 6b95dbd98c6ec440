/* pyaclnn: C declarations for cffi (ABI mode), header-shaped after CANN's aclnnop/aclnn_mse_loss_backward.h.
 * Names and values exactly as the official headers (checked against abi.json by
 * tests/registry/test_headers.py). Declarations only: no includes, no logic.
 * Functions declared with () in CANN are declared (void) here. */

aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, const aclTensor* target, int64_t reduction, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
aclnnStatus aclnnMseLossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
