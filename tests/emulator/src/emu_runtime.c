/*
 * emu_runtime.c - libascendcl.so / libacl_rt.so of the emulator: its core.
 *
 * The library exports every function of headers/acl_base.h and headers/acl_rt.h, plus the control
 * API used by the tests (emu_live, emu_calls, emu_misuse, emu_fail, ...), plus the internal glue
 * that libnnopbase and libopapi call (emu_enter, emu_error, the handle registry, ...). Its sources,
 * by component (shared state and helpers declared in emu_internal.h, "Runtime library internals"):
 *   emu_runtime.c      lock, handle registry, global state, contexts, the API preamble
 *                      (api_enter), acl_base.h, aclInit/aclFinalize, versions
 *   emu_rt_devices.c   devices and contexts          emu_rt_streams.c  stream queues, streams
 *   emu_rt_events.c    events                        emu_rt_memory.c   allocations, copies, memsets
 *   emu_rt_errors.c    recent error message, last error
 *   emu_rt_control.c   call counters, fault injection (emu_enter), misuse, control API
 *
 * Model:
 *  - "Device memory" is not host memory: each aclrtMalloc block is a memfd mapped twice, the
 *    address handed out PROT_NONE (a host access through it faults) and a private alias that
 *    kernels and copies use (see "Device memory"). Every allocation is recorded for range checks.
 *  - Devices and contexts: aclrtSetDevice(id) makes the device's default context (shared by all
 *    threads that set the same device) current in the calling thread; the current context is
 *    thread-local. aclrtResetDevice is reference-counted: the default context dies when the count
 *    of sets reaches 0. Work that needs a context fails with ACL_ERROR_RT_CONTEXT_NULL in a thread
 *    that has none.
 *  - Streams are asynchronous queues, the NULL (default) stream of each context too (see "Stream
 *    queues"); a kernel's page fault puts its device in failure mode (see "Sticky page faults").
 *  - All state is guarded by one recursive mutex (tests call in from many threads).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "emu_internal.h"

#ifndef EMU_DEFAULT_DEVICE_COUNT
#define EMU_DEFAULT_DEVICE_COUNT 1      /* the "stub" build compiles this as 0 */
#endif

/* ========================================================================================== */
/* Locking                                                                                     */
/* ========================================================================================== */
pthread_mutex_t g_mu;
static pthread_once_t g_mu_once = PTHREAD_ONCE_INIT;

static void mu_init(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g_mu, &a);
    pthread_mutexattr_destroy(&a);
}

EMU_EXPORT void emu_lock(void)
{
    pthread_once(&g_mu_once, mu_init);
    pthread_mutex_lock(&g_mu);
}

EMU_EXPORT void emu_unlock(void) { pthread_mutex_unlock(&g_mu); }

/* ========================================================================================== */
/* Handle registry                                                                             */
/* ========================================================================================== */
typedef struct reg_node {
    const void *p;
    int kind;
    struct reg_node *next;
} reg_node;

#define REG_BUCKETS 4096
#define QUARANTINE 4096
static reg_node *g_reg[REG_BUCKETS];
int64_t g_live[EMU_K_COUNT];
static void *g_quarantine[QUARANTINE];   /* released handle structs, free()d when evicted */
static size_t g_qpos;

static size_t reg_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)(x & (REG_BUCKETS - 1));
}

EMU_EXPORT void emu_reg_add(int kind, const void *p)
{
    reg_node *n = malloc(sizeof *n);
    if (!n)
        abort();                          /* the emulator cannot track the handle: give up loudly */
    emu_lock();
    size_t h = reg_hash(p);
    n->p = p;
    n->kind = kind;
    n->next = g_reg[h];
    g_reg[h] = n;
    g_live[kind]++;
    emu_unlock();
}

EMU_EXPORT int emu_reg_kind(const void *p)
{
    int kind = EMU_K_NONE;
    if (!p)
        return kind;
    emu_lock();
    for (reg_node *n = g_reg[reg_hash(p)]; n; n = n->next)
        if (n->p == p) {
            kind = n->kind;
            break;
        }
    emu_unlock();
    return kind;
}

