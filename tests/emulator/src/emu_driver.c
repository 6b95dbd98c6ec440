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
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EMU_EXPORT __attribute__((visibility("default")))

EMU_EXPORT int halGetDeviceInfo(uint32_t devId, int32_t moduleType, int32_t infoType, int64_t *value)
{
    (void)devId;
    if (value == NULL)
        return 1; /* DRV_ERROR_INVALID_VALUE */
    if (moduleType == 0 && infoType == 1) {
        const char *soc = getenv("EMU_SOC_NAME");
        int64_t chip = (soc && strncmp(soc, "Ascend950", 9) == 0) ? 15 : 5;
        *value = chip << 8;
    } else {
        *value = 0;
    }
    return 0;
}
