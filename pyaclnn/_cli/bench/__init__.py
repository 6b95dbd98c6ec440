"""``python -m pyaclnn bench``: the NumPy reference backend against PyTorch CPU and the memory bound.

For each operator with benchmark cases (float32; each operator's api.py in pyaclnn/ops builds
its own: shapes, the pyaclnn call and its aten peer) it measures two things, in the same run and
on the same input arrays as PyTorch CPU's aten kernels (all of torch's threads):

1. allocating (the first table): the operator's public NumPy-in/NumPy-out function, output
   allocation included, against the aten call that allocates its outputs too;
2. steady state (``--mode reuse``, the second table): outputs preallocated and written in place.
   pyaclnn goes through its public two-phase API on the NumPy backend: the tensors are made once
   (``Tensor.from_numpy`` for the inputs, ``Tensor.empty`` for the outputs) and each timed
   iteration plans an executor (phase 1: every check) and runs it (phase 2: the kernel). Torch
   writes into preallocated tensors through the aten ``out=`` overload where there is one
   (``Case.run_torch_out``); where aten has none the peer still allocates (the table says so).

The cases (``--case NAME``, an operator's short name; the docstrings of each api.py's ``case``
and ``bench_case`` give its shapes and peer) are listed by ``pyaclnn bench --help``.

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

A third table, small calls (``--case small``, part of the default run, allocating mode only),
times the NumPy-in/NumPy-out calls on inputs of 128 and 4096 elements (8x16 / 64x64 and
the like), where the per-call overhead is everything, against the same aten calls on the same
arrays: each sample is the median of 200 individually timed calls (a mean would count the
machine's preemptions), 15 samples alternating the sides. Its target is at most 3x aten; aten
on one thread (``torch.set_num_threads(1)`` around its own samples) is shown beside it. So is
the same pyaclnn call on the inputs as torch tensors (``torch.from_numpy`` views, in samples of
their own), with its ratio to the ndarray call: at most 1.5x is the target.

A fourth table, aten-tier small calls (``--case aten-small``, part of the default run in every
``--mode``, run last; aten_small.py), times operators of the aten tier (Abs, Mul, Sub with an
alpha, Softmax, Amax) on float32 inputs of 8x16 and 64x64 through ``pyaclnn.Op``: ``with
pyaclnn.Op(name, *tensors, out) as ex: ex.run(stream); ex["out"].numpy()`` on Tensors made once
(``Tensor.numpy`` waits for the launch: no synchronize), against the aten overload on
``torch.from_numpy`` inputs with its result copied into a preallocated ndarray; torch on the aten
tier's thread count (one unless PYACLNN_NUM_THREADS says otherwise) for both sides. Samples and
batches as the small calls', alternating pyaclnn.Op, phase 1 alone (``pyaclnn.Op(...)`` and
``close``) and aten. Its target (issue 24) is at most 3x aten. Without torch it is skipped with
a line saying so (the aten tier needs torch).

``--quick`` uses tiny shapes and one sample: it checks the command and its output are well
formed (CI), and its figures mean nothing. ``--acl`` instead runs benchmarks/acl_overhead.py
(host overhead of the acl path through the CANN emulator), which needs a source checkout.

``--mode`` picks the tables: ``both`` (default), ``alloc`` or ``reuse``; ``--reuse-outputs``
is short for ``--mode reuse``.

JSON (``--json PATH``, default ``bench-results.json`` in the current directory), top-level keys:
``schema, pyaclnn, argv, quick, repeat, warmup, modes, backend, machine, peer, copy_bandwidth,
cases, reuse_cases, small_calls, aten_small_calls, elapsed_s``. ``cases`` holds the allocating
measurements (empty without that mode): ``name, label, params, bytes_read, bytes_written, bound_ms, output_bytes, pyaclnn
{median_ms, samples_ms, warmup_ms}, peer {ops, median_ms, samples_ms, warmup_ms} or null,
ratio, x_bound, extra_peak_bytes, first_call_extra_peak_bytes, max_abs_diff`` (or ``error``
when the case failed). ``reuse_cases`` holds the steady-state ones (empty without that mode):
``name, label, params, bytes_read, bytes_written, bound_ms, output_bytes, pyaclnn {api,
median_ms, samples_ms, warmup_ms}, peer {ops, out_variant, median_ms, samples_ms, warmup_ms}
or null, ratio, x_bound, extra_peak_bytes, max_abs_diff`` (or ``error``). ``small_calls``
holds ``name, label, elements, batch, pyaclnn {median_us, samples_us}, peer {ops, median_us,
samples_us} or null, ratio, target_ratio, within_target, peer_one_thread {median_us, samples_us}
or null, ratio_one_thread, max_abs_diff, torch_inputs {median_us, samples_us} or null,
torch_input_ratio, torch_input_target, torch_input_within_target`` (or ``error``).
``aten_small_calls`` is null when the table was not selected, else ``skipped`` (null, or why it
was: no torch), ``torch_threads`` (null when skipped), ``target_ratio`` and ``rows``, each ``name,
label, shape, elements, batch, pyaclnn {call, median_us, samples_us}, phase1 {median_us,
samples_us}, peer {op, median_us, samples_us}, ratio, target_ratio, within_target,
max_abs_diff`` (or ``name, label, shape, error``).

Exit codes: 0 done, 1 a case (or ``--acl``) failed, 2 usage error.
"""
from __future__ import annotations

from ...ops.cases import CASE_NAMES
from .cli import SCHEMA
from .cli import main

__all__ = ["main", "CASE_NAMES", "SCHEMA"]
