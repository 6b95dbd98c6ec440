"""Small calls: the NumPy-in/NumPy-out functions on inputs of <= 4096 elements against aten.

On such inputs the arithmetic is nothing and the per-call cost (argument handling, the phase-1
checks, output allocation, dispatch) is everything, so this table is about overhead: pyaclnn's
target is at most TARGET times torch's aten call on the same arrays, in the same run.

Each sample is the median of a batch of individually timed calls; samples alternate pyaclnn
and torch, and the medians of the samples and their ratio come from the same run (timing.py).

aten is timed as torch is set up (all its threads: the target's peer) and, in its own samples,
with ``torch.set_num_threads(1)``: on inputs this small aten's thread handling costs more than
it saves (GroupNorm: ~10 us against ~7 us on one thread, on a 2-core machine), and pyaclnn's
small paths run in the calling thread. The table shows both.

pyaclnn is also timed on the same inputs as torch tensors (``torch.from_numpy`` views: what a
torch user passes), in its own samples alternating with the others: converting them is the
only extra work, and the target is at most TORCH_INPUT_TARGET times the ndarray call (issue 16).
"""
from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...ops.cases import Case
from ...ops.cases import small_cases as _cases_of
from .timing import interleaved
from .timing import per_call_us

__all__ = ["TARGET", "TORCH_INPUT_TARGET", "SMALL_CASE", "small_cases", "measure_small", "format_small_table",
           "align"]

TARGET = 3.0       # pyaclnn per call / aten per call, at most
TORCH_INPUT_TARGET = 1.5  # pyaclnn on torch tensors / pyaclnn on the same ndarrays, at most
SMALL_CASE = "small"  # its --case name
SIZES = (128, 4096)  # elements of the main input: the 8x16, and the top of the range


@dataclass
class SmallCase:
    """A benchmark case (cases.py: the same pyaclnn call and aten peer as the large tables) on
    inputs of ``elements`` elements."""
    case: Case
    elements: int

    @property
    def name(self) -> str:
        return self.case.name

    @property
    def label(self) -> str:
        return self.case.label


def small_cases() -> list[SmallCase]:
    """Every operator's small case (its api.py's ``small_case``) on the issue's 8x16 (128
    elements) and on 4096 elements."""
    return [SmallCase(c, n) for n in SIZES for c in _cases_of(n)]


def _max_abs_diff(ours: Any, theirs: Any) -> float:
    a = ours if isinstance(ours, tuple) else (ours,)
    b = theirs if isinstance(theirs, tuple) else (theirs,)
    return max(float(np.max(np.abs(x - y.numpy().reshape(x.shape)))) for x, y in zip(a, b))


