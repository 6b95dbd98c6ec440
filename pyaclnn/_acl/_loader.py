"""Find a CANN install and dlopen its three libraries by absolute path.

Search order for the install ("home"): ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, the 9.x default
/usr/local/Ascend/cann, the 8.x default /usr/local/Ascend/ascend-toolkit/latest.
In a home, ``lib64/`` must hold:
- the runtime: ``libacl_rt.so`` (9.x) or ``libascendcl.so`` (8.x, and 9.x compat);
- ``libnnopbase.so`` (aclCreateTensor, executors);
- the op library: ``libopapi_nn.so`` (9.x, needs libopapi_math.so) or ``libopapi.so`` (8.x).
  Never both: CANN does not support the aggregate library beside the per-repo ones.
Dependencies (DT_NEEDED) that live in the toolkit or driver directories are preloaded first,
by absolute path with RTLD_GLOBAL, so nothing depends on LD_LIBRARY_PATH.

CANN also opens libraries by bare name at run time (``OPENED_BY_NAME``), and its libraries have
no RPATH: such an open only succeeds through LD_LIBRARY_PATH, or when a library with that SONAME
is already loaded. So those found in the install are preloaded by absolute path too, before
aclInit. The driver is looked for in /usr/local/Ascend/driver and where /etc/ascend_install.info
(``Driver_Install_Path_Param=``, as set_env.sh reads it) says it is installed.

Under CANN's NPU Simulator (``Simulator``) some of those names belong to the simulator: its
folder, first on LD_LIBRARY_PATH, holds the ``libruntime.so`` and ``libascend_hal.so`` the
dynamic linker must pick. pyaclnn then loads none of them by path (nor anything they replace).
"""
from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._core import elf as _elf
from .._core import env as _env
from ._ffi import ffi, hal_ffi

DEFAULT_DRIVER_ROOT = "/usr/local/Ascend"
DRIVER_SUBDIRS = ("driver/lib64", "driver/lib64/common", "driver/lib64/driver")  # as set_env.sh

# What CANN dlopens by bare name (sources: hicann/runtime, hicann/opbase, abi.md §5):
# - the runtime's implementation, chosen by chip (runtime_keeper.cc CreateRuntimeImpl; the names
#   in src/runtime/config/*/dev_info_reg.cc): libruntime_v100.so (910B, 910_93), libruntime_v200.so
#   (950), libruntime_v201.so; then libtsdclient.so (runtime.cc Runtime::TsdClientInit);
# - nnopbase: libopapi_math.so (indv_lib_wrapper.cpp ApiWrapper::GetFunc) and the per-repo op
#   libraries of $ASCEND_HOME_PATH/lib64 (indv_collector.cpp), 9.x layout only;
# - the driver's libascend_hal.so (logging, tracing and profiling open it by name).
RUNTIME_IMPLS = ("libruntime_v100.so", "libruntime_v200.so", "libruntime_v201.so")
TSDCLIENT = "libtsdclient.so"
OPENED_BY_NAME = RUNTIME_IMPLS + (TSDCLIENT,)
OPAPI_BY_NAME = ("libopapi_math.so", "libopapi_nn.so", "libopapi_cv.so", "libopapi_transformer.so",
                 "libopapi_oam.so", "libopapi_legacy.so")
DRIVER_BY_NAME = ("libascend_hal.so",)

