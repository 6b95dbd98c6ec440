/*
 * emu_ops.c - libopapi.so / libopapi_nn.so of the emulator: the phase-1 functions
 * (aclnn<Op>GetWorkspaceSize) and phase-2 entry points of the four operators.
 *
 * Phase 1 follows shared/reference/ops.md (sections 1.2, 2.2, 3.2, 4.2) for the Ascend910B /
 * Ascend910_93 (DAV_2201) dtype tables and limits, whatever EMU_SOC_NAME says: the check order and
 * the status codes are those of the real op_api sources. Additions of the emulator (each noted
 * where it happens):
 *   - a tensor argument that is not a live aclTensor -> misuse + 161002 (real CANN would crash);
 *   - checks real CANN skips but whose violation is undefined behaviour on a device (a crash, an
 *     out-of-bounds read or write) are reported instead of emulated, as 561002;
 *   - an unset/missing ASCEND_OPP_PATH -> 561107 (ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND), as CANN
 *     does; disable with EMU_REQUIRE_OPP_PATH=0.
 * Phase 1 writes *workspaceSize and *executor only on success. Workspace: what the real A2/A3
 * operator reports for contiguous tensors (see "Workspace sizes" below), 0 for every empty case.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "emu_ops.h"
#include "emu_opkit.h"   /* the shape and status helpers every op library shares */

#define MAX_DIM 8                         /* OP_CHECK_MAX_DIM */

/* ---- Workspace sizes (A2/A3, contiguous tensors) ------------------------------------------------
 * pyaclnn/_spec ("workspace sizes") and each pyaclnn/ops/<op>/spec.py workspace_size hold the same rules,
 * derived there as a general MaxAllocator packing; here they are its closed forms on A2/A3.
 * - A composite op reports aclOpExecutor::GetWorkspaceSize (hicann/opbase
 *   src/nnopbase/composite_op/aclnn_engine/op_executor.cpp): the MaxAllocator packing
 *   (composite_op/mem_mgr/memory_allocator.cpp) of the kernels' workspace tensors and the
 *   intermediate tensors the executor allocated, each rounded by Align, n + 32 up to 512 bytes; a
 *   bucket holds tensors of disjoint lifetimes, the size is the sum of the buckets. An intermediate
 *   ViewCopied into a contiguous user output leaves the workspace (hicann/ops-math
 *   conversion/contiguous/op_host/op_api/contiguous.cpp ViewCopy: SetFromWorkspace(false)).
 * - A generated op reports the plain sum of its tiling's sizes (hicann/opbase
 *   individual_op/executor/indv_executor.cpp NnopbaseExecutorGetWorkspaceSizes).
 * - The tilings add the system workspace themselves: GetLibApiWorkSpaceSize() is 16 MiB on DAV_2201
 *   (cannmirror/asc-devkit impl/utils/tiling/platform/platform_ascendc.cpp).
 * - An Ascend C dynamic-shape kernel always declares one workspace (asc-devkit
 *   asc_op_compile_base/asc_op_compiler/get_op_tiling.py add_workspace(size=-1)), allocated even when
 *   its tiling asks 0 bytes (Align(0) = 512); TBE kernels (no ops-nn/ops-math tiling on A2/A3:
 *   MseLossGrad, Cast, Fill, PReluGradUpdate/Reduce) are taken to declare none. */
#define SYS_WORKSPACE (16ull << 20)
#define AIV_CORES 40ull                   /* ACL_DEVICE_INFO_VECTOR_CORE_NUM, as this emulator reports it */

static uint64_t ws_align(uint64_t n) { return (n + 32 + 511) / 512 * 512; }

/* MseLossBackward (ops-nn loss/mse_loss_grad_v2/op_host/op_api/aclnn_mse_loss_backward.cpp,
 * mse_loss_grad.cpp): equal shapes -> MseLossGradV2, Ascend C, tiling workspace 0
 * (mse_loss_grad_v2_tiling.cpp): 512; else MseLossGrad (TBE): 0. When out's dtype differs, the
 * gradient (broadcast shape, self's dtype) stays in the workspace for the Cast kernel: a second
 * bucket (its lifetime starts with the V2 workspace's). */
