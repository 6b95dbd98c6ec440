#!/usr/bin/env python3
"""What ``pyaclnn check`` (and the pytest plugin) cost: calls with site tracking off and on.

On the reference backend, each case is timed with tracking off, then on, batch after batch in
one process (interleaved, so load on the machine hits both alike), in CPU time of this process
(time.process_time: time spent waiting for a core is not counted). Reported: the minimum over
batches of the mean time per call, and the ratio on/off. Tracking records the user's line
(pyaclnn._core.sites.user_site) for each handle, allocation and object made; ``run()`` of a planned
executor and the NumPy-in/NumPy-out functions make none on this backend.

Usage:
    python benchmarks/check_overhead.py [--batches N]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import timeit
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["PYACLNN_BACKEND"] = "numpy"

import numpy as np  # noqa: E402

import pyaclnn  # noqa: E402
from pyaclnn import acl
from pyaclnn._objects import backend as _backend
from pyaclnn._objects import resource as _resource
from pyaclnn._core import sites as _sites  # noqa: E402


def cases() -> tuple[dict[str, tuple[Callable[[], None], int]], Callable[[], None]]:
    """name -> (one call, calls per batch), on 4x4 float32 tensors; and what synchronizes the
    stream between batches (work queued without end would make the hazard checks' scans of the
    queue the cost measured)."""
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    device = pyaclnn.Device(0)
    stream = device.create_stream()
    tensors = [pyaclnn.Tensor.from_numpy(a, device) for _ in range(4)]
    repeat = pyaclnn.MseLossBackward(*tensors[:3], "mean", tensors[3], repeatable=True)
    acl.aclrtSetDevice(0)
    addr = acl.aclrtMalloc(a.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemcpy(addr, a.nbytes, a, a.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)  # never read unwritten

    def objects() -> None:  # 4 views + phase 1 + phase 2 + close: 5 objects, 5 handles
        views = [t[:] for t in tensors]
        with pyaclnn.MseLossBackward(views[0], views[1], views[2], "mean", views[3]) as ex:
            ex.run(stream)
        for v in views:
            v.close()

    def raw() -> None:  # pyaclnn.acl: aclCreateTensor, both phases, aclDestroyTensor: 2 handles
        t = acl.aclCreateTensor([4, 4], 2, acl.ACL_FLOAT, [4, 1], 0, acl.ACL_FORMAT_ND, [4, 4], 2, addr)
        _, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(t, t, t, 1, t)
        acl.aclnnMseLossBackward(None, 0, ex, stream)
        acl.aclDestroyTensor(t)

    return {"run() of a repeatable executor": (lambda: repeat.run(stream), 200),
            "pyaclnn.mse_loss_backward (NumPy in/out)": (lambda: pyaclnn.mse_loss_backward(a, a, a), 200),
            "Tensor.from_numpy + close": (lambda: pyaclnn.Tensor.from_numpy(a, device).close(), 100),
            "objects: views, phase 1, run, close": (objects, 50),
            "pyaclnn.acl: create, phases, destroy": (raw, 50)}, stream.synchronize


def track(on: bool) -> None:
    _resource.track_sites = on
    _backend.current().runtime.track_sites(on)


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--batches", type=int, default=100, help="batches per case and setting (default 100)")
    batches = args.parse_args(argv).batches
    best: dict[tuple[str, bool], float] = {}
    table, settle = cases()
    for _ in range(batches):
        for name, (call, n) in table.items():
            for on in (False, True):
                track(on)
                t = timeit.Timer(call, timer=time.process_time).timeit(number=n) / n * 1e6
                best[name, on] = min(best.get((name, on), t), t)
                settle()
    track(False)
    site = min(timeit.repeat(_sites.user_site, number=10000, repeat=5)) / 10000 * 1e6
    print(f"{'case':44s} {'off':>9s} {'on':>9s}  on/off")
    for name in table:
        off, on = best[name, False], best[name, True]
        print(f"{name:44s} {off:7.2f}us {on:7.2f}us  {on / off:5.2f}")
    print(f"user_site() from a shallow stack: {site:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
