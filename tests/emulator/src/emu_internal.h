/*
 * emu_internal.h - shared declarations of the pyaclnn CANN host emulator.
 *
 * The emulator is three (in the 9.x layout: five) shared libraries:
 *   libascendcl.so / libacl_rt.so  emu_runtime.c   acl*, aclrt*, aclsys* + the control API (emu_*)
 *                                  emu_rt_*.c      + ALL global state: handle registry, call
 *                                                  counters, fault table, error messages, devices,
 *                                                  contexts, streams, events, allocations (one
 *                                                  file per component: see emu_runtime.c).
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
    EMU_K_MODEL,                  /* aclmdlRI: a captured model (emu_rt_capture.c) */
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
/* Calls, faults, errors, misuse (emu_rt_control.c, emu_rt_errors.c).                         */
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
/* Runtime services for the other libraries (emu_runtime.c, emu_rt_*.c).                      */
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
 * runs it at once); lo/len/writes: the n byte ranges it touches (emu_rt_streams.c, "Stream queues"). */
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

/* ------------------------------------------------------------------------------------------ */
/* Runtime library internals: shared by its sources only (emu_runtime.c, emu_rt_*.c). They are */
/* hidden (-fvisibility=hidden), so the other libraries never see them.                        */
/* ------------------------------------------------------------------------------------------ */
#include <pthread.h>

#define EMU_MAX_DEVICES 64
#define EMU_ERR_MAX 8192                /* recent error text kept per thread (older text dropped) */
#define EMU_DEVICE_MEM_TOTAL (64ull << 30)
#define EMU_POISON 0xa5                 /* fills freed memory that queued work still used */

typedef struct emu_ctx {
    uint32_t magic;
    uint64_t id;                              /* unique, never reused */
    int32_t device;
    int is_default;                           /* created by aclrtSetDevice, not by the user */
    struct emu_stream *dflt;                  /* its default stream: what a NULL stream means */
    int64_t cap_ref[3];                       /* captures begun in it, per aclmdlRICaptureMode */
} emu_ctx;

struct emu_model;                             /* a capture model (emu_rt_capture.c) */

/* One unit of queued stream work (see "Stream queues" below). */
enum { T_KERNEL, T_COPY, T_MEMSET, T_RECORD, T_WAIT, T_REPLAY };
#define EMU_TASK_RANGES (EMU_MAX_ROLES + 2)

typedef struct emu_range {
    const char *p;
    uint64_t n;
    int writes;                               /* the task writes the range (else only reads it) */
} emu_range;

typedef struct emu_task {
    struct emu_task *next;
    int kind;
    const char *api;                          /* the call that queued it (a string literal) */
    aclOpExecutor *exec;                      /* T_KERNEL: private copy, owned by the task */
    void *dst;                                /* T_COPY / T_MEMSET */
    const void *src;
    size_t count;
    int value;
    void *event;                              /* T_RECORD / T_WAIT */
    void *wait_stream;                        /* T_WAIT: the stream whose record is awaited */
    struct emu_replay *replay;                /* T_REPLAY: a model's tasks (emu_rt_capture.c) */
    uint64_t seq;                             /* T_RECORD: this record's number; T_WAIT: awaited */
    int nranges;
    emu_range ranges[EMU_TASK_RANGES];        /* device / pinned memory the task touches */
} emu_task;

typedef struct emu_stream {
    uint32_t magic;
    emu_ctx *ctx;
    uint64_t ctx_id;
    int32_t device;                           /* the device of its context */
    emu_task *head, *tail;                    /* queued work, oldest first */
    int64_t queued;                           /* tasks in the queue */
    int status;                               /* first failure of a queued task, for the next sync */
    struct emu_stream *next_live;             /* g_streams list */
    /* graph capture (emu_rt_capture.c): the model its work goes to while it captures */
    struct emu_model *cap;                    /* NULL: not capturing */
    int cap_status;                           /* aclmdlRICaptureStatus */
    int cap_origin;                           /* aclmdlRICaptureBegin was called on it */
    int cap_last_kind;                        /* its last captured task (-1: none) */
    void *cap_last_event;                     /* ... its event when that is a record */
} emu_stream;

