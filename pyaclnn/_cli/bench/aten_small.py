"""Aten-tier small calls (``--case aten-small``): ``pyaclnn.Op`` against the same aten call.

Issue 24 point 7: a small call of an aten-tier operator through ``pyaclnn.Op`` (phase 1, run,
read back) costs at most TARGET times the same aten call with ``torch.from_numpy`` in and out,
measured in one run. For each case in CASES, on float32 inputs of each shape in SHAPES:

- pyaclnn (``op_call``): ``with pyaclnn.Op(name, *tensors, out) as ex: ex.run(stream);
  ex["out"].numpy()`` on device Tensors made once (``Tensor.from_numpy``; the output
  ``Tensor.zeros``). No ``Stream.synchronize``: ``Tensor.numpy`` waits for the queued launches
  that write the tensor itself;
- phase 1 (``phase1_call``): ``pyaclnn.Op(name, *tensors, out)`` and ``close`` only
  (aclnn<Op>GetWorkspaceSize and the executor's release);
- aten (``peer_call``): the overload on ``torch.from_numpy`` views of the same arrays (made in
  the call), its result copied into a preallocated ndarray (``np.copyto``).

torch runs on the aten tier's own thread count (one thread unless PYACLNN_NUM_THREADS says
otherwise; pyaclnn/ops/_aten/spec.py) for both sides, set around the table and restored after.
The timing is timing.py's: medians of individually timed calls, in samples alternating the
three sides. Without torch the table is skipped (the aten tier itself needs torch).
"""
from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .small import align
from .timing import interleaved
from .timing import per_call_us

__all__ = ["ATEN_SMALL_CASE", "TARGET", "SHAPES", "CASES", "AtenCase", "Prepared", "prepare", "op_call",
           "phase1_call", "peer_call", "aten_threads", "measure_aten_small", "format_aten_small"]

ATEN_SMALL_CASE = "aten-small"  # its --case name
TARGET = 3.0  # pyaclnn.Op call / aten call, at most (issue 24 point 7)
SHAPES: tuple[tuple[int, int], ...] = ((8, 16), (64, 64))  # the 8x16, and 4096 elements
ALPHA = 2.5  # Sub's alpha: the aten overload's scaling of ``other``, an aclScalar in CANN


@dataclass(frozen=True)
class AtenCase:
    """One aten-tier operator: ``pyaclnn.Op(name, *inputs, *args, out)`` against
    ``torch.ops.aten.<aten>(*inputs, *aten_args, **aten_kwargs)``."""
    name: str                       # the aclnn operator (without "aclnn")
    aten: str                       # its aten overload, as ``torch.ops.aten`` spells it
    inputs: int                     # float32 input tensors of the case's shape
    args: tuple[Any, ...] = ()      # pyaclnn.Op's other arguments, before ``out``
    aten_args: tuple[Any, ...] = ()
    aten_kwargs: dict[str, Any] = field(default_factory=dict)
    reduces_last: bool = False      # the output drops the last dimension

    def out_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return shape[:-1] if self.reduces_last else shape


CASES: tuple[AtenCase, ...] = (
    AtenCase("Abs", "abs.default", 1),
    AtenCase("Mul", "mul.Tensor", 2),
    AtenCase("Sub", "sub.Tensor", 2, (ALPHA,), aten_kwargs={"alpha": ALPHA}),
    AtenCase("Softmax", "softmax.int", 1, (-1,), (-1,)),
    AtenCase("Amax", "amax.default", 1, ([-1], False), ([-1], False), reduces_last=True),
)


def op_call(name: str, args: Sequence[Any], out: Any, stream: Any) -> Callable[[], np.ndarray]:
    """The timed pyaclnn call: phase 1, run on ``stream``, read back (Tensor.numpy waits for the
    launch), close."""
    import pyaclnn
    op = pyaclnn.Op

    def call() -> np.ndarray:
        with op(name, *args, out) as ex:
            ex.run(stream)
            return ex["out"].numpy()
    return call


