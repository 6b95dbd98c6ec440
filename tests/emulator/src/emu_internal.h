/*
 * emu_internal.h - shared declarations of the pyaclnn CANN host emulator.
 *
 * The emulator is three (in the 9.x layout: five) shared libraries:
 *   libascendcl.so / libacl_rt.so  emu_runtime.c   acl*, aclrt*, aclsys* + the control API (emu_*)
 *                                                  + ALL global state: handle registry, call
 *                                                  counters, fault table, error messages, devices,
 *                                                  contexts, streams, events, allocations.
 *   libnnopbase.so                 emu_nnopbase.c  aclCreate..., aclDestroy..., aclGet..., executors
 *   libopapi.so / libopapi_nn.so   emu_ops.c       phase-1 checks of the four operators
 *                                  emu_kernels.c   phase-2 compute of the four operators
 *
 * The public prototypes come from the project's own headers/ (the very declarations pyaclnn feeds
 * to cffi), so the compiler checks every exported signature against them.
 *
 * Functions named emu_* without EMU_CONTROL are internal glue between the emulator libraries:
 * they are exported (the libraries are separate DSOs) but are not part of the control API.
 */
#ifndef EMU_INTERNAL_H
#define EMU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The public API: default visibility (the libraries are built with -fvisibility=hidden). */
#pragma GCC visibility push(default)
#include "acl_base.h"
#include "acl_rt.h"
#include "acl_meta.h"
#include "aclnn_base.h"
#include "aclnn_mse_loss_backward.h"
#include "aclnn_group_norm_backward.h"
#include "aclnn_cross_entropy_loss_grad.h"
#include "aclnn_prelu_backward.h"
#pragma GCC visibility pop

/* Everything is compiled with -fvisibility=hidden; this marks what a library exports. */
#define EMU_EXPORT __attribute__((visibility("default")))

#if defined(__GNUC__)
#define EMU_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define EMU_PRINTF(a, b)
#endif

/* ------------------------------------------------------------------------------------------ */
/* Handle registry (emu_runtime.c).                                                            */
/* Every object handed out to the caller (tensor, scalar, array, list, executor, stream, event, */
/* context) is registered with its kind. Destroy = release from the registry; the memory of the */
/* struct itself is kept in a quarantine ring for a while before free(), so a stale handle is   */
/* reported as "unknown" (a misuse) instead of aliasing a freshly created object.               */
/* ------------------------------------------------------------------------------------------ */
enum emu_kind {
    EMU_K_NONE = 0,
    EMU_K_TENSOR,
    EMU_K_SCALAR,
    EMU_K_INT_ARRAY,
    EMU_K_FLOAT_ARRAY,
    EMU_K_BOOL_ARRAY,
    EMU_K_TENSOR_LIST,
    EMU_K_SCALAR_LIST,
    EMU_K_EXECUTOR,
    EMU_K_STREAM,
    EMU_K_EVENT,
    EMU_K_CONTEXT,
    EMU_K_COUNT
};

EMU_EXPORT void emu_lock(void);      /* one recursive process-wide mutex guards all state */
EMU_EXPORT void emu_unlock(void);
EMU_EXPORT void emu_reg_add(int kind, const void *p);
EMU_EXPORT int emu_reg_kind(const void *p);            /* EMU_K_NONE when not a live handle */
/* Release a live handle of `kind`: returns 1 and quarantines `p` (it is free()d later by the
 * registry, so `p` must come from malloc/calloc); returns 0 when `p` is not a live `kind`. */
EMU_EXPORT int emu_reg_release(int kind, const void *p);

/* ------------------------------------------------------------------------------------------ */
/* Calls, faults, errors, misuse (emu_runtime.c).                                             */
/* ------------------------------------------------------------------------------------------ */
/* Every exported API function starts with emu_enter(__func__): counts the call and returns the
 * injected status (0 when no fault is armed); on a fault it also sets the recent error message. */
