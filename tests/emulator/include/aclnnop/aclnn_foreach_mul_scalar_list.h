
/*
 * pyaclnn CANN emulator: a header in the generated style (the op build writes it from the op
 * definition hicann/ops-nn foreach/foreach_mul_scalar_list/op_host/foreach_mul_scalar_list_def.cpp:
 * input x DYNAMIC, input scalars ScalarList, output y DYNAMIC): the output list is declared
 * `const aclTensorList *` like the inputs; only the op definition says it is written.
 */

#ifndef ACLNN_FOREACH_MUL_SCALAR_LIST_H_
#define ACLNN_FOREACH_MUL_SCALAR_LIST_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* funtion: aclnnForeachMulScalarListGetWorkspaceSize
 * parameters :
 * x : dynamic
 * scalars : required
 * out : dynamic
 * workspaceSize : size of workspace(output).
 * executor : executor context(output).
 */
__attribute__((visibility("default")))
aclnnStatus aclnnForeachMulScalarListGetWorkspaceSize(
    const aclTensorList *x,
    const aclScalarList *scalars,
    const aclTensorList *out,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/* funtion: aclnnForeachMulScalarList
 * parameters :
 * workspace : workspace memory addr(input).
 * workspaceSize : size of workspace(input).
 * executor : executor context(input).
 * stream : acl stream.
 */
__attribute__((visibility("default")))
aclnnStatus aclnnForeachMulScalarList(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
