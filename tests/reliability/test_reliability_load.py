"""Load: 100 000 operator calls in a loop leak no native handle and no memory, on both backends.

The loop is the cheapest realistic use: MseLossBackward on tiny tensors, planned (phase 1) and
launched (phase 2) anew on every call. Around it run smaller shares of the other paths a
program takes: a repeatable executor re-pointed with set_input, the NumPy-in/NumPy-out
function, the C-shaped layer ``pyaclnn.acl``, and calls refused in phase 1.

After a warm-up, live native handles (the emulator's counters on acl, the reference runtime's
own on numpy) must be exactly where they were, and the resident set may grow by less than
5 MB (read from /proc/self/statm).
"""
from __future__ import annotations

import ctypes
import gc
import os
import time

import numpy as np
import pytest

import pyaclnn
from conftest import live_handles
from pyaclnn import acl
from pyaclnn._objects import backend as _backend

F32 = np.float32
PLAN_RUN = 100_000      # two-phase calls, each with a new executor
REPEAT = 10_000         # launches of one repeatable executor
FUNCTIONAL = 5_000      # pyaclnn.mse_loss_backward calls (upload, two phases, download)
C_LAYER = 10_000        # pyaclnn.acl phase 1 + phase 2 on raw handles
REFUSED = 2_000         # phase-1 calls the library refuses (161002)
RSS_LIMIT = 5 << 20

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc/self/statm")


def rss() -> int:
    """Resident bytes, after glibc returns the free heap pages it caches (less allocator noise)."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def settled() -> tuple[dict[str, int], int]:
    gc.collect()
    return live_handles(), rss()


def test_100k_operator_calls_leak_nothing(backend, capsys):
    emu = None
    if backend == "acl":
        from emulator.build import Emulator
        emu = Emulator(_backend.current().paths["home"])
        emu.reset_counters()
    g = np.array([[1, 2], [3, 4]], F32)
    x, y = g * 3, np.ones((2, 2), F32)
    bad = np.ones(3, F32)
    timings: dict[str, float] = {}
    outside = live_handles()

    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        tg, tx, ty, tbad = (pyaclnn.Tensor.from_numpy(v) for v in (g, x, y, bad))
        out = pyaclnn.Tensor.zeros((2, 2))
        x2 = pyaclnn.Tensor.from_numpy(x * 2)
        rex = pyaclnn.MseLossBackward(tg, tx, ty, "sum", out, repeatable=True)

        def plan_run(n: int) -> None:
            for _ in range(n):
                pyaclnn.MseLossBackward(tg, tx, ty, "mean", out).run(stream)

        def repeat(n: int) -> None:
            for i in range(n):
                if i % 100 == 0:
                    rex.set_input(1, x2 if (i // 100) % 2 else tx)
                rex.run(stream)
            rex.set_input(1, tx)

        def functional(n: int) -> None:
            for _ in range(n):
                pyaclnn.mse_loss_backward(g, x, y)

        def c_layer(n: int) -> None:
            handles = (tg.raw, tx.raw, ty.raw, 1, out.raw)  # noqa: SLF001 - raw aclTensor handles
            for _ in range(n):
                ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(*handles)
                acl.aclnnMseLossBackward(stream.workspace(ws), ws, ex, stream.raw)  # noqa: SLF001

        def refused(n: int) -> None:
            for _ in range(n):
                try:
                    pyaclnn.MseLossBackward(tg, tx, tbad, "mean", out)
                except pyaclnn.AclnnParamInvalidError:
                    pass
                else:  # pragma: no cover
                    raise AssertionError("a broadcast error was accepted")

        # plan_run last: on acl the emulator keeps the last 4096 released handle structs
        # (quarantine); ending both the warm-up and the measured round with >= 4096 executor
        # releases gives it the same content at both measurements.
        loops = (("repeatable", repeat, REPEAT), ("functional", functional, FUNCTIONAL),
                 ("c_layer", c_layer, C_LAYER), ("refused", refused, REFUSED), ("plan_run", plan_run, PLAN_RUN))
        # Warm-up: caches, pools and allocator arenas reach their size.
        for _, fn, n in loops:
            fn(max(n // 20, 100))
        stream.synchronize()
        handles0, rss0 = settled()
        for name, fn, n in loops:
            start = time.perf_counter()
            fn(n)
            timings[name] = time.perf_counter() - start
        stream.synchronize()
        handles1, rss1 = settled()

        np.testing.assert_allclose(out.numpy(), (x - y) * g * (2 / g.size), rtol=1e-6)
        assert handles1 == handles0
        assert rss1 - rss0 < RSS_LIMIT, f"RSS grew by {(rss1 - rss0) / 2**20:.1f} MB"
        rex.close()
        # The repeatable executor still computes right after 10 000 launches and 200 re-pointings.
        out_sum = pyaclnn.Tensor.zeros((2, 2))
        with pyaclnn.MseLossBackward(tg, x2, ty, "sum", out_sum, repeatable=True) as ex:
            ex.run(stream)
            stream.synchronize()
        np.testing.assert_allclose(out_sum.numpy(), 2 * (2 * x - y) * g, rtol=1e-6)

    gc.collect()
    assert live_handles() == outside
    if emu is not None:
        launched = sum(n + max(n // 20, 100) for n in (PLAN_RUN, REPEAT, FUNCTIONAL, C_LAYER)) + 1
        assert emu.calls("aclnnMseLossBackward") == launched  # every call really reached phase 2
        assert emu.misuse() == 0, emu.last_misuse()
    with capsys.disabled():
        total = sum(timings.values())
        print(f"\n[{backend}] " + ", ".join(f"{k} {n / timings[k] / 1e3:.1f}k/s" for k, _, n in loops)
              + f"; {total:.1f}s; RSS {(rss1 - rss0) / 2**20:+.2f} MB")
