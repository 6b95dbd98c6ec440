/*
 * emu_runtime.c - libascendcl.so / libacl_rt.so of the emulator.
 *
 * Exports every function of headers/acl_base.h and headers/acl_rt.h, plus the control API used
 * by the tests (emu_live, emu_calls, emu_misuse, emu_fail, ...), plus the internal glue that
 * libnnopbase and libopapi call (emu_enter, emu_error, the handle registry, ...).
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
#define EMU_MAX_DEVICES 64
#define EMU_ERR_MAX 8192                /* recent error text kept per thread (older text dropped) */
#define EMU_DEVICE_MEM_TOTAL (64ull << 30)

/* ========================================================================================== */
/* Locking                                                                                     */
/* ========================================================================================== */
static pthread_mutex_t g_mu;
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
static int64_t g_live[EMU_K_COUNT];
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
/* Call counters and fault injection                                                           */
/* ========================================================================================== */
typedef struct counter {
    char *name;
    int64_t n;
    struct counter *next;
} counter;

typedef struct fault {
    char *name;
    int status;
    int64_t skip;                         /* calls still to let through */
    int64_t times;                        /* failures still to inject; < 0 = forever */
    struct fault *next;
} fault;

#define CALL_BUCKETS 512
static counter *g_calls[CALL_BUCKETS];
static fault *g_faults;
static int64_t g_misuse;
static char g_last_misuse[512];

static size_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)(h & (CALL_BUCKETS - 1));
}

static counter *counter_get(const char *name, int create)
{
    size_t h = str_hash(name);
    for (counter *c = g_calls[h]; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c;
    if (!create)
        return NULL;
    counter *c = calloc(1, sizeof *c);
    if (!c || !(c->name = strdup(name)))
        abort();
    c->next = g_calls[h];
    g_calls[h] = c;
    return c;
}

/* ========================================================================================== */
/* Thread-local error state                                                                    */
/* ========================================================================================== */
static __thread char t_err[EMU_ERR_MAX];      /* accumulated, not yet read */
static __thread size_t t_err_len;
static __thread char t_err_out[EMU_ERR_MAX];  /* what aclGetRecentErrMsg returns: every read's */
                                              /* new text, newest first; never cleared */
static __thread int t_last_error;             /* aclrtGetLastError / aclrtPeekAtLastError */

static const char *err_code_for(int status)
{
    if (status >= 161000 && status < 162000)
        return "EZ1001";                      /* aclnn parameter error */
    if (status >= 561000 && status < 562000)
        return "EZ9999";                      /* aclnn inner error */
    if (status >= 361000 && status < 362000)
        return "EZ9903";
    if (status >= 100000 && status < 200000)
        return "EH0001";                      /* acl / runtime parameter error */
    return "EE9999";
}

static void err_vappend(int status, const char *func, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "%s: %s: ", err_code_for(status), func);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof line)
        vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    size_t len = strlen(line);
    /* messages pile up until read (as in CANN); keep the newest text when the buffer is full */
    if (t_err_len + len + 2 >= EMU_ERR_MAX) {
        t_err_len = 0;
        t_err[0] = 0;
    }
    if (t_err_len)
        t_err[t_err_len++] = '\n';
    memcpy(t_err + t_err_len, line, len + 1);
    t_err_len += len;
    t_last_error = status;
}

EMU_EXPORT int emu_error(int status, const char *func, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vappend(status, func, fmt, ap);
    va_end(ap);
    return status;
}

EMU_EXPORT void emu_note_misuse(const char *func, const char *fmt, ...)
{
    char text[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    emu_lock();
    g_misuse++;
    snprintf(g_last_misuse, sizeof g_last_misuse, "%s: %s", func, text);
    emu_unlock();
}

EMU_EXPORT int emu_enter(const char *func)
{
    int status = 0;
    emu_lock();
    counter_get(func, 1)->n++;
    for (fault *f = g_faults; f; f = f->next) {
        if (strcmp(f->name, func) != 0)
            continue;
        if (f->skip > 0) {
            f->skip--;
        } else if (f->times != 0) {
            if (f->times > 0)
                f->times--;
            /* status 0 (natural for pointer-returning functions) still has to fail the call */
            status = f->status ? f->status : ACL_ERROR_FAILURE;
        }
        break;
    }
    emu_unlock();
    if (status)
        emu_error(status, func, "injected failure (emu_fail), status %d", status);
    return status;
}

/* ========================================================================================== */
/* Global runtime state                                                                        */
/* ========================================================================================== */
typedef struct emu_ctx {
    uint32_t magic;
    uint64_t id;                              /* unique, never reused */
    int32_t device;
    int is_default;                           /* created by aclrtSetDevice, not by the user */
    struct emu_stream *dflt;                  /* its default stream: what a NULL stream means */
} emu_ctx;

/* One unit of queued stream work (see "Stream queues" below). */
enum { T_KERNEL, T_COPY, T_MEMSET, T_RECORD, T_WAIT };
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
} emu_event;

typedef struct alloc_rec {
    char *p;
    size_t size;                              /* bytes asked for */
    size_t block;                             /* bytes the device really has there (see padded_size) */
    char *alias;                              /* device memory: the host's private mapping of it */
    size_t map;                               /* device memory: length of both mappings */
} alloc_rec;

typedef struct alloc_table {
    alloc_rec *v;
    size_t n, cap;
    uint64_t bytes;
} alloc_table;

static int g_initialized;
static int64_t g_init_refs;                   /* aclInit calls since the last finalize */
static uint64_t g_next_id = 1;
static emu_ctx *g_default_ctx[EMU_MAX_DEVICES];
static int64_t g_dev_refs[EMU_MAX_DEVICES];
static int g_dev_override = -1;               /* emu_set_device_count */
static alloc_table g_dev_mem, g_host_mem;

static emu_stream *g_streams;                 /* live streams (created, not destroyed; default ones too) */
/* A device page fault poisons the device until it is reset (see "Sticky page faults"). */
static int g_dev_fault[EMU_MAX_DEVICES];
static char *g_dev_msg[EMU_MAX_DEVICES];      /* device error message not yet fetched (malloc'd) */
static char g_dev_event[EMU_MAX_DEVICES][160];  /* the device's active fault event ("" = none) */

static __thread emu_ctx *t_ctx;               /* current context of this thread */
static __thread uint64_t t_ctx_id;

static int device_count(void)
{
    int n = EMU_DEFAULT_DEVICE_COUNT;
    if (g_dev_override >= 0) {
        n = g_dev_override;
    } else {
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
static emu_ctx *cur_ctx(void)
{
    if (!t_ctx || emu_reg_kind(t_ctx) != EMU_K_CONTEXT || t_ctx->id != t_ctx_id)
        return NULL;
    return t_ctx;
}

static void set_cur_ctx(emu_ctx *c)
{
    t_ctx = c;
    t_ctx_id = c ? c->id : 0;
}

/* A context with its default stream: the stream a NULL stream handle means (hicann/runtime
 * context.cc Context::Setup creates defaultStream_; api_impl.cc ApiImpl::MemcpyAsync, MemsetAsync,
 * EventRecord, LaunchKernel and CheckStreamSynchronizeParam take curCtx->DefaultStream_() for
 * NULL). It is an ordinary asynchronous stream: work queued on it runs later, like on any other.
 * It is listed in g_streams but is no handle (the caller never sees its address). Lock held. */
static emu_ctx *ctx_new(int32_t device, int is_default)
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
    emu_reg_add(EMU_K_CONTEXT, c);
    return c;
}

#define NEED_INIT(func)                                                                   \
    do {                                                                                  \
        if (!g_initialized)                                                               \
            return emu_error(ACL_ERROR_UNINITIALIZE, func, "acl is not initialized (call aclInit first)"); \
    } while (0)

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
static int ctx_error(int st, const char *func)
{
    if (st == ACL_ERROR_UNINITIALIZE)
        return emu_error(st, func, "acl is not initialized (call aclInit first)");
    return emu_error(st, func, "no current context in this thread (call aclrtSetDevice or aclrtSetCurrentContext in this thread first)");
}

#define NEED_CTX(func)                                                                    \
    do {                                                                                  \
        int st_ = emu_need_context();                                                     \
        if (st_)                                                                          \
            return ctx_error(st_, func);                                                  \
    } while (0)

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

/* ---- allocation tables ---- */
static int table_add(alloc_table *t, void *p, size_t size, size_t block, char *alias, size_t map)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        alloc_rec *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return -1;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n].p = p;
    t->v[t->n].size = size;
    t->v[t->n].block = block;
    t->v[t->n].alias = alias;
    t->v[t->n].map = map;
    t->n++;
    t->bytes += size;
    return 0;
}

/* Index of the allocation starting exactly at p, or -1. */
static long table_find(const alloc_table *t, const void *p)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].p == p)
            return (long)i;
    return -1;
}

static void table_remove(alloc_table *t, size_t i)
{
    t->bytes -= t->v[i].size;
    t->v[i] = t->v[--t->n];
}

/* 1 when [p, p+bytes) is inside one allocation of the table. */
static int table_contains(const alloc_table *t, const void *p, uint64_t bytes)
{
    const char *c = p;
    for (size_t i = 0; i < t->n; i++) {
        const char *b = t->v[i].p;
        if (c >= b && c <= b + t->v[i].size && bytes <= (uint64_t)(b + t->v[i].size - c))
            return 1;
    }
    return 0;
}

EMU_EXPORT int emu_device_range_ok(const void *p, uint64_t bytes)
{
    emu_lock();
    int ok = p && table_contains(&g_dev_mem, p, bytes);
    emu_unlock();
    return ok;
}