def phase1_call(name: str, args: Sequence[Any], out: Any) -> Callable[[], None]:
    """Phase 1 alone: aclnn<name>GetWorkspaceSize through pyaclnn.Op, then close."""
    import pyaclnn
    op = pyaclnn.Op

    def call() -> None:
        op(name, *args, out).close()
    return call


def peer_call(torch: Any, case: AtenCase, arrays: Sequence[np.ndarray], out: np.ndarray) -> Callable[[], np.ndarray]:
    """The aten peer: the overload on torch.from_numpy views made in the call, the result copied
    into ``out`` (preallocated)."""
    packet, overload = case.aten.split(".")
    fn = getattr(getattr(torch.ops.aten, packet), overload)
    from_numpy, extra, kwargs = torch.from_numpy, case.aten_args, case.aten_kwargs

    def call() -> np.ndarray:
        result = fn(*(from_numpy(a) for a in arrays), *extra, **kwargs)
        np.copyto(out, result.numpy())
        return out
    return call


@dataclass
class Prepared:
    """One case on one shape: its input arrays, its device Tensors (made once) and the three calls."""
    case: AtenCase
    shape: tuple[int, ...]
    arrays: tuple[np.ndarray, ...]
    tensors: tuple[Any, ...]  # the inputs' Tensors, then the output's
    op: Callable[[], np.ndarray]
    phase1: Callable[[], None]
    peer: Callable[[], np.ndarray]

    def close(self) -> None:
        for t in self.tensors:
            t.close()


def prepare(case: AtenCase, shape: tuple[int, ...], torch: Any, stream: Any, seed: int) -> Prepared:
    """Inputs (standard normal float32), their Tensors and the output's, and the three calls."""
    import pyaclnn
    rng = np.random.default_rng(seed)
    arrays = tuple(rng.standard_normal(shape).astype(np.float32) for _ in range(case.inputs))
    inputs = tuple(pyaclnn.Tensor.from_numpy(a) for a in arrays)
    out = pyaclnn.Tensor.zeros(case.out_shape(shape), np.float32)
    args = (*inputs, *case.args)
    peer_out = np.zeros(case.out_shape(shape), np.float32)
    return Prepared(case, shape, arrays, (*inputs, out), op_call(case.name, args, out, stream),
                    phase1_call(case.name, args, out), peer_call(torch, case, arrays, peer_out))


def aten_threads() -> int:
    """The torch thread count the aten tier runs with (pyaclnn/ops/_aten/spec.py)."""
    from ...ops._aten.spec import kernel_threads  # the tier's documented rule, read where it is defined
    return kernel_threads()


def _label(case: AtenCase, shape: tuple[int, ...]) -> str:
    return f"{case.name} {'x'.join(map(str, shape))}"


def measure_aten_small(prepared: Prepared, samples: int, batch: int) -> dict[str, Any]:
    """Median microseconds per call of the three sides over ``samples`` alternating samples of
    ``batch`` calls each; torch's thread count is the caller's to set."""
    case, shape = prepared.case, prepared.shape
    sides = (prepared.op, prepared.phase1, prepared.peer)
    times = interleaved(lambda k, n: per_call_us(sides[k], n), len(sides), samples, batch)
    op, p1, peer = (statistics.median(t) for t in times)
    ratio = op / peer
    diff = float(np.max(np.abs(prepared.op() - prepared.peer())))
    print(f"bench: [aten-small] {_label(case, shape)}: pyaclnn.Op {op:.1f} us (phase 1 {p1:.1f} us), "
          f"aten {peer:.1f} us, ratio {ratio:.2f}", file=sys.stderr, flush=True)
    return {"name": case.name, "label": _label(case, shape), "shape": list(shape),
            "elements": int(np.prod(shape)), "batch": batch,
            "pyaclnn": {"call": "pyaclnn.Op(..., out) as ex: ex.run(stream); ex['out'].numpy()",
                        "median_us": op, "samples_us": times[0]},
            "phase1": {"median_us": p1, "samples_us": times[1]},
            "peer": {"op": f"torch.ops.aten.{case.aten}", "median_us": peer, "samples_us": times[2]},
            "ratio": ratio, "target_ratio": TARGET, "within_target": ratio <= TARGET, "max_abs_diff": diff}


