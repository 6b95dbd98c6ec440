"""Small compositions of torch calls for ops-nn operators that no single aten overload computes
(the table names them ``"compose:nn.<function>"``).

Each function is the operator's documented formula (docs/aclnn<Op>.md of hicann/ops-nn, cited
per function), written with torch's public calls so that it runs on the meta device too (phase 1
takes the output shapes and dtypes from it). fp16 and bf16 inputs are computed in float32, as
the device's kernels do, and the results returned in the input's dtype. Imported only when such
an operator first runs (torch is imported by then).
"""
from __future__ import annotations

from typing import Any

import torch

F = torch.nn.functional
_HALF = (torch.float16, torch.bfloat16)


def _up(t: Any) -> Any:
    return t.float() if t is not None and t.dtype in _HALF else t


def _approximate(value: int) -> str:
    if value not in (0, 1):
        raise ValueError(f"approximate = {value} is not 0 (none) or 1 (tanh)")
    return "tanh" if value == 1 else "none"


def fast_gelu(x: Any) -> Any:
    """aclnnFastGelu: x / (1 + exp(-1.702 x)) (activation/fast_gelu/docs/aclnnFastGelu.md)."""
    xf = _up(x)
    return (xf / (1 + torch.exp(-1.702 * xf))).to(x.dtype)


def fast_gelu_backward(dy: Any, x: Any) -> Any:
    """aclnnFastGeluBackward: dy * ((s - 1) * -1.702 x + 1) * s, s = 1 / (exp(-1.702 x) + 1)
    (activation/fast_gelu_grad/docs/aclnnFastGeluBackward.md)."""
    xf = _up(x)
    s = 1 / (torch.exp(-1.702 * xf) + 1)
    return (_up(dy) * ((s - 1) * (-1.702 * xf) + 1) * s).to(torch.promote_types(dy.dtype, x.dtype))


def fast_gelu_v2(x: Any) -> Any:
    """aclnnFastGeluV2: x * (sgn(x) * (-0.1444 * (min(|0.7071 x|, 1.769) - 1.769)^2 + 0.5) + 0.5),
    sgn(x) = (x + 1e-12) / |x + 1e-12| (experimental/activation/fast_gelu_v2/docs/aclnnFastGeluV2.md)."""
    xf = _up(x)
    sgn = (xf + 1e-12) / torch.abs(xf + 1e-12)
    poly = -0.1444 * (torch.clamp(torch.abs(0.7071 * xf), max=1.769) - 1.769) ** 2 + 0.5
    return (xf * (sgn * poly + 0.5)).to(x.dtype)


def fused_bias_leaky_relu(x: Any, bias: Any, negative_slope: float, scale: float) -> Any:
    """aclnnFusedBiasLeakyRelu: y = (x + bias) * scale, times negative_slope where x + bias < 0
    (experimental/activation/fused_bias_leaky_relu/docs/aclnnFusedBiasLeakyRelu.md)."""
    if tuple(x.shape) != tuple(bias.shape):
        raise ValueError(f"bias shape {tuple(bias.shape)} must equal x's {tuple(x.shape)} (no broadcast)")
    s = _up(x) + _up(bias)
    return (torch.where(s >= 0, s, s * negative_slope) * scale).to(x.dtype)


def ge_glu(x: Any, dim: int, approximate: int, activate_left: bool = False) -> tuple[Any, Any]:
    """aclnnGeGlu(V3): the halves A, B of x along dim; out = A * gelu(B), or gelu(A) * B when
    activate_left; outGelu the gelu half (activation/ge_glu_v2/docs/aclnnGeGlu.md, aclnnGeGluV3.md)."""
    if x.shape[dim] % 2:
        raise ValueError(f"x's dim {dim} has odd size {x.shape[dim]}")
    a, b = _up(x).chunk(2, dim)
    if activate_left:
        a, b = b, a
    g = F.gelu(b, approximate=_approximate(approximate))
    return (a * g).to(x.dtype), g.to(x.dtype)


def ge_glu_v3(x: Any, dim: int, approximate: int, activate_left: bool) -> tuple[Any, Any]:
    return ge_glu(x, dim, approximate, activate_left)


