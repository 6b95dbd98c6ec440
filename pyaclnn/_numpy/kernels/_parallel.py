"""A small persistent thread pool for the reference kernels, and per-thread scratch buffers.

NumPy releases the GIL inside ufunc loops, reductions, einsum and copies, so two threads on two
cores really run the kernels' cache-sized blocks side by side. Work is always cut into blocks of a
fixed size, independent of the number of threads, and every result is combined in block order:
the numbers never depend on how many threads ran or which thread took which block.

``PYACLNN_NUM_THREADS`` overrides the thread count (default: the CPUs this process may use).
"""
from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

__all__ = ["SMALL", "tiled_only", "quietly", "num_threads", "run_blocks", "scratch", "zeros_faulted_in"]

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_tls = threading.local()
_cpus: int | None = None  # CPUs this process may use, asked once (a syscall; reset after fork)


def num_threads() -> int:
    """Threads the kernels use: ``PYACLNN_NUM_THREADS`` or the CPUs available to this process."""
    global _cpus
    env = os.environ.get("PYACLNN_NUM_THREADS")
    if env:
        env = env.strip()
        if env.isdigit() and int(env) > 0:
            return int(env)
    if _cpus is None:
        try:
            _cpus = max(1, len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):  # pragma: no cover - non-Linux
            _cpus = max(1, os.cpu_count() or 1)
    return _cpus


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            # The calling thread works too, so the pool holds one thread fewer than the cores;
            # sized for the machine, so a later, larger PYACLNN_NUM_THREADS is capped by it.
            size = max(1, max(num_threads(), os.cpu_count() or 1) - 1)
            _pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="pyaclnn-kernel")
        return _pool


def _forget_pool_after_fork() -> None:  # the pool's threads do not exist in a forked child
    global _pool, _lock, _cpus
    _pool, _lock, _cpus = None, threading.Lock(), None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_after_fork)


# Inputs of at most this many elements take each kernel's direct whole-array path, in the calling
# thread: tiles, layout work and handing blocks to the pool cost tens of microseconds, more than
# such a call's whole work (issue 12). The kernels read it here, at each call.
SMALL = 1 << 12


@contextmanager
def tiled_only() -> Iterator[None]:
    """Every kernel takes its tiled path whatever the input size, inside the block (the doctor
    and the tests check both paths). Process-wide: not for use while other threads compute."""
    global SMALL
    saved, SMALL = SMALL, -1
    try:
        yield
    finally:
        SMALL = saved


def _errstate_variable() -> tuple[Any, Any] | None:
    """NumPy 2's floating-point error state: the context variable np.errstate sets, and the
    value np.errstate(all="ignore") sets it to. None on NumPy 1 (a global state, no variable)."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as variable  # type: ignore[attr-defined]
    except ImportError:  # NumPy 1.x
        return None
    with np.errstate(all="ignore"):
        return variable, variable.get()


_ERRSTATE = _errstate_variable()


def quietly(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` under ``np.errstate(all="ignore")``, in the calling thread: the kernels
    reproduce the device's inf/NaN results on purpose, and the device warns of nothing.

    The small paths run this on every call, where entering an np.errstate (~1 us) is a tenth
    of an MSE call; on NumPy 2 this sets np.errstate's own context variable to the value it
    would set (prepared once, ~0.3 us). tests/reference/test_reference_kernels.py checks that it
    silences and restores as np.errstate does, on the NumPy installed."""
    if _ERRSTATE is None:
        with np.errstate(all="ignore"):
            return fn(*args)
    variable, ignore_all = _ERRSTATE
    token = variable.set(ignore_all)
    try:
        return fn(*args)
    finally:
        variable.reset(token)


def run_blocks(fn: Callable[[int], Any], n_blocks: int) -> list[Any]:
    """Call ``fn(i)`` for each block ``i`` in ``range(n_blocks)``; return results in block order.

    Blocks are handed out one at a time from a shared counter to the calling thread and up to
    ``num_threads() - 1`` pool threads. Blocks must write disjoint outputs. Floating-point
    warnings are silenced in every thread (NumPy's error state is per thread): the kernels
    reproduce the device's inf/NaN results on purpose. The first exception is re-raised.
    """
    results: list[Any] = [None] * n_blocks
    helpers = 0 if n_blocks < 2 else min(num_threads(), n_blocks) - 1
    if helpers <= 0:
        with np.errstate(all="ignore"):
            for i in range(n_blocks):
                results[i] = fn(i)
        return results

    counter = itertools.count()
    failed: list[BaseException] = []

    def drain() -> None:
        with np.errstate(all="ignore"):
            while not failed:
                i = next(counter)  # atomic under the GIL
                if i >= n_blocks:
                    return
                try:
                    results[i] = fn(i)
                except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
                    failed.append(exc)
                    return

    pool = _get_pool()
    futures = [pool.submit(drain) for _ in range(helpers)]
    drain()
    for fut in futures:
        if not fut.cancel():  # a helper that never started has nothing to do
            fut.result()
    if failed:
        raise failed[0]
    return results


def scratch(slot: str, shape: tuple[int, ...] | int, dtype: Any) -> np.ndarray:
    """A per-thread reusable C-contiguous buffer of ``shape`` (contents undefined).

    One buffer per (slot, dtype) and thread, grown on demand and kept for the next call; callers
    use distinct slot names for buffers that are alive at the same time.
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = 1
    for d in shape:
        n *= d
    dt = np.dtype(dtype)
    bufs = getattr(_tls, "bufs", None)
    if bufs is None:
        bufs = _tls.bufs = {}
    buf = bufs.get((slot, dt))
    if buf is None or buf.size < n:
        buf = bufs[(slot, dt)] = np.empty(max(n, 1), dt)
    return buf[:n].reshape(shape)


# Below this size a new array is faulted in by whichever thread writes it first, cheaply enough.
_FAULT_IN_MIN = 8 << 20
_PAGE = 4096
_HUGE_PAGE = 2 << 20


def zeros_faulted_in(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """``np.zeros(shape, dtype)`` with its pages already faulted in, in parallel.

    A new large array is fresh memory (transparent huge pages, where NumPy asks for them) that
    the kernel zeroes on first touch. When the kernels' interleaved tiles touch it first, both
    threads fault on the same 2 MiB page and wait for each other (measured: cross-entropy with
    a 500 MiB output took 153 ms a call, 111 ms with this). Here each thread touches one byte per 4 KiB page of its own
    contiguous, 2 MiB-aligned span instead; the array is still all zeros.
    """
    a = np.zeros(shape, dtype)
    if a.nbytes < _FAULT_IN_MIN:
        return a
    threads = num_threads()
    if threads < 2:
        return a
    flat = a.reshape(-1).view(np.uint8)
    head = -a.ctypes.data % _HUGE_PAGE  # bytes up to the first 2 MiB boundary
    span = -(-(a.nbytes - head) // threads // _HUGE_PAGE) * _HUGE_PAGE
    edges = [0] + [min(a.nbytes, head + k * span) for k in range(1, threads)] + [a.nbytes]

    def touch(i: int) -> None:
        flat[edges[i]:edges[i + 1]:_PAGE] = 0

    run_blocks(touch, threads)
    return a
