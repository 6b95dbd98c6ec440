"""Small compositions of torch operations for the element-wise operators no single aten overload
computes (ew_composed.py, ew_grad.py, ew_reduce.py name them as ``compose:ew.<name>``).

Each takes torch tensors (and plain numbers) in the C parameters' order and returns the result(s);
each uses only tensor operations, so it runs on torch's ``meta`` device too (phase 1's output
rule). The formulas are the op docs' (hicann/ops-math, the file named per function); the shape
checks their op_api sources' CheckShape, raised as RuntimeError (phase 1: 161002 with the
message). Half-precision inputs are computed in float32 and cast back, as the kernels do.
torch is imported inside the functions: loading the table never imports it.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

Tensor = Any  # a torch.Tensor (torch is not imported here)


def _torch() -> Any:
    import torch
    return torch


def _up(t: Tensor) -> Tensor:
    """``t`` in float32 when it is float16 or bfloat16 (the kernels' compute dtype)."""
    torch = _torch()
    return t.float() if t.dtype in (torch.float16, torch.bfloat16) else t


def _same_shape(what: str, **tensors: Tensor) -> None:
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) > 1:
        raise RuntimeError(f"{what}: the shapes must be equal, got " +
                           ", ".join(f"{n} {list(s)}" for n, s in shapes.items()))


def _same_dtype(what: str, **tensors: Tensor) -> None:
    dtypes = {name: t.dtype for name, t in tensors.items()}
    if len(set(dtypes.values())) > 1:
        raise RuntimeError(f"{what}: the dtypes must be equal, got " +
                           ", ".join(f"{n} {d}" for n, d in dtypes.items()))


# -- gradients of unary functions (experimental/math/<op>/README.md or docs) ------------------
def acos_grad(y_grad: Tensor, x: Tensor) -> Tensor:
    """aclnnAcosGrad: x_grad = -y_grad / sqrt(1 - x^2) (acos_grad/op_kernel/arch35/acos_grad.h)."""
    _same_shape("AcosGrad", y_grad=y_grad, x=x)
    _same_dtype("AcosGrad", y_grad=y_grad, x=x)
    xf = _up(x)
    return (-_up(y_grad) / (1 - xf * xf).sqrt()).to(x.dtype)


def acos_grad_v2(y: Tensor, dy: Tensor) -> Tensor:
    """aclnnAcosGradV2: z = -dy / sqrt(1 - y^2), y the forward's input (acos_grad_v2/README.md)."""
    _same_shape("AcosGradV2", y=y, dy=dy)
    _same_dtype("AcosGradV2", y=y, dy=dy)
    yf = _up(y)
    return (-_up(dy) / (1 - yf * yf).sqrt()).to(y.dtype)


def asinh_grad(y: Tensor, dy: Tensor) -> Tensor:
    """aclnnAsinhGrad: z = dy / cosh(y), y the forward's output (asinh_grad/README.md)."""
    _same_shape("AsinhGrad", y=y, dy=dy)
    _same_dtype("AsinhGrad", y=y, dy=dy)
    return (_up(dy) / _up(y).cosh()).to(y.dtype)


def atan_grad(x: Tensor, dy: Tensor) -> Tensor:
    """aclnnAtanGrad: dx = dy / (1 + x^2), x the forward's input (atan_grad/README.md)."""
    _same_shape("AtanGrad", x=x, dy=dy)
    _same_dtype("AtanGrad", x=x, dy=dy)
    xf = _up(x)
    return (_up(dy) * (1 / (xf * xf + 1))).to(x.dtype)


# -- fused element-wise ---------------------------------------------------------------------
def mul_no_nan(x: Tensor, y: Tensor) -> Tensor:
    """aclnnMulNoNan: 0 where y == 0 (whatever x: NaN, inf), else x * y; broadcasts
    (mul_no_nan/README.md)."""
    _same_dtype("MulNoNan", x=x, y=y)
    torch = _torch()
    product = _up(x) * _up(y)
    return torch.where(y == 0, torch.zeros_like(product), product).to(x.dtype)


def approximate_equal(x1: Tensor, x2: Tensor, tolerance: float) -> Tensor:
    """aclnnApproximateEqual: |x1 - x2| < tolerance, same shapes (approximate_equal/README.md)."""
    _same_shape("ApproximateEqual", x1=x1, x2=x2)
    _same_dtype("ApproximateEqual", x1=x1, x2=x2)
    return (_up(x1) - _up(x2)).abs() < tolerance


def add_mat_mat_elements(a: Tensor, b: Tensor, c: Tensor, alpha: float, beta: float) -> Tensor:
    """aclnnAddMatMatElements: cOut = c * beta + alpha * a * b, same shapes and dtypes
    (add_mat_mat_elements/README.md)."""
    _same_shape("AddMatMatElements", a=a, b=b, c=c)
    _same_dtype("AddMatMatElements", a=a, b=b, c=c)
    return (_up(c) * beta + alpha * _up(a) * _up(b)).to(c.dtype)


