/*
 * emu_ops_math.c - the built-in "math" operators of the emulated toolkit beyond the four seed
 * ops (issue 11): aclnnAdd, aclnnInplaceAdd, aclnnCat (hand-written op_api in CANN) and
 * aclnnReduceSum (hand-written op_api too) and aclnnAmpUpdateScale (a generated aclnn: op
 * definition only). In the 8.x layout they live in
 * libopapi.so, in the 9.x layout in libopapi_math.so (ops-math builds libopapi_math).
 *
 * The prototypes come from the real-style headers in tests/emulator/include/aclnnop (the very
 * files build.py installs into the toolkit), so the compiler checks them; phase 2 is the common
 * emu_executor_launch of libnnopbase, so executors, repeatability, aclSet*TensorAddr, faults and
 * misuse counters behave as for the seed ops.
 *
 * Phase 1 follows the Ascend910B (DAV_2201, non-regbase) branches of the real sources:
 *   Add/InplaceAdd  hicann/ops-math math/add/op_api/aclnn_add.cpp (CheckParams, CheckInplace,
 *                   aclnnAddGetWorkspaceSize)
 *   Cat             hicann/ops-math conversion/concat_d/op_api/aclnn_cat.cpp (CheckParams,
 *                   EraseDim1EmptyTensor, SplitToConcat)
 *   ReduceSum       hicann/ops-math math/reduce_sum/op_api/aclnn_reduce_sum.cpp (CheckParams,
 *                   aclnnReduceSumGetWorkspaceSize)
 *   AmpUpdateScale  hicann/ops-math math/amp_update_scale/op_host/amp_update_scale_def.cpp (the
 *                   generated aclnn checks required tensors, then the dtype rows of the def)
 * Emulator additions, as for the seed ops: a dead tensor/scalar/list handle -> misuse + 161002;
 * NULL workspaceSize/executor -> 161001 (the real ops would crash); ASCEND_OPP_PATH -> 561107.
 * Every workspace is 0 (the real size depends on the Contiguous/Cast steps it plans).
 */
#include "emu_opkit.h"

/* Compile-time check of the headers the toolkit ships: these declare the same functions as the
 * project's headers/ (included by emu_internal.h); a prototype that differs is a compile error. */
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_cat.h"
#include "aclnnop/aclnn_amp_update_scale.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclnnop/aclnn_mse_loss_backward.h"
#include "aclnnop/aclnn_group_norm_backward.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_prelu_backward.h"

static int emu_kernel_add(aclOpExecutor *e);
static int emu_kernel_cat(aclOpExecutor *e);
static int emu_kernel_amp_update_scale(aclOpExecutor *e);
static int emu_kernel_reduce_sum(aclOpExecutor *e);

/* Add attribute slots */
#define ADD_A_PROMOTE 0            /* iattr: promoted dtype (the compute dtype) */
#define ADD_A_PATH 1               /* iattr: ADD_ONE, ADD_AXPY or ADD_MUL */
#define ADD_A_ALPHA_I 2            /* iattr: alpha as an integer (integer/bool compute) */
#define ADD_A_ALPHA_F 0            /* fattr: alpha as double (float compute) */
enum { ADD_ONE, ADD_AXPY, ADD_MUL };
enum { ADD_SELF, ADD_OTHER, ADD_OUT };

/* Cat attribute slots */
#define CAT_A_DIM 0                /* iattr: the normalised dim */
#define CAT_A_PROMOTE 1            /* iattr: the promoted dtype */
#define CAT_A_N 2                  /* iattr: tensors in the executor (roles 0..n-1, out is n) */

/* AmpUpdateScale slots */
enum { AMP_SCALE, AMP_TRACKER, AMP_FOUND, AMP_OUT_SCALE, AMP_OUT_TRACKER };
#define AMP_A_INTERVAL 0           /* iattr */
#define AMP_A_GROWTH 0             /* fattr: narrowed to float (Float attributes of the def) */
#define AMP_A_BACKOFF 1

/* ASCEND910B_DTYPE_SUPPORT_LIST of aclnn_add.cpp and aclnn_cat.cpp (same members). */
static const int k910b_dtypes[] = {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16, ACL_INT8,
                                   ACL_UINT8, ACL_DOUBLE, ACL_BOOL, ACL_BF16, ACL_COMPLEX64, ACL_COMPLEX128};
#define N_910B ((int)(sizeof k910b_dtypes / sizeof k910b_dtypes[0]))

static int dtype_listed(const char *api, const aclTensor *t, const char *name)
{
    if (kit_in(t->dtype, k910b_dtypes, N_910B))
        return 0;
    return emu_error(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported (Ascend910B dtype support list)", name,
                     emu_dtype_name(t->dtype));
}

/* The complex dtypes pass the real checks but the emulator does not compute them. */
static int not_emulated(const char *api, int dt)
{
    return emu_error(ACLNN_ERR_INNER, api, "dtype %s is not emulated (the emulator computes bool, integer and float dtypes)",
                     emu_dtype_name(dt));
}

