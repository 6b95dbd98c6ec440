"""Views, tiles and stores shared by the kernels.

Inputs may be any-strided NumPy views (negative or zero strides included) and outputs may be
strided views into a larger buffer. Nothing here copies a whole array: axes are merged only where
every operand allows a view, tiles are rectangular sub-views, and the flat-range helpers copy one
tile at a time for the rare layouts a row-major reshape cannot express as a view.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ._parallel import scratch

__all__ = ["F32", "prod", "at_least_1d", "memory_order", "coalesce", "tiles", "view_as", "reshape_view",
           "flat_pieces", "gather_flat", "scatter_flat", "store", "as_f32"]

F32 = np.dtype(np.float32)
# np.reshape(copy=False), "a view or ValueError", exists from NumPy 2.1 on.
_RESHAPE_HAS_COPY = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


def reshape_view(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` reshaped row-major to ``shape`` as a view (never a copy); ValueError if impossible."""
    if _RESHAPE_HAS_COPY:
        return np.reshape(a, shape, copy=False)
    view = a.view()
    try:
        view.shape = shape  # before NumPy 2.1: in place on a view, which never copies
    except AttributeError as exc:
        raise ValueError(str(exc)) from None
    return view


def prod(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def at_least_1d(a: np.ndarray) -> np.ndarray:
    """A 0-D array as a (1,) view (indexing a 0-D array with () would give a scalar, not a view)."""
    return a[np.newaxis] if a.ndim == 0 else a


def memory_order(arrays: Sequence[np.ndarray], by: np.ndarray) -> list[np.ndarray]:
    """Transpose same-shaped arrays so ``by``'s axes run from largest to smallest |stride|.

    Only for elementwise work: iterating tiles in ``by``'s memory order keeps each tile compact
    in memory even when ``by`` is, say, a transposed view.
    """
    perm = sorted(range(by.ndim), key=lambda ax: -abs(by.strides[ax]) if by.shape[ax] > 1 else 0)
    if perm == list(range(by.ndim)):
        return list(arrays)
    return [a.transpose(perm) for a in arrays]


def coalesce(arrays: Sequence[np.ndarray], keep: int = 0) -> list[np.ndarray]:
    """Views of same-shaped ``arrays`` with adjacent axes merged wherever *every* array allows it.

    The first ``keep`` axes are left alone; from there on size-1 axes are dropped and neighbours
    merged when outer_stride == inner_stride * inner_size for all arrays (0-strides of broadcast
    operands merge with each other). Contiguous same-shape operands become 1-D.
    """
    shape = arrays[0].shape
    dims: list[tuple[int, list[int]]] = []
    for ax in range(keep, len(shape)):
        n = shape[ax]
        if n == 1:
            continue
        st = [a.strides[ax] for a in arrays]
        if dims and all(ps == s * n for ps, s in zip(dims[-1][1], st)):
            dims[-1] = (dims[-1][0] * n, st)
        else:
            dims.append((n, st))
    new_shape = tuple(shape[:keep]) + tuple(d for d, _ in dims)
    if not new_shape:
        new_shape = (1,)
    if new_shape == shape:
        return list(arrays)
    return [reshape_view(a, new_shape) for a in arrays]


def tiles(shape: Sequence[int], block: int, *, min_axis: int = 0) -> list[tuple[slice, ...]]:
    """Rectangular tiles of about ``block`` elements covering ``shape``, in row-major order.

    Tiles keep every axis (outer axes are ``slice(i, i + 1)``) and every slice has explicit
    start and stop. The split axis is the outermost
    one whose inner part still fits in ``block``, but never before ``min_axis`` (a kernel passes
    ``min_axis=1`` to keep axis 0 out of the tile, e.g. one row or one sample per tile). The tiling
    depends only on the shape and ``block``, never on the number of threads.
    """
    nd = len(shape)
    k, inner = nd - 1, 1
    while k > min_axis and inner * shape[k] <= block:
        inner *= shape[k]
        k -= 1
    step = max(1, block // inner)
    out: list[tuple[slice, ...]] = []
    rest = tuple(slice(0, shape[j]) for j in range(k + 1, nd))
    for outer in np.ndindex(*shape[:k]):
        head = tuple(slice(i, i + 1) for i in outer)
        for s in range(0, shape[k], step):
            out.append(head + (slice(s, min(s + step, shape[k])),) + rest)
    return out


def view_as(a: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    """``a`` reshaped row-major to ``shape`` as a view, or None when that needs a copy."""
    if a is None:
        return None
    try:
        return reshape_view(a, shape)
    except ValueError:
        return None


def flat_pieces(shape: Sequence[int], start: int, stop: int) -> list[tuple]:
    """Indexes of rectangular sub-blocks whose row-major concatenation is ``flat[start:stop]``.

    At most two pieces per axis plus one: a partial leading row, a run of whole rows, a partial
    trailing row (recursively).
    """
    if start >= stop:
        return []
    if len(shape) == 0:
        return [()]
    inner = prod(shape[1:])
    first, r0 = divmod(start, inner)
    last, r1 = divmod(stop, inner)
    if r0 and first == last:
        return [(first,) + p for p in flat_pieces(shape[1:], r0, r1)]
    pieces: list[tuple] = []
    if r0:
        pieces += [(first,) + p for p in flat_pieces(shape[1:], r0, inner)]
        first += 1
    if last > first:
        pieces.append((slice(first, last),))
    if r1:
        pieces += [(last,) + p for p in flat_pieces(shape[1:], 0, r1)]
    return pieces


def gather_flat(a: np.ndarray, start: int, stop: int, buf: np.ndarray) -> np.ndarray:
    """Copy (and cast) ``a``'s row-major elements ``[start, stop)`` into the 1-D buffer ``buf``."""
    pos = 0
    for idx in flat_pieces(a.shape, start, stop):
        piece = np.asarray(a[idx])
        n = piece.size
        np.copyto(buf[pos:pos + n].reshape(piece.shape), piece, casting="unsafe")
        pos += n
    return buf


def scatter_flat(a: np.ndarray, start: int, stop: int, values: np.ndarray) -> None:
    """Write the 1-D ``values`` into ``a``'s row-major elements ``[start, stop)`` (casting)."""
    pos = 0
    for idx in flat_pieces(a.shape, start, stop):
        target = a[idx]
        if isinstance(target, np.ndarray):
            n = target.size
            np.copyto(target, values[pos:pos + n].reshape(target.shape), casting="unsafe")
        else:  # one element: a[idx] was a scalar copy, assign through the index
            n = 1
            a[idx] = values[pos]
        pos += n


def store(dst: np.ndarray, src32: np.ndarray, via: np.dtype | None = None) -> None:
    """Round ``src32`` (fp32) into ``dst``: round-to-nearest-even, optionally through dtype ``via``.

    ``via`` models a device kernel whose result is first rounded to its own dtype and then cast
    to a differently-typed output (double rounding).
    """
    if via is not None and via != F32 and via != dst.dtype:
        tmp = scratch("store_via", src32.shape, via)
        np.copyto(tmp, src32, casting="unsafe")
        np.copyto(dst, tmp, casting="unsafe")
    else:
        np.copyto(dst, src32, casting="unsafe")


def as_f32(a: np.ndarray) -> np.ndarray:
    """A small array (weights, mean, rstd...) as a fresh 1-D fp32 copy in row-major order."""
    return np.array(np.reshape(a, -1), dtype=np.float32)
