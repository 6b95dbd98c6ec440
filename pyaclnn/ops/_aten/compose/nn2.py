"""Small compositions of torch operations for aclnn operators no single aten overload computes
(named by the table's nn2_* families as ``"compose:nn2.<fn>"``).

Each takes torch tensors (CPU, or ``meta`` for phase 1's shape rule: only shape-generic torch
calls here) and plain values in the C parameters' order, and returns the result(s). Each cites
the aclnn doc (hicann/ops-nn <path>/docs/aclnn<Op>.md) whose formula it computes.
Imported only by the aten tier's callable lookup, after torch is imported.
"""
from __future__ import annotations

import math
from typing import Any

import torch

__all__ = ["scatter", "scatter_reduce", "max_pool3d_with_argmax_backward", "max_unpool3d", "max_unpool_backward",
           "shrink", "softsign_backward", "swish", "swish_backward", "kl_div_backward", "kl_div_target_backward",
           "l1_loss_backward", "nll_loss2d_backward", "scatter_nd", "softmax_cross_entropy_with_logits",
           "tf_scatter_add", "thnn_fused_lstm_cell", "thnn_fused_lstm_cell_backward", "modulate", "relu_grad_v4",
           "sync_batch_norm_gather_stats", "instance_norm",
           "max_pool_v3", "max_pool"]

Tensor = Any
_SCATTER_REDUCE = ("sum", "prod", "amax", "amin", "mean")  # CANN reduce 1..5 (aclnn_scatter_reduce.h)


def scatter(self: Tensor, dim: int, index: Tensor, src: Any, reduce: int) -> Tensor:
    """aclnnScatter / ScatterValue (aclnn_scatter.h): reduce 0 replaces, 1 adds, 2 multiplies;
    src a tensor or a scalar. Adding and multiplying are aten's scatter_reduce "sum" and "prod"
    with self included (torch.scatter's reduce= form, which computes the same, is deprecated)."""
    if reduce not in (0, 1, 2):
        raise ValueError(f"reduce {reduce} is not one of 0 (none), 1 (add), 2 (mul)")
    if not isinstance(src, torch.Tensor):
        src = torch.full(index.shape, src, dtype=self.dtype, device=self.device)
    if reduce == 0:
        return torch.scatter(self, dim, index, src)
    return torch.scatter_reduce(self, dim, index, src, ("sum", "prod")[reduce - 1], include_self=True)


def scatter_reduce(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: int, include_self: bool) -> Tensor:
    """aclnnScatterReduce: reduce 0 replaces (scatter), 1 add, 2 mul, 3 max, 4 min, 5 mean
    (aclnn_scatter_reduce.h); aten's scatter_reduce has no "none", so 0 is aten's scatter."""
    if not 0 <= reduce <= 5:
        raise ValueError(f"reduce {reduce} is not one of 0 (none), 1 (add), 2 (mul), 3 (max), 4 (min), 5 (mean)")
    if reduce == 0:
        return torch.scatter(self, dim, index, src)
    return torch.scatter_reduce(self, dim, index, src, _SCATTER_REDUCE[reduce - 1], include_self=include_self)


def max_pool3d_with_argmax_backward(grad: Tensor, self: Tensor, kernel_size: list[int], stride: list[int],
                                    padding: list[int], dilation: list[int], ceil_mode: bool,
                                    indices: Tensor) -> Tensor:
    """aclnnMaxPool3dWithArgmaxBackward (pooling/max_pool3d_grad_with_argmax/docs): aten's
    max_pool3d_with_indices_backward, with int32 indices widened (aten takes int64 only)."""
    return torch.ops.aten.max_pool3d_with_indices_backward.default(grad, self, kernel_size, stride, padding, dilation,
                                                                   ceil_mode, indices.long())


def max_unpool3d(self: Tensor, indices: Tensor, output_size: list[int], stride: list[int],
                 padding: list[int]) -> Tensor:
    """aclnnMaxUnpool3d: aten's max_unpool3d with int64 indices (stride and padding are checked,
    not used: the doc's "reserved" parameters, as aten's). Integer data (hicann/ops-nn
    index/scatter_elements/op_api/aclnn_max_unpool3d.cpp takes int8..int64, aten's CPU kernel
    none): aten's checks on float metadata, then the same scatter into each flattened plane."""
    unpool = torch.ops.aten.max_unpool3d.default
    if self.is_floating_point():
        return unpool(self, indices.long(), output_size, stride, padding)
    shape = unpool(self.to("meta", torch.float32), indices.to("meta").long(), output_size, stride, padding).shape
    out = self.new_zeros(tuple(self.shape[:-3]) + (math.prod(output_size),))
    out.scatter_(-1, indices.long().flatten(-3), self.flatten(-3))
    return out.reshape(shape)


