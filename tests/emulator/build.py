"""Build and drive the CANN host emulator (test helper; no Ascend hardware needed).

``build_toolkit(root, layout)`` compiles the C sources in ``src/`` with the system C compiler
(``$CC`` or ``cc``) into a fake CANN install under ``root`` and returns its ASCEND_HOME_PATH:

* ``"8.x"``: ``<root>/ascend-toolkit/8.1.RC1/{lib64,opp}`` with ``latest -> 8.1.RC1``;
  lib64 holds ``libascendcl.so``, ``libnnopbase.so`` and ``libopapi.so``; the home returned is
  ``<root>/ascend-toolkit/latest``.
* ``"9.x"``: ``<root>/cann/{lib64,opp}``; lib64 holds ``libacl_rt.so`` (the runtime),
  ``libascendcl.so`` (compat: a filter of libacl_rt.so, DT_NEEDED on it), ``libnnopbase.so``,
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
import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

__all__ = ["build_toolkit", "build_custom_opp", "build_simulator", "Emulator", "EmulatorBuildError", "LAYOUTS",
           "library_paths", "plugin_paths", "toolkit_env", "simulator_env", "simulator_lib", "aclnnop_dir", "SOC_DIR",
           "KEEPER"]

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
HEADERS = HERE.parents[1] / "headers"
INCLUDE = HERE / "include"              # real-style operator headers the toolkit ships
SHIM = SRC / "shim"                     # build-time stand-in for include/aclnn/*.h (see its comment)
SOC_DIR = "ascend910b"                  # op info config folder of the default EMU_SOC_NAME (Ascend910B3)
LAYOUTS = ("8.x", "9.x")
CANN_VERSION_DIR = "8.1.RC1"

# Flags of every library: the brief's "-shared -fPIC -O2 -Wall -Wl,-soname,<file>", plus hidden
# visibility (only the API is exported) and -z defs (no undefined symbol slips through).
_CFLAGS = ["-fPIC", "-O2", "-Wall", "-std=gnu11", "-fvisibility=hidden"]
_SOURCES = ("emu_runtime", "emu_rt_control", "emu_rt_devices", "emu_rt_errors", "emu_rt_events", "emu_rt_memory",
            "emu_rt_streams", "emu_rt_capture", "emu_opcache", "emu_boot", "emu_keeper", "emu_plugin", "emu_driver",
            "emu_nnopbase", "emu_ops",
            "emu_kernels", "emu_compat", "emu_math", "emu_ops_math", "emu_ops_nn", "emu_ops_custom", "emu_ops_custom_add",
            "emu_ops_custom_blur")
# objects compiled from a source of _SOURCES with other defines: object -> (source, defines)
_VARIANTS = {"emu_keeper_camodel": ("emu_keeper", ("-DEMU_CAMODEL",)),
             "emu_driver_camodel": ("emu_driver", ("-DEMU_CAMODEL",))}
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
    for p in sorted(SRC.rglob("*.[ch]")) + sorted(HEADERS.glob("*.h")) + sorted(INCLUDE.rglob("*.h")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _declared_functions(*headers: str) -> list[str]:
    """The functions the given files of headers/ declare (one declaration per line, ending ');')."""
    names = []
    for name in headers:
        for line in (HEADERS / name).read_text().splitlines():
            line = line.strip()
            if line.endswith(");") and not line.startswith(("typedef", "#", "/*", "*")):
                m = re.match(r"[^(]*?(\w+)\s*\(", line)
                if m:
                    names.append(m.group(1))
    return names


def _objects(cc: list[str], objdir: Path, stub: bool) -> Path:
    """Compile every source to objdir (in parallel); reuse a previous compile of the same sources."""
    key = (tuple(cc), stub, _digest(cc, stub))
    cached = _OBJ_CACHE.get(key)
    if cached and all((cached / f"{s}.o").exists() for s in (*_SOURCES, *_VARIANTS)):
        return cached
    objdir.mkdir(parents=True, exist_ok=True)
    # the names the 9.x compat libascendcl.so shows the link editor (src/emu_compat.c)
    (objdir / "emu_compat_syms.h").write_text(
        "/* generated by build.py from headers/acl_base.h and headers/acl_rt.h */\n"
        + "".join(f"EMU_COMPAT_SYM({n})\n" for n in _declared_functions("acl_base.h", "acl_rt.h")))
    defines = ["-DEMU_DEFAULT_DEVICE_COUNT=0"] if stub else []
    procs = []
    for s, (source, extra) in [*((s, (s, ())) for s in _SOURCES), *_VARIANTS.items()]:
        cmd = [*cc, *_CFLAGS, *defines, *extra, f"-I{HEADERS}", f"-I{SRC}", f"-I{SHIM}", f"-I{INCLUDE}", f"-I{objdir}",
               f"-I{INCLUDE / 'custom'}", "-c", str(SRC / f"{source}.c"),
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


def _link(cc: list[str], out: Path, objs: list[Path], needed: list[str], zdefs: bool = True,
          extra: tuple[str, ...] = ()) -> None:
    """Link a shared library whose SONAME is its file name, DT_NEEDED on `needed` (in out's dir)."""
    cmd = [*cc, "-shared", "-fPIC", "-O2", "-Wall", f"-Wl,-soname,{out.name}",
           *(["-Wl,-z,defs"] if zdefs else []), *extra, "-o", str(out), *map(str, objs)]
    if needed:
        cmd += ["-Wl,--no-as-needed", f"-L{out.parent}", *[f"-l:{n}" for n in needed]]
    cmd += ["-lm", "-lpthread"]
    _run(cmd)


# The objects of the runtime library (every copy of it, the custom-op link copies too).
RUNTIME_OBJECTS = ["emu_runtime", "emu_rt_control", "emu_rt_devices", "emu_rt_errors", "emu_rt_events",
                   "emu_rt_memory", "emu_rt_streams", "emu_rt_capture", "emu_opcache", "emu_boot"]

# Libraries the runtime opens by bare name at run time (src/emu_keeper.c), in lib64 of every layout.
PLUGINS = ("libruntime_v100.so", "libruntime_v200.so", "libtsdclient.so")
# The runtime's boot, which the runtime library names in DT_NEEDED (src/emu_keeper.c), in lib64.
KEEPER = "libruntime.so"

# (file, objects, DT_NEEDED) in link order, per layout; libruntime.so comes first (build_toolkit)
_PLAN = {
    "8.x": [
        ("libascendcl.so", RUNTIME_OBJECTS, [KEEPER]),
        ("libnnopbase.so", ["emu_nnopbase"], ["libascendcl.so"]),
        ("libopapi.so", ["emu_ops", "emu_kernels", "emu_ops_math", "emu_ops_nn"], ["libnnopbase.so", "libascendcl.so"]),
    ],
    "9.x": [
        ("libacl_rt.so", RUNTIME_OBJECTS, [KEEPER]),
        ("libascendcl.so", ["emu_compat"], ["libacl_rt.so"]),
        ("libnnopbase.so", ["emu_nnopbase"], ["libacl_rt.so"]),
        ("libopapi_math.so", ["emu_math", "emu_ops_math"], ["libnnopbase.so", "libacl_rt.so"]),
        ("libopapi_nn.so", ["emu_ops", "emu_kernels", "emu_ops_nn"], ["libopapi_math.so", "libnnopbase.so", "libacl_rt.so"]),
    ],
}


def build_toolkit(root: Path, layout: str = "8.x", *, stub: bool = False, driver: Path | None = None) -> Path:
    """Build the emulated toolkit under `root` and return its ASCEND_HOME_PATH (see module doc).

    ``driver``: also install a driver library, ``<driver>/driver/lib64/driver/libascend_hal.so``,
    on which the runtime implementation libraries then depend (DT_NEEDED), as the real ones use
    the driver: the toolkit only initialises when that library is found.

    Rebuilding into the same root is safe even while an older build is loaded: libraries are
    replaced by rename, never rewritten in place.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}: expected one of {', '.join(LAYOUTS)}")
    root = Path(root).resolve()
    cc = _compiler()
    tag = layout + ("-stub" if stub else "") + ("-driver" if driver is not None else "")
    objdir = _objects(cc, root / ".emu-build" / ("obj-stub" if stub else "obj"), stub)
    stage = root / ".emu-build" / tag
    stage.mkdir(parents=True, exist_ok=True)
    hal = ["libascend_hal.so"] if driver is not None else []
    if hal:
        _link(cc, stage / "libascend_hal.so", [objdir / "emu_driver.o", objdir / "emu_plugin.o"], [])
    # libruntime.so links the driver (runtime.cmake add_runtime_api_library: ascend_hal), as do
    # the implementations it opens
    plan = ([(KEEPER, ["emu_keeper"], hal)] + _PLAN[layout]
            + [(name, ["emu_plugin"], hal if name in PLUGINS[:2] else []) for name in PLUGINS])
    for name, objs, needed in plan:
        # the 9.x compat libascendcl.so: a filter of libacl_rt.so (src/emu_compat.c)
        extra = ("-Wl,--filter=libacl_rt.so",) if "emu_compat" in objs else ()
        _link(cc, stage / name, [objdir / f"{o}.o" for o in objs], needed, extra=extra)

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
    _install_headers(home, layout)
    _write_ops_info(home / "opp" / "built-in" / "op_impl" / "ai_core" / "tbe" / "config", _BUILTIN_OPS)
    installs = [(name, home / "lib64") for name, _, _ in plan]
    if driver is not None:
        installs.append(("libascend_hal.so", Path(driver) / "driver" / "lib64" / "driver"))
    for name, where in installs:
        where.mkdir(parents=True, exist_ok=True)
        tmp = where / f".{name}.tmp"
        shutil.copy2(stage / name, tmp)
        os.replace(tmp, where / name)
    return home


# ---- the NPU Simulator -------------------------------------------------------------------------
SIMULATOR_CHIP = "Ascend950PR"   # the chips the simulator covers: Ascend950PR/950DT (ops-math npu_sim.md)
# (file, objects, DT_NEEDED): hicann/runtime src/runtime/cmake/cmodel.cmake runtime_camodel_<product>
# (OUTPUT_NAME runtime_camodel, links npu_drv_camodel) and src/cmodel_driver/CMakeLists.txt
# npu_drv_camodel_<product> (OUTPUT_NAME npu_drv_camodel)
_SIMULATOR_PLAN = [("libnpu_drv_camodel.so", ["emu_driver_camodel"], []),
                   ("libruntime_camodel.so", ["emu_keeper_camodel"], ["libnpu_drv_camodel.so"])]
# What hicann/ops-math scripts/build_example.sh (compile_eager_example_default) links before it
# runs an example on the simulator: `ln -sf libruntime_camodel.so libruntime.so` and
# `ln -sf libnpu_drv_camodel.so libascend_hal.so` in the folder it puts first on LD_LIBRARY_PATH.
SIMULATOR_LINKS = {"libruntime.so": "libruntime_camodel.so", "libascend_hal.so": "libnpu_drv_camodel.so"}


def simulator_lib(home: Path, chip: str = SIMULATOR_CHIP) -> Path:
    """``<home>/tools/simulator/<chip>/lib``, where the toolkit keeps a simulator's libraries."""
    return Path(home) / "tools" / "simulator" / chip / "lib"


def build_simulator(home: Path, chip: str = SIMULATOR_CHIP, *, links: bool = True) -> Path:
    """Add the NPU Simulator's libraries to the emulated toolkit at `home` and return their folder
    ``<home>/tools/simulator/<chip>/lib``: ``libruntime_camodel.so`` (the whole runtime in one
    library: it opens no libruntime_v*.so and no libtsdclient.so; DT_NEEDED on the driver) and
    ``libnpu_drv_camodel.so`` (the simulated driver), SONAMEs their file names, no rpath.
    ``links``: also the ``libruntime.so`` and ``libascend_hal.so`` links build_example.sh makes,
    through which the toolkit's libraries pick them up (``simulator_env``)."""
    home = Path(home)
    cc = _compiler()
    objdir = _objects(cc, home.parent / ".emu-build" / "obj", False)
    stage = home.parent / ".emu-build" / f"simulator-{chip}"
    stage.mkdir(parents=True, exist_ok=True)
    for name, objs, needed in _SIMULATOR_PLAN:
        _link(cc, stage / name, [objdir / f"{o}.o" for o in objs], needed)
    lib = simulator_lib(home, chip)
    lib.mkdir(parents=True, exist_ok=True)
    for name, _, _ in _SIMULATOR_PLAN:
        tmp = lib / f".{name}.tmp"
        shutil.copy2(stage / name, tmp)
        os.replace(tmp, lib / name)
    for link, target in SIMULATOR_LINKS.items():
        if (lib / link).is_symlink() or (lib / link).exists():
            (lib / link).unlink()
        if links:
            (lib / link).symlink_to(lib / target)
    return lib


def simulator_env(home: Path, chip: str = SIMULATOR_CHIP) -> dict[str, str]:
    """``toolkit_env`` with the simulator's folder first on LD_LIBRARY_PATH, as build_example.sh
    sets it (``export LD_LIBRARY_PATH=${sim_lib_path}:${LD_LIBRARY_PATH}``, after set_env.sh)."""
    env = toolkit_env(home)
    env["LD_LIBRARY_PATH"] = f"{simulator_lib(home, chip)}:{env['LD_LIBRARY_PATH']}"
    return env


# ---- headers and op definitions of the toolkit ---------------------------------------------
_OPAPI_INCLUDE = Path("opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop")

# include/acl and include/aclnn of the toolkit: the project's headers/ (cffi declarations, no
# includes) wrapped into includable C headers: (file, folder, includes it needs)
_WRAPPED = [("acl_base.h", "acl", []), ("acl_rt.h", "acl", ["acl/acl_base.h"]),
            ("acl_meta.h", "aclnn", ["acl/acl_base.h"]), ("aclnn_base.h", "aclnn", ["aclnn/acl_meta.h"])]


def aclnnop_dir(home: Path) -> Path:
    """Where the toolkit at `home` keeps its operator headers (the real folder, not a link).

    8.x: ``<home>/opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop`` (also reachable as
    ``<home>/include/aclnnop``, a symlink); 9.x: ``<home>/include/aclnnop``.
    """
    home = Path(home)
    return home / _OPAPI_INCLUDE if (home / "lib64" / "libopapi.so").exists() else home / "include" / "aclnnop"


def _wrap_header(name: str, includes: list[str]) -> str:
    guard = "EMU_TOOLKIT_" + name.upper().replace(".", "_") + "_"
    body = (HEADERS / name).read_text()
    inc = "".join(f'#include "{i}"\n' for i in includes)
    return (f"/* Emulated CANN toolkit: headers/{name} of pyaclnn (its cffi declarations) made includable. */\n"
            f"#ifndef {guard}\n#define {guard}\n\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n"
            f"{inc}\n#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n{body}\n#ifdef __cplusplus\n}}\n#endif\n\n#endif\n")


def _replace_dir(src: Path, dst: Path) -> None:
    """Make `dst` a copy of the *.h files of `src` (old files removed)."""
    if dst.is_symlink() or dst.is_file():
        dst.unlink()
    elif dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    for h in sorted(src.glob("*.h")):
        shutil.copy2(h, dst / h.name)


def _install_headers(home: Path, layout: str) -> None:
    include = home / "include"
    for name, folder, includes in _WRAPPED:
        (include / folder).mkdir(parents=True, exist_ok=True)
        (include / folder / name).write_text(_wrap_header(name, includes))
    (include / "acl" / "acl.h").write_text(
        '/* Emulated CANN toolkit: acl/acl.h */\n#ifndef EMU_TOOLKIT_ACL_H_\n#define EMU_TOOLKIT_ACL_H_\n'
        '#include "acl/acl_base.h"\n#include "acl/acl_rt.h"\n#endif\n')
    if layout == "8.x":
        # the real folder sits under opp/; include/aclnnop is a symlink to it
        _replace_dir(INCLUDE / "aclnnop", home / _OPAPI_INCLUDE)
        link = include / "aclnnop"
        if link.is_symlink() or link.is_file():
            link.unlink()
        elif link.exists():
            shutil.rmtree(link)
        link.symlink_to(os.path.relpath(home / _OPAPI_INCLUDE, include))
    else:
        _replace_dir(INCLUDE / "aclnnop", include / "aclnnop")


def _tensor_desc(name: str, param: str, dtypes: str, n: int) -> dict:
    return {"dtype": dtypes, "format": ",".join(["ND"] * n), "name": name, "paramType": param, "shape": "all"}


def _op_info(inputs: list, outputs: list, attrs: list, op_file: str) -> dict:
    """One entry of aic-<soc>-ops-info.json: inputN/outputN with name, paramType (required,
    optional, dynamic), dtype and format columns (one column per supported combination)."""
    info: dict = {}
    n = len(inputs[0][2].split(","))
    for i, (name, param, dt) in enumerate(inputs):
        info[f"input{i}"] = _tensor_desc(name, param, dt, n)
    for i, (name, param, dt) in enumerate(outputs):
        info[f"output{i}"] = _tensor_desc(name, param, dt, n)
    if attrs:
        info["attr"] = {"list": ",".join(a[0] for a in attrs)}
        for name, param, typ, *default in attrs:
            info[f"attr_{name}"] = {"paramType": param, "type": typ, "value": "all"}
            if default:
                info[f"attr_{name}"]["defaultValue"] = default[0]
    info["dynamicShapeSupport"] = {"flag": "true"}
    info["opFile"] = {"value": op_file}
    info["opInterface"] = {"value": op_file}
    return info


_X3 = "float,float16,bfloat16"
_X3B = "bfloat16,float16,float"
# Ascend910B rows of the built-in ops behind the emulated operators beyond the seed four: Add
# (aclnnAdd's kernel), ConcatD (aclnnCat's), ReduceSum (aclnnReduceSum's), and the generated
# ones: AmpUpdateScale (ops-math amp_update_scale_def.cpp), ForeachMulScalarList (ops-nn
# foreach_mul_scalar_list_def.cpp: dynamic input and output) and CrossEntropyLossGrad (ops-nn
# cross_entropy_loss_grad_def.cpp: three OPTIONAL inputs).
_BUILTIN_OPS = {
    "Add": _op_info([("x1", "required", "float,float16,bfloat16,int32,int64,int8,uint8,bool"),
                     ("x2", "required", "float,float16,bfloat16,int32,int64,int8,uint8,bool")],
                    [("y", "required", "float,float16,bfloat16,int32,int64,int8,uint8,bool")], [], "add"),
    "ConcatD": _op_info([("x", "dynamic", "float,float16,bfloat16,int32,int64,int16,int8,uint8,bool,double")],
                        [("y", "required", "float,float16,bfloat16,int32,int64,int16,int8,uint8,bool,double")],
                        [("concat_dim", "required", "int"), ("N", "optional", "int")], "concat_d"),
    "AmpUpdateScale": _op_info([("current_scale", "required", _X3), ("growth_tracker", "required", "int32,int32,int32"),
                                ("found_inf", "required", _X3)],
                               [("updated_scale", "required", _X3), ("updated_growth_tracker", "required", "int32,int32,int32")],
                               [("growth_factor", "required", "float"), ("backoff_factor", "required", "float"),
                                ("growth_interval", "required", "int")], "amp_update_scale"),
    "ReduceSum": _op_info([("x", "required", "float,float16,bfloat16,int32,int64,int8,uint8,double"),
                           ("axes", "required", "int64,int64,int64,int64,int64,int64,int64,int64")],
                          [("y", "required", "float,float16,bfloat16,int32,int64,int8,uint8,double")],
                          [("keep_dims", "optional", "bool", "false")], "reduce_sum"),
    "ForeachMulScalarList": _op_info([("x", "dynamic", "float16,float,bfloat16,int32"),
                                      ("scalars", "required", "float,float,float,int64")],
                                     [("y", "dynamic", "float16,float,bfloat16,int32")], [], "foreach_mul_scalar_list"),
    "CrossEntropyLossGrad": _op_info(
        [("grad_loss", "required", _X3B), ("log_prob", "required", _X3B), ("target", "required", "int64,int64,int64"),
         ("weight", "optional", "float,float,float"), ("grad_zloss", "optional", _X3B), ("lse_for_zloss", "optional", _X3B)],
        [("x_grad", "required", _X3B)],
        [("reduction", "optional", "str", "mean"), ("ignore_index", "optional", "int", "-100"),
         ("label_smoothing", "optional", "float", "0.0"), ("lse_square_scale_for_zloss", "optional", "float", "0.0")],
        "cross_entropy_loss_grad"),
}

# The ops a custom package can hold: op type -> (object, generated header, ops-info entry).
_CUSTOM_OPS = {
    "AddCustom": ("emu_ops_custom", "aclnn_add_custom.h",
                  _op_info([("x", "required", "float16,float"), ("y", "required", "float16,float")],
                           [("z", "required", "float16,float")], [], "add_custom")),
    # a custom op reusing a built-in op type: its generated aclnnAdd(x1, x2, y) shadows the
    # built-in aclnnAdd(self, other, alpha, out) for a custom-first lookup
    "Add": ("emu_ops_custom_add", "aclnn_add.h",
            _op_info([("x1", "required", "float16,float"), ("x2", "required", "float16,float")],
                     [("y", "required", "float16,float")], [], "add")),
    # a hand-written op whose launch takes its parameters again (ops-cv's aclnnGaussianBlur style)
    "BoxBlurCustom": ("emu_ops_custom_blur", "aclnn_box_blur_custom.h",
                      _op_info([("src", "required", "float")], [("dst", "required", "float")],
                               [("ksize", "required", "listInt"), ("scale", "required", "float"),
                                ("border_type", "optional", "int", "0")], "box_blur_custom")),
}


def _write_ops_info(config: Path, ops: dict) -> None:
    folder = config / SOC_DIR
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"aic-{SOC_DIR}-ops-info.json").write_text(json.dumps(ops, indent=4, sort_keys=True) + "\n")