static uint64_t mse_workspace(const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target,
                              const aclTensor *out)
{
    int v2 = kit_same_shape(self, gradOutput->dims, gradOutput->ndim) && kit_same_shape(self, target->dims, target->ndim);
    uint64_t grad = (uint64_t)kit_numel(out) * emu_dtype_size(self->dtype);
    return (v2 ? 512 : 0) + (out->dtype != self->dtype ? ws_align(grad) : 0);
}

/* GroupNormBackward (ops-nn norm/group_norm_grad/op_host/op_api/aclnn_group_norm_backward.cpp,
 * DAV_2201 path): a NULL gamma is made by a Fill kernel (C elements, read by the next kernel:
 * its own bucket); one GroupNormGrad kernel whose tiling (group_norm_grad_tiling.cpp
 * CalStage2TilingInfo, uint32 n and c) asks SYS_WORKSPACE + 2*(ceil(N/2)*C)*4 for N > 2, + 0 (fp32)
 * or 2*C*4 (fp16/bf16) for N <= 2; its outputs the mask leaves out stay in the workspace, each
 * in a bucket of its own (same kernel, same lifetime start). */
static uint64_t gn_workspace(const aclTensor *gradOut, const aclTensor *gamma, int64_t N, int64_t C, int64_t HxW,
                             const bool m[3])
{
    uint32_t n = (uint32_t)N, c = (uint32_t)C;
    uint64_t usr = n > 2 ? 2ull * (uint32_t)(((n - 1) / 2 + 1) * c) * 4 : gradOut->dtype == ACL_FLOAT ? 0 : 2ull * c * 4;
    size_t es = emu_dtype_size(gradOut->dtype), ps = emu_dtype_size(gamma ? gamma->dtype : gradOut->dtype);
    uint64_t ws = ws_align(SYS_WORKSPACE + usr) + (gamma ? 0 : ws_align((uint64_t)C * es));
    const uint64_t out_bytes[3] = {(uint64_t)(N * C * HxW) * es, (uint64_t)C * ps, (uint64_t)C * ps};
    for (int i = 0; i < 3; i++)
        if (!m[i])
            ws += ws_align(out_bytes[i]);
    return ws;
}

/* CrossEntropyLossGrad, generated: its A2/A3 tiling (ops-nn loss/cross_entropy_loss_grad/op_host/
 * cross_entropy_loss_grad_tiling.cpp Tiling4CrossEntropyLossGrad) asks CeilAlign(coreNum * 4, 32)
 * + GetLibApiWorkSpaceSize(), coreNum = GetCoreNumAiv(). */
static uint64_t ce_workspace(void) { return (AIV_CORES * 4 + 31) / 32 * 32 + SYS_WORKSPACE; }

/* PreluBackward (ops-nn activation/p_relu_grad_update/op_api/aclnn_prelu_backward.cpp): the
 * `update` tensor PReluGradUpdate writes (self's shape and dtype) for PReluGradReduce. */
static uint64_t prelu_workspace(const aclTensor *self) { return ws_align((uint64_t)kit_numel(self) * emu_dtype_size(self->dtype)); }

/* ========================================================================================== */
/* Helpers                                                                                     */
/* ========================================================================================== */
/* DAV_2201 support list of the hand-written ops (GetDtypeSupportListV2 on A2/A3). */
static int float_dtype(int dt) { return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16; }

static int null_err(const char *api, const char *name)
{
    return emu_error(ACLNN_ERR_PARAM_NULLPTR, api, "%s is nullptr", name);
}

static int invalid(const char *api, const char *fmt, const char *a, const char *b)
{
    return emu_error(ACLNN_ERR_PARAM_INVALID, api, fmt, a, b);
}

/* Emulator addition: every non-NULL tensor argument must be a live aclTensor. */
static int live_tensors(const char *api, int n, const aclTensor *const *ts, const char *const *names)
{
    for (int i = 0; i < n; i++)
        if (ts[i] && !emu_is_tensor(ts[i])) {
            emu_note_misuse(api, "%s %p is not a live aclTensor", names[i], (const void *)ts[i]);
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "%s %p is not a live aclTensor (destroyed?)", names[i],
                             (const void *)ts[i]);
        }
    return 0;
}

