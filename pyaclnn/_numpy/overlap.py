"""Partial overlap of what one task writes with what it reads, refused as torch refuses it.

A kernel tiles its work: where an output shares some bytes with an input of the same launch but
is not that input (the same address, shape, strides and dtype: the in-place use an operator may
allow, aclnnInplaceAdd, aclnnAdd with out == self), a tile may read bytes another tile already
wrote, so the device's result depends on the tiling; NumPy would compute an answer no device
gives. torch refuses the same programs (ATen MemoryOverlap.cpp assert_no_partial_overlap:
"unsupported operation: some elements of the input tensor and the written-to tensor refer to a
single memory location"). A device-to-device copy between overlapping ranges is the same case
(a DMA copies in blocks, not as memmove)."""
from __future__ import annotations

from typing import Callable, Sequence

from .memory import Access, Span, shared
from .records import TensorDesc


def _same(a: TensorDesc, b: TensorDesc) -> bool:
    """Whether two descriptors are one tensor's memory (full overlap: in-place use)."""
    return a is b or (a.addr, a.offset, a.shape, a.strides, a.dtype) == (b.addr, b.offset, b.shape, b.strides, b.dtype)


def partial_overlap(outputs: Sequence[TensorDesc], inputs: Sequence[TensorDesc],
                    span_of: Callable[[TensorDesc], Span], exact: Callable[[TensorDesc], Access]
                    ) -> tuple[TensorDesc, TensorDesc, Span] | None:
    """The first (output, input, shared bytes) where an output partly overlaps an input; None if
    none does. ``span_of``: a tensor's byte span (cheap, tried first); ``exact``: its elements' bytes."""
    for out in outputs:
        o0, o1 = span_of(out)
        for inp in inputs:
            i0, i1 = span_of(inp)
            if o0 < i1 and i0 < o1 and not _same(out, inp):
                hit = shared(exact(out), exact(inp))
                if hit is not None:
                    return out, inp, hit
    return None


def copy_overlap(dst: int, src: int, count: int) -> Span | None:
    """The bytes a copy of ``count`` bytes from ``src`` to ``dst`` both reads and writes (None:
    none, or the same range: a copy onto itself changes nothing)."""
    if dst == src or dst + count <= src or src + count <= dst:
        return None
    return max(dst, src), min(dst, src) + count