def ge_glu_backward(dy: Any, x: Any, gelu: Any, dim: int, approximate: int, activate_left: bool = False) -> Any:
    """aclnnGeGluBackward(V3): the gradient of ge_glu: d(other half) = dy * gelu (the forward's
    outGelu, as given), d(gelu half) = gelu'(half) * dy * other half
    (activation/ge_glu_grad_v2/docs/aclnnGeGluBackward.md)."""
    a, b = _up(x).chunk(2, dim)
    if activate_left:
        a, b = b, a
    dyf = _up(dy)
    da = dyf * _up(gelu)
    db = torch.ops.aten.gelu_backward(dyf * a, b, approximate=_approximate(approximate))
    parts = (db, da) if activate_left else (da, db)
    return torch.cat(parts, dim).to(x.dtype)


def ge_glu_v3_backward(dy: Any, x: Any, gelu: Any, dim: int, approximate: int, activate_left: bool) -> Any:
    return ge_glu_backward(dy, x, gelu, dim, approximate, activate_left)


def gemm(a: Any, b: Any, c: Any, alpha: float, beta: float, trans_a: int, trans_b: int) -> Any:
    """aclnnGemm: alpha * op(A) @ op(B) + beta * C, op a transpose where trans is non-zero
    (matmul/gemm/docs/aclnnGemm.md)."""
    return torch.addmm(c, a.t() if trans_a else a, b.t() if trans_b else b, beta=beta, alpha=alpha)


def conv_depthwise2d(x: Any, weight: Any, kernel_size: list[int], bias: Any, stride: list[int],
                     padding: list[int], dilation: list[int]) -> Any:
    """aclnnConvDepthwise2d: a convolution with one group per input channel; kernelSize is
    weight's (H, W) (conv/convolution_forward/docs/aclnnConvDepthwise2d.md)."""
    if list(kernel_size) != list(weight.shape[2:]):
        raise ValueError(f"kernelSize {list(kernel_size)} must be weight's H, W {list(weight.shape[2:])}")
    return F.conv2d(x, weight, bias, stride, padding, dilation, groups=x.shape[1])


def add_rms_norm(x1: Any, x2: Any, gamma: Any, epsilon: float) -> tuple[Any, Any, Any]:
    """aclnnAddRmsNorm: x = x1 + x2; rstd = 1 / sqrt(mean(x^2) + eps) over gamma's dims (the last
    ones); y = x * rstd * gamma (norm/add_rms_norm/docs/aclnnAddRmsNorm.md). rstd float32,
    with those dims kept as 1."""
    x = _up(x1) + _up(x2)
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    rstd = torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + epsilon)
    y = x * rstd * _up(gamma)
    return y.to(x1.dtype), rstd, x.to(x1.dtype)


def group_norm_silu(x: Any, gamma: Any, beta: Any, group: int, eps: float, activate_silu: bool = True
                    ) -> tuple[Any, Any, Any]:
    """aclnnGroupNormSilu(V2): group norm over (C / group) * HxW, then SiLU (when activate_silu);
    mean and rstd (N, group) (norm/group_norm_silu/docs/aclnnGroupNormSilu.md)."""
    n, c = x.shape[0], x.shape[1]
    hxw = x.numel() // (n * c) if n * c else 1
    out, mean, rstd = torch.ops.aten.native_group_norm(_up(x), _up(gamma), _up(beta), n, c, hxw, group, eps)
    if activate_silu:
        out = F.silu(out)
    stats = gamma.dtype if gamma is not None else x.dtype
    return out.to(x.dtype), mean.to(stats), rstd.to(stats)


def group_norm_silu_v2(x: Any, gamma: Any, beta: Any, group: int, eps: float, activate_silu: bool
                       ) -> tuple[Any, Any, Any]:
    return group_norm_silu(x, gamma, beta, group, eps, activate_silu)


def _channels(x: Any) -> tuple[int, ...]:
    return (0,) + tuple(range(2, x.dim()))


def _per_channel(v: Any, x: Any) -> Any:
    return v.reshape((1, -1) + (1,) * (x.dim() - 2))


def batch_norm(x: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, training: bool, momentum: float,
               eps: float) -> tuple[Any, Any, Any, Any, Any]:
    """aclnnBatchNorm: aten's batch norm; the running statistics (when given) returned updated
    (training: momentum, unbiased variance) for the device's in-place outputs runningMean and
    runningVar (norm/batch_norm_v3/docs/aclnnBatchNorm.md)."""
    if running_mean is None or running_var is None:
        out, mean, invstd = torch.ops.aten.native_batch_norm(x, weight, bias, running_mean, running_var, training,
                                                             momentum, eps)
        return out, mean, invstd, None, None
    return torch.ops.aten._native_batch_norm_legit_functional(x, weight, bias, running_mean, running_var, training,
                                                              momentum, eps)


