"""aclnnCrossEntropyLossGrad: checks of the generated aclnn entry point plus tiling (ops.md §3.2).

The entry point is generated from ops-nn loss/cross_entropy_loss_grad/op_host/
cross_entropy_loss_grad_def.cpp: null checks, executor lookup, dtype/format rows, then tiling
(cross_entropy_loss_grad_tiling.cpp on A2/A3, cross_entropy_loss_grad_tiling_arch35.cpp on 950).

A2/A3 validate very little. Where the device accepts a call but its result is undefined
(label smoothing, out-of-bounds shapes), pyaclnn refuses with 161002 and a message starting
"pyaclnn refuses": a deliberate deviation, never a silent wrong answer.
"""
from __future__ import annotations

from typing import NoReturn

import numpy as np

from ..._spec import (FP32_FP16_BF16, TILING_ERROR, TensorMeta, UB_BLOCK, VECTOR_CORES, Workspace, fail,
                      fail_invalid, fail_null, fmt_shape, is_regbase, lib_api_workspace, require_dtype_in,
                      require_not_null, require_same_dtype)
from ...dtypes import DType

OP = "CrossEntropyLossGrad"
API = f"aclnn{OP}GetWorkspaceSize"
REPO = "ops-nn"  # its sources: hicann/ops-nn (9.x: libopapi_nn.so, the op library pyaclnn loads)
# Its header is generated (every tensor const): the op definition traced in shared/reference/ops.md
# names the output, and nnopbase's executors index tensors by their position there.
ROLES = (("out",), "position")  # outputs, index rule (pyaclnn._registry.operators)

__all__ = ["OP", "API", "REPO", "ROLES", "SUPPORTED_SOCS", "REDUCTIONS", "check", "effective_reduction",
           "target_dtypes", "workspace_size"]

SUPPORTED_SOCS = ("Ascend910B", "Ascend910_93", "Ascend950")
REDUCTIONS = ("none", "mean", "sum")


def target_dtypes(soc: str) -> tuple:
    return (DType.INT64, DType.INT32) if is_regbase(soc) else (DType.INT64,)


def _tiling(detail: str) -> NoReturn:
    fail(TILING_ERROR, API, detail)


def _refuse(detail: str) -> NoReturn:
    fail_invalid(API, f"pyaclnn refuses: {detail}")


def _f32(x: float) -> np.float32:
    with np.errstate(over="ignore"):   # the double attribute is narrowed to float
        return np.float32(x)


def effective_reduction(soc: str, reduction: str | None) -> str:
    """The reduction the kernel applies: None -> "mean" (op-def default); on A2/A3 an unknown
    string silently acts as "none" (strcmp chain without else); on 950 it is a tiling error."""
    r = "mean" if reduction is None else reduction
    if r in REDUCTIONS:
        return r
    if is_regbase(soc):
        _tiling(f"reduction {r!r} is not one of none, mean, sum")
    return "none"


def _check_dtypes(soc, grad_loss, log_prob, target, weight, grad_zloss, lse_for_zloss, out):
    # The generated code matches the whole combination against the op-def rows; any mismatch is
    # one 161002. We name the first offending tensor in parameter order.
    require_dtype_in(API, soc, "gradLoss", grad_loss, FP32_FP16_BF16)
    require_same_dtype(API, "logProb", log_prob, "gradLoss", grad_loss)
    require_dtype_in(API, soc, "target", target, target_dtypes(soc))
    if weight is not None:
        require_dtype_in(API, soc, "weight", weight, (DType.FLOAT,))
    for name, t in (("gradZlossOptional", grad_zloss), ("lseForZlossOptional", lse_for_zloss)):
        if t is not None:
            require_same_dtype(API, name, t, "gradLoss", grad_loss)
    require_same_dtype(API, "out", out, "gradLoss", grad_loss)


def _vec(shape) -> tuple:
    return tuple(shape) or (1,)   # arch35 EnsureNotScalar4CELoss: a 0-D shape is read as (1,)


