"""Timing, copy bandwidth and traced peak memory of the benchmark cases."""
from __future__ import annotations

import gc
import os
import statistics
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...ops.cases import Case
from ...ops.cases import _outputs
from ...ops.cases import nbytes as _nbytes

F32 = np.float32


def _progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = fn()
    return (time.perf_counter() - t0) * 1e3, result


def copy_bandwidth(nbytes: int, repeat: int) -> dict[str, Any]:
    """Copy bandwidth in GB/s (1e9 bytes/s), counting the bytes read plus the bytes written."""
    n = nbytes // 4
    src = np.ones(n, F32)
    dst = np.zeros(n, F32)  # written once so its pages exist before timing
    np.copyto(dst, src)
    single = []
    for _ in range(repeat):
        t, _ = _timed(lambda: np.copyto(dst, src))
        single.append(t)
    threads = _usable_cores()
    multi: list[float] = []
    if threads > 1:
        bounds = [n * k // threads for k in range(threads + 1)]
        barrier_go = [threading.Event() for _ in range(repeat + 1)]
        done = threading.Barrier(threads + 1)

        def worker(k: int) -> None:  # copyto releases the GIL, so slices copy in parallel
            lo, hi = bounds[k], bounds[k + 1]
            for go in barrier_go:
                go.wait()
                np.copyto(dst[lo:hi], src[lo:hi])
                done.wait()

        pool = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(threads)]
        for th in pool:
            th.start()
        for r, go in enumerate(barrier_go):  # run 0 is a warm-up
            t0 = time.perf_counter()
            go.set()
            done.wait()
            if r:
                multi.append((time.perf_counter() - t0) * 1e3)
        for th in pool:
            th.join()
    moved = 2 * n * 4
    gbps_single = moved / (_median(single) / 1e3) / 1e9
    gbps_multi = moved / (_median(multi) / 1e3) / 1e9 if multi else None
    return {"method": "np.copyto of a float32 array; bytes = read + written",
            "array_bytes": n * 4, "bytes_moved": moved, "repeat": repeat, "threads": threads,
            "single_thread_gbps": gbps_single, "all_threads_gbps": gbps_multi,
            "gbps": max(gbps_single, gbps_multi or 0.0),
            "samples_single_ms": single, "samples_threads_ms": multi}


