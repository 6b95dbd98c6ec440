/*
 * emu_rt_control.c - libascendcl.so / libacl_rt.so: call counters, fault injection, misuse and
 * the control API the tests use (emu_live, emu_calls, emu_misuse, emu_fail, ...; README.md).
 * emu_enter, the first step of every exported API function, counts the call and answers an
 * armed fault (runtime API functions reach it through API_ENTER, emu_internal.h).
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
/* Control API (for tests)                                                                     */
/* ========================================================================================== */
static const char *const g_kind_names[EMU_K_COUNT] = {
    [EMU_K_TENSOR] = "tensor",           [EMU_K_SCALAR] = "scalar",
    [EMU_K_INT_ARRAY] = "int_array",     [EMU_K_FLOAT_ARRAY] = "float_array",
    [EMU_K_BOOL_ARRAY] = "bool_array",   [EMU_K_TENSOR_LIST] = "tensor_list",
    [EMU_K_SCALAR_LIST] = "scalar_list", [EMU_K_EXECUTOR] = "executor",
    [EMU_K_STREAM] = "stream",           [EMU_K_EVENT] = "event",
    [EMU_K_CONTEXT] = "context",          [EMU_K_MODEL] = "model",
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