def max_unpool_backward(grad: Tensor, self: Tensor, indices: Tensor, output_size: list[int], *_: Any) -> Tensor:
    """aclnnMaxUnpool2dBackward / 3dBackward (index/gather_elements/docs): out = gradOutput
    gathered at indices within each flattened spatial plane (the gradient of max_unpool)."""
    spatial = len(output_size)
    if grad.dim() != self.dim() or list(grad.shape[-spatial:]) != list(output_size):
        raise ValueError(f"gradOutput shape {tuple(grad.shape)} is not self's leading dims + outputSize {output_size}")
    if tuple(indices.shape) != tuple(self.shape):
        raise ValueError(f"indices shape {tuple(indices.shape)} is not self's {tuple(self.shape)}")
    flat = grad.flatten(-spatial)
    idx = indices.long().flatten(-spatial)
    return flat.gather(-1, idx).reshape(self.shape)


def shrink(self: Tensor, lambd: float, bias: float) -> Tensor:
    """aclnnShrink (activation/shrink/docs/aclnnShrink.md): self - bias where self > lambd,
    self + bias where self < -lambd, else 0."""
    zero = torch.zeros((), dtype=self.dtype, device=self.device)
    return torch.where(self > lambd, self - bias, torch.where(self < -lambd, self + bias, zero))


def softsign_backward(gradients: Tensor, features: Tensor) -> Tensor:
    """aclnnSoftsignBackward (experimental/activation/softsign_grad): gradients / (1 + |features|)^2."""
    return gradients / (1 + features.abs()).square()


def swish(self: Tensor, beta: float | None = None) -> Tensor:
    """aclnnSwish (activation/swish/docs/aclnnSwish.md): self * sigmoid(beta * self), beta 1.0
    when betaOptional is nullptr."""
    b = 1.0 if beta is None else float(beta)
    return self * torch.sigmoid(b * self)


def swish_backward(grad: Tensor, self: Tensor, beta: float | None = None) -> Tensor:
    """aclnnSwishBackward (activation/swish_grad): grad * (s + beta * self * s * (1 - s)),
    s = sigmoid(beta * self)."""
    b = 1.0 if beta is None else float(beta)
    s = torch.sigmoid(b * self)
    return grad * (s + b * self * s * (1 - s))


def _scale(reduction: int, numel: int) -> float:
    if reduction not in (0, 1, 2):
        raise ValueError(f"reduction {reduction} is not one of 0 (none), 1 (mean), 2 (sum)")
    return 1.0 / numel if reduction == 1 and numel else 1.0


def kl_div_backward(grad: Tensor, self: Tensor, target: Tensor, reduction: int, log_target: bool) -> Tensor:
    """aclnnKlDivBackward (experimental/loss/kl_div_loss_grad): the gradient of aten's kl_div
    (target * (log target - self), or exp(target) * (target - self)) by self: -target * grad
    (-exp(target) * grad), over self's element count when reduction is mean."""
    t = target.exp() if log_target else target
    return (-t * grad * _scale(reduction, self.numel())).expand(torch.broadcast_shapes(self.shape, t.shape,
                                                                                    grad.shape))


def kl_div_target_backward(grad: Tensor, self: Tensor, target: Tensor, reduction: int, log_target: bool) -> Tensor:
    """aclnnKlDivTargetBackward (loss/kl_div_target_loss_grad/docs): grad * (log(target) - self + 1),
    or grad * exp(target) * (target - self + 1) when logTarget; over the element count when mean."""
    d = target.exp() * (target - self + 1) if log_target else target.log() - self + 1
    return grad * d * _scale(reduction, self.numel())


def l1_loss_backward(grad: Tensor, self: Tensor, target: Tensor, reduction: int) -> Tensor:
    """aclnnL1LossBackward (loss/l1_loss_grad): sign(self - target) * grad, over the element
    count when mean (aten's former l1_loss_backward)."""
    diff = self - target
    return torch.sign(diff) * grad * _scale(reduction, diff.numel())