def build_custom_opp(root: Path, vendor: str = "customize", ops: tuple[str, ...] = ("AddCustom",),
                     layout: str = "8.x") -> Path:
    """Build a custom operator package, as the Ascend C custom-op flow (msopgen project, build.sh,
    installed with ``--install-path=<root>``) lays it out, and return its vendor folder
    ``<root>/vendors/<vendor>`` (the path ASCEND_CUSTOM_OPP_PATH lists):

    * ``op_api/include/aclnn_add_custom.h``: the generated header of the AddCustom sample op
      (``ops`` may add ``"Add"``: a custom op reusing the built-in name, header ``aclnn_add.h``,
      ``aclnnAdd(x1, x2, y)``; and ``"BoxBlurCustom"``: a hand-written op whose launch takes its
      parameters again, as ops-cv's aclnnGaussianBlur, header ``aclnn_box_blur_custom.h``);
    * ``op_api/lib/libcust_opapi.so``: their aclnn entry points, DT_NEEDED on libnnopbase.so and
      the runtime of the CANN it was built with (``layout``: 8.x libascendcl.so, 9.x
      libacl_rt.so), as the custom-op CMake links it (asc-devkit cmake/asc/fwk_modules/func.cmake:
      nnopbase + ascendcl or acl_rt); no rpath, so it loads into a process that has a toolkit's
      libraries loaded (or on the search path) and shares that toolkit's state;
    * ``op_impl/ai_core/tbe/config/ascend910b/aic-ascend910b-ops-info.json``: the op definition;
    * ``op_proto/inc/op_proto.h``, ``bin/set_env.bash`` (prepends the folder to
      ASCEND_CUSTOM_OPP_PATH) and ``<root>/vendors/config.ini`` (``load_priority=``, this vendor
      first).
    """
    if not vendor or "/" in vendor or vendor.startswith("."):
        raise ValueError(f"vendor {vendor!r}: expected a plain folder name")
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}: expected one of {', '.join(LAYOUTS)}")
    unknown = [op for op in ops if op not in _CUSTOM_OPS]
    if unknown or not ops:
        raise ValueError(f"ops {ops!r}: expected a non-empty selection of {', '.join(_CUSTOM_OPS)}")
    root = Path(root).resolve()
    cc = _compiler()
    objdir = _objects(cc, root / ".emu-build" / "obj", False)
    stage = root / ".emu-build" / f"custom-{vendor}"
    stage.mkdir(parents=True, exist_ok=True)
    # link-time copies of the runtime and nnopbase (same SONAMEs as any toolkit's)
    _link(cc, stage / KEEPER, [objdir / "emu_keeper.o"], [])
    _link(cc, stage / "libascendcl.so", [objdir / f"{o}.o" for o in RUNTIME_OBJECTS], [KEEPER])
    _link(cc, stage / "libnnopbase.so", [objdir / "emu_nnopbase.o"], ["libascendcl.so"])
    runtime = "libascendcl.so" if layout == "8.x" else "libacl_rt.so"
    if runtime != "libascendcl.so":
        _link(cc, stage / runtime, [objdir / f"{o}.o" for o in RUNTIME_OBJECTS], [KEEPER])
    # no -z defs: the emulator's internal symbols may come from either runtime file
    _link(cc, stage / "libcust_opapi.so", [objdir / f"{_CUSTOM_OPS[op][0]}.o" for op in ops],
          ["libnnopbase.so", runtime], zdefs=False)

    vdir = root / "vendors" / vendor
    (vdir / "op_api" / "lib").mkdir(parents=True, exist_ok=True)
    include = vdir / "op_api" / "include"
    if include.exists():
        shutil.rmtree(include)
    include.mkdir(parents=True)
    for op in ops:
        shutil.copy2(INCLUDE / "custom" / _CUSTOM_OPS[op][1], include)
    tmp = vdir / "op_api" / "lib" / ".libcust_opapi.so.tmp"
    shutil.copy2(stage / "libcust_opapi.so", tmp)
    os.replace(tmp, vdir / "op_api" / "lib" / "libcust_opapi.so")
    _write_ops_info(vdir / "op_impl" / "ai_core" / "tbe" / "config", {op: _CUSTOM_OPS[op][2] for op in ops})
    (vdir / "op_proto" / "inc").mkdir(parents=True, exist_ok=True)
    protos = ""
    for op in ops:
        info = _CUSTOM_OPS[op][2]
        protos += f"REG_OP({op})\n" + "".join(
            f"    .{'INPUT' if k.startswith('input') else 'OUTPUT'}({v['name']}, ge::TensorType::ALL())\n"
            for k, v in sorted(info.items()) if k.startswith(("input", "output"))) + f"    .OP_END_FACTORY_REG({op});\n"
    (vdir / "op_proto" / "inc" / "op_proto.h").write_text(
        "/* Emulated custom operator package: graph prototypes of its ops. */\n"
        "#ifndef OP_PROTO_H_\n#define OP_PROTO_H_\n\n#include \"graph/operator_reg.h\"\n\nnamespace ge {\n"
        f"{protos}}}\n\n#endif\n")
    (vdir / "bin").mkdir(exist_ok=True)
    (vdir / "bin" / "set_env.bash").write_text(
        f'#!/bin/bash\nexport ASCEND_CUSTOM_OPP_PATH="{vdir}${{ASCEND_CUSTOM_OPP_PATH:+:$ASCEND_CUSTOM_OPP_PATH}}"\n')
    config = root / "vendors" / "config.ini"
    vendors = [vendor]
    if config.exists():
        for line in config.read_text().splitlines():
            if line.startswith("load_priority="):
                vendors += [v for v in line.split("=", 1)[1].split(",") if v and v != vendor]
    config.write_text("load_priority=" + ",".join(vendors) + "\n")
    return vdir