def add_mat_mat_elements_plus(c: Tensor, a: Tensor, b: Tensor, beta: Tensor, alpha: Tensor) -> Tensor:
    """aclnnAddMatMatElementsPlus: cOut = c * beta + alpha * a * b, beta and alpha one-element
    tensors, a, b, c broadcast (add_mat_mat_elements_plus/op_api/aclnn_add_mat_mat_elements_plus.cpp)."""
    _same_dtype("AddMatMatElementsPlus", c=c, a=a, b=b)
    for name, t in (("beta", beta), ("alpha", alpha)):
        if t.numel() != 1:
            raise RuntimeError(f"AddMatMatElementsPlus: {name} must have one element, got shape {list(t.shape)}")
    return (_up(c) * _up(beta).reshape(()) + _up(alpha).reshape(()) * _up(a) * _up(b)).to(c.dtype)


def fused_mul_add_n(x1: Tensor, x2: Tensor, x3: Tensor) -> Tensor:
    """aclnnFusedMulAddN: y = x1 * x3[0] + x2, x3 one element (fused_mul_add_n/README.md)."""
    _same_shape("FusedMulAddN", x1=x1, x2=x2)
    _same_dtype("FusedMulAddN", x1=x1, x2=x2, x3=x3)
    if x3.numel() != 1:
        raise RuntimeError(f"FusedMulAddN: x3 must have one element, got shape {list(x3.shape)}")
    return (_up(x1) * _up(x3).reshape(()) + _up(x2)).to(x1.dtype)


def add_n(tensors: Sequence[Tensor]) -> Tensor:
    """aclnnAddN: the sum of the list, same shapes and dtypes (math/add_n docs/aclnnAddN.md),
    accumulated in float32 for half-precision inputs, left to right."""
    if not tensors:
        raise RuntimeError("AddN: tensors is empty")
    _same_shape("AddN", **{f"tensors[{i}]": t for i, t in enumerate(tensors)})
    _same_dtype("AddN", **{f"tensors[{i}]": t for i, t in enumerate(tensors)})
    total = _up(tensors[0]).clone()
    for t in tensors[1:]:
        total = total + _up(t)
    return total.to(tensors[0].dtype)


def equal(self: Tensor, other: Tensor) -> Tensor:
    """aclnnEqual: one bool, True when the shapes and every element are equal (NaN is not equal
    to itself), as a tensor of shape [1] (math/tensor_equal/docs/aclnnEqual.md)."""
    torch = _torch()
    if tuple(self.shape) != tuple(other.shape):
        return torch.zeros(1, dtype=torch.bool, device=self.device)
    return (self == other).all().reshape(1)


def atan2_in_place(self_ref: Tensor, other: Tensor) -> tuple[Tensor, Tensor]:
    """aclnnInplaceAtan2: atan2(selfRef, other) for selfRef; ``other`` unchanged (its header
    declares it non-const, so it is written back as it was)."""
    torch = _torch()
    return torch.atan2(self_ref, other), other


def exp_segsum(self: Tensor) -> Tensor:
    """aclnnExpSegsum: out[..., i, j] = exp(sum_{k=j+1..i} self[..., k]) for j <= i, 0 above the
    diagonal; self 3-D or 4-D, out one dimension more (math/segsum/docs/aclnnExpSegsum.md, steps
    1-8: the strictly lower masked cumsum, -inf above the diagonal, exp)."""
    torch = _torch()
    if self.dim() not in (3, 4):
        raise RuntimeError(f"ExpSegsum: self must be 3-D or 4-D, got {self.dim()}-D")
    n = self.shape[-1]
    x = _up(self).unsqueeze(-1).expand(*self.shape, n)
    ones = torch.ones(n, n, dtype=torch.bool, device=self.device)
    s = x.masked_fill(torch.triu(ones), 0).cumsum(-2)
    return s.masked_fill(torch.triu(ones, 1), -math.inf).exp().to(self.dtype)


def exp_segsum_backward(grad_output: Tensor, grad_self: Tensor) -> Tensor:
    """aclnnExpSegsumBackward: the gradient of ExpSegsum's input from its output ``grad_self``
    and ``grad_output`` (math/exp_segsum_grad/docs/aclnnExpSegsumBackward.md, steps 1-9)."""
    torch = _torch()
    _same_shape("ExpSegsumBackward", gradOutput=grad_output, gradSelf=grad_self)
    if grad_output.dim() not in (4, 5):
        raise RuntimeError(f"ExpSegsumBackward: gradOutput must be 4-D or 5-D, got {grad_output.dim()}-D")
    n = grad_output.shape[-1]
    ones = torch.ones(n, n, dtype=torch.bool, device=grad_output.device)
    upper = torch.triu(ones)
    m = (_up(grad_output) * _up(grad_self)).masked_fill(upper, 0)
    c = m.flip(-2).cumsum(-2).flip(-2).masked_fill(upper, 0)
    return c.sum(-1).to(grad_output.dtype)


