/*
 * emu_ops_custom_blur.c - the custom package's BoxBlurCustom (build.py build_custom_opp(...,
 * ops=(..., "BoxBlurCustom"))): an operator whose launch function takes its phase-1 parameters
 * again, as ops-cv's aclnnGaussianBlur does (experimental/image/gaussian_blur/op_api/
 * aclnn_gaussian_blur.cpp):
 *
 *   aclnnGaussianBlurGetWorkspaceSize: OP_CHECK_COMM_INPUT(workspaceSize, executor), CheckParams,
 *     then the executor (l0op::Contiguous + l0op::GaussianBlur on dst);
 *   aclnnGaussianBlur(workspace, workspaceSize, executor, src, ksize, sigmaX, sigmaY, borderType,
 *     dst, stream): OP_CHECK_NULL(executor) (161001), CheckParams on the launch's own arguments
 *     (a failure returns its status without running, so the executor is not consumed), then
 *     CommonOpExecutorRun, which runs what phase 1 planned.
 *
 * CheckParams in the order of GaussianBlur's: CheckNotNull(src, ksize, dst) 161001; dtype
 * (FLOAT32 only, dst the same) 161002; shape (same as src, no empty dim) 161002; not in place
 * (src != dst and not the same storage) 161002; ksize (one element, odd, 1..31; GaussianBlur's
 * IsSupportedKernel) 161002; the factor finite (CheckSigmaValid) 161002; borderType (0, the
 * constant border, is the only one this op has) 161002. The kernel: dst[..., i] = scale *
 * sum(src[..., i-k/2 .. i+k/2]) along the last dimension, zeros beyond the edges, in float32.
 */
#include "emu_opkit.h"
#include "aclnn_box_blur_custom.h"

static int blur_kernel(aclOpExecutor *e)
{
    const emu_tview *src = &e->t[0], *dst = &e->t[1];
    int64_t k = e->iattr[0], half = k / 2, w = src->dims[src->ndim - 1];
    int64_t n = kit_numel_dims(src->dims, (uint32_t)src->ndim), rows = w ? n / w : 0;
    float scale = (float)e->fattr[0];
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < w; i++) {
            float sum = 0.0f;  /* float32 accumulation, left to right, as one AI core pass */
            for (int64_t j = i - half; j <= i + half; j++)
                if (j >= 0 && j < w)
                    sum += (float)kit_ld_f(src->data, ACL_FLOAT, kit_offset(src, src->dims, src->ndim, r * w + j));
            kit_st_f(dst->data, ACL_FLOAT, kit_offset(dst, dst->dims, dst->ndim, r * w + i), (double)(sum * scale));
        }
    }
    return ACLNN_SUCCESS;
}

static int same_shape(const aclTensor *a, const aclTensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (uint32_t i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

/* CheckParams (module comment); the caller holds the emulator lock. */
static int check_params(const char *api, const aclTensor *src, const aclIntArray *ksize, double scale, int64_t borderType,
                        const aclTensor *dst)
{
    int st;
    if (!src || !ksize || !dst)
        return kit_null(api, !src ? "src" : !ksize ? "ksize" : "dst");
    if ((st = kit_live(api, src, "src")) || (st = kit_live(api, dst, "dst")) ||
        (st = kit_live_kind(api, ksize, EMU_K_INT_ARRAY, "aclIntArray", "ksize")))
        return st;
    if (src->dtype != ACL_FLOAT || dst->dtype != src->dtype)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "src must be FLOAT32 and dst the same, got %s and %s",
                         emu_dtype_name(src->dtype), emu_dtype_name(dst->dtype));
    if (src->ndim < 1 || !same_shape(src, dst))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "src and dst must have the same shape (rank >= 1).");
    if (kit_is_empty(src))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "BoxBlurCustom does not support empty tensors.");
    if (src == dst || (src->data && src->data == dst->data))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "BoxBlurCustom does not support in-place src and dst.");
    if (ksize->size != 1 || ksize->v[0] < 1 || ksize->v[0] > 31 || ksize->v[0] % 2 == 0)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "ksize must be one odd size from 1 to 31.");
    if (!isfinite(scale))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "scale must be finite.");
    if (borderType != 0)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "BoxBlurCustom does not support borderType=%lld.",
                         (long long)borderType);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnBoxBlurCustomGetWorkspaceSize(const aclTensor *src, const aclIntArray *ksize, double scale,
                                               int64_t borderType, const aclTensor *dst, uint64_t *workspaceSize,
                                               aclOpExecutor **executor)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    if (!workspaceSize || !executor)
        return kit_null(__func__, !workspaceSize ? "workspaceSize" : "executor");
    emu_lock();
    st = check_params(__func__, src, ksize, scale, borderType, dst);
    if (!st && (st = kit_need_opp_path(__func__)) == 0) {
        aclOpExecutor *e = emu_executor_new("aclnnBoxBlurCustom");
        if (e) {
            e->kernel = blur_kernel;
            e->iattr[0] = ksize->v[0];
            e->fattr[0] = scale;
            emu_executor_add(e, src, 0);
            emu_executor_add(e, dst, 1);
        }
        st = kit_finish(__func__, e, workspaceSize, executor);
    }
    emu_unlock();
    return st;
}

aclnnStatus aclnnBoxBlurCustom(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclTensor *src,
                               const aclIntArray *ksize, double scale, int64_t borderType, aclTensor *dst,
                               const aclrtStream stream)
{
    if (executor) {  /* a NULL executor: emu_executor_launch's OP_CHECK_NULL (161001) */
        emu_lock();
        int st = check_params(__func__, src, ksize, scale, borderType, dst);
        emu_unlock();
        if (st)
            return st;
    }
    return emu_executor_launch(__func__, workspace, workspaceSize, executor, stream);
}