def run_aten_small(torch: Any, samples: int, batch: int, no_torch: str = "") -> tuple[dict[str, Any], bool]:
    """The table's JSON value, and whether a case failed. Skipped (no rows) without torch
    (``torch`` None; ``no_torch`` says why)."""
    result: dict[str, Any] = {"skipped": None, "torch_threads": None, "target_ratio": TARGET, "rows": []}
    if torch is None:
        result["skipped"] = (f"PyTorch is not available ({no_torch or 'not imported'}) and the aten tier "
                             f"runs on it (pip install 'pyaclnn[torch]')")
        print(f"bench: [aten-small] skipped: {result['skipped']}", file=sys.stderr, flush=True)
        return result, False
    import pyaclnn
    from ...ops._aten.spec import torch_module
    torch_module()  # the tier's first use sets torch's thread count process-wide: before saving it
    before, threads = torch.get_num_threads(), aten_threads()
    result["torch_threads"] = threads
    failed = False
    print(f"bench: [aten-small] pyaclnn.Op against aten on {', '.join('x'.join(map(str, s)) for s in SHAPES)} "
          f"float32, torch on {threads} thread(s): {samples} samples of {batch} calls each, alternating",
          file=sys.stderr, flush=True)
    torch.set_num_threads(threads)
    try:
        with pyaclnn.Device(0) as device, device.create_stream() as stream:
            for shape in SHAPES:
                for k, case in enumerate(CASES):
                    try:
                        prepared = prepare(case, shape, torch, stream, 20241124 + k)
                        try:
                            result["rows"].append(measure_aten_small(prepared, samples, batch))
                        finally:
                            prepared.close()
                    except Exception as exc:  # noqa: BLE001 - report the case, go on with the others
                        print(f"bench: [aten-small] {_label(case, shape)}: FAILED: {type(exc).__name__}: {exc}",
                              file=sys.stderr, flush=True)
                        result["rows"].append({"name": case.name, "label": _label(case, shape),
                                               "shape": list(shape), "error": f"{type(exc).__name__}: {exc}"})
                        failed = True
    finally:
        torch.set_num_threads(before)
    return result, failed


def format_aten_small(table: dict[str, Any]) -> str:
    """The table's title and rows (or the line saying why it was skipped)."""
    if table["skipped"]:
        return f"Aten-tier small calls: skipped: {table['skipped']}"
    title = (f"Aten-tier small calls: pyaclnn.Op(name, *tensors, out) on Tensors made once (phase 1, run, "
             f"read back with Tensor.numpy(), which waits for the launch) vs the aten overload on "
             f"torch.from_numpy inputs, its result copied into a preallocated ndarray; torch on "
             f"{table['torch_threads']} thread(s) for both, as the aten tier runs it; median per call; "
             f"target: at most {TARGET:g}x aten. phase 1 = pyaclnn.Op(...) and close alone")
    head = ("case", "elements", "pyaclnn.Op", "phase 1", "aten", "ratio", f"target <= {TARGET:g}x")
    rows: list[tuple[str, ...]] = [head]
    for r in table["rows"]:
        if "error" in r:
            rows.append((r["label"], "-", "FAILED") + ("-",) * (len(head) - 3))
            continue
        rows.append((r["label"], str(r["elements"]), f"{r['pyaclnn']['median_us']:.1f} us",
                     f"{r['phase1']['median_us']:.1f} us", f"{r['peer']['median_us']:.1f} us",
                     f"{r['ratio']:.2f}", "ok" if r["within_target"] else "OVER"))
    return title + "\n" + align(rows)
