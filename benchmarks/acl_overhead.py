#!/usr/bin/env python3
"""Host overhead of pyaclnn's acl path, measured through the CANN host emulator.

The emulator (tests/emulator) implements the CANN ABI on the host and its op work on 4x4
tensors is negligible, so what is timed here is the cost of the call path itself:

  a. one full operator call from Python: aclCreateTensor for four existing device buffers,
     phase 1 (aclnnMseLossBackwardGetWorkspaceSize), phase 2 (aclnnMseLossBackward), and the
     four aclDestroyTensor, written
       - with the public objects (pyaclnn.Tensor views over existing storage, MseLossBackward,
         run, close), and
       - with pyaclnn.acl, the C-shaped layer;
     and, for information, phase 1 + phase 2 + close on four Tensors made once;
  b. a reused repeatable executor: set_input + set_output + run (and the same through
     pyaclnn.acl: aclSetInputTensorAddr, aclSetOutputTensorAddr, aclnnMseLossBackward);
  c. the same sequences in C (benchmarks/acl_overhead.c, compiled now with $CC or cc and linked
     against the emulator libraries), timed with clock_gettime;
  d. ``import pyaclnn`` in a fresh interpreter: the time of the import statement itself (median of
     several subprocesses; ``import numpy`` alone alongside), and the wall time of the whole
     ``python -c 'import pyaclnn'`` process next to that of ``python -c pass``.

Each Python/C figure is the median over batches of the mean time per call in a batch (default
20 batches of 2000 calls, after one warm-up batch). Targets (reported, never asserted):
a <= 15 us, b <= 5 us, d <= 100 ms. The machine may be noisy: compare the Python and C
columns of the same run, not absolute figures across runs.

Usage:
    python benchmarks/acl_overhead.py [--quick] [--batches N] [--calls N] [--json PATH] [--profile]

The toolkit is built into a temporary directory and removed afterwards; the Python side runs
in a subprocess with PYACLNN_BACKEND=acl and ASCEND_HOME_PATH=<that toolkit> (one toolkit per
process). Exit codes: 0 done (whatever the targets say), 1 the measurement failed (e.g. no C
compiler), 2 bad arguments.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
C_SOURCE = HERE / "acl_overhead.c"
HEADERS = REPO / "headers"
EMULATOR_BUILD = REPO / "tests" / "emulator" / "build.py"

TARGETS = {"full_us": 15.0, "repeat_us": 5.0, "import_ms": 100.0}
SHAPE = (4, 4)
WS_BYTES = 1 << 16  # workspace allocated once for phase 2 (phase 1 asks 512 bytes for this MSE)


def _log(message: str) -> None:
    print(f"acl_overhead: {message}", file=sys.stderr, flush=True)


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


# ----------------------------------------------------------------------------------------------
# The worker: runs in a subprocess whose environment selects the acl backend on the emulator.
# ----------------------------------------------------------------------------------------------
def _time_batches(fn: Callable[[], None], batches: int, calls: int) -> list[float]:
    """µs per call of each batch (one untimed warm-up batch first)."""
    perf = time.perf_counter_ns
    for _ in range(calls):
        fn()
    out = []
    for _ in range(batches):
        t0 = perf()
        for _ in range(calls):
            fn()
        out.append((perf() - t0) / calls / 1e3)
    return out


def _worker(batches: int, calls: int, profile: bool) -> dict[str, Any]:
    import numpy as np

    import pyaclnn
    from pyaclnn import acl

    info = pyaclnn.backend_info()
    if info["backend"] != "acl":
        raise SystemExit(f"acl_overhead worker: expected the acl backend, got {info['backend']}")
    f32 = np.float32
    results: dict[str, Any] = {"backend": info}

    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        # -- a. public objects: Tensor views over existing storage, phase 1, phase 2, close --------
        bases = [pyaclnn.Tensor.zeros(SHAPE, f32, dev) for _ in range(6)]
        storages = [b.storage for b in bases]
        Tensor, Mse = pyaclnn.Tensor, pyaclnn.MseLossBackward
        s0, s1, s2, s3 = storages[:4]

        def public_full() -> None:
            g = Tensor(s0, SHAPE, f32)
            x = Tensor(s1, SHAPE, f32)
            y = Tensor(s2, SHAPE, f32)
            o = Tensor(s3, SHAPE, f32)
            ex = Mse(g, x, y, "none", o)
            ex.run(stream)
            ex.close()
            g.close()
            x.close()
            y.close()
            o.close()

        _log(f"a. full call through the public objects ({batches} x {calls} calls)")
        results["public_full_us"] = _time_batches(public_full, batches, calls)

        # the same with the four Tensors made once (what a loop over existing tensors pays)
        tg, tx, ty, to = (Tensor(s, SHAPE, f32) for s in storages[:4])

        def public_existing() -> None:
            ex = Mse(tg, tx, ty, "none", to)
            ex.run(stream)
            ex.close()

        _log(f"a. phase 1 + phase 2 on existing Tensors ({batches} x {calls} calls)")
        results["public_existing_us"] = _time_batches(public_existing, batches, calls)
        for t in (tg, tx, ty, to):
            t.close()

        # per-stage split of the same sequence (adds ~4 timer reads per call)
        perf = time.perf_counter_ns
        stages = {"create 4 descriptors": 0, "phase 1": 0, "phase 2": 0, "close": 0}
        n_stage = max(calls * min(batches, 5), 1)
        for _ in range(n_stage):
            t0 = perf()
            g = Tensor(s0, SHAPE, f32)
            x = Tensor(s1, SHAPE, f32)
            y = Tensor(s2, SHAPE, f32)
            o = Tensor(s3, SHAPE, f32)
            t1 = perf()
            ex = Mse(g, x, y, "none", o)
            t2 = perf()
            ex.run(stream)
            t3 = perf()
            ex.close()
            g.close()
            x.close()
            y.close()
            o.close()
            t4 = perf()
            stages["create 4 descriptors"] += t1 - t0
            stages["phase 1"] += t2 - t1
            stages["phase 2"] += t3 - t2
            stages["close"] += t4 - t3
        results["public_stages_us"] = {k: v / n_stage / 1e3 for k, v in stages.items()}

        # -- a. the C-shaped layer ------------------------------------------------------------
        addrs = [s.addr for s in storages]
        a0, a1, a2, a3, a4, a5 = addrs
        raw_stream = acl.aclrtCreateStream()
        # the workspace phase 1 asks for (512 bytes here: MseLossGradV2's), allocated once as a
        # port would; passing NULL with that size is 161001
        ws_buf = acl.aclrtMalloc(WS_BYTES, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        create, destroy = acl.aclCreateTensor, acl.aclDestroyTensor
        phase1, phase2 = acl.aclnnMseLossBackwardGetWorkspaceSize, acl.aclnnMseLossBackward
        FLOAT, ND = acl.ACL_FLOAT, acl.ACL_FORMAT_ND
        dims, strides = list(SHAPE), [SHAPE[1], 1]

        def acl_full() -> None:
            g = create(dims, 2, FLOAT, strides, 0, ND, dims, 2, a0)
            x = create(dims, 2, FLOAT, strides, 0, ND, dims, 2, a1)
            y = create(dims, 2, FLOAT, strides, 0, ND, dims, 2, a2)
            o = create(dims, 2, FLOAT, strides, 0, ND, dims, 2, a3)
            ws, ex = phase1(g, x, y, 0, o)
            phase2(ws_buf, ws, ex, raw_stream)
            destroy(g)
            destroy(x)
            destroy(y)
            destroy(o)

        _log(f"a. full call through pyaclnn.acl ({batches} x {calls} calls)")
        results["acl_full_us"] = _time_batches(acl_full, batches, calls)

        # the floor: the identical calls straight through the cffi library objects, no pyaclnn
        # code in between (what ABI-mode cffi alone costs on this machine)
        from pyaclnn._acl._lib import ffi, get
        lib = get()
        nn_create, nn_destroy = lib.nn.aclCreateTensor, lib.nn.aclDestroyTensor
        op1, op2 = lib.op.aclnnMseLossBackwardGetWorkspaceSize, lib.op.aclnnMseLossBackward
        ws_p, ex_p = ffi.new("uint64_t *"), ffi.new("aclOpExecutor **")

        def cffi_full() -> None:
            g = nn_create(dims, 2, FLOAT, strides, 0, ND, dims, 2, ffi.cast("void *", a0))
            x = nn_create(dims, 2, FLOAT, strides, 0, ND, dims, 2, ffi.cast("void *", a1))
            y = nn_create(dims, 2, FLOAT, strides, 0, ND, dims, 2, ffi.cast("void *", a2))
            o = nn_create(dims, 2, FLOAT, strides, 0, ND, dims, 2, ffi.cast("void *", a3))
            op1(g, x, y, 0, o, ws_p, ex_p)
            op2(ffi.cast("void *", ws_buf), ws_p[0], ex_p[0], raw_stream)
            nn_destroy(g)
            nn_destroy(x)
            nn_destroy(y)
            nn_destroy(o)

        _log(f"a. the same calls through raw cffi, the floor ({batches} x {calls} calls)")
        results["cffi_full_us"] = _time_batches(cffi_full, batches, calls)

        # -- b. reused repeatable executor ------------------------------------------------------
        g, x, y, o, g2, o2 = bases
        rep = Mse(g, x, y, "sum", o, repeatable=True)  # "sum": a layout a. never ran (CANN's op cache)
        flip = [False]

        def public_repeat() -> None:
            flip[0] = not flip[0]
            rep.set_input(0, g2 if flip[0] else g)
            rep.set_output(0, o2 if flip[0] else o)
            rep.run(stream)

        _log(f"b. reused repeatable executor through the public objects ({batches} x {calls} calls)")
        results["public_repeat_us"] = _time_batches(public_repeat, batches, calls)
        rep.close()

        tg = create(dims, 2, FLOAT, strides, 0, ND, dims, 2, a0)
        tx = create(dims, 2, FLOAT, strides, 0, ND, dims, 2, a1)
        ty = create(dims, 2, FLOAT, strides, 0, ND, dims, 2, a2)
        to = create(dims, 2, FLOAT, strides, 0, ND, dims, 2, a3)
        ws, raw_ex = phase1(tg, tx, ty, 2, to)  # "sum", as above: not a cache hit, so repeatable
        acl.aclSetAclOpExecutorRepeatable(raw_ex)
        set_in, set_out = acl.aclSetInputTensorAddr, acl.aclSetOutputTensorAddr

        def acl_repeat() -> None:
            flip[0] = not flip[0]
            set_in(raw_ex, 0, tg, a4 if flip[0] else a0)
            set_out(raw_ex, 0, to, a5 if flip[0] else a3)
            phase2(ws_buf, ws, raw_ex, raw_stream)

        _log(f"b. reused repeatable executor through pyaclnn.acl ({batches} x {calls} calls)")
        results["acl_repeat_us"] = _time_batches(acl_repeat, batches, calls)
        acl.aclDestroyAclOpExecutor(raw_ex)
        for t in (tg, tx, ty, to):
            destroy(t)
        acl.aclrtSynchronizeStream(raw_stream)
        acl.aclrtFree(ws_buf)
        acl.aclrtDestroyStream(raw_stream)

        if profile:
            import cProfile
            import io
            import pstats
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(calls * 2):
                public_full()
            prof.disable()
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(25)
            results["profile_public_full"] = text.getvalue()
        for b in bases:
            b.close()
    return results


# ----------------------------------------------------------------------------------------------
# The driver
# ----------------------------------------------------------------------------------------------
def _load_emulator_build() -> Any:
    import importlib.util
    spec = importlib.util.spec_from_file_location("pyaclnn_bench_emulator_build", EMULATOR_BUILD)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {EMULATOR_BUILD}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compile_c(home: Path, out: Path) -> None:
    cc = shlex.split(os.environ.get("CC") or "cc")
    lib64 = home / "lib64"
    opapi = "libopapi_nn.so" if (lib64 / "libopapi_nn.so").exists() else "libopapi.so"
    runtime = "libacl_rt.so" if (lib64 / "libacl_rt.so").exists() else "libascendcl.so"
    # -rpath-link: the link editor finds the runtime's own DT_NEEDED (libruntime.so) in lib64, as
    # set_env.sh's LD_LIBRARY_PATH lets it on a real install (nothing is recorded in the program)
    cmd = [*cc, "-O2", "-std=c11", "-Wall", f"-I{HEADERS}", str(C_SOURCE), "-o", str(out),
           f"-L{lib64}", f"-Wl,-rpath-link,{lib64}", f"-l:{opapi}", "-l:libnnopbase.so", f"-l:{runtime}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling {C_SOURCE.name} failed: {shlex.join(cmd)}\n{proc.stderr}")


def _run_c(exe: Path, env: dict[str, str], batches: int, calls: int) -> dict[str, list[float]]:
    proc = subprocess.run([str(exe), str(batches), str(calls)], env=env, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{exe.name} failed ({proc.returncode}): {proc.stderr.strip()}")
    out = {}
    for line in proc.stdout.splitlines():
        name, *values = line.split()
        out[name] = [float(v) for v in values]
    return out


def _python_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(extra or {})
    return env


def _import_times(runs: int) -> dict[str, Any]:
    """Median in-process time of `import pyaclnn` (and of `import numpy` alone) in fresh interpreters."""
    code = ("import time; t = time.perf_counter(); import {mod}; "
            "print(time.perf_counter() - t)")
    env = _python_env()
    env.pop("PYACLNN_BACKEND", None)
    out: dict[str, Any] = {}
    wall: dict[str, list[float]] = {"pyaclnn": [], "bare": []}
    for _ in range(runs):  # alternated, so load changes hit both alike
        for mod in ("pyaclnn", "numpy"):
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", code.format(mod=mod)], env=env, cwd=str(REPO),
                                  capture_output=True, text=True, check=True)
            if mod == "pyaclnn":
                wall["pyaclnn"].append((time.perf_counter() - t0) * 1e3)
            out.setdefault(f"{mod}_ms", []).append(float(proc.stdout.strip()) * 1e3)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, cwd=str(REPO), capture_output=True, check=True)
        wall["bare"].append((time.perf_counter() - t0) * 1e3)
    # whole subprocess: interpreter start-up + import + exit, and the same for an empty program
    out["wall_pyaclnn_ms"], out["wall_bare_interpreter_ms"] = wall["pyaclnn"], wall["bare"]
    # the heaviest modules of one import (self time), from -X importtime
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import pyaclnn"], env=env,
                          cwd=str(REPO), capture_output=True, text=True, check=True)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = (p.strip() for p in line[len("import time:"):].split("|"))
        rows.append((int(self_us), int(cumulative_us), name.strip()))
    out["top_self_us"] = [{"module": n, "self_us": s, "cumulative_us": c}
                          for s, c, n in sorted(rows, reverse=True)[:8]]
    return out


def _verdict(value: float, target: float) -> str:
    return "PASS" if value <= target else "MISS"


def _table(res: dict[str, Any]) -> str:
    m = res["medians"]
    rows = [("measurement", "Python", "C", "Py/C", "target", "result")]

    def us(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f} us"

    def ratio(a: float | None, b: float | None) -> str:
        return "-" if a is None or b is None else f"{a / b:.1f}x"

    rows.append(("a. full call, public objects (Tensor x4, MseLossBackward, run, close)",
                 us(m["public_full_us"]), us(m["c_full_us"]), ratio(m["public_full_us"], m["c_full_us"]),
                 "<= 15 us", _verdict(m["public_full_us"], TARGETS["full_us"])))
    rows.append(("   (the same on 4 existing Tensors: MseLossBackward, run, close)",
                 us(m["public_existing_us"]), "-", "-", "-", "info"))
    rows.append(("a. full call, pyaclnn.acl (aclCreateTensor x4, phase 1, phase 2, destroy x4)",
                 us(m["acl_full_us"]), us(m["c_full_us"]), ratio(m["acl_full_us"], m["c_full_us"]),
                 "<= 15 us", _verdict(m["acl_full_us"], TARGETS["full_us"])))
    rows.append(("   (the same calls through raw cffi, no pyaclnn code: the ABI-mode floor)",
                 us(m["cffi_full_us"]), us(m["c_full_us"]), ratio(m["cffi_full_us"], m["c_full_us"]), "-", "info"))
    rows.append(("b. repeatable executor, public objects (set_input, set_output, run)",
                 us(m["public_repeat_us"]), us(m["c_repeat_us"]), ratio(m["public_repeat_us"], m["c_repeat_us"]),
                 "<= 5 us", _verdict(m["public_repeat_us"], TARGETS["repeat_us"])))
    rows.append(("b. repeatable executor, pyaclnn.acl (aclSet{Input,Output}TensorAddr, phase 2)",
                 us(m["acl_repeat_us"]), us(m["c_repeat_us"]), ratio(m["acl_repeat_us"], m["c_repeat_us"]),
                 "<= 5 us", _verdict(m["acl_repeat_us"], TARGETS["repeat_us"])))
    label = f"d. import pyaclnn, fresh interpreter (numpy alone: {m['import_numpy_ms']:.1f} ms)"
    rows.append((label, f"{m['import_pyaclnn_ms']:.1f} ms", "-", "-",
                 "<= 100 ms", _verdict(m["import_pyaclnn_ms"], TARGETS["import_ms"])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        lines.append("  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run(quick: bool = False, batches: int | None = None, calls: int | None = None,
        json_path: str | None = None, profile: bool = False, import_runs: int | None = None) -> int:
    batches = batches or (3 if quick else 20)
    calls = calls or (200 if quick else 2000)
    import_runs = import_runs or (3 if quick else 10)
    try:
        build = _load_emulator_build()
    except (OSError, RuntimeError) as exc:
        _log(f"cannot load the emulator ({EMULATOR_BUILD}): {exc}")
        return 1
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="pyaclnn-acl-overhead-") as tmp:
        _log("building the CANN emulator toolkit (tests/emulator, 8.x layout)")
        try:
            home = build.build_toolkit(Path(tmp), "8.x")
        except build.EmulatorBuildError as exc:
            _log(f"cannot build the emulator: {exc}")
            return 1
        toolkit = build.toolkit_env(home)

        _log(f"compiling and running the C baseline ({C_SOURCE.name})")
        exe = Path(tmp) / "acl_overhead_c"
        try:
            _compile_c(home, exe)
            c_env = dict(os.environ)
            c_env.update(toolkit)
            c = _run_c(exe, c_env, batches, calls)
        except RuntimeError as exc:
            _log(str(exc))
            return 1

        _log("starting the Python worker (PYACLNN_BACKEND=acl on the emulator)")
        worker_env = _python_env({**toolkit, "PYACLNN_BACKEND": "acl"})
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--batches", str(batches),
               "--calls", str(calls)] + (["--profile"] if profile else [])
        proc = subprocess.run(cmd, env=worker_env, stdout=subprocess.PIPE, text=True, check=False)
        if proc.returncode != 0:
            _log(f"the Python worker failed (exit {proc.returncode})")
            return 1
        py = json.loads(proc.stdout)

    _log(f"timing `import pyaclnn` in {import_runs} fresh interpreters")
    imports = _import_times(import_runs)

    medians = {
        "public_full_us": _median(py["public_full_us"]), "public_existing_us": _median(py["public_existing_us"]),
        "acl_full_us": _median(py["acl_full_us"]), "cffi_full_us": _median(py["cffi_full_us"]),
        "public_repeat_us": _median(py["public_repeat_us"]), "acl_repeat_us": _median(py["acl_repeat_us"]),
        "c_full_us": _median(c["full"]), "c_repeat_us": _median(c["repeat"]),
        "import_pyaclnn_ms": _median(imports["pyaclnn_ms"]), "import_numpy_ms": _median(imports["numpy_ms"]),
    }
    result: dict[str, Any] = {
        "tool": "benchmarks/acl_overhead.py",
        "quick": quick, "batches": batches, "calls_per_batch": calls, "import_runs": import_runs,
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                    "platform": f"{platform.system()} {platform.machine()}",
                    "compiler": os.environ.get("CC") or "cc"},
        "medians": medians,
        "ratios": {"public_full_py_over_c": medians["public_full_us"] / medians["c_full_us"],
                   "acl_full_py_over_c": medians["acl_full_us"] / medians["c_full_us"],
                   "public_repeat_py_over_c": medians["public_repeat_us"] / medians["c_repeat_us"],
                   "acl_repeat_py_over_c": medians["acl_repeat_us"] / medians["c_repeat_us"]},
        "targets": {"full_us": TARGETS["full_us"], "repeat_us": TARGETS["repeat_us"],
                    "import_ms": TARGETS["import_ms"],
                    "public_full": _verdict(medians["public_full_us"], TARGETS["full_us"]),
                    "acl_full": _verdict(medians["acl_full_us"], TARGETS["full_us"]),
                    "public_repeat": _verdict(medians["public_repeat_us"], TARGETS["repeat_us"]),
                    "import": _verdict(medians["import_pyaclnn_ms"], TARGETS["import_ms"])},
        "public_full_stages_us": py["public_stages_us"],
        "samples": {"public_full_us": py["public_full_us"], "public_existing_us": py["public_existing_us"],
                    "acl_full_us": py["acl_full_us"], "cffi_full_us": py["cffi_full_us"],
                    "public_repeat_us": py["public_repeat_us"], "acl_repeat_us": py["acl_repeat_us"],
                    "c_full_us": c["full"], "c_repeat_us": c["repeat"],
                    "import_pyaclnn_ms": imports["pyaclnn_ms"], "import_numpy_ms": imports["numpy_ms"],
                    "wall_import_pyaclnn_ms": imports["wall_pyaclnn_ms"],
                    "wall_bare_interpreter_ms": imports["wall_bare_interpreter_ms"]},
        "import_top_self_us": imports["top_self_us"],
        "elapsed_s": time.time() - started,
    }

    print(f"pyaclnn acl-path host overhead through the CANN emulator (op work negligible); "
          f"median of {batches} batches x {calls} calls; Python {platform.python_version()}, "
          f"{os.cpu_count()} cores" + ("  [--quick: not a measurement]" if quick else ""))
    print()
    print(_table(result))
    print()
    stages = ", ".join(f"{k} {v:.2f} us" for k, v in py["public_stages_us"].items())
    print(f"public full call by stage: {stages}")
    print(f"import pyaclnn as a whole process (`python -c 'import pyaclnn'`): "
          f"{_median(imports['wall_pyaclnn_ms']):.1f} ms wall, vs {_median(imports['wall_bare_interpreter_ms']):.1f} ms "
          f"for `python -c pass`")
    top = ", ".join(f"{r['module']} {r['self_us'] / 1e3:.1f} ms" for r in imports["top_self_us"][:4])
    print(f"import pyaclnn, heaviest modules (self time, one run): {top}")
    if profile and py.get("profile_public_full"):
        print()
        print("cProfile of the public full call (sorted by own time):")
        print(py["profile_public_full"])
    sys.stdout.flush()
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=2) + "\n")
        _log(f"wrote {json_path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="acl_overhead.py",
        description="Host overhead of pyaclnn's acl path (public objects and pyaclnn.acl) against the same "
                    "call sequence in C, through the CANN host emulator; plus `import pyaclnn` time.")
    p.add_argument("--quick", action="store_true", help="a few small batches: checks that it runs (no timing value)")
    p.add_argument("--batches", type=int, default=None, help="timed batches (default 20; --quick: 3)")
    p.add_argument("--calls", type=int, default=None, help="calls per batch (default 2000; --quick: 200)")
    p.add_argument("--json", metavar="PATH", default=None, help="also write every sample as JSON to PATH")
    p.add_argument("--profile", action="store_true", help="also print a cProfile of the public full call")
    p.add_argument("--import-runs", type=int, default=None, help="fresh interpreters for the import time "
                                                                  "(default 10; --quick: 3)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    for name in ("batches", "calls", "import_runs"):
        value = getattr(args, name)
        if value is not None and value < 1:
            print(f"acl_overhead.py: error: --{name.replace('_', '-')} must be >= 1", file=sys.stderr)
            return 2
    if args.worker:
        result = _worker(args.batches or 20, args.calls or 2000, args.profile)
        json.dump(result, sys.stdout)
        return 0
    if shutil.which((shlex.split(os.environ.get("CC") or "cc") or ["cc"])[0]) is None:
        _log("no C compiler ($CC or cc): the emulator and the C baseline are compiled at run time; "
             "install gcc or set CC")
        return 1
    return run(quick=args.quick, batches=args.batches, calls=args.calls, json_path=args.json,
               profile=args.profile, import_runs=args.import_runs)


if __name__ == "__main__":
    sys.exit(main())