EMU_EXPORT int emu_reg_release(int kind, const void *p)
{
    int found = 0;
    if (!p)
        return 0;
    emu_lock();
    reg_node **pp = &g_reg[reg_hash(p)];
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->p == p && (*pp)->kind == kind) {
            reg_node *dead = *pp;
            *pp = dead->next;
            free(dead);
            g_live[kind]--;
            found = 1;
            break;
        }
    if (found) {
        /* keep the struct allocated for a while: a stale handle then never aliases a new one */
        free(g_quarantine[g_qpos]);
        g_quarantine[g_qpos] = (void *)p;
        g_qpos = (g_qpos + 1) % QUARANTINE;
    }
    emu_unlock();
    return found;
}


/* ========================================================================================== */
/* Global runtime state (types in emu_internal.h)                                              */
/* ========================================================================================== */
int g_initialized;
static int64_t g_init_refs;                   /* aclInit calls since the last finalize */
static uint64_t g_next_id = 1;
emu_ctx *g_default_ctx[EMU_MAX_DEVICES];
int64_t g_dev_refs[EMU_MAX_DEVICES];
int64_t g_dev_ctxs[EMU_MAX_DEVICES];
int g_dev_override = -1;               /* emu_set_device_count */
alloc_table g_dev_mem, g_host_mem;

emu_stream *g_streams;                 /* live streams (created, not destroyed; default ones too) */
/* A device page fault poisons the device until it is reset (see "Sticky page faults"). */
int g_dev_fault[EMU_MAX_DEVICES];
char *g_dev_msg[EMU_MAX_DEVICES];      /* device error message not yet fetched (malloc'd) */
char g_dev_event[EMU_MAX_DEVICES][160];  /* the device's active fault event ("" = none) */

static __thread emu_ctx *t_ctx;               /* current context of this thread */
static __thread uint64_t t_ctx_id;

int device_count(void)
{
    int n = emu_keeper_device_count();
    if (n >= 0) {
        /* the NPU Simulator's runtime: its driver's count (emu_keeper.c, emu_driver.c drvGetDevNum),
         * whatever devices the machine has (EMU_DEVICE_COUNT, emu_set_device_count) */
    } else if (g_dev_override >= 0) {
        n = g_dev_override;
    } else {
        n = EMU_DEFAULT_DEVICE_COUNT;
        const char *s = getenv("EMU_DEVICE_COUNT");
        if (s && *s) {
            char *end;
            long v = strtol(s, &end, 10);
            if (*end == 0 && v >= 0)
                n = (int)v;
        }
    }
    return n > EMU_MAX_DEVICES ? EMU_MAX_DEVICES : n;
}

/* The calling thread's live current context, or NULL. Call with the lock held. */
emu_ctx *cur_ctx(void)
{
    if (!t_ctx || emu_reg_kind(t_ctx) != EMU_K_CONTEXT || t_ctx->id != t_ctx_id)
        return NULL;
    return t_ctx;
}

void set_cur_ctx(emu_ctx *c)
{
    t_ctx = c;
    t_ctx_id = c ? c->id : 0;
}

/* A context with its default stream: the stream a NULL stream handle means (hicann/runtime
 * context.cc Context::Setup creates defaultStream_; api_impl.cc ApiImpl::MemcpyAsync, MemsetAsync,
 * EventRecord, LaunchKernel and CheckStreamSynchronizeParam take curCtx->DefaultStream_() for
 * NULL). It is an ordinary asynchronous stream: work queued on it runs later, like on any other.
 * It is listed in g_streams but is no handle (the caller never sees its address). Lock held. */
emu_ctx *ctx_new(int32_t device, int is_default)
{
    emu_ctx *c = calloc(1, sizeof *c);
    emu_stream *d = calloc(1, sizeof *d);
    if (!c || !d) {
        free(c);
        free(d);
        return NULL;
    }
    c->magic = 0x43545821u;
    c->id = g_next_id++;
    c->device = device;
    c->is_default = is_default;
    d->magic = 0x5354524du;
    d->ctx = c;
    d->ctx_id = c->id;
    d->device = device;
    d->next_live = g_streams;
    g_streams = d;
    c->dflt = d;
    g_dev_ctxs[device]++;                     /* a context holds its device (see device_memory_release) */
    emu_reg_add(EMU_K_CONTEXT, c);
    return c;
}

