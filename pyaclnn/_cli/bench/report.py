"""The benchmark's tables and machine description."""
from __future__ import annotations

import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .aten_small import format_aten_small
from .measure import _ms
from .measure import _usable_cores
from .small import TARGET
from .small import TORCH_INPUT_TARGET
from .small import format_small_table

MiB = 1 << 20


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _kernel_threads() -> int | None:
    try:
        from ..._numpy.kernels._parallel import num_threads
        return int(num_threads())
    except Exception:  # noqa: BLE001 - informational only
        return None


def _mib(n: int | None) -> str:
    if n is None:
        return "-"
    return f"{n / MiB:.1f} MiB" if abs(n) >= MiB else f"{n / 1024:.1f} KiB"


def format_table(cases: Sequence[dict[str, Any]], steady: bool = False) -> str:
    head = ("case", "pyaclnn", "peer", "ratio", "bound", "x bound", "extra peak")
    rows: list[tuple[str, ...]] = [head + (("peer outputs",) if steady else ("fresh pages",))]
    for c in cases:
        if "error" in c:
            rows.append((c["label"], "FAILED") + ("-",) * (len(rows[0]) - 2))
            continue
        peer = c["peer"]
        row: tuple[str, ...] = (
            c["label"], _ms(c["pyaclnn"]["median_ms"]), _ms(peer["median_ms"]) if peer else "-",
            f"{c['ratio']:.2f}" if c["ratio"] is not None else "-",
            _ms(c["bound_ms"]), f"{c['x_bound']:.2f}", _mib(c["extra_peak_bytes"]))
        if steady:
            row += ("-" if peer is None else
                    "preallocated (out=)" if peer["out_variant"] else "allocated: no out= overload",)
        else:
            row += (_ms(c["fresh_pages_ms"]),)
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) if i == 0 or (steady and i == 7) else cell.rjust(widths[i])
                               for i, cell in enumerate(r)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_report(results: dict[str, Any]) -> str:
    m, peer, bw = results["machine"], results["peer"], results["copy_bandwidth"]
    if peer["available"]:
        vs = f"PyTorch {peer['version']} CPU aten kernels ({peer['threads']} threads)"
    else:
        vs = f"no peer: {peer['reason']}; pyaclnn measured alone"
    title = (f"pyaclnn {results['pyaclnn']} bench: NumPy reference backend (float32, "
             f"{m['pyaclnn_kernel_threads'] or '?'} kernel threads) vs {vs}")
    runs = f"median of {results['repeat']} run(s) after 1 warm-up, pyaclnn and the peer alternating"
    if results["quick"]:
        runs += "  [--quick: tiny shapes, the figures mean nothing]"
    machine = f"machine: {m['cores']} cores ({m['cpu']}), Python {m['python']}, numpy {m['numpy']}"
    if m["torch"]:
        machine += f", torch {m['torch']}"
    copy = (f"copy bandwidth {bw['gbps']:.2f} GB/s (np.copyto {bw['array_bytes'] // MiB} MiB float32, "
            f"read+write bytes: 1 thread {bw['single_thread_gbps']:.2f} GB/s")
    if bw["all_threads_gbps"]:
        copy += f", {bw['threads']} threads {bw['all_threads_gbps']:.2f} GB/s"
    lines = [title, runs, machine, copy + ")"]
    # a large table is shown when it has a case (--case small or aten-small alone selects none)
    if "alloc" in results["modes"] and results["cases"]:
        lines += ["", ("Allocating: the public NumPy-in/NumPy-out call (new outputs every call) vs aten's "
                       "allocating call"), format_table(results["cases"])]
    if "reuse" in results["modes"] and results["reuse_cases"]:
        lines += ["", ("Steady state (outputs reused): pyaclnn two-phase API on Tensors made once, each run = "
                       "plan the executor + run it; torch via aten's out= overloads"),
                  format_table(results["reuse_cases"], steady=True)]
    if results.get("small_calls"):
        lines += ["", (f"Small calls (inputs of <= 4096 elements): the NumPy-in/NumPy-out call vs the aten call, "
                       f"median per call; target: at most {TARGET:g}x aten. torch in = the same call on the "
                       f"inputs as torch tensors (torch.from_numpy views), / ndarray = torch in / pyaclnn; "
                       f"target: at most {TORCH_INPUT_TARGET:g}x"),
                  format_small_table(results["small_calls"])]
    if results.get("aten_small_calls"):
        lines += ["", format_aten_small(results["aten_small_calls"])]
    if not (results["cases"] or results["reuse_cases"]):
        return "\n".join(lines)
    lines += ["",
              ("ratio = pyaclnn / peer (above 1: pyaclnn slower); bound = bytes read + written once / copy "
               "bandwidth; x bound = pyaclnn / bound;"),
              ("extra peak = tracemalloc peak of one pyaclnn call minus its outputs (after the timed runs; "
               "steady state: the whole peak of one plan + run);"),
              ("fresh pages = time to get the outputs' bytes of new memory zeroed and faulted in (all threads): "
               "every allocating call pays it, so bound + fresh pages is its floor.")]
    return "\n".join(lines)


def _machine(torch_info: dict[str, Any]) -> dict[str, Any]:
    return {"cores": os.cpu_count(), "usable_cores": _usable_cores(), "cpu": _cpu_model(),
            "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
            "python": platform.python_version(), "numpy": np.__version__, "torch": torch_info["version"],
            "torch_threads": torch_info["threads"], "pyaclnn_kernel_threads": _kernel_threads(),
            "PYACLNN_NUM_THREADS": os.environ.get("PYACLNN_NUM_THREADS")}