# Which implementation the runtime opens (runtime_keeper.cc GetLibRuntimeSoName): the chip the
# driver reports, halGetDeviceInfo(0, MODULE_TYPE_SYSTEM = 0, INFO_TYPE_VERSION = 1) >> 8 & 0xff
# (GetDeviceType, PLAT_GET_CHIP of pkg_inc/runtime/runtime/config.h), looked up in the
# REGISTER_PLATFORM_LIB_INFO table of src/runtime/config/*/dev_info_reg.cc (chip numbers:
# src/runtime/core/inc/soc/soc_define.hpp); a chip in range without an entry gets the default,
# libruntime_v100.so. CHIP_NO_DEVICE (6) and values past CHIP_END (22) are not taken as a chip.
CHIP_RUNTIME_IMPL = {
    0: "libruntime_v100.so",   # CHIP_MINI
    1: "libruntime_v100.so",   # CHIP_CLOUD (910)
    2: "libruntime_v100.so",   # CHIP_ADC
    4: "libruntime_v100.so",   # CHIP_DC (310P)
    5: "libruntime_v100.so",   # CHIP_910_B_93 (910B, 910_93)
    7: "libruntime_v100.so",   # CHIP_MINI_V3
    8: "libruntime_v100.so",   # CHIP_ASCEND_031
    9: "libruntime_v100.so",   # CHIP_NANO
    11: "libruntime_v100.so",  # CHIP_AS31XM1
    12: "libruntime_v100.so",  # CHIP_610LITE
    14: "libruntime_v100.so",  # CHIP_BS9SX1A
    15: "libruntime_v200.so",  # CHIP_DAVID (950)
    16: "libruntime_v200.so",  # CHIP_CLOUD_V5
    17: "libruntime_v201.so",  # CHIP_MC62CM12A
    18: "libruntime_v201.so",  # CHIP_MC32DM11A
    19: "libruntime_v200.so",  # CHIP_ASCEND_350
}
DEFAULT_RUNTIME_IMPL = "libruntime_v100.so"
CHIP_NO_DEVICE, CHIP_END = 6, 22

# The NPU Simulator. A toolkit keeps one per chip in tools/simulator/<chip>/lib: the simulator's
# runtime libruntime_camodel.so and driver libnpu_drv_camodel.so (hicann/runtime
# src/runtime/cmake/cmodel.cmake runtime_camodel_<product>, src/cmodel_driver/CMakeLists.txt
# npu_drv_camodel_<product>). The ops repos run on it by putting that folder first on
# LD_LIBRARY_PATH with the links libruntime.so -> libruntime_camodel.so and libascend_hal.so ->
# libnpu_drv_camodel.so in it (hicann/ops-math scripts/build_example.sh): the toolkit's runtime
# names libruntime.so in DT_NEEDED, without a path (src/acl/aclrt/CMakeLists.txt), so the dynamic
# linker takes the simulator's. That runtime is built with STATIC_RT_LIB=1 and
# CFG_DEV_PLATFORM_PC: it constructs itself (runtime_keeper.cc, static CreateRuntimeImpl) and
# skips Runtime::TsdClientInit (runtime.cc), so it opens no libruntime_v*.so and no libtsdclient.so.
SIMULATOR_DIR = "tools/simulator"
SIMULATOR_RUNTIME = "libruntime_camodel.so"
SIMULATOR_DRIVER = "libnpu_drv_camodel.so"
SIMULATOR_LINKS = {"libruntime.so": SIMULATOR_RUNTIME, "libascend_hal.so": SIMULATOR_DRIVER}


@dataclass(frozen=True)
class Simulator:
    """The NPU Simulator this process runs on: ``chip`` (its folder's name under tools/simulator),
    ``lib`` (the folder of the simulator's runtime) and ``substitutes``: the library names of the
    LD_LIBRARY_PATH folders ahead of the toolkit's (the simulator's, its links), which the dynamic
    linker finds there and pyaclnn never loads from elsewhere."""
    chip: str
    lib: Path
    substitutes: frozenset[str]

    def as_dict(self) -> dict[str, Any]:
        return {"chip": self.chip, "lib": str(self.lib), "substitutes": sorted(self.substitutes)}


def simulator_dirs(home: Path) -> list[Path]:
    """The simulators the toolkit at ``home`` has: ``tools/simulator/*/lib`` (where ops-math
    scripts/build_example.sh looks) and ``<arch>-linux/simulator/*/lib`` (where the runtime's own
    CI finds them in an installed toolkit: hicann/runtime
    tests/cmodel_test/check_runtime_cmodel_undefined_symbols.sh; ops-nn build.sh too), each
    holding the simulator's runtime; one folder reached both ways is listed once."""
    found: dict[Path, Path] = {}
    for pattern in (f"{SIMULATOR_DIR}/*/lib", "*-linux/simulator/*/lib"):
        for lib in sorted(home.glob(pattern)):
            if (lib / SIMULATOR_RUNTIME).is_file():
                found.setdefault(_resolved(lib), lib)
    return list(found.values())