EMU_EXPORT int emu_need_context(void)
{
    int st = 0;
    emu_lock();
    if (!g_initialized)
        st = ACL_ERROR_UNINITIALIZE;
    else if (!cur_ctx())
        st = ACL_ERROR_RT_CONTEXT_NULL;
    emu_unlock();
    return st;
}

/* Reports the missing-context error of `func` (st from emu_need_context). */
int ctx_error(int st, const char *func)
{
    if (st == ACL_ERROR_UNINITIALIZE)
        return emu_error(st, func, "acl is not initialized (call aclInit first)");
    return emu_error(st, func, "no current context in this thread (call aclrtSetDevice or aclrtSetCurrentContext in this thread first)");
}

/* ---- The preamble of the API functions (API_ENTER, NEED_INIT, NEED_CTX in emu_internal.h) ---- */
int api_need(const char *func, int need)
{
    if (need == API_NEED_INIT && !g_initialized)
        return emu_error(ACL_ERROR_UNINITIALIZE, func, "acl is not initialized (call aclInit first)");
    if (need == API_NEED_CTX) {
        int st = emu_need_context();
        if (st)
            return ctx_error(st, func);
    }
    return 0;
}

int api_enter(const char *func, int need)
{
    int st = emu_enter(func);
    return st ? st : api_need(func, need);
}

int unknown_handle(const char *func, const char *what, const void *p)
{
    emu_note_misuse(func, "unknown or destroyed %s %p", what, p);
    return emu_error(ACL_ERROR_RT_PARAM_INVALID, func, "%s %p is unknown or already destroyed", what, p);
}

int lookup_locked(const char *func, int kind, const char *what, const void *p)
{
    emu_lock();
    if (emu_reg_kind(p) == kind)
        return 0;
    emu_unlock();
    return unknown_handle(func, what, p);
}

EMU_EXPORT int emu_check_stream(const void *stream)
{
    int st = 0;
    if (!stream)
        return 0;
    emu_lock();
    if (emu_reg_kind(stream) != EMU_K_STREAM) {
        st = ACL_ERROR_RT_PARAM_INVALID;
    } else {
        const emu_stream *s = stream;
        emu_ctx *c = cur_ctx();
        if (!c || s->ctx != c || s->ctx_id != c->id)
            st = ACL_ERROR_RT_STREAM_CONTEXT;
    }
    emu_unlock();
    return st;
}

/* ========================================================================================== */
/* acl_base.h                                                                                  */
/* ========================================================================================== */
static __thread char t_soc[128];

const char *aclrtGetSocName(void)
{
    if (emu_enter(__func__))
        return NULL;
    emu_lock();
    int init = g_initialized;
    emu_unlock();
    if (!init) {
        emu_error(ACL_ERROR_UNINITIALIZE, __func__, "acl is not initialized (call aclInit first)");
        return NULL;
    }
    const char *s = getenv("EMU_SOC_NAME");
    snprintf(t_soc, sizeof t_soc, "%s", (s && *s) ? s : "Ascend910B3");
    return t_soc;
}

aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t *value)
{
    API_ENTER(INIT);
    NEED_ARG(value);
    /* the acl layer's own range check: ACL_ERROR_INVALID_PARAM, not the runtime's 107001
     * (hicann/runtime src/acl/aclrt_impl/acl.cpp aclGetDeviceCapabilityImpl: deviceId > count - 1) */
    if ((int64_t)deviceId >= device_count())
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "deviceId %u greater than deviceNum %d", deviceId, device_count());
    switch (deviceInfo) {
    case ACL_DEVICE_INFO_AI_CORE_NUM: *value = 20; break;
    case ACL_DEVICE_INFO_VECTOR_CORE_NUM: *value = 40; break;
    case ACL_DEVICE_INFO_L2_SIZE: *value = 192ll << 20; break;
    default:
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "deviceInfo %d is invalid", (int)deviceInfo);
    }
    return ACL_SUCCESS;
}

