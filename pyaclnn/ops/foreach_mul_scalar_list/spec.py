"""aclnnForeachMulScalarList: y_i = x_i * scalars_i for each tensor of a list (a generated aclnn).

Sources traced (hicann/ops-nn unless named):
- the definition foreach/foreach_mul_scalar_list/op_host/foreach_mul_scalar_list_def.cpp: input x
  DYNAMIC, input scalars a ScalarList (no ``To``), output y DYNAMIC; rows (x, scalars, y) =
  (float16|float32|bf16, float32, same) and (int32, int64, int32); AI Core configs for ascend910b,
  ascend910_93, ascend950 (and two Kirin parts pyaclnn does not emulate);
- the generated aclnn (cannmirror/asc-devkit tools/build/opbuild/op_aclnn_generator.cpp:
  NNOPBASE_ASSERT_NOTNULL_RETVAL on x, scalars, out in parameter order; NnopbaseAddScalarListInput
  with srcIndex -1 and DT_UNDEFINED) over hicann/opbase src/nnopbase:
  individual_op/executor/indv_executor_tensor.cpp NnopbaseExecutorAddDynamicTensors (a list of more
  than NNOPBASE_DYNAMIC_PARAM_DEF_NUM = 256 tensors: 161002), indv_executor_ext.cpp
  NnopbaseExecutorAddScalarListInput (the scalars become one tensor of scalars[0]'s dtype, the
  others converted to it; a DOUBLE scalar is written as float and makes it FLOAT),
  indv_executor.cpp NnopbaseExecutorTilingAndUpdateBinInfo / CheckSocVersionAndParam (a SoC the
  definition has no config for: 561003; else a dtype combination not a row: 161002; a dynamic
  list is matched on its first tensor only, DynamicIoCheck), NnopbaseExecutorMatchCache /
  NnopbaseExecutorDoTiling (every out tensor empty: no tiling, no kernel, workspace 0);
- the tilings, whose refusals are 561002: A2/A3 foreach/foreach_utils/op_host/
  foreach_tiling_func.cpp (MEMBASE_TILING ForeachMulScalarList) -> foreach_tiling_class.h
  ForeachCommonTiling::Init, RunBigScalarKernelTiling, CheckOpInfo (x ranks <= 8, len(scalars) ==
  len(x), each out[i]: present, x's dtype, at least x[i]'s elements; x's dtypes all equal; an out
  list longer than x is not looked at); 950 foreach_regbase_tiling.cpp
  ForeachRegbaseTilingUnaryScalarList2 (1..256 tensors, x's dtypes all equal, ranks <= 8, (x,
  scalars) dtype pair, len(scalars) == len(x), len(out) == len(x), out dtypes, out ranks <= 8,
  out[i] at least x[i]'s elements);
- docs/aclnnForeachMulScalarList.md (status table; the 950 note that DOUBLE scalars are taken).
"""
from __future__ import annotations

from typing import Any, Sequence

from ..._spec import MAX_DIM, TILING_ERROR, TensorMeta, Workspace, fail, fail_invalid, fail_null, fmt_shape, is_regbase
from ...dtypes import DType

OP = "ForeachMulScalarList"
API = f"aclnn{OP}GetWorkspaceSize"
REPO = "ops-nn"  # its sources: hicann/ops-nn (9.x: libopapi_nn.so)
# Its header is generated (every tensor const): the definition names the output y (the header's
# out), and nnopbase's executors index tensors by their position there.
ROLES = (("out",), "position")

__all__ = ["OP", "API", "REPO", "ROLES", "SOCS", "MAX_TENSORS", "check", "scalars_dtype", "workspace_size", "written"]

D = DType
FIND_KERNEL_ERROR = 561003  # ACLNN_ERR_INNER_FIND_KERNEL_ERROR
SOCS = ("Ascend910B", "Ascend910_93", "Ascend950")  # AICore().AddConfig of the definition
MAX_TENSORS = 256           # NNOPBASE_DYNAMIC_PARAM_DEF_NUM (indv_tilingcontext_builder.h)
_ROWS = {D.FLOAT16: D.FLOAT, D.FLOAT: D.FLOAT, D.BF16: D.FLOAT, D.INT32: D.INT64}  # x -> scalars; y = x
WORK_SPACE_SIZE = 32        # foreach_tiling_class.h: "foreach(vector) not need workspace", a fixed reserve


