/*
 * emu_boot.c - the runtime's boot (linked into the runtime library): like the real one it opens
 * its implementation library and the TSD client BY BARE NAME, so they are found only when they
 * are already loaded (a loaded SONAME satisfies a bare-name dlopen) or on LD_LIBRARY_PATH.
 *
 * Real CANN (hicann/runtime):
 * - src/acl/aclrt_impl/acl.cpp aclInitImpl: "get socVersion" via aclrtGetSocNameImpl; when that
 *   fails aclInit returns ACL_ERROR_INTERNAL_ERROR (500000), "init SoC version failed".
 * - Getting the SoC boots the runtime: src/runtime/core/src/plugin_manage/runtime_keeper.cc
 *   RuntimeKeeper::BootRuntime -> CreateRuntimeImpl: mmDlopen(soName, RTLD_NOW) with soName
 *   from GetLibRuntimeSoName (src/runtime/config/<chip>/dev_info_reg.cc
 *   REGISTER_PLATFORM_LIB_INFO: libruntime_v100.so for 910B/910_93, libruntime_v200.so for 950),
 *   then dlsym "ConstructRuntimeImpl"; failure: "Failed to open library %s, dlerror=%s." and the
 *   boot is retried on the next call (bootStage_ back to BOOT_INIT).
 * - Runtime::Init -> Runtime::TsdClientInit (src/runtime/core/src/runtime.cc):
 *   mmDlopen("libtsdclient.so", RTLD_LAZY | RTLD_NODELETE); a failure is only logged.
 * The libraries are built without RPATH/RUNPATH (cmake), so only LD_LIBRARY_PATH or an already
 * loaded copy can satisfy these opens.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "emu_internal.h"

static void *g_impl;                      /* the runtime implementation library, once booted */
static int g_tsdclient;                   /* libtsdclient.so opened */

static const char *impl_name(void)
{
    const char *soc = getenv("EMU_SOC_NAME");
    return (soc && strncmp(soc, "Ascend950", 9) == 0) ? "libruntime_v200.so" : "libruntime_v100.so";
}

/* Boots the runtime once per process (aclInit); 0 or ACL_ERROR_INTERNAL_ERROR with CANN's text. */
EMU_EXPORT int emu_boot_runtime(const char *func)
{
    int st = 0;
    emu_lock();
    if (!g_impl) {
        const char *name = impl_name();
        void *h = dlopen(name, RTLD_NOW);
        if (!h) {
            const char *why = dlerror();
            emu_error(ACL_ERROR_INTERNAL_ERROR, func, "Failed to open library %s, dlerror=%s.", name,
                      why ? why : "unknown");
        } else if (!dlsym(h, "ConstructRuntimeImpl")) {
            emu_error(ACL_ERROR_INTERNAL_ERROR, func, "Failed to find symbol in %s.", name);
            dlclose(h);
        } else {
            g_impl = h;
            g_tsdclient = dlopen("libtsdclient.so", RTLD_LAZY | RTLD_NODELETE) != NULL;
        }
        if (!g_impl)
            st = emu_error(ACL_ERROR_INTERNAL_ERROR, func, "[Init][Version]init SoC version failed.");
    }
    emu_unlock();
    return st;
}

/* Control API: which by-name libraries the runtime opened: bit 0 its implementation library
 * (libruntime_v100.so / libruntime_v200.so), bit 1 libtsdclient.so. */
EMU_EXPORT int64_t emu_runtime_plugins(void)
{
    emu_lock();
    int64_t bits = (g_impl ? 1 : 0) | (g_tsdclient ? 2 : 0);
    emu_unlock();
    return bits;
}