def grouped_bias_add_grad(grad_y: Tensor, group_idx: Tensor | None, group_idx_type: int = 0) -> Tensor:
    """aclnnGroupedBiasAddGrad(V2): per group, the sum of gradY's rows; the groups are gradY's
    first dimension (3-D gradY, no groupIdx), or row ranges of a 2-D gradY that groupIdx gives
    as ends (groupIdxType 0) or sizes (1) (math/grouped_bias_add_grad/docs/aclnnGroupedBiasAddGradV2.md).
    Summed in float32 for half-precision inputs."""
    torch = _torch()
    if group_idx is None:
        if grad_y.dim() != 3:
            raise RuntimeError(f"GroupedBiasAddGrad: gradY must be 3-D without groupIdx, got {grad_y.dim()}-D")
        return _up(grad_y).sum(1).to(grad_y.dtype)
    if grad_y.dim() != 2 or group_idx.dim() != 1:
        raise RuntimeError(f"GroupedBiasAddGrad: gradY must be 2-D and groupIdx 1-D, got {grad_y.dim()}-D, "
                           f"{group_idx.dim()}-D")
    if group_idx_type not in (0, 1):
        raise RuntimeError(f"GroupedBiasAddGrad: groupIdxType must be 0 or 1, got {group_idx_type}")
    ends = group_idx.to(torch.int64)
    if group_idx_type == 1:
        ends = ends.cumsum(0)
    starts = torch.cat([ends.new_zeros(1), ends[:-1]])
    rows = torch.arange(grad_y.shape[0], device=grad_y.device)
    member = (rows >= starts[:, None]) & (rows < ends[:, None])  # (G, rows)
    return (member.to(torch.float64 if grad_y.dtype == torch.float64 else torch.float32) @ _up(grad_y)
            ).to(grad_y.dtype)


# -- reductions with ONNX's empty-axes rule -----------------------------------------------------
def _axes(x: Tensor, axes: Sequence[int], noop: bool) -> list[int] | None:
    """The dims to reduce (None: none at all, the input as it is)."""
    if not axes:
        return None if noop else list(range(x.dim()))
    if len(set(a % max(x.dim(), 1) for a in axes)) != len(axes):
        raise RuntimeError(f"the axes {list(axes)} repeat a dimension")
    return list(axes)


def max_v2(self: Tensor, dims: Sequence[int], keep_dims: bool, noop_with_empty_dims: bool) -> Tensor:
    """aclnnMaxV2: the max over ``dims``; empty dims reduce everything, or nothing when
    noopWithEmptyDims (math/reduce_max/docs/aclnnMaxV2.md)."""
    axes = _axes(self, dims, noop_with_empty_dims)
    if axes is None:
        return self.clone()
    if self.dim() == 0:
        return self.clone()
    return self.amax(axes, keep_dims)


def reduce_log_sum(data: Tensor, axes: Sequence[int], keep_dims: bool, noop_with_empty_axes: bool) -> Tensor:
    """aclnnReduceLogSum: log(sum over ``axes``); empty axes reduce everything, or nothing
    (the input as it is) when noopWithEmptyAxes (math/reduce_log_sum/docs/aclnnReduceLogSum.md)."""
    dims = _axes(data, axes, noop_with_empty_axes)
    if dims is None:
        return data.clone()
    x = _up(data)
    return (x.sum(dims, keepdim=keep_dims) if data.dim() else x).log().to(data.dtype)


def div_v3(self: Tensor, other: Tensor, mode: int) -> Tensor:
    """aclnnDivV3: self / other in float32, then (mode 1) truncated or (mode 2) floored, cast back
    to the inputs' promoted dtype, integers too (experimental/math/div_v3/README.md: int32 and
    int16 go Cast -> float32 -> Div+mode -> Cast)."""
    torch = _torch()
    if mode not in (0, 1, 2):
        raise RuntimeError(f"DivV3: mode must be 0 (RealDiv), 1 (TruncDiv) or 2 (FloorDiv), got {mode}")
    dtype = torch.promote_types(self.dtype, other.dtype)
    q = self.float() / other.float()
    q = q.trunc() if mode == 1 else q.floor() if mode == 2 else q
    return q.to(dtype)


def frac(x: Tensor) -> Tensor:
    """aclnnFrac: x - trunc(x); an integer's is 0 (math/sub/op_api/aclnn_frac.cpp takes integers,
    torch's frac has no integer kernel)."""
    return x.frac() if x.is_floating_point() else x - x
