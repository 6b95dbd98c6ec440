/*
 * aclnn_mse_loss_backward.h - pyaclnn CANN emulator: operator header in the style of the
 * hand-written op_api headers (hicann/ops-nn loss/mse_loss_grad/op_api).
 */
#ifndef OP_API_INC_MSE_LOSS_BACKWARD_H_
#define OP_API_INC_MSE_LOSS_BACKWARD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnMseLossBackward: gradient of the mean squared error loss.
 * @domain aclnn_ops_train
 *
 * @param [in] gradOutput: device aclTensor, the incoming gradient; broadcasts to self.
 * @param [in] self: device aclTensor, the prediction.
 * @param [in] target: device aclTensor, the target.
 * @param [in] reduction: 0 none, 1 mean, 2 sum.
 * @param [in] out: device aclTensor, the gradient with respect to self.
 * @param [out] workspaceSize: device workspace bytes the second phase needs.
 * @param [out] executor: the planned operator.
 * @return aclnnStatus: status code.
 */
ACLNN_API aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(
    const aclTensor *gradOutput,
    const aclTensor *self,
    const aclTensor *target,
    int64_t reduction,
    aclTensor *out,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnMseLossBackward: runs the executor on the stream.
 */
ACLNN_API aclnnStatus aclnnMseLossBackward(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // OP_API_INC_MSE_LOSS_BACKWARD_H_