/* dtype of `t` must equal `want` */
static int dtype_same(const char *api, const aclTensor *t, const char *name, int want, const char *wname)
{
    if (t->dtype == (aclDataType)want)
        return 0;
    return emu_error(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s should be the same as %s dtype %s", name,
                     emu_dtype_name(t->dtype), wname, emu_dtype_name(want));
}

static int dtype_supported(const char *api, const aclTensor *t, const char *name)
{
    if (float_dtype(t->dtype))
        return 0;
    return emu_error(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s (%d) not supported: expected float32, float16 or bfloat16",
                     name, emu_dtype_name(t->dtype), (int)t->dtype);
}

static int max_dim(const char *api, const aclTensor *t, const char *name)
{
    if (t->ndim <= MAX_DIM)
        return 0;
    return emu_error(ACLNN_ERR_PARAM_INVALID, api, "%s rank %u exceeds the maximum of 8", name, t->ndim);
}

static aclOpExecutor *new_executor(const char *phase2, emu_kernel_fn kernel, uint64_t workspace)
{
    aclOpExecutor *e = emu_executor_new(phase2);
    if (e) {
        e->kernel = kernel;
        e->workspace = workspace;
        e->workspace_used = workspace > 0;    /* but see aclnnMseLossBackward's */
    }
    return e;
}

/* ========================================================================================== */
/* aclnnMseLossBackward (ops.md 1.2)                                                          */
/* ========================================================================================== */
static int mse_phase1(const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, int64_t reduction,
                      aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const char api[] = "aclnnMseLossBackwardGetWorkspaceSize";
    char b1[256], b2[256];
    int st;
    /* 0. OP_CHECK_COMM_INPUT */
    if (!workspaceSize || !executor)
        return null_err(api, !workspaceSize ? "workspaceSize" : "executor");
    /* 1. null checks */
    if (!gradOutput) return null_err(api, "gradOutput");
    if (!self) return null_err(api, "self");
    if (!target) return null_err(api, "target");
    if (!out) return null_err(api, "out");
    const aclTensor *ts[] = {gradOutput, self, target, out};
    static const char *const names[] = {"gradOutput", "self", "target", "out"};
    if ((st = live_tensors(api, 4, ts, names)))
        return st;
    /* 2. dtypes: no promotion; out may be any supported dtype */
    if ((st = dtype_same(api, gradOutput, "gradOutput", self->dtype, "self")) ||
        (st = dtype_same(api, target, "target", self->dtype, "self")) ||
        (st = dtype_supported(api, self, "self")) || (st = dtype_supported(api, out, "out")))
        return st;
    /* 3. reduction */
    if (reduction < 0 || reduction > 2)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "reduction %lld is invalid: expected 0 (none), 1 (mean) or 2 (sum)",
                         (long long)reduction);
    /* 4. shapes */
    if ((st = max_dim(api, gradOutput, "gradOutput")) || (st = max_dim(api, self, "self")) ||
        (st = max_dim(api, target, "target")))
        return st;
    int64_t b[2 * MAX_DIM], bb[2 * MAX_DIM];
    uint32_t nb, nbb;
    if (!kit_broadcast(gradOutput->dims, gradOutput->ndim, self->dims, self->ndim, b, &nb))
        return invalid(api, "gradOutput shape %s and self shape %s cannot broadcast", KIT_SHAPE(gradOutput, b1), KIT_SHAPE(self, b2));
    if (!kit_broadcast(b, nb, target->dims, target->ndim, bb, &nbb))
        return invalid(api, "shape %s (gradOutput with self) and target shape %s cannot broadcast", kit_shape_str(b, nb, b1, sizeof b1),
                       KIT_SHAPE(target, b2));
    if (!kit_same_shape(out, bb, nbb))
        return invalid(api, "out shape %s mismatch: expected the broadcast shape %s", KIT_SHAPE(out, b1), kit_shape_str(bb, nbb, b2, sizeof b2));
    /* 5. empty: success, no kernel, out untouched */
    int empty = kit_is_empty(self) || kit_is_empty(gradOutput) || kit_is_empty(target);
    if (!empty && (st = kit_need_opp_path(api)))
        return st;
    aclOpExecutor *e = new_executor("aclnnMseLossBackward", empty ? NULL : emu_kernel_mse,
                                    empty ? 0 : mse_workspace(gradOutput, self, target, out));
    if (e) {
        emu_executor_add(e, gradOutput, 0);
        emu_executor_add(e, self, 0);
        emu_executor_add(e, target, 0);
        emu_executor_add(e, out, 1);
        e->iattr[MSE_A_REDUCTION] = reduction;
        /* MseLossGradV2's 512 bytes are a 0-byte request its kernel never reads (mse_loss_grad_v2.cpp
         * takes `workspace` and does not use it): only the Cast's input is real workspace memory. */
        e->workspace_used = !empty && out->dtype != self->dtype;
    }
    return kit_finish(api, e, workspaceSize, executor);
}

aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                 const aclTensor *target, int64_t reduction, aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    st = mse_phase1(gradOutput, self, target, reduction, out, workspaceSize, executor);
    emu_unlock();
    return st;
}

aclnnStatus aclnnMseLossBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return emu_executor_launch(__func__, workspace, workspaceSize, executor, stream);
}

/* ========================================================================================== */
/* aclnnGroupNormBackward (ops.md 2.2)                                                        */
/* ========================================================================================== */
static int gn_phase1(const aclTensor *gradOut, const aclTensor *input, const aclTensor *mean, const aclTensor *rstd,
                     const aclTensor *gamma, int64_t N, int64_t C, int64_t HxW, int64_t group,
                     const aclBoolArray *outputMask, aclTensor *gradInput, aclTensor *gradGammaOut,
                     aclTensor *gradBetaOut, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const char api[] = "aclnnGroupNormBackwardGetWorkspaceSize";
    char b1[256], b2[256];
    int st;
    /* 0. OP_CHECK_COMM_INPUT */
    if (!workspaceSize || !executor)
        return null_err(api, !workspaceSize ? "workspaceSize" : "executor");
    /* 1. null checks (gamma may be NULL) */
    if (!gradOut) return null_err(api, "gradOut");
    if (!input) return null_err(api, "input");
    if (!mean) return null_err(api, "mean");
    if (!rstd) return null_err(api, "rstd");
    const aclTensor *ts[] = {gradOut, input, mean, rstd, gamma, gradInput, gradGammaOut, gradBetaOut};
    static const char *const names[] = {"gradOut", "input", "mean", "rstd", "gamma", "gradInput", "gradGammaOut", "gradBetaOut"};
    if ((st = live_tensors(api, 8, ts, names)))
        return st;
    /* 2. CheckMaskNotNull: 161002 (the code; the docs say 161001 for the null outputs) */
    if (!outputMask)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "outputMask is nullptr");
    if (emu_reg_kind(outputMask) != EMU_K_BOOL_ARRAY) {
        emu_note_misuse(api, "outputMask %p is not a live aclBoolArray", (const void *)outputMask);
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "outputMask %p is not a live aclBoolArray", (const void *)outputMask);
    }
    if (outputMask->size != 3)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "outputMask size %llu should be 3", (unsigned long long)outputMask->size);
    bool m0 = outputMask->v[0], m1 = outputMask->v[1], m2 = outputMask->v[2];
    if (m0 && !gradInput)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "outputMask[0] is true but gradInput is nullptr");
    if (m1 && !gradGammaOut)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "outputMask[1] is true but gradGammaOut is nullptr");
    if (m2 && !gradBetaOut)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "outputMask[2] is true but gradBetaOut is nullptr");
    /* 3. dtypes (non-950): gradOut supported, all others equal to it */
    int dt = gradOut->dtype;
    if ((st = dtype_supported(api, gradOut, "gradOut")) || (st = dtype_same(api, input, "input", dt, "gradOut")) ||
        (st = dtype_same(api, mean, "mean", dt, "gradOut")) || (st = dtype_same(api, rstd, "rstd", dt, "gradOut")) ||
        (gamma && (st = dtype_same(api, gamma, "gamma", dt, "gradOut"))) ||
        (m0 && (st = dtype_same(api, gradInput, "gradInput", dt, "gradOut"))) ||
        (m1 && (st = dtype_same(api, gradGammaOut, "gradGammaOut", dt, "gradOut"))) ||
        (m2 && (st = dtype_same(api, gradBetaOut, "gradBetaOut", dt, "gradOut"))))
        return st;
    /* 4. attributes (the last two only on DAV_2201, which is what is emulated) */
    if (group <= 0)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "group %lld should be greater than 0", (long long)group);
    if (C % group != 0)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "C %lld should be divisible by group %lld", (long long)C, (long long)group);
    if (C / group > 8000)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "C/group %lld should not exceed 8000", (long long)(C / group));
    if (C > 240000)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "C %lld should not exceed 240000", (long long)C);
    /* 5. shapes: numels only, plus exact output shapes */
    if ((st = max_dim(api, gradOut, "gradOut")))
        return st;
    int64_t nchw, ng;
    int ovf = __builtin_mul_overflow(N, C, &nchw) | __builtin_mul_overflow(nchw, HxW, &nchw) |
              __builtin_mul_overflow(N, group, &ng);
    if (ovf)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "N*C*HxW or N*group overflows int64");
    if (kit_numel(gradOut) != nchw)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "gradOut numel %lld should be N*C*HxW = %lld", (long long)kit_numel(gradOut),
                         (long long)nchw);
    if (kit_numel(input) != nchw)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "input numel %lld should be N*C*HxW = %lld", (long long)kit_numel(input),
                         (long long)nchw);
    if (kit_numel(mean) != ng)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "mean numel %lld should be N*group = %lld", (long long)kit_numel(mean), (long long)ng);
    if (kit_numel(rstd) != ng)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "rstd numel %lld should be N*group = %lld", (long long)kit_numel(rstd), (long long)ng);
    if (gamma && kit_numel(gamma) != C)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "gamma numel %lld should be C = %lld", (long long)kit_numel(gamma), (long long)C);
    if (m0 && !kit_same_shape(gradInput, input->dims, input->ndim))
        return invalid(api, "gradInput shape %s should equal input shape %s", KIT_SHAPE(gradInput, b1), KIT_SHAPE(input, b2));
    const int64_t cshape[1] = {C};
    const int64_t *pshape = gamma ? gamma->dims : cshape;
    uint32_t pn = gamma ? gamma->ndim : 1;
    if (m1 && !kit_same_shape(gradGammaOut, pshape, pn))
        return invalid(api, "gradGammaOut shape %s should be %s", KIT_SHAPE(gradGammaOut, b1), kit_shape_str(pshape, pn, b2, sizeof b2));
    if (m2 && !kit_same_shape(gradBetaOut, pshape, pn))
        return invalid(api, "gradBetaOut shape %s should be %s", KIT_SHAPE(gradBetaOut, b1), kit_shape_str(pshape, pn, b2, sizeof b2));
    /* 6. empty (non-950): success, workspace 0, nothing written */
    int empty = kit_is_empty(gradOut) || kit_is_empty(input);
    if (!empty) {
        /* emulator guard: negative C/HxW (possible with gamma NULL) make no sense to the kernel */
        if (C <= 0 || HxW <= 0)
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "C %lld and HxW %lld must be positive (emulator guard)",
                             (long long)C, (long long)HxW);
        if ((st = kit_need_opp_path(api)))
            return st;
    }
    const bool mask[3] = {m0, m1, m2};
    aclOpExecutor *e = new_executor("aclnnGroupNormBackward", empty ? NULL : emu_kernel_group_norm,
                                    empty ? 0 : gn_workspace(gradOut, gamma, N, C, HxW, mask));
    if (e) {
        for (int i = 0; i < 8; i++)
            emu_executor_add(e, ts[i], i >= GN_DX);
        e->iattr[GN_A_N] = N;
        e->iattr[GN_A_C] = C;
        e->iattr[GN_A_HXW] = HxW;
        e->iattr[GN_A_G] = group;
        e->iattr[GN_A_MASK + 0] = m0;
        e->iattr[GN_A_MASK + 1] = m1;
        e->iattr[GN_A_MASK + 2] = m2;
    }
    return kit_finish(api, e, workspaceSize, executor);
}

