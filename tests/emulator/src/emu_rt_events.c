/*
 * emu_rt_events.c - libascendcl.so / libacl_rt.so: events (aclrtCreateEvent..., record, wait,
 * synchronize, query, elapsed time). Records and waits are stream tasks (emu_rt_streams.c).
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
/* Events                                                                                      */
/* ========================================================================================== */

static int event_new(const char *func, aclrtEvent *event, uint32_t flags, int with_flag, int ex)
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
    e->ex = ex;
    emu_reg_add(EMU_K_EVENT, e);
    *event = e;
    return ACL_SUCCESS;
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
    API_ENTER(NONE);
    return event_new(__func__, event, 0, 0, 0);
}

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
    API_ENTER(NONE);
    return event_new(__func__, event, flag, 1, 0);
}

/* An event "in new mode" (api_impl.cc EventCreateEx): the only kind a capture records or waits
 * on (api_impl.cc EventRecord / StreamWaitEvent: others give 207000 on a capturing stream). */
aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)
{
    API_ENTER(NONE);
    return event_new(__func__, event, flag, 1, 1);
}

static int known_event(const char *func, aclrtEvent event)
{
    if (!event)
        return emu_error(ACL_ERROR_INVALID_PARAM, func, "event is nullptr");
    if (emu_reg_kind(event) != EMU_K_EVENT)
        return unknown_handle(func, "event", event);
    return 0;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    API_ENTER(CTX);
    if ((st = known_event(__func__, event)) || (st = launch_stream(__func__, stream)) ||
        (st = launch_fault(__func__, stream)))
        return st;
    if ((st = capture_record(__func__, event, stream)) >= 0)   /* recorded into a capture (or refused) */
        return st;
    emu_task *t = task_new(T_RECORD, "aclrtRecordEvent");
    if (!t)
        return emu_error(ACL_ERROR_RT_NO_EVENT_RESOURCE, __func__, "out of memory");
    emu_lock();
    emu_event *e = event;
    t->event = e;
    t->seq = ++e->rec_seq;                    /* the event completes when this record has run */
    e->polls = 0;
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
    API_ENTER(INIT);
    if ((st = known_event(__func__, event)) || (st = capture_refuse_event(__func__, event)))
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
    API_ENTER(INIT);
    NEED_ARG(ms);
    if ((st = known_event(__func__, startEvent)) || (st = known_event(__func__, endEvent)) ||
        (st = capture_refuse_event(__func__, startEvent)) || (st = capture_refuse_event(__func__, endEvent)))
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

/* A device runs its queues on its own: the real query reads how far it got (hicann/runtime
 * src/acl/aclrt_impl/event.cpp aclrtQueryEventStatusImpl -> rtEventQueryStatus;
 * src/runtime/core/src/event/event.cc Event::QueryEventStatus -> QueryEventTask: the recording
 * stream's queue head against the record's position on STARS chips, else the last completed task
 * id in the completion queue's shared memory), so a program that polls sees the record complete
 * once the work before it has run. In deferred mode nothing else runs the queues, so the polls
 * are what moves the device: the first query of a pending record reports NOT_READY (the device
 * may still be busy: a program must not take one query for a synchronisation), and the
 * EMU_QUERY_POLLS-th runs the recording stream up to the record, as aclrtSynchronizeEvent does
 * (later work stays queued). Worker mode is the same, its thread may just get there first. */
#define EMU_QUERY_POLLS 2

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    API_ENTER(INIT);
    NEED_ARG(status);
    if ((st = known_event(__func__, event)) || (st = capture_refuse_event(__func__, event)))
        return st;
    emu_lock();
    emu_event *e = event;
    if (e->done_seq < e->rec_seq && ++e->polls >= EMU_QUERY_POLLS)
        wait_record(e);
    *status = e->recorded && e->done_seq >= e->rec_seq ? ACL_EVENT_RECORDED_STATUS_COMPLETE
                                                        : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    API_ENTER(CTX);
    if ((st = launch_stream(__func__, stream)) || (st = known_event(__func__, event)) ||
        (st = launch_fault(__func__, stream)))
        return st;
    emu_lock();
    emu_event e = *(emu_event *)event;
    emu_unlock();
    /* An event whose flags give it no wait task (ACL_EVENT_TIME_LINE alone: timestamps only) is refused:
     * hicann/runtime api_error.cc ApiErrorDecorator::StreamWaitEvent (event.hpp IsEventWithoutWaitTask:
     * none of RT_EVENT_DDSYNC_NS = ACL_EVENT_SYNC, RT_EVENT_DDSYNC 0x4, EXTERNAL, IPC) returns
     * RT_ERROR_FEATURE_NOT_SUPPORT, which api_c_stream.cc rtStreamWaitEvent gives as 207000. */
    if (e.with_flag && !(e.flags & (ACL_EVENT_SYNC | 0x4u | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC)))
        return emu_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, __func__, "event created without ACL_EVENT_SYNC cannot be waited on");
    if ((st = capture_wait(__func__, stream, event)) >= 0)    /* a wait of a capture (or refused) */
        return st;
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
    API_ENTER(INIT);
    NEED_ARG(event);
    if (!emu_reg_release(EMU_K_EVENT, event))
        return unknown_handle(__func__, "event", event);
    return ACL_SUCCESS;
}