/* ========================================================================================== */
/* aclnnAdd / aclnnInplaceAdd                                                                  */
/* ========================================================================================== */
static int add_phase1(const char *api, const char *phase2, const aclTensor *self, const aclTensor *other,
                      const aclScalar *alpha, const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    char b1[256], b2[256];
    int st;
    /* 1. CheckNotNull: self, other, alpha, out -> 161001 */
    if (!self) return kit_null(api, "self");
    if (!other) return kit_null(api, "other");
    if (!alpha) return kit_null(api, "alpha");
    if (!out) return kit_null(api, "out");
    if ((st = kit_live(api, self, "self")) || (st = kit_live(api, other, "other")) || (st = kit_live(api, out, "out")) ||
        (st = kit_live_kind(api, alpha, EMU_K_SCALAR, "aclScalar", "alpha")))
        return st;
    /* 2. dtypes of self and other in the support list -> 161002 */
    if ((st = dtype_listed(api, self, "self")) || (st = dtype_listed(api, other, "other")))
        return st;
    /* 3. CheckPromoteType: promotable; alpha castable to the promoted dtype (integral when the
     *    promoted dtype is bool); the promoted dtype castable to out's -> 161002 */
    int promote = kit_promote(self->dtype, other->dtype);
    if (promote < 0 && !(kit_is_complex(self->dtype) || kit_is_complex(other->dtype)))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "self dtype %s and other dtype %s can not promote dtype",
                         emu_dtype_name(self->dtype), emu_dtype_name(other->dtype));
    if (promote < 0)
        return not_emulated(api, kit_is_complex(self->dtype) ? self->dtype : other->dtype);
    int adt = alpha->dtype;
    if (promote == ACL_BOOL ? !(kit_is_int(adt) || adt == ACL_BOOL) : !kit_can_cast(adt, promote))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "alpha dtype %s can't be cast to the promote dtype %s", emu_dtype_name(adt),
                         emu_dtype_name(promote));
    if (!kit_can_cast(promote, out->dtype))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "promote dtype %s can't be cast to the desired output type %s",
                         emu_dtype_name(promote), emu_dtype_name(out->dtype));
    if (!kit_is_real(out->dtype) || !kit_is_real(adt))
        return not_emulated(api, kit_is_real(out->dtype) ? adt : out->dtype);
    /* 4. CheckShape: rank <= 8, broadcast, out shape == broadcast shape -> 161002 */
    if (self->ndim > KIT_MAX_DIM || other->ndim > KIT_MAX_DIM)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "%s rank %u exceeds the maximum of 8", self->ndim > KIT_MAX_DIM ? "self" : "other",
                         self->ndim > KIT_MAX_DIM ? self->ndim : other->ndim);
    int64_t bs[2 * KIT_MAX_DIM];
    uint32_t nbs;
    if (!kit_broadcast(self->dims, self->ndim, other->dims, other->ndim, bs, &nbs))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "self shape %s and other shape %s can not broadcast", KIT_SHAPE(self, b1),
                         KIT_SHAPE(other, b2));
    if (!kit_same_shape(out, bs, nbs))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "Shape of out should be %s, but current is %s",
                         kit_shape_str(bs, nbs, b1, sizeof b1), KIT_SHAPE(out, b2));
    /* emulator: the real op dereferences these unchecked */
    if (!workspaceSize || !executor)
        return kit_null(api, !workspaceSize ? "workspaceSize" : "executor");
    /* 5. empty self or other: success, workspace 0, nothing written */
    int empty = kit_is_empty(self) || kit_is_empty(other);
    if (!empty && (st = kit_need_opp_path(api)))
        return st;
    /* 6. the compute path of the 910B branch: alpha == 1 (IsEqualToOne, NaN included) -> Add; float32,
     *    float16, int32 -> Axpy with alpha as float (the golden of math/axpy/tests/assets/
     *    golden.py: float16 widened to float32 and float32 to float64, rounded once; int32
     *    computed in float32 and truncated); any other dtype -> Mul by alpha converted to the
     *    promoted dtype, then Add (two roundings). */
    double af = kit_scalar_f(alpha);
    float a32 = (float)af;                 /* IsEqualToOne: !(ToFloat() > 1 || ToFloat() < 1), so NaN counts as 1 */
    int path = !(a32 > 1.0f || a32 < 1.0f) ? ADD_ONE
               : (promote == ACL_FLOAT || promote == ACL_FLOAT16 || promote == ACL_INT32) ? ADD_AXPY : ADD_MUL;
    aclOpExecutor *e = emu_executor_new(phase2);
    if (e) {
        e->kernel = empty ? NULL : emu_kernel_add;
        emu_executor_add(e, self, 0);
        emu_executor_add(e, other, 0);
        emu_executor_add(e, out, 1);
        e->iattr[ADD_A_PROMOTE] = promote;
        e->iattr[ADD_A_PATH] = path;
        e->iattr[ADD_A_ALPHA_I] = kit_scalar_i(alpha);
        e->fattr[ADD_A_ALPHA_F] = path == ADD_AXPY ? (double)(float)af : kit_round_f(promote, af);
    }
    return kit_finish(api, e, workspaceSize, executor);
}

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    st = add_phase1(__func__, "aclnnAdd", self, other, alpha, out, workspaceSize, executor);
    emu_unlock();
    return st;
}

aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return emu_executor_launch(__func__, workspace, workspaceSize, executor, stream);
}