def scalars_dtype(scalars: Sequence[Any]) -> DType:
    """The dtype of the tensor nnopbase makes of the scalar list (NnopbaseExecutorAddScalarListInput):
    scalars[0]'s, the others converted to it; a DOUBLE scalar is stored as float and turns it to
    FLOAT for the rest of the list."""
    dtype = DType(scalars[0].dtype)
    if any(s.dtype == D.DOUBLE for s in scalars):
        return D.FLOAT
    return dtype


def _garbled(scalars: Sequence[Any]) -> bool:
    """A DOUBLE after a scalar of a dtype other than FLOAT/DOUBLE: nnopbase has already written the
    ones before it in scalars[0]'s size, then writes floats behind them, and the tensor it hands on
    says FLOAT: the kernel reads garbage. pyaclnn refuses it."""
    first = DType(scalars[0].dtype)
    return first not in (D.FLOAT, D.DOUBLE) and any(s.dtype == D.DOUBLE for s in scalars)


def check(soc: str, x: Sequence[TensorMeta | None] | None, scalars: Sequence[Any] | None,
          out: Sequence[TensorMeta | None] | None) -> bool:
    """Raise the library's error for the first failing rule; True means every out tensor is empty
    (success: nnopbase skips the tiling and the kernel)."""
    for name, value in (("x", x), ("scalars", scalars), ("out", out)):  # the generated NOTNULL checks
        if value is None:
            fail_null(API, f"{name} is nullptr")
    assert x is not None and scalars is not None and out is not None
    # nnopbase skips a NULL list member (NnopbaseCheckAndSaveTensor) and the tiling then stops
    # counting there: undefined; refused as the generated check words it (as the emulator does)
    for name, lst in (("x", x), ("scalars", scalars), ("out", out)):
        for i, t in enumerate(lst):
            if t is None:
                fail_null(API, f"{name}[{i}] is nullptr")
    for name, lst in (("x", x), ("out", out)):  # NnopbaseExecutorAddDynamicTensors
        if len(lst) > MAX_TENSORS:
            fail_invalid(API, f"Size of tensorList in dynamic {'input' if name == 'x' else 'output'} {name} is "
                              f"{len(lst)}, which exceeds limit: {MAX_TENSORS}")
    xs: list[TensorMeta] = list(x)  # type: ignore[arg-type]
    ys: list[TensorMeta] = list(out)  # type: ignore[arg-type]
    if not xs:  # nnopbase adds no tensor for an empty list: what it matches then is undefined
        fail(TILING_ERROR, API, "x holds no tensor (pyaclnn refuses: an empty dynamic input is undefined)")
    if soc not in SOCS:
        fail(FIND_KERNEL_ERROR, API, f"{OP} has no kernel on {soc} (its definition configures "
                                     f"{', '.join(SOCS)} only)")
    if scalars and _garbled(scalars):
        fail_invalid(API, f"scalars mix {DType(scalars[0].dtype)} (scalars[0]) with double: nnopbase would pack "
                          "them into a float tensor wrongly (pyaclnn refuses)")
    x0 = DType(xs[0].dtype)
    sdt = scalars_dtype(scalars) if scalars else None  # an empty list adds no tensor: left to the tiling
    y0 = DType(ys[0].dtype) if ys else None
    if x0 not in _ROWS or (sdt is not None and sdt != _ROWS[x0]) or (y0 is not None and y0 != x0):
        fail_invalid(API, f"dtype combination (x {x0}, scalars {sdt}, out {y0}) is not in the op definition: "
                          "expected (float16|float32|bfloat16, float32, same as x) or (int32, int64, int32)")
    if ys and all(t.is_empty for t in ys):  # NnopbaseSkipKernelLaunch: no tiling, nothing written
        return True
    if is_regbase(soc):
        _tiling_950(xs, len(scalars), ys, x0)
    else:
        _tiling_a2(xs, len(scalars), ys, x0)
    return False


