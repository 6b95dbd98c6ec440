/*
 * emu_driver.c - the driver library: <driver>/lib64/driver/libascend_hal.so of an installed
 * driver, and, built with -DEMU_CAMODEL, the NPU Simulator's libnpu_drv_camodel.so. It carries the
 * entry points of emu_plugin.c too (linked in by build.py).
 *
 * Real CANN (hicann/runtime):
 * - pkg_inc/driver/ascend_hal_base.h: MODULE_TYPE_SYSTEM = 0, INFO_TYPE_VERSION = 1;
 *   pkg_inc/runtime/runtime/config.h PLAT_GET_CHIP(version) = (version >> 8) & 0xff, the chip
 *   types of src/runtime/core/inc/soc/soc_define.hpp (CHIP_910_B_93 = 5, CHIP_DAVID = 15). The
 *   runtime's boot asks this (runtime_keeper.cc GetDeviceType) to pick its implementation.
 * - src/cmodel_driver/driver_api.c halGetDeviceInfo (the simulated driver, the same source for
 *   both here): answers MODULE_TYPE_SYSTEM/INFO_TYPE_VERSION from compile-time platform settings.
 * Emulator stand-in: the chip is EMU_SOC_NAME's (Ascend950* -> CHIP_DAVID, else CHIP_910_B_93).
 * The simulated driver (-DEMU_CAMODEL) answers as the open source does instead:
 *   src/cmodel_driver/CMakeLists.txt compiles npu_drv_camodel_ascend950pr_9599 with
 *   PLATFORM_MINI_V1, so driver_api.c halGetDeviceInfo answers PLATFORM_MINI_V1_CONFIG (0),
 *   whatever the machine; it defines no halGetSocVersion (which the runtime looks up weakly,
 *   src/runtime/core/inc/runtime.hpp). How the shipped 950 simulator makes the runtime report an
 *   Ascend950 SoC name (aclrtGetSocName, via rtGetSocVersion) cannot be verified from the open
 *   sources: the emulated runtime keeps answering EMU_SOC_NAME there too.
 * Built with -DEMU_CAMODEL (libnpu_drv_camodel.so) it also has the simulated driver's device count
 * (drvGetDevNum) and the size of its device memory (emu_drv_hbm_size), below.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EMU_EXPORT __attribute__((visibility("default")))

EMU_EXPORT int halGetDeviceInfo(uint32_t devId, int32_t moduleType, int32_t infoType, int64_t *value)
{
    (void)devId;
    if (value == NULL)
        return 3; /* DRV_ERROR_INVALID_VALUE (pkg_inc/driver/ascend_hal_error.h) */
    if (moduleType == 0 && infoType == 1) {
#ifdef EMU_CAMODEL
        *value = 0; /* PLATFORM_MINI_V1_CONFIG */
#else
        const char *soc = getenv("EMU_SOC_NAME");
        int64_t chip = (soc && strncmp(soc, "Ascend950", 9) == 0) ? 15 : 5;
        *value = chip << 8;
#endif
    } else {
        *value = 0;
    }
    return 0;
}

#ifdef EMU_CAMODEL
/* src/cmodel_driver/cmodel_driver.h: "there are 1 devices", MAX_DEV_NUM (1); driver_api.c
 * drvGetDevNum answers it, whatever hardware the machine has (driver_impl.c drvDriverStubInit
 * starts the model with CHIP_NUM 1), and DRV_ERROR_INVALID_HANDLE for a NULL pointer. The
 * runtime's device count is the driver's (hicann/runtime src/runtime/api/impl/api_error.cc ApiErrorDecorator::SetDevice
 * asks rawDrv->GetDeviceCount and rejects devId >= it with RT_ERROR_DEVICE_ID). */
#define MAX_DEV_NUM 1

EMU_EXPORT int drvGetDevNum(uint32_t *num_dev)
{
    if (num_dev == NULL)
        return 4; /* DRV_ERROR_INVALID_HANDLE (pkg_inc/driver/ascend_hal_error.h) */
    *num_dev = MAX_DEV_NUM;
    return 0;
}

/* The simulated device memory: src/cmodel_driver/driver_mem.c hands every device allocation
 * (driver_api.c halMemAlloc -> drvMemAlloc -> drvMemAllocDeviceHBM) out of ONE first-fit pool of
 * MAX_ALLOC = HBM_MAX_ADDR - HBM_BASE bytes (driver_mem.h: 0x40000000 - 0x10000000 = 768 MiB for
 * MODEL_V100, which src/cmodel_driver/CMakeLists.txt selects for ascend950pr_9599), sizes
 * rounded up to 512 bytes; a larger request, or one the pool has no room for, is
 * DRV_ERROR_OUT_OF_MEMORY. The real driver has no call that reports the pool (halMemGetInfo is
 * a no-op there): this is an emulator hook, read by the emulated runtime through emu_keeper.c. */
EMU_EXPORT uint64_t emu_drv_hbm_size(void)
{
    return 0x40000000ull - 0x10000000ull;
}
#endif
