/* pyaclnn: C declarations for cffi (ABI mode), header-shaped after the aclnnop/aclnn_amp_update_scale.h
 * CANN generates from hicann/ops-math math/amp_update_scale/op_host/amp_update_scale_def.cpp (every
 * tensor const; the prototype of math/amp_update_scale/docs/aclnnAmpUpdateScale.md). Declarations
 * only: no includes, no logic. */

aclnnStatus aclnnAmpUpdateScaleGetWorkspaceSize(const aclTensor* currentScale, const aclTensor* growthTracker, const aclTensor* foundInf, double growthFactor, double backoffFactor, int64_t growthInterval, const aclTensor* updatedScale, const aclTensor* updatedGrowthTracker, uint64_t* workspaceSize, aclOpExecutor** executor);
aclnnStatus aclnnAmpUpdateScale(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, const aclrtStream stream);
