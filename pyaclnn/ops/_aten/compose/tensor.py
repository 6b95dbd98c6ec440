"""Small compositions of aten calls for the tensor families' entries (t_*.py), named by a
``compose:tensor.<name>`` path where no single aten overload has the operator's semantics. Each takes torch tensors (real or on the ``meta`` device: phase 1 runs
them there for the output's shape and dtype) and the plain C values, and returns aten's
result(s); the docstring says which aclnn operator it is and what it composes.

It imports torch lazily, inside the functions.
"""
from __future__ import annotations

import functools
from typing import Any, Sequence


def _torch() -> Any:
    import torch
    return torch


def aminmax_dims(x: Any, dim: Sequence[int], keepdim: bool) -> tuple[Any, Any]:
    """aclnnAminmax: (amin, amax) over an array of dims (aten's aminmax takes one dim)."""
    a = _torch().ops.aten
    return a.amin.default(x, list(dim), keepdim), a.amax.default(x, list(dim), keepdim)


def cumsum_v2(x: Any, dim: int, exclusive: bool, reverse: bool) -> Any:
    """aclnnCumsumV2: cumsum along dim; ``reverse`` sums from the end, ``exclusive`` leaves the
    element itself out (the j-th output is the sum of the j-1 before it: aclnnCumsumV2.md)."""
    torch = _torch()
    y = torch.flip(x, [dim]) if reverse else x
    s = torch.cumsum(y, dim)
    if exclusive:
        s = s - y
    return torch.flip(s, [dim]) if reverse else s


def mean_v2(x: Any, dim: Sequence[int], keepdim: bool, noop: bool, out_dtype: Any) -> Any:
    """aclnnMeanV2: mean over dim; an empty dim reduces every axis, or (noopWithEmptyAxes) is
    the input itself (aclnnMeanV2.md); out of self's dtype (aclnn_mean.cpp CheckDtypeValidONNX)."""
    torch = _torch()
    if out_dtype != x.dtype:
        raise ValueError(f"out dtype {out_dtype} differs from self's {x.dtype}")
    if not dim and noop:
        return x.clone()
    return torch.mean(x, list(dim) if dim else list(range(x.dim())), keepdim)


def global_average_pool(x: Any) -> Any:
    """aclnnGlobalAveragePool: the mean over every axis after N, C, kept (N, C, 1, ...)."""
    return _torch().mean(x, list(range(2, x.dim())), True)


def global_max_pool(x: Any) -> Any:
    """aclnnGlobalMaxPool: the max over every axis after N, C, kept (N, C, 1, ...)."""
    return _torch().amax(x, list(range(2, x.dim())), True)


def max_n(tensors: Sequence[Any]) -> Any:
    """aclnnMaxN: the element-wise max of a list of tensors (broadcast, promoted)."""
    return functools.reduce(_torch().maximum, tensors)


def min_n(tensors: Sequence[Any]) -> Any:
    """aclnnMinN: the element-wise min of a list of tensors (broadcast, promoted)."""
    return functools.reduce(_torch().minimum, tensors)


def sum_n(tensors: Sequence[Any]) -> Any:
    """aclnnSum / aclnnSumV2: the element-wise sum of a list of tensors (AccumulateNV2)."""
    return functools.reduce(_torch().add, tensors)


def batch_norm_stats(x: Any, eps: float) -> tuple[Any, Any]:
    """aclnnBatchNormStats: per channel (dim 1) the mean and 1/sqrt(biased var + eps), in fp32
    (aten's batch_norm_stats has no CPU kernel)."""
    torch = _torch()
    dims = [d for d in range(x.dim()) if d != 1]
    var, mean = torch.var_mean(x.float(), dims, correction=0)
    return mean, torch.rsqrt(var + eps)


