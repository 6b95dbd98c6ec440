"""The vocabulary of the aten tier's table: one ``Entry`` per aclnn operator.

An entry says, as data, how PyTorch's CPU kernel of one aten overload computes the operator::

    E("Softmax", "aten::_softmax", "self dim out", ("self", "dim", False))

- ``op``: the CANN name (aclnn<op>); ``aten``: ``"aten::name.overload"`` (``.default`` when it
  has none), ``"torch:dotted.path"`` for a callable of the torch package (``torch:torch.fft.fft``),
  or ``"compose:module.function"`` for a small composition of torch calls in pyaclnn
  (``pyaclnn/ops/_aten/compose/<module>.py``: ``compose:nn.gemm``);
- ``params``: the C parameters of aclnn<op>GetWorkspaceSize without the two out-parameters,
  by name, in header order (space-separated). It is the prototype the entry was written for:
  the registry runs the operator only when its signature has exactly these names, and
  tests/reference/test_aten_table.py checks every entry against the signature;
- ``args`` / ``kwargs``: the aten arguments. A ``str`` is a C parameter passed as it is (a
  tensor as a torch tensor, an aclScalar as its Python number, an aclIntArray as a list, an
  int, float, bool or char* as itself); any other plain value is a constant; a ``Conv`` (below)
  converts a C parameter;
- ``out``: the C outputs that receive aten's results, in result order (default: ``out``, or the
  in-place form's ``selfRef``); ``None`` in it drops that result;
- ``nullable``: parameters that may be nullptr though not named ``...Optional`` (as the header's
  documentation says); a nullptr aclScalar or array passed by keyword leaves aten's default;
- ``dtypes``: the input dtypes phase 1 accepts (a tuple of ``DType``; ``BF16`` counts only
  where the SoC has it, ``SOCS_BF16``), or a dict of such tuples by C parameter name (``"*"``:
  the others; a parameter not in it, without ``"*"``, is not checked); ``dtypes_v1``: the
  list for the other SoCs, where a source has two (GetDtypeSupportListV2's second, the
  ASCEND910 list; default: ``dtypes`` without bf16); ``out_dtypes``: the output dtypes
  (default: any dtype the result can be cast to, CANN's CanCast); ``same_dtype``: parameters
  whose dtype must be the first one's (OP_CHECK_DTYPE_NOT_MATCH); ``single``: outputs whose 0-d
  result may be written to any one-element output of rank <= 1 (a source's "single element"
  check, where aten would have a 0-d tensor);
- ``mask``: the C bool array (an ``outputMask``) saying which of ``out`` are computed, in ``out``
  order: an output whose bit is false is not checked and never written (its bytes stay as they
  were, as on a device, whatever aten returns there); one whose bit is true may not be nullptr
  even where ``nullable`` lets a masked-out one be (161001: the sources' CheckNotNull, e.g.
  convolution_backward_checker.cpp, aclnn_batch_norm_backward.cpp, aclnn_layer_norm_backward.cpp);
- ``promote``: tensor parameters whose promoted dtype (CANN's op::PromoteType) is what ``dtypes``
  checks, not each one's own (a source's CheckPromoteType: gelu_backward's int32 gradOutput beside
  a float32 self promotes to float32): no promoted dtype is 161002; aten gets them cast to it;
- ``socs``: the SoCs the operator exists on (empty: all; elsewhere 161002 after the nullptr
  checks, as the sources' SoC checks refuse it);
- ``upcast``: fp16 and bf16 tensors go to aten as float32 (its CPU kernel has no half one; the
  device computes them), the results cast back to the outputs' dtypes;
- ``rule``: how phase 1 finds the outputs' shapes and dtypes: ``"meta"`` (aten's meta kernels,
  the default) or ``"cpu"`` (its CPU kernel on zeros, once per distinct arguments: for an
  operator whose meta kernel checks less than its CPU kernel, which would accept at phase 1
  what phase 2 cannot compute);
- ``traced``: which phase-1 rules were traced from the op sources (a file of hicann ops-math or
  ops-nn), ``""`` when all are the tier's generic ones (spec.py: nullptr, rank, dtype, out shape);
- ``notes``: known differences from the device (HF32 under cubeMathType, which is dropped...).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ....dtypes import DType

__all__ = ["Entry", "E", "Conv", "Dtype", "Enum", "Reduction", "IntReduction", "zero_is_none", "negative_is_zero",
           "empty_is_all",
           "OutDtype", "OutShape", "Call", "Int64", "IntTensor", "D",
           "F16", "FLOATS", "FLOATS64", "INTS", "NUMS", "ALL", "COMPLEX_", "SOCS_BF16"]

D = DType
F16 = (D.FLOAT, D.FLOAT16)
FLOATS = (D.FLOAT, D.FLOAT16, D.BF16)
FLOATS64 = FLOATS + (D.DOUBLE,)
INTS = (D.INT8, D.INT16, D.INT32, D.INT64, D.UINT8)
NUMS = FLOATS64 + INTS
ALL = NUMS + (D.BOOL,)
COMPLEX_ = (D.COMPLEX64, D.COMPLEX128)
# The SoCs whose kernels take bf16 (most op sources' GetDtypeSupportListBySocVersion or
# GetDtypeSupportListV2: DAV_2201 (Ascend910B, Ascend910_93) and DAV_3510 (Ascend950)).
SOCS_BF16 = ("Ascend910B", "Ascend910_93", "Ascend950")


@dataclass(frozen=True)
class Conv:
    """A converted C parameter (subclasses say how). ``param``: its C name."""
    param: str

    def convert(self, value: Any, torch: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True)
class Dtype(Conv):
    """An aclDataType int -> a torch dtype."""


@dataclass(frozen=True)
class Enum(Conv):
    """An enum int (0, 1, ...) -> aten's value at that position of ``values`` (a string, usually)."""
    values: tuple[Any, ...] = ()

    def convert(self, value: Any, torch: Any) -> Any:
        if isinstance(value, (str, bytes)):
            raise ValueError(f"{self.param} is an enum int here, got {value!r}")
        if not 0 <= int(value) < len(self.values):
            raise ValueError(f"{self.param} = {value} is not one of 0..{len(self.values) - 1} "
                             f"({', '.join(map(repr, self.values))})")
        return self.values[int(value)]