/* aclnn_add.cpp CheckInplace: selfRef/other NULL -> 161001, no broadcast or a broadcast shape
 * other than selfRef's -> 161002; then the whole of aclnnAdd with out = selfRef. */
aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other, const aclScalar *alpha,
                                            uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const char api[] = "aclnnInplaceAddGetWorkspaceSize";
    char b1[256], b2[256];
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    if (!selfRef)
        st = kit_null(api, "selfRef");
    else if (!other)
        st = kit_null(api, "other");
    else if (!(st = kit_live(api, selfRef, "selfRef")) && !(st = kit_live(api, other, "other"))) {
        int64_t bs[2 * EMU_MAX_DIMS];
        uint32_t nbs;
        if (!kit_broadcast(selfRef->dims, selfRef->ndim, other->dims, other->ndim, bs, &nbs))
            st = emu_error(ACLNN_ERR_PARAM_INVALID, api, "selfRef shape %s and other shape %s can not broadcast",
                           KIT_SHAPE(selfRef, b1), KIT_SHAPE(other, b2));
        else if (!kit_same_shape(selfRef, bs, nbs))
            st = emu_error(ACLNN_ERR_PARAM_INVALID, api, "Expected shape of selfRef should be %s, but got %s",
                           kit_shape_str(bs, nbs, b1, sizeof b1), KIT_SHAPE(selfRef, b2));
        else
            st = add_phase1(api, "aclnnInplaceAdd", selfRef, other, alpha, selfRef, workspaceSize, executor);
    }
    emu_unlock();
    return st;
}

aclnnStatus aclnnInplaceAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return emu_executor_launch(__func__, workspace, workspaceSize, executor, stream);
}

typedef union { double f; int64_t i; } kit_val;

/* Write the n results (computed in dtype p, row-major) to the output view y, then free them. */
static void store_all(const emu_tview *y, kit_val *r, int64_t n, int p)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t yo = kit_offset(y, y->dims, y->ndim, i);
        if (kit_is_float(p))
            kit_st_f(y->data, y->dtype, yo, r[i].f);
        else
            kit_st_i(y->data, y->dtype, yo, r[i].i);
    }
    free(r);
}

/* out = self + alpha * other in the promoted dtype, then cast to out's dtype (Cast + ViewCopy). */
static int emu_kernel_add(aclOpExecutor *e)
{
    const emu_tview *s = &e->t[ADD_SELF], *o = &e->t[ADD_OTHER], *y = &e->t[ADD_OUT];
    int p = (int)e->iattr[ADD_A_PROMOTE], path = (int)e->iattr[ADD_A_PATH];
    int64_t n = kit_numel_dims(y->dims, (uint32_t)y->ndim);
    kit_val *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    if (!r)
        return emu_error(ACLNN_ERR_INNER, "aclnnAdd", "out of memory");
    for (int64_t i = 0; i < n; i++) {
        int64_t so = kit_offset(s, y->dims, y->ndim, i), oo = kit_offset(o, y->dims, y->ndim, i);
        if (kit_is_float(p)) {
            double a = kit_round_f(p, kit_ld_f(s->data, s->dtype, so));     /* Cast to the promoted dtype */
            double b = kit_round_f(p, kit_ld_f(o->data, o->dtype, oo));
            double alpha = e->fattr[ADD_A_ALPHA_F];
            if (path == ADD_ONE)
                r[i].f = kit_round_f(p, a + b);
            else if (path == ADD_AXPY && p == ACL_FLOAT)    /* Axpy golden (math/axpy/tests/assets/golden.py): */
                r[i].f = kit_round_f(p, a + alpha * b);     /* float32 computed in float64, rounded once */
            else if (path == ADD_AXPY)                      /* float16: in float32, (x2 * alpha) + x1, rounded */
                r[i].f = kit_round_f(p, (float)a + (float)((float)alpha * (float)b));
            else
                r[i].f = kit_round_f(p, a + kit_round_f(p, b * alpha));    /* Mul, then Add */
        } else if (p == ACL_BOOL) {
            int a = kit_ld_i(s->data, s->dtype, so) != 0, b = kit_ld_i(o->data, o->dtype, oo) != 0;
            r[i].i = a | (b & (path == ADD_ONE || e->iattr[ADD_A_ALPHA_I] != 0));
        } else {
            uint64_t a = (uint64_t)kit_wrap_i(p, kit_ld_i(s->data, s->dtype, so));
            uint64_t b = (uint64_t)kit_wrap_i(p, kit_ld_i(o->data, o->dtype, oo));
            uint64_t alpha = (uint64_t)kit_wrap_i(p, e->iattr[ADD_A_ALPHA_I]);
            if (path == ADD_ONE)
                r[i].i = kit_wrap_i(p, (int64_t)(a + b));
            else if (path == ADD_AXPY) {            /* int32 Axpy golden: in float32, truncated */
                float v = (float)(int32_t)a + (float)(int32_t)b * (float)e->fattr[ADD_A_ALPHA_F];
                v = truncf(v);
                r[i].i = v >= 2147483647.0f ? INT32_MAX : v <= -2147483648.0f ? INT32_MIN : (int32_t)v;
            }
            else
                r[i].i = kit_wrap_i(p, (int64_t)(a + (uint64_t)kit_wrap_i(p, (int64_t)(b * alpha))));
        }
    }
    store_all(y, r, n, p);
    return ACLNN_SUCCESS;
}

