/*
 * emu_rt_capture.c - libascendcl.so / libacl_rt.so: graph capture (aclmdlRI), as hicann/runtime
 * @681ef7610 implements it (paths below are that repository's):
 *   acl layer     src/acl/aclrt_impl/model_ri.cpp (NULL checks: ACL_ERROR_INVALID_PARAM)
 *   rt API        src/runtime/api/api_c_standard_soc.cc rtStreamBeginCapture/EndCapture/GetCaptureInfo
 *   checks        src/runtime/feature/aclgraph/api_error_aclgraph.cc, v100/api_impl_aclgraph.cc
 *   the capture   src/runtime/feature/aclgraph/context_aclgraph.cc (StreamBeginCapture,
 *                 StreamEndCapture, CheckCaptureModelValidity, IsCaptureModeSupport,
 *                 CaptureModeEnter/Exit, ThreadExchangeCaptureMode), stream_capture.cc,
 *                 capture_model_utils.cc (CheckCaptureStreamThreadIsMatch, CheckCaptureModeSupport)
 *   the rules     src/runtime/api/impl/api_error.cc, api_impl.cc, core/src/context/context.cc
 *   codes         core/src/common/errcode_manage.cc (internal RT_ERROR_* -> ACL_ERROR_*)
 *
 * Between aclmdlRICaptureBegin(stream) and aclmdlRICaptureEnd(stream) the work launched on a
 * capturing stream (phase 2 kernels, aclrtMemcpyAsync, aclrtMemsetAsync, event records and waits)
 * is recorded into the model instead of queued (Stream::AllocCaptureTask puts the task on the
 * model's capture stream; docs/zh/dev_guide/04-01_single_stream_capture.md). A stream waiting on
 * an event recorded in a capture joins it (GetCaptureStream -> StreamAddToCaptureModelProc).
 * aclmdlRIExecuteAsync(model, stream) queues the recorded tasks on `stream` again, at the
 * addresses they were captured with: they read what those addresses hold when they run. Here they
 * run one after another in capture order on that stream (a legal schedule of the model's streams:
 * every captured wait follows its record); the model's own records and waits order its internal
 * streams only and are not replayed.
 *
 * What CANN refuses during a capture, and how (the call fails; the capture goes on):
 *   synchronize/destroy a capturing stream, synchronize the device      107027 STREAM_CAPTURED
 *   synchronize/query/time an event recorded in the capture              107028 EVENT_CAPTURED
 *   aclrtMemcpy / aclrtMemset under the thread's capture mode            107030 CAPTURE_MODE_NOT_SUPPORT
 *   an async copy of pageable host memory on a capturing stream          107000 PARAM_INVALID
 *   a wait joining the default stream into a capture                     107031 STREAM_CAPTURE_IMPLICIT
 *   waiting in a capture on an event recorded outside it                 107024 CAPTURE_DEPENDENCY
 *   an event not made by aclrtCreateEventExWithFlag in a capture          207000 FEATURE_NOT_SUPPORT
 * A record or wait that mixes two capturing models returns 107032 (STREAM_CAPTURE_CONFLICT) and
 * invalidates both (api_impl.cc TerminateCapture): their aclmdlRICaptureEnd returns 507903.
 * aclmdlRICaptureEnd itself: not capturing 107029, not the origin stream 107036, another thread
 * (mode not RELAXED) 107038, invalidated 507903, a side stream not joined back 107025.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu_internal.h"

#define EMU_MODEL_MAGIC 0x4d4f444cu

typedef struct emu_model {
    uint32_t magic;
    int capturing;                            /* between Begin and End (CaptureModel IsCapturing) */
    int invalid;                              /* TerminateCapture: End returns 507903 */
    emu_ctx *ctx;
    emu_stream *origin;
    int mode;                                 /* aclmdlRICaptureMode of the Begin */
    pthread_t tid;                            /* the thread of the Begin */
    emu_task *head, *tail;                    /* the recorded tasks, in capture order */
    emu_event **events;                       /* events whose records it captured */
    size_t nevents, cap_events;
    struct emu_replay *replay;                /* after its first replay: its tasks, shared (below) */
} emu_model;

