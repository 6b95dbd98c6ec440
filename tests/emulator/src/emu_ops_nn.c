/*
 * emu_ops_nn.c - the "nn" operators of the emulated toolkit beyond the four seed ops (issue 11):
 * aclnnForeachMulScalarList, a generated aclnn with tensor-list input and output and an
 * aclScalarList (hicann/ops-nn foreach/foreach_mul_scalar_list: op_host/
 * foreach_mul_scalar_list_def.cpp, docs/aclnnForeachMulScalarList.md, tests/assets/golden.py).
 * 8.x: in libopapi.so; 9.x: in libopapi_nn.so (ops-nn builds libopapi_nn).
 *
 * Phase 1, as the generated code and nnopbase order it (hicann/opbase src/nnopbase): x, scalars,
 * out NULL -> 161001; the scalar list becomes one tensor of scalars[0]'s dtype, a DOUBLE scalar
 * written as float and making it FLOAT (individual_op/executor/indv_executor_ext.cpp
 * NnopbaseExecutorAddScalarListInput); the dtypes of x[0], that tensor and out[0] not a row of the
 * definition ((f16|f32|bf16, f32, same) or (int32, int64, int32)) -> 161002 (indv_executor.cpp
 * CheckSocVersionAndParam, DynamicIoCheck: a list is matched on its first tensor); every out
 * tensor empty -> success with no tiling and no kernel (indv_executor.cpp NnopbaseExecutorMatchCache,
 * NnopbaseExecutorDoTiling); then the A2/A3 tiling (ops-nn foreach/foreach_utils/op_host/
 * foreach_tiling_class.h ForeachCommonTiling::CheckOpInfo) -> 561002: x rank > 8, len(scalars) !=
 * len(x), out shorter than x, out[i] dtype != x's, out[i] with fewer elements than x[i], x dtypes
 * that differ (an out list longer than x is not looked at). Emulator additions: a NULL list element
 * -> 161001; a dead handle -> misuse + 161002; NULL workspaceSize/executor -> 161001; more than 4
 * tensors per list -> 561002 (an executor holds 8 tensors); an empty x list -> 561002; a DOUBLE
 * after a scalar of another dtype than FLOAT (nnopbase would pack the list wrongly) -> 161002.
 * Workspace 0 (the tilings reserve 32 bytes the kernel never touches: not modelled here).
 */
#include "emu_opkit.h"
#include "aclnnop/aclnn_foreach_mul_scalar_list.h"

#define FE_MAX 4                           /* tensors per list: 2 * FE_MAX roles <= EMU_MAX_ROLES */

static int emu_kernel_foreach_mul_scalar_list(aclOpExecutor *e)
{
    int k = e->dyn_in.n;
    for (int i = 0; i < k; i++) {
        const emu_tview *x = &e->t[i], *y = &e->t[k + i];
        int64_t n = kit_numel_dims(x->dims, (uint32_t)x->ndim);
        for (int64_t j = 0; j < n; j++) {     /* flat: y's first numel(x) elements, row-major */
            int64_t xo = kit_offset(x, x->dims, x->ndim, j), yo = kit_offset(y, y->dims, y->ndim, j);
            if (x->dtype == ACL_INT32)        /* golden: int32 * int64 0-d tensor -> int32 */
                kit_st_i(y->data, y->dtype, yo,
                         kit_wrap_i(ACL_INT32, (int64_t)((uint64_t)kit_ld_i(x->data, x->dtype, xo) * (uint64_t)e->iattr[i])));
            else if (x->dtype == ACL_FLOAT16)  /* A2/A3 kernel: half Muls by the scalar rounded to half
                                                 * (foreach_one_scalar_list_binary.h ProcessPlusInLoop): the
                                                 * exact product (exact in float), rounded once */
                kit_st_f(y->data, y->dtype, yo, (float)kit_ld_f(x->data, x->dtype, xo) *
                                                (float)kit_round_f(ACL_FLOAT16, e->fattr[i]));
            else                              /* float32; bf16 through float32 (InnerComputerCastBase) */
                kit_st_f(y->data, y->dtype, yo, (float)kit_ld_f(x->data, x->dtype, xo) * (float)e->fattr[i]);
        }
    }
    return ACLNN_SUCCESS;
}

static int list_dtype(const char *api, const aclTensorList *l, const char *name)
{
    for (uint64_t i = 0; i < l->size; i++)
        if (l->v[i]->dtype != l->v[0]->dtype)
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "%s[%llu] dtype %s differs from %s[0] dtype %s", name,
                             (unsigned long long)i, emu_dtype_name(l->v[i]->dtype), name, emu_dtype_name(l->v[0]->dtype));
    return 0;
}

static int live_list(const char *api, const aclTensorList *l, const char *name)
{
    int st;
    if ((st = kit_live_kind(api, l, EMU_K_TENSOR_LIST, "aclTensorList", name)))
        return st;
    for (uint64_t i = 0; i < l->size; i++) {
        if (!l->v[i])
            return emu_error(ACLNN_ERR_PARAM_NULLPTR, api, "%s[%llu] is nullptr", name, (unsigned long long)i);
        if ((st = kit_live(api, l->v[i], name)))
            return st;
    }
    return 0;
}

