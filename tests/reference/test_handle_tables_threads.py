"""The reference runtime's handle tables under threads: handles are made and destroyed without a
lock (pyaclnn/_numpy/runtime/session.py, _register and _destroy: one atomic dict set or pop each),
so what reads a table whole (live_handles, the pruning of the recorded sites) reads a copy. Oracle:
the live counts before and after (every handle made was destroyed), and no reader failing."""
from __future__ import annotations

import sys
import threading
from typing import Any, Callable

import pyaclnn
from pyaclnn.dtypes import DType

ROUNDS = 8000


def test_handles_made_and_destroyed_in_threads_while_the_leak_report_reads_the_tables(
        use_backend: Callable[..., Any]) -> None:
    use_backend("numpy")
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # (switch threads as often as the interpreter can: the race is found)
    errors: list[BaseException] = []
    done = threading.Event()
    try:
        with pyaclnn.Device(0) as device:
            rt = device.runtime
            before = rt.live_counts()
            rt.track_sites(True)  # (its pruning reads every table too)

            def work() -> None:
                try:
                    for _ in range(ROUNDS):
                        rt.destroy_int_array(rt.create_int_array([1, 2]))
                        rt.destroy_scalar(rt.create_scalar(1.5, DType.DOUBLE))
                except BaseException as exc:  # noqa: BLE001 - reported below
                    errors.append(exc)

            def read() -> None:
                try:
                    while not done.is_set():
                        rt.live_handles()
                except BaseException as exc:  # noqa: BLE001 - reported below
                    errors.append(exc)

            workers = [threading.Thread(target=work) for _ in range(3)]
            reader = threading.Thread(target=read)
            reader.start()
            for t in workers:
                t.start()
            for t in workers:
                t.join(120)
            done.set()
            reader.join(120)
            rt.track_sites(False)
            assert not errors, errors[0]
            assert rt.live_counts() == before
    finally:
        sys.setswitchinterval(switch)
