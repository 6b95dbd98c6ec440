"""Operator signatures read from aclnn headers (no cffi, no pycparser).

A CANN operator is a pair of C functions::

    aclnnStatus aclnn<Op>GetWorkspaceSize(<parameters>, uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnn<Op>(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

``parse_header(text)`` finds every such pair in a header as CANN ships it: include guards and
other preprocessor lines, ``extern "C" {``, ``ACLNN_API`` / ``__attribute__((visibility("default")))``
in front of the declarations, comments, one parameter per line, several operators per header
(aclnn_add.h declares four: Add, Adds and their in-place forms). ``index_header(text)`` only lists
the operator names (cheap: two regular expressions), for discovery before anything is parsed.

An operator is a *pair*: a phase 1 the header declares without its launch function is not one
(ops-transformer's aclnn_fused_infer_attention_score_inner.h declares
aclnnInnerFusedInferAttentionScoreTensorGetWorkspaceSize and no launch). A header that is the
library's own C++ source rather than its C API (``internal_header``: ``*_inner.h``, ``using
namespace``, the op_api development headers ``opdev/`` / ``aclnn_kernels/`` included) declares
no operator at all.

The launch function is usually ``(workspace, workspaceSize, executor, stream)``, but a header may
declare more: ops-cv's aclnnGaussianBlur takes ``(workspace, workspaceSize, executor, src, ksize,
sigmaX, sigmaY, borderType, dst, stream)``, phase 1's parameters again between the executor and
the stream (its launch re-checks them: ops-cv experimental/image/gaussian_blur/op_api/
aclnn_gaussian_blur.cpp, aclnnGaussianBlur). ``Signature.launch`` holds those extra parameters and
``prototype()`` declares the launch exactly as the header does.

Each parameter gets a *kind* that says what Python value it takes (``KINDS``); a C type pyaclnn
cannot pass is kind ``"unsupported"``: the operator is still listed, and calling it raises
NotSupportedError naming that parameter.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

__all__ = ["Param", "Signature", "parse_header", "index_header", "scan_header", "internal_header", "KINDS", "c_values",
           "c_element", "c_scalar"]

# kind -> (C base type, pointer depth) pairs that have it. Base types are written without const.
_TYPES: dict[tuple[str, int], str] = {
    ("aclTensor", 1): "tensor",
    ("aclScalar", 1): "scalar",
    ("aclIntArray", 1): "int_array",
    ("aclFloatArray", 1): "float_array",
    ("aclBoolArray", 1): "bool_array",
    ("aclTensorList", 1): "tensor_list",
    ("aclScalarList", 1): "scalar_list",
    ("double", 0): "float",
    ("float", 0): "float",
    ("bool", 0): "bool",
    ("char", 1): "string",
    ("aclDataType", 0): "int",
    ("aclFormat", 0): "int",
    ("void", 1): "address",       # a device address (int) or None
    ("aclrtStream", 0): "stream",
}
for _int in ("int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
             "int", "unsigned int", "long", "long long", "unsigned long", "size_t", "unsigned", "short"):
    _TYPES[(_int, 0)] = "int"

# What each kind takes from Python (the generic object converts to it; pyaclnn.acl passes handles).
KINDS = {
    "tensor": "aclTensor* (a Tensor or ndarray; None is nullptr)",
    "scalar": "aclScalar* (a Python or NumPy number)",
    "int_array": "aclIntArray* (a sequence of ints)",
    "float_array": "aclFloatArray* (a sequence of floats)",
    "bool_array": "aclBoolArray* (a sequence of bools)",
    "tensor_list": "aclTensorList* (a sequence of Tensors or ndarrays)",
    "scalar_list": "aclScalarList* (a sequence of numbers)",
    "int": "an integer (C integer types, aclDataType, aclFormat)",
    "float": "a float (double, float)",
    "bool": "a bool",
    "string": "char* (a str; None is nullptr)",
    "address": "void* (a device address as an int; None is nullptr)",
    "stream": "aclrtStream (a Stream or handle)",
    "unsupported": "a C type pyaclnn cannot pass",
}

_TAIL = (("uint64_t", 1), ("aclOpExecutor", 2))  # phase 1 ends with workspaceSize, executor
_LAUNCH_HEAD = (("void", 1), ("uint64_t", 0), ("aclOpExecutor", 1))  # the launch starts with these


@dataclass(frozen=True)
class Param:
    """One C parameter of aclnn<Op>GetWorkspaceSize."""
    name: str
    ctype: str      # as cffi reads it, e.g. "const aclTensor *"
    kind: str       # a key of KINDS
    const: bool     # the pointee is const (hand-written headers: an input)

    def __str__(self) -> str:
        return f"{self.ctype}{'' if self.ctype.endswith('*') else ' '}{self.name}"


@dataclass(frozen=True)
class Signature:
    """The phase-1 parameters of one operator (without workspaceSize/executor), and the extra
    parameters of its launch function (between executor and stream; usually none)."""
    op: str                         # "Add" for aclnnAddGetWorkspaceSize
    params: tuple[Param, ...]
    problem: str | None = None      # why it cannot be called (an unsupported parameter...), else None
    launch: tuple[Param, ...] = ()  # aclnnGaussianBlur's src, ksize, sigmaX, sigmaY, borderType, dst

    @property
    def api(self) -> str:
        return f"aclnn{self.op}GetWorkspaceSize"

    @property
    def all_const(self) -> bool:
        """Generated headers declare every tensor, outputs too, as const aclTensor*. (A hand-written
        in-place op declares its ``...Ref`` tensor const too, and is not one of them.)"""
        tensors = [p for p in self.params if p.kind in ("tensor", "tensor_list")]
        return bool(tensors) and all(p.const and not p.name.endswith("Ref") for p in tensors)

    def prototype(self) -> str:
        """The two declarations as the header declares them (normalised), for cffi's cdef."""
        params = ", ".join([str(p) for p in self.params] + ["uint64_t *workspaceSize", "aclOpExecutor **executor"])
        launch = ", ".join(["void *workspace", "uint64_t workspaceSize", "aclOpExecutor *executor"]
                           + [str(p) for p in self.launch] + ["aclrtStream stream"])
        return f"aclnnStatus {self.api}({params});\naclnnStatus aclnn{self.op}({launch});"

    def same_prototype(self, other: "Signature") -> bool:
        """Both declare the same C functions: parameter names and C types of both phases (the
        keyword names an operator takes come from them)."""
        def key(sig: Signature) -> tuple:
            return tuple((p.name, p.ctype) for p in sig.params), tuple((p.name, p.ctype) for p in sig.launch)
        return key(self) == key(other)

    @cached_property
    def launch_sources(self) -> tuple[int, ...] | None:
        """The phase-1 position of each extra launch parameter, matched by name (aclnnGaussianBlur's
        launch takes phase 1's values again); None if one has no phase-1 namesake (then only the C
        layer, given every launch argument, can run the operator)."""
        names = {p.name: i for i, p in enumerate(self.params)}
        out = tuple(names.get(p.name, -1) for p in self.launch)
        return None if -1 in out else out

    @cached_property
    def launch_values(self) -> tuple[tuple[int, Param, type, int, int], ...]:
        """``values`` of the extra launch parameters (positions count from the first extra)."""
        return _values(self.launch)

    def __str__(self) -> str:
        return f"{self.api}({', '.join(str(p) for p in self.params)})"

    @cached_property
    def values(self) -> tuple[tuple[int, Param, type, int, int], ...]:
        """(position, parameter, the Python type that needs no conversion, its range) of each
        plain C value (integers, floats, bools, char*): what ``c_values`` checks."""
        return _values(self.params)


