/*
 * emu_rt_streams.c - libascendcl.so / libacl_rt.so: the stream queues (see "Stream queues"),
 * sticky page faults, the EMU_STREAM_MODE=worker thread, and the stream API (aclrtCreateStream,
 * aclrtDestroyStream, aclrtSynchronizeStream(WithTimeout), aclrtSynchronizeDevice).
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
 *    flushes the pending tasks), aclrtResetDevice when the default context dies;
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
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int64_t g_queued;                      /* tasks queued over all streams */
static int g_stream_mode_override;            /* emu_set_stream_mode: 0 = EMU_STREAM_MODE */
static pthread_cond_t g_work_cv = PTHREAD_COND_INITIALIZER;
static pthread_once_t g_worker_once = PTHREAD_ONCE_INIT;

grave *g_graves;

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
emu_task *queued_user(const void *p, uint64_t n, int writes, emu_stream **on)
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
void check_host_access(const char *func, const void *p, uint64_t n, int writes)
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
void release_block(void *p, char *alias, size_t map)
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

/* 1 for a stream that still exists: a live handle or a live context's default stream. Lock held. */
int stream_live(const void *p)
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
 * It lasts until the device is released: the last aclrtResetDevice (aclFinalize resets no device).
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
void device_clear_fault(int d)
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
int launch_fault(const char *func, aclrtStream stream)
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
    case T_REPLAY:                            /* aclmdlRIExecuteAsync: the model's tasks, in order */
        replay_run(s, t, task_run);
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
void drain_stream_until(emu_stream *s, const emu_event *e, uint64_t seq)
{
    while ((!e || e->done_seq < seq) && run_one(s))
        ;
}

/* EMU_STREAM_MODE=worker: one background thread plays the device, running the oldest task of
 * each stream in turn, a little later than it was queued (EMU_WORKER_DELAY_US, default 200).
 * It runs work only while the mode is worker: once a test switches back to deferred, queued work
 * must wait for a synchronisation point even if the thread was mid-pause (it used to wake from
 * its pause and run the deferred test's kernels: a flaky "queued" count). */
static long g_worker_delay_us = -1;   /* -1: EMU_WORKER_DELAY_US, read when the worker starts */

static void *worker_main(void *arg)
{
    (void)arg;
    const char *d = getenv("EMU_WORKER_DELAY_US");
    emu_lock();
    if (g_worker_delay_us < 0)
        g_worker_delay_us = (d && *d) ? strtol(d, NULL, 10) : 200;
    for (;;) {
        int ran = 0;
        if (stream_mode() == MODE_WORKER)
            for (emu_stream *s = g_streams; s; s = s->next_live)
                ran |= run_one(s);
        if (!ran) {
            pthread_cond_wait(&g_work_cv, &g_mu);  /* the worker holds the lock exactly once */
            continue;
        }
        long delay_us = g_worker_delay_us;
        emu_unlock();
        if (delay_us > 0) {
            struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
        emu_lock();
    }
    return NULL;
}

/* The worker's pause after each task, in microseconds (tests widen it to hold a window open). */
EMU_EXPORT void emu_set_worker_delay_us(long us)
{
    emu_lock();
    g_worker_delay_us = us < 0 ? 0 : us;
    emu_unlock();
}

static void worker_start(void)
{
    pthread_t th;
    if (pthread_create(&th, NULL, worker_main, NULL) == 0)
        pthread_detach(th);
}

void range_add(emu_task *t, const void *p, uint64_t n, int writes)
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
void task_submit(aclrtStream stream, emu_task *t)
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
    if (s->cap) {                             /* capturing: the task goes to the model (emu_rt_capture.c) */
        capture_append(s, t);
        emu_unlock();
        return;
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

emu_task *task_new(int kind, const char *api)
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
void ctx_release(emu_ctx *c)
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
    if (c->device >= 0 && c->device < EMU_MAX_DEVICES && g_dev_ctxs[c->device] > 0)
        g_dev_ctxs[c->device]--;
    emu_reg_release(EMU_K_CONTEXT, c);
}

/* Tasks still queued (all streams), for emu_live("queued"). */
int64_t queued_tasks(void) { return g_queued; }

/* 1 = deferred, 2 = worker, 0 = back to EMU_STREAM_MODE (default deferred). */
EMU_EXPORT void emu_set_stream_mode(int mode)
{
    emu_lock();
    g_stream_mode_override = (mode == MODE_DEFERRED || mode == MODE_WORKER) ? mode : 0;
    emu_unlock();
    pthread_cond_signal(&g_work_cv);          /* a started worker picks up work queued meanwhile */
}

/* ========================================================================================== */
/* Streams                                                                                     */
/* ========================================================================================== */
aclError aclrtCreateStream(aclrtStream *stream)
{
    API_ENTER(CTX);
    NEED_ARG(stream);
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
int known_stream(const char *func, aclrtStream stream)
{
    if (stream && emu_reg_kind(stream) != EMU_K_STREAM)
        return unknown_handle(func, "stream", stream);
    return 0;
}

/* A stream that may take work from this thread (launches: copies, memsets, events, ops). */
int launch_stream(const char *func, aclrtStream stream)
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
    API_ENTER(INIT);
    NEED_ARG(stream);
    if ((st = known_stream(__func__, stream)) || (st = capture_refuse_stream(__func__, stream)))
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
    API_ENTER(CTX);
    /* any current context will do: ApiImpl::StreamSynchronize switches to the stream's context */
    if ((st = known_stream(__func__, stream)) || (st = capture_refuse_stream(__func__, stream)))
        return st;
    return sync_stream(__func__, stream);
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    API_ENTER(CTX);
    if (timeout < -1)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "timeout %d is invalid (-1 or >= 0)", (int)timeout);
    if ((st = known_stream(__func__, stream)) || (st = capture_refuse_stream(__func__, stream)))
        return st;
    return sync_stream(__func__, stream);     /* queued work always finishes in time here */
}

aclError aclrtSynchronizeDevice(void)
{
    API_ENTER(CTX);
    if ((st = capture_refuse_device(__func__)))
        return st;
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