def _check_tiling_950(grad_loss, log_prob, target, weight, reduction, label_smoothing):
    # Order of CrossEntropyLossGradRegbaseTiling::RunTiling: attributes first, then shapes.
    if reduction not in REDUCTIONS:
        _tiling(f"reduction {reduction!r} is not one of none, mean, sum")
    if not 0 <= _f32(label_smoothing) <= 1:
        _tiling(f"labelSmoothing {label_smoothing} not in [0, 1]")
    lp = _vec(log_prob.shape)
    if len(lp) != 2:
        _tiling(f"logProb must be 2-D, got shape {fmt_shape(log_prob.shape)}")
    n, c = lp
    gl = _vec(grad_loss.shape)
    if reduction == "none" and (len(gl) != 1 or gl[0] != n):
        _tiling(f"gradLoss shape {fmt_shape(grad_loss.shape)} must be (N,) = ({n},) "
                f"for reduction 'none'")
    if reduction != "none" and gl != (1,):
        _tiling(f"gradLoss shape {fmt_shape(grad_loss.shape)} must be () or (1,) "
                f"for reduction {reduction!r}")
    tg = _vec(target.shape)
    if len(tg) != 1 or tg[0] != n:
        _tiling(f"target shape {fmt_shape(target.shape)} must be (N,) = ({n},)")
    if weight is not None:
        w = _vec(weight.shape)
        if len(w) != 1 or w[0] != c:
            _tiling(f"weight shape {fmt_shape(weight.shape)} must be (C,) = ({c},)")


def _dim(t: TensorMeta, i: int) -> int | None:
    return t.shape[i] if i < t.ndim else None


def _fmt_dim(d: int | None) -> str:
    return "missing" if d is None else str(d)


def _check_tiling_a2a3(log_prob, target, weight):
    # GetTilingInput compares target.dim0 with logProb.dim0 and weight.dim0 with logProb.dim1.
    # A dim the tensor does not have reads as gert's INT64_MIN sentinel: against a real dim that
    # is a mismatch (561002 on the device too); two missing dims would compare equal and launch a
    # kernel with a nonsense size. We report 561002 whenever a dim the tiling reads is missing,
    # including logProb's dim 1 (C) when there is no weight.
    # The status stays the tiling's; when logProb is not 2-D, that is the likely cause, so say it
    # (a 1-D logProb of one sample reads its C classes as N rows).
    fix = "" if log_prob.ndim == 2 else \
        f"; logProb must be 2-D (N, C), got {fmt_shape(log_prob.shape)}: one sample is shape (1, C)"
    n, n_t = _dim(log_prob, 0), _dim(target, 0)
    if n is None or n_t is None or n != n_t:
        _tiling(f"target dim 0 {_fmt_dim(n_t)} != logProb dim 0 {_fmt_dim(n)} "
                f"(shapes {fmt_shape(target.shape)}, {fmt_shape(log_prob.shape)}){fix}")
    c = _dim(log_prob, 1)
    if weight is not None:
        c_w = _dim(weight, 0)
        if c is None or c_w is None or c != c_w:
            _tiling(f"weight dim 0 {_fmt_dim(c_w)} != logProb dim 1 {_fmt_dim(c)} "
                    f"(shapes {fmt_shape(weight.shape)}, {fmt_shape(log_prob.shape)}){fix}")
    if c is None:
        _tiling(f"logProb shape {fmt_shape(log_prob.shape)} has no dim 1 (C) for the tiling{fix}")


def _refuse_undefined(soc, grad_loss, log_prob, target, weight, reduction, label_smoothing, out):
    """Calls the device accepts without a defined result (ops.md §3.2, §3.3): refused."""
    n, c = log_prob.shape[0], log_prob.shape[1]
    if not is_regbase(soc):   # 950's tiling already enforces these shapes
        if log_prob.ndim != 2:
            _refuse(f"logProb must be 2-D (N, C), got {fmt_shape(log_prob.shape)}; the "
                    f"{soc} kernel does not check it and would only see the first N*C elements")
        for name, t, size in (("target", target, n), ("weight", weight, c)):
            if t is not None and t.ndim != 1:
                _refuse(f"{name} must be 1-D ({size},), got {fmt_shape(t.shape)}; "
                        f"the {soc} kernel does not check it")
        r = effective_reduction(soc, reduction)
        if r == "none" and grad_loss.numel != n:
            _refuse(f"gradLoss numel {grad_loss.numel} != N = {n} for reduction 'none' "
                    f"(shape {fmt_shape(grad_loss.shape)}); the {soc} kernel would read "
                    f"out of bounds")
        if r != "none" and grad_loss.numel < 1:
            _refuse(f"gradLoss is empty (shape {fmt_shape(grad_loss.shape)}); reduction "
                    f"{r!r} reads gradLoss[0]")
    if tuple(out.shape) != tuple(log_prob.shape):
        _refuse(f"out shape {fmt_shape(out.shape)} != logProb shape {fmt_shape(log_prob.shape)}"
                f"; the library does not check it and writes N*C elements regardless")
    if not is_regbase(soc) and _f32(label_smoothing) != 0:
        _refuse(f"labelSmoothing {label_smoothing} != 0 is not implemented on {soc}: the device "
                f"accepts it but returns garbage or hangs (only Ascend950 implements it)")


