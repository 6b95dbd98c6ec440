/*
 * pyaclnn CANN emulator: a custom package op whose launch function takes its parameters again,
 * in the style of ops-cv's hand-written aclnn_gaussian_blur.h (experimental/image/gaussian_blur/
 * op_api): ACLNN_API declarations, every phase-1 tensor `const aclTensor *`, and a launch
 * `(workspace, workspaceSize, executor, <phase 1's parameters>, stream)` whose `dst` is the
 * non-const `aclTensor *`.
 */

#ifndef OP_API_INC_BOX_BLUR_CUSTOM_H_
#define OP_API_INC_BOX_BLUR_CUSTOM_H_

#include "aclnn/acl_meta.h"

#ifndef ACLNN_API
#define ACLNN_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Calculates the workspace size required by aclnnBoxBlurCustom.
 * @param [in] src Input FLOAT32 ND tensor, blurred along its last dimension.
 * @param [in] ksize Box size [kernelWidth]: odd, 1 to 31.
 * @param [in] scale Factor applied to each window sum (1 / kernelWidth for the mean).
 * @param [in] borderType 0 (BORDER_CONSTANT: zeros beyond the edges) only.
 * @param [in] dst Output tensor with the same metadata as src.
 * @param [out] workspaceSize Required workspace size in bytes.
 * @param [out] executor Operator executor.
 */
ACLNN_API aclnnStatus aclnnBoxBlurCustomGetWorkspaceSize(const aclTensor* src, const aclIntArray* ksize, double scale,
                                                         int64_t borderType, const aclTensor* dst,
                                                         uint64_t* workspaceSize, aclOpExecutor** executor);

/**
 * @brief Executes BoxBlurCustom on the specified stream; the parameters are checked again.
 */
ACLNN_API aclnnStatus aclnnBoxBlurCustom(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                         const aclTensor* src, const aclIntArray* ksize, double scale,
                                         int64_t borderType, aclTensor* dst, const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif // OP_API_INC_BOX_BLUR_CUSTOM_H_
