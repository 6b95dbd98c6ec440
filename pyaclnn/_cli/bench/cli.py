"""The `pyaclnn bench` command line."""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...ops.cases import CASE_NAMES
from ...ops.cases import make_cases
from .aten_small import ATEN_SMALL_CASE
from .aten_small import run_aten_small
from .measure import _load_torch
from .measure import copy_bandwidth
from .measure import run_case
from .report import _machine
from .report import format_report
from .small import SMALL_CASE
from .small import measure_small
from .small import small_cases

PROG = "pyaclnn bench"
SCHEMA = "pyaclnn-bench/2"
MODES = ("both", "alloc", "reuse")
MiB = 1 << 20
DEFAULT_REPEAT = 7
DEFAULT_JSON = "bench-results.json"
COPY_BYTES = 256 * MiB
QUICK_COPY_BYTES = 8 * MiB
SMALL_SAMPLES, SMALL_BATCH = 15, 200  # small calls: samples of batches of calls (--quick: 3 of 10)


def _progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Benchmark the NumPy reference backend (float32) against PyTorch CPU's aten backward "
                    "kernels and the machine's memory-traffic bound, on the operators with benchmark cases.",
        epilog="Progress goes to stderr, the table to stdout, every sample to the JSON file. "
               "Exit codes: 0 done, 1 a case failed, 2 usage error.")
    p.add_argument("--quick", action="store_true",
                   help="tiny shapes and 1 run: checks the output is well formed (CI); no timing value")
    p.add_argument("--repeat", type=int, default=None, metavar="N",
                   help=f"timed runs per case and side, after one warm-up (default {DEFAULT_REPEAT}; --quick: 1)")
    p.add_argument("--json", metavar="PATH", default=None,
                   help=f"where to write the JSON results (default: {DEFAULT_JSON} in the current directory; "
                        "with --acl: no file unless given)")
    p.add_argument("--case", action="append", choices=(*CASE_NAMES, SMALL_CASE, ATEN_SMALL_CASE), metavar="NAME",
                   help=f"run only this case (repeatable): {', '.join(CASE_NAMES)}, {SMALL_CASE} (the "
                        "operators on inputs of <= 4096 elements, per call against aten, target 3x), or "
                        f"{ATEN_SMALL_CASE} (aten-tier operators through pyaclnn.Op on 8x16 and 64x64, per "
                        "call against the aten call, target 3x; needs torch)")
    p.add_argument("--mode", choices=MODES, default=None,
                   help="both tables (default), only the allocating one (alloc: new outputs every call), or "
                        "only the steady-state one (reuse: preallocated outputs written in place)")
    p.add_argument("--reuse-outputs", action="store_true", help="short for --mode reuse")
    p.add_argument("--no-torch", action="store_true", help="do not import torch: measure pyaclnn alone")
    p.add_argument("--acl", action="store_true",
                   help="instead, measure the acl path's host overhead through the CANN emulator "
                        "(benchmarks/acl_overhead.py; needs a source checkout and a C compiler)")
    p.add_argument("--import-time", action="store_true",
                   help="instead, measure what `import pyaclnn` costs after `import numpy` (fresh "
                        "interpreters; --repeat runs, default 15)")
    return p


