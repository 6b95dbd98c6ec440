"""What the NumPy backend's kernels are made of (each operator's own is pyaclnn/ops/<op>/kernel.py).

``_layout``: views, tiles and fp32 stores; ``_parallel``: the thread pool, per-thread scratch
buffers and quiet FP errors. The callers validate inputs (each operator's spec) and skip empty
ones; kernels only compute, reading any-strided NumPy views and writing into the given (possibly
strided) outputs. Semantics and precision follow shared/reference/ops.md: fp16/bf16 are computed
in fp32 and rounded once (round-to-nearest-even) to the output dtype, sums are fp32, results are
independent of the number of threads.
"""
