/*
 * aclnn_prelu_backward.h - pyaclnn CANN emulator: operator header in the style of the
 * hand-written op_api headers (hicann/ops-nn activation/prelu_grad/op_api).
 */
#ifndef OP_API_INC_PRELU_BACKWARD_H_
#define OP_API_INC_PRELU_BACKWARD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnPreluBackward: gradients of PReLU.
 * @domain aclnn_ops_train
 *
 * @param [in] gradOutput: device aclTensor, the incoming gradient; broadcasts to self.
 * @param [in] self: device aclTensor, the PReLU input.
 * @param [in] weight: device aclTensor, 1 or C (self dim 1) elements.
 * @param [out] gradInput: device aclTensor, shape of self.
 * @param [out] gradWeight: device aclTensor, shape of weight.
 * @param [out] workspaceSize: device workspace bytes the second phase needs.
 * @param [out] executor: the planned operator.
 * @return aclnnStatus: status code.
 */
ACLNN_API aclnnStatus aclnnPreluBackwardGetWorkspaceSize(
    const aclTensor *gradOutput,
    const aclTensor *self,
    const aclTensor *weight,
    aclTensor *gradInput,
    aclTensor *gradWeight,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnPreluBackward: runs the executor on the stream.
 */
ACLNN_API aclnnStatus aclnnPreluBackward(
    void *workspace,
    uint64_t workspace_size,
    aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // OP_API_INC_PRELU_BACKWARD_H_
