/*
 * emu_opkit.h - static helpers of the operators added for issue 11 (emu_ops_math.c, the built-in
 * Add / InplaceAdd / Cat / AmpUpdateScale, and emu_ops_custom.c, the custom operator package):
 * shapes, dtype promotion and casting rules, element access in every numeric dtype.
 *
 * Private to those two files (everything is static); emu_ops.c keeps its own helpers.
 */
#ifndef EMU_OPKIT_H
#define EMU_OPKIT_H

#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "emu_internal.h"

#define KIT_MAX_DIM 8                     /* OP_CHECK_MAX_DIM of the op_api sources */

/* ---- shapes ------------------------------------------------------------------------------ */
static inline int64_t kit_numel_dims(const int64_t *d, uint32_t n)
{
    int64_t k = 1;
    for (uint32_t i = 0; i < n; i++)
        if (__builtin_mul_overflow(k, d[i], &k))
            return INT64_MAX;
    return k;
}

static inline int64_t kit_numel(const aclTensor *t) { return kit_numel_dims(t->dims, t->ndim); }

static inline int kit_is_empty(const aclTensor *t)
{
    for (uint32_t i = 0; i < t->ndim; i++)
        if (t->dims[i] == 0)
            return 1;
    return 0;
}

static inline const char *kit_shape_str(const int64_t *d, uint32_t n, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "(");
    for (uint32_t i = 0; i < n && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, i ? ", %lld" : "%lld", (long long)d[i]);
    if (k < size)
        snprintf(buf + k, size - k, n == 1 ? ",)" : ")");
    return buf;
}

#define KIT_SHAPE(t, buf) kit_shape_str((t)->dims, (t)->ndim, buf, sizeof buf)

static inline int kit_same_shape(const aclTensor *a, const int64_t *d, uint32_t n)
{
    if (a->ndim != n)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (a->dims[i] != d[i])
            return 0;
    return 1;
}

/* NumPy broadcast of two shapes (OP_CHECK_BROADCAST_AND_INFER_SHAPE); 0 when they do not. */
static inline int kit_broadcast(const int64_t *a, uint32_t na, const int64_t *b, uint32_t nb, int64_t *out, uint32_t *no)
{
    uint32_t n = na > nb ? na : nb;
    for (uint32_t i = 0; i < n; i++) {
        int64_t x = i < na ? a[na - 1 - i] : 1;
        int64_t y = i < nb ? b[nb - 1 - i] : 1;
        if (x == y || y == 1)
            out[n - 1 - i] = x;
        else if (x == 1)
            out[n - 1 - i] = y;
        else
            return 0;
    }
    *no = n;
    return 1;
}

/* ---- statuses ------------------------------------------------------------------------------ */
static inline int kit_null(const char *api, const char *name)
{
    return emu_error(ACLNN_ERR_PARAM_NULLPTR, api, "%s is nullptr", name);
}

/* Emulator addition: a non-NULL tensor argument must be a live aclTensor (else misuse + 161002). */
static inline int kit_live(const char *api, const aclTensor *t, const char *name)
{
    if (!t || emu_is_tensor(t))
        return 0;
    emu_note_misuse(api, "%s %p is not a live aclTensor", name, (const void *)t);
    return emu_error(ACLNN_ERR_PARAM_INVALID, api, "%s %p is not a live aclTensor (destroyed?)", name, (const void *)t);
}

static inline int kit_live_kind(const char *api, const void *p, int kind, const char *what, const char *name)
{
    if (emu_reg_kind(p) == kind)
        return 0;
    emu_note_misuse(api, "%s %p is not a live %s", name, p, what);
    return emu_error(ACLNN_ERR_PARAM_INVALID, api, "%s %p is not a live %s (destroyed?)", name, p, what);
}

