/*
 * emu_ops_custom.c - libcust_opapi.so of the emulated custom operator package (build.py
 * build_custom_opp): the aclnn entry points the Ascend C custom-operator build generates for the
 * canonical sample op AddCustom (z = x + y; op definition: inputs x, y and output z, all
 * REQUIRED, dtype rows float16 and float32, format ND).
 *
 * Generated aclnn code checks the required tensors (NULL -> 161001) and that the dtypes form a
 * row of the op definition (else 161002), then runs the op's tiling; the sample's tiling reads
 * the element count of x only, so x, y and z with different element counts would make the
 * kernel read or write out of bounds: the emulator reports that as 561002 (its usual guard for
 * undefined behaviour). The sample's tiling asks for no workspace.
 *
 * The library depends on libnnopbase.so (as the generated code does: it calls nnopbase's
 * executor API) and runs phase 2 through nnopbase's common emu_executor_launch.
 *
 * Compiled with EMU_CUSTOM_ADD (emu_ops_custom_add.c) the same code is the package's custom op
 * named "Add" instead: aclnnAdd(x1, x2, y), y = x1 + x2, which shadows the built-in aclnnAdd
 * for whoever searches custom packages first (torch_npu's GetOpApiFuncAddr does).
 */
#include "emu_opkit.h"
#include "aclnn_add_custom.h"

static int emu_kernel_add_custom(aclOpExecutor *e)
{
    const emu_tview *x = &e->t[0], *y = &e->t[1], *z = &e->t[2];
    int64_t n = kit_numel_dims(x->dims, (uint32_t)x->ndim);
    float *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    if (!r)
        return emu_error(ACLNN_ERR_INNER, e->api, "out of memory");
    /* the sample kernel adds in the tensor dtype (Ascend C Add on half or float): one rounding */
    /* x, y and z are read as flat arrays of n elements (each in its own row-major order) */
    for (int64_t i = 0; i < n; i++)
        r[i] = (float)kit_round_f(x->dtype, (float)kit_ld_f(x->data, x->dtype, kit_offset(x, x->dims, x->ndim, i)) +
                                                (float)kit_ld_f(y->data, y->dtype, kit_offset(y, y->dims, y->ndim, i)));
    for (int64_t i = 0; i < n; i++)
        kit_st_f(z->data, z->dtype, kit_offset(z, z->dims, z->ndim, i), r[i]);
    free(r);
    return ACLNN_SUCCESS;
}

/* Generated aclnn of an element-wise custom op with inputs (a, b) and output c, named as in its
 * op definition: required tensors (161001), a dtype row (161002), the tiling guard (561002). */
static int eltwise_phase1(const char *api, const char *phase2, const char *const names[3], const aclTensor *a,
                          const aclTensor *b, const aclTensor *c, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const aclTensor *ts[] = {a, b, c};
    int st;
    for (int i = 0; i < 3; i++)
        if (!ts[i])
            return kit_null(api, names[i]);
    for (int i = 0; i < 3; i++)
        if ((st = kit_live(api, ts[i], names[i])))
            return st;
    if (!workspaceSize || !executor)
        return kit_null(api, !workspaceSize ? "workspaceSize" : "executor");
    int dt = a->dtype;
    if (!(dt == ACL_FLOAT16 || dt == ACL_FLOAT) || b->dtype != dt || c->dtype != dt)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api,
                         "dtype combination (%s, %s, %s) is not in the op definition: expected (float16, float16, float16) or "
                         "(float32, float32, float32)",
                         emu_dtype_name(a->dtype), emu_dtype_name(b->dtype), emu_dtype_name(c->dtype));
    int64_t n = kit_numel(a);
    if (kit_numel(b) != n || kit_numel(c) != n)
        return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "%s, %s and %s must have the same element count (%lld, %lld, %lld; "
                         "emulator guard)", names[0], names[1], names[2], (long long)n, (long long)kit_numel(b),
                         (long long)kit_numel(c));
    if (n > 0 && (st = kit_need_opp_path(api)))
        return st;
    aclOpExecutor *e = emu_executor_new(phase2);
    if (e) {
        e->kernel = n > 0 ? emu_kernel_add_custom : NULL;
        e->generated = 1;
        for (int i = 0; i < 3; i++)
            emu_executor_add(e, ts[i], i == 2);
    }
    return kit_finish(api, e, workspaceSize, executor);
}

#ifdef EMU_CUSTOM_ADD
/* ---- the package's "Add" op (build_custom_opp(..., ops=("AddCustom", "Add"))) ------------ */
#include "custom/aclnn_add.h"  /* not headers/aclnn_add.h (pyaclnn's, the built-in op): -I order */

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *x1, const aclTensor *x2, const aclTensor *y, uint64_t *workspaceSize,
                                     aclOpExecutor **executor)
{
    static const char *const names[] = {"x1", "x2", "y"};
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    st = eltwise_phase1(__func__, "aclnnAdd", names, x1, x2, y, workspaceSize, executor);
    emu_unlock();
    return st;
}

aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream)
{
    return emu_executor_launch_generated(__func__, workspace, workspaceSize, executor, stream);
}
#else
/* ---- AddCustom ---------------------------------------------------------------------------- */
aclnnStatus aclnnAddCustomGetWorkspaceSize(const aclTensor *x, const aclTensor *y, const aclTensor *z, uint64_t *workspaceSize,
                                           aclOpExecutor **executor)
{
    static const char *const names[] = {"x", "y", "z"};
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    st = eltwise_phase1(__func__, "aclnnAddCustom", names, x, y, z, workspaceSize, executor);
    emu_unlock();
    return st;
}

aclnnStatus aclnnAddCustom(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream)
{
    return emu_executor_launch_generated(__func__, workspace, workspaceSize, executor, stream);
}
#endif
