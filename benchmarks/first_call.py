#!/usr/bin/env python3
"""Host cost of a first call: a NumPy-in/out function on argument metadata it has not seen.

A repeated call with the same metadata reuses what the first one worked out (pyaclnn._functions.hostcall:
the backend's memo table); a caller whose shapes vary makes first calls only. Here the memo table
is cleared before each call (``call_memos``, or ``host_plans`` in the code before issue 18, so
the script runs against an older checkout for an A/B: ``PYTHONPATH=<checkout> python
benchmarks/first_call.py``), on the 128-element cases of ``pyaclnn bench --case small``.

Per operator: the median over ``--rounds`` rounds of the mean time of ``--calls`` calls, in
microseconds of the measuring thread's CPU time (wall-clock is unusable on a shared machine).

Usage: python benchmarks/first_call.py [--rounds N] [--calls N] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Callable

os.environ.setdefault("PYACLNN_BACKEND", "numpy")

import numpy as np  # noqa: E402

import pyaclnn  # noqa: E402
import pyaclnn._objects.backend  # noqa: E402

CLOCK = time.thread_time


def _mse() -> Callable[[], object]:
    g, x, y = np.ones(128, np.float32), np.full(128, 2, np.float32), np.zeros(128, np.float32)
    return lambda: pyaclnn.mse_loss_backward(g, x, y, reduction="none")


def _group_norm() -> Callable[[], object]:
    N, C, HxW, G = 2, 8, 8, 4
    dy = np.ones((N, C, HxW), np.float32)
    x = np.linspace(-1, 1, N * C * HxW, dtype=np.float32).reshape(N, C, HxW)
    mean, rstd, gamma = np.zeros((N, G), np.float32), np.ones((N, G), np.float32), np.ones(C, np.float32)
    return lambda: pyaclnn.group_norm_backward(dy, x, mean, rstd, gamma, N, C, HxW, G)


def _cross_entropy() -> Callable[[], object]:
    N, C = 8, 16
    log_prob = np.full((N, C), -np.log(C), np.float32)
    target = np.arange(N, dtype=np.int64) % C
    return lambda: pyaclnn.cross_entropy_loss_grad(np.ones((), np.float32), log_prob, target, reduction="mean")


def _prelu() -> Callable[[], object]:
    dy, x = np.ones((8, 16), np.float32), np.linspace(-1, 1, 128, dtype=np.float32).reshape(8, 16)
    w = np.full(16, 0.25, np.float32)
    return lambda: pyaclnn.prelu_backward(dy, x, w)


CASES = {"MseLossBackward": _mse, "GroupNormBackward": _group_norm,
         "CrossEntropyLossGrad": _cross_entropy, "PreluBackward": _prelu}


def _memos() -> dict:
    """The backend's table of what first calls worked out (its name differs between versions)."""
    backend = pyaclnn._objects.backend.current()
    for name in ("call_memos", "host_plans"):
        if hasattr(backend, name):
            return getattr(backend, name)
    raise SystemExit("this pyaclnn keeps no memo table this script knows")


def first_calls(call: Callable[[], object], calls: int) -> float:
    """Mean CPU time (us) of ``calls`` calls, the memo table cleared before each."""
    clear = _memos().clear
    t = CLOCK()
    for _ in range(calls):
        clear()
        call()
    return (CLOCK() - t) / calls * 1e6


def repeats(call: Callable[[], object], calls: int) -> float:
    """Mean CPU time (us) of ``calls`` repeated calls (memo hits), for scale."""
    t = CLOCK()
    for _ in range(calls):
        call()
    return (CLOCK() - t) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    results = {}
    for name, make in CASES.items():
        call = make()
        first_calls(call, 20)  # warm-up: imports, the operator's registry entry, kernel scratch
        first = statistics.median(first_calls(call, args.calls) for _ in range(args.rounds))
        hit = statistics.median(repeats(call, args.calls) for _ in range(args.rounds))
        results[name] = {"first_call_us": first, "memo_hit_us": hit}
        print(f"{name:24s} first call {first:7.1f} us   memo hit {hit:6.1f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
