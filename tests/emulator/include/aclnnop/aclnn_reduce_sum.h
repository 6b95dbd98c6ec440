/*
 * aclnn_reduce_sum.h - pyaclnn CANN emulator: operator header in the style of the hand-written
 * op_api headers (hicann/ops-math math/reduce_sum/op_api/aclnn_reduce_sum.h). Takes an
 * aclIntArray, a bool and an aclDataType.
 */
#ifndef OP_API_INC_REDUCE_SUM_H_
#define OP_API_INC_REDUCE_SUM_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnReduceSum: sums self over the given dimensions.
 * @domain aclnn_math
 *
 * @param [in] self: device aclTensor.
 * @param [in] dims: host aclIntArray, the dimensions to reduce, each in [-rank, rank), no
 * repeats; empty reduces every dimension.
 * @param [in] keepDims: whether the reduced dimensions stay, with size 1.
 * @param [in] dtype: the dtype of the result (out must have it).
 * @param [in] out: device aclTensor, the result.
 * @param [out] workspaceSize: device workspace bytes the second phase needs.
 * @param [out] executor: the planned operator.
 * @return aclnnStatus: status code.
 */
ACLNN_API aclnnStatus aclnnReduceSumGetWorkspaceSize(
    const aclTensor *self,
    const aclIntArray *dims,
    bool keepDims,
    aclDataType dtype,
    aclTensor *out,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnReduceSum: runs the executor on the stream.
 */
ACLNN_API aclnnStatus aclnnReduceSum(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // OP_API_INC_REDUCE_SUM_H_