/* An ended model's tasks, shared by the model and the replays queued with them (T_REPLAY): the
 * device runs a model's tasks from the model, so a replay is one task of the stream's queue and
 * aclmdlRIExecuteAsync costs the host one submission (hicann/runtime ai.cc ApiImpl::ModelExecute
 * sends one model-execute task; the tasks were loaded on the device at aclmdlRICaptureEnd).
 * Freed with the last holder (aclmdlRIDestroy does not wait for replays already queued). */
typedef struct emu_replay {
    int64_t refs;
    emu_task *head;
} emu_replay;

static void free_tasks(emu_task *t)
{
    while (t) {
        emu_task *next = t->next;
        if (t->kind == T_KERNEL)
            free(t->exec);
        free(t);
        t = next;
    }
}

static void replay_drop(emu_replay *r)
{
    if (r && --r->refs == 0) {
        free_tasks(r->head);
        free(r);
    }
}

/* The capture-mode state of each thread (inner_thread_local.cpp): the captures it began, per
 * mode, and the mode aclmdlRICaptureThreadExchangeMode set (default GLOBAL). */
static __thread int64_t t_mode_ref[3];
static __thread int t_exchange_mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;

/* The strictest (lowest) mode with a live capture in `refs`, 3 (RT_STREAM_CAPTURE_MODE_MAX) if none. */
static int lowest_mode(const int64_t *refs)
{
    for (int m = 0; m < 3; m++)
        if (refs[m] > 0)
            return m;
    return 3;
}

/* ---- Capturing streams and models (lock held) ---- */

/* The stream `stream` names (NULL: the current context's default stream). */
static emu_stream *resolve(aclrtStream stream)
{
    if (stream)
        return stream;
    emu_ctx *c = cur_ctx();
    return c ? c->dflt : NULL;
}

static int is_default_stream(const emu_stream *s)
{
    return s && s->ctx && s->ctx->dflt == s;
}

static void model_add_event(emu_model *m, emu_event *e)
{
    for (size_t i = 0; i < m->nevents; i++)
        if (m->events[i] == e)
            return;
    if (m->nevents == m->cap_events) {
        size_t n = m->cap_events ? 2 * m->cap_events : 8;
        emu_event **v = realloc(m->events, n * sizeof *v);
        if (!v)
            return;
        m->events = v;
        m->cap_events = n;
    }
    m->events[m->nevents++] = e;
}

/* A stream enters the capture of `m` (Stream::EnterCapture). */
static void stream_enter(emu_stream *s, emu_model *m, int origin)
{
    s->cap = m;
    s->cap_status = ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
    s->cap_origin = origin;
    s->cap_last_kind = -1;
    s->cap_last_event = NULL;
}

/* Every stream and event of `m` leaves the capture (CaptureModel::ExitCaptureNotify resets every
 * stream that entered it and every event it captured), and the thread and context counts of its
 * mode drop (Context::CaptureModeExit). */
static void model_exit(emu_model *m)
{
    for (emu_stream *s = g_streams; s; s = s->next_live)
        if (s->cap == m) {
            s->cap = NULL;
            s->cap_status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
            s->cap_origin = 0;
        }
    for (size_t i = 0; i < m->nevents; i++)
        if (emu_reg_kind(m->events[i]) == EMU_K_EVENT && m->events[i]->cap == m)
            m->events[i]->cap = NULL;
    if (m->capturing) {
        if (emu_reg_kind(m->ctx) == EMU_K_CONTEXT && m->ctx->cap_ref[m->mode] > 0)   /* it may have died */
            m->ctx->cap_ref[m->mode]--;
        if (t_mode_ref[m->mode] > 0)
            t_mode_ref[m->mode]--;
        m->capturing = 0;
    }
}

static void model_free(emu_model *m)
{
    free_tasks(m->head);
    m->head = m->tail = NULL;
    replay_drop(m->replay);
    m->replay = NULL;
    free(m->events);
    m->events = NULL;
    emu_reg_release(EMU_K_MODEL, m);
}

/* A task launched on a capturing stream joins its model instead of the queue. */
void capture_append(emu_stream *s, emu_task *t)
{
    emu_model *m = s->cap;
    t->next = NULL;
    if (m->tail)
        m->tail->next = t;
    else
        m->head = t;
    m->tail = t;
    s->cap_last_kind = t->kind;
    s->cap_last_event = t->kind == T_RECORD ? t->event : NULL;
}

