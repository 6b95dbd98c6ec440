"""aclnnGroupNormBackward: checks in the library's order (ops.md §2.2).

Source traced: ops-nn norm/group_norm_grad/op_host/op_api/aclnn_group_norm_backward.cpp
(CheckParams: null -> mask -> dtype -> attributes -> shapes, then the empty-tensor paths).
``workspaceSize``/``executor`` nullptr (step 0) cannot happen from Python and is not modelled.
"""
from __future__ import annotations

from typing import Sequence

from ..._spec import (FP32_FP16, FP32_FP16_BF16, INNER_NULLPTR, Kernel, TensorMeta, Workspace, arch,
                      composite_workspace, dtype_list_v2, fail, fail_invalid, int64, is_regbase,
                      lib_api_workspace, require_dtype_in, require_max_dim, require_not_null,
                      require_same_dtype, require_shape)
from ...dtypes import DType, itemsize

OP = "GroupNormBackward"
API = f"aclnn{OP}GetWorkspaceSize"
REPO = "ops-nn"  # its sources: hicann/ops-nn (9.x: libopapi_nn.so, the op library pyaclnn loads)

__all__ = ["OP", "API", "REPO", "check", "supported_dtypes", "empty_zero_fills", "empty_fills",
           "output_shapes", "workspace_size", "written"]

MAX_C_PER_GROUP = 8000   # A2/A3 only
MAX_C = 240000           # A2/A3 only

# 950 mixed precision: the dtypes mean (and rstd, gamma, dgamma, dbeta) may have, per gradOut dtype.
_MEAN_DTYPES_950 = {DType.FLOAT: (DType.FLOAT,),
                    DType.FLOAT16: (DType.FLOAT, DType.FLOAT16),
                    DType.BF16: (DType.FLOAT, DType.BF16)}


def supported_dtypes(soc: str) -> tuple:
    """GetDtypeSupportListV2: bf16 only on A2/A3 and 950."""
    return dtype_list_v2(soc, FP32_FP16_BF16, FP32_FP16)


def _check_mask(output_mask, grad_input, grad_gamma, grad_beta) -> tuple[bool, bool, bool]:
    # CheckMaskNotNull returns false and CheckParams maps it to 161002 for every case here.
    # Code wins over doc: both the seed doc and the HEAD doc say 161001 for "mask true but output
    # nullptr"; the code has returned ACLNN_ERR_PARAM_INVALID since ops-nn's first commit.
    if output_mask is None:
        fail_invalid(API, "outputMask is nullptr")
    if len(output_mask) != 3:
        fail_invalid(API, f"outputMask length {len(output_mask)} != 3")
    mask = (bool(output_mask[0]), bool(output_mask[1]), bool(output_mask[2]))
    for on, name, t in zip(mask, ("gradInput", "gradGammaOut", "gradBetaOut"),
                           (grad_input, grad_gamma, grad_beta)):
        if on and t is None:
            fail_invalid(API, f"{name} is nullptr but its outputMask entry is true")
    return mask


def _check_dtypes(soc, mask, grad_out, input, mean, rstd, gamma, grad_input, grad_gamma, grad_beta):
    def same(name, t, ref_name, ref, on=True):
        if on and t is not None:   # gamma may be null; masked-off outputs are not checked
            require_same_dtype(API, name, t, ref_name, ref)

    allowed = supported_dtypes(soc)
    require_dtype_in(API, soc, "gradOut", grad_out, allowed)
    if not is_regbase(soc):   # every tensor must have gradOut's dtype
        for name, t in (("input", input), ("mean", mean), ("rstd", rstd), ("gamma", gamma)):
            same(name, t, "gradOut", grad_out)
        same("gradInput", grad_input, "gradOut", grad_out, mask[0])
        same("gradGammaOut", grad_gamma, "gradOut", grad_out, mask[1])
        same("gradBetaOut", grad_beta, "gradOut", grad_out, mask[2])
        return
    # 950 mixed precision: x-side tensors follow gradOut, statistics-side tensors follow mean.
    require_dtype_in(API, soc, "mean", mean, allowed)
    same("input", input, "gradOut", grad_out)
    same("gradInput", grad_input, "gradOut", grad_out, mask[0])
    if grad_out.dtype == DType.FLOAT:
        same("mean", mean, "gradOut", grad_out)
    else:
        require_dtype_in(API, soc, "mean", mean, _MEAN_DTYPES_950[grad_out.dtype],
                         f" with gradOut dtype {DType(grad_out.dtype)}")
    same("rstd", rstd, "mean", mean)
    same("gamma", gamma, "mean", mean)
    same("gradGammaOut", grad_gamma, "mean", mean, mask[1])
    same("gradBetaOut", grad_beta, "mean", mean, mask[2])