/* 1 when [p, p+bytes) is inside the block of one allocation of the table (see padded_size). */
static int table_block_contains(const alloc_table *t, const void *p, uint64_t bytes)
{
    const char *c = p;
    for (size_t i = 0; i < t->n; i++) {
        const char *b = t->v[i].p;
        if (c >= b && c <= b + t->v[i].block && bytes <= (uint64_t)(b + t->v[i].block - c))
            return 1;
    }
    return 0;
}

/* What a kernel may touch without a page fault: the whole block the runtime allocated, bytes past
 * the ones asked for included (a device has no finer protection; they hold garbage). */
EMU_EXPORT int emu_device_block_ok(const void *p, uint64_t bytes)
{
    emu_lock();
    int ok = p && table_block_contains(&g_dev_mem, p, bytes);
    emu_unlock();
    return ok;
}

static int malloc_fill_byte(void)
{
    const char *s = getenv("EMU_MALLOC_FILL");
    if (s && *s)
        return (int)(strtol(s, NULL, 0) & 0xff);
    return 0xff;                              /* 0xffffffff is a NaN for f32/f16/bf16 */
}

/* ========================================================================================== */
/* Stream queues                                                                               */
/* ========================================================================================== */
/*
 * Streams are asynchronous, as in CANN: phase 2 of an operator (aclnnXxx), aclrtMemcpyAsync,
 * aclrtMemsetAsync, aclrtRecordEvent and aclrtStreamWaitEvent only queue a task on the stream
 * (hicann/runtime src/runtime/api/impl/api_impl.cc: the launch APIs submit a task to the stream's
 * queue and return; dev guide docs/zh/dev_guide/03-02_stream_management.md: "Stream ... tasks
 * execute asynchronously"). The queued work runs
 *  - at aclrtSynchronizeStream (that stream), aclrtSynchronizeDevice (every stream of the current
 *    context), aclrtSynchronizeEvent (the recording stream, up to the record), aclrtDestroyStream
 *    (which waits for the queued tasks: 03-02_stream_management.md "if the stream has unfinished
 *    tasks, destroying it waits for them to complete"; context.cc Context::TearDownOwnedStream
 *    flushes the pending tasks), aclrtResetDevice when the default context dies, aclFinalize;
 *  - and, with EMU_STREAM_MODE=worker, on a background "device" thread at any later time.
 * EMU_STREAM_MODE=deferred (the default) runs work only at those points: deterministic, and the
 * harshest schedule for a caller that forgets to synchronize.
 *
 * Memory: aclrtFree frees at once and never waits for queued work (api_impl.cc ApiImpl::DevFree
 * -> DevFreeStatic -> Driver::DevMemFree, no stream synchronisation), and aclrtMemcpy / aclrtMemset
 * do no implicit stream synchronisation (api_c.cc rtMemcpy -> ApiImpl::MemCopySync ->
 * Driver::MemCopySync). The emulator makes such races loud:
 *  - aclrtFree/aclrtFreeHost of memory a queued task still uses: misuse; the block is filled with
 *    EMU_POISON and kept aside (not reused) until the queues are empty;
 *  - a queued task whose memory was freed when it runs: misuse, and the task does nothing;
 *  - aclrtMemcpy/aclrtMemset writing memory a queued task uses, or reading memory a queued task
 *    writes: misuse (the host would see or clobber data the device has not finished with).
 * A stream holds at most EMU_QUEUE_DEPTH tasks (default 1024): beyond that, the oldest run at
 * submission, as a device would have run them by then.
 * A kernel failing when it runs leaves its status on the stream; the next synchronisation of the
 * stream returns it. The NULL stream is the current context's default stream, queued like any other.
 * All queue state is guarded by the global lock; a task runs with the lock held.
 */
#define EMU_POISON 0xa5
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int64_t g_queued;                      /* tasks queued over all streams */
static int g_stream_mode_override;            /* emu_set_stream_mode: 0 = EMU_STREAM_MODE */
static pthread_cond_t g_work_cv = PTHREAD_COND_INITIALIZER;
static pthread_once_t g_worker_once = PTHREAD_ONCE_INIT;

typedef struct grave {                        /* memory freed while queued work used it */
    void *p;
    char *alias;                              /* device memory: its alias (else NULL: malloc'd) */
    size_t map;
    struct grave *next;
} grave;
static grave *g_graves;

enum { MODE_DEFERRED = 1, MODE_WORKER = 2 };

/* EMU_STREAM_MODE and EMU_QUEUE_DEPTH are read once, at the first launch (every launch reads
 * them: getenv would be a noticeable part of the emulator's per-launch cost). */
static int g_env_mode;
static int64_t g_env_depth;
static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;

static void read_stream_env(void)
{
    const char *s = getenv("EMU_STREAM_MODE");
    g_env_mode = (s && strcmp(s, "worker") == 0) ? MODE_WORKER : MODE_DEFERRED;
    s = getenv("EMU_QUEUE_DEPTH");
    long v = (s && *s) ? strtol(s, NULL, 10) : 0;
    g_env_depth = v > 0 ? v : 1024;
}

static int stream_mode(void)
{
    if (g_stream_mode_override)
        return g_stream_mode_override;
    pthread_once(&g_env_once, read_stream_env);
    return g_env_mode;
}

static int64_t queue_depth(void)
{
    pthread_once(&g_env_once, read_stream_env);
    return g_env_depth;
}

static int ranges_overlap(const char *a, uint64_t an, const char *b, uint64_t bn)
{
    return a < b + bn && b < a + an;
}

/* The first queued task (and its stream) that touches [p, p+n): any use when `writes`, else only a
 * task that writes it. Lock held. */
static emu_task *queued_user(const void *p, uint64_t n, int writes, emu_stream **on)
{
    for (emu_stream *s = g_streams; s; s = s->next_live)
        for (emu_task *t = s->head; t; t = t->next)
            for (int i = 0; i < t->nranges; i++)
                if ((writes || t->ranges[i].writes) && ranges_overlap(p, n, t->ranges[i].p, t->ranges[i].n)) {
                    *on = s;
                    return t;
                }
    return NULL;
}

/* Misuse when a synchronous host access of [p, p+n) races with queued work. Lock not needed. */
static void check_host_access(const char *func, const void *p, uint64_t n, int writes)
{
    if (!p || !n)
        return;
    emu_lock();
    emu_stream *s = NULL;
    emu_task *t = g_queued ? queued_user(p, n, writes, &s) : NULL;
    const char *api = t ? t->api : NULL;
    emu_unlock();
    if (t)
        emu_note_misuse(func, "%s [%p, +%llu bytes) while %s queued on stream %p still %s it (synchronize the stream first)",
                        writes ? "writes" : "reads", p, (unsigned long long)n, api, (void *)s,
                        writes ? "uses" : "writes");
}

static int range_live(const emu_range *r)
{
    return table_block_contains(&g_dev_mem, r->p, r->n) || table_contains(&g_host_mem, r->p, r->n);
}

/* Gives a block back: device memory's two mappings, or a malloc'd block. */
static void release_block(void *p, char *alias, size_t map)
{
    if (alias) {
        munmap(p, map);
        munmap(alias, map);
    } else {
        free(p);
    }
}

static void release_graves(void)
{
    while (g_graves) {
        grave *g = g_graves;
        g_graves = g->next;
        release_block(g->p, g->alias, g->map);
        free(g);
    }
}

static void drain_stream_until(emu_stream *s, const emu_event *e, uint64_t seq);

/* 1 for a stream that still exists: a live handle or a live context's default stream. Lock held. */
static int stream_live(const void *p)
{
    for (const emu_stream *s = g_streams; p && s; s = s->next_live)
        if (s == p)
            return 1;
    return 0;
}

/* ---- Sticky page faults ----
 * A kernel's access outside device memory is a page fault of the device (the only kernel fault
 * the emulator models: kernel_fault in emu_nnopbase.c). The runtime then puts every context of
 * the device into failure mode (hicann/runtime src/runtime/core/src/task/task_info/task_manager.cc
 * PrintErrorInfo: IsDevicePageFault -> ContextManage::SetGlobalFailureErr(devId,
 * RT_ERROR_TSFW_AICORE_EXCEPTION); context_manage.cc SetGlobalFailureErr sets each context's
 * failure error, its streams' status and the device status). From then on every synchronisation
 * (context.cc Context::CheckStatus: the device status) and every launch (Context::CheckTaskSend)
 * returns it, ACL_ERROR_RT_AICORE_EXCEPTION, not just the next one; synchronous copies and
 * memsets still run (api_impl.cc MemCopySync / MemSetSync only stop on RT_ERROR_DEVICE_TASK_ABORT).
 * It lasts until the device is released: the last aclrtResetDevice (or aclFinalize).
 * The device also leaves an error message (fetched by aclGetRecentErrMsg through rtGetDevMsg) and
 * an active fault event (rtGetFaultEvent), see aclGetRecentErrMsg. Lock held. */
static void device_page_fault(emu_stream *s, const emu_task *t)
{
    int d = s->device;
    if (d < 0 || d >= EMU_MAX_DEVICES)
        return;
    static uint64_t serial;
    char text[400];
    snprintf(text, sizeof text,
             "EZ9999: The error from device(chipId:%d, dieId:0), serial number is %llu, there is an aicore error "
             "exception: the kernel of %s accessed memory outside device allocations (page fault)",
             d, (unsigned long long)++serial, t->api);
    if (!g_dev_msg[d])
        g_dev_msg[d] = strdup(text);
    snprintf(g_dev_event[d], sizeof g_dev_event[d], "Fault diagnosis analysis: [0x80cd8008]AI Core page fault;");
    if (!g_dev_fault[d])
        g_dev_fault[d] = ACL_ERROR_RT_AICORE_EXCEPTION;
}