def simulator_chip(lib: Path) -> str:
    """The chip of a simulator's lib folder: the name of the folder above it (tools/simulator/<chip>/lib)."""
    return lib.parent.name if lib.name == "lib" else lib.name


def _ahead_of(lib_dirs: list[Path]) -> list[Path]:
    """The LD_LIBRARY_PATH folders the dynamic linker searches before the toolkit's own
    (``lib_dirs``; all of them when none is on it)."""
    own = {_resolved(d) for d in lib_dirs}
    ahead = []
    for entry in _env.ld_library_path():
        if _resolved(Path(entry)) in own:
            break
        ahead.append(Path(entry))
    return ahead


def active_simulator(lib_dirs: list[Path]) -> Simulator | None:
    """The simulator the dynamic linker will use: the ``libruntime.so`` it finds first on
    LD_LIBRARY_PATH, ahead of the toolkit's (``lib_dirs``), is a link to the simulator's runtime
    (in the simulator's folder, as ops-math build_example.sh links it, or in a folder of links
    of its own, as ops-nn build.sh build_single_example makes one). Its ``lib`` is the folder of
    the runtime the link resolves to; ``substitutes``: every library name in the folders ahead of
    the toolkit's, all of which the dynamic linker finds by name. None otherwise."""
    ahead = _ahead_of(lib_dirs)
    for folder in ahead:
        if (folder / "libruntime.so").exists():
            runtime = _resolved(folder / "libruntime.so")
            if runtime.name != SIMULATOR_RUNTIME:
                return None  # another runtime comes first: not the simulator's
            names = frozenset(p.name for d in ahead if d.is_dir() for p in d.iterdir() if ".so" in p.name)
            return Simulator(simulator_chip(runtime.parent), runtime.parent, names)
    return None


def unlinked_simulator(lib_dirs: list[Path]) -> Path | None:
    """A simulator folder on LD_LIBRARY_PATH, ahead of the toolkit's lib64, that is not in use
    for want of a ``libruntime.so`` link to its runtime: the toolkit's runtime then runs."""
    if active_simulator(lib_dirs) is not None:
        return None
    return next((d for d in _ahead_of(lib_dirs) if (d / SIMULATOR_RUNTIME).is_file()), None)


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def driver_root() -> tuple[Path | None, str]:
    """Where the install info file says the driver is (its Driver_Install_Path_Param), and the
    file read (PYACLNN_ASCEND_INSTALL_INFO, else /etc/ascend_install.info)."""
    info = _env.install_info()
    try:
        text = Path(info).read_text(errors="replace")
    except OSError:
        return None, info
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().lower() == "driver_install_path_param" and value.strip():
            return Path(value.strip()), info
    return None, info


def driver_dirs() -> list[Path]:
    """The driver's library directories that exist: the install info's first, then the default."""
    roots = [driver_root()[0], Path(DEFAULT_DRIVER_ROOT)]
    dirs: list[Path] = []
    for root in roots:
        if root is not None:
            dirs += [root / sub for sub in DRIVER_SUBDIRS if (root / sub).is_dir() and root / sub not in dirs]
    return dirs


