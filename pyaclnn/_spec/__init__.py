"""What the backend-neutral operator specs are made of: the real library's checks, in its order,
with its codes.

Each operator's spec is pyaclnn/ops/<op>/spec.py (see pyaclnn.ops) and exposes::

    OP: str                       # the operator's CANN name (aclnn<OP>)
    API: str                      # the phase-1 C function, used in error messages
    def check(soc, ...) -> bool   # raises the library's error; True means "empty: no work"

Tensors are described by ``TensorMeta`` (or ``None`` for a C nullptr). The NumPy backend runs
``check`` before computing; the acl backend lets the real library judge. Semantics and order
follow shared/reference/ops.md, which was traced from the real op sources.
"""
from __future__ import annotations

import struct
from typing import Any, NamedTuple, NoReturn, Sequence

import numpy as np

from ..dtypes import DType
from ..errors import AclnnParamInvalidError, AclnnParamNullptrError, from_status

__all__ = ["TensorMeta", "ARCH", "arch", "is_regbase", "numel", "broadcast_shapes",
           "fail_null", "fail_invalid", "fail", "require_not_null", "fmt_shape", "MAX_DIM",
           "FP32_FP16", "FP32_FP16_BF16", "dtype_list_v2", "fmt_dtypes", "int64",
           "require_dtype_in", "require_same_dtype", "require_max_dim", "require_shape",
           "shape_of", "INNER_NULLPTR", "TILING_ERROR", "VECTOR_CORES", "UB_BLOCK", "lib_api_workspace",
           "Workspace", "Kernel", "composite_workspace", "value_key"]

MAX_DIM = 8
_DOUBLE = struct.Struct("<d").pack  # a float's 8 bytes: an exact key (value_key)


class TensorMeta(NamedTuple):
    """What a check needs to know about an aclTensor: view shape, dtype, strides (elements)."""
    shape: tuple[int, ...]
    dtype: DType
    strides: tuple[int, ...] | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return numel(self.shape)

    @property
    def is_empty(self) -> bool:
        return 0 in self.shape


def value_key(value: Any) -> Any:
    """A C argument's value as a cache key for the rules that read it: each plain value with its
    type (1, 1.0 and True are three keys), a float by its bits (0.0 and -0.0 are two: alpha=-0.0
    computes another sign; so are NaN and -NaN: torch.sub(x, y, alpha=-nan) gives NaNs of the
    other sign), a complex by its parts' bits, an aclScalar as its value's key and dtype, a list
    member by member; a tensor's meta and a nullptr as they are."""
    kind = type(value)
    if kind is float:  # (first: the common plain value)
        return kind, _DOUBLE(value)
    if value is None or kind is TensorMeta:
        return value
    if isinstance(value, float):  # a subclass (numpy.float64)
        return kind, _DOUBLE(value)
    if isinstance(value, complex):
        return kind, _DOUBLE(value.real) + _DOUBLE(value.imag)
    if isinstance(value, np.generic):  # a NumPy scalar (float32: -0.0 == 0.0 too): its own bytes
        return kind, value.tobytes()
    if isinstance(value, tuple):
        return tuple(value_key(v) for v in value)
    number = getattr(value, "value", None)
    if number is not None and hasattr(value, "dtype"):  # an aclScalar (records.Scalar)
        return "scalar", value_key(number), value.dtype
    return kind, value


# SoC -> NpuArch, as the op sources switch on it (ops.md "SoC / arch mapping").
ARCH = {
    "Ascend910": "DAV_1001",
    "Ascend910B": "DAV_2201",
    "Ascend910_93": "DAV_2201",
    "Ascend310P": "DAV_2002",
    "Ascend950": "DAV_3510",
}


def arch(soc: str) -> str:
    return ARCH[soc]


def is_regbase(soc: str) -> bool:
    """Ascend950 (DAV_3510) is the only 'regbase' arch (aclnn_util.h IsRegbase)."""
    return ARCH[soc] == "DAV_3510"