static int fe_phase1(const aclTensorList *x, const aclScalarList *scalars, const aclTensorList *out, uint64_t *workspaceSize,
                     aclOpExecutor **executor)
{
    static const char api[] = "aclnnForeachMulScalarListGetWorkspaceSize";
    int st;
    if (!x) return kit_null(api, "x");
    if (!scalars) return kit_null(api, "scalars");
    if (!out) return kit_null(api, "out");
    if ((st = live_list(api, x, "x")) || (st = live_list(api, out, "out")) ||
        (st = kit_live_kind(api, scalars, EMU_K_SCALAR_LIST, "aclScalarList", "scalars")))
        return st;
    for (uint64_t i = 0; i < scalars->size; i++)
        if (!scalars->v[i])
            return emu_error(ACLNN_ERR_PARAM_NULLPTR, api, "scalars[%llu] is nullptr", (unsigned long long)i);
    if (!workspaceSize || !executor)
        return kit_null(api, !workspaceSize ? "workspaceSize" : "executor");
    if (x->size == 0)
        return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "x holds no tensor (emulator guard)");
    /* the scalar list's tensor: scalars[0]'s dtype, FLOAT once a DOUBLE is met (an empty list adds none) */
    int dt = x->v[0]->dtype, want = dt == ACL_INT32 ? ACL_INT64 : ACL_FLOAT, sdt = -1;
    for (uint64_t i = 0; i < scalars->size; i++) {
        int d = (int)scalars->v[i]->dtype;
        if (d == ACL_DOUBLE && scalars->v[0]->dtype != ACL_FLOAT && scalars->v[0]->dtype != ACL_DOUBLE)
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "scalars mix %s (scalars[0]) with double (emulator guard)",
                             emu_dtype_name(scalars->v[0]->dtype));
        sdt = i == 0 ? d : sdt;
        if (d == ACL_DOUBLE)
            sdt = ACL_FLOAT;
    }
    sdt = sdt == ACL_DOUBLE ? ACL_FLOAT : sdt;
    /* dtype row of the definition (Ascend910B: float scalars for float tensors, int64 for int32) */
    if (!(dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16 || dt == ACL_INT32) || (sdt != -1 && sdt != want) ||
        (out->size > 0 && (int)out->v[0]->dtype != dt))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "dtypes (x %s, scalars %s, out %s) are not a row of the definition",
                         emu_dtype_name(dt), sdt == -1 ? "none" : emu_dtype_name(sdt),
                         out->size > 0 ? emu_dtype_name(out->v[0]->dtype) : "none");
    int all_empty = out->size > 0;                 /* NnopbaseSkipKernelLaunch: no tiling, no kernel */
    for (uint64_t i = 0; i < out->size; i++)
        all_empty = all_empty && kit_numel(out->v[i]) == 0;
    if (!all_empty) {                              /* the A2/A3 tiling, CheckOpInfo's order */
        for (uint64_t i = 0; i < x->size; i++)
            if (x->v[i]->ndim > KIT_MAX_DIM)
                return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "x[%llu] rank %u exceeds 8", (unsigned long long)i,
                                 x->v[i]->ndim);
        if (scalars->size != x->size)
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "scalars holds %llu values, x %llu tensors",
                             (unsigned long long)scalars->size, (unsigned long long)x->size);
        for (uint64_t i = 0; i < x->size; i++) {
            if (i >= out->size)
                return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "the output %llu desc is null", (unsigned long long)i);
            if ((int)out->v[i]->dtype != dt)
                return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "out[%llu] dtype %s must be x's %s", (unsigned long long)i,
                                 emu_dtype_name(out->v[i]->dtype), emu_dtype_name(dt));
            if (kit_numel(out->v[i]) < kit_numel(x->v[i]))
                return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "out[%llu] has %lld elements, fewer than x[%llu] (%lld)",
                                 (unsigned long long)i, (long long)kit_numel(out->v[i]), (unsigned long long)i,
                                 (long long)kit_numel(x->v[i]));
        }
        if ((st = list_dtype(api, x, "x")))
            return st;
    }
    /* the executor holds x and out's first len(x) tensors (all of out when nothing runs) */
    uint64_t n_out = all_empty ? out->size : x->size;
    if (x->size > FE_MAX || n_out > FE_MAX)
        return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "more than %d tensors per list (emulator limit)", FE_MAX);
    if (!all_empty && (st = kit_need_opp_path(api)))
        return st;
    aclOpExecutor *e = emu_executor_new("aclnnForeachMulScalarList");
    if (e) {
        int k = (int)x->size;
        e->kernel = all_empty ? NULL : emu_kernel_foreach_mul_scalar_list;
        e->generated = 1;
        for (int i = 0; i < k; i++)
            emu_executor_add(e, x->v[i], 0);
        for (uint64_t i = 0; i < n_out; i++)
            emu_executor_add(e, out->v[i], 1);
        e->ir_inputs = 2;                                  /* x, scalars */
        e->dyn_in.ir = 0, e->dyn_in.first = 0, e->dyn_in.n = k;
        e->dyn_out.ir = 0, e->dyn_out.first = k, e->dyn_out.n = (int)n_out;
        for (int i = 0; i < k && i < (int)scalars->size; i++) {  /* the values are copied at phase 1 */
            if (dt == ACL_INT32)
                e->iattr[i] = kit_scalar_i(scalars->v[i]);
            else
                e->fattr[i] = (float)kit_scalar_f(scalars->v[i]);
        }
    }
    return kit_finish(api, e, workspaceSize, executor);
}

aclnnStatus aclnnForeachMulScalarListGetWorkspaceSize(const aclTensorList *x, const aclScalarList *scalars,
                                                      const aclTensorList *out, uint64_t *workspaceSize,
                                                      aclOpExecutor **executor)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    st = fe_phase1(x, scalars, out, workspaceSize, executor);
    emu_unlock();
    return st;
}

aclnnStatus aclnnForeachMulScalarList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                      const aclrtStream stream)
{
    return emu_executor_launch_generated(__func__, workspace, workspaceSize, executor, stream);
}