@dataclass
class Discovery:
    """Where CANN was found, or why not (``attempts`` lists every place looked at)."""
    home: Path | None = None
    layout: str | None = None                  # "9.x" or "8.x"
    runtime: Path | None = None
    nnopbase: Path | None = None
    opapi: Path | None = None
    search_dirs: list[Path] = field(default_factory=list)
    by_name: list[Path] = field(default_factory=list)   # OPENED_BY_NAME etc. found in the install
    attempts: list[str] = field(default_factory=list)
    simulator: Simulator | None = None                  # the NPU Simulator in use, if any
    simulators: list[Path] = field(default_factory=list)  # the toolkit's tools/simulator/*/lib
    unlinked_simulator: Path | None = None              # on LD_LIBRARY_PATH but without libruntime.so

    @property
    def leave(self) -> frozenset[str]:
        """Library names pyaclnn never loads by path: the simulator's substitutes."""
        return self.simulator.substitutes if self.simulator is not None else frozenset()

    @property
    def found(self) -> bool:
        return self.runtime is not None and self.nnopbase is not None and self.opapi is not None

    def as_dict(self) -> dict[str, Any]:
        return {"home": _s(self.home), "layout": self.layout, "runtime": _s(self.runtime),
                "nnopbase": _s(self.nnopbase), "opapi": _s(self.opapi),
                "search_dirs": [str(d) for d in self.search_dirs], "by_name": [str(p) for p in self.by_name],
                "attempts": list(self.attempts),
                "simulator": None if self.simulator is None else self.simulator.as_dict(),
                "simulators": [str(d) for d in self.simulators],
                "unlinked_simulator": _s(self.unlinked_simulator)}


def _s(p: Path | None) -> str | None:
    return None if p is None else str(p)


def _lib_dirs(home: Path) -> list[Path]:
    arch = platform.machine()
    dirs = [home / "lib64", home / f"{arch}-linux" / "lib64",
            home / "opp/built-in/op_impl/ai_core/tbe/op_api/lib/linux" / arch]
    return [d for d in dirs if d.is_dir()]


def _first(dirs: list[Path], name: str) -> Path | None:
    return next((d / name for d in dirs if (d / name).is_file()), None)


def discover() -> Discovery:
    """Look for a usable CANN install; never raises, never loads anything."""
    found = Discovery()
    for origin, home in _env.cann_homes():
        if not home.is_dir():
            found.attempts.append(f"{home} ({origin}): no such directory")
            continue
        dirs = _lib_dirs(home)
        runtime = _first(dirs, "libacl_rt.so") or _first(dirs, "libascendcl.so")
        nnopbase = _first(dirs, "libnnopbase.so")
        opapi = _first(dirs, "libopapi_nn.so") or _first(dirs, "libopapi.so")
        missing = [name for name, p in (("libascendcl.so/libacl_rt.so", runtime),
                                        ("libnnopbase.so", nnopbase),
                                        ("libopapi_nn.so/libopapi.so", opapi)) if p is None]
        if missing:
            found.attempts.append(f"{home} ({origin}): missing {', '.join(missing)} in lib64")
            continue
        assert runtime and nnopbase and opapi
        found.home, found.runtime, found.nnopbase, found.opapi = home, runtime, nnopbase, opapi
        found.layout = "9.x" if runtime.name == "libacl_rt.so" or opapi.name == "libopapi_nn.so" else "8.x"
        drivers = driver_dirs()
        found.search_dirs = dirs + drivers
        found.simulators = simulator_dirs(home)
        found.simulator = active_simulator(dirs)
        found.unlinked_simulator = unlinked_simulator(dirs)
        names = OPENED_BY_NAME + (OPAPI_BY_NAME if found.layout == "9.x" else ())
        if found.simulator is not None:  # its runtime opens neither (see SIMULATOR_DIR)
            names = tuple(n for n in names if n not in OPENED_BY_NAME)
        found.by_name = [p for p in (_first(dirs, n) for n in names) if p is not None]
        found.by_name += [p for p in (_first(drivers, n) for n in DRIVER_BY_NAME) if p is not None]
        found.by_name = [p for p in found.by_name if p.name not in found.leave]
        found.attempts.append(f"{home} ({origin}): found CANN {found.layout} layout"
                              + (f", on the NPU Simulator ({found.simulator.chip}: {found.simulator.lib})"
                                 if found.simulator else ""))
        return found
    return found