def _check_attrs(soc: str, C: int, group: int) -> None:
    if group <= 0:
        fail_invalid(API, f"group must be > 0, got {group}")
    if C % group != 0:   # divisibility: Python's % and C++'s % agree on whether it is 0
        fail_invalid(API, f"C {C} is not divisible by group {group}")
    if arch(soc) == "DAV_2201":   # A2/A3 only; C % group == 0 so // is C++'s exact division
        if C // group > MAX_C_PER_GROUP:
            fail_invalid(API, f"C / group = {C // group} > {MAX_C_PER_GROUP} (limit on {soc})")
        if C > MAX_C:
            fail_invalid(API, f"C {C} > {MAX_C} (limit on {soc})")


def _check_shapes(mask, grad_out, input, mean, rstd, gamma, N, C, HxW, group,
                  grad_input, grad_gamma, grad_beta) -> None:
    require_max_dim(API, "gradOut", grad_out)   # the only rank check
    nchw, ng = int64(N * C * HxW), int64(N * group)   # plain int64 products in the library
    for name, t, want, formula in (("gradOut", grad_out, nchw, "N*C*HxW"),
                                   ("input", input, nchw, "N*C*HxW"),
                                   ("mean", mean, ng, "N*group"),
                                   ("rstd", rstd, ng, "N*group")):
        if t.numel != want:
            fail_invalid(API, f"{name} numel {t.numel} != {formula} = {want} "
                              f"(N={N}, C={C}, HxW={HxW}, group={group})")
    if gamma is not None and gamma.numel != C:
        fail_invalid(API, f"gamma numel {gamma.numel} != C = {C}")
    if mask[0]:
        require_shape(API, "gradInput", grad_input, input.shape, "input shape")
    gamma_shape, what = (gamma.shape, "gamma shape") if gamma is not None else ((C,), "(C,)")
    if mask[1]:
        require_shape(API, "gradGammaOut", grad_gamma, gamma_shape, what)
    if mask[2]:
        require_shape(API, "gradBetaOut", grad_beta, gamma_shape, what)


def empty_zero_fills(soc: str, grad_out: TensorMeta, input: TensorMeta, mean: TensorMeta,
                     rstd: TensorMeta, gamma: TensorMeta | None, C: int | None = None) -> bool:
    """True when a call that ``check`` accepted zero-fills dgamma and dbeta (ops.md §2.2.6).

    Only on 950: when gradOut, input, mean or rstd is empty and gamma (or the ones(C) made for a
    null gamma) is not, a special path writes zeros to *both* gradGammaOut and gradBetaOut,
    whatever the mask says. Pass ``C`` when gamma is None; without it C is assumed > 0, which is
    harmless (zero-filling a (0,) output writes nothing).
    """
    if not is_regbase(soc):
        return False
    if not (grad_out.is_empty or input.is_empty or mean.is_empty or rstd.is_empty):
        return False
    return not gamma.is_empty if gamma is not None else (C is None or C > 0)


def empty_fills(soc: str, grad_out: TensorMeta, input: TensorMeta, mean: TensorMeta, rstd: TensorMeta,
                gamma: TensorMeta | None, *rest: object) -> bool:
    """The C arguments of a call ``check`` found empty -> whether phase 2 still writes
    (``empty_zero_fills``: Ascend950's zeroed dgamma and dbeta)."""
    return empty_zero_fills(soc, grad_out, input, mean, rstd, gamma)