def index_copy(x: Any, dim: int, index: Any, source: Any) -> tuple[Any, Any]:
    """aclnnIndexCopy: x with source's slices at index along dim, for outRef; x itself for selfRef,
    which the header declares an output and the source never writes (it copies self first:
    index/scatter_update/op_api/aclnn_index_copy.cpp)."""
    return torch.index_copy(x, dim, index.long(), source), x


def batch_norm_elemt(x: Any, weight: Any, bias: Any, mean: Any, invstd: Any, eps: float) -> tuple[Any, Any, Any]:
    """aclnnBatchNormElemt: (x - mean) * invstd * weight + bias per channel (dim 1); eps unused,
    invstd given (norm/batch_norm_elemt/docs/aclnnBatchNormElemt.md). mean and invstd (declared
    outputs, only read) are returned as they are."""
    y = (_up(x) - _per_channel(_up(mean), x)) * _per_channel(_up(invstd), x)
    if weight is not None:
        y = y * _per_channel(_up(weight), x)
    if bias is not None:
        y = y + _per_channel(_up(bias), x)
    return y.to(x.dtype), mean, invstd


def batch_norm_elemt_backward(dy: Any, x: Any, mean: Any, invstd: Any, weight: Any, sum_dy: Any,
                              sum_dy_xmu: Any, counter: Any) -> tuple[Any, Any]:
    """aclnnBatchNormElemtBackward: ((dy - sumDy / n) - (x - mean) * invstd^2 * sumDyXmu / n)
    * invstd * weight, n the sum of counter
    (norm/sync_batch_norm_backward_elemt/docs/aclnnBatchNormElemtBackward.md). counter (a declared
    output, only read) is returned as it is."""
    n = _up(counter).sum().to(torch.float32)
    istd = _per_channel(_up(invstd), x)
    g = (_up(dy) - _per_channel(_up(sum_dy), x) / n) \
        - (_up(x) - _per_channel(_up(mean), x)) * istd * istd * _per_channel(_up(sum_dy_xmu), x) / n
    g = g * istd
    if weight is not None:
        g = g * _per_channel(_up(weight), x)
    return g.to(x.dtype), counter


def batch_norm_reduce(x: Any) -> tuple[Any, Any]:
    """aclnnBatchNormReduce: per channel sum and sum of squares of x (NCHW), float32
    (norm/bn_training_reduce/docs/aclnnBatchNormReduce.md)."""
    xf = x.float()
    return xf.sum(_channels(x)), (xf * xf).sum(_channels(x))


def batch_norm_reduce_backward(dy: Any, x: Any, mean: Any, invstd: Any, weight: Any, input_g: bool,
                               weight_g: bool, bias_g: bool) -> tuple[Any, Any, Any, Any]:
    """aclnnBatchNormReduceBackward: sumDy = sum(dy), sumDyXmu = sum(dy * (x - mean)) per
    channel; gradWeight = sumDyXmu * invstd; gradBias = sumDy; each only where its flag is true
    (norm/sync_batch_norm_backward_reduce/docs/aclnnBatchNormReduceBackward.md)."""
    dyf = _up(dy)
    sum_dy = dyf.sum(_channels(x))
    sum_dy_xmu = (dyf * (_up(x) - _per_channel(_up(mean), x))).sum(_channels(x))
    dt = dy.dtype
    return (sum_dy.to(dt) if input_g else None, sum_dy_xmu.to(dt) if input_g else None,
            (sum_dy_xmu * _up(invstd)).to(dt) if weight_g else None, sum_dy.to(dt) if bias_g else None)


def _bce_logits_parts(x: Any, y: Any, weight: Any, pos_weight: Any) -> tuple[Any, Any, Any, Any]:
    xf, yf = _up(x), _up(y)
    w = torch.ones_like(xf) if weight is None else _up(weight)
    p = torch.ones_like(xf) if pos_weight is None else _up(pos_weight)
    return xf, yf, w, p


def _reduce_grad(g: Any, dy: Any, reduction: int, numel: int) -> Any:
    g = g * _up(dy)
    return g / numel if reduction == 1 else g