class Loaded:
    """The three dlopened libraries; ``keep`` holds preloaded dependencies alive;
    ``by_name_errors`` maps each library CANN opens by name that failed to preload to why."""

    def __init__(self, runtime: Any, nnopbase: Any, opapi: Any, keep: list[Any],
                 by_name_errors: dict[str, str] | None = None, by_name_skipped: dict[str, str] | None = None) -> None:
        self.runtime, self.nnopbase, self.opapi, self.keep = runtime, nnopbase, opapi, keep
        self.by_name_errors = by_name_errors or {}
        self.by_name_skipped = by_name_skipped or {}  # found but not preloaded: why


def _preload(path: Path, dirs: list[Path], done: dict[str, Any], stack: tuple[str, ...] = (),
             leave: frozenset[str] = frozenset()) -> None:
    """dlopen the dependencies of ``path`` found in ``dirs``, deepest first, RTLD_GLOBAL; those
    named in ``leave`` (the simulator's) are left to the dynamic linker."""
    for dep in _elf.needed(path):
        if dep in done or dep in stack or dep in leave:
            continue
        dep_path = _first(dirs, dep)
        if dep_path is None:
            continue  # a system library (libc, libstdc++...): the dynamic linker finds it
        _preload(dep_path, dirs, done, stack + (dep,), leave)
        done[dep] = ffi.dlopen(str(dep_path), ffi.RTLD_NOW | ffi.RTLD_GLOBAL)


def load(found: Discovery) -> Loaded:
    """dlopen runtime, nnopbase and op library (dependencies first), then preload what CANN
    opens by name (a failure there is recorded, not raised). Raises OSError."""
    assert found.found and found.runtime and found.nnopbase and found.opapi
    done: dict[str, Any] = {}
    handles = [open_library(path, found.search_dirs, done, found.leave)
               for path in (found.runtime, found.nnopbase, found.opapi)]
    skipped: dict[str, str] = {}
    errors = preload_by_name(found, done, skipped)
    return Loaded(handles[0], handles[1], handles[2], list(done.values()), errors, skipped)


def preload_by_name(found: Discovery, done: dict[str, Any], skipped: dict[str, str] | None = None) -> dict[str, str]:
    """Load the libraries of ``found.by_name`` (not yet in ``done``) by absolute path, so CANN's
    later bare-name dlopen finds them loaded: the driver and the others first, then, of the
    runtime implementations, the one the runtime will open (``runtime_impl``; each found when
    that cannot be known), the others go to ``skipped`` with why. RTLD_GLOBAL, except the
    runtime implementations: they define the same symbols, so each stays RTLD_LOCAL (its SONAME
    still satisfies the runtime's open). Returns {file name: error} for those that would not load."""
    errors: dict[str, str] = {}
    skipped = {} if skipped is None else skipped
    others = [p for p in found.by_name if p.name not in RUNTIME_IMPLS]
    impls = [p for p in found.by_name if p.name in RUNTIME_IMPLS]
    for path in others:
        _preload_one(path, found, done, errors, local=False)
    if impls:
        chosen, how = runtime_impl(found)
        for path in impls:
            if chosen is not None and path.name != chosen:
                skipped[path.name] = f"the runtime opens {chosen} ({how})"
                continue
            _preload_one(path, found, done, errors, local=True)
    return errors


def _preload_one(path: Path, found: Discovery, done: dict[str, Any], errors: dict[str, str], local: bool) -> None:
    if path.name in done:
        return
    try:
        _preload(path, found.search_dirs, done, leave=found.leave)
        done[path.name] = ffi.dlopen(str(path), ffi.RTLD_NOW | (ffi.RTLD_LOCAL if local else ffi.RTLD_GLOBAL))
    except OSError as exc:
        errors[path.name] = str(exc)