/* The device is released (its default context died): its failure mode ends. Lock held. */
static void device_clear_fault(int d)
{
    g_dev_fault[d] = 0;
    free(g_dev_msg[d]);
    g_dev_msg[d] = NULL;
    g_dev_event[d][0] = 0;
}

/* The sticky status of the device `stream` runs on (NULL: the current context's), 0 if healthy. */
static int emu_device_fault(const void *stream)
{
    emu_lock();
    const emu_stream *s = stream;
    emu_ctx *c = s ? NULL : cur_ctx();
    int d = s ? s->device : c ? c->device : -1;
    int st = (d >= 0 && d < EMU_MAX_DEVICES) ? g_dev_fault[d] : 0;
    emu_unlock();
    return st;
}

/* A launch on a faulted device fails (Context::CheckTaskSend), with the device status. */
static int launch_fault(const char *func, aclrtStream stream)
{
    int st = emu_device_fault(stream);
    if (st)
        return emu_error(st, func, "device is in failure mode since a kernel's page fault: reset the device "
                         "(aclrtResetDevice) to use it again");
    return 0;
}

/* Runs one task taken off stream `s`. Lock held. */
static void task_run(emu_stream *s, emu_task *t)
{
    for (int i = 0; i < t->nranges; i++)
        if (!range_live(&t->ranges[i])) {
            emu_note_misuse(t->api, "queued on stream %p, it ran after [%p, +%llu bytes) was freed (free after synchronize)",
                            (void *)s, (const void *)t->ranges[i].p, (unsigned long long)t->ranges[i].n);
            if (t->kind == T_KERNEL)
                free(t->exec);
            return;
        }
    switch (t->kind) {
    case T_KERNEL: {
        int st = t->exec->kernel(t->exec);
        if (st && !s->status)
            s->status = st;
        if (st == ACL_ERROR_RT_AICORE_EXCEPTION)
            device_page_fault(s, t);
        free(t->exec);
        break;
    }
    case T_COPY:
        memmove(t->dst, t->src, t->count);
        break;
    case T_MEMSET:
        memset(t->dst, t->value, t->count);
        break;
    case T_RECORD:
        if (emu_reg_kind(t->event) == EMU_K_EVENT) {
            emu_event *e = t->event;
            if (t->seq > e->done_seq)
                e->done_seq = t->seq;
            e->recorded = 1;
            e->ns = now_ns();
        }
        break;
    case T_WAIT:
        /* the awaited record runs first: its stream executes up to it */
        if (stream_live(t->wait_stream) && emu_reg_kind(t->event) == EMU_K_EVENT)
            drain_stream_until(t->wait_stream, t->event, t->seq);
        break;
    }
}

/* Pops and runs the oldest task of `s`; 0 when the queue is empty. Lock held. */
static int run_one(emu_stream *s)
{
    emu_task *t = s->head;
    if (!t)
        return 0;
    s->head = t->next;
    if (!s->head)
        s->tail = NULL;
    s->queued--;
    g_queued--;
    task_run(s, t);
    free(t);
    if (g_queued == 0)
        release_graves();
    return 1;
}

/* Runs `s` until event `e` has executed record `seq` (e NULL: until the queue is empty). */
static void drain_stream_until(emu_stream *s, const emu_event *e, uint64_t seq)
{
    while ((!e || e->done_seq < seq) && run_one(s))
        ;
}

static void drain_all(void)
{
    for (emu_stream *s = g_streams; s; s = s->next_live)
        drain_stream_until(s, NULL, 0);
}

/* EMU_STREAM_MODE=worker: one background thread plays the device, running the oldest task of
 * each stream in turn, a little later than it was queued (EMU_WORKER_DELAY_US, default 200). */
static void *worker_main(void *arg)
{
    (void)arg;
    const char *d = getenv("EMU_WORKER_DELAY_US");
    long delay_us = (d && *d) ? strtol(d, NULL, 10) : 200;
    emu_lock();
    for (;;) {
        int ran = 0;
        for (emu_stream *s = g_streams; s; s = s->next_live)
            ran |= run_one(s);
        if (!ran) {
            pthread_cond_wait(&g_work_cv, &g_mu);  /* the worker holds the lock exactly once */
            continue;
        }
        emu_unlock();
        if (delay_us > 0) {
            struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
        emu_lock();
    }
    return NULL;
}

static void worker_start(void)
{
    pthread_t th;
    if (pthread_create(&th, NULL, worker_main, NULL) == 0)
        pthread_detach(th);
}

static void range_add(emu_task *t, const void *p, uint64_t n, int writes)
{
    if (!p || !n || t->nranges >= EMU_TASK_RANGES)
        return;
    emu_lock();
    int tracked = table_contains(&g_dev_mem, p, n) || table_contains(&g_host_mem, p, n);
    emu_unlock();
    if (tracked)                              /* pageable host memory is not tracked */
        t->ranges[t->nranges++] = (emu_range){p, n, writes};
}

/* Queues `t` on `stream` (NULL: the current context's default stream). Takes ownership. */
static void task_submit(aclrtStream stream, emu_task *t)
{
    emu_lock();
    emu_stream *s = stream;
    if (!s) {
        /* NULL is the current context's default stream (hicann/runtime api_impl.cc: MemcpyAsync,
         * MemsetAsync, EventRecord, LaunchKernel take curCtx->DefaultStream_()), asynchronous
         * like any stream: the work is queued on it. Every caller has checked the context. */
        emu_ctx *c = cur_ctx();
        if (!c) {
            free(t);
            emu_unlock();
            return;
        }
        s = c->dflt;
    }
    if (s->tail)
        s->tail->next = t;
    else
        s->head = t;
    s->tail = t;
    s->queued++;
    g_queued++;
    /* A stream's queue is finite (EMU_QUEUE_DEPTH tasks, default 1024): the device has run the
     * oldest tasks by the time that many more were queued (CANN blocks a launch on a full task
     * queue until the device frees a slot). Keeps the memory of unsynchronized loops bounded. */
    while (s->queued > queue_depth())
        run_one(s);
    int worker = stream_mode() == MODE_WORKER;
    emu_unlock();
    if (worker) {
        pthread_once(&g_worker_once, worker_start);
        pthread_cond_signal(&g_work_cv);
    }
}

static emu_task *task_new(int kind, const char *api)
{
    emu_task *t = calloc(1, sizeof *t);
    if (t) {
        t->kind = kind;
        t->api = api;
    }
    return t;
}

/* For libnnopbase's phase 2: queue the kernel of `e` (a private copy, now owned by the queue) on
 * `stream`; `ranges` are the device bytes it touches. ACLNN_ERR_INNER when out of memory. */
EMU_EXPORT int emu_enqueue_kernel(void *stream, const char *api, aclOpExecutor *e, const void *const *lo,
                                  const uint64_t *len, const int *writes, int n)
{
    /* the kernel launch (aclrtLaunchKernelWithHostArgs) on a device in failure mode fails
     * (Context::CheckTaskSend), which opbase reports as ACLNN_ERR_RUNTIME_ERROR (opbase
     * src/nnopbase/composite_op/aclnn_engine/rts_arg.cpp: CHECK_COND(rc == ACL_SUCCESS, ...)) */
    int fault = emu_device_fault(stream);
    if (fault) {
        free(e);
        return emu_error(ACLNN_ERR_RUNTIME_ERROR, api, "aclrtLaunchKernelWithHostArgs failed, return: %d (the device "
                         "is in failure mode since a kernel's page fault: reset it with aclrtResetDevice)", fault);
    }
    emu_task *t = task_new(T_KERNEL, api);
    if (!t) {
        free(e);
        return emu_error(ACLNN_ERR_INNER, api, "out of memory");
    }
    t->exec = e;
    for (int i = 0; i < n && i < EMU_TASK_RANGES; i++)   /* phase 2 checked they are device memory */
        t->ranges[t->nranges++] = (emu_range){lo[i], len[i], writes[i]};
    task_submit(stream, t);
    return 0;
}

/* A context dies: its default stream finishes its queued work (context.cc Context::TearDown ->
 * TearDownContextStream) and goes with it. Lock held. */
static void ctx_release(emu_ctx *c)
{
    emu_stream *d = c->dflt;
    if (d) {
        drain_stream_until(d, NULL, 0);
        for (emu_stream **pp = &g_streams; *pp; pp = &(*pp)->next_live)
            if (*pp == d) {
                *pp = d->next_live;
                break;
            }
        free(d);
        c->dflt = NULL;
    }
    emu_reg_release(EMU_K_CONTEXT, c);
}

/* Tasks still queued (all streams), for emu_live("queued"). */
static int64_t queued_tasks(void) { return g_queued; }

/* 1 = deferred, 2 = worker, 0 = back to EMU_STREAM_MODE (default deferred). */
EMU_EXPORT void emu_set_stream_mode(int mode)
{
    emu_lock();
    g_stream_mode_override = (mode == MODE_DEFERRED || mode == MODE_WORKER) ? mode : 0;
    emu_unlock();
}

/* ========================================================================================== */
/* Control API (for tests)                                                                     */
/* ========================================================================================== */
static const char *const g_kind_names[EMU_K_COUNT] = {
    [EMU_K_TENSOR] = "tensor",           [EMU_K_SCALAR] = "scalar",
    [EMU_K_INT_ARRAY] = "int_array",     [EMU_K_FLOAT_ARRAY] = "float_array",
    [EMU_K_BOOL_ARRAY] = "bool_array",   [EMU_K_TENSOR_LIST] = "tensor_list",
    [EMU_K_SCALAR_LIST] = "scalar_list", [EMU_K_EXECUTOR] = "executor",
    [EMU_K_STREAM] = "stream",           [EMU_K_EVENT] = "event",
    [EMU_K_CONTEXT] = "context",
};

/* Live objects of a kind; -1 for an unknown kind name. */
EMU_EXPORT int64_t emu_live(const char *kind)
{
    int64_t v = -1;
    if (!kind)
        return -1;
    emu_lock();
    for (int k = 1; k < EMU_K_COUNT; k++)
        if (strcmp(kind, g_kind_names[k]) == 0)
            v = g_live[k];
    if (strcmp(kind, "device_alloc") == 0)
        v = (int64_t)g_dev_mem.n;
    else if (strcmp(kind, "device_bytes") == 0)
        v = (int64_t)g_dev_mem.bytes;
    else if (strcmp(kind, "host_alloc") == 0)
        v = (int64_t)g_host_mem.n;
    else if (strcmp(kind, "host_bytes") == 0)
        v = (int64_t)g_host_mem.bytes;
    else if (strcmp(kind, "device_set") == 0) {
        v = 0;
        for (int d = 0; d < EMU_MAX_DEVICES; d++)
            v += g_dev_refs[d];
    } else if (strcmp(kind, "init") == 0)
        v = g_initialized;
    else if (strcmp(kind, "queued") == 0)
        v = queued_tasks();
    emu_unlock();
    return v;
}

EMU_EXPORT int64_t emu_calls(const char *func)
{
    if (!func)
        return 0;
    emu_lock();
    counter *c = counter_get(func, 0);
    int64_t n = c ? c->n : 0;
    emu_unlock();
    return n;
}

EMU_EXPORT int64_t emu_misuse(void)
{
    emu_lock();
    int64_t n = g_misuse;
    emu_unlock();
    return n;
}

/* Description of the latest misuse ("" when none since the last emu_reset_counters). */
EMU_EXPORT const char *emu_last_misuse(void) { return g_last_misuse; }

/* Arm a fault: the next `skip` calls of `func` pass, then `times` calls fail with `status`
 * (times < 0: every call from then on; times == 0: disarm). Replaces an earlier fault on func.
 * Pointer-returning functions return NULL instead; status 0 means ACL_ERROR_FAILURE (500001). */
EMU_EXPORT void emu_fail(const char *func, int status, int skip, int times)
{
    if (!func)
        return;
    emu_lock();
    fault **pp = &g_faults;
    while (*pp && strcmp((*pp)->name, func) != 0)
        pp = &(*pp)->next;
    if (!*pp) {
        fault *f = calloc(1, sizeof *f);
        if (!f || !(f->name = strdup(func)))
            abort();
        *pp = f;
    }
    (*pp)->status = status;
    (*pp)->skip = skip < 0 ? 0 : skip;
    (*pp)->times = times;
    emu_unlock();
}

EMU_EXPORT void emu_reset_faults(void)
{
    emu_lock();
    while (g_faults) {
        fault *f = g_faults;
        g_faults = f->next;
        free(f->name);
        free(f);
    }
    emu_unlock();
}

/* Zero the call counters and the misuse count (live counts reflect real state: untouched). */
EMU_EXPORT void emu_reset_counters(void)
{
    emu_lock();
    for (size_t i = 0; i < CALL_BUCKETS; i++)
        for (counter *c = g_calls[i]; c; c = c->next)
            c->n = 0;
    g_misuse = 0;
    g_last_misuse[0] = 0;
    emu_unlock();
}

/* n >= 0: pretend to have n devices (overrides EMU_DEVICE_COUNT); n < 0: back to the env/default. */
EMU_EXPORT void emu_set_device_count(int n)
{
    emu_lock();
    g_dev_override = n < 0 ? -1 : n;
    emu_unlock();
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
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!value)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "value is nullptr");
    if ((int64_t)deviceId >= device_count())
        return emu_error(ACL_ERROR_RT_INVALID_DEVICEID, __func__, "device id %u is invalid (device count %d)", deviceId, device_count());
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
/* Finalize: all devices are reset (their default contexts die). User-created contexts, streams,
 * events and allocations are NOT released, so a leak stays visible in emu_live. Lock held. */