EMU_EXPORT int emu_enter(const char *func);
/* Appends "<code>: <func>: <message>" to the thread's recent error message (aclGetRecentErrMsg),
 * records `status` as the thread's last runtime error and returns `status`. */
EMU_EXPORT int emu_error(int status, const char *func, const char *fmt, ...) EMU_PRINTF(3, 4);
/* Counts one misuse (double free, use of a freed/unknown handle, bad device address...); the
 * control API reads the count with emu_misuse() and the latest description with
 * emu_last_misuse(). */
EMU_EXPORT void emu_note_misuse(const char *func, const char *fmt, ...) EMU_PRINTF(2, 3);

/* ------------------------------------------------------------------------------------------ */
/* Runtime services for the other libraries (emu_runtime.c).                                  */
/* ------------------------------------------------------------------------------------------ */
/* 0 when the calling thread has a current context, else ACL_ERROR_UNINITIALIZE (no aclInit) or
 * ACL_ERROR_RT_CONTEXT_NULL (no aclrtSetDevice/aclrtSetCurrentContext in this thread). */
EMU_EXPORT int emu_need_context(void);
/* 0 when `stream` may take work from this thread (NULL = the default stream of the current
 * context); ACL_ERROR_RT_PARAM_INVALID for an unknown handle, ACL_ERROR_RT_STREAM_CONTEXT when
 * the stream belongs to another context. Does not count a misuse. */
EMU_EXPORT int emu_check_stream(const void *stream);
/* 1 when [p, p+bytes) lies inside one live aclrtMalloc allocation. */
EMU_EXPORT int emu_device_range_ok(const void *p, uint64_t bytes);
/* 1 when [p, p+bytes) lies inside the block the runtime allocated for one of them (the bytes
 * asked for, rounded up to 32, plus 32 bytes of padding): what a kernel may touch unfaulted. */
EMU_EXPORT int emu_device_block_ok(const void *p, uint64_t bytes);
/* The host address of the device byte at `p` (device memory is PROT_NONE to the host: copies and
 * kernels use a private alias); `p` itself when it is not device memory. */
EMU_EXPORT void *emu_host_alias(const void *p);
/* Size in bytes of one element (0 for sub-byte / unsized dtypes), as aclDataTypeSize. */
EMU_EXPORT size_t emu_dtype_size(int dtype);
EMU_EXPORT const char *emu_dtype_name(int dtype);

/* ------------------------------------------------------------------------------------------ */
/* nnopbase objects (emu_nnopbase.c).                                                          */
/* ------------------------------------------------------------------------------------------ */
#define EMU_MAX_DIMS 64        /* aclCreateTensor rejects a larger rank (returns NULL) */
#define EMU_TENSOR_MAGIC 0x54454e53u

struct aclTensor {
    uint32_t magic;
    uint32_t ndim;                    /* view rank */
    int64_t dims[EMU_MAX_DIMS];       /* view shape */
    int64_t strides[EMU_MAX_DIMS];    /* view strides, elements */
    int64_t offset;                   /* view offset from the storage base, elements */
    aclDataType dtype;
    aclFormat format;
    uint32_t storage_ndim;
    int64_t storage_dims[EMU_MAX_DIMS];
    void *data;                       /* storage base (device address) */
};

struct aclScalar { uint32_t magic; aclDataType dtype; unsigned char value[16]; };
struct aclIntArray { uint32_t magic; uint64_t size; int64_t *v; };
struct aclFloatArray { uint32_t magic; uint64_t size; float *v; };
struct aclBoolArray { uint32_t magic; uint64_t size; bool *v; };
struct aclTensorList { uint32_t magic; uint64_t size; aclTensor **v; };
struct aclScalarList { uint32_t magic; uint64_t size; aclScalar **v; };

