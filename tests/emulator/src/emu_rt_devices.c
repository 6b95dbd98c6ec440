/*
 * emu_rt_devices.c - libascendcl.so / libacl_rt.so: devices and contexts (aclrtSetDevice,
 * aclrtResetDevice, aclrtCreateContext, aclrtSetCurrentContext, aclrtGetDeviceInfo, ...).
 * Contexts themselves (the current one per thread, ctx_new) live in emu_runtime.c; their
 * teardown (ctx_release, which finishes the default stream's work) in emu_rt_streams.c.
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
/* Devices and contexts                                                                        */
/* ========================================================================================== */
aclError aclrtGetDeviceCount(uint32_t *count)
{
    API_ENTER(INIT);
    NEED_ARG(count);
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
    API_ENTER(INIT);
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
    API_ENTER(INIT);
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
        /* no context holds the device now: it closes, and its memory with it (hicann/runtime
         * context.cc Context::TearDown -> Runtime::DeviceRelease: emu_rt_memory.c device_memory_release);
         * a context made by aclrtCreateContext holds it open until aclrtDestroyContext */
        if (g_dev_ctxs[deviceId] == 0)
            device_memory_release(deviceId);
    }
    emu_unlock();
    return ACL_SUCCESS;
}

/* Control API (tests): release every device as at the end of a process (the last
 * aclrtResetDevice of each): default contexts die after their queued work, references drop to 0,
 * failure modes end. aclFinalize does not do this (emu_runtime.c finalize_locked), so the test
 * suite calls it between tests for a clean device state. */
EMU_EXPORT void emu_release_devices(void)
{
    emu_lock();
    for (int d = 0; d < EMU_MAX_DEVICES; d++) {
        if (g_default_ctx[d]) {
            for (emu_stream *s = g_streams; s; s = s->next_live)
                if (s->ctx == g_default_ctx[d])
                    drain_stream_until(s, NULL, 0);
            ctx_release(g_default_ctx[d]);
        }
        g_default_ctx[d] = NULL;
        g_dev_refs[d] = 0;
        device_clear_fault(d);
    }
    emu_unlock();
}

aclError aclrtGetDevice(int32_t *deviceId)
{
    API_ENTER(CTX);
    NEED_ARG(deviceId);
    emu_lock();
    emu_ctx *c = cur_ctx();
    *deviceId = c ? c->device : 0;
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
    API_ENTER(INIT);
    NEED_ARG(runMode);
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    API_ENTER(INIT);
    NEED_ARG(context);
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
    API_ENTER(INIT);
    NEED_ARG(context);
    if ((st = lookup_locked(__func__, EMU_K_CONTEXT, "context", context)))
        return st;
    if (((emu_ctx *)context)->is_default) {
        emu_unlock();
        emu_note_misuse(__func__, "default context %p destroyed by the user", context);
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, __func__, "context %p is a device's default context (use aclrtResetDevice)", context);
    }
    int32_t device = ((emu_ctx *)context)->device;
    ctx_release(context);
    /* the last context of a device already reset: the device closes (see aclrtResetDevice) */
    if (device >= 0 && device < EMU_MAX_DEVICES && g_dev_ctxs[device] == 0 && !g_default_ctx[device])
        device_memory_release(device);
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
    API_ENTER(INIT);
    NEED_ARG(context);
    if ((st = lookup_locked(__func__, EMU_K_CONTEXT, "context", context)))
        return st;
    set_cur_ctx(context);
    emu_unlock();
    return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
    API_ENTER(INIT);
    NEED_ARG(context);
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
    API_ENTER(INIT);
    NEED_ARG(value);
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
