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
"""
from __future__ import annotations

import os
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _elf
from ._ffi import ffi

DEFAULT_HOMES = ("/usr/local/Ascend/cann", "/usr/local/Ascend/ascend-toolkit/latest")
DRIVER_DIRS = ("/usr/local/Ascend/driver/lib64", "/usr/local/Ascend/driver/lib64/common",
               "/usr/local/Ascend/driver/lib64/driver")


@dataclass
class Discovery:
    """Where CANN was found, or why not (``attempts`` lists every place looked at)."""
    home: Path | None = None
    layout: str | None = None                  # "9.x" or "8.x"
    runtime: Path | None = None
    nnopbase: Path | None = None
    opapi: Path | None = None
    search_dirs: list[Path] = field(default_factory=list)
    attempts: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.runtime is not None and self.nnopbase is not None and self.opapi is not None

    def as_dict(self) -> dict[str, Any]:
        return {"home": _s(self.home), "layout": self.layout, "runtime": _s(self.runtime),
                "nnopbase": _s(self.nnopbase), "opapi": _s(self.opapi),
                "search_dirs": [str(d) for d in self.search_dirs], "attempts": list(self.attempts)}


def _s(p: Path | None) -> str | None:
    return None if p is None else str(p)


def candidate_homes() -> list[tuple[str, Path]]:
    homes: list[tuple[str, Path]] = []
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        value = os.environ.get(var)
        if value:
            homes.append((f"${var}", Path(value)))
    homes += [("default", Path(p)) for p in DEFAULT_HOMES]
    seen: set[Path] = set()
    unique = []
    for origin, path in homes:
        if path not in seen:
            seen.add(path)
            unique.append((origin, path))
    return unique


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
    for origin, home in candidate_homes():
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
        found.search_dirs = dirs + [Path(d) for d in DRIVER_DIRS if Path(d).is_dir()]
        found.attempts.append(f"{home} ({origin}): found CANN {found.layout} layout")
        return found
    return found


class Loaded:
    """The three dlopened libraries; ``keep`` holds preloaded dependencies alive."""

    def __init__(self, runtime: Any, nnopbase: Any, opapi: Any, keep: list[Any]) -> None:
        self.runtime, self.nnopbase, self.opapi, self.keep = runtime, nnopbase, opapi, keep


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
    """dlopen runtime, nnopbase and op library (dependencies first). Raises OSError."""
    assert found.found and found.runtime and found.nnopbase and found.opapi
    done: dict[str, Any] = {}
    handles = [open_library(path, found.search_dirs, done)
               for path in (found.runtime, found.nnopbase, found.opapi)]
    return Loaded(handles[0], handles[1], handles[2], list(done.values()))


def open_library(path: Path, dirs: list[Path], done: dict[str, Any]) -> Any:
    """dlopen ``path`` (its dependencies in ``dirs`` first); ``done`` maps file names to the
    handles opened so far, so nothing is opened twice. Raises OSError."""
    _preload(path, dirs, done)
    handle = done.get(path.name) or ffi.dlopen(str(path), ffi.RTLD_NOW | ffi.RTLD_GLOBAL)
    done[path.name] = handle
    return handle