def check(soc: str, grad_loss: TensorMeta | None, log_prob: TensorMeta | None,
          target: TensorMeta | None, weight: TensorMeta | None, grad_zloss: TensorMeta | None,
          lse_for_zloss: TensorMeta | None, reduction: str | None, ignore_index: int,
          label_smoothing: float, lse_square_scale_for_zloss: float,
          out: TensorMeta | None) -> bool:
    """Raise the library's error for the first failing rule; True means empty (no work).

    ``ignore_index`` is never checked; the zloss inputs and ``lse_square_scale_for_zloss`` are
    accepted and have no effect (doc), apart from the dtype rows of the two tensors.
    """
    # Generated code: NNOPBASE_ASSERT_NOTNULL_RETVAL on the required tensors, in order.
    grad_loss, log_prob, target, out = require_not_null(API, gradLoss=grad_loss, logProb=log_prob,
                                                        target=target, out=out)
    # On an SoC without a binary for this op (910, 310P), NnopbaseGetExecutor finds no regInfo
    # ("binary_info_config.json of socVersion [...] does not support opType [...]") and returns
    # nullptr; the generated code then returns ACLNN_ERR_PARAM_NULLPTR via
    # NNOPBASE_ASSERT_NOTNULL_RETVAL(nnopExecutor). Hence 161001, not 561003 or 161002: that is
    # what the generated-code pattern returns and what device logs of other generated ops show
    # ("errno[161001] ... Check nnopExecutor != nullptr failed"). Not seen for this op itself.
    if soc not in SUPPORTED_SOCS:
        fail_null(API, f"no CrossEntropyLossGrad kernel on {soc} (supported: "
                       f"{', '.join(SUPPORTED_SOCS)}): the executor lookup returns nullptr")
    reduction = "mean" if reduction is None else reduction   # op-def default for a null char*
    _check_dtypes(soc, grad_loss, log_prob, target, weight, grad_zloss, lse_for_zloss, out)
    if is_regbase(soc):
        _check_tiling_950(grad_loss, log_prob, target, weight, reduction, label_smoothing)
    else:
        _check_tiling_a2a3(log_prob, target, weight)
    _refuse_undefined(soc, grad_loss, log_prob, target, weight, reduction, label_smoothing, out)
    return log_prob.is_empty   # N == 0 or C == 0: nothing to compute


def workspace_size(soc: str, grad_loss: TensorMeta, log_prob: TensorMeta, target: TensorMeta,
                   weight: TensorMeta | None, grad_zloss: TensorMeta | None,
                   lse_for_zloss: TensorMeta | None, reduction: str | None, ignore_index: int,
                   label_smoothing: float, lse_square_scale_for_zloss: float, out: TensorMeta) -> Workspace:
    """What phase 1 reports for arguments ``check`` accepted (see pyaclnn._spec, "workspace sizes").

    A generated op: the sum of its tiling's sizes, 0 when its output is empty (N or C 0). The
    tiling (ops-nn loss/cross_entropy_loss_grad/op_host): A2/A3 cross_entropy_loss_grad_tiling.cpp
    Tiling4CrossEntropyLossGrad, CeilAlign(coreNum * 4, 32) + GetLibApiWorkSpaceSize(); 950
    cross_entropy_loss_grad_tiling_arch35.cpp SetTilingData, totalCoreNum * 4 * blockSize +
    SYS_WORKSPACE_SIZE (16 MiB); coreNum and totalCoreNum are GetCoreNumAiv()."""
    if log_prob.is_empty:
        return Workspace(0, False)
    if is_regbase(soc):
        return Workspace(VECTOR_CORES * 4 * UB_BLOCK + (16 << 20), True)
    return Workspace(-(-VECTOR_CORES * 4 // 32) * 32 + lib_api_workspace(soc), True)