aclnnStatus aclnnGroupNormBackwardGetWorkspaceSize(const aclTensor *gradOut, const aclTensor *input, const aclTensor *mean,
                                                   const aclTensor *rstd, const aclTensor *gamma, int64_t N, int64_t C,
                                                   int64_t HxW, int64_t group, const aclBoolArray *outputMask,
                                                   aclTensor *gradInput, aclTensor *gradGammaOut, aclTensor *gradBetaOut,
                                                   uint64_t *workspaceSize, aclOpExecutor **executor)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    st = gn_phase1(gradOut, input, mean, rstd, gamma, N, C, HxW, group, outputMask, gradInput, gradGammaOut, gradBetaOut,
                   workspaceSize, executor);
    emu_unlock();
    return st;
}

aclnnStatus aclnnGroupNormBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream)
{
    return emu_executor_launch(__func__, workspace, workspaceSize, executor, stream);
}

/* ========================================================================================== */
/* aclnnCrossEntropyLossGrad (ops.md 3.2: generated aclnn + A2/A3 tiling)                     */
/* ========================================================================================== */
static int ce_phase1(const aclTensor *gradLoss, const aclTensor *logProb, const aclTensor *target,
                     const aclTensor *weight, const aclTensor *gradZloss, const aclTensor *lse, const char *reduction,
                     int64_t ignoreIndex, double labelSmoothing, const aclTensor *out, uint64_t *workspaceSize,
                     aclOpExecutor **executor)
{
    static const char api[] = "aclnnCrossEntropyLossGradGetWorkspaceSize";
    int st;
    /* 1. required tensors, in parameter order */
    if (!gradLoss) return null_err(api, "gradLoss");
    if (!logProb) return null_err(api, "logProb");
    if (!target) return null_err(api, "target");
    if (!out) return null_err(api, "out");
    /* 2. executor (workspaceSize is not checked up front) */
    if (!executor)
        return null_err(api, "executor");
    const aclTensor *ts[] = {gradLoss, logProb, target, weight, gradZloss, lse, out};
    static const char *const names[] = {"gradLoss", "logProb", "target", "weightOptional", "gradZlossOptional",
                                        "lseForZlossOptional", "out"};
    if ((st = live_tensors(api, 7, ts, names)))
        return st;
    /* 3. NULL string attribute -> op-def default; unknown strings act as "none" on A2/A3 */
    if (!reduction)
        reduction = "mean";
    int red = strcmp(reduction, "mean") == 0 ? CE_RED_MEAN : strcmp(reduction, "sum") == 0 ? CE_RED_SUM : CE_RED_NONE;
    /* 4. dtype combination of the A2/A3 op-def rows: (x, x, int64, fp32, x, x, x), x in {bf16, fp16, fp32} */
    int dt = gradLoss->dtype;
    if (!float_dtype(dt))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "gradLoss dtype %s not supported: expected float32, float16 or bfloat16",
                         emu_dtype_name(dt));
    if ((st = dtype_same(api, logProb, "logProb", dt, "gradLoss")))
        return st;
    if (target->dtype != ACL_INT64)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "target dtype %s not supported: expected int64", emu_dtype_name(target->dtype));
    if (weight && weight->dtype != ACL_FLOAT)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "weightOptional dtype %s not supported: expected float32",
                         emu_dtype_name(weight->dtype));
    if ((gradZloss && (st = dtype_same(api, gradZloss, "gradZlossOptional", dt, "gradLoss"))) ||
        (lse && (st = dtype_same(api, lse, "lseForZlossOptional", dt, "gradLoss"))) ||
        (st = dtype_same(api, out, "out", dt, "gradLoss")))
        return st;
    /* 5. A2/A3 tiling: 561002 (a missing dim is the emulator's guard: the kernel would read garbage) */
    if (logProb->ndim < 2 || target->ndim < 1)
        return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "logProb must have 2 dims and target at least 1 (got %u and %u)",
                         logProb->ndim, target->ndim);
    int64_t N = logProb->dims[0], C = logProb->dims[1];
    if (target->dims[0] != N)
        return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "target dim 0 (%lld) should equal logProb dim 0 (%lld)",
                         (long long)target->dims[0], (long long)N);
    if (weight && (weight->ndim < 1 || weight->dims[0] != C))
        return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "weightOptional dim 0 should equal logProb dim 1 (%lld)", (long long)C);
    /* emulator: workspaceSize is dereferenced from here on (real CANN does not check it) */
    if (!workspaceSize)
        return null_err(api, "workspaceSize");
    /* 7. empty N or C: nothing to do */
    int empty = kit_is_empty(logProb);
    if (!empty) {
        /* emulator guards: undefined behaviour on a device (unchecked by the A2/A3 tiling) */
        if (logProb->ndim != 2)
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "logProb must be 2-D (N, C), got rank %u (emulator guard)",
                             logProb->ndim);
        if (kit_numel(target) < N)
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "target has fewer than N elements (emulator guard)");
        if (weight && kit_numel(weight) < C)
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "weightOptional has fewer than C elements (emulator guard)");
        if (kit_numel(gradLoss) < (red == CE_RED_NONE ? N : 1))
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api,
                             "gradLoss has %lld elements, reduction '%s' reads %lld (emulator guard)", (long long)kit_numel(gradLoss),
                             reduction, (long long)(red == CE_RED_NONE ? N : 1));
        int64_t nc;
        if (__builtin_mul_overflow(N, C, &nc) || kit_numel(out) != nc)
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "out has %lld elements, expected N*C = %lld*%lld (emulator guard)",
                             (long long)kit_numel(out), (long long)N, (long long)C);
        if ((st = kit_need_opp_path(api)))
            return st;
    }
    aclOpExecutor *e = new_executor("aclnnCrossEntropyLossGrad", empty ? NULL : emu_kernel_cross_entropy,
                                    empty ? 0 : ce_workspace());
    if (e) {
        /* Generated op (hicann/ops-nn loss/cross_entropy_loss_grad has an op_host definition and no
         * op_api: its aclnn code comes from opbuild, run by nnopbase's individual_op executor). */
        e->generated = 1;
        for (int i = 0; i < 7; i++)
            emu_executor_add(e, ts[i], i == CE_OUT);
        e->iattr[CE_A_IGNORE] = ignoreIndex;
        e->iattr[CE_A_REDUCTION] = red;
        e->fattr[CE_A_LS] = (float)labelSmoothing;        /* float attribute in the op def */
        snprintf(e->sattr, sizeof e->sattr, "%s", reduction);
        if (!empty)
            e->check = emu_check_cross_entropy;
    }
    return kit_finish(api, e, workspaceSize, executor);
}

