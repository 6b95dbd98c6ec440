/*
 * aclnn_group_norm_backward.h - pyaclnn CANN emulator: operator header in the style of the
 * hand-written op_api headers (hicann/ops-nn norm/group_norm_grad/op_api).
 */
#ifndef OP_API_INC_GROUP_NORM_BACKWARD_H_
#define OP_API_INC_GROUP_NORM_BACKWARD_H_

#ifdef __cplusplus
#include <array>   /* as the real header (ops-nn aclnn_group_norm_backward.h): the doc sample uses std::array */
#endif
#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnGroupNormBackward: gradients of group normalisation.
 * @domain aclnn_ops_train
 *
 * @param [in] gradOut: device aclTensor, the incoming gradient, shape of input.
 * @param [in] input: device aclTensor (N, C, *).
 * @param [in] mean: device aclTensor, N*group elements.
 * @param [in] rstd: device aclTensor, N*group elements.
 * @param [in] gamma: device aclTensor, C elements, or NULL.
 * @param [in] N: batch size.
 * @param [in] C: channels.
 * @param [in] HxW: spatial size.
 * @param [in] group: number of groups.
 * @param [in] outputMask: host aclBoolArray of 3: which of the three outputs to compute.
 * @param [out] gradInput: device aclTensor, or NULL when its mask is false.
 * @param [out] gradGammaOut: device aclTensor, or NULL when its mask is false.
 * @param [out] gradBetaOut: device aclTensor, or NULL when its mask is false.
 * @param [out] workspaceSize: device workspace bytes the second phase needs.
 * @param [out] executor: the planned operator.
 * @return aclnnStatus: status code.
 */
ACLNN_API aclnnStatus aclnnGroupNormBackwardGetWorkspaceSize(
    const aclTensor *gradOut,
    const aclTensor *input,
    const aclTensor *mean,
    const aclTensor *rstd,
    const aclTensor *gamma,
    int64_t N,
    int64_t C,
    int64_t HxW,
    int64_t group,
    const aclBoolArray *outputMask,
    aclTensor *gradInput,
    aclTensor *gradGammaOut,
    aclTensor *gradBetaOut,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnGroupNormBackward: runs the executor on the stream.
 */
ACLNN_API aclnnStatus aclnnGroupNormBackward(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // OP_API_INC_GROUP_NORM_BACKWARD_H_