def nll_loss2d_backward(grad: Tensor, self: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                        ignore_index: int, total_weight: Tensor) -> tuple[Tensor, Tensor]:
    """aclnnNLLLoss2dBackward (experimental/loss/nll_loss_grad/docs): aten's nll_loss2d_backward;
    totalWeight, an input the header declares non-const (aclnn_nll_loss2d_backward.h), comes
    back as it is."""
    _scale(reduction, 1)
    out = torch.ops.aten.nll_loss2d_backward.default(grad, self, target.long(), weight, reduction, ignore_index,
                                                     total_weight)
    return out, total_weight


def scatter_nd(data: Tensor, indices: Tensor, updates: Tensor) -> Tensor:
    """aclnnScatterNd / ScatterNdUpdate (index/scatter_nd/docs, index/scatter_nd_update/docs):
    data with the slices indices[..., :] name (the last dim of indices indexes data's leading
    dims, as tf.tensor_scatter_nd_update) set to updates."""
    depth = indices.shape[-1] if indices.dim() else 0
    if indices.dim() < 1 or not 1 <= depth <= data.dim():
        raise ValueError(f"indices shape {tuple(indices.shape)}: its last dim must be 1..{data.dim()} (data's rank)")
    want = tuple(indices.shape[:-1]) + tuple(data.shape[depth:])
    if tuple(updates.shape) != want:
        raise ValueError(f"updates shape {tuple(updates.shape)} should be {want}")
    return torch.index_put(data, tuple(indices.long().unbind(-1)), updates)