def measure_small(case: SmallCase, torch: Any, samples: int, batch: int, seed: int) -> dict[str, Any]:
    """Median microseconds per call of each side over ``samples`` batches of ``batch`` calls."""
    spec = case.case
    inputs = spec.make(np.random.default_rng(seed))
    ours: Callable[[], Any] = lambda: spec.run_pyaclnn(inputs)  # noqa: E731
    # the sides, each (call, on one torch thread): pyaclnn on ndarrays, then with torch: aten,
    # aten on one thread, pyaclnn on the same memory as torch tensors
    sides: list[tuple[Callable[[], Any], bool]] = [(ours, False)]
    if torch is not None:
        tinputs = {k: torch.from_numpy(v) for k, v in inputs.items()}
        theirs: Callable[[], Any] = lambda: spec.run_torch(tinputs)  # noqa: E731
        ours_torch: Callable[[], Any] = lambda: spec.run_pyaclnn(tinputs)  # noqa: E731
        sides += [(theirs, False), (theirs, True), (ours_torch, False)]

    def sample(k: int, n: int) -> float:
        fn, one_thread = sides[k]
        if not one_thread:
            return per_call_us(fn, n)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return per_call_us(fn, n)
        finally:
            torch.set_num_threads(threads)

    times = interleaved(sample, len(sides), samples, batch)
    med = statistics.median(times[0])
    result: dict[str, Any] = {"name": case.name, "label": case.label, "elements": case.elements,
                              "batch": batch, "pyaclnn": {"median_us": med, "samples_us": times[0]},
                              "peer": None, "ratio": None, "target_ratio": TARGET, "within_target": None,
                              "peer_one_thread": None, "ratio_one_thread": None, "max_abs_diff": None,
                              "torch_inputs": None, "torch_input_ratio": None,
                              "torch_input_target": TORCH_INPUT_TARGET, "torch_input_within_target": None}
    if torch is not None:
        peer_med = statistics.median(times[1])
        result["peer"] = {"ops": [f"torch.ops.aten.{op}" for op in spec.peer_ops], "median_us": peer_med,
                          "samples_us": times[1]}
        result["ratio"] = med / peer_med
        result["within_target"] = result["ratio"] <= TARGET
        one = statistics.median(times[2])
        result["peer_one_thread"] = {"median_us": one, "samples_us": times[2]}
        result["ratio_one_thread"] = med / one
        result["max_abs_diff"] = _max_abs_diff(ours(), theirs())
        tin = statistics.median(times[3])
        result["torch_inputs"] = {"median_us": tin, "samples_us": times[3]}
        result["torch_input_ratio"] = tin / med
        result["torch_input_within_target"] = result["torch_input_ratio"] <= TORCH_INPUT_TARGET
        _same_outputs(ours(), ours_torch())
    print(f"bench: [small] {case.label}: pyaclnn {med:.1f} us"
          + (f", torch {result['peer']['median_us']:.1f} us, ratio {result['ratio']:.2f}"
             f" (torch on 1 thread {result['peer_one_thread']['median_us']:.1f} us, ratio "
             f"{result['ratio_one_thread']:.2f}); pyaclnn on torch tensors "
             f"{result['torch_inputs']['median_us']:.1f} us, {result['torch_input_ratio']:.2f}x"
             if torch is not None else ""),
          file=sys.stderr, flush=True)
    return result


def _same_outputs(ours: Any, ours_torch: Any) -> None:
    """pyaclnn gives the same bits for torch tensors as for the ndarrays they view."""
    a = ours if isinstance(ours, tuple) else (ours,)
    b = ours_torch if isinstance(ours_torch, tuple) else (ours_torch,)
    for x, y in zip(a, b, strict=True):
        if not np.array_equal(x, y, equal_nan=True):
            raise AssertionError("pyaclnn's outputs differ between torch-tensor and ndarray inputs")


def format_small_table(rows: list[dict[str, Any]]) -> str:
    head = ("case", "elements", "pyaclnn", "aten", "ratio", f"target <= {TARGET:g}x", "aten 1 thread", "ratio",
            "torch in", "/ ndarray", f"target <= {TORCH_INPUT_TARGET:g}x")
    table: list[tuple[str, ...]] = [head]
    for r in rows:
        if "error" in r:
            table.append((r["label"], "-", "FAILED") + ("-",) * (len(head) - 3))
            continue
        peer, tin = r["peer"], r.get("torch_inputs")
        table.append((r["label"], str(r["elements"]), f"{r['pyaclnn']['median_us']:.1f} us",
                      f"{peer['median_us']:.1f} us" if peer else "-",
                      f"{r['ratio']:.2f}" if r["ratio"] is not None else "-",
                      "-" if r["within_target"] is None else ("ok" if r["within_target"] else "OVER"),
                      f"{r['peer_one_thread']['median_us']:.1f} us" if r.get("peer_one_thread") else "-",
                      f"{r['ratio_one_thread']:.2f}" if r.get("ratio_one_thread") is not None else "-",
                      f"{tin['median_us']:.1f} us" if tin else "-",
                      f"{r['torch_input_ratio']:.2f}" if tin else "-",
                      "-" if not tin else ("ok" if r["torch_input_within_target"] else "OVER")))
    return align(table)


def align(table: list[tuple[str, ...]]) -> str:
    """A header row, a rule, then the rows: the first column left-aligned, the others right."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = []
    for k, row in enumerate(table):
        lines.append("  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i])
                               for i, c in enumerate(row)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