/* A tensor as captured by phase 1: metadata is frozen, the device address is read again from
 * the (still live) handle at phase 2 (so aclSetRawTensorAddr / aclSet*TensorAddr take effect). */
typedef struct emu_tview {
    const aclTensor *handle;          /* NULL: optional input/output absent */
    int ndim;
    int64_t dims[EMU_MAX_DIMS];
    int64_t strides[EMU_MAX_DIMS];
    int64_t offset;
    int dtype;
    void *data;                       /* filled in at phase 2 */
} emu_tview;

#define EMU_MAX_ROLES 8               /* tensor parameters of one op (GroupNorm: 5 in + 3 out) */
#define EMU_EXECUTOR_MAGIC 0x45584543u

struct aclOpExecutor;
typedef int (*emu_kernel_fn)(struct aclOpExecutor *e);

struct aclOpExecutor {
    uint32_t magic;
    const char *api;                  /* the phase-2 function that may run it */
    emu_kernel_fn kernel;             /* compute, queued on the stream; NULL: empty-tensor fast path */
    emu_kernel_fn check;              /* optional launch-time faults, run by phase 2 before queueing */
    int fault_role;                   /* phase 2: the tensor whose address faults the kernel */
    int repeatable;
    uint64_t workspace;               /* bytes phase 1 asked for */
    int workspace_used;               /* the kernel reads or writes it (a 0-byte tiling request: never) */
    int nroles;
    emu_tview t[EMU_MAX_ROLES];       /* the op's tensor parameters, in parameter order */
    int role_is_output[EMU_MAX_ROLES];
    int addr_set[EMU_MAX_ROLES];      /* aclSet*TensorAddr gave this role an address (in .data) */
    /* aclSetInputTensorAddr(index): index-th NON-NULL input, in parameter order;
     * aclSetOutputTensorAddr(index): index-th NON-NULL output, in parameter order;
     * aclSetTensorAddr(index): inputs first, then outputs (same numbering continued). */
    int nin, nout;
    int in_role[EMU_MAX_ROLES];
    int out_role[EMU_MAX_ROLES];
    /* A composite op's phase 1 that found the same op and layout in the op cache returns an
     * OpExecCacheWrap instead of an executor (hicann/opbase common/utils/op_cache.cpp
     * GetFromCache): it runs on the addresses captured by phase 1, refuses to become repeatable. */
    int cache_wrap;
    uint64_t cache_key;               /* op + layout + attributes (0: never cached) */
    /* op attributes */
    int64_t iattr[8];
    double fattr[4];
    char sattr[64];
    /* Executor kind (hicann/opbase src/nnopbase/common/api/acl_op_api.cpp dispatches on the
     * executor's magic number): 0 = composite (hand-written op_api, L2_DFX_PHASE_1, op cache),
     * 1 = generated ("Nnopbase", individual_op/), whose aclSet*TensorAddr index is the position
     * in the op definition: CrossEntropyLossGrad, AmpUpdateScale, the custom ops. */
    int generated;
    /* A generated executor's tensor-list parameters (aclSetDynamic*TensorAddr): the IR index of
     * its dynamic input / output, the role of the list's first element and the element count
     * (n == 0: none); ir_inputs = the op definition's input count (aclSetDynamicTensorAddr
     * numbers the inputs, then the outputs). */
    struct { int ir, first, n; } dyn_in, dyn_out;
    int ir_inputs;
};

/* Internal nnopbase services used by libopapi. */
EMU_EXPORT int emu_is_tensor(const aclTensor *t);
EMU_EXPORT aclOpExecutor *emu_executor_new(const char *phase2_api);      /* registered, NULL on OOM */
/* Adds the next tensor parameter (in parameter order); `t` may be NULL for an absent optional. */
EMU_EXPORT void emu_executor_add(aclOpExecutor *e, const aclTensor *t, int is_output);
EMU_EXPORT void emu_executor_discard(aclOpExecutor *e);                  /* phase 1 failed late */
/* Queues the kernel of `e` (a private copy that the queue then owns and frees) on `stream` (NULL:
 * runs it at once); lo/len/writes: the n byte ranges it touches (emu_runtime.c, "Stream queues"). */
