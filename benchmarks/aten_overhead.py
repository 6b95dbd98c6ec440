#!/usr/bin/env python3
"""What a small call of an aten-tier operator costs through pyaclnn.Op, against the same aten call.

The calls are those of ``python -m pyaclnn bench --case aten-small`` (pyaclnn/_cli/bench/
aten_small.py: the cases, the call definitions and the timing), on 8x16 float32 inputs, with two
more columns than that table:

  aten        the aten overload the case names, on ``torch.from_numpy`` views of the inputs, its
              result copied into a preallocated NumPy output (``np.copyto``): the peer;
  op          ``pyaclnn.Op(name, *tensors, out)`` with device Tensors made once: phase 1, ``run``,
              ``out.numpy()`` (read back; it waits for the launch itself), ``close``;
  op-ndarray  the same with ndarrays (each uploaded to a new device tensor per call);
  phase-1     ``pyaclnn.Op(name, *tensors, out)`` and ``close`` only (aclnn<Op>GetWorkspaceSize);
  exact-Add   ``op`` for aclnnAdd (an exact reference) on two 8x16 tensors: the object layer's
              and the device model's own cost, which every operator pays;

as medians of individually timed calls, in samples alternating the five, in microseconds, and
the ratio op / aten (issue 24's target: at most 3). torch runs on the aten tier's thread count
(one unless PYACLNN_NUM_THREADS says otherwise).

The two rounds below were measured by the earlier version of this script: each column timed
on its own (not alternating), and ``op`` with an explicit ``Stream.synchronize`` before
``out.numpy()``; it had no Sub case.

Measured on a shared 2-core AMD EPYC VM (Python 3.11.7, torch 2.13 CPU, NumPy 2.4; other jobs
kept the load at 4-6), 2026-11-28, medians of three interleaved runs of 1500 calls, before and
after the speed work of issue 24 point 7 (the op cache, views and spans reused for the same
tensors, the leaner launch, copy and readback):

  case     aten us  op us before -> after  op/aten before -> after  phase-1 before -> after
  Abs          5.1          58.9 -> 34.7            11.1 -> 6.7             13.4 -> 9.3
  Mul          5.6          63.3 -> 35.4            11.0 -> 6.3             14.7 -> 9.9
  Softmax      5.4          60.2 -> 36.9            11.0 -> 6.8             14.1 -> 10.8
  Amax         6.5          75.3 -> 51.2            11.5 -> 7.9             17.9 -> 16.2
  (exact-Add: 76.8 -> 64.1 us)

Second round (the same machine and load, 2026-11-28, medians of three interleaved runs of 1500
calls against the tree before it: per-plan reuse of phase 1's inputs and outputs, of a launch's
race-check spans, allocations, stale check and bound kernel, a one-step read back):

  case     aten us  op us before -> after  op/aten before -> after  phase-1 before -> after
  Abs          5.3          37.6 -> 31.4             7.0 -> 5.9              9.6 -> 9.0
  Mul          5.7          40.2 -> 32.5             7.0 -> 5.7             10.3 -> 9.5
  Softmax      5.5          40.3 -> 33.3             7.2 -> 6.1             10.8 -> 10.3
  Amax         6.6          55.9 -> 44.9             8.5 -> 6.7             16.2 -> 14.8
  (exact-Add: 67.7 -> 57.0 us)

Third round, measured by this version (the same machine, load 0.4-0.8, 2026-11-28, one run of
the default 2000 calls per column after the merges of this round's speed branches: the phase-1
op cache looked up before the checks as CANN's L2_DFX_PHASE_1, launch templates, fewer steps in
synchronize and read back, the out= form of pointwise ops and listed structured reductions, the
leaner object layer; pyaclnn bench --case aten-small gave the same ratios within 0.1):

  case     aten us  op us  op/aten  phase-1 us
  Abs          4.9   14.1     2.91         5.1
  Mul          5.2   16.0     3.06         5.3
  Sub          6.1   19.8     3.26         7.9
  Softmax      5.0   15.0     2.96         5.5
  Amax         6.2   18.7     3.00         8.1
  (exact-Add: 30.9 us)

Fourth round (the same machine, load 0.1-1, 2026-11-28, one run of the default 2000 calls per
column after the second round of speed branches: operator slots and spec rules read once, handles
registered without a lock, launch templates checked by one token, sites decoded when read,
queued tasks counted when a check reads them):

  case     aten us  op us  op/aten  phase-1 us
  Abs          4.8   11.6     2.43         4.0
  Mul          5.1   13.1     2.56         4.2
  Sub          6.0   15.5     2.58         5.8
  Softmax      5.0   12.4     2.49         4.4
  Amax         6.1   15.0     2.44         5.9
  (exact-Add: 24.3 us; op-ndarray 155-209 us: an upload and a free per call)

Usage: python benchmarks/aten_overhead.py [--calls N] [--samples S] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
from typing import Any, Callable

os.environ.setdefault("PYACLNN_BACKEND", "numpy")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import pyaclnn  # noqa: E402
from pyaclnn._cli.bench.aten_small import CASES, aten_threads, op_call, prepare  # noqa: E402
from pyaclnn._cli.bench.timing import interleaved, per_call_us  # noqa: E402

SHAPE = (8, 16)
COLUMNS = ("aten", "op", "op-ndarray", "phase-1", "exact-Add")


def measure(calls: int, samples: int) -> dict[str, dict[str, float]]:
    """Per case: the median (over ``samples`` alternating samples of calls // samples calls) of
    each column's per-call median, in microseconds, and op / aten."""
    rows: dict[str, dict[str, float]] = {}
    batch = max(calls // samples, 1)
    torch.set_num_threads(aten_threads())
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        rng = np.random.default_rng(0)
        x, y = (pyaclnn.Tensor.from_numpy(rng.standard_normal(SHAPE).astype(np.float32)) for _ in range(2))
        exact = op_call("Add", (x, y, 1.0), pyaclnn.Tensor.zeros(SHAPE, np.float32), stream)
        for k, case in enumerate(CASES):
            p = prepare(case, SHAPE, torch, stream, k)
            np.testing.assert_allclose(p.op(), p.peer(), rtol=1e-6)
            nd = op_call(case.name, (*p.arrays, *case.args), np.zeros(case.out_shape(SHAPE), np.float32), stream)
            sides: tuple[Callable[[], Any], ...] = (p.peer, p.op, nd, p.phase1, exact)
            times = interleaved(lambda j, n: per_call_us(sides[j], n), len(sides), samples, batch)
            rows[case.name] = {c: statistics.median(t) for c, t in zip(COLUMNS, times)}
            rows[case.name]["ratio"] = rows[case.name]["op"] / rows[case.name]["aten"]
            p.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per column and case (default 2000)")
    parser.add_argument("--samples", type=int, default=10, help="alternating samples they are split into")
    parser.add_argument("--json", help="write the medians there too")
    ns = parser.parse_args()
    rows = measure(ns.calls, ns.samples)
    print(f"{'case':10} {'aten us':>9} {'op us':>9} {'op-ndarray':>11} {'phase-1':>8} {'exact-Add':>10} {'op/aten':>8}")
    for name, r in rows.items():
        print(f"{name:10} {r['aten']:9.1f} {r['op']:9.1f} {r['op-ndarray']:11.1f} {r['phase-1']:8.1f} "
              f"{r['exact-Add']:10.1f} {r['ratio']:8.2f}")
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
