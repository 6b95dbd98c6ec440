#!/usr/bin/env python3
"""What a small call of an aten-tier operator costs through pyaclnn.Op, against the same aten call.

For each case, on 8x16 float32 inputs (the arithmetic is nothing; the per-call cost is all):

  aten        the aten overload the table names, on ``torch.from_numpy`` views of the inputs, its
              result copied into a preallocated NumPy output (``np.copyto``): the peer;
  op          ``pyaclnn.Op(name, *tensors)`` with device Tensors made once: phase 1, ``run``,
              ``Stream.synchronize``, ``out.numpy()`` (read back), ``close``;
  op-ndarray  the same with ndarrays (each uploaded to a new device tensor per call);
  phase-1     ``pyaclnn.Op(name, *tensors)`` and ``close`` only (aclnn<Op>GetWorkspaceSize);
  exact-Add   ``op`` for aclnnAdd (an exact reference) on the same tensors: the object layer's
              and the device model's own cost, which every operator pays;

as medians of individually timed calls, in microseconds, and the ratio op / aten (issue 24's
target: at most 3). torch runs with one thread, as the aten tier runs it.

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

Usage: python benchmarks/aten_overhead.py [--calls N] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any, Callable

os.environ.setdefault("PYACLNN_BACKEND", "numpy")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import pyaclnn  # noqa: E402

torch.set_num_threads(int(os.environ.get("PYACLNN_NUM_THREADS", "1")))
RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 16)).astype(np.float32)
Y = RNG.standard_normal((8, 16)).astype(np.float32)
A = torch.ops.aten

# name: (pyaclnn.Op arguments before the output, aten call on torch tensors, output shape)
CASES: dict[str, tuple[tuple, Callable[..., Any], tuple[int, ...]]] = {
    "Abs": ((X,), lambda x: A.abs.default(x), (8, 16)),
    "Mul": ((X, Y), lambda x, y: A.mul.Tensor(x, y), (8, 16)),
    "Softmax": ((X, 1), lambda x, d: A.softmax.int(x, d), (8, 16)),
    "Amax": ((X, [1], False), lambda x, d, k: A.amax.default(x, d, k), (8,)),
}


def median_us(fn: Callable[[], Any], calls: int) -> float:
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def measure(calls: int) -> dict[str, dict[str, float]]:
    rows: dict[str, dict[str, float]] = {}
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        def op_call(name: str, args: tuple, out: Any) -> Callable[[], Any]:
            def run() -> Any:
                with pyaclnn.Op(name, *args, out) as ex:
                    ex.run(stream)
                    stream.synchronize()
                    return ex["out"].numpy()
            return run

        tx, ty = pyaclnn.Tensor.from_numpy(X), pyaclnn.Tensor.from_numpy(Y)
        add_out = pyaclnn.Tensor.zeros((8, 16), np.float32)
        exact = median_us(op_call("Add", (tx, ty, 1.0), add_out), calls)
        for name, (args, aten, shape) in CASES.items():
            out_np = np.zeros(shape, np.float32)

            def peer(args: tuple = args, aten: Callable[..., Any] = aten, out_np: np.ndarray = out_np) -> None:
                r = aten(*(torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args))
                np.copyto(out_np, r.numpy())
            tensors = tuple(pyaclnn.Tensor.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args)
            out_t = pyaclnn.Tensor.zeros(shape, np.float32)
            np.testing.assert_allclose(op_call(name, tensors, out_t)(), (peer(), out_np)[1], rtol=1e-6)
            for _ in range(3):  # warm: the first calls resolve and cache what later calls reuse
                op_call(name, tensors, out_t)()
            t_aten = median_us(peer, calls)
            t_op = median_us(op_call(name, tensors, out_t), calls)
            t_nd = median_us(op_call(name, args, np.zeros(shape, np.float32)), calls)
            t_p1 = median_us(lambda name=name, tensors=tensors, out_t=out_t: pyaclnn.Op(name, *tensors, out_t).close(),
                             calls)
            rows[name] = {"aten": t_aten, "op": t_op, "op-ndarray": t_nd, "phase-1": t_p1, "exact-Add": exact,
                          "ratio": t_op / t_aten}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--json", help="write the medians there too")
    ns = parser.parse_args()
    rows = measure(ns.calls)
    print(f"{'case':10} {'aten us':>9} {'op us':>9} {'op-ndarray':>11} {'phase-1':>8} {'exact-Add':>10} {'op/aten':>8}")
    for name, r in rows.items():
        print(f"{name:10} {r['aten']:9.1f} {r['op']:9.1f} {r['op-ndarray']:11.1f} {r['phase-1']:8.1f} "
              f"{r['exact-Add']:10.1f} {r['ratio']:8.2f}")
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