def bce_with_logits_backward(dy: Any, x: Any, y: Any, weight: Any, pos_weight: Any, reduction: int) -> Any:
    """aclnnBinaryCrossEntropyWithLogitsBackward: d/dx of -w (p y log s(x) + (1 - y) log(1 - s(x))):
    w ((p y + 1 - y) s(x) - p y), times dy, over numel for mean
    (loss/sigmoid_cross_entropy_with_logits_grad_v2/docs/aclnnBinaryCrossEntropyWithLogitsBackward.md)."""
    xf, yf, w, p = _bce_logits_parts(x, y, weight, pos_weight)
    g = w * ((p * yf + 1 - yf) * torch.sigmoid(xf) - p * yf)
    return _reduce_grad(g, dy, reduction, x.numel()).to(x.dtype)


def bce_with_logits_target_backward(dy: Any, x: Any, y: Any, weight: Any, pos_weight: Any, reduction: int) -> Any:
    """aclnnBinaryCrossEntropyWithLogitsTargetBackward: d/dy of the same loss,
    -w (p log s(x) - log(1 - s(x))) = -w (p logsigmoid(x) - logsigmoid(-x)), times dy, over numel
    for mean
    (activation/log_sigmoid/docs/aclnnBinaryCrossEntropyWithLogitsTargetBackward.md)."""
    xf, _, w, p = _bce_logits_parts(x, y, weight, pos_weight)
    g = -w * (p * F.logsigmoid(xf) - F.logsigmoid(-xf))
    return _reduce_grad(g, dy, reduction, x.numel()).to(x.dtype)


def foreach_add_list(x1: list[Any], x2: list[Any], alpha: Any) -> Any:
    """aclnnForeachAddList: x1_i + alpha * x2_i, alpha a one-element tensor
    (foreach/foreach_add_list/docs/aclnnForeachAddList.md)."""
    return torch._foreach_add(x1, x2, alpha=alpha.reshape(-1)[0].item())


def foreach_addcdiv_scalar(x1: list[Any], x2: list[Any], x3: list[Any], scalar: Any) -> Any:
    """aclnnForeachAddcdivScalar: x1_i + scalar * x2_i / x3_i, scalar a one-element tensor
    (foreach/foreach_addcdiv_scalar/docs/aclnnForeachAddcdivScalar.md)."""
    return torch._foreach_addcdiv(x1, x2, x3, value=scalar.reshape(-1)[0].item())


def apply_gradient_descent(var: Any, alpha: Any, delta: Any) -> Any:
    """aclnnApplyGradientDescent: var - alpha * delta, in float32
    (experimental/optim/apply_gradient_descent/docs/aclnnApplyGradientDescent.md)."""
    if tuple(var.shape) != tuple(delta.shape) or alpha.numel() != 1:
        raise ValueError(f"delta must have var's shape {tuple(var.shape)} and alpha one element")
    return (_up(var) - _up(alpha).reshape(()) * _up(delta)).to(var.dtype)


def apply_adam_w(var: Any, m: Any, v: Any, beta1_power: Any, beta2_power: Any, lr: Any, weight_decay: Any,
                 beta1: Any, beta2: Any, eps: Any, grad: Any, max_grad_norm: Any, amsgrad: bool,
                 maximize: bool) -> tuple[Any, Any, Any]:
    """aclnnApplyAdamW (optim/apply_adam_w/docs/aclnnApplyAdamW.md), the hyper-parameters
    one-element tensors, beta1Power and beta2Power beta^(t-1): g = -grad under maximize;
    m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2, then max(maxGradNorm, v) under amsgrad (kept
    in v); var - lr m / (1 - beta1Power b1) / (sqrt(v / (1 - beta2Power b2)) + eps) - lr wd var."""
    s = [_up(t).reshape(()) for t in (beta1_power, beta2_power, lr, weight_decay, beta1, beta2, eps)]
    p1, p2, eta, wd, b1, b2, e = s
    g = -_up(grad) if maximize else _up(grad)
    m_t = b1 * _up(m) + (1 - b1) * g
    v_t = b2 * _up(v) + (1 - b2) * g * g
    if amsgrad:
        if max_grad_norm is None:
            raise ValueError("maxGradNormOptional is required when amsgrad is true")
        v_t = torch.maximum(_up(max_grad_norm), v_t)
    m_hat = m_t / (1 - p1 * b1)
    v_hat = v_t / (1 - p2 * b2)
    x = _up(var)
    var_t = x - eta * m_hat / (torch.sqrt(v_hat) + e) - eta * wd * x
    return var_t.to(var.dtype), m_t.to(m.dtype), v_t.to(v.dtype)