/* ========================================================================================== */
/* aclnnCat                                                                                    */
/* ========================================================================================== */
static int private_format(int f)
{
    return f == ACL_FORMAT_NC1HWC0 || f == ACL_FORMAT_FRACTAL_Z || f == ACL_FORMAT_NC1HWC0_C04 || f == ACL_FORMAT_FRACTAL_NZ ||
           f == ACL_FORMAT_NDC1HWC0 || f == ACL_FRACTAL_Z_3D;
}

static int cat_phase1(const aclTensorList *tensors, int64_t dim, const aclTensor *out, uint64_t *workspaceSize,
                      aclOpExecutor **executor)
{
    static const char api[] = "aclnnCatGetWorkspaceSize";
    char b1[256], b2[256];
    int st;
    /* 0. EraseDim1EmptyTensor: 1-D tensors of shape (0,) are dropped (torch's legacy empty); if
     *    nothing is left the op succeeds at once, without writing *workspaceSize and without
     *    looking at out. (A NULL element would crash the real loop: the emulator says 161001.) */
    const aclTensor *ts[EMU_MAX_ROLES];
    uint64_t n = 0;
    if (tensors) {
        if ((st = kit_live_kind(api, tensors, EMU_K_TENSOR_LIST, "aclTensorList", "tensors")))
            return st;
        for (uint64_t i = 0; i < tensors->size; i++) {
            const aclTensor *t = tensors->v[i];
            if (!t)
                return emu_error(ACLNN_ERR_PARAM_NULLPTR, api, "tensors[%llu] is nullptr", (unsigned long long)i);
            if ((st = kit_live(api, t, "tensors[i]")))
                return st;
            if (t->ndim == 1 && t->dims[0] == 0)
                continue;
            if (n == EMU_MAX_ROLES - 1)
                return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "more than %d non-empty tensors (emulator limit)", EMU_MAX_ROLES - 1);
            ts[n++] = t;
        }
        if (n == 0) {
            if (!executor)
                return kit_null(api, "executor");
            aclOpExecutor *e = emu_executor_new("aclnnCat");
            if (!e)
                return emu_error(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "out of memory");
            *executor = e;
            return ACLNN_SUCCESS;
        }
    }
    /* 1. CheckNotNull -> 161001 */
    if (!tensors)
        return kit_null(api, "tensors");
    if (!out)
        return kit_null(api, "out");
    if ((st = kit_live(api, out, "out")))
        return st;
    /* 2. CheckDtypeValid: every tensor and out in the support list -> 161002 */
    for (uint64_t i = 0; i < n; i++)
        if (!kit_in(ts[i]->dtype, k910b_dtypes, N_910B))
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "tensor %llu not implemented for %s (Ascend910B dtype support list)",
                             (unsigned long long)i, emu_dtype_name(ts[i]->dtype));
    if ((st = dtype_listed(api, out, "out")))
        return st;
    /* 3. CheckPromoteType: promotable, not complex128, castable to out -> 161002 */
    int promote = ts[0]->dtype;
    for (uint64_t i = 1; i < n; i++) {
        int p = kit_promote(ts[i]->dtype, promote);
        if (p < 0 && !kit_is_complex(ts[i]->dtype) && !kit_is_complex(promote))
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "tensor %llu dtype %s and dtype %s can not promote dtype",
                             (unsigned long long)i, emu_dtype_name(ts[i]->dtype), emu_dtype_name(promote));
        promote = p < 0 ? ACL_COMPLEX64 : p;
    }
    if (!kit_can_cast(promote, out->dtype))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "promote dtype %s can't be cast to the desired output type %s",
                         emu_dtype_name(promote), emu_dtype_name(out->dtype));
    if (!kit_is_real(promote) || !kit_is_real(out->dtype))
        return not_emulated(api, kit_is_real(promote) ? out->dtype : promote);
    /* 4. CheckFormat: no private format; every tensor and out in tensor 0's format -> 161002 */
    int fmt = ts[0]->format;
    if (private_format(fmt))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "Format only support ND, NCHW, NHWC, HWCN, NDHWC, NCDHW");
    for (uint64_t i = 1; i < n; i++)
        if ((int)ts[i]->format != fmt)
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "Format of tensors should be equal, tensor %llu [%d], tensor 0 [%d]",
                             (unsigned long long)i, (int)ts[i]->format, fmt);
    if ((int)out->format != fmt)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "Format of input and output should be equal");
    /* 5. CheckShape: rank of tensor 0 <= 8, dim in [-rank, rank), equal ranks and sizes off dim -> 161002 */
    int64_t rank = ts[0]->ndim;
    if (rank > KIT_MAX_DIM)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "tensor 0 rank %lld exceeds the maximum of 8", (long long)rank);
    int64_t d = dim < 0 ? dim + rank : dim;
    if (d < 0 || d >= rank)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "dimnum %lld exceed the dim range of the tensor %lld", (long long)dim,
                         (long long)rank);
    int64_t cshape[EMU_MAX_DIMS];
    memcpy(cshape, ts[0]->dims, sizeof(int64_t) * (size_t)rank);
    int nonempty = !kit_is_empty(ts[0]);
    for (uint64_t i = 1; i < n; i++) {
        if ((int64_t)ts[i]->ndim != rank)
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "dimnum of tensor %llu is [%u], should be equal to tensor 0 [%lld]",
                             (unsigned long long)i, ts[i]->ndim, (long long)rank);
        for (int64_t j = 0; j < rank; j++)
            if (j != d && ts[i]->dims[j] != ts[0]->dims[j])
                return emu_error(ACLNN_ERR_PARAM_INVALID, api, "dim %lld of tensor %llu is [%lld], should be equal to tensor 0 [%lld]",
                                 (long long)j, (unsigned long long)i, (long long)ts[i]->dims[j], (long long)ts[0]->dims[j]);
        cshape[d] += ts[i]->dims[d];
        nonempty += !kit_is_empty(ts[i]);
    }
    /* 6. SplitToConcat: with 2+ non-empty tensors the concatenated shape must be out's (161002);
     *    with one, ViewCopy onto a differently shaped out fails (561103); with none, nothing is
     *    planned and out is not looked at. */
    if (nonempty >= 1 && !kit_same_shape(out, cshape, (uint32_t)rank))
        return emu_error(nonempty >= 2 ? ACLNN_ERR_PARAM_INVALID : ACLNN_ERR_INNER_NULLPTR, api,
                         "out shape %s should be the concatenated shape %s", KIT_SHAPE(out, b1),
                         kit_shape_str(cshape, (uint32_t)rank, b2, sizeof b2));
    if (!workspaceSize || !executor)
        return kit_null(api, !workspaceSize ? "workspaceSize" : "executor");
    if (nonempty && (st = kit_need_opp_path(api)))
        return st;
    aclOpExecutor *e = emu_executor_new("aclnnCat");
    if (e) {
        e->kernel = nonempty ? emu_kernel_cat : NULL;
        for (uint64_t i = 0; i < n; i++)
            emu_executor_add(e, ts[i], 0);
        emu_executor_add(e, out, 1);
        e->iattr[CAT_A_DIM] = d;
        e->iattr[CAT_A_PROMOTE] = promote;
        e->iattr[CAT_A_N] = (int64_t)n;
    }
    return kit_finish(api, e, workspaceSize, executor);
}

aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList *tensors, int64_t dim, aclTensor *out, uint64_t *workspaceSize,
                                     aclOpExecutor **executor)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    st = cat_phase1(tensors, dim, out, workspaceSize, executor);
    emu_unlock();
    return st;
}

aclnnStatus aclnnCat(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream)
{
    return emu_executor_launch(__func__, workspace, workspaceSize, executor, stream);
}

/* Each tensor is cast to the promoted dtype, concatenated, and the result cast to out's dtype. */
static int emu_kernel_cat(aclOpExecutor *e)
{
    int n = (int)e->iattr[CAT_A_N], d = (int)e->iattr[CAT_A_DIM], p = (int)e->iattr[CAT_A_PROMOTE];
    const emu_tview *y = &e->t[n];
    int64_t total = kit_numel_dims(y->dims, (uint32_t)y->ndim);
    kit_val *r = malloc((size_t)(total > 0 ? total : 1) * sizeof *r);
    if (!r)
        return emu_error(ACLNN_ERR_INNER, "aclnnCat", "out of memory");
    int64_t base = 0;                              /* start of the current tensor along d */
    for (int k = 0; k < n; k++) {
        const emu_tview *x = &e->t[k];
        int64_t m = kit_numel_dims(x->dims, (uint32_t)x->ndim);
        for (int64_t i = 0; i < m; i++) {
            /* row-major index of element i of x inside out */
            int64_t rem = i, lin = 0, scale = 1;
            for (int j = x->ndim - 1; j >= 0; j--) {
                int64_t idx = rem % x->dims[j];
                rem /= x->dims[j];
                lin += (idx + (j == d ? base : 0)) * scale;
                scale *= y->dims[j];
            }
            int64_t xo = kit_offset(x, x->dims, x->ndim, i);
            if (kit_is_float(p))
                r[lin].f = kit_round_f(p, kit_ld_f(x->data, x->dtype, xo));
            else
                r[lin].i = kit_wrap_i(p, kit_ld_i(x->data, x->dtype, xo));
        }
        base += x->dims[d];
    }
    store_all(y, r, total, p);
    return ACLNN_SUCCESS;
}