def check(soc: str, grad_out: TensorMeta | None, input: TensorMeta | None,
          mean: TensorMeta | None, rstd: TensorMeta | None, gamma: TensorMeta | None,
          N: int, C: int, HxW: int, group: int, output_mask: Sequence[bool] | None,
          grad_input: TensorMeta | None, grad_gamma: TensorMeta | None,
          grad_beta: TensorMeta | None) -> bool:
    """Raise the library's error for the first failing rule; True means no kernel work.

    On 950 an empty call may still zero-fill dgamma/dbeta: see ``empty_zero_fills``.
    """
    grad_out, input, mean, rstd = require_not_null(API, gradOut=grad_out, input=input, mean=mean,
                                                   rstd=rstd)  # gamma is optional
    mask = _check_mask(output_mask, grad_input, grad_gamma, grad_beta)
    _check_dtypes(soc, mask, grad_out, input, mean, rstd, gamma, grad_input, grad_gamma, grad_beta)
    _check_attrs(soc, C, group)
    _check_shapes(mask, grad_out, input, mean, rstd, gamma, N, C, HxW, group,
                  grad_input, grad_gamma, grad_beta)

    if not is_regbase(soc):
        if grad_out.is_empty or input.is_empty:
            return True   # success, workspace 0, nothing written (dgamma/dbeta NOT zeroed)
    elif grad_out.is_empty or input.is_empty or mean.is_empty or rstd.is_empty:
        if empty_zero_fills(soc, grad_out, input, mean, rstd, gamma, C):
            # The 950 empty path ViewCopies dgamma and dbeta into both outputs regardless of the
            # mask; ViewCopy into a nullptr output returns nullptr -> CHECK_RET 561103 (inferred
            # from the code, not seen on a device).
            for name, t in (("gradGammaOut", grad_gamma), ("gradBetaOut", grad_beta)):
                if t is None:
                    fail(INNER_NULLPTR, API, f"{name} is nullptr, but the Ascend950 empty-tensor "
                                             f"path writes zeros to it regardless of outputMask")
        return True

    # The library never checks the signs of N, C, HxW: C < 0 and HxW < 0 give a positive N*C*HxW
    # that passes every check above, and the kernel then runs on a nonsense (N, C, HxW) view.
    # Deliberate deviation: pyaclnn refuses it instead of producing an undefined result.
    if N < 0 or C < 0 or HxW < 0:
        fail_invalid(API, f"pyaclnn refuses negative N/C/HxW (N={N}, C={C}, HxW={HxW}): the "
                          f"library does not check signs and the device result is undefined")
    return False