aclnnStatus aclnnCrossEntropyLossGradGetWorkspaceSize(const aclTensor *gradLoss, const aclTensor *logProb,
                                                      const aclTensor *target, const aclTensor *weightOptional,
                                                      const aclTensor *gradZlossOptional,
                                                      const aclTensor *lseForZlossOptional, char *reductionOptional,
                                                      int64_t ignoreIndex, double labelSmoothing,
                                                      double lseSquareScaleForZloss, const aclTensor *out,
                                                      uint64_t *workspaceSize, aclOpExecutor **executor)
{
    (void)lseSquareScaleForZloss;                         /* zloss: no effect */
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    st = ce_phase1(gradLoss, logProb, target, weightOptional, gradZlossOptional, lseForZlossOptional, reductionOptional,
                   ignoreIndex, labelSmoothing, out, workspaceSize, executor);
    emu_unlock();
    return st;
}

aclnnStatus aclnnCrossEntropyLossGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return emu_executor_launch_generated(__func__, workspace, workspaceSize, executor, stream);
}

/* ========================================================================================== */
/* aclnnPreluBackward (ops.md 4.2)                                                            */
/* ========================================================================================== */
static int prelu_phase1(const aclTensor *gradOutput, const aclTensor *self, const aclTensor *weight, aclTensor *gradInput,
                        aclTensor *gradWeight, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const char api[] = "aclnnPreluBackwardGetWorkspaceSize";
    char b1[256], b2[256];
    int st;
    /* (no OP_CHECK_COMM_INPUT in this op) 1. null checks */
    if (!gradOutput) return null_err(api, "gradOutput");
    if (!self) return null_err(api, "self");
    if (!weight) return null_err(api, "weight");
    if (!gradInput) return null_err(api, "gradInput");
    if (!gradWeight) return null_err(api, "gradWeight");
    const aclTensor *ts[] = {gradOutput, self, weight, gradInput, gradWeight};
    static const char *const names[] = {"gradOutput", "self", "weight", "gradInput", "gradWeight"};
    if ((st = live_tensors(api, 5, ts, names)))
        return st;
    /* 2. dtypes: self supported, all others equal to self */
    int dt = self->dtype;
    if ((st = dtype_supported(api, self, "self")) || (st = dtype_same(api, gradOutput, "gradOutput", dt, "self")) ||
        (st = dtype_same(api, weight, "weight", dt, "self")) || (st = dtype_same(api, gradInput, "gradInput", dt, "self")) ||
        (st = dtype_same(api, gradWeight, "gradWeight", dt, "self")))
        return st;
    /* 3. shapes */
    for (int i = 0; i < 5; i++)
        if ((st = max_dim(api, ts[i], names[i])))
            return st;
    if (!kit_same_shape(gradInput, self->dims, self->ndim))
        return invalid(api, "gradInput shape %s should equal self shape %s", KIT_SHAPE(gradInput, b1), KIT_SHAPE(self, b2));
    int64_t wn = kit_numel(weight);
    if (wn != 1) {
        if (self->ndim < 1)
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "a 0-D self needs a weight of 1 element, got %lld", (long long)wn);
        int64_t C = self->ndim > 1 ? self->dims[1] : 1;
        if (wn != C)
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "weight numel %lld should be 1 or the channel count %lld (self dim 1)",
                             (long long)wn, (long long)C);
        const int64_t cshape[1] = {C};
        if (!kit_same_shape(gradWeight, cshape, 1))
            return invalid(api, "gradWeight shape %s should be %s", KIT_SHAPE(gradWeight, b1), kit_shape_str(cshape, 1, b2, sizeof b2));
    } else if (!kit_same_shape(gradWeight, weight->dims, weight->ndim)) {
        return invalid(api, "gradWeight shape %s should equal weight shape %s", KIT_SHAPE(gradWeight, b1), KIT_SHAPE(weight, b2));
    }
    int64_t bs[2 * MAX_DIM];
    uint32_t nbs;
    if (!kit_broadcast(self->dims, self->ndim, gradOutput->dims, gradOutput->ndim, bs, &nbs) ||
        !kit_same_shape(self, bs, nbs))
        return invalid(api, "gradOutput shape %s cannot broadcast to self shape %s", KIT_SHAPE(gradOutput, b1), KIT_SHAPE(self, b2));
    /* emulator: the real op never checks these (it would crash on NULL) */
    if (!workspaceSize || !executor)
        return null_err(api, !workspaceSize ? "workspaceSize" : "executor");
    /* 4. empty: success, nothing written (gradWeight not zeroed) */
    int empty = kit_is_empty(gradOutput) || kit_is_empty(self) || kit_is_empty(weight);
    if (!empty && (st = kit_need_opp_path(api)))
        return st;
    aclOpExecutor *e = new_executor("aclnnPreluBackward", empty ? NULL : emu_kernel_prelu,
                                    empty ? 0 : prelu_workspace(self));
    if (e)
        for (int i = 0; i < 5; i++)
            emu_executor_add(e, ts[i], i >= PR_DX);
    return kit_finish(api, e, workspaceSize, executor);
}

aclnnStatus aclnnPreluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self, const aclTensor *weight,
                                               aclTensor *gradInput, aclTensor *gradWeight, uint64_t *workspaceSize,
                                               aclOpExecutor **executor)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    st = prelu_phase1(gradOutput, self, weight, gradInput, gradWeight, workspaceSize, executor);
    emu_unlock();
    return st;
}

aclnnStatus aclnnPreluBackward(void *workspace, uint64_t workspace_size, aclOpExecutor *executor, aclrtStream stream)
{
    return emu_executor_launch(__func__, workspace, workspace_size, executor, stream);
}