static void finalize_locked(void)
{
    drain_all();                              /* the devices finish their queued work */
    g_initialized = 0;
    g_init_refs = 0;
    for (int d = 0; d < EMU_MAX_DEVICES; d++) {
        if (g_default_ctx[d])
            ctx_release(g_default_ctx[d]);
        g_default_ctx[d] = NULL;
        g_dev_refs[d] = 0;
        device_clear_fault(d);
    }
}

aclError aclInit(const char *configPath)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    if (configPath && *configPath) {
        FILE *f = fopen(configPath, "r");
        if (!f)
            return emu_error(ACL_ERROR_INVALID_FILE, __func__, "cannot open config file %s", configPath);
        fclose(f);
    }
    emu_lock();
    if (g_initialized) {
        g_init_refs++;
        emu_unlock();
        t_last_error = ACL_ERROR_REPEAT_INITIALIZE;   /* no error text: CANN says "ignorable" */
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
    int st = emu_enter(__func__);
    if (st)
        return st;
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
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    if (!g_initialized) {
        emu_unlock();
        return emu_error(ACL_ERROR_REPEAT_FINALIZE, __func__, "acl is not initialized or already finalized");
    }
    if (--g_init_refs <= 0)
        finalize_locked();
    if (refCount)
        *refCount = (uint64_t)(g_init_refs < 0 ? 0 : g_init_refs);
    emu_unlock();
    return ACL_SUCCESS;
}

/* Returns and clears this thread's accumulated error text; NULL when there is none. The pointer
 * stays valid until the next aclGetRecentErrMsg call in the same thread. */
/* hicann/runtime src/acl/aclrt_impl/acl.cpp aclGetRecentErrMsgImpl: the error manager's text
 * since the last read (cleared by that read: error_manager.cc GetErrorMessage) is PREPENDED to the
 * thread_local aclRecentErrMsg, which is never cleared: "new\nolder\n...", newest first, and a
 * read with nothing new returns the previous text again (NULL only before any error).
 * aclRecentErrMsg is a std::string: the real text is never cut, so it is always the new text, then
 * "\n" and exactly what the previous read returned. The emulator's buffer is bounded: when the
 * previous text no longer fits whole after the new text it is dropped whole, never cut (a cut
 * tail is a text no CANN returns, and a binding that strips what it saw could not find it). */
/* Before the host text, the same function asks the device of the thread's current context:
 *  1. rtGetDevMsg(RT_GET_DEV_ERROR_MSG, aclGetMsgCallback): a device error message not yet fetched
 *     REPLACES the thread's text (the callback does aclRecentErrMsg.assign(msg));
 *  2. GetFaultEventInfo (rtGetDevice + rtGetFaultEvent): the device's fault events, as
 *     "Fault diagnosis analysis: [0x<id>]<name>;", are APPENDED ("\n" + text) at every read while
 *     they are active (the emulator: until the device is reset);
 *  3. only then the host text is prepended as above.
 * Both come from a page fault here ("Sticky page faults"); a thread without a current context
 * gets neither (rtGetDevice fails). */
static void fetch_device_text(void)
{
    char *msg = NULL;
    char event[sizeof g_dev_event[0]] = "";
    emu_lock();
    emu_ctx *c = g_initialized ? cur_ctx() : NULL;
    if (c && c->device >= 0 && c->device < EMU_MAX_DEVICES) {
        msg = g_dev_msg[c->device];
        g_dev_msg[c->device] = NULL;
        memcpy(event, g_dev_event[c->device], sizeof event);
    }
    emu_unlock();
    if (msg) {
        snprintf(t_err_out, EMU_ERR_MAX, "%s", msg);
        free(msg);
    }
    if (event[0]) {
        size_t n = strlen(t_err_out), e = strlen(event);
        if (n && n + 1 + e < EMU_ERR_MAX) {   /* bounded: older text dropped whole, as above */
            t_err_out[n] = '\n';
            memcpy(t_err_out + n + 1, event, e + 1);
        } else {
            memcpy(t_err_out, event, e + 1);
        }
    }
}

const char *aclGetRecentErrMsg(void)
{
    if (emu_enter(__func__)) {
        return NULL;                          /* an injected failure: NULL, text kept for later */
    }
    fetch_device_text();
    if (t_err_len == 0)
        return t_err_out[0] ? t_err_out : NULL;
    size_t old = strlen(t_err_out);
    size_t keep = (old && t_err_len + 1 + old < EMU_ERR_MAX) ? old : 0;  /* all or nothing */
    memmove(t_err_out + t_err_len + (keep ? 1 : 0), t_err_out, keep);
    t_err_out[t_err_len + (keep ? 1 : 0) + keep] = 0;
    memcpy(t_err_out, t_err, t_err_len);
    if (keep)
        t_err_out[t_err_len] = '\n';
    t_err_len = 0;
    t_err[0] = 0;
    return t_err_out;
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
    int st = emu_enter(__func__);
    if (st)
        return st;
    if (!version)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "version is nullptr");
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
    int st = emu_enter(__func__);
    if (st)
        return st;
    if (!pkgName || !*pkgName || !versionStr)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "pkgName or versionStr is nullptr/empty");
    snprintf(versionStr, ACL_PKG_VERSION_MAX_SIZE, "%s", cann_version());
    return ACL_SUCCESS;
}

