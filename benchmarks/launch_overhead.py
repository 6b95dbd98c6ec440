#!/usr/bin/env python3
"""Host cost of a launch on the NumPy reference backend: what the device model costs.

Times, with public API only (so the same script runs against an older checkout for an A/B:
``PYTHONPATH=<checkout> python benchmarks/launch_overhead.py``):

  run         a repeatable MseLossBackward executor's run(stream) on 8x16 float32 tensors,
              with a Stream.synchronize() every 64 runs (the queued kernels run there);
  plan+run    phase 1 + run + close of a single-use executor on the same tensors;
  acl         the pyaclnn.acl port of one call: phase 1, phase 2 on a raw stream,
              aclrtSynchronizeStream;
  numpy-io    pyaclnn.mse_loss_backward on ndarrays (the NumPy-in/out function);

each as the median over batches of the mean per call, in microseconds; and, where the backend
has the device model (pyaclnn._numpy.queues), its bookkeeping per launch: queueing a task with
three read spans and one write span (its hazard and uninitialised-read checks) and running it at
a synchronize, with a kernel that does nothing.

Usage: python benchmarks/launch_overhead.py [--batches N] [--calls N] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Callable

os.environ.setdefault("PYACLNN_BACKEND", "numpy")

import numpy as np  # noqa: E402

import pyaclnn  # noqa: E402
from pyaclnn import acl  # noqa: E402


CLOCK = time.perf_counter


def timed(fn: Callable[[], None], batches: int, calls: int) -> float:
    fn()  # warm-up
    means = []
    for _ in range(batches):
        t0 = CLOCK()
        for _ in range(calls):
            fn()
        means.append((CLOCK() - t0) / calls)
    return statistics.median(means) * 1e6


def _nothing() -> None:
    pass


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=15)
    parser.add_argument("--calls", type=int, default=640)
    parser.add_argument("--json", help="write the figures here too")
    parser.add_argument("--cpu", action="store_true",
                        help="time the process's CPU time instead of wall time (steadier on a busy machine; "
                             "set PYACLNN_NUM_THREADS=1 with it)")
    args = parser.parse_args(argv)
    if args.cpu:
        global CLOCK
        CLOCK = time.process_time
    rng = np.random.default_rng(0)
    g, x, y = (rng.standard_normal((8, 16)).astype(np.float32) for _ in range(3))
    results: dict[str, float] = {}
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        tg, tx, ty = (pyaclnn.Tensor.from_numpy(a, device) for a in (g, x, y))
        out = pyaclnn.Tensor.zeros((8, 16), np.float32, device)
        ex = pyaclnn.MseLossBackward(tg, tx, ty, "none", out, repeatable=True)
        count = [0]

        def run() -> None:
            ex.run(stream)
            count[0] += 1
            if count[0] % 64 == 0:
                stream.synchronize()

        def plan_run() -> None:
            with pyaclnn.MseLossBackward(tg, tx, ty, "none", out) as once:
                once.run(stream)
            count[0] += 1
            if count[0] % 64 == 0:
                stream.synchronize()

        results["run"] = timed(run, args.batches, args.calls)
        stream.synchronize()
        results["plan+run"] = timed(plan_run, args.batches, args.calls)
        stream.synchronize()
        np.testing.assert_allclose(out.numpy(), 2 * (x - y) * g, rtol=1e-6)
        ex.close()
        raw = stream.handle
        handles = [acl.aclCreateTensor([8, 16], 2, acl.ACL_FLOAT, [16, 1], 0, acl.ACL_FORMAT_ND, [8, 16], 2, t.data_ptr)
                   for t in (tg, tx, ty, out)]

        def acl_call() -> None:
            ws, e = acl.aclnnMseLossBackwardGetWorkspaceSize(*handles[:3], 0, handles[3])
            acl.aclnnMseLossBackward(stream.workspace(ws), ws, e, raw)  # the workspace phase 1 asks for
            acl.aclrtSynchronizeStream(raw)

        results["acl"] = timed(acl_call, args.batches, args.calls // 4)
        for h in handles:
            acl.aclDestroyTensor(h)
        for t in (tg, tx, ty, out):
            t.close()
    results["numpy-io"] = timed(lambda: pyaclnn.mse_loss_backward(g, x, y, "none"), args.batches, args.calls)
    runtime = pyaclnn._objects.backend.current().runtime
    if hasattr(runtime, "queues"):  # the device model's own cost per launch
        with pyaclnn.Device(0) as device, device.create_stream() as stream:
            tensors = [pyaclnn.Tensor.zeros((8, 16), np.float32, device) for _ in range(4)]
            spans = [(t.data_ptr, t.data_ptr + 512) for t in tensors]
            queues, queue = runtime.queues, runtime._queue(stream.raw)
            n = [0]

            def bookkeeping() -> None:
                queues.put(queue, "aclnnBench", tuple(spans[:3]), (spans[3],), _nothing, check_init=tuple(spans[:3]))
                n[0] += 1
                if n[0] % 64 == 0:
                    queues.flush(queue)

            results["bookkeeping"] = timed(bookkeeping, args.batches, args.calls)
            queues.flush(queue)
            for t in tensors:
                t.close()
    for name, us in results.items():
        print(f"{name:10s} {us:8.2f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