/* ========================================================================================== */
/* aclnnAmpUpdateScale (generated aclnn)                                                       */
/* ========================================================================================== */
/* Dtype rows of amp_update_scale_def.cpp: (x, int32, x, x, int32) with x in {f32, f16, bf16}. */
static int amp_phase1(const aclTensor *currentScale, const aclTensor *growthTracker, const aclTensor *foundInf,
                      double growthFactor, double backoffFactor, int64_t growthInterval, const aclTensor *updatedScale,
                      const aclTensor *updatedGrowthTracker, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const char api[] = "aclnnAmpUpdateScaleGetWorkspaceSize";
    const aclTensor *ts[] = {currentScale, growthTracker, foundInf, updatedScale, updatedGrowthTracker};
    static const char *const names[] = {"currentScale", "growthTracker", "foundInf", "updatedScale", "updatedGrowthTracker"};
    int st;
    /* 1. required tensors, in parameter order -> 161001 */
    for (int i = 0; i < 5; i++)
        if (!ts[i])
            return kit_null(api, names[i]);
    for (int i = 0; i < 5; i++)
        if ((st = kit_live(api, ts[i], names[i])))
            return st;
    if (!workspaceSize || !executor)
        return kit_null(api, !workspaceSize ? "workspaceSize" : "executor");
    /* 2. the dtype combination must be a row of the op definition -> 161002 */
    int x = currentScale->dtype;
    if (!(x == ACL_FLOAT || x == ACL_FLOAT16 || x == ACL_BF16) || growthTracker->dtype != ACL_INT32 || foundInf->dtype != x ||
        updatedScale->dtype != x || updatedGrowthTracker->dtype != ACL_INT32)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api,
                         "dtype combination (%s, %s, %s, %s, %s) is not in the op definition: expected (x, int32, x, x, int32), x in "
                         "float32/float16/bfloat16",
                         emu_dtype_name(currentScale->dtype), emu_dtype_name(growthTracker->dtype), emu_dtype_name(foundInf->dtype),
                         emu_dtype_name(updatedScale->dtype), emu_dtype_name(updatedGrowthTracker->dtype));
    /* 3. the tiling (ops-math math/amp_update_scale/op_host/amp_update_scale_tiling.cpp,
     *    AmpUpdateScaleTiling::Init): growthInterval in [1, INT32_MAX]; each input's shape is the
     *    scalar [1] (rank 0 counts as [1]) -> tiling failed */
    if (growthInterval < 1 || growthInterval > INT32_MAX)
        return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "growthInterval %lld must be in range [1, INT32_MAX]",
                         (long long)growthInterval);
    for (int i = 0; i < 3; i++)
        if (ts[i]->ndim > 1 || kit_numel(ts[i]) != 1)
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "The shape of input %s must be scalar [1]", names[i]);
    /* emulator guard: the kernel reads and writes element 0 of each: an empty one is undefined */
    for (int i = 0; i < 5; i++)
        if (kit_numel(ts[i]) < 1)
            return emu_error(ACLNN_ERR_INNER_TILING_ERROR, api, "%s is empty (emulator guard)", names[i]);
    if ((st = kit_need_opp_path(api)))
        return st;
    aclOpExecutor *e = emu_executor_new("aclnnAmpUpdateScale");
    if (e) {
        e->kernel = emu_kernel_amp_update_scale;
        e->generated = 1;
        for (int i = 0; i < 5; i++)
            emu_executor_add(e, ts[i], i >= AMP_OUT_SCALE);
        e->iattr[AMP_A_INTERVAL] = growthInterval;
        e->fattr[AMP_A_GROWTH] = (float)growthFactor;
        e->fattr[AMP_A_BACKOFF] = (float)backoffFactor;
    }
    return kit_finish(api, e, workspaceSize, executor);
}

aclnnStatus aclnnAmpUpdateScaleGetWorkspaceSize(const aclTensor *currentScale, const aclTensor *growthTracker,
                                                const aclTensor *foundInf, double growthFactor, double backoffFactor,
                                                int64_t growthInterval, const aclTensor *updatedScale,
                                                const aclTensor *updatedGrowthTracker, uint64_t *workspaceSize,
                                                aclOpExecutor **executor)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    st = amp_phase1(currentScale, growthTracker, foundInf, growthFactor, backoffFactor, growthInterval, updatedScale,
                    updatedGrowthTracker, workspaceSize, executor);
    emu_unlock();
    return st;
}

aclnnStatus aclnnAmpUpdateScale(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream)
{
    return emu_executor_launch_generated(__func__, workspace, workspaceSize, executor, stream);
}

/* The formula of docs/aclnnAmpUpdateScale.md (= torch._amp_update_scale_), in float32:
 * found_inf != 0 -> scale * backoff, tracker 0; else tracker + 1 == interval -> scale * growth
 * when that is finite (else scale kept), tracker 0; else tracker + 1. */
static int emu_kernel_amp_update_scale(aclOpExecutor *e)
{
    const emu_tview *t = e->t;
    int x = t[AMP_SCALE].dtype;
    float scale = (float)kit_ld_f(t[AMP_SCALE].data, x, t[AMP_SCALE].offset);
    int64_t tracker = kit_ld_i(t[AMP_TRACKER].data, ACL_INT32, t[AMP_TRACKER].offset);
    float found = (float)kit_ld_f(t[AMP_FOUND].data, x, t[AMP_FOUND].offset);
    float growth = (float)e->fattr[AMP_A_GROWTH], backoff = (float)e->fattr[AMP_A_BACKOFF];
    if (found != 0.0f) {                            /* NaN counts as found */
        scale = scale * backoff;
        tracker = 0;
    } else {
        int32_t successful = (int32_t)tracker + 1;
        if (successful == e->iattr[AMP_A_INTERVAL]) {
            float grown = scale * growth;
            if (isfinite(grown))
                scale = grown;
            tracker = 0;
        } else {
            tracker = successful;
        }
    }
    kit_st_f(t[AMP_OUT_SCALE].data, x, t[AMP_OUT_SCALE].offset, scale);
    kit_st_i(t[AMP_OUT_TRACKER].data, ACL_INT32, t[AMP_OUT_TRACKER].offset, tracker);
    return ACLNN_SUCCESS;
}