def flatten_2d(x: Any, axis: int) -> Any:
    """aclnnFlatten: ONNX Flatten, a 2-D result (prod(shape[:axis]), prod(shape[axis:]))
    (aclnnFlatten.md), unlike aten's flatten."""
    axis = axis + x.dim() if axis < 0 else axis
    lead = 1
    for s in x.shape[:axis]:
        lead *= s
    return x.reshape(lead, -1) if x.numel() else x.reshape(lead, x.numel() // max(lead, 1))


def slice_v2(x: Any, starts: Sequence[int], ends: Sequence[int], axes: Sequence[int],
             steps: Sequence[int]) -> Any:
    """aclnnSliceV2: aten's slice once per axis (starts/ends/axes/steps in parallel)."""
    a = _torch().ops.aten
    for s, e, ax, st in zip(starts, ends, axes, steps):
        x = a.slice.Tensor(x, ax, s, e, st)
    return x


def confusion_transpose(x: Any, perm: Sequence[int], shape: Sequence[int], transpose_first: bool) -> Any:
    """aclnnConfusionTranspose: reshape(permute(x)) when transpose_first, else
    permute(reshape(x)) (aclnnConfusionTranspose.md)."""
    if transpose_first:
        return x.permute(list(perm)).reshape(list(shape))
    return x.reshape(list(shape)).permute(list(perm))


def masked_scale(x: Any, mask: Any, scale: float) -> Any:
    """aclnnMaskedScale: x * mask * scale (aten's _masked_scale has no CPU kernel)."""
    return (x * mask.to(x.dtype) * scale).to(x.dtype)


def one_hot(x: Any, num_classes: int, on: Any, off: Any, axis: int) -> Any:
    """aclnnOneHot: onValue where x == class, offValue elsewhere (classes out of range: all off),
    the class axis inserted at ``axis`` (-1: last) (aclnnOneHot.md)."""
    torch = _torch()
    classes = torch.arange(num_classes, device=x.device)
    hot = x.unsqueeze(-1) == classes
    y = torch.where(hot, on.reshape(()), off.reshape(()))
    return y if axis == -1 else y.movedim(-1, axis)


def qr(x: Any, mode: str) -> tuple[Any, Any]:
    """aclnnLinalgQr / aclnnQr: linalg_qr, fp16 computed in fp32."""
    torch = _torch()
    wide = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    return torch.ops.aten.linalg_qr.default(wide, mode)  # type: ignore[no-any-return]


def svd(x: Any, full_matrices: bool, compute_uv: bool, u_shape: Sequence[int], v_shape: Sequence[int]
        ) -> tuple[Any, Any, Any]:
    """aclnnSvd: (sigma, U, V) with input = U diag(sigma) V^T (aclnnSvd.md: V, not aten's Vh).
    Without computeUV only sigma is computed and u, v (their shapes unchecked, aclnn_svd.cpp)
    are written as zeros of their own shapes."""
    torch = _torch()
    u, s, vh = torch.ops.aten._linalg_svd.default(x, full_matrices, compute_uv)
    if not compute_uv:
        return s, x.new_zeros(list(u_shape)), x.new_zeros(list(v_shape))
    return s, u, vh.mH


def sqrt_backward(y: Any, dy: Any) -> Any:
    """aclnnSqrtBackward: the gradient of y = sqrt(x): dy / (2 y) (aten's sqrt derivative)."""
    return dy / (2 * y)


def circular_pad_backward(grad: Any, x: Any, padding: Sequence[int]) -> Any:
    """aclnnCircularPad2d/3dBackward: the vector-Jacobian product of _pad_circular (each
    padded element's gradient added back to the element it copies)."""
    torch = _torch()
    return torch.func.vjp(lambda t: torch.ops.aten._pad_circular.default(t, list(padding)),
                          torch.zeros_like(x))[1](grad)[0]


def sort_with_index(x: Any, index: Any, axis: int, descending: bool, stable: bool) -> tuple[Any, Any]:
    """aclnnSortWithIndex: x sorted along axis, and index reordered the same way
    (experimental/math/sort_with_index README: sorted_index_k = index[p_k])."""
    torch = _torch()
    values, order = torch.sort(x, dim=axis, descending=descending, stable=stable)
    return values, torch.gather(index, axis, order)


def _bits(packed: Any, count: int) -> Any:
    """The first ``count`` bits of uint8 ``packed``, least significant bit of each byte first
    (AscendC's bit masks: bit i of the mask is element i)."""
    torch = _torch()
    shifts = torch.arange(8, device=packed.device, dtype=torch.uint8)
    return ((packed.reshape(-1, 1) >> shifts) & 1).reshape(-1)[:count].bool()


def dropout_do_mask(x: Any, mask: Any, prob: float) -> Any:
    """aclnnDropoutDoMask: x * (1 / (1 - prob)) where mask's bit is 1, else 0, one bit per
    element of x, LSB first, the mask holding align(numel, 128) / 8 bytes; prob 0 is x itself,
    prob 1 zeros (dropout_common.h DoMask; the kernel multiplies in fp32 by the reciprocal of
    1 - prob in x's dtype: drop_out_do_mask.h)."""
    torch = _torch()
    if not 0.0 <= prob <= 1.0:
        raise ValueError(f"The value of prob has to be between 0 and 1, but current is {prob}.")
    need = (x.numel() + 127) // 128 * 16
    if mask.numel() < need:
        raise ValueError(f"Size of mask has to be {need}, but current is {mask.numel()}.")
    if prob == 0.0:
        return x.clone()
    if prob == 1.0:
        return torch.zeros_like(x)
    keep = torch.tensor(1.0 - prob, dtype=x.dtype).float()
    kept = _bits(mask, x.numel()).reshape(x.shape)
    return torch.where(kept, x.float() * (1.0 / keep), 0.0).to(x.dtype)


def sign_bits_pack(x: Any, size: int) -> Any:
    """aclnnSignBitsPack: bit k of byte j is 1 where x[8j + k] >= 0 (LSB first: CompareScalar GE
    in sign_bits_pack.h), the tail padded with -1 (bit 0), reshaped to (size, -1)."""
    torch = _torch()
    if x.dim() != 1:
        raise ValueError(f"self must be 1-D, got {x.dim()}-D")
    n = (x.numel() + 7) // 8
    if size <= 0 or n % size:
        raise ValueError(f"size {size} must be positive and divide the packed length {n}")
    bits = torch.zeros(n * 8, dtype=torch.uint8, device=x.device)
    bits[: x.numel()] = (x >= 0).to(torch.uint8)
    weights = torch.tensor([1 << k for k in range(8)], dtype=torch.uint8, device=x.device)
    return (bits.reshape(n, 8) * weights).sum(1, dtype=torch.uint8).reshape(size, -1)


def sign_bits_unpack(x: Any, size: int, dtype: Any) -> Any:
    """aclnnSignBitsUnpack: each bit of the uint8 input, LSB first, as 1.0 (set) or -1.0
    (clear) in ``dtype``, reshaped to (size, -1) (sign_bits_unpack.h Select)."""
    torch = _torch()
    if x.dim() != 1:
        raise ValueError(f"self must be 1-D, got {x.dim()}-D")
    if size <= 0 or (x.numel() * 8) % size:
        raise ValueError(f"size {size} must be positive and divide 8 * {x.numel()}")
    bits = _bits(x, x.numel() * 8)
    one = torch.ones((), dtype=dtype, device=x.device)
    return torch.where(bits, one, -one).reshape(size, -1)


def sinkhorn(cost: Any, tol: float | None) -> Any:
    """aclnnSinkhorn: the doc's iteration (aclnnSinkhorn.md) in fp32 on exp(cost): d0, d1
    rescaled until the mean change of d1 is <= tol (nullptr: 0.0001), p = d1 * cost * d0[:, None].
    Stops after 100000 rounds where it would not converge (NaN)."""
    torch = _torch()
    if cost.dim() != 2:
        raise ValueError(f"cost must be 2-D, got {cost.dim()}-D")
    if cost.device.type == "meta":
        return torch.empty_like(cost)
    tol = 1e-4 if tol is None else tol
    c = torch.exp(cost.float())
    rows, cols = c.shape
    d0, d1 = torch.ones(rows), torch.ones(cols)
    eps = 1e-8
    for _ in range(100000):
        d0 = 1 / (rows * ((d1 * c).sum(1) + eps))
        new = 1 / (cols * ((d0.unsqueeze(1) * c).sum(0) + eps))
        error = (d1 - new).abs().mean()
        d1 = new
        if not error > tol:
            break
    return (d1 * c * d0.unsqueeze(1)).to(cost.dtype)


def strided_slice(x: Any, begin: Sequence[int], end: Sequence[int], strides: Sequence[int], begin_mask: int,
                  end_mask: int, ellipsis_mask: int, new_axis_mask: int, shrink_axis_mask: int) -> Any:
    """aclnnStridedSlice: TensorFlow's strided_slice, spec entry i read as a Python index: bit i
    of ellipsisMask an ``...``, of newAxisMask a new axis, of shrinkAxisMask the single index
    begin[i], else the slice begin[i]:end[i]:strides[i] (beginMask/endMask: that end open)
    (aclnnStridedSlice.md); a negative stride walks backwards."""
    torch = _torch()
    if not len(begin) == len(end) == len(strides):
        raise ValueError(f"begin, end and strides differ in length ({len(begin)}, {len(end)}, {len(strides)})")
    if any(s == 0 for s in strides):
        raise ValueError("strides must not be 0")
    spec = range(len(begin))
    if bin(ellipsis_mask & ((1 << len(begin)) - 1)).count("1") > 1:
        raise ValueError("more than one ellipsis in ellipsisMask")
    consumed = sum(1 for i in spec if not (ellipsis_mask >> i) & 1 and not (new_axis_mask >> i) & 1)
    if consumed > x.dim():
        raise ValueError(f"{consumed} indices for a rank-{x.dim()} self")
    index: list[Any] = []
    for i in spec:
        if (ellipsis_mask >> i) & 1:
            index.extend([slice(None)] * (x.dim() - consumed))
            consumed = x.dim()
        elif (new_axis_mask >> i) & 1:
            index.append(None)
        elif (shrink_axis_mask >> i) & 1:
            index.append(int(begin[i]))
        else:
            index.append(slice(None if (begin_mask >> i) & 1 else begin[i],
                               None if (end_mask >> i) & 1 else end[i], strides[i]))
    y, axis = x, 0  # apply one entry at a time: torch takes no negative steps
    for item in index:
        if item is None:
            y = y.unsqueeze(axis)
            axis += 1
        elif isinstance(item, int):
            size = y.shape[axis]
            if not -size <= item < size:
                raise ValueError(f"index {item} out of range for dim {axis} of size {size}")
            y = y.select(axis, item)
        else:
            start, stop, step = item.indices(y.shape[axis])
            if step > 0:
                y = y[(slice(None),) * axis + (slice(start, max(start, stop), step),)]
            else:
                picks = range(start, stop, step)
                y = y.index_select(axis, torch.tensor(list(picks), dtype=torch.long, device=y.device))
            axis += 1
    return y.clone()


def scale(x: Any, scale: Any, bias: Any, axis: int, num_axes: int, from_blob: bool, out_dtype: Any) -> Any:
    """aclnnScale: y = x * scale (+ bias), scale and bias laid along x's dims from ``axis``
    (Caffe's Scale), with aclnn_scale.cpp's checks: x, scale, bias and y of one dtype; bias
    shaped as scale; scaleFromBlob: scale is x.shape[axis:axis + numAxes] (-1: to the last
    axis; 0: one element), else x.shape[axis:axis + rank(scale)] or a single element."""
    rank = x.dim()
    dtypes = {x.dtype, scale.dtype, out_dtype} | ({bias.dtype} if bias is not None else set())
    if len(dtypes) != 1:
        raise ValueError(f"x, scale, bias and y must share one dtype, got {sorted(map(str, dtypes))}")
    if bias is not None and bias.shape != scale.shape:
        raise ValueError(f"bias shape {tuple(bias.shape)} differs from scale's {tuple(scale.shape)}")
    if not -rank <= axis < rank:
        raise ValueError(f"axis must be within the range of [{-rank}, {rank}), but it is {axis}.")
    if num_axes < -1:
        raise ValueError(f"numAxes must be >= -1, but it is {num_axes}.")
    axis = axis + rank if axis < 0 else axis
    single = scale.numel() == 1 and (scale.dim() <= 1 or (from_blob and num_axes == 0))
    if from_blob and num_axes == 0 and scale.numel() != 1:
        raise ValueError(f"when num_axes is 0, scale must have one num, but shape is {tuple(scale.shape)}.")
    if not single:
        length = (rank - axis if num_axes == -1 else num_axes) if from_blob else scale.dim()
        want = tuple(x.shape[axis:axis + length])
        if length <= 0 and from_blob or axis + length > rank or tuple(scale.shape) != want:
            raise ValueError(f"the scale must be {want}, when x is {tuple(x.shape)} and attr[axis({axis}), "
                             f"numAxes({num_axes})], but get {tuple(scale.shape)}.")
    lay = (lambda t: t.reshape(())) if single else \
        (lambda t: t.reshape(list(t.shape) + [1] * (rank - axis - t.dim())))
    y = x * lay(scale)
    return y + lay(bias) if bias is not None else y


def view_copy(dst: Any, dst_size: Any, dst_stride: Any, dst_offset: Any, src: Any, src_size: Any,
              src_stride: Any, src_offset: Any) -> Any:
    """aclnnViewCopy: dst (its elements in order as the storage) with the view (dst_size,
    dst_stride, dst_storage_offset) overwritten by src's view (src_size, src_stride,
    src_storage_offset): aten's as_strided on both, copied (experimental/conversion/view_copy
    aclnnViewCopy.md: one dtype; int32/int64 metadata of one dtype; rank 1-8; one-element
    offsets; no broadcasting)."""
    torch = _torch()
    meta = (dst_size, dst_stride, dst_offset, src_size, src_stride, src_offset)
    if dst.dtype != src.dtype:
        raise ValueError(f"dst and src dtypes differ ({dst.dtype}, {src.dtype})")
    if len({t.dtype for t in meta}) != 1 or meta[0].dtype not in (torch.int32, torch.int64):
        raise ValueError("the six metadata tensors must share one dtype, int32 or int64")
    if not 1 <= dst_size.numel() <= 8 or dst_stride.numel() != dst_size.numel() or \
            src_size.numel() != dst_size.numel() or src_stride.numel() != dst_size.numel():
        raise ValueError("dst_size, dst_stride, src_size and src_stride must have one rank, 1 to 8 elements")
    if dst_offset.numel() != 1 or src_offset.numel() != 1:
        raise ValueError("the storage offsets must have one element each")
    if dst.device.type == "meta":
        return torch.empty_like(dst)
    sizes, src_sizes = dst_size.tolist(), src_size.tolist()
    if sizes != src_sizes:
        raise ValueError(f"dst_size {sizes} and src_size {src_sizes} differ (no broadcasting)")
    out = dst.contiguous().clone().reshape(-1)
    view = out.as_strided(sizes, dst_stride.tolist(), int(dst_offset.reshape(()).item()))
    view.copy_(src.contiguous().reshape(-1).as_strided(src_sizes, src_stride.tolist(),
                                                       int(src_offset.reshape(()).item())))
    return out.reshape(dst.shape)

def bincount(x: Any, weights: Any, minlength: int, out_shape: Sequence[int]) -> Any:
    """aclnnBincount: the count (or the weights' sum) of each value of x, in max(len(out),
    minlength) bins: the caller sizes out (max(x) + 1 or minlength, aclnnBincount.md) and the
    op source counts into that many bins, then copies them into out (aclnn_bincount.cpp); x is
    1-D and non-negative, weights (nullptr: ones) of x's shape. Values past the last bin are
    not counted."""
    torch = _torch()
    if x.dim() > 1:
        raise ValueError(f"self must be 1-D, got {x.dim()}-D")
    if weights is not None and weights.shape != x.shape:
        raise ValueError(f"weights shape {tuple(weights.shape)} differs from self's {tuple(x.shape)}")
    if len(out_shape) != 1:
        raise ValueError(f"out must be 1-D, got {len(out_shape)}-D")
    size = max(out_shape[0], minlength)
    if size != out_shape[0]:
        raise ValueError(f"minlength {minlength} exceeds out's length {out_shape[0]}")
    counts = torch.zeros(size, dtype=torch.int64 if weights is None else torch.float64, device=x.device)
    if x.device.type == "meta" or x.numel() == 0:
        return counts
    if bool((x < 0).any()):
        raise ValueError("self must be non-negative")
    values = x.reshape(-1).long()
    add = torch.ones_like(values) if weights is None else weights.reshape(-1).double()
    keep = values < size
    return counts.index_add_(0, values[keep], add[keep])