def runtime_impl(found: Discovery) -> tuple[str | None, str]:
    """The runtime implementation library this chip's runtime opens, and how that is known: as
    the runtime's boot knows it (see CHIP_RUNTIME_IMPL), from the installed driver pyaclnn found
    and loaded (``found.by_name``), asked for device 0. (None, why) when it cannot be known so:
    no such driver (a toolkit without one, or a driver only LD_LIBRARY_PATH reaches), or the
    driver does not answer; the loader then preloads each implementation found, since the
    runtime opens the one it picks by bare name and nothing else would make that open succeed
    without LD_LIBRARY_PATH. (The runtime also tries the other devices when device 0 does not
    answer; a chip so found would be the same.)"""
    driver = next((p for p in found.by_name if p.name in DRIVER_BY_NAME), None)
    if driver is None:
        return None, "no driver found to ask for the chip"
    try:
        hal = hal_ffi.dlopen(str(driver), ffi.RTLD_NOW | ffi.RTLD_NOLOAD)  # the copy preloaded above, if any
        value = hal_ffi.new("int64_t *")
        status = hal.halGetDeviceInfo(0, 0, 1, value)
    except (OSError, AttributeError) as exc:
        return None, f"{driver} cannot be asked for the chip: {exc}"
    if status != 0:
        return None, f"halGetDeviceInfo of {driver} returned {status}"
    chip = (int(value[0]) >> 8) & 0xFF
    if chip == CHIP_NO_DEVICE or chip >= CHIP_END:
        return None, f"the driver reports no chip the runtime knows (chip type {chip})"
    return CHIP_RUNTIME_IMPL.get(chip, DEFAULT_RUNTIME_IMPL), f"chip type {chip} from halGetDeviceInfo of {driver}"


_MISSING = re.compile(r"([\w.+-]+\.so(?:\.[\d.]+)?): cannot open shared object file")
_OPEN_FAILED = re.compile(r"(?:open library|Open) ([\w.+-]+\.so(?:\.[\d.]+)?)")


def missing_libraries(found: Discovery, *texts: str) -> list[str]:
    """The shared libraries CANN or the loader could not open, named in error texts (earlier
    texts first); those the install has are left out when others are missing (they failed for
    want of the others)."""
    names: list[str] = []
    for text in texts:
        for name in _MISSING.findall(text or "") + _OPEN_FAILED.findall(text or ""):
            if name not in names:
                names.append(name)
    present = {p.name for p in found.by_name} | {p.name for p in (found.runtime, found.nnopbase, found.opapi) if p}
    return [n for n in names if n not in present] or names


def loading_fix(found: Discovery, names: list[str]) -> str:
    """The exact fix for libraries that cannot be opened (``names``), for error messages."""
    home = found.home or Path("<toolkit>")
    if any(n in DRIVER_BY_NAME for n in names):
        root, info = driver_root()
        where = f"{info} says Driver_Install_Path_Param={root}" if root else f"{info} names no driver"
        return (f"install the Ascend driver (its lib64 must hold {', '.join(DRIVER_BY_NAME)}); looked in "
                f"{DEFAULT_DRIVER_ROOT}/driver and where {where}. A driver installed elsewhere: set "
                f"Driver_Install_Path_Param=<its install dir> in {info}, or export "
                f"LD_LIBRARY_PATH=<driver>/lib64:<driver>/lib64/common:<driver>/lib64/driver before "
                f"starting Python (source {home}/set_env.sh)")
    return (f"put {', '.join(names) or 'the missing library'} in {home}/lib64 (a complete CANN install has "
            f"them; pyaclnn preloads what it finds there), or export LD_LIBRARY_PATH=<the directory that "
            f"holds it>:$LD_LIBRARY_PATH before starting Python (source {home}/set_env.sh)")


def open_library(path: Path, dirs: list[Path], done: dict[str, Any], leave: frozenset[str]) -> Any:
    """dlopen ``path`` (its dependencies in ``dirs`` first, except those named in ``leave``);
    ``done`` maps file names to the handles opened so far, so nothing is opened twice. Raises OSError."""
    _preload(path, dirs, done, leave=leave)
    handle = done.get(path.name) or ffi.dlopen(str(path), ffi.RTLD_NOW | ffi.RTLD_GLOBAL)
    done[path.name] = handle
    return handle
