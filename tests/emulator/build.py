"""Build and drive the CANN host emulator (test helper; no Ascend hardware needed).

``build_toolkit(root, layout)`` compiles the C sources in ``src/`` with the system C compiler
(``$CC`` or ``cc``) into a fake CANN install under ``root`` and returns its ASCEND_HOME_PATH:

* ``"8.x"``: ``<root>/ascend-toolkit/8.1.RC1/{lib64,opp}`` with ``latest -> 8.1.RC1``;
  lib64 holds ``libascendcl.so``, ``libnnopbase.so`` and ``libopapi.so``; the home returned is
  ``<root>/ascend-toolkit/latest``.
* ``"9.x"``: ``<root>/cann/{lib64,opp}``; lib64 holds ``libacl_rt.so`` (the runtime),
  ``libascendcl.so`` (compat: no code, DT_NEEDED on libacl_rt.so), ``libnnopbase.so``,
  ``libopapi_nn.so`` (the ops; DT_NEEDED on libopapi_math.so, libnnopbase.so, libacl_rt.so) and
  ``libopapi_math.so`` (a placeholder); the home returned is ``<root>/cann``.

Every library has a SONAME equal to its file name and NO rpath/runpath, so it only loads when its
dependencies are already loaded (preloaded by absolute path with RTLD_GLOBAL) or on the loader's
search path, exactly like an install without ``set_env.sh``.

``stub=True`` builds a runtime whose default device count is 0 (no driver): aclrtGetDeviceCount
answers 0 with status 0 and aclrtSetDevice fails with 207004. The same behaviour is available at
run time in any build with ``EMU_DEVICE_COUNT=0`` (or ``Emulator.set_device_count(0)``).

One process can host ONE emulated toolkit: the libraries of two toolkits share SONAMEs, so the
dynamic loader would satisfy the second toolkit's dependencies with the first one's libraries.
Use a subprocess for a second layout.

``Emulator(home)`` wraps the control API exported by the runtime library (see README.md).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import shutil
import subprocess
from pathlib import Path

__all__ = ["build_toolkit", "Emulator", "EmulatorBuildError", "LAYOUTS", "library_paths",
           "toolkit_env"]

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
HEADERS = HERE.parents[1] / "headers"
LAYOUTS = ("8.x", "9.x")
CANN_VERSION_DIR = "8.1.RC1"

# Flags of every library: the brief's "-shared -fPIC -O2 -Wall -Wl,-soname,<file>", plus hidden
# visibility (only the API is exported) and -z defs (no undefined symbol slips through).
_CFLAGS = ["-fPIC", "-O2", "-Wall", "-std=gnu11", "-fvisibility=hidden"]
_SOURCES = ("emu_runtime", "emu_nnopbase", "emu_ops", "emu_kernels", "emu_compat", "emu_math")
_OBJ_CACHE: dict[tuple, Path] = {}


class EmulatorBuildError(RuntimeError):
    """The emulator could not be built (no C compiler, or a compile/link error)."""


def _compiler() -> list[str]:
    cc = shlex.split(os.environ.get("CC") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        raise EmulatorBuildError(
            f"C compiler {cc[0] if cc else '(empty $CC)'!r} not found: the CANN emulator is built from C "
            "sources at test time; install gcc (apt-get install gcc) or set CC")
    return cc


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise EmulatorBuildError(f"command failed ({proc.returncode}): {shlex.join(cmd)}\n{proc.stderr}")


def _digest(cc: list[str], stub: bool) -> str:
    h = hashlib.sha256(repr((cc, stub, _CFLAGS)).encode())
    for p in sorted(SRC.iterdir()) + sorted(HEADERS.glob("*.h")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _objects(cc: list[str], objdir: Path, stub: bool) -> Path:
    """Compile every source to objdir (in parallel); reuse a previous compile of the same sources."""
    key = (tuple(cc), stub, _digest(cc, stub))
    cached = _OBJ_CACHE.get(key)
    if cached and all((cached / f"{s}.o").exists() for s in _SOURCES):
        return cached
    objdir.mkdir(parents=True, exist_ok=True)
    defines = ["-DEMU_DEFAULT_DEVICE_COUNT=0"] if stub else []
    procs = []
    for s in _SOURCES:
        cmd = [*cc, *_CFLAGS, *defines, f"-I{HEADERS}", f"-I{SRC}", "-c", str(SRC / f"{s}.c"),
               "-o", str(objdir / f"{s}.o")]
        procs.append((cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    errors = []
    for cmd, p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            errors.append(f"command failed ({p.returncode}): {shlex.join(cmd)}\n{err}")
    if errors:
        raise EmulatorBuildError("\n".join(errors))
    _OBJ_CACHE[key] = objdir
    return objdir


def _link(cc: list[str], out: Path, objs: list[Path], needed: list[str]) -> None:
    """Link a shared library whose SONAME is its file name, DT_NEEDED on `needed` (in out's dir)."""
    cmd = [*cc, "-shared", "-fPIC", "-O2", "-Wall", f"-Wl,-soname,{out.name}", "-Wl,-z,defs",
           "-o", str(out), *map(str, objs)]
    if needed:
        cmd += ["-Wl,--no-as-needed", f"-L{out.parent}", *[f"-l:{n}" for n in needed]]
    cmd += ["-lm", "-lpthread"]
    _run(cmd)


# (file, objects, DT_NEEDED) in link order, per layout
_PLAN = {
    "8.x": [
        ("libascendcl.so", ["emu_runtime"], []),
        ("libnnopbase.so", ["emu_nnopbase"], ["libascendcl.so"]),
        ("libopapi.so", ["emu_ops", "emu_kernels"], ["libnnopbase.so", "libascendcl.so"]),
    ],
    "9.x": [
        ("libacl_rt.so", ["emu_runtime"], []),
        ("libascendcl.so", ["emu_compat"], ["libacl_rt.so"]),
        ("libnnopbase.so", ["emu_nnopbase"], ["libacl_rt.so"]),
        ("libopapi_math.so", ["emu_math"], []),
        ("libopapi_nn.so", ["emu_ops", "emu_kernels"], ["libopapi_math.so", "libnnopbase.so", "libacl_rt.so"]),
    ],
}


def build_toolkit(root: Path, layout: str = "8.x", *, stub: bool = False) -> Path:
    """Build the emulated toolkit under `root` and return its ASCEND_HOME_PATH (see module doc).

    Rebuilding into the same root is safe even while an older build is loaded: libraries are
    replaced by rename, never rewritten in place.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}: expected one of {', '.join(LAYOUTS)}")
    root = Path(root).resolve()
    cc = _compiler()
    tag = layout + ("-stub" if stub else "")
    objdir = _objects(cc, root / ".emu-build" / ("obj-stub" if stub else "obj"), stub)
    stage = root / ".emu-build" / tag
    stage.mkdir(parents=True, exist_ok=True)
    for name, objs, needed in _PLAN[layout]:
        _link(cc, stage / name, [objdir / f"{o}.o" for o in objs], needed)

    if layout == "8.x":
        versioned = root / "ascend-toolkit" / CANN_VERSION_DIR
        home = root / "ascend-toolkit" / "latest"
        (versioned / "lib64").mkdir(parents=True, exist_ok=True)
        (versioned / "opp").mkdir(exist_ok=True)
        if not home.is_symlink() and not home.exists():
            home.symlink_to(CANN_VERSION_DIR)
    else:
        home = root / "cann"
        (home / "lib64").mkdir(parents=True, exist_ok=True)
        (home / "opp").mkdir(exist_ok=True)
    (home / "opp" / "version.info").write_text(f"Version={CANN_VERSION_DIR}\n")
    for name, _, _ in _PLAN[layout]:
        tmp = home / "lib64" / f".{name}.tmp"
        shutil.copy2(stage / name, tmp)
        os.replace(tmp, home / "lib64" / name)
    return home


def library_paths(home: Path) -> list[Path]:
    """The toolkit's libraries in dependency (= preload) order; the op library is last."""
    lib64 = Path(home) / "lib64"
    if (lib64 / "libacl_rt.so").exists():
        names = ["libacl_rt.so", "libascendcl.so", "libnnopbase.so", "libopapi_math.so", "libopapi_nn.so"]
    else:
        names = ["libascendcl.so", "libnnopbase.so", "libopapi.so"]
    return [lib64 / n for n in names]


def toolkit_env(home: Path) -> dict[str, str]:
    """What set_env.sh of the toolkit would export (for subprocesses)."""
    home = Path(home)
    return {"ASCEND_HOME_PATH": str(home), "ASCEND_TOOLKIT_HOME": str(home),
            "ASCEND_OPP_PATH": str(home / "opp"), "ASCEND_AICPU_PATH": str(home),
            "LD_LIBRARY_PATH": str(home / "lib64")}


class Emulator:
    """ctypes access to the emulator's control API.

    It loads the runtime library of the toolkit at `home` by absolute path with RTLD_GLOBAL
    (``lib64/libacl_rt.so`` when present, else ``lib64/libascendcl.so``): the very file a binding
    loads, so the dynamic loader shares one copy of the state between the two.
    """

    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        lib64 = self.home / "lib64"
        rt9 = lib64 / "libacl_rt.so"
        self.layout = "9.x" if rt9.exists() else "8.x"
        self.runtime_path = rt9 if rt9.exists() else lib64 / "libascendcl.so"
        lib = ctypes.CDLL(str(self.runtime_path), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        for name, res, args in (
            ("emu_live", ctypes.c_int64, [ctypes.c_char_p]),
            ("emu_calls", ctypes.c_int64, [ctypes.c_char_p]),
            ("emu_misuse", ctypes.c_int64, []),
            ("emu_last_misuse", ctypes.c_char_p, []),
            ("emu_fail", None, [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int]),
            ("emu_reset_faults", None, []),
            ("emu_reset_counters", None, []),
            ("emu_set_device_count", None, [ctypes.c_int]),
        ):
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
        self._lib = lib

    def live(self, kind: str) -> int:
        """Live objects of `kind` (see README.md for the kinds); ValueError for an unknown kind."""
        n = self._lib.emu_live(kind.encode())
        if n < 0:
            raise ValueError(f"unknown kind {kind!r}")
        return n

    def calls(self, func: str) -> int:
        """How many times the exported function `func` has been called (since reset_counters)."""
        return self._lib.emu_calls(func.encode())

    def misuse(self) -> int:
        """Double frees, uses of freed/unknown handles, bad device addresses (since reset_counters)."""
        return self._lib.emu_misuse()

    def last_misuse(self) -> str:
        """Description of the latest misuse ('' when none)."""
        return (self._lib.emu_last_misuse() or b"").decode(errors="replace")

    def fail(self, func: str, status: int, skip: int = 0, times: int = 1) -> None:
        """Let the next `skip` calls of `func` pass, then fail `times` calls with `status`
        (times < 0: every later call). Pointer-returning functions return NULL instead."""
        self._lib.emu_fail(func.encode(), status, skip, times)

    def reset_faults(self) -> None:
        self._lib.emu_reset_faults()

    def reset_counters(self) -> None:
        """Zero the call counters and the misuse count (live counts are real state: kept)."""
        self._lib.emu_reset_counters()

    def set_device_count(self, n: int | None) -> None:
        """Override the device count (0 = no driver); None returns to EMU_DEVICE_COUNT / default."""
        self._lib.emu_set_device_count(-1 if n is None else n)