/* ---- The rules ---- */

int capture_refuse_stream(const char *func, aclrtStream stream)
{
    emu_lock();
    emu_stream *s = stream;                   /* ApiErrorDecorator checks `stm != nullptr` first */
    int capturing = s && s->cap;
    emu_unlock();
    if (capturing)                            /* api_error.cc StreamSynchronize / StreamDestroy */
        return emu_error(ACL_ERROR_RT_STREAM_CAPTURED, func, "Stream %p during the capture stage is not supported "
                         "(capture rule: end the capture with aclmdlRICaptureEnd first)", stream);
    return 0;
}

int capture_refuse_device(const char *func)
{
    emu_lock();
    emu_ctx *c = cur_ctx();
    emu_stream *found = NULL;
    for (emu_stream *s = g_streams; s && c; s = s->next_live)
        if (s->ctx == c && s->ctx_id == c->id && s->cap)
            found = s;
    emu_unlock();
    if (found)                                /* context.cc Context::Synchronize */
        return emu_error(ACL_ERROR_RT_STREAM_CAPTURED, func, "Not allow to synchronize captured-stream %p "
                         "(capture rule: a stream of this context is capturing)", (void *)found);
    return 0;
}

int capture_refuse_event(const char *func, aclrtEvent event)
{
    emu_lock();
    const emu_event *e = event;
    int capturing = emu_reg_kind(e) == EMU_K_EVENT && e->cap && ((emu_model *)e->cap)->capturing;
    emu_unlock();
    if (capturing)                            /* api_error.cc EventSynchronize / EventQueryStatus / ... */
        return emu_error(ACL_ERROR_RT_EVENT_CAPTURED, func, "Event %p during the capture stage is not supported "
                         "(capture rule: its record is being captured)", event);
    return 0;
}

/* Context::IsCaptureModeSupport (context_aclgraph.cc): RELAXED set by the thread allows all; a
 * thread in GLOBAL is refused while any capture of the context is GLOBAL or it began a
 * THREAD_LOCAL one; a thread in THREAD_LOCAL while it began a GLOBAL or THREAD_LOCAL one. */
int capture_mode_refused(const char *func)
{
    emu_lock();
    emu_ctx *c = cur_ctx();
    int ctx_mode = c ? lowest_mode(c->cap_ref) : 3;
    emu_unlock();
    int thread_mode = lowest_mode(t_mode_ref), ex = t_exchange_mode;
    int refused = 0;
    if (ctx_mode == 3 || ex == ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        refused = 0;
    else if (ex == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        refused = ctx_mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || thread_mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL;
    else
        refused = thread_mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || thread_mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL;
    if (refused)                              /* api_impl.cc MemCopySync / MemSetSync */
        return emu_error(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, func,
                         "the current capture mode does not support this operation (capture rule: threadCaptureMode=%d, "
                         "exchangeCaptureMode=%d, contextCaptureMode=%d; aclmdlRICaptureThreadExchangeMode RELAXED allows it)",
                         thread_mode, ex, ctx_mode);
    return 0;
}

/* api_error.cc MemcpyAsync: an H2D/D2H copy of pageable (not aclrtMallocHost) host memory is
 * refused on a capturing stream (JudgeIsInvolvePageableMemory, RT_ERROR_INVALID_VALUE). */
int capture_refuse_pageable(const char *func, aclrtStream stream, const void *dst, const void *src, size_t count,
                            aclrtMemcpyKind kind)
{
    if (kind != ACL_MEMCPY_HOST_TO_DEVICE && kind != ACL_MEMCPY_DEVICE_TO_HOST)
        return 0;
    const void *host = kind == ACL_MEMCPY_HOST_TO_DEVICE ? src : dst;
    emu_lock();
    emu_stream *s = stream;
    int refused = s && s->cap && !table_contains(&g_host_mem, host, count);
    emu_unlock();
    if (refused)
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, func, "The pageable memory copy task does not support graph capture "
                         "(capture rule: use host memory from aclrtMallocHost)");
    return 0;
}

/* The record and the wait of a capture (api_impl.cc EventRecord / StreamWaitEvent). */
static int conflict(const char *func, emu_model *a, emu_model *b)
{
    a->invalid = b->invalid = 1;              /* TerminateCapture(evt, curStm): both models */
    return emu_error(ACL_ERROR_STREAM_CAPTURE_CONFLICT, func, "the event and the stream belong to two different "
                     "capturing models (capture rule: both captures are invalidated)");
}

static emu_task *new_event_task(int kind, const char *api, emu_event *e)
{
    emu_task *t = task_new(kind, api);
    if (t)
        t->event = e;
    return t;
}

int capture_record(const char *func, aclrtEvent event, aclrtStream stream)
{
    emu_lock();
    emu_stream *s = resolve(stream);
    emu_event *e = event;
    int st = -1;
    if (s && s->cap && e->cap && e->cap->capturing && e->cap != s->cap) {
        st = conflict(func, s->cap, e->cap);
    } else if (s && s->cap) {                 /* Event::ToBeCaptured */
        if (!e->ex) {
            st = emu_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func, "an event made by aclrtCreateEvent(WithFlag) cannot be "
                           "recorded in a capture (capture rule: use aclrtCreateEventExWithFlag)");
        } else {
            emu_task *t = new_event_task(T_RECORD, "aclrtRecordEvent", e);
            if (!t) {
                st = emu_error(ACL_ERROR_RT_NO_EVENT_RESOURCE, func, "out of memory");
            } else {
                e->cap = s->cap;              /* the event is now capturing (Event::IsCapturing) */
                e->cap_rec_stream = s;
                e->cap_waited = e->cap_waited_origin = 0;
                model_add_event(s->cap, e);
                capture_append(s, t);
                st = 0;
            }
        }
    }
    emu_unlock();
    return st;
}