/* CANN: aclnn needs ASCEND_OPP_PATH (else 561107), as emu_ops.c; EMU_REQUIRE_OPP_PATH=0 turns it off. */
static inline int kit_need_opp_path(const char *api)
{
    const char *req = getenv("EMU_REQUIRE_OPP_PATH");
    if (req && strcmp(req, "0") == 0)
        return 0;
    const char *p = getenv("ASCEND_OPP_PATH");
    struct stat sb;
    if (p && *p && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
        return 0;
    return emu_error(ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND, api, "ASCEND_OPP_PATH is %s%s", p && *p ? "not a directory: " : "not set",
                     p && *p ? p : "");
}

static inline int kit_finish(const char *api, aclOpExecutor *e, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (!e)
        return emu_error(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "out of memory");
    if (!e->generated)                        /* composite ops: L2_DFX_PHASE_1 consults the op cache */
        emu_executor_check_cache(e);
    *workspaceSize = e->workspace;
    *executor = e;
    return ACLNN_SUCCESS;
}

/* ---- dtypes ------------------------------------------------------------------------------- */
static inline int kit_is_float(int dt) { return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16 || dt == ACL_DOUBLE; }
static inline int kit_is_int(int dt)
{
    return dt == ACL_INT8 || dt == ACL_UINT8 || dt == ACL_INT16 || dt == ACL_INT32 || dt == ACL_INT64;
}
static inline int kit_is_complex(int dt) { return dt == ACL_COMPLEX32 || dt == ACL_COMPLEX64 || dt == ACL_COMPLEX128; }
/* The real dtypes the emulator can compute in: bool, the integers and the floats. */
static inline int kit_is_real(int dt) { return dt == ACL_BOOL || kit_is_int(dt) || kit_is_float(dt); }

static inline int kit_in(int dt, const int *list, int n)
{
    for (int i = 0; i < n; i++)
        if (list[i] == dt)
            return 1;
    return 0;
}

/* Rank of a float dtype (f16 and bf16 share one: together they promote to float32). */
static inline int kit_float_rank(int dt) { return dt == ACL_DOUBLE ? 3 : dt == ACL_FLOAT ? 2 : 1; }

/* op::PromoteType (opbase common_types / PyTorch promoteTypes) restricted to the real dtypes;
 * -1 (DT_UNDEFINED) for a pair it does not define (complex, unsigned wider than 8 bits, ...). */
static inline int kit_promote(int a, int b)
{
    if (a == b)
        return a;
    if (!kit_is_real(a) || !kit_is_real(b))
        return -1;
    if (a == ACL_BOOL)
        return b;
    if (b == ACL_BOOL)
        return a;
    if (kit_is_float(a) || kit_is_float(b)) {
        if (!kit_is_float(a))
            return b;
        if (!kit_is_float(b))
            return a;
        int ra = kit_float_rank(a), rb = kit_float_rank(b);
        if (ra == rb)                                 /* float16 with bfloat16 */
            return ACL_FLOAT;
        return ra > rb ? a : b;
    }
    /* two integers: uint8 with a signed type widens to at least int16 */
    size_t sa = emu_dtype_size(a), sb = emu_dtype_size(b);
    if (a == ACL_UINT8 || b == ACL_UINT8) {
        int other = a == ACL_UINT8 ? b : a;
        return other == ACL_INT8 ? ACL_INT16 : other;
    }
    return sa >= sb ? a : b;
}

/* op::CanCast (PyTorch canCast): no complex -> non-complex, no float -> integral, no
 * non-bool -> bool. */
static inline int kit_can_cast(int from, int to)
{
    if (kit_is_complex(from) && !kit_is_complex(to))
        return 0;
    if (kit_is_float(from) && (kit_is_int(to) || to == ACL_BOOL))
        return 0;
    if (from != ACL_BOOL && to == ACL_BOOL)
        return 0;
    return 1;
}

/* ---- element access ------------------------------------------------------------------------ */
/* Element `off` (in elements) of a real-dtype buffer, as double (exact but for |int64| > 2^53). */
static inline double kit_ld_f(const void *base, int dt, int64_t off)
{
    const char *p = (const char *)base;
    switch (dt) {
    case ACL_FLOAT: { float v; memcpy(&v, p + off * 4, 4); return v; }
    case ACL_FLOAT16: { uint16_t h; memcpy(&h, p + off * 2, 2); return emu_f16_to_f32(h); }
    case ACL_BF16: { uint16_t h; memcpy(&h, p + off * 2, 2); return emu_bf16_to_f32(h); }
    case ACL_DOUBLE: { double v; memcpy(&v, p + off * 8, 8); return v; }
    case ACL_INT8: return (double)((const int8_t *)p)[off];
    case ACL_UINT8: return (double)((const uint8_t *)p)[off];
    case ACL_INT16: { int16_t v; memcpy(&v, p + off * 2, 2); return v; }
    case ACL_INT32: { int32_t v; memcpy(&v, p + off * 4, 4); return v; }
    case ACL_INT64: { int64_t v; memcpy(&v, p + off * 8, 8); return (double)v; }
    case ACL_BOOL: return ((const uint8_t *)p)[off] ? 1.0 : 0.0;
    default: return NAN;
    }
}

/* Element `off` of an integer or bool buffer, as int64. */
static inline int64_t kit_ld_i(const void *base, int dt, int64_t off)
{
    const char *p = (const char *)base;
    switch (dt) {
    case ACL_INT8: return ((const int8_t *)p)[off];
    case ACL_UINT8: return ((const uint8_t *)p)[off];
    case ACL_INT16: { int16_t v; memcpy(&v, p + off * 2, 2); return v; }
    case ACL_INT32: { int32_t v; memcpy(&v, p + off * 4, 4); return v; }
    case ACL_INT64: { int64_t v; memcpy(&v, p + off * 8, 8); return v; }
    case ACL_BOOL: return ((const uint8_t *)p)[off] != 0;
    default: return 0;
    }
}

/* x rounded to the precision of float dtype `dt` (float32 arithmetic for f32/f16/bf16: RNE). */
static inline double kit_round_f(int dt, double x)
{
    switch (dt) {
    case ACL_FLOAT: return (float)x;
    case ACL_FLOAT16: return emu_f16_to_f32(emu_f32_to_f16((float)x));
    case ACL_BF16: return emu_bf16_to_f32(emu_f32_to_bf16((float)x));
    default: return x;
    }
}

/* v wrapped to integer dtype `dt` (two's complement, as a device cast), or 0/1 for bool. */
static inline int64_t kit_wrap_i(int dt, int64_t v)
{
    switch (dt) {
    case ACL_INT8: return (int8_t)v;
    case ACL_UINT8: return (uint8_t)v;
    case ACL_INT16: return (int16_t)v;
    case ACL_INT32: return (int32_t)v;
    case ACL_BOOL: return v != 0;
    default: return v;
    }
}

/* Stores a value of the computation dtype into element `off` of a buffer of dtype `dt`.
 * Floats are rounded to nearest even; integers wrap; bool is v != 0. */
static inline void kit_st_f(void *base, int dt, int64_t off, double x)
{
    char *p = (char *)base;
    switch (dt) {
    case ACL_FLOAT: { float v = (float)x; memcpy(p + off * 4, &v, 4); break; }
    case ACL_FLOAT16: { uint16_t h = emu_f32_to_f16((float)x); memcpy(p + off * 2, &h, 2); break; }
    case ACL_BF16: { uint16_t h = emu_f32_to_bf16((float)x); memcpy(p + off * 2, &h, 2); break; }
    case ACL_DOUBLE: memcpy(p + off * 8, &x, 8); break;
    default: break;                               /* float -> integer: refused by kit_can_cast */
    }
}

static inline void kit_st_i(void *base, int dt, int64_t off, int64_t v)
{
    char *p = (char *)base;
    switch (dt) {
    case ACL_INT8: ((int8_t *)p)[off] = (int8_t)v; break;
    case ACL_UINT8: ((uint8_t *)p)[off] = (uint8_t)v; break;
    case ACL_INT16: { int16_t w = (int16_t)v; memcpy(p + off * 2, &w, 2); break; }
    case ACL_INT32: { int32_t w = (int32_t)v; memcpy(p + off * 4, &w, 4); break; }
    case ACL_INT64: memcpy(p + off * 8, &v, 8); break;
    case ACL_BOOL: ((uint8_t *)p)[off] = v != 0; break;
    default: kit_st_f(base, dt, off, (double)v); break;   /* integer -> float */
    }
}

/* Scalar value (aclScalar of any real dtype) as double / int64 (host side, no rounding). */
static inline double kit_scalar_f(const aclScalar *s) { return kit_ld_f(s->value, s->dtype, 0); }
static inline int64_t kit_scalar_i(const aclScalar *s)
{
    return kit_is_float(s->dtype) ? (int64_t)kit_ld_f(s->value, s->dtype, 0) : kit_ld_i(s->value, s->dtype, 0);
}

/* ---- iteration --------------------------------------------------------------------------- */
/* Element offset of the i-th element (row-major over `shape`, rank n) in a view whose shape is
 * broadcast to `shape` (its dims right-aligned; a dim of 1 repeats). */
static inline int64_t kit_offset(const emu_tview *v, const int64_t *shape, int n, int64_t i)
{
    int64_t off = v->offset;
    for (int d = n - 1; d >= 0; d--) {
        int64_t idx = i % shape[d];
        i /= shape[d];
        int vd = d - (n - v->ndim);
        if (vd >= 0 && v->dims[vd] != 1)
            off += idx * v->strides[vd];
    }
    return off;
}

#endif /* EMU_OPKIT_H */