def traced_extra_peak(fn: Callable[[], Any]) -> tuple[int, Any]:
    """(peak bytes traced during fn() minus the bytes of the outputs it returns, its result)."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        if started:
            tracemalloc.stop()
    return peak - base - _nbytes(*_outputs(result)), result


def _max_abs_diff(ours: Any, theirs: Any) -> float | None:
    a, b = _outputs(ours), [t.numpy() for t in _outputs(theirs)]
    if len(a) != len(b):
        return None
    worst = 0.0
    for x, y in zip(a, b):
        if x.shape != y.shape:
            y = y.reshape(x.shape) if y.size == x.size else None
            if y is None:
                return None
        if x.size:
            worst = max(worst, float(np.max(np.abs(x - y))))
    return worst


def _alternate(ours: Callable[[], Any], theirs: Callable[[], Any] | None,
               repeat: int) -> tuple[list[float], list[float], Any, Any]:
    """``repeat`` timed calls of each side, alternating which goes first (so neither always runs
    on a cache the other warmed): (our samples, their samples, our last result, theirs)."""
    samples_ours: list[float] = []
    samples_theirs: list[float] = []
    last_ours = last_theirs = None  # the last run's outputs, compared once timing is over
    for r in range(repeat):
        last = r == repeat - 1
        order = (ours, theirs) if r % 2 == 0 else (theirs, ours)
        for fn in order:
            if fn is None:
                continue
            gc.collect()
            t, result = _timed(fn)
            (samples_ours if fn is ours else samples_theirs).append(t)
            if last:
                if fn is ours:
                    last_ours = result
                else:
                    last_theirs = result
            del result  # free this run's outputs before the next call
    return samples_ours, samples_theirs, last_ours, last_theirs


def fresh_pages_ms(nbytes: int, repeat: int) -> float:
    """Median time to get ``nbytes`` of new memory ready to write: allocated, zeroed by the OS on
    first touch and faulted in by all kernel threads (one touch per page). Any allocating call
    pays this for its outputs before computing anything, so bound + this is its floor."""
    from ..._numpy.kernels._parallel import zeros_faulted_in

    def fresh() -> None:
        zeros_faulted_in((nbytes,), np.uint8)

    return _median([_timed(fresh)[0] for _ in range(max(1, repeat))])


def _case_head(case: Case, inputs: dict[str, Any], bandwidth_gbps: float) -> dict[str, Any]:
    read, written = case.bytes_read(inputs), case.bytes_written(inputs)
    return {"name": case.name, "label": case.label, "params": case.params, "bytes_read": read,
            "bytes_written": written, "bound_ms": (read + written) / (bandwidth_gbps * 1e9) * 1e3}


def measure_alloc(case: Case, inputs: dict[str, Any], tinputs: dict[str, Any] | None, repeat: int,
                  tag: str, bandwidth_gbps: float) -> dict[str, Any]:
    """The public NumPy-in/NumPy-out call (outputs allocated by each call) against aten's."""
    head = _case_head(case, inputs, bandwidth_gbps)
    who = "pyaclnn and torch" if tinputs is not None else "pyaclnn"
    _progress(f"{tag} {case.label}: timing {who}, a warm-up then {repeat} run(s) each")

    def ours() -> Any:
        return case.run_pyaclnn(inputs)

    theirs: Callable[[], Any] | None = None
    if tinputs is not None:
        peer_inputs = tinputs

        def theirs() -> Any:
            return case.run_torch(peer_inputs)

    # warm-up, traced: the first call's memory (the kernels' scratch buffers grow here); its time
    # (warmup_ms) includes tracemalloc's overhead and is not used for anything else
    t0 = time.perf_counter()
    first_extra, result = traced_extra_peak(ours)
    warm_ours = (time.perf_counter() - t0) * 1e3
    out_bytes = _nbytes(*_outputs(result))
    del result
    warm_theirs = None
    if theirs is not None:
        warm_theirs, result = _timed(theirs)
        del result
    samples_ours, samples_theirs, last_ours, last_theirs = _alternate(ours, theirs, repeat)
    diff = _max_abs_diff(last_ours, last_theirs) if last_theirs is not None else None
    last_ours = last_theirs = None
    gc.collect()
    extra, result = traced_extra_peak(ours)
    del result
    fresh = fresh_pages_ms(out_bytes, repeat)

    med = _median(samples_ours)
    peer: dict[str, Any] | None = None
    ratio = None
    if theirs is not None:
        peer_med = _median(samples_theirs)
        peer = {"ops": [f"torch.ops.aten.{op}" for op in case.peer_ops], "median_ms": peer_med,
                "samples_ms": samples_theirs, "warmup_ms": warm_theirs}
        ratio = med / peer_med
    _progress(f"{tag} {case.label}: pyaclnn {_ms(med)}"
              + (f", torch {_ms(peer['median_ms'])}" if peer else "") + f", bound {_ms(head['bound_ms'])}")
    return {**head, "output_bytes": out_bytes, "fresh_pages_ms": fresh,
            "pyaclnn": {"median_ms": med, "samples_ms": samples_ours, "warmup_ms": warm_ours},
            "peer": peer, "ratio": ratio, "x_bound": med / head["bound_ms"],
            "extra_peak_bytes": extra, "first_call_extra_peak_bytes": first_extra, "max_abs_diff": diff}


