/*
 * emu_keeper.c - the runtime's boot, in its own library as in CANN: lib64/libruntime.so, which
 * the runtime library (libascendcl.so 8.x, libacl_rt.so 9.x) names in DT_NEEDED, and, built with
 * -DEMU_CAMODEL, the NPU Simulator's libruntime_camodel.so. The runtime library calls
 * emu_keeper_boot() at its first aclInit (emu_boot.c).
 *
 * Real CANN (hicann/runtime):
 * - src/acl/aclrt/CMakeLists.txt: acl_rt links `runtime` (libruntime.so, DT_NEEDED, no rpath), so
 *   the dynamic linker resolves it by name: an already loaded libruntime.so, else the search path
 *   (LD_LIBRARY_PATH first).
 * - src/runtime/cmake/runtime.cmake add_runtime_api_library(runtime): libruntime.so is built with
 *   RUNTIME_API=1, STATIC_RT_LIB=0, so runtime_keeper.cc CreateRuntimeImpl is the dlopen one:
 *   GetLibRuntimeSoName -> GetChipType -> GetDeviceType asks the driver
 *   (halGetDeviceInfo(0, MODULE_TYPE_SYSTEM, INFO_TYPE_VERSION), chip = PLAT_GET_CHIP(version),
 *   pkg_inc/runtime/runtime/config.h), the chip's library comes from
 *   src/runtime/config/<chip>/dev_info_reg.cc REGISTER_PLATFORM_LIB_INFO (libruntime_v100.so for
 *   910B/910_93, libruntime_v200.so for 950), default libruntime_v100.so; then
 *   mmDlopen(soName, RTLD_NOW) by bare name and dlsym "ConstructRuntimeImpl"; failure: "Failed to
 *   open library %s, dlerror=%s.". Runtime::Init -> Runtime::TsdClientInit (runtime.cc) then opens
 *   libtsdclient.so by bare name (RTLD_LAZY | RTLD_NODELETE); a failure is only logged.
 * - src/runtime/cmake/cmodel.cmake runtime_camodel_<product>: the simulator's runtime is built
 *   with STATIC_RT_LIB=1 and CFG_DEV_PLATFORM_PC: CreateRuntimeImpl constructs the Runtime in the
 *   library itself (no libruntime_v*.so is opened) and TsdClientInit is compiled out (no
 *   libtsdclient.so); it links npu_drv_camodel (DT_NEEDED libnpu_drv_camodel.so), the simulated
 *   driver of src/cmodel_driver (emu_driver.c -DEMU_CAMODEL here).
 * The emulated chip comes from the driver's halGetDeviceInfo when a driver is loaded (emu_driver.c
 * answers from EMU_SOC_NAME), else from EMU_SOC_NAME itself (an emulator stand-in: the emulated
 * runtime does not need a driver).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMU_EXPORT __attribute__((visibility("default")))

/* what the boot opened: bit 0 the implementation, bit 1 libtsdclient.so, bit 2 the simulator's
 * in-library runtime (libruntime_camodel.so) */
enum { BOOT_IMPL = 1, BOOT_TSDCLIENT = 2, BOOT_CAMODEL = 4 };

typedef int (*hal_get_device_info_fn)(uint32_t, int32_t, int32_t, int64_t *);

#ifdef EMU_CAMODEL
/* the simulated driver this runtime is linked with (DT_NEEDED libnpu_drv_camodel.so) */
int halGetDeviceInfo(uint32_t devId, int32_t moduleType, int32_t infoType, int64_t *value);
int drvGetDevNum(uint32_t *num_dev);
uint64_t emu_drv_hbm_size(void);

/* The devices this runtime has: its driver's drvGetDevNum (hicann/runtime src/runtime/api/impl/api_error.cc
 * ApiErrorDecorator::GetDeviceCount / SetDevice go to the driver), 1 for the simulated driver. */
EMU_EXPORT int emu_keeper_device_count(void)
{
    uint32_t n = 0;
    return drvGetDevNum(&n) == 0 ? (int)n : -1;
}

/* The device memory of the simulated driver (emu_driver.c emu_drv_hbm_size): ONE pool that all
 * allocations share, 512-byte granules. */
EMU_EXPORT uint64_t emu_keeper_device_memory(void)
{
    return emu_drv_hbm_size();
}

EMU_EXPORT int emu_keeper_boot(char *why, size_t n)
{
    int64_t version = -1;
    /* the runtime lives in this library (STATIC_RT_LIB=1): nothing is opened by name */
    if (halGetDeviceInfo(0, 0 /* MODULE_TYPE_SYSTEM */, 1 /* INFO_TYPE_VERSION */, &version) != 0) {
        snprintf(why, n, "halGetDeviceInfo of the simulated driver failed");
        return -1;
    }
    return BOOT_CAMODEL;
}
#else
/* The devices this runtime has: -1, i.e. the emulated runtime library's stand-in for the
 * installed hardware (EMU_DEVICE_COUNT, emu_runtime.c device_count). */
EMU_EXPORT int emu_keeper_device_count(void)
{
    return -1;
}

/* The device memory: 0, i.e. the emulated runtime library's own model (EMU_DEVICE_MEM_TOTAL). */
EMU_EXPORT uint64_t emu_keeper_device_memory(void)
{
    return 0;
}

/* REGISTER_PLATFORM_LIB_INFO of the chips the emulator models: CHIP_DAVID (15, 950) ->
 * libruntime_v200.so; CHIP_910_B_93 (5) and any chip without an entry -> libruntime_v100.so. */
static const char *impl_name(void)
{
    hal_get_device_info_fn hal = (hal_get_device_info_fn)dlsym(RTLD_DEFAULT, "halGetDeviceInfo");
    int64_t version = 0;
    if (hal && hal(0, 0, 1, &version) == 0)
        return ((version >> 8) & 0xff) == 15 ? "libruntime_v200.so" : "libruntime_v100.so";
    const char *soc = getenv("EMU_SOC_NAME");
    return (soc && strncmp(soc, "Ascend950", 9) == 0) ? "libruntime_v200.so" : "libruntime_v100.so";
}

EMU_EXPORT int emu_keeper_boot(char *why, size_t n)
{
    const char *name = impl_name();
    void *h = dlopen(name, RTLD_NOW);
    if (!h) {
        const char *err = dlerror();
        snprintf(why, n, "Failed to open library %s, dlerror=%s.", name, err ? err : "unknown");
        return -1;
    }
    if (!dlsym(h, "ConstructRuntimeImpl")) {
        snprintf(why, n, "Failed to find symbol in %s.", name);
        dlclose(h);
        return -1;
    }
    return BOOT_IMPL | (dlopen("libtsdclient.so", RTLD_LAZY | RTLD_NODELETE) ? BOOT_TSDCLIENT : 0);
}
#endif
