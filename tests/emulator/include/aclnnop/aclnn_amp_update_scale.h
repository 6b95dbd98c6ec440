
/*
 * pyaclnn CANN emulator: a header in the style of the ones the CANN op build generates from an
 * op definition (op_host/xxx_def.cpp) for ops with no hand-written op_api, here AmpUpdateScale
 * (hicann/ops-math math/amp_update_scale/op_host/amp_update_scale_def.cpp): every tensor,
 * outputs too, is `const aclTensor *`; Float attributes become double, Int attributes int64_t.
 */

#ifndef ACLNN_AMP_UPDATE_SCALE_H_
#define ACLNN_AMP_UPDATE_SCALE_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* funtion: aclnnAmpUpdateScaleGetWorkspaceSize
 * parameters :
 * currentScale : required
 * growthTracker : required
 * foundInf : required
 * growthFactor : required
 * backoffFactor : required
 * growthInterval : required
 * updatedScale : required
 * updatedGrowthTracker : required
 * workspaceSize : size of workspace(output).
 * executor : executor context(output).
 */
__attribute__((visibility("default")))
aclnnStatus aclnnAmpUpdateScaleGetWorkspaceSize(
    const aclTensor *currentScale,
    const aclTensor *growthTracker,
    const aclTensor *foundInf,
    double growthFactor,
    double backoffFactor,
    int64_t growthInterval,
    const aclTensor *updatedScale,
    const aclTensor *updatedGrowthTracker,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/* funtion: aclnnAmpUpdateScale
 * parameters :
 * workspace : workspace memory addr(input).
 * workspaceSize : size of workspace(input).
 * executor : executor context(input).
 * stream : acl stream.
 */
__attribute__((visibility("default")))
aclnnStatus aclnnAmpUpdateScale(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
