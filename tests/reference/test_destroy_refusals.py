"""The reference runtime's aclDestroyTensor / aclDestroy{Bool,Int,Float}Array / aclDestroyScalar
(pyaclnn/_numpy/runtime/descriptors.py: each pops its handle itself, falling back to the session's
_destroy on a miss): a live handle is destroyed once; the same handle again, or one never made, is
refused with ACLNN_ERR_PARAM_INVALID naming the call; NULL is a no-op (acl_meta.h: they return
ACLNN_SUCCESS for nullptr; abi.md). Oracle: the runtime's live counts and the status codes."""
from __future__ import annotations

from typing import Any, Callable

import pytest

import pyaclnn
from pyaclnn._core.constants import ACLNN_ERR_PARAM_INVALID
from pyaclnn.dtypes import DType
from pyaclnn.errors import AclError

KINDS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "tensor": (lambda rt: rt.create_tensor((2,), int(DType.FLOAT), None, 0, 2, (2,), 0), "aclDestroyTensor", "aclTensor"),
    "bool_array": (lambda rt: rt.create_bool_array([True]), "aclDestroyBoolArray", "aclBoolArray"),
    "int_array": (lambda rt: rt.create_int_array([1, 2]), "aclDestroyIntArray", "aclIntArray"),
    "float_array": (lambda rt: rt.create_float_array([1.5]), "aclDestroyFloatArray", "aclFloatArray"),
    "scalar": (lambda rt: rt.create_scalar(2.5, int(DType.DOUBLE)), "aclDestroyScalar", "aclScalar"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_destroyed_or_unknown_handle_is_refused_and_null_is_a_no_op(use_backend: Callable[..., Any], kind: str) -> None:
    use_backend("numpy")
    make, api, what = KINDS[kind]
    with pyaclnn.Device(0) as device:
        rt = device.runtime
        destroy = getattr(rt, f"destroy_{kind}")
        before = rt.live_counts()[kind]
        handle = make(rt)
        other = make(rt)
        assert rt.live_counts()[kind] == before + 2
        destroy(handle)
        assert rt.live_counts()[kind] == before + 1
        for bad in (handle, handle + 1, 12345):  # destroyed, never made (an address inside one), never made
            with pytest.raises(AclError, match=rf"{api}.*{bad!r} is not a live {what}") as info:
                destroy(bad)
            assert info.value.status == ACLNN_ERR_PARAM_INVALID
        destroy(None)  # NULL: nothing to do
        assert rt.live_counts()[kind] == before + 1  # the refusals and NULL destroyed nothing else
        destroy(other)
        assert rt.live_counts()[kind] == before