int capture_wait(const char *func, aclrtStream stream, aclrtEvent event)
{
    emu_lock();
    emu_stream *s = resolve(stream);
    emu_event *e = event;
    int st = -1;
    emu_model *em = e->cap && e->cap->capturing ? e->cap : NULL;
    if (em) {                                 /* evt->IsCapturing() */
        if (is_default_stream(s)) {
            st = emu_error(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, func, "The default stream cannot be used in the ACL "
                           "Graph (capture rule: wait on a created stream)");
        } else if (s->cap && s->cap != em) {
            st = conflict(func, s->cap, em);
        } else {
            emu_task *t = new_event_task(T_WAIT, "aclrtStreamWaitEvent", e);
            if (!t) {
                st = emu_error(ACL_ERROR_RT_NO_EVENT_RESOURCE, func, "out of memory");
            } else {
                if (!s->cap)                  /* the stream joins the capture (StreamAddToCaptureModelProc) */
                    stream_enter(s, em, 0);
                if (s != e->cap_rec_stream) { /* Event::InsertWaitTaskStream */
                    e->cap_waited = 1;
                    e->cap_waited_origin |= s->cap_origin;
                }
                capture_append(s, t);
                st = 0;
            }
        }
    } else if (s && s->cap) {                 /* a capturing stream waits on an event not in capture */
        if (!e->ex)
            st = emu_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func, "an event made by aclrtCreateEvent(WithFlag) cannot be "
                           "waited on in a capture (capture rule: use aclrtCreateEventExWithFlag)");
        else if (e->rec_seq > 0)
            st = emu_error(ACL_ERROR_RT_CAPTURE_DEPENDENCY, func, "The event wait task is not supported during model "
                           "capture because the corresponding event record task is not in the current model (capture rule)");
        else
            st = 0;                           /* never recorded: nothing to wait for */
    }
    emu_unlock();
    return st;
}

/* ---- The API ---- */