def softmax_cross_entropy_with_logits(features: Tensor, labels: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """aclnnSoftmaxCrossEntropyWithLogits (activation/softmax_cross_entropy_with_logits/docs):
    loss = -sum(labels * log_softmax(features), 1), backprop = softmax(features) - labels, over
    the 2-D inputs' rows; labels, an input the header declares non-const, comes back as it is."""
    if features.dim() != 2 or tuple(labels.shape) != tuple(features.shape):
        raise ValueError(f"features {tuple(features.shape)} must be 2-D and labels {tuple(labels.shape)} the same")
    log_p = torch.log_softmax(features, 1)
    return -(labels * log_p).sum(1), log_p.exp() - labels, labels


def _nd_shape_fits(var: Tensor, indices: Tensor, updates: Tensor) -> bool:
    """CheckShapeForScatterNdAdd of index/tf_scatter_add/op_host/op_api/aclnn_tf_scatter_add.cpp:
    updates.shape == indices.shape[:-1] + var.shape[indices.shape[-1]:]."""
    if indices.dim() < 1:
        return False
    depth = indices.shape[-1]
    return depth <= var.dim() and tuple(updates.shape) == tuple(indices.shape[:-1]) + tuple(var.shape[depth:])


def tf_scatter_add(var: Tensor, indices: Tensor, updates: Tensor) -> Tensor:
    """aclnnTfScatterAdd (index/tf_scatter_add): tf scatter_nd_add when the shapes fit it (the
    op source tries it first), else tf scatter_add along dim 0 (updates.shape == indices.shape +
    var.shape[1:]); repeated indices accumulate."""
    idx = indices.long()
    if _nd_shape_fits(var, indices, updates):
        return torch.index_put(var, tuple(idx.unbind(-1)), updates, accumulate=True)
    if var.dim() < 1 or tuple(updates.shape) != tuple(indices.shape) + tuple(var.shape[1:]):
        raise ValueError(f"updates shape {tuple(updates.shape)} fits neither scatter_nd_add nor scatter_add "
                         f"(indices {tuple(indices.shape)}, varRef {tuple(var.shape)})")
    return torch.index_put(var, (idx,), updates, accumulate=True)


def thnn_fused_lstm_cell(input_gates: Tensor, hidden_gates: Tensor, cx: Tensor, input_bias: Tensor | None,
                         hidden_bias: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """aclnnThnnFusedLstmCell (rnn/thnn_fused_lstm_cell): gates = inputGates + hiddenGates (+ both
    biases) split in 4 along the last dim in the order i, f, g, o (op_kernel/thnn_fused_lstm_cell.h's
    offsets, as aten's _thnn_fused_lstm_cell, which has no CPU kernel; the doc's i, g, f, o is not
    the kernel's); cy = f*cx + i*g, hy = o*tanh(cy); storage = [i, f, g, o] activated."""
    if (input_bias is None) != (hidden_bias is None):
        raise ValueError("inputBiasOptional and hiddenBiasOptional are both given or both nullptr")
    if input_gates.dim() != 2 or tuple(hidden_gates.shape) != tuple(input_gates.shape) or \
            tuple(cx.shape) != (input_gates.shape[0], input_gates.shape[1] // 4) or input_gates.shape[1] % 4:
        raise ValueError(f"inputGates {tuple(input_gates.shape)} and hiddenGates {tuple(hidden_gates.shape)} "
                         f"must be (B, 4H) and cx {tuple(cx.shape)} (B, H)")
    gates = input_gates + hidden_gates
    if input_bias is not None and hidden_bias is not None:
        gates = gates + input_bias + hidden_bias
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
    cy = f * cx + i * g
    return o * torch.tanh(cy), cy, torch.cat([i, f, g, o], 1)


def thnn_fused_lstm_cell_backward(grad_hy: Tensor | None, grad_c: Tensor | None, cx: Tensor, cy: Tensor,
                                  storage: Tensor, has_bias: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """aclnnThnnFusedLstmCellBackward (rnn/thnn_fused_lstm_cell_grad/docs): from storage's activated
    gates i, f, g, o (op_kernel/thnn_fused_lstm_cell_grad.h OFFSET_I/F/J/O): grad_c_total =
    gradHy*o*(1 - tanh(cy)^2) + gradC; gradGates = [grad_c_total*g*i(1-i), grad_c_total*cx*f(1-f),
    grad_c_total*i*(1-g^2), gradHy*tanh(cy)*o(1-o)]; gradCx = grad_c_total*f; gradBias = the sum
    of gradGates over the batch when hasBias (else not written). A nullptr gradient is zeros."""
    i, f, g, o = storage.chunk(4, 1)
    zeros = torch.zeros_like(cy)
    dh = zeros if grad_hy is None else grad_hy
    dc = zeros if grad_c is None else grad_c
    tc = torch.tanh(cy)
    total = dh * o * (1 - tc * tc) + dc
    grad_gates = torch.cat([total * g * i * (1 - i), total * cx * f * (1 - f), total * i * (1 - g * g),
                            dh * tc * o * (1 - o)], 1)
    return grad_gates, total * f, grad_gates.sum(0) if has_bias else None


def modulate(self: Tensor, scale: Tensor | None, shift: Tensor | None) -> Tensor:
    """aclnnModulate (vfusion/modulate/docs): self * (1 + scale) + shift over self (B, L, D), scale
    and shift (B, 1, D) or (B, D) (broadcast along L); a nullptr one is left out."""
    if self.dim() != 3:
        raise ValueError(f"self must be (batch, seq, hidden), got {tuple(self.shape)}")

    def along(t: Tensor, name: str) -> Tensor:
        if t.dim() == 2:
            t = t.unsqueeze(1)
        if t.dim() != 3 or t.shape[1] != 1 or t.shape[0] != self.shape[0] or t.shape[2] != self.shape[2]:
            raise ValueError(f"{name} must be (B, 1, D) or (B, D) of self {tuple(self.shape)}, got {tuple(t.shape)}")
        return t
    out = self if scale is None else self * (1 + along(scale, "scaleOptional"))
    return out if shift is None else out + along(shift, "shiftOptional")


def relu_grad_v4(grad: Tensor, mask: Tensor, threshold: float) -> Tensor:
    """aclnnReluGradV4 (experimental/activation/relu_grad_v4/docs): gradOutput where the uint8
    ReLU mask self is not 0, else 0; threshold must be 0 (the only value the op takes)."""
    if threshold != 0:
        raise ValueError(f"threshold must be 0, got {threshold}")
    if tuple(mask.shape) != tuple(grad.shape):
        raise ValueError(f"self shape {tuple(mask.shape)} is not gradOutput's {tuple(grad.shape)}")
    return torch.where(mask != 0, grad, torch.zeros((), dtype=grad.dtype, device=grad.device))


def sync_batch_norm_gather_stats(total_sum: Tensor, total_square_sum: Tensor, sample_count: Tensor,
                                 mean: Tensor, variance: Tensor, momentum: float,
                                 eps: float) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """aclnnSyncBatchNormGatherStats (experimental/norm/sync_batch_norm_gather_stats/docs), in
    float32: n = sum(sampleCount); batchMean = sum(totalSum, 0) / n; batchVar =
    sum(totalSquareSum, 0) / n - batchMean^2; batchInvstd = 1 / sqrt(batchVar + eps); the
    running mean and variance (mean, variance: updated in place) move by momentum towards
    batchMean and batchVar * n / (n - 1). Returns batchMean, batchInvstd, mean, variance."""
    if total_sum.dim() != 2 or tuple(total_square_sum.shape) != tuple(total_sum.shape):
        raise ValueError(f"totalSum {tuple(total_sum.shape)} must be 2-D and totalSquareSum the same shape")
    devices, channels = total_sum.shape
    if tuple(sample_count.shape) != (devices,) or tuple(mean.shape) != (channels,) or \
            tuple(variance.shape) != (channels,):
        raise ValueError(f"sampleCount must be ({devices},), mean and variance ({channels},)")
    n = sample_count.float().sum()
    batch_mean = total_sum.float().sum(0) / n
    batch_var = total_square_sum.float().sum(0) / n - batch_mean * batch_mean
    invstd = torch.rsqrt(batch_var + eps)
    running_mean = mean.float() * (1 - momentum) + momentum * batch_mean
    running_var = variance.float() * (1 - momentum) + momentum * batch_var * n / (n - 1)
    return batch_mean, invstd, running_mean.to(mean.dtype), running_var.to(variance.dtype)


def instance_norm(x: Tensor, gamma: Tensor, beta: Tensor, data_format: str,
                  eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """aclnnInstanceNorm (norm/instance_norm_v3; op_host/op_api/aclnn_instance_norm.cpp): a 4-D x
    in "NCHW" or "NHWC" (a prefix match, as its strncmp), y = (x - E(x)) / sqrt(Var(x) + eps) *
    gamma + beta over each sample's channel plane, Var the biased variance; mean and variance of
    shape (N, C, 1, 1), or (N, 1, 1, C) for NHWC (the source's reshape)."""
    nhwc = data_format.startswith("NHWC")
    if not (nhwc or data_format.startswith("NCHW")):
        raise ValueError(f"dataFormat {data_format!r} is neither NCHW nor NHWC")
    if x.dim() != 4:
        raise ValueError(f"x must be 4-D, got {tuple(x.shape)}")
    channels = x.shape[3] if nhwc else x.shape[1]
    if tuple(gamma.shape) != (channels,) or tuple(beta.shape) != (channels,):
        raise ValueError(f"gamma {tuple(gamma.shape)} and beta {tuple(beta.shape)} must be ({channels},)")
    dims = (1, 2) if nhwc else (2, 3)
    xf = x.float()
    mean = xf.mean(dims, keepdim=True)
    var = xf.var(dims, unbiased=False, keepdim=True)
    shape = (1, 1, 1, channels) if nhwc else (1, channels, 1, 1)
    y = (xf - mean) * torch.rsqrt(var + eps) * gamma.float().reshape(shape) + beta.float().reshape(shape)
    return y.to(x.dtype), mean.to(x.dtype), var.to(x.dtype)


def _pool_size(size: int, k: int, before: int, after: int, stride: int, ceil: bool) -> int:
    """CalculateUpdateDim of experimental/pooling/max_pool_v3/op_host/max_pool_v3_util.h: floor
    (or ceil) of (size + pads - k) / stride + 1; in ceil mode a last window starting past
    size + the leading pad is dropped."""
    out = (size + before + after - k + (stride - 1 if ceil else 0)) // stride + 1
    if ceil and (out - 1) * stride >= size + before:
        out -= 1
    return out


def max_pool_v3(x: Tensor, ksize: list[int], strides: list[int], pads: list[int] | None,
                ceil_mode: int | None) -> Tensor:
    """aclnnMaxPoolV3 (experimental/pooling/max_pool_v3): a 4-D NCHW x; ksize and strides of 4
    ([N, C, H, W]: H and W used), pads [top, bottom, left, right] (nullptr: 0) of -inf (the
    kernel's GetNegInf), ceilMode non-zero for ceil (nullptr: floor). The padded x is cut or
    extended with -inf to the rows and columns the windows cover, then pooled by aten's
    max_pool2d without padding (aten's own ceil rule differs on a window in the trailing pad)."""
    if x.dim() != 4:
        raise ValueError(f"x must be 4-D (NCHW), got {tuple(x.shape)}")
    if len(ksize) != 4 or len(strides) != 4:
        raise ValueError(f"ksize {ksize} and strides {strides} must have 4 elements (N, C, H, W)")
    top, bottom, left, right = (0, 0, 0, 0) if not pads else pads
    if pads and len(pads) != 4:
        raise ValueError(f"pads {pads} must have 4 elements (top, bottom, left, right)")
    kh, kw, sh, sw = ksize[2], ksize[3], strides[2], strides[3]
    if min(kh, kw, sh, sw) <= 0:
        raise ValueError(f"ksize {ksize} and strides {strides} must be > 0 in H and W")
    return _max_pool_padded(x, kh, kw, sh, sw, (top, bottom, left, right), bool(ceil_mode))


def _max_pool_padded(x: Tensor, kh: int, kw: int, sh: int, sw: int, pads: tuple[int, int, int, int],
                     ceil: bool) -> Tensor:
    """Max pooling of NCHW x with -inf pads (top, bottom, left, right) and the sizes of
    _pool_size: x padded, cut or extended to the rows and columns the windows read, then aten's
    max_pool2d without padding (aten's own ceil rule differs on a window in the trailing pad)."""
    top, bottom, left, right = pads
    oh = _pool_size(x.shape[2], kh, top, bottom, sh, ceil)
    ow = _pool_size(x.shape[3], kw, left, right, sw, ceil)
    if oh <= 0 or ow <= 0:
        raise ValueError(f"the output would be {oh} x {ow}")
    covered_h, covered_w = (oh - 1) * sh + kh, (ow - 1) * sw + kw  # rows and columns the windows read
    padded = torch.nn.functional.pad(x, (left, covered_w - x.shape[3] - left, top, covered_h - x.shape[2] - top),
                                     value=float("-inf"))
    return torch.nn.functional.max_pool2d(padded, (kh, kw), (sh, sw))


def max_pool(self: Tensor, kernel_shape: list[int], strides: list[int], auto_pad: int, pads: list[int],
             dilations: list[int], ceil_mode: int) -> Tensor:
    """aclnnMaxPool (pooling/max_pool_v3/op_api/aclnn_max_pool.cpp): ONNX MaxPool of a 3-D (CHW) or
    4-D (NCHW) self: kernelShape of 1 or 2; strides of 0 (1), 1 or 2; pads of 0, 1, 2 (H, W) or 4
    (top, left, bottom, right); autoPad 0 (NOTSET) only; dilations of 1 only; ceilMode non-zero
    for ceil, with PoolingOutShape's rule (a window starting in the trailing pad is dropped)."""
    if self.dim() not in (3, 4):
        raise ValueError(f"self must be 3-D or 4-D, got {tuple(self.shape)}")
    if len(kernel_shape) not in (1, 2) or len(strides) not in (0, 1, 2) or len(pads) not in (0, 1, 2, 4) or \
            len(dilations) not in (0, 1, 2, 4):
        raise ValueError(f"kernelShape {kernel_shape} (1, 2), strides {strides} (0..2), pads {pads} (0, 1, 2, 4) or "
                         f"dilations {dilations} (0, 1, 2, 4): a length is not allowed")
    if auto_pad != 0:
        raise ValueError(f"autoPad {auto_pad}: only 0 (NOTSET) is supported")
    if any(d != 1 for d in dilations):
        raise ValueError(f"dilations {dilations}: only 1 is supported")
    kh, kw = kernel_shape[0], kernel_shape[-1]
    sh, sw = (1, 1) if not strides else (strides[0], strides[-1])
    if len(pads) == 4:
        top, left, bottom, right = pads
    else:
        top = bottom = pads[0] if pads else 0
        left = right = pads[-1] if pads else 0
    if min(kh, kw, sh, sw) <= 0:
        raise ValueError(f"kernelShape {kernel_shape} and strides {strides} must be > 0")
    x = self.unsqueeze(0) if self.dim() == 3 else self
    out = _max_pool_padded(x, kh, kw, sh, sw, (top, bottom, left, right), bool(ceil_mode))
    return out.squeeze(0) if self.dim() == 3 else out