def Reduction(param: str = "reduction") -> Enum:
    """CANN's int reduction (0 none, 1 mean, 2 sum) -> aten's string (aten's int reductions are
    the same ints: pass the parameter as it is there)."""
    return Enum(param, ("none", "mean", "sum"))


def IntReduction(param: str = "reduction") -> Enum:
    """An int reduction aten takes as the same int (0 none, 1 mean, 2 sum): any other value is
    refused at phase 1 (161002) rather than passed to aten."""
    return Enum(param, (0, 1, 2))


def zero_is_none(value: Any) -> Any:
    """0 means "not given" (CANN's divisorOverride): aten's None."""
    return value or None


def negative_is_zero(value: Any) -> Any:
    """A negative threshold counts as 0 (aclnnHardshrinkBackward's ``lambd``: hicann/ops-nn
    activation/hard_shrink_grad/op_api/aclnn_hardshrink_backward.cpp sets lambdFloat = 0 when < 0)."""
    return max(value, 0)


def empty_is_all(value: Any) -> Any:
    """An empty dim array reduces every axis (the ops-math reductions' ``dim->Size() == 0``):
    aten's None (aten reads [] as no axis in some overloads, all.dims and nansum among them)."""
    return list(value) or None


@dataclass(frozen=True)
class OutDtype(Conv):
    """The torch dtype of C tensor ``param`` (an output's, usually: an aten ``dtype=`` argument
    CANN takes from out; or an input's, aten's ``input_dtype``)."""


@dataclass(frozen=True)
class OutShape(Conv):
    """The shape of C output ``param``, as a list (aten's ``size`` argument)."""


@dataclass(frozen=True)
class Call(Conv):
    """A value made from C parameter ``param`` by ``fn`` (a plain function of the value; keep it
    small and name it in notes)."""
    fn: Any = None

    def convert(self, value: Any, torch: Any) -> Any:
        return self.fn(value)


@dataclass(frozen=True)
class Int64(Conv):
    """Tensor ``param`` passed to aten as int64 (indices: some aten CPU kernels take only long
    ones where CANN also takes int32)."""


@dataclass(frozen=True)
class IntTensor(Conv):
    """aclIntArray ``param`` passed to aten as a 1-D int64 tensor (an index list)."""


@dataclass(frozen=True, eq=False)
class Entry:
    op: str
    aten: str
    params: tuple[str, ...]
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()
    out: tuple[str | None, ...] = ()
    nullable: tuple[str, ...] = ()
    dtypes: tuple[DType, ...] | Mapping[str, tuple[DType, ...]] | None = FLOATS
    out_dtypes: tuple[DType, ...] | None = None
    upcast: bool = False
    traced: str = ""
    notes: str = ""
    dtypes_v1: tuple[DType, ...] | None = None
    same_dtype: tuple[str, ...] = ()
    rule: str = "meta"
    single: tuple[str, ...] = ()
    socs: tuple[str, ...] = ()
    mask: str = ""
    promote: tuple[str, ...] = ()
    family: str = field(default="", compare=False)  # the table module it comes from

    def referenced(self) -> list[str]:
        """The C parameter names its aten arguments use."""
        return [a if isinstance(a, str) else a.param for a in list(self.args) + [v for _, v in self.kwargs]
                if isinstance(a, (str, Conv))]


def E(op: str, aten: str, params: str, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None,
      out: str | tuple[str | None, ...] | None = None,
      dtypes: tuple[DType, ...] | Mapping[str, tuple[DType, ...]] | None = FLOATS,
      out_dtypes: tuple[DType, ...] | None = None, traced: str = "", notes: str = "",
      nullable: str = "", dtypes_v1: tuple[DType, ...] | None = None, same_dtype: str = "",
      rule: str = "meta", single: str = "", socs: str = "", upcast: bool = False, mask: str = "",
      promote: str = "") -> Entry:
    """One table entry (module docstring); ``params``, ``out``, ``nullable``, ``same_dtype``,
    ``single``, ``socs`` and ``promote`` as space-separated names."""
    names = tuple(params.split())
    if out is None:
        out = ("out",) if "out" in names else ("selfRef",) if "selfRef" in names else ()
    elif isinstance(out, str):
        out = tuple(out.split())
    if not aten.startswith(("aten::", "torch:", "compose:")):
        raise ValueError(f"{op}: aten {aten!r} is none of 'aten::name.overload', 'torch:path', 'compose:module.fn'")
    return Entry(op, aten, names, tuple(args), tuple((kwargs or {}).items()), tuple(out),
                 tuple(nullable.split()), dtypes, out_dtypes, upcast, traced, notes, dtypes_v1,
                 tuple(same_dtype.split()), rule, tuple(single.split()), tuple(socs.split()), mask,
                 tuple(promote.split()))