def _values(params: tuple[Param, ...]) -> tuple[tuple[int, Param, type, int, int], ...]:
    out = []
    for i, p in enumerate(params):
        if p.kind in _VALUE_KINDS:
            lo, hi = _range(p.ctype) if p.kind == "int" else (0, -1)
            out.append((i, p, _FAST[p.kind], lo, hi))
    return tuple(out)


# -- plain C values: checked and converted once, for pyaclnn.acl and the executors alike ---------
_VALUE_KINDS = ("int", "float", "bool", "string")
_FAST = {"int": int, "float": float, "bool": bool, "string": str}
_RANGES = {"int8_t": 8, "int16_t": 16, "int32_t": 32, "int64_t": 64, "int": 32, "long": 64, "long long": 64,
           "short": 16}
_URANGES = {"uint8_t": 8, "uint16_t": 16, "uint32_t": 32, "uint64_t": 64, "size_t": 64, "unsigned int": 32,
            "unsigned": 32, "unsigned long": 64}
# What a few parameters of the shipped operators mean, added to their TypeError.
_HINTS = {"reduction": " (0 = none, 1 = mean, 2 = sum)",
          "reductionOptional": " ('none', 'mean' or 'sum'; None is nullptr, the library's 'mean')"}


def c_values(sig: Signature, args: tuple, launch: bool = False) -> tuple:
    """``args`` of ``sig``'s phase 1 (``launch``: the extra launch arguments) with each plain value
    checked against its C type and converted: integer types take an int (NumPy integers too, not
    bools; outside the C type's range is a ValueError), double/float an int or float, bool a bool,
    char* a str or None. A wrong Python type is a TypeError naming the C parameter, on both
    backends, before anything is allocated. A wrong argument count is left to the call (the
    library's, or the spec's, error)."""
    if launch:
        values, params = sig.launch_values, sig.launch
    else:
        values, params = sig.values, sig.params
    if not values or len(args) != len(params):
        return args
    out: list[Any] | None = None
    for i, param, fast, lo, hi in values:  # the common case, a value of the right type, converts nothing
        value = args[i]
        if type(value) is fast and (lo > hi or lo <= args[i] <= hi):
            continue
        if out is None:
            out = list(args)
        out[i] = _convert(f"aclnn{sig.op}" if launch else sig.api, param, value)
    return args if out is None else tuple(out)