/* ========================================================================================== */
/* aclnnReduceSum                                                                              */
/* ========================================================================================== */
#define RS_A_PROMOTE 0             /* iattr: the dtype the sum runs in */
#define RS_A_MODE 1                /* iattr: RS_SUM, RS_ANY (dtype bool: ReduceAny) or RS_FILL0 */
#define RS_A_MASK 2                /* iattr: bit d set = dim d reduced */
enum { RS_SUM, RS_ANY, RS_FILL0 };
enum { RS_SELF, RS_OUT };

/* ASCEND910B_DTYPE_SUPPORT_LIST and EMPTY_INPUT_DTYPE_SUPPORT_LIST of aclnn_reduce_sum.cpp */
static const int k_rs_dtypes[] = {ACL_FLOAT16, ACL_FLOAT, ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64, ACL_UINT8,
                                  ACL_BOOL, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128, ACL_BF16};
static const int k_rs_empty_dtypes[] = {ACL_FLOAT16, ACL_FLOAT, ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64, ACL_UINT8,
                                        ACL_BOOL, ACL_DOUBLE, ACL_BF16};

static int rs_phase1(const aclTensor *self, const aclIntArray *dims, bool keepDims, aclDataType dtype, const aclTensor *out,
                     uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const char api[] = "aclnnReduceSumGetWorkspaceSize";
    char b1[256], b2[256];
    int st;
    /* 1. CheckNotNull: self, dims, out -> 161001 */
    if (!self) return kit_null(api, "self");
    if (!dims) return kit_null(api, "dims");
    if (!out) return kit_null(api, "out");
    if ((st = kit_live(api, self, "self")) || (st = kit_live(api, out, "out")) ||
        (st = kit_live_kind(api, dims, EMU_K_INT_ARRAY, "aclIntArray", "dims")))
        return st;
    /* 2. CheckDtypeValid: self, out and dtype in the list, out's dtype == dtype -> 161002 */
    const int n_rs = (int)(sizeof k_rs_dtypes / sizeof k_rs_dtypes[0]);
    if (!kit_in(self->dtype, k_rs_dtypes, n_rs) || !kit_in(out->dtype, k_rs_dtypes, n_rs))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported (Ascend910B dtype support list)",
                         kit_in(self->dtype, k_rs_dtypes, n_rs) ? "out" : "self",
                         emu_dtype_name(kit_in(self->dtype, k_rs_dtypes, n_rs) ? out->dtype : self->dtype));
    if (!kit_in(dtype, k_rs_dtypes, n_rs))
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "type %s should be in dtype support list", emu_dtype_name(dtype));
    if ((int)out->dtype != (int)dtype)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s should be the same as dtype %s", emu_dtype_name(out->dtype),
                         emu_dtype_name(dtype));
    /* 3. rank <= 8 -> 161002 */
    if (self->ndim > KIT_MAX_DIM)
        return emu_error(ACLNN_ERR_PARAM_INVALID, api, "self rank %u exceeds the maximum of 8", self->ndim);
    /* 4. CheckDimValid: each dim in [-n, n) (n = max(rank, 1)), none twice -> 161002 */
    int64_t n = self->ndim ? self->ndim : 1;
    uint64_t mask = 0;
    for (uint64_t i = 0; i < dims->size; i++) {
        int64_t d = dims->v[i];
        if (d >= n || d < -n)
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "Provided dim %lld must be in the range of [%lld, %lld]", (long long)d,
                             (long long)-n, (long long)(n - 1));
        int64_t pd = d < 0 ? d + n : d;
        if (mask & (1ull << pd))
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "Dim %lld appears multiple times in the list of dims", (long long)pd);
        mask |= 1ull << pd;
    }
    if (!workspaceSize || !executor)
        return kit_null(api, !workspaceSize ? "workspaceSize" : "executor");
    int mode = dtype == ACL_BOOL ? RS_ANY : RS_SUM, promote = dtype;
    int64_t oshape[KIT_MAX_DIM];
    uint32_t on = 0;
    if (kit_is_empty(self)) {
        /* 5. empty self: out is filled with 0 whatever its shape (FillScalar), out's dtype in
         *    EMPTY_INPUT_DTYPE_SUPPORT_LIST (no complex) -> else 161002 */
        if (!kit_in(out->dtype, k_rs_empty_dtypes, (int)(sizeof k_rs_empty_dtypes / sizeof k_rs_empty_dtypes[0])))
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s is not supported for an empty self", emu_dtype_name(out->dtype));
        mode = RS_FILL0;
    } else if (self->ndim == 0) {
        /* 6. 0-d self: Cast + ViewCopy onto out; a ViewCopy onto a shape of other size fails (561103) */
        if (kit_numel(out) != 1)
            return emu_error(ACLNN_ERR_INNER_NULLPTR, api, "out shape %s cannot take the 0-d result", KIT_SHAPE(out, b1));
        mask = 0;
    } else {
        /* 7. empty dims = every dim; bool self with dtype int64 sums in float32 below 2^24
         *    elements; the result shape must be out's (CheckShapeAndScalarSame) -> 161002 */
        if (dims->size == 0)
            mask = (1ull << self->ndim) - 1;
        int64_t count = 1;
        for (uint32_t d = 0; d < self->ndim; d++) {
            if (mask & (1ull << d)) {
                count *= self->dims[d];
                if (keepDims)
                    oshape[on++] = 1;
            } else {
                oshape[on++] = self->dims[d];
            }
        }
        if (self->dtype == ACL_BOOL && dtype == ACL_INT64)
            promote = count < 16777216 ? ACL_FLOAT : ACL_INT64;
        /* CheckShapeAndScalarSame (ops-math common/inc/op_api/aclnn_check.h): the same shape, or
         * both of one element (a full reduction may land in a (1,) or (1, 1) out) */
        int64_t rn = 1;
        for (uint32_t d = 0; d < on; d++)
            rn *= oshape[d];
        if (!kit_same_shape(out, oshape, on) && !(rn == 1 && kit_numel(out) == 1))
            return emu_error(ACLNN_ERR_PARAM_INVALID, api, "out shape %s should be %s", KIT_SHAPE(out, b1),
                             kit_shape_str(oshape, on, b2, sizeof b2));
    }
    if (!kit_is_real(self->dtype) || !kit_is_real(dtype))
        return not_emulated(api, kit_is_real(self->dtype) ? (int)dtype : self->dtype);
    int work = mode == RS_FILL0 ? !kit_is_empty(out) : 1;
    if (work && (st = kit_need_opp_path(api)))
        return st;
    aclOpExecutor *e = emu_executor_new("aclnnReduceSum");
    if (e) {
        e->kernel = work ? emu_kernel_reduce_sum : NULL;
        emu_executor_add(e, self, 0);
        emu_executor_add(e, out, 1);
        e->iattr[RS_A_PROMOTE] = promote;
        e->iattr[RS_A_MODE] = mode;
        e->iattr[RS_A_MASK] = (int64_t)mask;
    }
    return kit_finish(api, e, workspaceSize, executor);
}

aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims, bool keepDims, aclDataType dtype,
                                           aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    st = rs_phase1(self, dims, keepDims, dtype, out, workspaceSize, executor);
    emu_unlock();
    return st;
}

aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return emu_executor_launch(__func__, workspace, workspaceSize, executor, stream);
}

/* self is cast to the compute dtype (floats rounded, floats to integers truncated, bool is
 * x != 0), summed (floats accumulate in double, rounded once; integers wrap; bool: any), and
 * the sum cast to out's dtype. An empty self fills out with 0. */
static int emu_kernel_reduce_sum(aclOpExecutor *e)
{
    const emu_tview *x = &e->t[RS_SELF], *y = &e->t[RS_OUT];
    int p = (int)e->iattr[RS_A_PROMOTE], mode = (int)e->iattr[RS_A_MODE];
    uint64_t mask = (uint64_t)e->iattr[RS_A_MASK];
    int64_t ny = kit_numel_dims(y->dims, (uint32_t)y->ndim);
    kit_val *r = calloc((size_t)(ny > 0 ? ny : 1), sizeof *r);
    if (!r)
        return emu_error(ACLNN_ERR_INNER, "aclnnReduceSum", "out of memory");
    if (mode != RS_FILL0) {
        int64_t nx = kit_numel_dims(x->dims, (uint32_t)x->ndim);
        for (int64_t i = 0; i < nx; i++) {
            int64_t rem = i, lin = 0, scale = 1;
            for (int d = x->ndim - 1; d >= 0; d--) {
                int64_t idx = rem % x->dims[d];
                rem /= x->dims[d];
                if (!(mask & (1ull << d))) {
                    lin += idx * scale;
                    scale *= x->dims[d];
                }
            }
            int64_t xo = kit_offset(x, x->dims, x->ndim, i);
            if (mode == RS_ANY)
                r[lin].i |= kit_is_float(x->dtype) ? kit_ld_f(x->data, x->dtype, xo) != 0 : kit_ld_i(x->data, x->dtype, xo) != 0;
            else if (kit_is_float(p))
                r[lin].f += kit_round_f(p, kit_ld_f(x->data, x->dtype, xo));
            else if (kit_is_float(x->dtype))
                r[lin].i += kit_wrap_i(p, (int64_t)trunc(kit_ld_f(x->data, x->dtype, xo)));
            else
                r[lin].i += kit_wrap_i(p, kit_ld_i(x->data, x->dtype, xo));
        }
    }
    for (int64_t i = 0; i < ny; i++) {
        int64_t yo = kit_offset(y, y->dims, y->ndim, i);
        if (mode != RS_FILL0 && kit_is_float(p) && kit_is_float(y->dtype))
            kit_st_f(y->data, y->dtype, yo, kit_round_f(p, r[i].f));
        else if (mode != RS_FILL0 && kit_is_float(p))
            kit_st_i(y->data, y->dtype, yo, (int64_t)kit_round_f(p, r[i].f));    /* bool self, int64 out */
        else
            kit_st_i(y->data, y->dtype, yo, mode == RS_FILL0 ? 0 : kit_wrap_i(p, r[i].i));
    }
    free(r);
    return ACLNN_SUCCESS;
}