def _tiling_a2(xs: list[TensorMeta], n_scalars: int, ys: list[TensorMeta], x0: DType) -> None:
    """ForeachCommonTiling::CheckOpInfo (A2/A3), in its order."""
    for i, t in enumerate(xs):  # CheckInputTensorlistShape
        if t.ndim > MAX_DIM:
            fail(TILING_ERROR, API, f"x[{i}] rank {t.ndim} exceeds {MAX_DIM}")
    if n_scalars != len(xs):  # CheckScalarsTenorShapeInfo
        fail(TILING_ERROR, API, f"scalars holds {n_scalars} values, x {len(xs)} tensors: they must be equal")
    for i, t in enumerate(xs):  # CheckOutputShapeAndDtype: out[i] for each x[i] (more outs: not read)
        if i >= len(ys):
            fail(TILING_ERROR, API, f"The output {i} desc is null (out holds {len(ys)} tensors, x {len(xs)})")
        _out_dtype(i, ys[i], x0)
        _out_fits(i, t, ys[i])
    for i, t in enumerate(xs):  # CheckTensorListDtype
        if t.dtype != x0:
            fail(TILING_ERROR, API, f"x[{i}] dtype {DType(t.dtype)} differs from x[0] dtype {x0}")


def _tiling_950(xs: list[TensorMeta], n_scalars: int, ys: list[TensorMeta], x0: DType) -> None:
    """ForeachRegbaseTilingUnaryScalarList2 (950): GetShapeAttrsInfo, CheckScalarList, CheckOutput."""
    for i, t in enumerate(xs):
        if t.dtype != x0:
            fail(TILING_ERROR, API, f"x[{i}] dtype {DType(t.dtype)} differs from x[0] dtype {x0}")
        if t.ndim > MAX_DIM:
            fail(TILING_ERROR, API, f"x[{i}] rank {t.ndim} exceeds {MAX_DIM}")
    if n_scalars != len(xs):
        fail(TILING_ERROR, API, f"scalars holds {n_scalars} values, x {len(xs)} tensors: they must be equal")
    if len(ys) != len(xs):
        fail(TILING_ERROR, API, f"The tensor nums in {{x, y}} must be the same: {len(xs)} and {len(ys)}")
    for i, (t, y) in enumerate(zip(xs, ys)):
        _out_dtype(i, y, x0)
        if y.ndim > MAX_DIM:
            fail(TILING_ERROR, API, f"out[{i}] rank {y.ndim} exceeds {MAX_DIM}")
        _out_fits(i, t, y)


def _out_dtype(i: int, y: TensorMeta, x0: DType) -> None:
    if y.dtype != x0:
        fail(TILING_ERROR, API, f"out[{i}] dtype {DType(y.dtype)} must be the same as x's {x0}")


def _out_fits(i: int, t: TensorMeta, y: TensorMeta) -> None:
    """out[i] may differ in shape but must hold at least x[i]'s elements (the kernel writes flat)."""
    if tuple(t.shape) != tuple(y.shape) and t.numel > y.numel:
        fail(TILING_ERROR, API, f"out[{i}] {fmt_shape(y.shape)} has {y.numel} elements, fewer than x[{i}] "
                                f"{fmt_shape(t.shape)} ({t.numel})")


def workspace_size(soc: str, x: Sequence[TensorMeta], scalars: Sequence[Any], out: Sequence[TensorMeta]) -> Workspace:
    """What phase 1 reports (see pyaclnn._spec, "workspace sizes"): both tilings ask WORK_SPACE_SIZE
    (32 bytes, a reserve the kernel never touches: "foreach(vector) not need workspace", userWS =
    nullptr in op_kernel/foreach_mul_scalar_list.cpp); 0 when every out tensor is empty (no tiling)."""
    if all(t.is_empty for t in out):
        return Workspace(0, False)
    return Workspace(WORK_SPACE_SIZE, False)


def written(soc: str, x: Sequence[TensorMeta], scalars: Sequence[Any], out: Sequence[TensorMeta]) -> dict:
    """What the kernel writes of ``out`` (for a call ``check`` accepted; pyaclnn._numpy.ops.written):
    out[i]'s first numel(x[i]) elements in row-major order (the tilings size each tensor's work
    from x[i], foreach_tiling_class.h tensorDataCountList; the kernel writes flat), the rest of a
    larger out[i] never; on A2/A3 nothing of the out tensors past len(x) (totalTensorCount counts
    x's tensors, CheckOpInfo looks at out[i] for i < len(x) only): stale bytes on a device."""
    return {"out": tuple(x[i].numel if i < len(x) else 0 for i in range(len(out)))}
