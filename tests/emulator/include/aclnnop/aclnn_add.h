/*
 * aclnn_add.h - pyaclnn CANN emulator: operator header written in the style of the hand-written
 * op_api headers (hicann/ops-math math/add/op_api/aclnn_add.h): include guard, aclnn_base.h +
 * aclnn_util.h, extern "C", ACLNN_API, doxygen comments. Inputs are const, the output is not;
 * the in-place variant declares its selfRef const, as the real header does.
 */
#ifndef OP_API_INC_ADD_H_
#define OP_API_INC_ADD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnAdd: checks the arguments, plans the computation and reports the
 * workspace it needs.
 * @domain aclnn_math
 *
 * Computes out = self + alpha * other, with broadcasting.
 *
 * @param [in] self: device aclTensor; its dtype promotes with other's; its shape broadcasts
 * with other's. Non-contiguous views are supported; format ND.
 * @param [in] other: device aclTensor, same rules as self.
 * @param [in] alpha: host aclScalar; its dtype must be castable to the promoted dtype.
 * @param [in] out: device aclTensor; the promoted dtype must be castable to its dtype; its
 * shape is the broadcast shape of self and other.
 * @param [out] workspaceSize: device workspace bytes the second phase needs.
 * @param [out] executor: the planned operator.
 * @return aclnnStatus: status code.
 */
ACLNN_API aclnnStatus aclnnAddGetWorkspaceSize(
    const aclTensor *self,
    const aclTensor *other,
    const aclScalar *alpha,
    aclTensor *out,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnAdd: runs the executor on the stream.
 *
 * @param [in] workspace: device workspace address.
 * @param [in] workspaceSize: workspace bytes, as returned by aclnnAddGetWorkspaceSize.
 * @param [in] executor: the executor of the first phase.
 * @param [in] stream: the stream to run on.
 * @return aclnnStatus: status code.
 */
ACLNN_API aclnnStatus aclnnAdd(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    aclrtStream stream);

/**
 * @brief First phase of aclnnInplaceAdd: selfRef = selfRef + alpha * other.
 * @domain aclnn_math
 *
 * @param [in] selfRef: device aclTensor, input and output; its shape must be the broadcast
 * shape of selfRef and other.
 * @param [in] other: device aclTensor; its dtype promotes with selfRef's.
 * @param [in] alpha: host aclScalar; its dtype must be castable to the promoted dtype.
 * @param [out] workspaceSize: device workspace bytes the second phase needs.
 * @param [out] executor: the planned operator.
 * @return aclnnStatus: status code.
 */
ACLNN_API aclnnStatus aclnnInplaceAddGetWorkspaceSize(
    const aclTensor *selfRef,
    const aclTensor *other,
    const aclScalar *alpha,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnInplaceAdd: runs the executor on the stream.
 */
ACLNN_API aclnnStatus aclnnInplaceAdd(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // OP_API_INC_ADD_H_