/* Number = major*1000000 + minor*10000 + (digits of the 3rd part)*100 + (digits of the 4th part),
 * e.g. 8.1.RC1 -> 8010100, 9.1.0 -> 9010000 (the emulator's own encoding). */
aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
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
    int st = emu_enter(__func__);
    if (st)
        return st;
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

aclError aclrtGetLastError(aclrtLastErrLevel level)
{
    (void)level;
    emu_enter(__func__);
    int e = t_last_error;
    t_last_error = 0;
    return e;
}

aclError aclrtPeekAtLastError(aclrtLastErrLevel level)
{
    (void)level;
    emu_enter(__func__);
    return t_last_error;
}

/* ========================================================================================== */
/* Devices and contexts                                                                        */
/* ========================================================================================== */
aclError aclrtGetDeviceCount(uint32_t *count)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!count)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "count is nullptr");
    *count = (uint32_t)device_count();        /* 0 in the no-driver ("stub") mode, status 0 */
    return ACL_SUCCESS;
}

static int check_device_id(const char *func, int32_t deviceId)
{
    int n = device_count();
    if (n == 0)
        return emu_error(ACL_ERROR_RT_NO_DEVICE, func, "no device (driver not installed)");
    if (deviceId < 0 || deviceId >= n)
        return emu_error(ACL_ERROR_RT_INVALID_DEVICEID, func, "device id %d is invalid (device count %d)", (int)deviceId, n);
    return 0;
}

aclError aclrtSetDevice(int32_t deviceId)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if ((st = check_device_id(__func__, deviceId)))
        return st;
    emu_lock();
    if (!g_default_ctx[deviceId] && !(g_default_ctx[deviceId] = ctx_new(deviceId, 1))) {
        emu_unlock();
        return emu_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, __func__, "out of memory");
    }
    g_dev_refs[deviceId]++;
    set_cur_ctx(g_default_ctx[deviceId]);
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if ((st = check_device_id(__func__, deviceId)))
        return st;
    emu_lock();
    if (g_dev_refs[deviceId] == 0) {
        /* hicann/runtime runtime.cc Runtime::PrimaryContextRelease: no reference left to drop
         * (DecideOrdinaryPrimaryReleaseAction: TryDecRef fails) -> RT_ERROR_CONTEXT_DEL, which
         * errcode_manage.cc maps to ACL_ERROR_RT_CONTEXT_RELEASE_ERROR (aclrtResetDeviceImpl
         * returns it through ACL_REQUIRES_RTS_OK) */
        emu_unlock();
        emu_note_misuse(__func__, "device %d reset more often than set", (int)deviceId);
        return emu_error(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, __func__,
                         "PrimaryContextRelease failed, device %d: reset more often than set (aclrtSetDevice)",
                         (int)deviceId);
    }
    if (--g_dev_refs[deviceId] == 0) {
        /* the default context dies (its streams finish their queued work first: Context teardown
         * in context.cc TearDownOwnedStreamsForPrimaryRelease); threads still pointing at it now
         * have no context; the device is released, and with it a page fault's failure mode */
        for (emu_stream *s = g_streams; s; s = s->next_live)
            if (s->ctx == g_default_ctx[deviceId])
                drain_stream_until(s, NULL, 0);
        ctx_release(g_default_ctx[deviceId]);
        g_default_ctx[deviceId] = NULL;
        device_clear_fault(deviceId);
    }
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t *deviceId)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_CTX(__func__);
    if (!deviceId)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "deviceId is nullptr");
    emu_lock();
    emu_ctx *c = cur_ctx();
    *deviceId = c ? c->device : 0;
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!runMode)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "runMode is nullptr");
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!context)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "context is nullptr");
    if ((st = check_device_id(__func__, deviceId)))
        return st;
    emu_lock();
    emu_ctx *c = ctx_new(deviceId, 0);
    if (c)
        set_cur_ctx(c);                       /* a new context becomes the thread's current one */
    emu_unlock();
    if (!c)
        return emu_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, __func__, "out of memory");
    *context = c;
    return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!context)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "context is nullptr");
    emu_lock();
    if (emu_reg_kind(context) != EMU_K_CONTEXT) {
        emu_unlock();
        emu_note_misuse(__func__, "unknown or destroyed context %p", context);
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, __func__, "context %p is unknown or already destroyed", context);
    }
    if (((emu_ctx *)context)->is_default) {
        emu_unlock();
        emu_note_misuse(__func__, "default context %p destroyed by the user", context);
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, __func__, "context %p is a device's default context (use aclrtResetDevice)", context);
    }
    ctx_release(context);
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!context)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "context is nullptr");
    emu_lock();
    if (emu_reg_kind(context) != EMU_K_CONTEXT) {
        emu_unlock();
        emu_note_misuse(__func__, "unknown or destroyed context %p", context);
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, __func__, "context %p is unknown or already destroyed", context);
    }
    set_cur_ctx(context);
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!context)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "context is nullptr");
    emu_lock();
    emu_ctx *c = cur_ctx();
    emu_unlock();
    if (!c)
        return ctx_error(ACL_ERROR_RT_CONTEXT_NULL, __func__);
    *context = c;
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!value)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "value is nullptr");
    if ((st = check_device_id(__func__, (int32_t)deviceId)))
        return st;
    switch (attr) {
    case ACL_DEV_ATTR_AICPU_CORE_NUM: *value = 6; break;
    case ACL_DEV_ATTR_AICORE_CORE_NUM: *value = 20; break;
    case ACL_DEV_ATTR_CUBE_CORE_NUM: *value = 20; break;
    case ACL_DEV_ATTR_VECTOR_CORE_NUM: *value = 40; break;
    case ACL_DEV_ATTR_WARP_SIZE: *value = 32; break;
    case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE: *value = (int64_t)EMU_DEVICE_MEM_TOTAL; break;
    case ACL_DEV_ATTR_L2_CACHE_SIZE: *value = 192ll << 20; break;
    case ACL_DEV_ATTR_PHY_CHIP_ID: *value = deviceId; break;
    case ACL_DEV_ATTR_IS_VIRTUAL: *value = 0; break;
    default:
        return emu_error(ACL_ERROR_FEATURE_UNSUPPORTED, __func__, "attribute %d not supported", (int)attr);
    }
    return ACL_SUCCESS;
}

/* ========================================================================================== */
/* Streams                                                                                     */
/* ========================================================================================== */
aclError aclrtCreateStream(aclrtStream *stream)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_CTX(__func__);
    if (!stream)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "stream is nullptr");
    emu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return emu_error(ACL_ERROR_RT_NO_STREAM_RESOURCE, __func__, "out of memory");
    emu_lock();
    s->magic = 0x5354524du;
    s->ctx = cur_ctx();
    s->ctx_id = s->ctx ? s->ctx->id : 0;
    s->device = s->ctx ? s->ctx->device : -1;
    s->next_live = g_streams;
    g_streams = s;
    emu_reg_add(EMU_K_STREAM, s);
    emu_unlock();
    *stream = s;
    return ACL_SUCCESS;
}

/* A known stream (or NULL = default) for the non-launch calls; counts a misuse otherwise. */
static int known_stream(const char *func, aclrtStream stream)
{
    if (stream && emu_reg_kind(stream) != EMU_K_STREAM) {
        emu_note_misuse(func, "unknown or destroyed stream %p", stream);
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, func, "stream %p is unknown or already destroyed", stream);
    }
    return 0;
}

/* A stream that may take work from this thread (launches: copies, memsets, events, ops). */
static int launch_stream(const char *func, aclrtStream stream)
{
    int st = emu_check_stream(stream);
    if (st == ACL_ERROR_RT_PARAM_INVALID)
        return known_stream(func, stream);
    if (st)
        return emu_error(st, func, "stream %p does not belong to the current context of this thread", stream);
    return 0;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!stream)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "stream is nullptr");
    if ((st = known_stream(__func__, stream)))
        return st;
    /* ApiImpl::StreamDestroy (api_impl.cc): needs a current context (107002), and the stream must
     * belong to it (COND_RETURN_AND_MSG_INVALID_CONTEXT_STREAM_WITH_FUNC_DESC, 107003) */
    NEED_CTX(__func__);
    if ((st = launch_stream(__func__, stream)))
        return st;
    emu_lock();
    emu_stream *s = stream;
    drain_stream_until(s, NULL, 0);           /* destroying a stream waits for its tasks */
    for (emu_stream **pp = &g_streams; *pp; pp = &(*pp)->next_live)
        if (*pp == s) {
            *pp = s->next_live;
            break;
        }
    emu_reg_release(EMU_K_STREAM, stream);
    emu_unlock();
    return ACL_SUCCESS;
}

/* Runs the queue of a known stream (NULL: the current context's default one) and returns, then
 * clears, the status of the first of its tasks that failed since the last synchronisation; on a
 * device in failure mode, its status every time (Context::CheckStatus, "Sticky page faults"). */
static int sync_stream(const char *func, aclrtStream stream)
{
    emu_lock();
    int failed = 0;
    emu_stream *s = stream;
    if (!s) {                                 /* CheckStreamSynchronizeParam: curCtx->DefaultStream_() */
        emu_ctx *c = cur_ctx();
        s = c ? c->dflt : NULL;
    }
    if (s) {
        drain_stream_until(s, NULL, 0);
        failed = s->status;
        s->status = 0;
        if (s->device >= 0 && s->device < EMU_MAX_DEVICES && g_dev_fault[s->device])
            failed = g_dev_fault[s->device];
    }
    emu_unlock();
    if (failed)
        return emu_error(failed, func, "a task queued on stream %p failed with %d (see the messages above)", stream, failed);
    return 0;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_CTX(__func__);
    /* any current context will do: ApiImpl::StreamSynchronize switches to the stream's context */
    if ((st = known_stream(__func__, stream)))
        return st;
    return sync_stream(__func__, stream);
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_CTX(__func__);
    if (timeout < -1)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "timeout %d is invalid (-1 or >= 0)", (int)timeout);
    if ((st = known_stream(__func__, stream)))
        return st;
    return sync_stream(__func__, stream);     /* queued work always finishes in time here */
}