def measure_reuse(case: Case, inputs: dict[str, Any], tinputs: dict[str, Any] | None, repeat: int,
                  tag: str, bandwidth_gbps: float) -> dict[str, Any]:
    """Steady state: preallocated outputs written in place. pyaclnn: public two-phase API on
    Tensors made once (each iteration = plan an executor + run it); torch: aten's out= overload
    where there is one, else its allocating call."""
    import pyaclnn
    plan, steady_outputs = case.plan_pyaclnn, case.steady_outputs
    if plan is None or steady_outputs is None:
        raise ValueError(f"{case.name} has no steady-state definition")
    head = _case_head(case, inputs, bandwidth_gbps)
    has_out = case.run_torch_out is not None and case.torch_outputs is not None
    who = "pyaclnn and torch" if tinputs is not None else "pyaclnn"
    _progress(f"{tag} {case.label}: steady state (outputs reused), timing {who}, a warm-up then "
              f"{repeat} run(s) each")
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        tensors = {k: pyaclnn.Tensor.from_numpy(v) if isinstance(v, np.ndarray) else v
                   for k, v in inputs.items()}
        outs = [pyaclnn.Tensor.empty(shape, dtype) for shape, dtype in steady_outputs(inputs)]

        def ours() -> None:
            with plan(tensors, outs) as executor:  # phase 1: checks, plan
                executor.run(stream)               # phase 2: the kernel
            stream.synchronize()

        theirs: Callable[[], Any] | None = None
        if tinputs is not None:
            peer_inputs = tinputs
            if has_out:
                assert case.torch_outputs is not None and case.run_torch_out is not None
                touts = case.torch_outputs(peer_inputs)
                run_out = case.run_torch_out

                def theirs() -> Any:
                    return run_out(peer_inputs, touts)
            else:
                def theirs() -> Any:
                    return case.run_torch(peer_inputs)

        warm_ours, _ = _timed(ours)  # first touch of the output pages, scratch buffers grow
        warm_theirs = None
        if theirs is not None:
            warm_theirs, result = _timed(theirs)
            del result
        samples_ours, samples_theirs, _, last_theirs = _alternate(ours, theirs, repeat)
        out_bytes = sum(t.storage.nbytes for t in outs)
        diff = None
        if last_theirs is not None:
            mine = tuple(t.numpy() for t in outs)
            diff = _max_abs_diff(mine if len(mine) > 1 else mine[0], last_theirs)
            del mine
        last_theirs = None
        gc.collect()
        extra, _ = traced_extra_peak(ours)  # nothing returned: the whole traced peak counts
    med = _median(samples_ours)
    peer: dict[str, Any] | None = None
    ratio = None
    if theirs is not None:
        ops = case.peer_out_ops if has_out else case.peer_ops
        peer_med = _median(samples_theirs)
        peer = {"ops": [f"torch.ops.aten.{op}" for op in ops], "out_variant": has_out, "median_ms": peer_med,
                "samples_ms": samples_theirs, "warmup_ms": warm_theirs}
        ratio = med / peer_med
    _progress(f"{tag} {case.label}: steady state: pyaclnn {_ms(med)}"
              + (f", torch {_ms(peer['median_ms'])}" if peer else "") + f", bound {_ms(head['bound_ms'])}")
    return {**head, "output_bytes": out_bytes,
            "pyaclnn": {"api": f"pyaclnn.{case.label.split()[0]} (plan + run)",
                        "median_ms": med, "samples_ms": samples_ours, "warmup_ms": warm_ours},
            "peer": peer, "ratio": ratio, "x_bound": med / head["bound_ms"], "extra_peak_bytes": extra,
            "max_abs_diff": diff}


def run_case(case: Case, repeat: int, torch: Any, index: int, total: int, bandwidth_gbps: float,
             modes: Sequence[str] = ("alloc", "reuse")) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(allocating result, steady-state result) of one case; None for a mode not asked for. A
    mode that fails gives ``{name, label, params, error}`` without stopping the other."""
    tag = f"[{index}/{total}]"
    _progress(f"{tag} {case.label}: preparing inputs")
    inputs = case.make(np.random.default_rng(20240601 + index))
    tinputs = None
    if torch is not None:
        tinputs = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
    results: list[dict[str, Any] | None] = []
    for mode, measure in (("alloc", measure_alloc), ("reuse", measure_reuse)):
        if mode not in modes:
            results.append(None)
            continue
        try:
            results.append(measure(case, inputs, tinputs, repeat, tag, bandwidth_gbps))
        except Exception as exc:  # noqa: BLE001 - report the case, go on with the others
            _progress(f"{tag} {case.label}: {mode}: FAILED: {type(exc).__name__}: {exc}")
            results.append({"name": case.name, "label": case.label, "params": case.params,
                            "error": f"{type(exc).__name__}: {exc}"})
        gc.collect()
    return results[0], results[1]


def _ms(v: float) -> str:
    if v >= 10:
        return f"{v:.1f} ms"
    return f"{v:.2f} ms" if v >= 0.1 else f"{v * 1e3:.1f} us"


def _load_torch(disabled: bool) -> tuple[Any, dict[str, Any]]:
    if disabled:
        return None, {"name": "torch", "available": False, "version": None, "threads": None,
                      "reason": "--no-torch given"}
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - ImportError, or a broken install
        return None, {"name": "torch", "available": False, "version": None, "threads": None,
                      "reason": f"cannot import torch ({type(exc).__name__}: {exc})"}
    return torch, {"name": "torch", "available": True, "version": torch.__version__,
                   "threads": torch.get_num_threads(), "reason": None}