EMU_EXPORT size_t emu_dtype_size(int dtype)
{
    switch (dtype) {
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: case ACL_COMPLEX32: return 4;
    case ACL_FLOAT16: case ACL_INT16: case ACL_UINT16: case ACL_BF16: return 2;
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: case ACL_HIFLOAT8: case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN: case ACL_FLOAT8_E8M0: return 1;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_COMPLEX64: return 8;
    case ACL_COMPLEX128: return 16;
    default: return 0;        /* undefined, string, and the sub-byte types (int4, uint1, fp6, fp4) */
    }
}

EMU_EXPORT const char *emu_dtype_name(int dtype)
{
    switch (dtype) {
    case ACL_FLOAT: return "float32";
    case ACL_FLOAT16: return "float16";
    case ACL_BF16: return "bfloat16";
    case ACL_INT8: return "int8";
    case ACL_INT16: return "int16";
    case ACL_INT32: return "int32";
    case ACL_INT64: return "int64";
    case ACL_UINT8: return "uint8";
    case ACL_UINT16: return "uint16";
    case ACL_UINT32: return "uint32";
    case ACL_UINT64: return "uint64";
    case ACL_DOUBLE: return "float64";
    case ACL_BOOL: return "bool";
    case ACL_COMPLEX64: return "complex64";
    case ACL_COMPLEX128: return "complex128";
    default: return "other";
    }
}

size_t aclDataTypeSize(aclDataType dataType)
{
    if (emu_enter(__func__))
        return 0;
    return emu_dtype_size(dataType);
}

float aclFloat16ToFloat(aclFloat16 value)
{
    emu_enter(__func__);                      /* counted; a fault cannot change a conversion */
    return emu_f16_to_f32(value);
}

aclFloat16 aclFloatToFloat16(float value)
{
    emu_enter(__func__);
    return emu_f32_to_f16(value);
}

/* ========================================================================================== */
/* Init / finalize / errors / versions                                                         */
/* ========================================================================================== */
/* Finalize de-initialises acl, not the devices: hicann/runtime src/acl/aclrt_impl/acl.cpp
 * aclFinalizeInternal (lines 547-628) finalizes the device log report, profiling, the modules that
 * registered a finalize callback (op compiler, model/GE executor, dvpp, "other": GE's stream and
 * device state callbacks), dump, the kernel-launch fill function and the aclInit config's default
 * device, then sets the count to 0; it resets no device and destroys no context, stream, event or
 * memory, and the aclrt* functions do not check for init (acl_rt_wrapper.h ACL_RT_CPP forwards each
 * to its *Impl). So the default contexts, their queued work, a page fault's failure mode and every
 * allocation survive; aclInit may be called again (acl.cpp aclInitImpl: count 0 -> a full init; the
 * runtime's own UT duplicate_aclinit, tests/ut/acl/testcase/acl_common_unittest.cpp:443). The
 * emulator still answers 100001 to most calls while not initialised (see API_ENTER). Lock held. */
static void finalize_locked(void)
{
    g_initialized = 0;
    g_init_refs = 0;
}

