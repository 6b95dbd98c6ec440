"""``python -m pyaclnn bench``: the NumPy reference backend against PyTorch CPU and the memory bound.

For each of the four operators (float32) it measures two things, in the same run and on the
same input arrays as PyTorch CPU's aten backward kernels (all of torch's threads):

1. allocating (the first table): the public NumPy-in/NumPy-out call (``pyaclnn.mse_loss_backward``
   etc.), output allocation included, against the aten call that allocates its outputs too;
2. steady state (``--mode reuse``, the second table): outputs preallocated and written in place.
   pyaclnn goes through its public two-phase API on the NumPy backend: the tensors are made once
   (``Tensor.from_numpy`` for the inputs, ``Tensor.empty`` for the outputs) and each timed
   iteration plans an executor (phase 1: every check) and runs it (phase 2: the kernel). Torch
   writes into preallocated tensors through the aten ``out=`` overload where there is one;
   ``_prelu_kernel_backward`` has none, so there the peer still allocates (the table says so).

=============  ==============================================  ==================================================
case           shapes                                          peer (torch.ops.aten); steady state: out= overload
=============  ==============================================  ==================================================
mse            reduction none, 2^24 elements, 3 inputs alike   mse_loss_backward; .grad_input
group_norm     N=32, C=256, HxW=3136 (56x56), group=32, gamma  native_group_norm_backward, mask (True,)*3; .out
cross_entropy  N=4096, C=32000, mean, int64 targets, no weight nll_loss_backward then _log_softmax_backward_data;
                                                               .grad_input then .out
prelu          32x256x56x56, 256 weights                       _prelu_kernel_backward, then the weight gradient
                                                               summed to (C,) as autograd's sum_to_size does; no
                                                               out= overload (allocates in both tables)
=============  ==============================================  ==================================================

Inputs are made (and converted with ``torch.from_numpy``, no copy) before any timing. Each
case and mode runs one warm-up call of each side, then ``--repeat`` samples (default 7)
alternating pyaclnn and torch; the medians and their ratio come from the same run. The machine
may be shared and noisy: read the ratios, not single absolute figures.

The memory-traffic bound of a case is the bytes it must read and write once (every input
element read once, every output element written once; see ``Case.bytes_read`` /
``bytes_written``) divided by the machine's copy bandwidth, measured first as the median of
``np.copyto`` over a 256 MiB float32 array (counted as 256 MiB read + 256 MiB written), on one
thread and on one thread per usable core; the faster of the two is used, so the bound is
the lower (stricter) one.

The extra peak memory is that of one pyaclnn call traced by ``tracemalloc`` (NumPy reports
its buffers to it, in every thread) minus the bytes of the outputs it returns: temporaries,
copies and scratch buffers. It is measured after the timed runs; the first call, which also
grows the kernels' per-thread scratch buffers, is reported in the JSON. In steady state the
call returns nothing and its outputs already exist, so the figure is the whole traced peak of
one plan-and-run iteration.

``--quick`` uses tiny shapes and one sample: it checks the command and its output are well
formed (CI), and its figures mean nothing. ``--acl`` instead runs benchmarks/acl_overhead.py
(host overhead of the acl path through the CANN emulator), which needs a source checkout.

``--mode`` picks the tables: ``both`` (default), ``alloc`` or ``reuse``; ``--reuse-outputs``
is short for ``--mode reuse``.

JSON (``--json PATH``, default ``bench-results.json`` in the current directory), top-level keys:
``schema, pyaclnn, argv, quick, repeat, warmup, modes, backend, machine, peer, copy_bandwidth,
cases, reuse_cases, elapsed_s``. ``cases`` holds the allocating measurements (empty without
that mode): ``name, label, params, bytes_read, bytes_written, bound_ms, output_bytes, pyaclnn
{median_ms, samples_ms, warmup_ms}, peer {ops, median_ms, samples_ms, warmup_ms} or null,
ratio, x_bound, extra_peak_bytes, first_call_extra_peak_bytes, max_abs_diff`` (or ``error``
when the case failed). ``reuse_cases`` holds the steady-state ones (empty without that mode):
``name, label, params, bytes_read, bytes_written, bound_ms, output_bytes, pyaclnn {api,
median_ms, samples_ms, warmup_ms}, peer {ops, out_variant, median_ms, samples_ms, warmup_ms}
or null, ratio, x_bound, extra_peak_bytes, max_abs_diff`` (or ``error``).

Exit codes: 0 done, 1 a case (or ``--acl``) failed, 2 usage error.
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import statistics
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

PROG = "pyaclnn bench"
SCHEMA = "pyaclnn-bench/2"
MODES = ("both", "alloc", "reuse")
MiB = 1 << 20
F32 = np.float32
DEFAULT_REPEAT = 7
DEFAULT_JSON = "bench-results.json"
COPY_BYTES = 256 * MiB
QUICK_COPY_BYTES = 8 * MiB


def _progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


# ------------------------------------------------------------------------------------------------
# The cases
# ------------------------------------------------------------------------------------------------
@dataclass
class Case:
    """One operator benchmark: inputs, the pyaclnn call, the torch call, and its byte count."""
    name: str
    label: str
    params: dict[str, Any]
    make: Callable[[np.random.Generator], dict[str, Any]]
    run_pyaclnn: Callable[[dict[str, Any]], Any]
    peer_ops: tuple[str, ...]
    run_torch: Callable[[dict[str, Any]], Any]  # gets the inputs as torch tensors (shared memory)
    # Bytes that must move: each input element read once, each output element written once.
    bytes_read: Callable[[dict[str, Any]], int]
    bytes_written: Callable[[dict[str, Any]], int]
    # Steady state: the outputs as (shape, dtype), in the executor's parameter order; phase 1 on
    # pyaclnn Tensors (inputs by name, preallocated outputs); the torch outputs and the aten
    # out= call writing into them (both None: aten has no out= overload for the op).
    steady_outputs: Callable[[dict[str, Any]], list[tuple[tuple[int, ...], Any]]] | None = None
    plan_pyaclnn: Callable[[dict[str, Any], list[Any]], Any] | None = None
    peer_out_ops: tuple[str, ...] = ()
    torch_outputs: Callable[[dict[str, Any]], list[Any]] | None = None
    run_torch_out: Callable[[dict[str, Any], list[Any]], Any] | None = None
    inputs: dict[str, Any] = field(default_factory=dict)


def _nbytes(*arrays: Any) -> int:
    return sum(int(a.nbytes) for a in arrays if a is not None)


def _outputs(result: Any) -> list[Any]:
    items = result if isinstance(result, (tuple, list)) else (result,)
    return [r for r in items if r is not None]


def _mse_case(quick: bool) -> Case:
    shape = (64, 64) if quick else (4096, 4096)  # 2^24 elements

    def make(rng: np.random.Generator) -> dict[str, Any]:
        return {k: rng.standard_normal(shape, dtype=F32) for k in ("grad", "x", "y")}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        import pyaclnn
        return pyaclnn.mse_loss_backward(i["grad"], i["x"], i["y"], "none")

    def run_torch(t: dict[str, Any]) -> Any:
        import torch
        return torch.ops.aten.mse_loss_backward(t["grad"], t["x"], t["y"], 0)  # 0: reduction none

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        import pyaclnn
        return pyaclnn.MseLossBackward(t["grad"], t["x"], t["y"], "none", outs[0])

    def torch_outputs(t: dict[str, Any]) -> list[Any]:
        import torch
        return [torch.empty_like(t["x"])]

    def run_torch_out(t: dict[str, Any], outs: list[Any]) -> Any:
        import torch
        return torch.ops.aten.mse_loss_backward.grad_input(t["grad"], t["x"], t["y"], 0, grad_input=outs[0])

    n = math.prod(shape)
    return Case("mse", f"MseLossBackward none, {n} elements", {"shape": shape, "reduction": "none"},
                make, run_pyaclnn, ("mse_loss_backward",), run_torch,
                # read grad, x, y; write out
                bytes_read=lambda i: _nbytes(i["grad"], i["x"], i["y"]),
                bytes_written=lambda i: i["x"].nbytes,
                steady_outputs=lambda i: [(shape, F32)], plan_pyaclnn=plan_pyaclnn,
                peer_out_ops=("mse_loss_backward.grad_input",), torch_outputs=torch_outputs,
                run_torch_out=run_torch_out)


def _group_norm_case(quick: bool) -> Case:
    N, C, H, W, G = (2, 8, 4, 4, 4) if quick else (32, 256, 56, 56, 32)
    HxW = H * W

    def make(rng: np.random.Generator) -> dict[str, Any]:
        x = rng.standard_normal((N, C, H, W), dtype=F32)
        dy = rng.standard_normal((N, C, H, W), dtype=F32)
        groups = x.reshape(N, G, -1)
        mean = groups.mean(axis=-1, dtype=np.float64)
        rstd = 1.0 / np.sqrt(groups.var(axis=-1, dtype=np.float64) + 1e-5)
        gamma = rng.uniform(0.5, 1.5, C).astype(F32)
        return {"dy": dy, "x": x, "mean": mean.astype(F32), "rstd": rstd.astype(F32), "gamma": gamma}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        import pyaclnn
        return pyaclnn.group_norm_backward(i["dy"], i["x"], i["mean"], i["rstd"], i["gamma"], N, C, HxW, G)

    def run_torch(t: dict[str, Any]) -> Any:
        import torch
        return torch.ops.aten.native_group_norm_backward(t["dy"], t["x"], t["mean"], t["rstd"], t["gamma"],
                                                         N, C, HxW, G, [True, True, True])

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        import pyaclnn
        return pyaclnn.GroupNormBackward(t["dy"], t["x"], t["mean"], t["rstd"], t["gamma"], N, C, HxW, G,
                                         (True, True, True), *outs)

    def torch_outputs(t: dict[str, Any]) -> list[Any]:
        import torch
        return [torch.empty_like(t["x"]), torch.empty_like(t["gamma"]), torch.empty_like(t["gamma"])]

    def run_torch_out(t: dict[str, Any], outs: list[Any]) -> Any:
        import torch
        return torch.ops.aten.native_group_norm_backward.out(t["dy"], t["x"], t["mean"], t["rstd"], t["gamma"],
                                                             N, C, HxW, G, [True, True, True],
                                                             out0=outs[0], out1=outs[1], out2=outs[2])

    return Case("group_norm", f"GroupNormBackward N={N} C={C} HxW={HxW} G={G}",
                {"N": N, "C": C, "HxW": HxW, "group": G, "output_mask": [True, True, True]},
                make, run_pyaclnn, ("native_group_norm_backward",), run_torch,
                # read dy, x, mean, rstd, gamma; write grad_input (N*C*HxW), grad_gamma, grad_beta (C).
                # One read of dy and x suffices: a (n, group) slab (C/G*HxW elements) fits in cache,
                # so its sums and its grad_input can be made in the same pass.
                bytes_read=lambda i: _nbytes(i["dy"], i["x"], i["mean"], i["rstd"], i["gamma"]),
                bytes_written=lambda i: i["x"].nbytes + 2 * i["gamma"].nbytes,
                steady_outputs=lambda i: [((N, C, H, W), F32), ((C,), F32), ((C,), F32)],
                plan_pyaclnn=plan_pyaclnn, peer_out_ops=("native_group_norm_backward.out",),
                torch_outputs=torch_outputs, run_torch_out=run_torch_out)


def _cross_entropy_case(quick: bool) -> Case:
    N, C = (16, 100) if quick else (4096, 32000)

    def make(rng: np.random.Generator) -> dict[str, Any]:
        logits = rng.standard_normal((N, C), dtype=F32)
        logits -= np.log(np.exp(logits).sum(axis=1, dtype=F32, keepdims=True))  # log_softmax, in place
        return {"grad_loss": np.array(rng.uniform(0.5, 1.5), F32),  # 0-D: reduction mean
                "log_prob": logits, "target": rng.integers(0, C, N, dtype=np.int64)}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        import pyaclnn
        return pyaclnn.cross_entropy_loss_grad(i["grad_loss"], i["log_prob"], i["target"], reduction="mean")

    def run_torch(t: dict[str, Any]) -> Any:
        import torch
        # cross_entropy = nll_loss(log_softmax(z)); its backward is this pair of aten kernels.
        # total_weight (N: no weight, nothing ignored) is an input prepared with the others.
        g = torch.ops.aten.nll_loss_backward(t["grad_loss"], t["log_prob"], t["target"], None, 1, -100,
                                             t["total_weight"])
        return torch.ops.aten._log_softmax_backward_data(g, t["log_prob"], 1, torch.float32)

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        import pyaclnn
        return pyaclnn.CrossEntropyLossGrad(t["grad_loss"], t["log_prob"], t["target"], reduction="mean",
                                            out=outs[0])

    def torch_outputs(t: dict[str, Any]) -> list[Any]:
        import torch
        # the final gradient, and nll_loss_backward's result (aten's intermediate) before it
        return [torch.empty_like(t["log_prob"]), torch.empty_like(t["log_prob"])]

    def run_torch_out(t: dict[str, Any], outs: list[Any]) -> Any:
        import torch
        g = torch.ops.aten.nll_loss_backward.grad_input(t["grad_loss"], t["log_prob"], t["target"], None, 1,
                                                        -100, t["total_weight"], grad_input=outs[1])
        return torch.ops.aten._log_softmax_backward_data.out(g, t["log_prob"], 1, torch.float32, out=outs[0])

    return Case("cross_entropy", f"CrossEntropyLossGrad N={N} C={C} mean",
                {"N": N, "C": C, "reduction": "mean", "target_dtype": "int64", "weight": None},
                make, run_pyaclnn, ("nll_loss_backward", "_log_softmax_backward_data"), run_torch,
                # read log_prob, target, grad_loss; write out (N x C)
                bytes_read=lambda i: _nbytes(i["log_prob"], i["target"], i["grad_loss"]),
                bytes_written=lambda i: i["log_prob"].nbytes,
                steady_outputs=lambda i: [((N, C), F32)], plan_pyaclnn=plan_pyaclnn,
                peer_out_ops=("nll_loss_backward.grad_input", "_log_softmax_backward_data.out"),
                torch_outputs=torch_outputs, run_torch_out=run_torch_out)


def _prelu_case(quick: bool) -> Case:
    shape = (2, 8, 4, 4) if quick else (32, 256, 56, 56)
    C = shape[1]

    def make(rng: np.random.Generator) -> dict[str, Any]:
        return {"dy": rng.standard_normal(shape, dtype=F32), "x": rng.standard_normal(shape, dtype=F32),
                "weight": rng.uniform(0.05, 0.3, C).astype(F32)}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        import pyaclnn
        return pyaclnn.prelu_backward(i["dy"], i["x"], i["weight"])

    def run_torch(t: dict[str, Any]) -> Any:
        # The kernel returns the weight gradient at the input's shape; autograd then sums it to
        # the weight's shape (sum_to_size). Both are needed for the same two outputs.
        import torch
        gi, gw = torch.ops.aten._prelu_kernel_backward(t["dy"], t["x"], t["weight"].view(1, C, 1, 1))
        return gi, gw.sum(dim=(0, 2, 3))

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        import pyaclnn
        return pyaclnn.PreluBackward(t["dy"], t["x"], t["weight"], *outs)

    return Case("prelu", f"PreluBackward {'x'.join(map(str, shape))}, {C} weights",
                {"shape": shape, "weights": C},
                make, run_pyaclnn, ("_prelu_kernel_backward", "sum"), run_torch,
                # read dy, x, weight; write grad_input, grad_weight (C)
                bytes_read=lambda i: _nbytes(i["dy"], i["x"], i["weight"]),
                bytes_written=lambda i: i["x"].nbytes + i["weight"].nbytes,
                # aten has no out= overload of _prelu_kernel_backward: the peer allocates
                steady_outputs=lambda i: [(shape, F32), ((C,), F32)], plan_pyaclnn=plan_pyaclnn)


def make_cases(quick: bool) -> list[Case]:
    return [_mse_case(quick), _group_norm_case(quick), _cross_entropy_case(quick), _prelu_case(quick)]


CASE_NAMES = ("mse", "group_norm", "cross_entropy", "prelu")


# ------------------------------------------------------------------------------------------------
# Measurements
# ------------------------------------------------------------------------------------------------
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
    return {**head, "output_bytes": out_bytes,
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
        if case.name == "cross_entropy":
            tinputs["total_weight"] = torch.tensor(float(inputs["log_prob"].shape[0]), dtype=torch.float32)
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


# ------------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------------
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _kernel_threads() -> int | None:
    try:
        from ._numpy.kernels._parallel import num_threads
        return int(num_threads())
    except Exception:  # noqa: BLE001 - informational only
        return None


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


def _mib(n: int | None) -> str:
    if n is None:
        return "-"
    return f"{n / MiB:.1f} MiB" if abs(n) >= MiB else f"{n / 1024:.1f} KiB"


def _ms(v: float) -> str:
    if v >= 10:
        return f"{v:.1f} ms"
    return f"{v:.2f} ms" if v >= 0.1 else f"{v * 1e3:.1f} us"


def format_table(cases: Sequence[dict[str, Any]], steady: bool = False) -> str:
    head = ("case", "pyaclnn", "peer", "ratio", "bound", "x bound", "extra peak")
    rows = [head + (("peer outputs",) if steady else ())]
    for c in cases:
        if "error" in c:
            rows.append((c["label"], "FAILED") + ("-",) * (len(rows[0]) - 2))
            continue
        peer = c["peer"]
        row: tuple[str, ...] = (
            c["label"], _ms(c["pyaclnn"]["median_ms"]), _ms(peer["median_ms"]) if peer else "-",
            f"{c['ratio']:.2f}" if c["ratio"] is not None else "-",
            _ms(c["bound_ms"]), f"{c['x_bound']:.2f}", _mib(c["extra_peak_bytes"]))
        if steady:
            row += ("-" if peer is None else
                    "preallocated (out=)" if peer["out_variant"] else "allocated: no out= overload",)
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) if i in (0, 7) else cell.rjust(widths[i])
                               for i, cell in enumerate(r)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_report(results: dict[str, Any]) -> str:
    m, peer, bw = results["machine"], results["peer"], results["copy_bandwidth"]
    if peer["available"]:
        vs = f"PyTorch {peer['version']} CPU aten kernels ({peer['threads']} threads)"
    else:
        vs = f"no peer: {peer['reason']}; pyaclnn measured alone"
    title = (f"pyaclnn {results['pyaclnn']} bench: NumPy reference backend (float32, "
             f"{m['pyaclnn_kernel_threads'] or '?'} kernel threads) vs {vs}")
    runs = f"median of {results['repeat']} run(s) after 1 warm-up, pyaclnn and the peer alternating"
    if results["quick"]:
        runs += "  [--quick: tiny shapes, the figures mean nothing]"
    machine = f"machine: {m['cores']} cores ({m['cpu']}), Python {m['python']}, numpy {m['numpy']}"
    if m["torch"]:
        machine += f", torch {m['torch']}"
    copy = (f"copy bandwidth {bw['gbps']:.2f} GB/s (np.copyto {bw['array_bytes'] // MiB} MiB float32, "
            f"read+write bytes: 1 thread {bw['single_thread_gbps']:.2f} GB/s")
    if bw["all_threads_gbps"]:
        copy += f", {bw['threads']} threads {bw['all_threads_gbps']:.2f} GB/s"
    lines = [title, runs, machine, copy + ")"]
    if "alloc" in results["modes"]:
        lines += ["", ("Allocating: the public NumPy-in/NumPy-out call (new outputs every call) vs aten's "
                       "allocating call"), format_table(results["cases"])]
    if "reuse" in results["modes"]:
        lines += ["", ("Steady state (outputs reused): pyaclnn two-phase API on Tensors made once, each run = "
                       "plan the executor + run it; torch via aten's out= overloads"),
                  format_table(results["reuse_cases"], steady=True)]
    lines += ["",
              ("ratio = pyaclnn / peer (above 1: pyaclnn slower); bound = bytes read + written once / copy "
               "bandwidth; x bound = pyaclnn / bound;"),
              ("extra peak = tracemalloc peak of one pyaclnn call minus its outputs (after the timed runs; "
               "steady state: the whole peak of one plan + run).")]
    return "\n".join(lines)


def _machine(torch_info: dict[str, Any]) -> dict[str, Any]:
    return {"cores": os.cpu_count(), "usable_cores": _usable_cores(), "cpu": _cpu_model(),
            "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
            "python": platform.python_version(), "numpy": np.__version__, "torch": torch_info["version"],
            "torch_threads": torch_info["threads"], "pyaclnn_kernel_threads": _kernel_threads(),
            "PYACLNN_NUM_THREADS": os.environ.get("PYACLNN_NUM_THREADS")}


# ------------------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Benchmark the NumPy reference backend (float32) against PyTorch CPU's aten backward "
                    "kernels and the machine's memory-traffic bound, on the four operators.",
        epilog="Progress goes to stderr, the table to stdout, every sample to the JSON file. "
               "Exit codes: 0 done, 1 a case failed, 2 usage error.")
    p.add_argument("--quick", action="store_true",
                   help="tiny shapes and 1 run: checks the output is well formed (CI); no timing value")
    p.add_argument("--repeat", type=int, default=None, metavar="N",
                   help=f"timed runs per case and side, after one warm-up (default {DEFAULT_REPEAT}; --quick: 1)")
    p.add_argument("--json", metavar="PATH", default=None,
                   help=f"where to write the JSON results (default: {DEFAULT_JSON} in the current directory; "
                        "with --acl: no file unless given)")
    p.add_argument("--case", action="append", choices=CASE_NAMES, metavar="NAME",
                   help=f"run only this case (repeatable): {', '.join(CASE_NAMES)}")
    p.add_argument("--mode", choices=MODES, default=None,
                   help="both tables (default), only the allocating one (alloc: new outputs every call), or "
                        "only the steady-state one (reuse: preallocated outputs written in place)")
    p.add_argument("--reuse-outputs", action="store_true", help="short for --mode reuse")
    p.add_argument("--no-torch", action="store_true", help="do not import torch: measure pyaclnn alone")
    p.add_argument("--acl", action="store_true",
                   help="instead, measure the acl path's host overhead through the CANN emulator "
                        "(benchmarks/acl_overhead.py; needs a source checkout and a C compiler)")
    return p


def _acl_overhead(quick: bool, json_path: str | None) -> int:
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "acl_overhead.py"
    emulator = script.parent.parent / "tests" / "emulator" / "build.py"
    if not (script.is_file() and emulator.is_file()):
        print(f"{PROG}: error: --acl needs a source checkout of pyaclnn (benchmarks/acl_overhead.py and "
              f"tests/emulator/ next to the package; looked in {script.parent.parent})", file=sys.stderr)
        return 2
    import importlib.util
    spec = importlib.util.spec_from_file_location("pyaclnn_acl_overhead", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    argv = (["--quick"] if quick else []) + (["--json", json_path] if json_path else [])
    return int(module.main(argv) or 0)


def _force_reference_backend() -> str | None:
    """Select the NumPy backend for this process; an error text if another one is already in use."""
    from . import _backend
    current = _backend._current
    if current is None:
        os.environ["PYACLNN_BACKEND"] = "numpy"
        return None
    if current.name != "numpy":
        return f"the {current.name} backend is already in use in this process; bench measures the reference backend"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code or 0)
    if args.repeat is not None and args.repeat < 1:
        print(f"{PROG}: error: --repeat must be at least 1", file=sys.stderr)
        return 2
    if args.reuse_outputs and args.mode not in (None, "reuse"):
        print(f"{PROG}: error: --reuse-outputs contradicts --mode {args.mode}", file=sys.stderr)
        return 2
    mode = "reuse" if args.reuse_outputs else (args.mode or "both")
    modes = ("alloc", "reuse") if mode == "both" else (mode,)
    if args.acl:
        return _acl_overhead(args.quick, args.json)
    json_path = args.json or DEFAULT_JSON
    repeat = args.repeat or (1 if args.quick else DEFAULT_REPEAT)
    problem = _force_reference_backend()
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 2

    import pyaclnn
    started = time.time()
    info = pyaclnn.backend_info()
    torch, torch_info = _load_torch(args.no_torch)
    if torch is None:
        _progress(f"PyTorch is not available ({torch_info['reason']}): measuring pyaclnn alone, "
                  "the peer columns stay empty (pip install torch to compare)")
    copy_bytes = QUICK_COPY_BYTES if args.quick else COPY_BYTES
    bw_runs = max(repeat, 3)
    _progress(f"measuring the copy bandwidth (np.copyto of {copy_bytes // MiB} MiB float32, median of {bw_runs})")
    bandwidth = copy_bandwidth(copy_bytes, bw_runs)

    cases = [c for c in make_cases(args.quick) if not args.case or c.name in args.case]
    results: dict[str, Any] = {
        "schema": SCHEMA, "pyaclnn": pyaclnn.__version__,
        "argv": list(sys.argv[1:] if argv is None else argv), "quick": args.quick,
        "repeat": repeat, "warmup": 1, "modes": list(modes),
        "backend": {k: info[k] for k in ("backend", "soc", "reason")},
        "machine": _machine(torch_info), "peer": torch_info, "copy_bandwidth": bandwidth, "cases": [],
        "reuse_cases": []}
    status = 0
    for k, case in enumerate(cases, 1):
        try:
            alloc, reuse = run_case(case, repeat, torch, k, len(cases), bandwidth["gbps"], modes)
        except Exception as exc:  # noqa: BLE001 - report the case, go on with the others
            _progress(f"[{k}/{len(cases)}] {case.label}: FAILED: {type(exc).__name__}: {exc}")
            failed = {"name": case.name, "label": case.label, "params": case.params,
                      "error": f"{type(exc).__name__}: {exc}"}
            alloc = failed if "alloc" in modes else None
            reuse = failed if "reuse" in modes else None
        for key, res in (("cases", alloc), ("reuse_cases", reuse)):
            if res is not None:
                results[key].append(res)
                status = 1 if "error" in res else status
        gc.collect()
    results["elapsed_s"] = time.time() - started

    print(format_report(results), flush=True)
    try:
        import json
        Path(json_path).write_text(json.dumps(results, indent=2, default=_json_default) + "\n")
    except OSError as exc:
        print(f"{PROG}: error: cannot write {json_path}: {exc}", file=sys.stderr)
        return 1
    _progress(f"wrote {json_path}")
    return status


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