def library_paths(home: Path) -> list[Path]:
    """The toolkit's libraries in dependency (= preload) order; the op library is last."""
    lib64 = Path(home) / "lib64"
    if (lib64 / "libacl_rt.so").exists():
        names = ["libacl_rt.so", "libascendcl.so", "libnnopbase.so", "libopapi_math.so", "libopapi_nn.so"]
    else:
        names = ["libascendcl.so", "libnnopbase.so", "libopapi.so"]
    return [lib64 / n for n in names]


def plugin_paths(home: Path) -> list[Path]:
    """What the runtime library needs from lib64 besides ``library_paths``, to preload first:
    libruntime.so (its DT_NEEDED) and what the boot opens by bare name (libruntime_v100.so, ...)."""
    return [Path(home) / "lib64" / n for n in (KEEPER, *PLUGINS)]


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

    def __init__(self, home: Path, preload_plugins: bool = True) -> None:
        self.home = Path(home)
        lib64 = self.home / "lib64"
        rt9 = lib64 / "libacl_rt.so"
        self.layout = "9.x" if rt9.exists() else "8.x"
        self.runtime_path = rt9 if rt9.exists() else lib64 / "libascendcl.so"
        # aclInit opens these by bare name: loaded here, test code that dlopens the toolkit by
        # absolute path (without LD_LIBRARY_PATH) can initialise it
        self._plugins = [ctypes.CDLL(str(p), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
                         for p in (plugin_paths(self.home) if preload_plugins else [])]
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
            ("emu_release_devices", None, []),
            ("emu_set_stream_mode", None, [ctypes.c_int]),
            ("emu_set_worker_delay_us", None, [ctypes.c_long]),
            ("emu_clear_op_cache", None, []),
            ("emu_runtime_plugins", ctypes.c_int64, []),
            ("emu_op_cache_entries", ctypes.c_int64, []),
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

    def release_devices(self) -> None:
        """Release every device as a process end would (aclFinalize resets none): default
        contexts, device references and failure modes, for a clean start between tests."""
        self._lib.emu_release_devices()

    def reset_counters(self) -> None:
        """Zero the call counters and the misuse count (live counts are real state: kept)."""
        self._lib.emu_reset_counters()

    def set_stream_mode(self, mode: str | None) -> None:
        """"deferred" (queued work runs only at synchronisation), "worker" (also on a background
        thread) or None (back to EMU_STREAM_MODE, default deferred)."""
        self._lib.emu_set_stream_mode({"deferred": 1, "worker": 2, None: 0}[mode])

    def set_worker_delay(self, seconds: float) -> None:
        """The worker thread's pause after each task it runs (EMU_WORKER_DELAY_US otherwise)."""
        self._lib.emu_set_worker_delay_us(int(seconds * 1e6))
    def runtime_plugins(self) -> dict[str, bool]:
        """Which by-name libraries the runtime opened at its boot (aclInit); ``camodel``: the boot
        was the simulator's libruntime_camodel.so (which opens neither)."""
        bits = self._lib.emu_runtime_plugins()
        return {"runtime_impl": bool(bits & 1), "libtsdclient.so": bool(bits & 2), "camodel": bool(bits & 4)}

    def clear_op_cache(self) -> None:
        """Forget every op-cache entry (phase 1 of a layout that ran before returns a cache wrapper)."""
        self._lib.emu_clear_op_cache()

    def op_cache_entries(self) -> int:
        """How many op + layout keys the op cache holds."""
        return self._lib.emu_op_cache_entries()

    def set_device_count(self, n: int | None) -> None:
        """Override the device count (0 = no driver); None returns to EMU_DEVICE_COUNT / default."""
        self._lib.emu_set_device_count(-1 if n is None else n)
