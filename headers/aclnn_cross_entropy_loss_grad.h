/* pyaclnn: C declarations for cffi (ABI mode), header-shaped after CANN's aclnnop/aclnn_cross_entropy_loss_grad.h.
 * Names and values exactly as the official headers (checked against abi.json by
 * tests/registry/test_headers.py). Declarations only: no includes, no logic.
 * Functions declared with () in CANN are declared (void) here. */

aclnnStatus aclnnCrossEntropyLossGradGetWorkspaceSize(const aclTensor *gradLoss, const aclTensor *logProb, const aclTensor *target, const aclTensor *weightOptional, const aclTensor *gradZlossOptional, const aclTensor *lseForZlossOptional, char *reductionOptional, int64_t ignoreIndex, double labelSmoothing, double lseSquareScaleForZloss, const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnCrossEntropyLossGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);
