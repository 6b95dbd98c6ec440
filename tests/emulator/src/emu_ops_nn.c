/*
 * emu_ops_nn.c - the "nn" operators of the emulated toolkit beyond the four seed ops (issue 11):
 * aclnnForeachMulScalarList, a generated aclnn with tensor-list input and output and an
 * aclScalarList (hicann/ops-nn foreach/foreach_mul_scalar_list: op_host/
 * foreach_mul_scalar_list_def.cpp, docs/aclnnForeachMulScalarList.md, tests/assets/golden.py).
 * 8.x: in libopapi.so; 9.x: in libopapi_nn.so (ops-nn builds libopapi_nn).
 *
 * Phase 1, as the doc's status table and the generated code order it: x, scalars, out NULL ->
 * 161001; dtypes not a row of the definition ((x, scalars, y) = (f16|f32|bf16, f32, same) or
 * (int32, int64, int32)) or out's dtype other than x's -> 161002; tensors of one list with
 * different dtypes, rank > 8, lists of different lengths, an out tensor smaller than its x
 * tensor -> 561002 (tiling). Emulator additions: a NULL list element -> 161001; a dead handle ->
 * misuse + 161002; NULL workspaceSize/executor -> 161001; more than 4 tensors per list -> 561002
 * (an executor holds 8 tensors); an empty x list -> 561002. Workspace 0.
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
            else                              /* golden: widened to float32, times the float32 scalar */
                kit_st_f(y->data, y->dtype, yo, (float)kit_ld_f(x->data, x->dtype, xo) * (float)e->fattr[i]);
        }
    }
    return ACLNN_SUCCESS;
}

static int list_dtype_rank(const char *api, const aclTensorList *l, const char *name)
{
    for (uint64_t i = 0; i < l->size; i++) {
        if (l->v[i]->dtype != l->v[0]->dtype)
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "%s[%llu] dtype %s differs from %s[0] dtype %s", name,
                             (unsigned long long)i, emu_dtype_name(l->v[i]->dtype), name, emu_dtype_name(l->v[0]->dtype));
        if (l->v[i]->ndim > KIT_MAX_DIM)
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "%s[%llu] rank %u exceeds 8", name, (unsigned long long)i,
                             l->v[i]->ndim);
    }
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
    /* dtype row of the definition (Ascend910B: float scalars for float tensors, int64 for int32) */
    int dt = x->v[0]->dtype, sdt = dt == ACL_INT32 ? ACL_INT64 : ACL_FLOAT;
    if (!(dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16 || dt == ACL_INT32))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "x dtype %s is not supported: expected float32, float16, bfloat16 or int32",
                         emu_dtype_name(dt));
    for (uint64_t i = 0; i < scalars->size; i++)
        if ((int)scalars->v[i]->dtype != sdt)
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "scalars[%llu] dtype %s is not supported with x dtype %s: expected %s",
                             (unsigned long long)i, emu_dtype_name(scalars->v[i]->dtype), emu_dtype_name(dt), emu_dtype_name(sdt));
    if (out->size > 0 && (int)out->v[0]->dtype != dt)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s should be the same as x dtype %s", emu_dtype_name(out->v[0]->dtype),
                         emu_dtype_name(dt));
    /* tiling */
    if ((st = list_dtype_rank(api, x, "x")) || (st = list_dtype_rank(api, out, "out")))
        return st;
    if (out->size != x->size || scalars->size != x->size)
        return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "x, scalars and out hold %llu, %llu and %llu elements: they must be equal",
                         (unsigned long long)x->size, (unsigned long long)scalars->size, (unsigned long long)out->size);
    for (uint64_t i = 0; i < x->size; i++)
        if (kit_numel(out->v[i]) < kit_numel(x->v[i]))
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "out[%llu] has %lld elements, fewer than x[%llu] (%lld)",
                             (unsigned long long)i, (long long)kit_numel(out->v[i]), (unsigned long long)i, (long long)kit_numel(x->v[i]));
    if (x->size > FE_MAX)
        return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "more than %d tensors per list (emulator limit)", FE_MAX);
    if ((st = kit_need_opp_path(api)))
        return st;
    aclOpExecutor *e = emu_executor_new("aclnnForeachMulScalarList");
    if (e) {
        int k = (int)x->size;
        e->kernel = emu_kernel_foreach_mul_scalar_list;
        e->generated = 1;
        for (int i = 0; i < k; i++)
            emu_executor_add(e, x->v[i], 0);
        for (int i = 0; i < k; i++)
            emu_executor_add(e, out->v[i], 1);
        e->ir_inputs = 2;                                  /* x, scalars */
        e->dyn_in.ir = 0, e->dyn_in.first = 0, e->dyn_in.n = k;
        e->dyn_out.ir = 0, e->dyn_out.first = k, e->dyn_out.n = k;
        for (int i = 0; i < k; i++) {                      /* the values are copied at phase 1 */
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