typedef struct emu_event {
    uint32_t magic;
    uint32_t flags;                           /* 0 = aclrtCreateEvent (timing allowed) */
    int with_flag;
    int recorded;                             /* a record has executed */
    uint64_t ns;                              /* when the latest executed record ran */
    uint64_t rec_seq;                         /* records queued so far */
    uint64_t done_seq;                        /* the latest record that has executed */
    void *rec_stream;                         /* stream of the latest queued record */
    uint32_t polls;                           /* aclrtQueryEventStatus calls since the record */
    int ex;                                   /* made by aclrtCreateEventExWithFlag ("new mode") */
    struct emu_model *cap;                    /* its latest record was captured into this capturing model */
    void *cap_rec_stream;                     /* ... on this stream */
    int cap_waited, cap_waited_origin;        /* ... and a captured wait (on the origin stream) joined it */
} emu_event;

typedef struct alloc_rec {
    char *p;
    size_t size;                              /* bytes asked for */
    size_t block;                             /* bytes the device really has there (see padded_size) */
    char *alias;                              /* device memory: the host's private mapping of it */
    size_t map;                               /* device memory: length of both mappings */
    int32_t device;                           /* device memory: the device it is on (-1: host memory) */
} alloc_rec;

typedef struct alloc_table {
    alloc_rec *v;
    size_t n, cap;
    uint64_t bytes;
} alloc_table;

typedef struct grave {                        /* memory freed while queued work used it */
    void *p;
    char *alias;                              /* device memory: its alias (else NULL: malloc'd) */
    size_t map;
    struct grave *next;
} grave;

/* emu_runtime.c: the lock, the registry's counts, init and devices */
extern pthread_mutex_t g_mu;
extern int64_t g_live[EMU_K_COUNT];
extern int g_initialized;
extern emu_ctx *g_default_ctx[EMU_MAX_DEVICES];
extern int64_t g_dev_refs[EMU_MAX_DEVICES];
extern int64_t g_dev_ctxs[EMU_MAX_DEVICES];    /* live contexts per device (default and created ones) */
extern int g_dev_override;                    /* emu_set_device_count */
extern alloc_table g_dev_mem, g_host_mem;
extern emu_stream *g_streams;                 /* live streams (created, not destroyed; default ones too) */
/* A device page fault poisons the device until it is reset (emu_rt_streams.c, "Sticky page faults"). */
extern int g_dev_fault[EMU_MAX_DEVICES];
extern char *g_dev_msg[EMU_MAX_DEVICES];      /* device error message not yet fetched (malloc'd) */
extern char g_dev_event[EMU_MAX_DEVICES][160];  /* the device's active fault event ("" = none) */
int device_count(void);
int emu_keeper_device_count(void);   /* libruntime.so (emu_keeper.c): its driver's count, or -1 */
uint64_t emu_keeper_device_memory(void);  /* libruntime.so: the simulated driver's memory pool, or 0 */
emu_ctx *cur_ctx(void);                       /* lock held */
void set_cur_ctx(emu_ctx *c);
emu_ctx *ctx_new(int32_t device, int is_default);
int ctx_error(int st, const char *func);

/* The preamble of the runtime's API functions, in this order: the call is counted and an armed
 * fault answers first (emu_enter), then what the function needs before its own checks: nothing
 * (API_NEED_NONE), aclInit (API_NEED_INIT: ACL_ERROR_UNINITIALIZE) or a current context of the
 * calling thread (API_NEED_CTX: ACL_ERROR_UNINITIALIZE or ACL_ERROR_RT_CONTEXT_NULL). */