static int known_model(const char *func, aclmdlRI model)
{
    if (!model)
        return emu_error(ACL_ERROR_INVALID_PARAM, func, "modelRI is nullptr");
    if (emu_reg_kind(model) != EMU_K_MODEL)
        return unknown_handle(func, "modelRI", model);
    return 0;
}

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)
{
    API_ENTER(INIT);
    NEED_ARG(stream);                         /* model_ri.cpp ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT */
    if ((st = known_stream(__func__, stream)))
        return st;
    if ((int)mode < 0 || (int)mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)   /* api_error_aclgraph.cc */
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, __func__, "mode %d is not in [0, 3)", (int)mode);
    NEED_CTX(__func__);                       /* api_impl_aclgraph.cc StreamBeginCapture */
    if ((st = launch_stream(__func__, stream)))
        return st;
    emu_model *m = calloc(1, sizeof *m);
    if (!m)
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, __func__, "out of memory");
    emu_lock();
    emu_stream *s = stream;
    if (s->cap) {                             /* context_aclgraph.cc StreamBeginCapture */
        int status = s->cap_status;
        emu_unlock();
        free(m);
        return emu_error(ACL_ERROR_RT_STREAM_CAPTURED, __func__, "Stream %p is already in capture status (%s)", stream,
                         status == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE ? "active" : "invalidated");
    }
    m->magic = EMU_MODEL_MAGIC;
    m->capturing = 1;
    m->ctx = s->ctx;
    m->origin = s;
    m->mode = (int)mode;
    m->tid = pthread_self();
    emu_reg_add(EMU_K_MODEL, m);
    stream_enter(s, m, 1);
    if (m->ctx)                               /* Context::CaptureModeEnter */
        m->ctx->cap_ref[mode]++;
    t_mode_ref[mode]++;
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status, aclmdlRI *modelRI)
{
    API_ENTER(INIT);
    NEED_ARG(stream);
    if (!status && !modelRI)                  /* model_ri.cpp: both cannot be nullptr */
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "status and modelRI cannot be nullptr at the same time");
    if ((st = known_stream(__func__, stream)))
        return st;
    emu_lock();
    const emu_stream *s = stream;
    if (status)
        *status = (aclmdlRICaptureStatus)(s->cap ? s->cap_status : ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    if (modelRI)
        *modelRI = s->cap;
    emu_unlock();
    return ACL_SUCCESS;
}

/* Does every side stream of `m` end in a record that a captured wait joined, one of them on the
 * origin stream? (Context::CheckCaptureModelValidity.) Lock held. */
static const char *unjoined(const emu_model *m)
{
    int sides = 0, to_origin = 0;
    for (const emu_stream *s = g_streams; s; s = s->next_live) {
        if (s->cap != m || s->cap_origin)
            continue;
        sides++;
        const emu_event *e = s->cap_last_event;
        if (s->cap_last_kind != T_RECORD || !e)
            return "the last task on a side stream is not an event record (record an event on it and wait on it)";
        if (emu_reg_kind(e) != EMU_K_EVENT || e->cap != m || e->cap_rec_stream != s || !e->cap_waited)
            return "the last record on a side stream lacks its event wait";
        to_origin |= e->cap_waited_origin;
    }
    if (sides && !to_origin)
        return "no side stream is joined back to the origin stream (wait on its event there)";
    return NULL;
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)
{
    API_ENTER(INIT);
    NEED_ARG(stream);
    if ((st = known_stream(__func__, stream)))
        return st;
    emu_lock();
    emu_stream *s = stream;
    emu_model *m = s->cap;
    emu_unlock();
    if (m && !modelRI)                        /* api_impl_aclgraph.cc StreamEndCapture */
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, __func__, "modelRI is nullptr");
    if (modelRI)
        *modelRI = NULL;
    NEED_CTX(__func__);
    if ((st = launch_stream(__func__, stream)))
        return st;
    emu_lock();
    m = s->cap;
    if (!m) {
        emu_unlock();
        return emu_error(ACL_ERROR_RT_STREAM_NOT_CAPTURED, __func__, "The stream %p is not in capture status, call "
                         "aclmdlRICaptureBegin first", stream);
    }
    if (!s->cap_origin) {
        emu_unlock();
        return emu_error(ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, __func__, "The capture was not initiated in stream %p "
                         "(capture rule: end it on the stream aclmdlRICaptureBegin was called on)", stream);
    }
    if (m->mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED && !pthread_equal(m->tid, pthread_self())) {
        /* CheckCaptureStreamThreadIsMatch: the capture ends (ClearCaptureModel without the model,
         * which CANN then never frees; the emulator frees it) */
        model_exit(m);
        model_free(m);
        emu_unlock();
        return emu_error(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, __func__, "end capture in the wrong thread (capture "
                         "rule: aclmdlRICaptureEnd in the thread of aclmdlRICaptureBegin, or capture in RELAXED mode)");
    }
    const char *why = m->invalid ? NULL : unjoined(m);
    int invalid = m->invalid;
    model_exit(m);
    if (invalid || why) {
        model_free(m);
        emu_unlock();
        if (invalid)
            return emu_error(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, __func__, "The current model is invalid because an "
                             "error occurred during model capture");
        return emu_error(ACL_ERROR_RT_STREAM_UNJOINED, __func__, "capture model contains a stream that was not joined "
                         "to the origin stream: %s", why);
    }
    emu_unlock();
    *modelRI = m;
    return ACL_SUCCESS;
}

aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)
{
    API_ENTER(INIT);
    NEED_ARG(mode);
    if ((unsigned)*mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)   /* api_error_aclgraph.cc */
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, __func__, "mode %d is not less than 3", (int)*mode);
    int old = t_exchange_mode;                /* Context::ThreadExchangeCaptureMode */
    t_exchange_mode = (int)*mode;
    *mode = (aclmdlRICaptureMode)old;
    return ACL_SUCCESS;
}

/* A copy of a recorded task for the queue (the queue frees what it runs). */
static emu_task *task_clone(const emu_task *t)
{
    emu_task *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *t;
    c->next = NULL;
    if (t->kind == T_KERNEL) {
        c->exec = malloc(sizeof *t->exec);
        if (!c->exec) {
            free(c);
            return NULL;
        }
        *c->exec = *t->exec;
    }
    return c;
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)
{
    API_ENTER(INIT);
    if ((st = known_model(__func__, modelRI)) || (st = known_stream(__func__, stream)))
        return st;
    NEED_CTX(__func__);                       /* ApiImpl::ModelExecuteAsync */
    emu_lock();
    emu_model *m = modelRI;
    int other_ctx = m->ctx != cur_ctx(), capturing = m->capturing;
    emu_unlock();
    if (other_ctx)
        return emu_error(ACL_ERROR_RT_MODEL_CONTEXT, __func__, "model %p belongs to another context", modelRI);
    if (capturing)                            /* emulator addition: a model still capturing (from GetInfo) */
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, __func__, "model %p is still being captured", modelRI);
    if ((st = launch_stream(__func__, stream)) || (st = capture_refuse_stream(__func__, stream)) ||
        (st = launch_fault(__func__, stream)))   /* api_error.cc ModelExecute: a capturing stream: 107027 */
        return st;
    emu_task *task = calloc(1, sizeof *task);
    if (!task)
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, __func__, "out of memory");
    emu_lock();
    if (!m->replay) {                         /* the first replay: the tasks move to a shared block */
        m->replay = calloc(1, sizeof *m->replay);
        if (!m->replay) {
            emu_unlock();
            free(task);
            return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, __func__, "out of memory");
        }
        m->replay->refs = 1;
        m->replay->head = m->head;
        m->head = m->tail = NULL;
    }
    m->replay->refs++;
    task->kind = T_REPLAY;
    task->api = "aclmdlRIExecuteAsync";
    task->replay = m->replay;
    emu_unlock();
    task_submit(stream, task);                /* the recorded addresses: read when the tasks run */
    return ACL_SUCCESS;
}

/* A queued replay runs (T_REPLAY, from task_run): each recorded task, on a copy (a kernel's run
 * frees its executor copy), in capture order (a legal schedule of the model's streams). Lock held. */
void replay_run(emu_stream *s, emu_task *t, void (*run)(emu_stream *, emu_task *))
{
    emu_replay *r = t->replay;
    for (const emu_task *rec = r->head; rec; rec = rec->next) {
        if (rec->kind == T_RECORD || rec->kind == T_WAIT)
            continue;
        emu_task *c = task_clone(rec);
        if (!c) {
            if (!s->status)
                s->status = ACL_ERROR_RT_MEMORY_ALLOCATION;
            break;
        }
        run(s, c);
        free(c);
    }
    replay_drop(r);
}

aclError aclmdlRIDestroy(aclmdlRI modelRI)
{
    API_ENTER(INIT);
    if ((st = known_model(__func__, modelRI)))
        return st;
    emu_lock();
    emu_model *m = modelRI;
    if (m->capturing) {                       /* emulator addition: destroy it after aclmdlRICaptureEnd */
        emu_unlock();
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, __func__, "model %p is still being captured", modelRI);
    }
    model_free(m);                            /* replays already queued hold their own copies */
    emu_unlock();
    return ACL_SUCCESS;
}
