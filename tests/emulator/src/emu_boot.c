/*
 * emu_boot.c - the runtime library's side of the boot (linked into libascendcl.so 8.x /
 * libacl_rt.so 9.x): the first successful aclInit boots the runtime through libruntime.so, which
 * this library names in DT_NEEDED (emu_keeper.c: it opens the implementation and libtsdclient.so
 * by bare name, or, as the simulator's libruntime_camodel.so, is the runtime itself).
 *
 * Real CANN (hicann/runtime):
 * - src/acl/aclrt_impl/acl.cpp aclInitImpl: "get socVersion" via aclrtGetSocNameImpl; when that
 *   fails aclInit returns ACL_ERROR_INTERNAL_ERROR (500000), "init SoC version failed".
 * - Getting the SoC boots the runtime: src/runtime/core/src/plugin_manage/runtime_keeper.cc
 *   RuntimeKeeper::BootRuntime -> CreateRuntimeImpl (in libruntime.so); a failure leaves the boot
 *   to be retried on the next call (bootStage_ back to BOOT_INIT).
 * The libraries are built without RPATH/RUNPATH (cmake), so only LD_LIBRARY_PATH or an already
 * loaded copy can satisfy libruntime.so and the keeper's bare-name opens.
 */
#include "emu_internal.h"

int emu_keeper_boot(char *why, size_t n);   /* libruntime.so (emu_keeper.c) */

static int g_booted = -1;                    /* what the boot opened (emu_keeper.c bits); -1 not yet */

/* Boots the runtime once per process (aclInit); 0 or ACL_ERROR_INTERNAL_ERROR with CANN's text. */
EMU_EXPORT int emu_boot_runtime(const char *func)
{
    int st = 0;
    emu_lock();
    if (g_booted < 0) {
        char why[512] = "";
        int bits = emu_keeper_boot(why, sizeof why);
        if (bits < 0) {
            emu_error(ACL_ERROR_INTERNAL_ERROR, func, "%s", why);
            st = emu_error(ACL_ERROR_INTERNAL_ERROR, func, "[Init][Version]init SoC version failed.");
        } else {
            g_booted = bits;
        }
    }
    emu_unlock();
    return st;
}

/* Control API: what the boot opened: bit 0 the runtime implementation library (libruntime_v100.so
 * / libruntime_v200.so), bit 1 libtsdclient.so, bit 2 the simulator's runtime (libruntime_camodel.so:
 * neither of the others is opened). */
EMU_EXPORT int64_t emu_runtime_plugins(void)
{
    emu_lock();
    int64_t bits = g_booted < 0 ? 0 : g_booted;
    emu_unlock();
    return bits;
}
