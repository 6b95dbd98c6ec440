
/*
 * pyaclnn CANN emulator: the header the Ascend C custom-operator build (msopgen project,
 * build.sh) generates for the AddCustom sample op (inputs x, y; output z; float16/float32), in
 * the generated style: every tensor, the output too, is `const aclTensor *`.
 */

#ifndef ACLNN_ADD_CUSTOM_H_
#define ACLNN_ADD_CUSTOM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* funtion: aclnnAddCustomGetWorkspaceSize
 * parameters :
 * x : required
 * y : required
 * z : required
 * workspaceSize : size of workspace(output).
 * executor : executor context(output).
 */
__attribute__((visibility("default")))
aclnnStatus aclnnAddCustomGetWorkspaceSize(
    const aclTensor *x,
    const aclTensor *y,
    const aclTensor *z,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/* funtion: aclnnAddCustom
 * parameters :
 * workspace : workspace memory addr(input).
 * workspaceSize : size of workspace(input).
 * executor : executor context(input).
 * stream : acl stream.
 */
__attribute__((visibility("default")))
aclnnStatus aclnnAddCustom(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