_INT64 = (-2 ** 63, 2 ** 63 - 1)


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def c_element(value: Any, kind: str) -> Any:
    """One element of an aclIntArray / aclFloatArray / aclBoolArray (``kind`` "int", "float" or
    "bool"): an int in the int64_t range (no bool), a real number (no bool, no text: C takes none)
    or a bool. Anything else is a TypeError (ValueError out of range), never cast."""
    if kind == "bool":
        if not _is_bool(value):
            raise TypeError(f"got {type(value).__name__} {value!r}, not a bool")
        return bool(value)
    if _is_bool(value) or isinstance(value, (str, bytes)):
        raise TypeError(f"got {type(value).__name__} {value!r}")
    if kind == "float":
        return float(value)
    number = operator.index(value)
    if not _INT64[0] <= number <= _INT64[1]:
        raise ValueError(f"{number} is out of the int64_t range")
    return number


def c_scalar(value: Any) -> Any:
    """The number an aclScalar stores for a Python or NumPy number (a NumPy scalar's own value; a
    Python int must fit the ACL_INT64 it becomes; text is no number)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (str, bytes)):
        raise TypeError(f"an aclScalar takes a number, got {type(value).__name__} {value!r}")
    if type(value) is int and not _INT64[0] <= value <= _INT64[1]:
        raise ValueError(f"{value} is out of the int64_t range of an ACL_INT64 aclScalar (pass a float, "
                         "or a NumPy scalar of the dtype you mean)")
    return value


def _range(ctype: str) -> tuple[int, int]:
    """The values of a C integer type (an empty range, lo > hi, for an unknown width)."""
    if ctype in _RANGES:
        bits = _RANGES[ctype]
        return -2 ** (bits - 1), 2 ** (bits - 1) - 1
    if ctype in _URANGES:
        return 0, 2 ** _URANGES[ctype] - 1
    return 0, -1


def _convert(api: str, param: Param, value: Any) -> Any:
    kind = param.kind
    if kind == "string":
        if value is not None and not isinstance(value, str):
            raise _type_error(api, param, "a str or None", value)
        return value
    is_bool = _is_bool(value)
    if kind == "bool":
        if not is_bool:
            raise _type_error(api, param, "a bool", value)
        return bool(value)
    if kind == "int":
        if is_bool:
            raise _type_error(api, param, "an int", value)
        try:
            number = operator.index(value)
        except TypeError:
            raise _type_error(api, param, "an int", value) from None
        lo, hi = _range(param.ctype)
        if lo <= hi:
            if not lo <= number <= hi:
                raise ValueError(f"{api}: {param.name} ({_short(param.ctype)}) = {number} is out of the "
                                 f"{param.ctype} range")
        return number
    if is_bool or isinstance(value, (str, bytes)):  # float("0.1") would parse; C takes no text
        raise _type_error(api, param, "an int or float", value)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise _type_error(api, param, "an int or float", value) from None


def _short(ctype: str) -> str:
    return ctype.replace(" *", "*")


def _type_error(api: str, param: Param, expected: str, value: Any) -> TypeError:
    hint = _HINTS.get(param.name) or _CTYPE_HINTS.get(param.ctype, "")
    return TypeError(f"{api}: {param.name} ({_short(param.ctype)}) must be {expected}, got "
                     f"{type(value).__name__} {value!r}{hint}")


# a NumPy dtype or type where an aclDataType goes is the likeliest mistake: name the C values
_CTYPE_HINTS = {"aclDataType": " (an aclDataType: pyaclnn.DType.FLOAT, acl.ACL_FLOAT, ...; "
                               "pyaclnn.dtypes.from_numpy(np.float32) converts a NumPy dtype)"}


_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)|__declspec\s*\([^()]*\)")
_EXTERN_C = re.compile(r'extern\s+"C"\s*\{?')
_MACROS = re.compile(r"\b(?:ACLNN_API|ACL_FUNC_VISIBILITY|OP_API_EXPORT|__EXPORT__|extern|static|inline)\b")
_DECL = re.compile(r"\baclnn(\w+?)GetWorkspaceSize\s*\(([^()]*)\)\s*$", re.S)
_LAUNCH = re.compile(r"\baclnn(\w+)\s*\(([^()]*)\)\s*$", re.S)
_INDEX = re.compile(r"\baclnn(\w+?)GetWorkspaceSize\s*\(")
_INDEX_LAUNCH = re.compile(r"\baclnn(\w+)\s*\(")
# C++ of the library's own sources, never of a C API header: a namespace brought in, or op_api's
# development headers (opdev/, aclnn_kernels/: not installed with CANN) included.
_CXX_ONLY = re.compile(r"\busing\s+namespace\b|^[ \t]*#[ \t]*include[ \t]*[<\"](?:opdev|aclnn_kernels)/", re.M)


def internal_header(name: str, text: str) -> str | None:
    """Why the header ``name`` (a file name) with ``text`` is the library's internal C++ rather
    than an operator API header, None if it is an API header. ``*_inner.h`` is op_api's name for
    a header private to its own sources (ops-transformer attention/fused_infer_attention_score/
    op_host/op_api/aclnn_fused_infer_attention_score_inner.h, next to the public
    aclnn_fused_infer_attention_score.h); ``using namespace`` or an ``opdev/`` or ``aclnn_kernels/``
    include makes it C++ that only the library's build can compile (ops-transformer
    mc2/distribute_barrier/op_host/op_api/aclnn_distribute_barrier_common.h)."""
    if name.endswith("_inner.h"):
        return "an op_api internal header (*_inner.h)"
    match = _CXX_ONLY.search(_COMMENTS.sub(" ", text))
    if match:
        return f"C++ of the library's own sources ({' '.join(match.group(0).split())!r})"
    return None


def index_header(text: str) -> list[str]:
    """Operator names declared in a header, without parsing it (comments are dropped first): the
    names with both a phase 1 and a launch function, in the order of their phase 1."""
    return scan_header(text)[0]


def scan_header(text: str) -> tuple[list[str], list[str]]:
    """(``index_header``'s names, the names whose phase 1 is declared without a launch function)."""
    text = _COMMENTS.sub(" ", text)
    launches = set(_INDEX_LAUNCH.findall(text))
    names = list(dict.fromkeys(_INDEX.findall(text)))
    return [n for n in names if n in launches], [n for n in names if n not in launches]


def _clean(text: str) -> str:
    text = _COMMENTS.sub(" ", text)
    text = _PREPROCESSOR.sub(" ", text)
    text = _ATTRIBUTE.sub(" ", text)
    text = _EXTERN_C.sub(" ", text)
    return _MACROS.sub(" ", text)


def parse_header(text: str) -> dict[str, Signature]:
    """Every operator whose two functions the header declares, by name ("Add"), in header order."""
    phase1: dict[str, str] = {}
    launch: dict[str, str] = {}
    for statement in _clean(text).replace("{", ";").replace("}", ";").split(";"):
        statement = statement.strip()
        match = _DECL.search(statement)
        if match:
            phase1.setdefault(match.group(1), match.group(2))
            continue
        match = _LAUNCH.search(statement)
        if match:  # the first declaration: a later call (an inline wrapper's body) is no prototype
            launch.setdefault(match.group(1), match.group(2))
    return {op: _signature(op, params, launch[op]) for op, params in phase1.items() if op in launch}


def _params(text: str) -> list[Param]:
    raw = [p.strip() for p in text.split(",")]
    if raw == ["void"] or raw == [""]:
        raw = []
    return [_param(item, i) for i, item in enumerate(raw)]


def _signature(op: str, text: str, launch_text: str) -> Signature:
    params = _params(text)
    tail = [(_base(p.ctype), p.ctype.count("*")) for p in params[-2:]]
    if tail != list(_TAIL):
        return Signature(op, tuple(params), f"aclnn{op}GetWorkspaceSize does not end with "
                                            "(uint64_t *workspaceSize, aclOpExecutor **executor)")
    params = params[:-2]
    launch = _params(launch_text)
    head = [(_base(p.ctype), p.ctype.count("*")) for p in launch[:3]]
    if head != list(_LAUNCH_HEAD) or not launch[3:] or launch[-1].kind != "stream":
        return Signature(op, tuple(params), f"aclnn{op} is declared ({', '.join(str(p) for p in launch)}), not "
                                            "(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, ..., "
                                            "aclrtStream stream)")
    extra = tuple(launch[3:-1])
    problem = None
    bad = [p for p in params + list(extra) if p.kind == "unsupported"]
    if bad:
        problem = "; ".join(f"parameter {p.name!r} has C type {p.ctype!r}, which pyaclnn cannot pass" for p in bad)
    return Signature(op, tuple(params), problem, extra)


_TOKEN = re.compile(r"\*|[A-Za-z_]\w*")
_ARRAY = re.compile(r"(\w+)\s*\[[^\]]*\]")
_QUALIFIERS = ("const", "volatile", "struct", "enum")


def _param(item: str, position: int) -> Param:
    """One parameter declaration: ``const aclTensor *self``, ``int64_t dim``, ``bool x[]``..."""
    item = _ARRAY.sub(r"* \1", item)  # "bool mask[]" is "bool *mask"
    tokens = _TOKEN.findall(item)
    words = [t for t in tokens if t not in ("*",) + _QUALIFIERS]
    name = f"arg{position}"
    if len(words) >= 2 and tokens[-1] == words[-1]:  # the last word names the parameter
        name = tokens.pop()
    first_star = tokens.index("*") if "*" in tokens else len(tokens)
    const = "const" in tokens[:first_star]        # const before the first '*' is the pointee's
    base = " ".join(t for t in tokens[:first_star] if t not in _QUALIFIERS)
    pointers = "".join("*" if t == "*" else " const " for t in tokens[first_star:] if t in ("*", "const"))
    ctype = " ".join(f"{'const ' if const else ''}{base} {pointers}".split())
    kind = _TYPES.get((base, tokens.count("*")), "unsupported")
    return Param(name, ctype, kind, const)


def _base(ctype: str) -> str:
    return " ".join(w for w in ctype.replace("*", " ").split() if w not in ("const", "volatile"))
