
/*
 * pyaclnn CANN emulator: the header the Ascend C custom-operator build generates for a custom op
 * whose type is "Add" (the GE Add prototype: inputs x1, x2, output y): a custom package may
 * reuse a built-in op's name; its aclnnAdd then has the generated signature below, not the
 * built-in aclnnAdd(self, other, alpha, out), and is found first (ASCEND_CUSTOM_OPP_PATH).
 */

#ifndef ACLNN_ADD_H_
#define ACLNN_ADD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* funtion: aclnnAddGetWorkspaceSize
 * parameters :
 * x1 : required
 * x2 : required
 * y : required
 * workspaceSize : size of workspace(output).
 * executor : executor context(output).
 */
__attribute__((visibility("default")))
aclnnStatus aclnnAddGetWorkspaceSize(
    const aclTensor *x1,
    const aclTensor *x2,
    const aclTensor *y,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/* funtion: aclnnAdd
 * parameters :
 * workspace : workspace memory addr(input).
 * workspaceSize : size of workspace(input).
 * executor : executor context(input).
 * stream : acl stream.
 */
__attribute__((visibility("default")))
aclnnStatus aclnnAdd(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