def apply_adam_w_v2(var: Any, m: Any, v: Any, max_grad_norm: Any, grad: Any, step: Any, lr: float, beta1: float,
                    beta2: float, weight_decay: float, eps: float, amsgrad: bool, maximize: bool
                    ) -> tuple[Any, Any, Any, Any]:
    """aclnnApplyAdamWV2 (optim/apply_adam_w_v2/docs/aclnnApplyAdamWV2.md): aten's fused AdamW on
    one tensor (its formula; step is t); maxGradNormOptionalRef gets max(itself, v) under amsgrad."""
    maxs = [max_grad_norm] if max_grad_norm is not None else []
    out = torch.ops.aten._fused_adamw([var], [grad], [m], [v], maxs, [step.reshape(()).float()], lr=lr, beta1=beta1,
                                      beta2=beta2, weight_decay=weight_decay, eps=eps, amsgrad=amsgrad,
                                      maximize=maximize)
    new_max = out[4][0] if maxs else None
    return out[0][0], out[2][0], out[3][0], new_max


def ascend_anti_quant(x: Any, scale: Any, offset: Any, dst_type: int, sqrt_mode: bool) -> Any:
    """aclnnAscendAntiQuant: (x + offset) * scale (* scale again under sqrtMode), in float32, cast to
    y's dtype (quant/ascend_anti_quant_v2/docs/aclnnAscendAntiQuant.md)."""
    y = x.float()
    if offset is not None:
        y = y + offset.float()
    s = scale.float()
    return y * s * s if sqrt_mode else y * s


def apply_adam_d(var: Any, m: Any, v: Any, beta1_power: Any, beta2_power: Any, lr: Any, beta1: Any, beta2: Any,
                 epsilon: Any, grad: Any, use_nesterov: bool) -> tuple[Any, Any, Any]:
    """aclnnApplyAdamD, TensorFlow's ApplyAdam (experimental/optim/apply_adam_d/docs/aclnnApplyAdamD.md):
    lr' = lr sqrt(1 - beta2Power) / (1 - beta1Power); m, v the moments; var - lr' m / (eps + sqrt(v)),
    m replaced by m beta1 + (1 - beta1) grad under useNesterov. The hyper-parameters one-element tensors."""
    p1, p2, eta, b1, b2, e = [_up(t).reshape(()) for t in (beta1_power, beta2_power, lr, beta1, beta2, epsilon)]
    g = _up(grad)
    m_t = b1 * _up(m) + (1 - b1) * g
    v_t = b2 * _up(v) + (1 - b2) * g * g
    step = eta * torch.sqrt(1 - p2) / (1 - p1)
    num = m_t * b1 + (1 - b1) * g if use_nesterov else m_t
    var_t = _up(var) - step * num / (e + torch.sqrt(v_t))
    return var_t.to(var.dtype), m_t.to(m.dtype), v_t.to(v.dtype)


def ada_layer_norm(x: Any, scale: Any, shift: Any, weight: Any, bias: Any, epsilon: float) -> Any:
    """aclnnAdaLayerNorm: layer_norm(x over H) * (1 + scale) + shift, scale and shift [B..., H] or
    [B..., 1, H] for x [B..., S, H] (norm/ada_layer_norm/docs/aclnnAdaLayerNorm.md)."""
    return ada_layer_norm_v2(x, scale, shift, weight, bias, epsilon)[0]


def ada_layer_norm_v2(x: Any, scale: Any, shift: Any, weight: Any, bias: Any, epsilon: float
                      ) -> tuple[Any, Any, Any]:
    """aclnnAdaLayerNormV2: AdaLayerNorm, with the mean and rstd [B..., S, 1] in x's dtype
    (norm/ada_layer_norm_v2/docs/aclnnAdaLayerNormV2.md)."""
    xf = _up(x)
    y, mean, rstd = torch.ops.aten.native_layer_norm(xf, [x.shape[-1]], _up(weight), _up(bias), epsilon)

    def per_batch(t: Any) -> Any:
        t = _up(t)
        return t.unsqueeze(-2) if t.dim() == x.dim() - 1 else t
    out = y * (1 + per_batch(scale)) + per_batch(shift)
    return out.to(x.dtype), mean.to(x.dtype), rstd.to(x.dtype)



def add_relu(x: Any, other: Any, alpha: Any) -> Any:
    """aclnnAddRelu / aclnnInplaceAddRelu: relu(x + alpha * other) in the promoted dtype (aten's
    _add_relu has no fp16, bf16 nor uint8 CPU kernel; hicann/ops-nn activation/relu/op_api/aclnn_add_relu.cpp
    takes them)."""
    return torch.clamp_min(torch.add(x, other, alpha=alpha), 0)