def _acl_overhead(quick: bool, json_path: str | None) -> int:
    script = Path(__file__).resolve().parents[3] / "benchmarks" / "acl_overhead.py"
    emulator = script.parent.parent / "tests" / "emulator" / "build.py"
    if not (script.is_file() and emulator.is_file()):
        print(f"{PROG}: error: --acl needs a source checkout of pyaclnn (benchmarks/acl_overhead.py and "
              f"tests/emulator/ next to the package; looked in {script.parent.parent})", file=sys.stderr)
        return 2
    import importlib.util
    spec = importlib.util.spec_from_file_location("pyaclnn_acl_overhead", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    argv = (["--quick"] if quick else []) + (["--json", json_path] if json_path else [])
    return int(module.main(argv) or 0)


def _force_reference_backend() -> str | None:
    """Select the NumPy backend for this process; an error text if another one is already in use."""
    from ..._objects import backend as _backend
    current = _backend.active
    if current is None:
        os.environ["PYACLNN_BACKEND"] = "numpy"
        return None
    if current.name != "numpy":
        return f"the {current.name} backend is already in use in this process; bench measures the reference backend"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code or 0)
    if args.repeat is not None and args.repeat < 1:
        print(f"{PROG}: error: --repeat must be at least 1", file=sys.stderr)
        return 2
    if args.reuse_outputs and args.mode not in (None, "reuse"):
        print(f"{PROG}: error: --reuse-outputs contradicts --mode {args.mode}", file=sys.stderr)
        return 2
    mode = "reuse" if args.reuse_outputs else (args.mode or "both")
    modes = ("alloc", "reuse") if mode == "both" else (mode,)
    if args.acl:
        return _acl_overhead(args.quick, args.json)
    if args.import_time:
        from . import imports
        print(imports.report(imports.measure(args.repeat or (3 if args.quick else 15))), flush=True)
        return 0
    json_path = args.json or DEFAULT_JSON
    repeat = args.repeat or (1 if args.quick else DEFAULT_REPEAT)
    problem = _force_reference_backend()
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 2

    import pyaclnn
    started = time.time()
    info = pyaclnn.backend_info()
    torch, torch_info = _load_torch(args.no_torch)
    if torch is None:
        _progress(f"PyTorch is not available ({torch_info['reason']}): measuring pyaclnn alone, "
                  "the peer columns stay empty (pip install torch to compare)")
    copy_bytes = QUICK_COPY_BYTES if args.quick else COPY_BYTES
    bw_runs = max(repeat, 3)
    _progress(f"measuring the copy bandwidth (np.copyto of {copy_bytes // MiB} MiB float32, median of {bw_runs})")
    bandwidth = copy_bandwidth(copy_bytes, bw_runs)

    cases = [c for c in make_cases(args.quick) if not args.case or c.name in args.case]
    run_small = "alloc" in modes and (not args.case or SMALL_CASE in args.case)
    run_aten = not args.case or ATEN_SMALL_CASE in args.case  # in every mode: it is neither
    results: dict[str, Any] = {
        "schema": SCHEMA, "pyaclnn": pyaclnn.__version__,
        "argv": list(sys.argv[1:] if argv is None else argv), "quick": args.quick,
        "repeat": repeat, "warmup": 1, "modes": list(modes),
        "backend": {k: info[k] for k in ("backend", "soc", "reason")},
        "machine": _machine(torch_info), "peer": torch_info, "copy_bandwidth": bandwidth, "cases": [],
        "reuse_cases": [], "small_calls": [], "aten_small_calls": None}
    status = 0
    for k, case in enumerate(cases, 1):
        try:
            alloc, reuse = run_case(case, repeat, torch, k, len(cases), bandwidth["gbps"], modes)
        except Exception as exc:  # noqa: BLE001 - report the case, go on with the others
            _progress(f"[{k}/{len(cases)}] {case.label}: FAILED: {type(exc).__name__}: {exc}")
            failed = {"name": case.name, "label": case.label, "params": case.params,
                      "error": f"{type(exc).__name__}: {exc}"}
            alloc = failed if "alloc" in modes else None
            reuse = failed if "reuse" in modes else None
        for key, res in (("cases", alloc), ("reuse_cases", reuse)):
            if res is not None:
                results[key].append(res)
                status = 1 if "error" in res else status
        gc.collect()
    if run_small:
        samples, batch = (3, 10) if args.quick else (SMALL_SAMPLES, SMALL_BATCH)
        _progress(f"[small] the operators on inputs of <= 4096 elements: {samples} samples of {batch} calls "
                  "each, alternating pyaclnn and torch")
        for k, small in enumerate(small_cases()):
            try:
                results["small_calls"].append(measure_small(small, torch, samples, batch, 20240701 + k))
            except Exception as exc:  # noqa: BLE001 - report the case, go on with the others
                _progress(f"[small] {small.label}: FAILED: {type(exc).__name__}: {exc}")
                results["small_calls"].append({"name": small.name, "label": small.label,
                                               "elements": small.elements, "error": f"{type(exc).__name__}: {exc}"})
                status = 1
    if run_aten:  # last: the aten tier sets torch's thread count process-wide on its first use
        samples, batch = (3, 10) if args.quick else (SMALL_SAMPLES, SMALL_BATCH)
        results["aten_small_calls"], aten_failed = run_aten_small(torch, samples, batch, torch_info["reason"])
        status = 1 if aten_failed else status
    results["elapsed_s"] = time.time() - started

    print(format_report(results), flush=True)
    try:
        import json
        Path(json_path).write_text(json.dumps(results, indent=2, default=_json_default) + "\n")
    except OSError as exc:
        print(f"{PROG}: error: cannot write {json_path}: {exc}", file=sys.stderr)
        return 1
    _progress(f"wrote {json_path}")
    return status


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