enum { API_NEED_NONE, API_NEED_INIT, API_NEED_CTX };
int api_need(const char *func, int need);     /* 0, or the status it reported */
int api_enter(const char *func, int need);    /* emu_enter, then api_need */
/* Opens an API function: declares `int st` (0 after it) and returns any failure of api_enter. */
#define API_ENTER(need)                                                                   \
    int st = api_enter(__func__, API_NEED_##need);                                        \
    if (st)                                                                               \
        return st
#define NEED_INIT(func)                                                                   \
    do {                                                                                  \
        int st_ = api_need(func, API_NEED_INIT);                                          \
        if (st_)                                                                          \
            return st_;                                                                   \
    } while (0)
#define NEED_CTX(func)                                                                    \
    do {                                                                                  \
        int st_ = api_need(func, API_NEED_CTX);                                           \
        if (st_)                                                                          \
            return st_;                                                                   \
    } while (0)
/* A required pointer argument: ACL_ERROR_INVALID_PARAM "<name> is nullptr" when it is NULL. */
#define NEED_ARG(p)                                                                       \
    do {                                                                                  \
        if (!(p))                                                                         \
            return emu_error(ACL_ERROR_INVALID_PARAM, __func__, #p " is nullptr");        \
    } while (0)
/* A handle that is not a live object of its kind: a misuse, ACL_ERROR_RT_PARAM_INVALID. */
int unknown_handle(const char *func, const char *what, const void *p);
/* Takes the lock and checks that `p` is a live handle of `kind`: 0 with the lock HELD, or (lock
 * released) the status of unknown_handle. */
int lookup_locked(const char *func, int kind, const char *what, const void *p);

/* emu_rt_errors.c */
extern __thread int t_last_error;             /* aclrtGetLastError / aclrtPeekAtLastError */

/* emu_rt_memory.c */
int table_contains(const alloc_table *t, const void *p, uint64_t bytes);
int table_block_contains(const alloc_table *t, const void *p, uint64_t bytes);
size_t padded_size(size_t size, aclrtMemMallocPolicy policy);

/* emu_rt_streams.c: the stream queues (lock held unless said otherwise) */
extern int64_t g_queued;                      /* tasks queued over all streams */
extern grave *g_graves;
emu_task *queued_user(const void *p, uint64_t n, int writes, emu_stream **on);
void check_host_access(const char *func, const void *p, uint64_t n, int writes);  /* lock not needed */
void release_block(void *p, char *alias, size_t map);
void drain_stream_until(emu_stream *s, const emu_event *e, uint64_t seq);
int stream_live(const void *p);
void device_clear_fault(int d);
int launch_fault(const char *func, aclrtStream stream);
void range_add(emu_task *t, const void *p, uint64_t n, int writes);
void task_submit(aclrtStream stream, emu_task *t);
emu_task *task_new(int kind, const char *api);
void ctx_release(emu_ctx *c);
void device_memory_release(int32_t device);
int64_t queued_tasks(void);
int known_stream(const char *func, aclrtStream stream);
int launch_stream(const char *func, aclrtStream stream);

/* emu_rt_capture.c: graph capture (lock NOT held unless said otherwise) */
void capture_append(emu_stream *s, emu_task *t);                 /* lock held: t joins s's model */
void replay_run(emu_stream *s, emu_task *t, void (*run)(emu_stream *, emu_task *));  /* lock held: T_REPLAY */
int capture_refuse_stream(const char *func, aclrtStream stream); /* 107027 while it captures */
int capture_refuse_device(const char *func);                     /* 107027 while the context captures */
int capture_refuse_event(const char *func, aclrtEvent event);    /* 107028 while its record is captured */
int capture_mode_refused(const char *func);                      /* 107030: a sync copy/memset */
int capture_refuse_pageable(const char *func, aclrtStream stream, const void *dst, const void *src,
                            size_t count, aclrtMemcpyKind kind); /* 107000: pageable memory */
/* aclrtRecordEvent / aclrtStreamWaitEvent on a capturing stream or with a captured event: the
 * status, or -1 when the call is not a capture matter and goes on as usual */
int capture_record(const char *func, aclrtEvent event, aclrtStream stream);
int capture_wait(const char *func, aclrtStream stream, aclrtEvent event);

#endif /* EMU_INTERNAL_H */
