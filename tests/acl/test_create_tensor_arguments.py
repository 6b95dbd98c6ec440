"""aclCreateTensor checks its usual call inline (plain ints, lists or tuples of plain int64 ints:
it sits on every ported operator call) and everything else through pyaclnn._port.common's checks
one argument at a time. The two must say the same: each case runs once as given (the inline
path may take it) and once with its sequences as list subclasses, which only the common checks
take, on both backends; the outcome (the descriptor's shape, strides, offset, dtype and format,
or the exception's class and message) must be equal."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyaclnn import acl

I64_MAX, I64_MIN = 2 ** 63 - 1, -2 ** 63


class Dims(list):
    """A list the inline path does not take (its type is not list): the common checks judge it."""


def _cases(addr: int) -> list[tuple[str, tuple]]:
    f32, nd = acl.ACL_FLOAT, acl.ACL_FORMAT_ND
    ok = ([2, 3], 2, f32, [3, 1], 0, nd, [2, 3], 2, addr)
    cases = [("usual", ok),
             ("tuples", ((2, 3), 2, f32, (3, 1), 0, nd, (2, 3), 2, addr)),
             ("no strides", ([2, 3], 2, f32, None, 0, nd, [2, 3], 2, addr)),
             ("storage the same dims", ([2, 3], 2, f32, [3, 1], 0, nd, None, 2, addr)),
             ("storage wider", ([2, 3], 2, f32, [3, 1], 1, nd, [8], 1, addr)),
             ("stride at int64 max", ([2, 3], 2, f32, [I64_MAX, 1], 0, nd, [2, 3], 2, addr)),
             ("stride over int64", ([2, 3], 2, f32, [2 ** 63, 1], 0, nd, [2, 3], 2, addr)),
             ("stride under int64", ([2, 3], 2, f32, [I64_MIN - 1, 1], 0, nd, [2, 3], 2, addr)),
             ("fewer strides than viewDimsNum", ([2, 3], 2, f32, [], 0, nd, [2, 3], 2, addr)),
             ("more strides than viewDimsNum", ([2, 3], 2, f32, [3, 1, 1], 0, nd, [2, 3], 2, addr)),
             ("a bool dim", ([True, 3], 2, f32, [3, 1], 0, nd, [2, 3], 2, addr)),
             ("a float dim", ([2.0, 3], 2, f32, [3, 1], 0, nd, [2, 3], 2, addr)),
             ("a NumPy dim", ([np.int64(2), 3], 2, f32, [3, 1], 0, nd, [2, 3], 2, addr)),
             ("a NumPy array of dims", (np.array([2, 3]), 2, f32, [3, 1], 0, nd, [2, 3], 2, addr)),
             ("a count that does not match", ([2, 3], 3, f32, [3, 1], 0, nd, [2, 3], 2, addr)),
             ("a bool count", ([2], True, f32, [1], 0, nd, [2], 1, addr)),
             ("offset over int64", ([2, 3], 2, f32, [3, 1], 2 ** 63, nd, [2, 3], 2, addr)),
             ("format over int32", ([2, 3], 2, f32, [3, 1], 0, 2 ** 31, [2, 3], 2, addr)),
             ("format at int32 min", ([2, 3], 2, f32, [3, 1], 0, -2 ** 31, [2, 3], 2, addr)),
             ("dataType over int32", ([2, 3], 2, 2 ** 31, [3, 1], 0, nd, [2, 3], 2, addr)),
             ("dataType a NumPy type", ([2, 3], 2, np.float32, [3, 1], 0, nd, [2, 3], 2, addr)),
             ("address over 64 bits", ([2, 3], 2, f32, [3, 1], 0, nd, [2, 3], 2, 2 ** 64)),
             ("address None", ([2, 3], 2, f32, [3, 1], 0, nd, [2, 3], 2, None)),
             ("address a host array", ([2, 3], 2, f32, [3, 1], 0, nd, [2, 3], 2, np.zeros(6, np.float32)))]
    # "storage the same dims": the very list of the view dims (as CANN's samples pass it)
    return [(name, args if args[6] is not None else args[:6] + (args[0],) + args[7:]) for name, args in cases]


def _outcome(args: tuple) -> tuple:
    try:
        t = acl.aclCreateTensor(*args)
    except Exception as exc:  # noqa: BLE001 - the outcome compared is the exception itself
        return ("error", type(exc).__name__, str(exc))
    try:
        return ("ok", tuple(acl.aclGetViewShape(t)), tuple(acl.aclGetViewStrides(t)), acl.aclGetViewOffset(t),
                acl.aclGetDataType(t), acl.aclGetFormat(t), tuple(acl.aclGetStorageShape(t)))
    finally:
        acl.aclDestroyTensor(t)


def _as_dims(value: Any) -> Any:
    return Dims(value) if isinstance(value, (list, tuple)) else value


def test_the_inline_checks_say_what_the_common_checks_say(backend: str) -> None:
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    addr = acl.aclrtMalloc(1024, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    try:
        for name, args in _cases(addr):
            view, stride, storage = (_as_dims(args[i]) for i in (0, 3, 6))
            if args[6] is args[0]:
                storage = view  # the same object on both paths
            slow = (view,) + args[1:3] + (stride,) + args[4:6] + (storage,) + args[7:]
            assert _outcome(args) == _outcome(slow), name
        # and the inline path does take the usual call, and refuses what it must
        assert _outcome(_cases(addr)[0][1])[0] == "ok"
        assert _outcome(_cases(addr)[6][1])[:2] == ("error", "ValueError")
    finally:
        acl.aclrtFree(addr)
        acl.aclrtResetDevice(0)