aclError aclrtSynchronizeDevice(void)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_CTX(__func__);
    /* every stream of the current context (Context::SyncStreamsWithTimeout in context.cc) */
    emu_lock();
    emu_ctx *c = cur_ctx();
    int failed = 0;                           /* its streams, the default one included */
    for (emu_stream *s = g_streams; s; s = s->next_live)
        if (s->ctx == c && s->ctx_id == c->id) {
            drain_stream_until(s, NULL, 0);
            if (s->status && !failed)
                failed = s->status;
            s->status = 0;
        }
    if (c->device >= 0 && c->device < EMU_MAX_DEVICES && g_dev_fault[c->device])
        failed = g_dev_fault[c->device];      /* Context::CheckStatus: the device status */
    emu_unlock();
    if (failed)
        return emu_error(failed, __func__, "a task queued on this context failed with %d (see the messages above)", failed);
    return ACL_SUCCESS;
}

/* ========================================================================================== */
/* Memory                                                                                      */
/* ========================================================================================== */
static int policy_ok(aclrtMemMallocPolicy policy)
{
    uint32_t p = (uint32_t)policy;
    uint32_t high = p & ~0xffu;
    return (p & 0xffu) <= 7u &&
           (high & ~(uint32_t)(ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH |
                               ACL_MEM_ACCESS_USER_SPACE_READONLY)) == 0;
}

/* The block aclrtMalloc really gets for `size` bytes: hicann/runtime src/acl/aclrt_impl/memory.cpp
 * aclMallocMemInner -> GetAlignedAndPaddingSize: (size + 32 + padding - 1) / 32 * 32, the padding
 * being the SoC's AICoreSpec padding_size (DATA_MEMORY_PADDING_SIZE, 32, by default), none for
 * the HUGE1G policies; ApiImpl::DevMalloc (api_impl.cc) then aligns it to 32 again. So 8 bytes
 * asked for are a 64-byte block: a kernel reading past the 8 bytes stays inside it and reads
 * garbage; no page fault. */
static size_t padded_size(size_t size, aclrtMemMallocPolicy policy)
{
    uint32_t low = (uint32_t)policy & 0xffu;
    int pad = low != ACL_MEM_MALLOC_HUGE1G_ONLY && low != ACL_MEM_MALLOC_HUGE1G_ONLY_P2P;
    return ((size + 31) & ~(size_t)31) + (pad ? 32 : 0);
}

/* ---- Device memory ----
 * On a device, aclrtMalloc memory is HBM: the host cannot load or store through a device address
 * (hicann/runtime api_impl.cc ApiImpl::DevMalloc -> Driver::DevMemAlloc, device memory; only
 * aclrtMemcpy/aclrtMemset and kernels reach it). The emulator maps each block twice from a memfd:
 * the address handed out is PROT_NONE, so a host read or write through it faults (SIGSEGV), and a
 * private read-write alias is what copies, memsets and kernels use (emu_host_alias). The
 * mappings are whole pages; the bytes past the block are no device memory all the same (the
 * range checks use the block). NULL when the system refuses (out of memory). */
static void *device_map(size_t block, char **alias, size_t *map)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t len = (block + (size_t)page - 1) / (size_t)page * (size_t)page;
    int fd = memfd_create("emu-device-memory", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    void *a = MAP_FAILED, *d = MAP_FAILED;
    if (ftruncate(fd, (off_t)len) == 0) {
        a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (a != MAP_FAILED)
            d = mmap(NULL, len, PROT_NONE, MAP_SHARED, fd, 0);
    }
    close(fd);                                /* the mappings keep the memory */
    if (d == MAP_FAILED) {
        if (a != MAP_FAILED)
            munmap(a, len);
        return NULL;
    }
    memset(a, malloc_fill_byte(), len);       /* "uninitialised" memory: NaN bytes by default */
    *alias = a;
    *map = len;
    return d;
}

/* Where the host reaches the device byte at `p`: `p` itself unless it lies in a device block
 * (then its alias). Copies, memsets and kernels go through this. */
EMU_EXPORT void *emu_host_alias(const void *p)
{
    const char *c = p;
    void *r = (void *)p;
    emu_lock();
    for (size_t i = 0; c && i < g_dev_mem.n; i++) {
        const alloc_rec *a = &g_dev_mem.v[i];
        if (c >= a->p && c < a->p + a->map) {
            r = a->alias + (c - a->p);
            break;
        }
    }
    emu_unlock();
    return r;
}

static void *aligned_alloc64(size_t size)
{
    void *p = NULL;
    size_t real = ((size + 31) & ~(size_t)31) + 32;   /* every block fits (padded_size) */
    if (posix_memalign(&p, 64, real) != 0)
        return NULL;
    memset(p, malloc_fill_byte(), real);      /* "uninitialised" memory: NaN bytes by default */
    return p;
}

/* The shared second half of aclrtMalloc / aclrtMallocHost, after their own argument checks:
 * allocate ``size`` bytes and record the block in ``t`` (``side``: "device" or "host"). */
static aclError alloc_tracked(const char *func, alloc_table *t, const char *side, size_t size, size_t block,
                              void **out)
{
    if (size > EMU_DEVICE_MEM_TOTAL)
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, func, "out of %s memory (%zu bytes requested)", side, size);
    char *alias = NULL;
    size_t map = 0;
    void *p = t == &g_dev_mem ? device_map(block, &alias, &map) : aligned_alloc64(size);
    if (!p)
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, func, "out of %s memory (%zu bytes requested)", side, size);
    emu_lock();
    int bad = table_add(t, p, size, block, alias, map);
    emu_unlock();
    if (bad) {
        release_block(p, alias, map);
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, func, "out of memory");
    }
    *out = p;
    return ACL_SUCCESS;
}

/* The shared second half of aclrtFree / aclrtFreeHost: forget a block recorded in ``t`` and free
 * it; an unknown pointer (a double free) is refused and counted as misuse. */
static aclError free_tracked(const char *func, alloc_table *t, const char *side, const char *allocator, void *ptr)
{
    emu_lock();
    long i = table_find(t, ptr);
    size_t size = i >= 0 ? t->v[i].block : 0;
    char *alias = i >= 0 ? t->v[i].alias : NULL;
    size_t map = i >= 0 ? t->v[i].map : 0;
    if (i >= 0)
        table_remove(t, (size_t)i);
    emu_stream *s = NULL;
    emu_task *user = i >= 0 && g_queued ? queued_user(ptr, size, 1, &s) : NULL;
    grave *g = user ? malloc(sizeof *g) : NULL;
    if (g) {                                  /* freed under queued work: poison, keep aside */
        memset(alias ? alias : ptr, EMU_POISON, size);
        g->p = ptr;
        g->alias = alias;
        g->map = map;
        g->next = g_graves;
        g_graves = g;
    }
    const char *api = user ? user->api : NULL;
    emu_unlock();
    if (i < 0) {
        emu_note_misuse(func, "free of unknown %s pointer %p (double free?)", side, ptr);
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, func, "%p is not an %s'd address (double free?)", ptr, allocator);
    }
    if (user)   /* CANN frees at once (ApiImpl::DevFree): the queued task would use freed memory */
        emu_note_misuse(func, "%s memory %p freed while %s queued on stream %p still uses it (synchronize first)",
                        side, ptr, api, (void *)s);
    if (!g && i >= 0)
        release_block(ptr, alias, map);
    return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    int st = emu_enter(__func__);
    if (st)
        return st;                            /* *devPtr untouched */
    NEED_INIT(__func__);
    if (!devPtr)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "devPtr is nullptr");
    if (size == 0)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "size must not be 0");
    if (!policy_ok(policy))
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "policy %d is invalid", (int)policy);
    NEED_CTX(__func__);
    return alloc_tracked(__func__, &g_dev_mem, "device", size, padded_size(size, policy), devPtr);
}

aclError aclrtFree(void *devPtr)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!devPtr)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "devPtr is nullptr");
    return free_tracked(__func__, &g_dev_mem, "device", "aclrtMalloc", devPtr);
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!hostPtr)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "hostPtr is nullptr");
    if (size == 0)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "size must not be 0");
    return alloc_tracked(__func__, &g_host_mem, "host", size, size, hostPtr);
}

aclError aclrtFreeHost(void *hostPtr)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!hostPtr)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "hostPtr is nullptr");
    return free_tracked(__func__, &g_host_mem, "host", "aclrtMallocHost", hostPtr);
}