aclError aclInit(const char *configPath)
{
    API_ENTER(NONE);
    /* a repeat is counted before the config file is read (hicann/runtime src/acl/aclrt_impl/acl.cpp
     * aclInitImpl: aclInitRefCount > 0 returns ACL_ERROR_REPEAT_INITIALIZE, then GetStrFromConfigPath) */
    emu_lock();
    if (g_initialized) {
        g_init_refs++;
        emu_unlock();
        t_last_error = ACL_ERROR_REPEAT_INITIALIZE;   /* no error text: CANN says "ignorable" */
        return ACL_ERROR_REPEAT_INITIALIZE;
    }
    emu_unlock();
    if (configPath && *configPath) {
        FILE *f = fopen(configPath, "r");
        if (!f)
            return emu_error(ACL_ERROR_INVALID_FILE, __func__, "cannot open config file %s", configPath);
        fclose(f);
    }
    emu_lock();
    if (g_initialized) {                              /* another thread got there meanwhile */
        g_init_refs++;
        emu_unlock();
        t_last_error = ACL_ERROR_REPEAT_INITIALIZE;
        return ACL_ERROR_REPEAT_INITIALIZE;
    }
    /* the SoC query boots the runtime, which opens its libraries by bare name (emu_boot.c) */
    if ((st = emu_boot_runtime(__func__))) {
        emu_unlock();
        return st;
    }
    g_init_refs++;
    g_initialized = 1;
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclFinalize(void)
{
    API_ENTER(NONE);
    emu_lock();
    if (!g_initialized) {
        emu_unlock();
        return emu_error(ACL_ERROR_REPEAT_FINALIZE, __func__, "acl is not initialized or already finalized");
    }
    finalize_locked();
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclFinalizeReference(uint64_t *refCount)
{
    API_ENTER(NONE);
    emu_lock();
    if (!g_initialized) {
        emu_unlock();
        if (refCount)                         /* acl.cpp aclFinalizeReferenceImpl: the count (0) */
            *refCount = 0;
        return emu_error(ACL_ERROR_REPEAT_FINALIZE, __func__, "acl is not initialized or already finalized");
    }
    if (--g_init_refs <= 0)
        finalize_locked();
    if (refCount)
        *refCount = (uint64_t)(g_init_refs < 0 ? 0 : g_init_refs);
    emu_unlock();
    return ACL_SUCCESS;
}

static const char *cann_version(void)
{
    const char *s = getenv("EMU_CANN_VERSION");
    return (s && *s) ? s : "8.1.RC1";
}

/* Splits "8.1.RC1" / "9.1.0" / "8.0.0.alpha001" into up to 4 dot-separated parts. */
static void split_version(const char *v, char parts[4][64])
{
    memset(parts, 0, 4 * 64);
    for (int i = 0; i < 4 && *v; i++) {
        size_t n = strcspn(v, ".");
        snprintf(parts[i], 64, "%.*s", (int)(n < 63 ? n : 63), v);
        v += n;
        if (*v == '.')
            v++;
    }
}

aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version)
{
    API_ENTER(NONE);
    NEED_ARG(version);
    if ((int)name < ACL_PKG_NAME_CANN || (int)name > ACL_PKG_NAME_DRIVER)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "package name %d is invalid", (int)name);
    char parts[4][64];
    const char *v = cann_version();
    split_version(v, parts);
    memset(version, 0, sizeof *version);
    snprintf(version->version, sizeof version->version, "%s", v);
    snprintf(version->majorVersion, sizeof version->majorVersion, "%s", parts[0]);
    snprintf(version->minorVersion, sizeof version->minorVersion, "%s", parts[1]);
    snprintf(version->releaseVersion, sizeof version->releaseVersion, "%s", parts[2]);
    snprintf(version->patchVersion, sizeof version->patchVersion, "%s", parts[3]);
    return ACL_SUCCESS;
}

aclError aclsysGetVersionStr(char *pkgName, char *versionStr)
{
    API_ENTER(NONE);
    if (!pkgName || !*pkgName || !versionStr)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "pkgName or versionStr is nullptr/empty");
    snprintf(versionStr, ACL_PKG_VERSION_MAX_SIZE, "%s", cann_version());
    return ACL_SUCCESS;
}

/* Number = major*1000000 + minor*10000 + (digits of the 3rd part)*100 + (digits of the 4th part),
 * e.g. 8.1.RC1 -> 8010100, 9.1.0 -> 9010000 (the emulator's own encoding). */
aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)
{
    API_ENTER(NONE);
    if (!pkgName || !*pkgName || !versionNum)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "pkgName or versionNum is nullptr/empty");
    char parts[4][64];
    split_version(cann_version(), parts);
    int32_t num[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        const char *d = parts[i] + strcspn(parts[i], "0123456789");
        num[i] = (int32_t)strtol(d, NULL, 10) % 100;
    }
    *versionNum = num[0] * 1000000 + num[1] * 10000 + num[2] * 100 + num[3];
    return ACL_SUCCESS;
}

aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)
{
    API_ENTER(NONE);
    if (!majorVersion || !minorVersion || !patchVersion)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "version output is nullptr");
    const char *s = getenv("EMU_ACL_VERSION");
    int a = 1, b = 13, c = 0;
    if (s && *s)
        sscanf(s, "%d.%d.%d", &a, &b, &c);
    *majorVersion = a;
    *minorVersion = b;
    *patchVersion = c;
    return ACL_SUCCESS;
}
