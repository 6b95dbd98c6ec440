/*
 * emu_rt_errors.c - libascendcl.so / libacl_rt.so: the thread-local error state: emu_error (the
 * recent error message and the last error), aclGetRecentErrMsg (with the device's messages of
 * "Sticky page faults", emu_rt_streams.c), aclrtGetLastError and aclrtPeekAtLastError.
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
/* Thread-local error state                                                                    */
/* ========================================================================================== */
static __thread char t_err[EMU_ERR_MAX];      /* accumulated, not yet read */
static __thread size_t t_err_len;
static __thread char t_err_out[EMU_ERR_MAX];  /* what aclGetRecentErrMsg returns: every read's */
                                              /* new text, newest first; never cleared */
__thread int t_last_error;             /* aclrtGetLastError / aclrtPeekAtLastError */

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