/* ---- aclrtMemcpy(Async) / aclrtMemset(Async): the checks of each layer, in the real order ----
 *
 * 1. The acl layer (hicann/runtime src/acl/aclrt_impl/memory.cpp aclrtMemcpyImpl,
 *    aclrtMemcpyAsyncImpl, aclrtMemsetImpl, aclrtMemsetAsyncImpl; the C build
 *    src/acl/aclrt_c/runtime/memory.c alike): count 0 is a success before anything else is looked
 *    at; then a NULL pointer (ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT) and, for copies, the kind
 *    (MemcpyKindTranslate knows HOST_TO_HOST ... HOST_TO_BUF_TO_DEVICE only: INNER_ and
 *    INTER_DEVICE_TO_DEVICE are refused there), all ACL_ERROR_INVALID_PARAM. No context yet.
 * 2. The runtime's entry points (src/runtime/api/api_c.cc rtMemcpyAsync / rtMemsetAsync) validate
 *    the stream handle (RT_VALIDATE_AND_UNWRAP_OBJECT) before the parameter checks.
 * 3. The parameter checks of src/runtime/api/impl/api_error.cc (ApiErrorDecorator::MemCopySync,
 *    ::MemcpyAsync, ::MemsetAsync): cnt > destMax is RT_ERROR_INVALID_VALUE, which
 *    src/runtime/core/src/common/errcode_manage.cc maps to ACL_ERROR_RT_PARAM_INVALID (107000).
 *    ApiErrorDecorator::MemSetSync has no such check: for aclrtMemset it is the driver's
 *    (hicann/driver src/ascend_hal/svm/v2/devmm/devmm_svm.c drvMemsetD8Inner: dest_max < num ->
 *    DRV_ERROR_INVALID_VALUE -> RT_ERROR_DRV_INPUT -> 107000 too), after the context.
 * 4. Only then the current context (api_impl.cc ApiImpl::MemCopySync / MemcpyAsync / MemSetSync /
 *    MemsetAsync: CHECK_CONTEXT_VALID_WITH_RETURN -> ACL_ERROR_RT_CONTEXT_NULL), then the memory.
 */

/* Step 1. Returns -1 for count 0 (nothing to do: the call succeeds), else 0 or the status. */
static int acl_memcpy_checks(const char *func, const void *dst, const void *src, size_t count, aclrtMemcpyKind kind)
{
    if (count == 0)
        return -1;
    if (!dst || !src)
        return emu_error(ACL_ERROR_INVALID_PARAM, func, "%s is nullptr", !dst ? "dst" : "src");
    if ((int)kind < ACL_MEMCPY_HOST_TO_HOST || (int)kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
        return emu_error(ACL_ERROR_INVALID_PARAM, func, "kind %d is invalid (HOST_TO_HOST .. HOST_TO_BUF_TO_DEVICE)",
                         (int)kind);
    return 0;
}

/* Step 3 (and the driver's check of aclrtMemset). */
static int max_check(const char *func, const char *max_name, size_t max, size_t count)
{
    if (count > max)
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, func, "count %zu exceeds %s %zu (range (0, %zu])", count,
                         max_name, max, max);
    return 0;
}

/* The device side of a copy or memset must lie in a live allocation. Neither the acl layer nor the
 * runtime looks at the address; the driver does. On A2/A3 (hicann/driver
 * src/ascend_hal/svm/v2/devmm/devmm_svm.c _drvMemcpyInner -> the DEVMM_SVM_MEMCPY ioctl,
 * src/sdk_driver/svm/v2/master/comm/svm_master_memcpy.c devmm_memcpy_proc) a range it cannot
 * resolve fails with -EINVAL or -EADDRNOTAVAIL -> DRV_ERROR_PARA_ERROR / DRV_ERROR_IOCRL_FAIL,
 * which the runtime (src/runtime/core/src/common/errcode_manage.cc GetDrvErrCode, rtErrMap_)
 * reports as ACL_ERROR_RT_DRV_INTERNAL_ERROR; the async copy's location check
 * (api_error.cc MemcpyAsyncCheckLocation -> drvMemGetAttribute) fails alike for an address in no
 * heap. aclrtMemset: drvMemsetD8Inner -> the DEVMM_SVM_MEMSET8 ioctl
 * (src/sdk_driver/svm/v2/master/comm/svm_master_memset.c devmm_ioctl_memset_device_check: no heap,
 * a range past the heap or pages not allocated -> -EINVAL) -> 507899 alike; aclrtMemsetAsync:
 * src/runtime/core/src/launch/memory_common.cc MemSetAsync -> drvMemGetAttribute (DRV_ERROR_NOT_EXIST
 * for an address in no heap -> 507899), then an async copy into it. Pinned host memory
 * (aclrtMallocHost) is in the SVM range too: memset fills it (devmm_memset_fill_pages_process).
 * The emulator reports every such range at the call: a small overrun inside a mapped page (or a
 * host address outside the SVM range, which that driver copies or sets as host memory) would go
 * unnoticed on a device, and a freed address in a still-mapped heap may surface only when the
 * queued task runs. */
static int check_device_side(const char *func, const char *what, const void *p, size_t count, int pinned_ok)
{
    if (emu_device_range_ok(p, count))
        return 0;
    if (pinned_ok) {
        emu_lock();
        int ok = table_contains(&g_host_mem, p, count);
        emu_unlock();
        if (ok)
            return 0;
    }
    emu_note_misuse(func, "%s %p (+%zu bytes) is not inside a live device allocation", what, p, count);
    return emu_error(ACL_ERROR_RT_DRV_INTERNAL_ERROR, func, "%s %p (+%zu bytes) is not inside a live device allocation", what, p, count);
}

/* Pinned host memory (aclrtMallocHost: NpuDriver::HostMemAlloc -> halMemAlloc(MEM_HOST), the SVM
 * host-pin heap) may be the "device" side of a copy: drvMemcpy takes no kind (NpuDriver::MemCopySync
 * -> MemCopySyncAdapter -> drvMemcpy; hicann/driver devmm_svm.c _drvMemcpyInner) and the SVM copy
 * picks its direction from the addresses (svm_master_memcpy.c devmm_find_memcpy_dir: HOST-SVM to
 * or from non-SVM memory is H2H). The async copy checks the kind first (memcpy_async_kind). */
static int memcpy_device_checks(const char *func, const void *dst, const void *src, size_t count, aclrtMemcpyKind kind)
{
    int st = 0;
    int dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE ||
                  kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE;
    int src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    if (dst_dev && (st = check_device_side(func, "dst", dst, count, 1)))
        return st;
    if (src_dev && (st = check_device_side(func, "src", src, count, 1)))
        return st;
    return 0;
}

/* Where memory is, for the async copy (NpuDriver::PtrGetRealLocation from drvMemGetAttribute):
 * aclrtMalloc memory is DEVICE, aclrtMallocHost memory HOST, other host memory UNREGISTERED. */
enum { LOC_DEVICE, LOC_HOST, LOC_UNREGISTERED };
static const char *const g_loc_names[] = {"device", "host (aclrtMallocHost)", "unregistered host"};

static int mem_location(const void *p, size_t count)
{
    emu_lock();
    int loc = table_contains(&g_dev_mem, p, count) ? LOC_DEVICE
              : table_contains(&g_host_mem, p, count) ? LOC_HOST : LOC_UNREGISTERED;
    emu_unlock();
    return loc;
}

/* aclrtMemcpyAsync's kind against its memory (api_error.cc MemcpyAsyncCheckLocation ->
 * MemcpyKindAutoCorrect and its MemcpyKindReviseMap; A2/A3 drivers report user-malloc attributes,
 * devmm_svm.c svm_support_get_user_malloc_attr): two known locations force the kind; with an
 * unregistered side only some kinds are allowed, others are RT_ERROR_INVALID_VALUE (107000).
 * Only H2H..D2D are looked at. Sets *kind to the kind the copy runs with. */
static int memcpy_async_kind(const char *func, const void *dst, const void *src, size_t count, aclrtMemcpyKind *kind)
{
    enum { H2H = 1 << 0, H2D = 1 << 1, D2H = 1 << 2, D2D = 1 << 3 };
    /* [src][dst]: a forced kind (>= 0), or -1 and the allowed kinds */
    static const int forced[3][3] = {{ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, -1},
                                     {ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST, -1},
                                     {-1, -1, -1}};
    static const int allowed[3][3] = {{0, 0, D2H | D2D}, {0, 0, H2H | H2D}, {H2D | D2D, H2H | D2H, H2H | H2D | D2H | D2D}};
    if ((int)*kind > ACL_MEMCPY_DEVICE_TO_DEVICE)
        return 0;
    int s = mem_location(src, count), d = mem_location(dst, count);
    if (forced[s][d] >= 0) {
        *kind = (aclrtMemcpyKind)forced[s][d];
        return 0;
    }
    if (!(allowed[s][d] & (1 << *kind)))
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, func, "kind %d does not match the memory: src is %s memory, dst is %s memory",
                         (int)*kind, g_loc_names[s], g_loc_names[d]);
    return 0;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    if ((st = acl_memcpy_checks(__func__, dst, src, count, kind)))
        return st < 0 ? ACL_SUCCESS : st;
    if ((st = max_check(__func__, "destMax", destMax, count)))
        return st;
    NEED_CTX(__func__);
    if ((st = memcpy_device_checks(__func__, dst, src, count, kind)))
        return st;
    /* no implicit stream synchronisation (api_c.cc rtMemcpy -> ApiImpl::MemCopySync): a copy
     * racing with queued work is the caller's bug */
    check_host_access(__func__, dst, count, 1);
    check_host_access(__func__, src, count, 0);
    memmove(emu_host_alias(dst), emu_host_alias(src), count);
    return ACL_SUCCESS;
}

