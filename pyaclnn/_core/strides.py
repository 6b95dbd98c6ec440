"""Strided-layout arithmetic shared by the tensor layer and the NumPy runtime (elements)."""
from __future__ import annotations

import math
import operator
from functools import lru_cache
from typing import Any, Sequence

from numpy import bool_ as _np_bool


@lru_cache(maxsize=1024)
def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides, in elements, of a contiguous tensor of ``shape`` (a tuple)."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def extent(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, int]:
    """(lowest, highest) element offset a non-empty strided view touches, relative to its
    first element."""
    lo = hi = 0
    for d, s in zip(shape, strides):  # one loop, no generators: it runs for every tensor of a launch
        if d > 1:
            if s < 0:
                lo += (d - 1) * s
            else:
                hi += (d - 1) * s
    return lo, hi


def _layout(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, list[tuple[int, int]]]:
    """A non-empty view's element offsets as (start, [(stride, size), ...]): dimensions of size 1
    and of stride 0 dropped (they add no offset), negative strides turned round (``start`` moves
    to the lowest element), largest stride first, and dimensions that nest exactly (an outer
    stride that is the inner stride times the inner size) merged. The same set of offsets."""
    start, dims = 0, []
    for d, s in zip(shape, strides):
        if d > 1 and s:
            if s < 0:
                start += (d - 1) * s
                s = -s
            dims.append((s, d))
    dims.sort(reverse=True)
    merged: list[tuple[int, int]] = []
    for s, d in dims:
        if merged and merged[-1][0] == s * d:
            merged[-1] = (s, merged[-1][1] * d)
        else:
            merged.append((s, d))
    return start, merged


def dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether a non-empty view's elements cover every offset of its extent exactly once (a
    contiguous tensor, or a permutation of one: a transpose): its bytes are then one span."""
    if tuple(strides) == contiguous_strides(tuple(shape)):
        return True
    dims = _layout(shape, strides)[1]  # (stride 0 repeats an element: the extent then has holes)
    if not dims:
        return math.prod(shape) == 1
    return len(dims) == 1 and dims[0][0] == 1 and math.prod(shape) == dims[0][1]


def byte_boxes(shape: Sequence[int], strides: Sequence[int], itemsize: int, count: int | None = None
               ) -> list[tuple[int, list[tuple[int, int]]]]:
    """The bytes of a non-empty strided view's elements (all of them, or with ``count`` its first
    ``count`` in row-major order), relative to its first element's first byte, as boxes
    ``(start, [(byte stride, size), ...])`` of ``_layout`` (strides positive, largest first, the
    item's bytes the last dimension): each box's bytes are ``start + sum(i_k * stride_k)``. The
    first ``count`` elements are whole leading slabs, then the rest of the next slab, and so on."""
    boxes: list[tuple[int, Sequence[int], Sequence[int]]] = []
    if count is None or count >= math.prod(shape):
        boxes.append((0, shape, strides))
    else:
        first = 0
        while count:
            inner = math.prod(shape[1:])
            q, count = divmod(count, inner)
            if q:
                boxes.append((first, (q, *shape[1:]), strides))
            first += q * strides[0]
            shape, strides = shape[1:], strides[1:]
    out = []
    for first, box_shape, box_strides in boxes:
        start, dims = _layout((*box_shape, itemsize), (*(s * itemsize for s in box_strides), 1))
        out.append((first * itemsize + start, dims))
    return out


def index_view(shape: Sequence[int], strides: Sequence[int], key: object) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, strides, offset delta) in elements of the view that basic indexing ``key`` (ints,
    slices, ``...``, ``None``) selects from a strided layout, as NumPy's basic indexing does.

    Pure arithmetic: no memory is touched, so it works for any shape. Raises IndexError for an
    out-of-range int, too many indices or a second ``...``, TypeError for anything that is not
    basic indexing (bools, floats, lists, arrays: NumPy treats those as copies, not views).
    """
    keys = key if isinstance(key, tuple) else (key,)
    kinds: list[Any] = []  # ints, slices, None and at most one Ellipsis
    for k in keys:
        if k is None or k is Ellipsis or isinstance(k, slice):
            kinds.append(k)
        else:
            try:
                if isinstance(k, (bool, _np_bool)):
                    raise TypeError
                kinds.append(operator.index(k))  # ints, NumPy integers, 0-d integer arrays
            except TypeError:
                raise TypeError(f"Tensor indices must be ints, slices, ... or None (views only), not "
                                f"{type(k).__name__} {k!r}; use .numpy() for boolean or advanced "
                                "indexing") from None
    if sum(k is Ellipsis for k in kinds) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(k is not None and k is not Ellipsis for k in kinds)
    if used > len(shape):
        raise IndexError(f"too many indices: the tensor is {len(shape)}-dimensional, but {used} were indexed")
    if Ellipsis in kinds:
        at = kinds.index(Ellipsis)
        kinds[at:at + 1] = [slice(None)] * (len(shape) - used)
    else:
        kinds += [slice(None)] * (len(shape) - used)
    out_shape: list[int] = []
    out_strides: list[int] = []
    delta, axis = 0, 0
    for k in kinds:
        if k is None:
            out_shape.append(1)
            out_strides.append(0)
            continue
        size, stride = int(shape[axis]), int(strides[axis])
        if isinstance(k, slice):
            start, stop, step = k.indices(size)  # ValueError for step 0, as NumPy
            out_shape.append(len(range(start, stop, step)))
            out_strides.append(stride * step)
            delta += start * stride
        else:
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {size}")
            delta += (k + size if k < 0 else k) * stride
        axis += 1
    return tuple(out_shape), tuple(out_strides), delta