def numel(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """NumPy-style broadcast of two shapes, or None when they do not broadcast."""
    if a == b:  # the common case, and the small calls' (issue 12)
        return tuple(a)
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(reversed(out))


def fmt_shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def fail_null(api: str, detail: str) -> NoReturn:
    raise AclnnParamNullptrError(api, detail)


def fail_invalid(api: str, detail: str) -> NoReturn:
    raise AclnnParamInvalidError(api, detail)


def fail(status: int, api: str, detail: str) -> NoReturn:
    raise from_status(status, api, detail)


def require_not_null(api: str, **tensors: TensorMeta | None) -> tuple[TensorMeta, ...]:
    """161001 for the first None, in the order given (the library's null-check order).
    Returns the tensors, in that order, now known to be present."""
    for name, value in tensors.items():
        if value is None:
            fail_null(api, f"{name} is nullptr")
    return tuple(tensors.values())  # type: ignore[arg-type]  # none is None past the loop


# --- helpers shared by the op modules -------------------------------------------------------

INNER_NULLPTR = 561103   # ACLNN_ERR_INNER_NULLPTR: an l0 step after validation failed
TILING_ERROR = 561002    # ACLNN_ERR_INNER_TILING_ERROR

FP32_FP16 = (DType.FLOAT, DType.FLOAT16)
FP32_FP16_BF16 = (DType.FLOAT, DType.FLOAT16, DType.BF16)


def dtype_list_v2(soc: str, l1: Sequence[DType], l2: Sequence[DType]) -> tuple[DType, ...]:
    """level2_base.h GetDtypeSupportListV2: l1 on DAV_2201 (A2/A3) or regbase (950), else l2."""
    return tuple(l1 if ARCH[soc] == "DAV_2201" or is_regbase(soc) else l2)


def shape_of(t: "TensorMeta | Sequence[int]") -> tuple[int, ...]:
    """The shape of a TensorMeta, or the argument itself as a tuple when it already is one."""
    return tuple(t.shape if isinstance(t, TensorMeta) else t)


def int64(x: int) -> int:
    """Wrap to a C int64_t, as the library's plain int64 products do on overflow."""
    return (x + 2**63) % 2**64 - 2**63


def fmt_dtypes(dtypes: Sequence[DType]) -> str:
    return ", ".join(str(DType(d)) for d in dtypes)


def require_dtype_in(api: str, soc: str, name: str, t: TensorMeta, allowed: Sequence[DType],
                     context: str = "") -> None:
    """161002 unless ``t.dtype`` is in ``allowed`` (OP_CHECK_DTYPE_NOT_SUPPORT)."""
    if t.dtype not in allowed:
        fail_invalid(api, f"{name} dtype {DType(t.dtype)} not supported{context} on {soc} "
                          f"(supported: {fmt_dtypes(allowed)})")


def require_same_dtype(api: str, name: str, t: TensorMeta, ref_name: str, ref: TensorMeta) -> None:
    """161002 unless ``t`` has ``ref``'s dtype (OP_CHECK_DTYPE_NOT_SAME/MATCH: no promotion)."""
    if t.dtype != ref.dtype:
        fail_invalid(api, f"{name} dtype {DType(t.dtype)} != {ref_name} dtype {DType(ref.dtype)}")


def require_max_dim(api: str, name: str, t: TensorMeta) -> None:
    """161002 when the view rank exceeds 8 (OP_CHECK_MAX_DIM)."""
    if t.ndim > MAX_DIM:
        fail_invalid(api, f"{name} rank {t.ndim} > {MAX_DIM} (shape {fmt_shape(t.shape)})")


def require_shape(api: str, name: str, t: TensorMeta, expected: Sequence[int], what: str) -> None:
    """161002 unless the view shape equals ``expected`` exactly (OP_CHECK_SHAPE_NOT_EQUAL*)."""
    if tuple(t.shape) != tuple(expected):
        fail_invalid(api, f"{name} shape {fmt_shape(t.shape)} != {what} {fmt_shape(expected)}")


def soc_family(name: str) -> str:
    """Map a device SoC name (aclrtGetSocName, e.g. "Ascend910B3") to the family the specs use."""
    n = name.strip()
    if n.startswith("Ascend910_93"):
        return "Ascend910_93"
    if n.startswith(("Ascend950", "Ascend910_95")):
        return "Ascend950"
    if n.startswith("Ascend910B"):
        return "Ascend910B"
    if n.startswith("Ascend310P"):
        return "Ascend310P"
    if n.startswith("Ascend910"):
        return "Ascend910"
    return n


# --- dtype promotion and casting (opbase include/nnopbase/opdev/data_type_utils.h) ------------

_INTS = {DType.INT8: 1, DType.INT16: 2, DType.INT32: 4, DType.INT64: 8}  # signed, by size
_FLOATS = (DType.FLOAT16, DType.BF16, DType.FLOAT, DType.DOUBLE, DType.HIFLOAT8, DType.FLOAT8_E5M2,
           DType.FLOAT8_E4M3FN, DType.FLOAT8_E8M0, DType.FLOAT6_E3M2, DType.FLOAT6_E2M3, DType.FLOAT4_E2M1,
           DType.FLOAT4_E1M2)
COMPLEX = (DType.COMPLEX32, DType.COMPLEX64, DType.COMPLEX128)
INTEGRAL = (DType.INT8, DType.INT16, DType.INT32, DType.INT64, DType.UINT8, DType.UINT16, DType.UINT32,
            DType.UINT64)


def is_floating(dt: DType) -> bool:
    """IsFloatingType: double, float, bf16, float16 and the 8/6/4-bit floats."""
    return dt in _FLOATS


def is_integral(dt: DType, include_bool: bool = False) -> bool:
    """IsIntegralType (signed and unsigned integers; bool with ``include_bool``)."""
    return dt in INTEGRAL or (include_bool and dt == DType.BOOL)


def can_cast(src: DType, dst: DType) -> bool:
    """CanCast: no complex -> non-complex, no floating -> integral, nothing but bool -> bool."""
    if src in COMPLEX and dst not in COMPLEX:
        return False
    if is_floating(src) and is_integral(dst):
        return False
    return not (src != DType.BOOL and dst == DType.BOOL)


def promote_type(a: DType, b: DType) -> DType:
    """PromoteType: kPromoteTypesLookup (PyTorch's promoteTypes on CANN's dtypes) for the dtypes of
    the 16-bit-and-wider table rows; DT_UNDEFINED where it has no entry (uint16/32/64 with anything
    but a complex, the 8/6/4-bit floats, ...)."""
    a, b = DType(a), DType(b)
    if a == b:
        return a
    known = (DType.BOOL, DType.UINT8, *_INTS, DType.FLOAT16, DType.BF16, DType.FLOAT, DType.DOUBLE, *COMPLEX)
    unsigned = (DType.UINT16, DType.UINT32, DType.UINT64)
    if a in unsigned or b in unsigned:  # their rows are undefined but for the complex columns
        u, other = (a, b) if a in unsigned else (b, a)
        if other == DType.COMPLEX64:
            return DType.COMPLEX128 if u == DType.UINT64 else DType.COMPLEX64
        return DType.COMPLEX128 if other == DType.COMPLEX128 else DType.DT_UNDEFINED
    if a not in known or b not in known:
        return DType.DT_UNDEFINED
    if a in COMPLEX or b in COMPLEX:
        if DType.COMPLEX128 in (a, b) or DType.DOUBLE in (a, b):
            return DType.COMPLEX128
        if DType.COMPLEX64 in (a, b) or DType.FLOAT in (a, b) or DType.BF16 in (a, b):
            return DType.COMPLEX64
        return DType.COMPLEX32  # complex32 with float16, an integer or bool
    if is_floating(a) or is_floating(b):
        if not is_floating(b):
            return a
        if not is_floating(a):
            return b
        rank = {DType.FLOAT16: 1, DType.BF16: 1, DType.FLOAT: 2, DType.DOUBLE: 3}
        if rank[a] == rank[b]:  # float16 with bfloat16
            return DType.FLOAT
        return a if rank[a] > rank[b] else b
    if a == DType.BOOL:
        return b
    if b == DType.BOOL:
        return a
    if DType.UINT8 in (a, b):  # uint8 with a signed integer: int16 at least
        other = b if a == DType.UINT8 else a
        return DType.INT16 if other == DType.INT8 else other
    return a if _INTS[a] >= _INTS[b] else b


# --- workspace sizes (each op module's ``workspace_size``) -------------------------------------
# What phase 1 reports is the sum over the kernels it queues, added up by opbase:
# - a composite op (hand-written op_api) returns executor->GetWorkspaceSize() (hicann/opbase
#   src/nnopbase/composite_op/aclnn_engine/op_executor.cpp aclOpExecutor::GetWorkspaceSize): the
#   MaxAllocator packing (composite_op/mem_mgr/memory_allocator.cpp) of every kernel's workspace
#   tensors and every intermediate tensor the executor allocated (AllocTensor: "from workspace");
#   l0 ops that launch nothing (Contiguous of a contiguous tensor, Cast to the same dtype,
#   Reshape) add nothing, and a ViewCopy of an intermediate into a contiguous user output moves
#   the intermediate onto the output (ops-math contiguous.cpp ViewCopy: SetFromWorkspace(false)),
#   so it is not counted either;
# - a generated op returns the plain sum of its tiling's workspace sizes, 0 when all outputs are
#   empty (hicann/opbase individual_op/executor/indv_executor.cpp NnopbaseExecutorGetWorkspaceSizes).
# No system workspace is added by opbase: the tilings include it themselves (GetLibApiWorkSpaceSize).
#
# Undecidable from the sources, and the choice made: a lower bound in each case, so what fails
# here for want of a workspace fails on a device too (the reverse holds where the rule is exact:
# A2/A3 with contiguous tensors, and CrossEntropyLossGrad everywhere):
# - an Ascend C kernel built for dynamic shapes always declares one workspace (cannmirror/asc-devkit
#   tools/build/asc_op_compile_base/asc_op_compiler/get_op_tiling.py: add_workspace("total_workspace",
#   size=-1)), so opbase allocates the size its tiling sets, even 0; where that tiling is not in the
#   fetched sources (the arch35 broadcast/elementwise templates), 0 is used;
# - TBE kernels (no op_host tiling in ops-nn/ops-math for the SoC) are taken to declare none;
# - strided (non-contiguous) inputs or outputs add Contiguous/ViewCopy kernels and their copies:
#   not modelled (the contiguous layout's size is reported);
# - the core count is the emulated device's (VECTOR_CORES, as aclGetDeviceCapability reports).

VECTOR_CORES = 40        # AIV cores of the emulated part (a 910B3: 20 AI cores, 40 vector cores)
UB_BLOCK = 32            # bytes of a UB block (Ops::Base::GetUbBlockSize) on every arch here


def lib_api_workspace(soc: str) -> int:
    """PlatformAscendC::GetLibApiWorkSpaceSize (cannmirror/asc-devkit
    impl/utils/tiling/platform/platform_ascendc.cpp, values from its tests/api/utils/tiling/
    test_tiling.cpp): 16 MiB on DAV_2201 (A2/A3) and DAV_3510 (950), 2 MiB elsewhere."""
    return 16 << 20 if ARCH[soc] in ("DAV_2201", "DAV_3510") else 2 << 20


def _aligned(size: int) -> int:
    """opbase mem_mgr/memory_allocator.cpp Align: + EXTRA_SIZE_IN_BYTE (32), up to 512 bytes."""
    return (size + 32 + 511) // 512 * 512


class Workspace(NamedTuple):
    """What phase 1 reports (``size``), and whether the kernels touch it (``used``: some tensor
    in it has bytes; a kernel whose tiling asked 0 bytes gets an address it never reads)."""
    size: int
    used: bool


class Kernel(NamedTuple):
    """One kernel launch of a composite op: its workspace sizes (from its tiling) and the bytes
    of each intermediate output it writes, with the index of the last kernel that reads it."""
    workspaces: tuple[int, ...] = ()
    outputs: tuple[tuple[int, int], ...] = ()   # (bytes, last reader's index)


def composite_workspace(kernels: Sequence[Kernel]) -> Workspace:
    """aclOpExecutor::GetWorkspaceSize over kernels in launch order: opbase's MaxAllocator.

    Tensors in order (per kernel its workspaces, then its intermediate outputs), each with a
    lifetime [writer, last reader]; each goes to the last bucket whose latest tensor's lifetime
    it does not overlap (same start: same kernel, an overlap; a tensor its kernel reads always
    overlaps, so TensorBucket::IsReusable's IsInputOf adds nothing here), else to a new bucket;
    a bucket is as big as its biggest aligned tensor, and the size is the sum of the buckets.
    Tensors come in kernel order, so a bucket's latest tensor started at this kernel or before:
    disjoint means it started before and ended before."""
    buckets: list[list[int]] = []   # [bytes, start, end of the latest tensor]
    used = False
    for i, k in enumerate(kernels):
        for size, end in [(size, i) for size in k.workspaces] + list(k.outputs):
            used = used or size > 0
            fit = None
            for b in buckets:
                if b[1] != i and b[2] < i:
                    fit = b
            aligned = _aligned(size)
            if fit is None:
                buckets.append([aligned, i, end])
            else:
                fit[:] = [max(fit[0], aligned), i, end]
    return Workspace(sum(b[0] for b in buckets), used)
