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
"""
from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _elf, _env
from ._ffi import ffi

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
OPENED_BY_NAME = RUNTIME_IMPLS + ("libtsdclient.so",)
OPAPI_BY_NAME = ("libopapi_math.so", "libopapi_nn.so", "libopapi_cv.so", "libopapi_transformer.so",
                 "libopapi_oam.so", "libopapi_legacy.so")
DRIVER_BY_NAME = ("libascend_hal.so",)


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

    @property
    def found(self) -> bool:
        return self.runtime is not None and self.nnopbase is not None and self.opapi is not None

    def as_dict(self) -> dict[str, Any]:
        return {"home": _s(self.home), "layout": self.layout, "runtime": _s(self.runtime),
                "nnopbase": _s(self.nnopbase), "opapi": _s(self.opapi),
                "search_dirs": [str(d) for d in self.search_dirs], "by_name": [str(p) for p in self.by_name],
                "attempts": list(self.attempts)}


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
        names = OPENED_BY_NAME + (OPAPI_BY_NAME if found.layout == "9.x" else ())
        found.by_name = [p for p in (_first(dirs, n) for n in names) if p is not None]
        found.by_name += [p for p in (_first(drivers, n) for n in DRIVER_BY_NAME) if p is not None]
        found.attempts.append(f"{home} ({origin}): found CANN {found.layout} layout")
        return found
    return found


class Loaded:
    """The three dlopened libraries; ``keep`` holds preloaded dependencies alive;
    ``by_name_errors`` maps each library CANN opens by name that failed to preload to why."""

    def __init__(self, runtime: Any, nnopbase: Any, opapi: Any, keep: list[Any],
                 by_name_errors: dict[str, str] | None = None) -> None:
        self.runtime, self.nnopbase, self.opapi, self.keep = runtime, nnopbase, opapi, keep
        self.by_name_errors = by_name_errors or {}


def _preload(path: Path, dirs: list[Path], done: dict[str, Any], stack: tuple[str, ...] = ()) -> None:
    """dlopen the dependencies of ``path`` found in ``dirs``, deepest first, RTLD_GLOBAL."""
    for dep in _elf.needed(path):
        if dep in done or dep in stack:
            continue
        dep_path = _first(dirs, dep)
        if dep_path is None:
            continue  # a system library (libc, libstdc++...): the dynamic linker finds it
        _preload(dep_path, dirs, done, stack + (dep,))
        done[dep] = ffi.dlopen(str(dep_path), ffi.RTLD_NOW | ffi.RTLD_GLOBAL)


def load(found: Discovery) -> Loaded:
    """dlopen runtime, nnopbase and op library (dependencies first), then preload what CANN
    opens by name (a failure there is recorded, not raised). Raises OSError."""
    assert found.found and found.runtime and found.nnopbase and found.opapi
    done: dict[str, Any] = {}
    handles = [open_library(path, found.search_dirs, done)
               for path in (found.runtime, found.nnopbase, found.opapi)]
    errors = preload_by_name(found, done)
    return Loaded(handles[0], handles[1], handles[2], list(done.values()), errors)


def preload_by_name(found: Discovery, done: dict[str, Any]) -> dict[str, str]:
    """Load every library of ``found.by_name`` (not yet in ``done``) by absolute path, so CANN's
    later bare-name dlopen finds it loaded. RTLD_GLOBAL, except the runtime implementations:
    they define the same symbols, so each stays RTLD_LOCAL (its SONAME still satisfies the
    runtime's open). Returns {file name: error} for those that would not load."""
    errors: dict[str, str] = {}
    for path in found.by_name:
        if path.name in done:
            continue
        try:
            _preload(path, found.search_dirs, done)
            local = path.name in RUNTIME_IMPLS
            done[path.name] = ffi.dlopen(str(path), ffi.RTLD_NOW | (ffi.RTLD_LOCAL if local else ffi.RTLD_GLOBAL))
        except OSError as exc:
            errors[path.name] = str(exc)
    return errors


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


def open_library(path: Path, dirs: list[Path], done: dict[str, Any]) -> Any:
    """dlopen ``path`` (its dependencies in ``dirs`` first); ``done`` maps file names to the
    handles opened so far, so nothing is opened twice. Raises OSError."""
    _preload(path, dirs, done)
    handle = done.get(path.name) or ffi.dlopen(str(path), ffi.RTLD_NOW | ffi.RTLD_GLOBAL)
    done[path.name] = handle
    return handle