/* After the steps above: the memory (MemcpyAsyncCheckLocation), then H2H, refused by an online
 * (host-driven) runtime with RT_ERROR_FEATURE_NOT_SUPPORT (api_error.cc MemcpyAsync; api_c.cc
 * rtMemcpyAsync: ACL_ERROR_RT_FEATURE_NOT_SUPPORT), then ApiImpl::MemcpyAsync's check that the
 * stream belongs to the current context (ACL_ERROR_RT_STREAM_CONTEXT). */
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    if ((st = acl_memcpy_checks(__func__, dst, src, count, kind)))
        return st < 0 ? ACL_SUCCESS : st;
    if ((st = known_stream(__func__, stream)) || (st = max_check(__func__, "destMax", destMax, count)))
        return st;
    NEED_CTX(__func__);
    if ((st = memcpy_device_checks(__func__, dst, src, count, kind)) ||
        (st = memcpy_async_kind(__func__, dst, src, count, &kind)))
        return st;
    if (kind == ACL_MEMCPY_HOST_TO_HOST)
        return emu_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, __func__, "ACL_MEMCPY_HOST_TO_HOST is not supported by the async copy");
    if ((st = launch_stream(__func__, stream)) || (st = launch_fault(__func__, stream)))
        return st;
    emu_task *t = task_new(T_COPY, "aclrtMemcpyAsync");
    if (!t)
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, __func__, "out of memory");
    t->dst = emu_host_alias(dst);             /* what the copy touches; the ranges stay device addresses */
    t->src = emu_host_alias(src);
    t->count = count;
    range_add(t, dst, count, 1);
    range_add(t, src, count, 0);
    task_submit(stream, t);                   /* runs when the stream gets to it */
    return ACL_SUCCESS;
}

/* Step 1 of the memsets. Returns -1 for count 0 (success), else 0 or the status. */
static int acl_memset_checks(const char *func, const void *devPtr, size_t count)
{
    if (count == 0)
        return -1;
    if (!devPtr)
        return emu_error(ACL_ERROR_INVALID_PARAM, func, "devPtr is nullptr");
    return 0;
}

/* Context (107002), then the driver: count > maxCount (107000) before the address (507899). */
aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    if ((st = acl_memset_checks(__func__, devPtr, count)))
        return st < 0 ? ACL_SUCCESS : st;
    NEED_CTX(__func__);
    if ((st = max_check(__func__, "maxCount", maxCount, count)) ||
        (st = check_device_side(__func__, "devPtr", devPtr, count, 1)))
        return st;
    check_host_access(__func__, devPtr, count, 1);
    memset(emu_host_alias(devPtr), (int)(value & 0xff), count);
    return ACL_SUCCESS;
}

/* Stream handle, count > maxCount (ApiErrorDecorator::MemsetAsync, 107000), context (107002), the
 * stream's context (ApiImpl::MemsetAsync, 107003), then the address (MemSetAsync, 507899). */
aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    if ((st = acl_memset_checks(__func__, devPtr, count)))
        return st < 0 ? ACL_SUCCESS : st;
    if ((st = known_stream(__func__, stream)) || (st = max_check(__func__, "maxCount", maxCount, count)))
        return st;
    NEED_CTX(__func__);
    if ((st = launch_stream(__func__, stream)) || (st = check_device_side(__func__, "devPtr", devPtr, count, 1)) ||
        (st = launch_fault(__func__, stream)))
        return st;
    emu_task *t = task_new(T_MEMSET, "aclrtMemsetAsync");
    if (!t)
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, __func__, "out of memory");
    t->dst = emu_host_alias(devPtr);
    t->value = (int)(value & 0xff);
    t->count = count;
    range_add(t, devPtr, count, 1);
    task_submit(stream, t);
    return ACL_SUCCESS;
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *freeBytes, size_t *totalBytes)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_CTX(__func__);
    if (!freeBytes || !totalBytes)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "free or total is nullptr");
    if ((int)attr < ACL_DDR_MEM || (int)attr > ACL_MEM_P2P_HUGE1G)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "attr %d is invalid", (int)attr);
    int ddr = attr == ACL_DDR_MEM || attr == ACL_DDR_MEM_HUGE || attr == ACL_DDR_MEM_NORMAL ||
              attr == ACL_DDR_MEM_P2P_HUGE || attr == ACL_DDR_MEM_P2P_NORMAL;
    emu_lock();
    uint64_t used = g_dev_mem.bytes;
    emu_unlock();
    *totalBytes = ddr ? 0 : (size_t)EMU_DEVICE_MEM_TOTAL;
    *freeBytes = ddr ? 0 : (size_t)(used > EMU_DEVICE_MEM_TOTAL ? 0 : EMU_DEVICE_MEM_TOTAL - used);
    return ACL_SUCCESS;
}

/* ========================================================================================== */
/* Events                                                                                      */
/* ========================================================================================== */

static int event_new(const char *func, aclrtEvent *event, uint32_t flags, int with_flag)
{
    NEED_CTX(func);
    if (!event)
        return emu_error(ACL_ERROR_INVALID_PARAM, func, "event is nullptr");
    const uint32_t known = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE |
                           ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC;
    if (with_flag && (flags & ~known))
        return emu_error(ACL_ERROR_INVALID_PARAM, func, "flag 0x%x is invalid", flags);
    emu_event *e = calloc(1, sizeof *e);
    if (!e)
        return emu_error(ACL_ERROR_RT_NO_EVENT_RESOURCE, func, "out of memory");
    e->magic = 0x45564e54u;
    e->flags = flags;
    e->with_flag = with_flag;
    emu_reg_add(EMU_K_EVENT, e);
    *event = e;
    return ACL_SUCCESS;
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    return event_new(__func__, event, 0, 0);
}

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    return event_new(__func__, event, flag, 1);
}

static int known_event(const char *func, aclrtEvent event)
{
    if (!event)
        return emu_error(ACL_ERROR_INVALID_PARAM, func, "event is nullptr");
    if (emu_reg_kind(event) != EMU_K_EVENT) {
        emu_note_misuse(func, "unknown or destroyed event %p", event);
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, func, "event %p is unknown or already destroyed", event);
    }
    return 0;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_CTX(__func__);
    if ((st = known_event(__func__, event)) || (st = launch_stream(__func__, stream)) ||
        (st = launch_fault(__func__, stream)))
        return st;
    emu_task *t = task_new(T_RECORD, "aclrtRecordEvent");
    if (!t)
        return emu_error(ACL_ERROR_RT_NO_EVENT_RESOURCE, __func__, "out of memory");
    emu_lock();
    emu_event *e = event;
    t->event = e;
    t->seq = ++e->rec_seq;                    /* the event completes when this record has run */
    emu_ctx *c = cur_ctx();
    e->rec_stream = stream ? stream : c ? c->dflt : NULL;   /* NULL: the default stream */
    emu_unlock();
    task_submit(stream, t);
    return ACL_SUCCESS;
}

/* Runs the recording stream up to the latest record of `e` (lock held). */
static void wait_record(emu_event *e)
{
    if (e->done_seq < e->rec_seq && stream_live(e->rec_stream))
        drain_stream_until(e->rec_stream, e, e->rec_seq);
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if ((st = known_event(__func__, event)))
        return st;
    emu_lock();                               /* waits for the work queued before the record */
    wait_record(event);
    emu_unlock();
    return ACL_SUCCESS;
}

/* Elapsed time in ms between two recorded events. Events made by aclrtCreateEventWithFlag need
 * ACL_EVENT_TIME_LINE; an event never recorded gives ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID. */
aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!ms)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "ms is nullptr");
    if ((st = known_event(__func__, startEvent)) || (st = known_event(__func__, endEvent)))
        return st;
    emu_lock();
    emu_event a = *(emu_event *)startEvent, b = *(emu_event *)endEvent;
    emu_unlock();
    if ((a.with_flag && !(a.flags & ACL_EVENT_TIME_LINE)) || (b.with_flag && !(b.flags & ACL_EVENT_TIME_LINE)))
        return emu_error(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, __func__, "event created without ACL_EVENT_TIME_LINE");
    if (!a.recorded || !b.recorded || a.done_seq < a.rec_seq || b.done_seq < b.rec_seq)
        return emu_error(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, __func__,
                         "event not recorded, or its record has not run yet (synchronize the event first)");
    if (b.ns < a.ns)
        return emu_error(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL, __func__, "end event recorded before start event");
    *ms = (float)((double)(b.ns - a.ns) / 1e6);
    return ACL_SUCCESS;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!status)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "status is nullptr");
    if ((st = known_event(__func__, event)))
        return st;
    emu_lock();
    const emu_event *e = event;
    *status = e->recorded && e->done_seq >= e->rec_seq ? ACL_EVENT_RECORDED_STATUS_COMPLETE
                                                        : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_CTX(__func__);
    if ((st = launch_stream(__func__, stream)) || (st = known_event(__func__, event)) ||
        (st = launch_fault(__func__, stream)))
        return st;
    emu_lock();
    emu_event e = *(emu_event *)event;
    emu_unlock();
    if (e.with_flag && !(e.flags & ACL_EVENT_SYNC))
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, __func__, "event created without ACL_EVENT_SYNC cannot be waited on");
    if (e.rec_seq == 0 || e.done_seq >= e.rec_seq)
        return ACL_SUCCESS;                   /* nothing pending to wait for */
    emu_task *t = task_new(T_WAIT, "aclrtStreamWaitEvent");
    if (!t)
        return emu_error(ACL_ERROR_RT_NO_EVENT_RESOURCE, __func__, "out of memory");
    t->event = event;
    t->wait_stream = e.rec_stream;
    t->seq = e.rec_seq;                       /* the latest record at the time of the call */
    task_submit(stream, t);
    return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    NEED_INIT(__func__);
    if (!event)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "event is nullptr");
    if (!emu_reg_release(EMU_K_EVENT, event)) {
        emu_note_misuse(__func__, "unknown or destroyed event %p", event);
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, __func__, "event %p is unknown or already destroyed", event);
    }
    return ACL_SUCCESS;
}
