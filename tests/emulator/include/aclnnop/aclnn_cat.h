/*
 * aclnn_cat.h - pyaclnn CANN emulator: operator header in the style of the hand-written op_api
 * headers (hicann/ops-math conversion/concat_d/op_api/aclnn_cat.h). Takes an aclTensorList.
 */
#ifndef OP_API_INC_CAT_H_
#define OP_API_INC_CAT_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnCat: concatenates the tensors of a list along one dimension.
 * @domain aclnn_ops_infer
 *
 * @param [in] tensors: aclTensorList of device tensors; equal ranks, equal sizes except along
 * dim; dtypes promote with each other. 1-D tensors of shape (0,) are skipped.
 * @param [in] dim: the dimension, in [-rank, rank).
 * @param [in] out: device aclTensor; the promoted dtype must be castable to its dtype.
 * @param [out] workspaceSize: device workspace bytes the second phase needs.
 * @param [out] executor: the planned operator.
 * @return aclnnStatus: status code.
 */
ACLNN_API aclnnStatus aclnnCatGetWorkspaceSize(
    const aclTensorList *tensors,
    int64_t dim,
    aclTensor *out,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnCat: runs the executor on the stream.
 */
ACLNN_API aclnnStatus aclnnCat(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // OP_API_INC_CAT_H_