def output_shapes(input_shape: Sequence[int], gamma_shape: Sequence[int] | None,
                  C: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Shapes to allocate (gradInput, gradGammaOut, gradBetaOut): input's, gamma's or (C,)."""
    g = tuple(gamma_shape) if gamma_shape is not None else (max(int(C), 0),)
    return tuple(input_shape), g, g


def _group_norm_grad_workspace(soc: str, N: int, C: int, dtype: DType) -> int:
    """The GroupNormGrad kernel's tiling workspace (ops-nn norm/group_norm_grad/op_host).

    A2/A3, group_norm_grad_tiling.cpp CalStage2TilingInfo (uint32 n, c; N > 2 is its
    "deterministic" key): N > 2 -> 2 * (ceil(N/2) * C) * 4 bytes of fp32 partials; N <= 2 ->
    none for fp32, 2 * C * 4 for the cast of fp16/bf16; plus GetLibApiWorkSpaceSize().
    950, group_norm_grad_tiling_arch35.cpp GetWorkspaceSize: 2 * ceil(N/2) * C * 4 (N * C in
    its MODE_3, chosen by UB sizes this model does not have: the smaller is reported) + 16 MiB."""
    if is_regbase(soc):
        return 2 * (-(-N // 2) * C) * 4 + lib_api_workspace(soc)
    n, c = N & 0xFFFFFFFF, C & 0xFFFFFFFF
    if n > 2:
        usr = 2 * ((-(-n // 2) * c) & 0xFFFFFFFF) * 4
    else:
        usr = 0 if dtype == DType.FLOAT else 2 * c * 4
    return usr + lib_api_workspace(soc)


def workspace_size(soc: str, grad_out: TensorMeta, input: TensorMeta, mean: TensorMeta,
                   rstd: TensorMeta, gamma: TensorMeta | None, N: int, C: int, HxW: int, group: int,
                   output_mask: Sequence[bool], grad_input: TensorMeta | None,
                   grad_gamma: TensorMeta | None, grad_beta: TensorMeta | None) -> Workspace:
    """What phase 1 reports for arguments ``check`` accepted (see pyaclnn._spec, "workspace sizes").

    aclnn_group_norm_backward.cpp on A2/A3 and 950: a null gamma is made by a Fill kernel (C
    elements of gradOut's dtype, read by the next kernel); then one GroupNormGrad kernel
    (group_norm_grad.cpp) writes dx (N*C*HxW, gradOut's dtype), dgamma and dbeta (C, gamma's
    dtype): those the mask asks for go to the user's tensors by ViewCopy, the others stay in the
    workspace. 950's empty-tensor path (ComputeGroupNormBackwardEmptyInput) runs it with the empty
    tiling's 16 MiB (group_norm_grad_empty_tiling_arch35.cpp) and keeps dx (empty) in the workspace.
    Fill is TBE except on 950 (arch35 Ascend C, tiling not in the sources: 0 bytes).
    Ascend910 and Ascend310P decompose the op into a dozen l0 kernels (Mul, Div, BNTraining*Grad,
    ReduceSum...), TBE kernels this model does not follow: 0 is reported there, as before."""
    mask = tuple(bool(m) for m in output_mask)
    empty = grad_out.is_empty or input.is_empty
    if arch(soc) not in ("DAV_2201", "DAV_3510") or (empty and not is_regbase(soc)):
        return Workspace(0, False)
    dtype = grad_out.dtype
    param_dtype = gamma.dtype if gamma is not None else dtype
    empty_950 = empty or mean.is_empty or rstd.is_empty
    if (gamma is not None and gamma.is_empty) or (gamma is None and C == 0):
        return Workspace(0, False)   # 950: "gammaContiguous->IsEmpty()" -> 0 (A2/A3: C == 0 is an empty input)
    kernels = []
    if gamma is None:
        kernels.append(Kernel((0,) if is_regbase(soc) else (), ((C * itemsize(dtype), 1),)))
    me = len(kernels)
    if empty_950:   # only reached on 950
        # dx_output (empty) is never read; dgamma and dbeta are ViewCopied out
        kernels.append(Kernel((16 << 20,), ((0, me),)))
        return composite_workspace(kernels)
    sizes = (N * C * HxW * itemsize(dtype), C * itemsize(param_dtype), C * itemsize(param_dtype))
    outputs = tuple((size, me) for size, wanted in zip(sizes, mask) if not wanted)
    kernels.append(Kernel((_group_norm_grad_workspace(soc, N, C, dtype),), outputs))
    return composite_workspace(kernels)


def written(soc: str, grad_out: TensorMeta, input: TensorMeta, mean: TensorMeta, rstd: TensorMeta,
            gamma: TensorMeta | None, N: int, C: int, HxW: int, group: int, output_mask: Sequence[bool],
            grad_input: TensorMeta | None, grad_gamma: TensorMeta | None,
            grad_beta: TensorMeta | None) -> dict:
    """What phase 2 writes of the outputs (pyaclnn._numpy.ops.written): an output the mask does not
    ask for is never written (GroupNormGrad keeps it in the workspace, no ViewCopy to the user's
    tensor: aclnn_group_norm_backward.cpp), except on 950's empty-tensor path, whose ViewCopies fill
    both gradGammaOut and gradBetaOut whatever the mask (``empty_zero_fills``)."""
    mask = tuple(bool(m) for m in output_mask)
    fills = empty_zero_fills(soc, grad_out, input, mean, rstd, gamma, C)
    return {"gradInput": None if mask[0] else 0,
            "gradGammaOut": None if mask[1] or fills else 0,
            "gradBetaOut": None if mask[2] or fills else 0}