EMU_EXPORT int emu_enqueue_kernel(void *stream, const char *api, aclOpExecutor *e, const void *const *lo,
                                  const uint64_t *len, const int *writes, int n);
/* aclInit boots the runtime: opens libruntime_v100.so / _v200.so and libtsdclient.so by bare
 * name (emu_boot.c). Returns 0 or ACL_ERROR_INTERNAL_ERROR (with the error text). */
EMU_EXPORT int emu_boot_runtime(const char *func);
/* End of a successful composite phase 1: keys the executor and, when the op cache holds the same
 * key, turns it into a cache wrapper (see aclOpExecutor.cache_wrap). */
EMU_EXPORT void emu_executor_check_cache(aclOpExecutor *e);
/* The op cache (emu_opcache.c, in the runtime library with the rest of the global state). */
EMU_EXPORT int emu_op_cache_find(uint64_t key);
EMU_EXPORT void emu_op_cache_add(uint64_t key);
/* The whole of phase 2 for every op (see emu_nnopbase.c for the order of its checks). */
EMU_EXPORT aclnnStatus emu_executor_launch(const char *api, void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);
/* The same for a generated op's phase 2 (NnopbaseRunWithWorkspace rather than CommonOpExecutorRun). */
EMU_EXPORT aclnnStatus emu_executor_launch_generated(const char *api, void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, aclrtStream stream);

/* ------------------------------------------------------------------------------------------ */
/* Numeric helpers shared by the libraries (static inline, no exported state).                */
/* ------------------------------------------------------------------------------------------ */
static inline uint32_t emu_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float emu_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* IEEE binary16 -> binary32 (exact). */
static inline float emu_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f)                                   /* inf / NaN (payload kept, quiet bit kept) */
        return emu_bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0)
            return emu_bits_f32(sign);                 /* +-0 */
        /* subnormal: man * 2^-24, exact in binary32 */
        float v = (float)man * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return emu_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

/* IEEE binary32 -> binary16, round to nearest, ties to even; overflow -> inf; NaN stays NaN. */
static inline uint16_t emu_f32_to_f16(float f)
{
    uint32_t x = emu_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) {                           /* inf or NaN */
        if (ax == 0x7f800000u)
            return sign | 0x7c00u;
        return sign | 0x7e00u | (uint16_t)((ax >> 13) & 0x3ffu);  /* quiet NaN, keep payload bits */
    }
    if (ax >= 0x477ff000u)                             /* >= 65520: rounds to inf */
        return sign | 0x7c00u;
    if (ax >= 0x38800000u) {                           /* normal half range (>= 2^-14) */
        uint32_t r = ax + 0x00000fffu + ((ax >> 13) & 1u);   /* RNE on the 13 dropped bits */
        return sign | (uint16_t)((r - 0x38000000u) >> 13);
    }
    if (ax <= 0x33000000u)                             /* <= 2^-25: rounds to zero (tie to even) */
        return sign;
    /* subnormal half: value = m * 2^(e-150); result = round(value / 2^-24) */
    uint32_t e = ax >> 23;
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e;                         /* in [14, 24] */
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        q++;                                           /* may carry into the smallest normal: fine */
    return sign | (uint16_t)q;
}

static inline float emu_bf16_to_f32(uint16_t b) { return emu_bits_f32((uint32_t)b << 16); }

static inline uint16_t emu_f32_to_bf16(float f)
{
    uint32_t x = emu_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x0040u);        /* quiet NaN */
    x += 0x7fffu + ((x >> 16) & 1u);                   /* RNE */
    return (uint16_t)(x >> 16);
}

#endif /* EMU_INTERNAL_H */
