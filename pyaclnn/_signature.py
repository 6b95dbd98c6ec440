"""Operator signatures read from aclnn headers (no cffi, no pycparser).

A CANN operator is a pair of C functions::

    aclnnStatus aclnn<Op>GetWorkspaceSize(<parameters>, uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnn<Op>(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

``parse_header(text)`` finds every such pair in a header as CANN ships it: include guards and
other preprocessor lines, ``extern "C" {``, ``ACLNN_API`` / ``__attribute__((visibility("default")))``
in front of the declarations, comments, one parameter per line, several operators per header
(aclnn_add.h declares Add, Adds, InplaceAdd and InplaceAdds). ``index_header(text)`` only lists
the operator names (cheap: one regular expression), for discovery before anything is parsed.

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

__all__ = ["Param", "Signature", "parse_header", "index_header", "KINDS", "PHASE2_PROTOTYPE", "c_values", "c_element",
           "c_scalar"]

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

PHASE2_PROTOTYPE = ("aclnnStatus aclnn{op}(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
                    "aclrtStream stream);")
_TAIL = (("uint64_t", 1), ("aclOpExecutor", 2))  # phase 1 ends with workspaceSize, executor


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
    """The phase-1 parameters of one operator (without workspaceSize/executor)."""
    op: str                         # "Add" for aclnnAddGetWorkspaceSize
    params: tuple[Param, ...]
    problem: str | None = None      # why it cannot be called (an unsupported parameter...), else None

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
        """The two declarations, normalised, for cffi's cdef."""
        params = ", ".join([str(p) for p in self.params] + ["uint64_t *workspaceSize", "aclOpExecutor **executor"])
        return f"aclnnStatus {self.api}({params});\n" + PHASE2_PROTOTYPE.format(op=self.op)

    def __str__(self) -> str:
        return f"{self.api}({', '.join(str(p) for p in self.params)})"

    @cached_property
    def values(self) -> tuple[tuple[int, Param, type, int, int], ...]:
        """(position, parameter, the Python type that needs no conversion, its range) of each
        plain C value (integers, floats, bools, char*): what ``c_values`` checks."""
        out = []
        for i, p in enumerate(self.params):
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


def c_values(sig: Signature, args: tuple) -> tuple:
    """``args`` of ``sig``'s phase 1 with each plain value checked against its C type and converted:
    integer types take an int (NumPy integers too, not bools; outside the C type's range is a
    ValueError), double/float an int or float, bool a bool, char* a str or None. A wrong Python
    type is a TypeError naming the C parameter, on both backends, before anything is allocated.
    A wrong argument count is left to the call (the library's, or the spec's, error)."""
    values = sig.values
    if not values or len(args) != len(sig.params):
        return args
    out: list[Any] | None = None
    for i, param, fast, lo, hi in values:  # the common case, a value of the right type, converts nothing
        value = args[i]
        if type(value) is fast and (lo > hi or lo <= args[i] <= hi):
            continue
        if out is None:
            out = list(args)
        out[i] = _convert(sig.api, param, value)
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
    return TypeError(f"{api}: {param.name} ({_short(param.ctype)}) must be {expected}, got "
                     f"{type(value).__name__} {value!r}{_HINTS.get(param.name, '')}")


_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)|__declspec\s*\([^()]*\)")
_EXTERN_C = re.compile(r'extern\s+"C"\s*\{?')
_MACROS = re.compile(r"\b(?:ACLNN_API|ACL_FUNC_VISIBILITY|OP_API_EXPORT|__EXPORT__|extern|static|inline)\b")
_DECL = re.compile(r"\baclnn(\w+?)GetWorkspaceSize\s*\(([^()]*)\)\s*$", re.S)
_INDEX = re.compile(r"\baclnn(\w+?)GetWorkspaceSize\s*\(")


def index_header(text: str) -> list[str]:
    """Operator names declared in a header, without parsing it (comments are dropped first)."""
    return list(dict.fromkeys(_INDEX.findall(_COMMENTS.sub(" ", text))))


def _clean(text: str) -> str:
    text = _COMMENTS.sub(" ", text)
    text = _PREPROCESSOR.sub(" ", text)
    text = _ATTRIBUTE.sub(" ", text)
    text = _EXTERN_C.sub(" ", text)
    return _MACROS.sub(" ", text)


def parse_header(text: str) -> dict[str, Signature]:
    """Every operator whose phase 1 the header declares, by name ("Add"), in header order."""
    found: dict[str, Signature] = {}
    for statement in _clean(text).replace("{", ";").replace("}", ";").split(";"):
        match = _DECL.search(statement.strip())
        if match:
            op, params = match.group(1), match.group(2)
            found[op] = _signature(op, params)
    return found


def _signature(op: str, text: str) -> Signature:
    raw = [p.strip() for p in text.split(",")]
    if raw == ["void"] or raw == [""]:
        raw = []
    params = [_param(item, i) for i, item in enumerate(raw)]
    problem = None
    tail = [(_base(p.ctype), p.ctype.count("*")) for p in params[-2:]]
    if tail != list(_TAIL):
        return Signature(op, tuple(params), f"aclnn{op}GetWorkspaceSize does not end with "
                                            "(uint64_t *workspaceSize, aclOpExecutor **executor)")
    params = params[:-2]
    bad = [p for p in params if p.kind == "unsupported"]
    if bad:
        problem = "; ".join(f"parameter {p.name!r} has C type {p.ctype!r}, which pyaclnn cannot pass" for p in bad)
    return Signature(op, tuple(params), problem)


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
