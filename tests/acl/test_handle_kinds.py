"""A raw handle of the wrong kind given to pyaclnn.acl: the same error on both backends.

Where an acl_meta.h handle goes (aclTensor *, aclScalar *, the arrays and lists, aclOpExecutor *),
a live handle of another of those types is a TypeError naming the function, the C parameter and
its type (pyaclnn._objects.handles.refused). Before, the acl backend gave cffi's own TypeError ("initializer
for ctype 'aclTensor *' must be a pointer to same type, not cdata 'aclScalar *'") and the NumPy
backend a status (161002 "not a live aclTensor", 561103 for a list element).
aclrtStream / aclrtEvent are both ``void *`` in acl_base.h: one given for the other reaches the
runtime, whose handle check answers 107000 (hicann/runtime runtime_handle_guard.cc), on both.

Oracle: the C parameter names and types of headers/ (acl_meta.h, aclnn_base.h, the op's header).
"""
from __future__ import annotations

import gc
import re

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl, errors
from conftest import live_handles

F32 = np.float32


def _wrong(api: str, slot: str, ctype: str, made: str, got: str) -> str:
    word = ctype.replace("const ", "").rstrip(" *")
    return rf"^{api}: {slot} \({re.escape(ctype)}\) takes an {word} handle \({re.escape(made)}\).*; got an {got} handle$"


def test_a_handle_of_another_meta_type_names_the_c_parameter(backend: str) -> None:
    before = live_handles()
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        addr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        t = acl.aclCreateTensor([4], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], 1, addr)
        scalar = acl.aclCreateScalar(np.float32(2), acl.ACL_FLOAT)
        ints = acl.aclCreateIntArray([1, 2], 2)
        try:
            cases = [
                (lambda: acl.aclGetViewShape(scalar), _wrong("aclGetViewShape", "tensor", "aclTensor *",
                                                             "acl.aclCreateTensor", "aclScalar")),
                (lambda: acl.aclnnMseLossBackwardGetWorkspaceSize(t, scalar, t, 0, t),
                 _wrong("aclnnMseLossBackwardGetWorkspaceSize", "self", "const aclTensor *", "acl.aclCreateTensor",
                        "aclScalar")),
                (lambda: acl.aclnnMseLossBackwardGetWorkspaceSize(t, pyaclnn.Tensor.zeros(4), ints, 0, t),
                 _wrong("aclnnMseLossBackwardGetWorkspaceSize", "target", "const aclTensor *",
                        "acl.aclCreateTensor", "aclIntArray")),
                (lambda: acl.aclCreateTensorList([t, scalar], 2),
                 _wrong("aclCreateTensorList", r"value\[1\]", "aclTensor *", "acl.aclCreateTensor", "aclScalar")),
                (lambda: acl.aclDestroyScalar(t), _wrong("aclDestroyScalar", "scalar", "aclScalar *",
                                                         "acl.aclCreateScalar", "aclTensor")),
                (lambda: acl.aclnnMseLossBackward(None, 0, t, stream),
                 _wrong("aclnnMseLossBackward", "executor", "aclOpExecutor *",
                        "acl.aclnn<Op>GetWorkspaceSize", "aclTensor")),
                (lambda: acl.aclDestroyAclOpExecutor(scalar),
                 _wrong("aclDestroyAclOpExecutor", "executor", "aclOpExecutor *",
                        "acl.aclnn<Op>GetWorkspaceSize", "aclScalar")),
            ]
            for call, message in cases:
                with pytest.raises(TypeError, match=message):
                    call()
            ws, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(t, t, t, 0, t)
            acl.aclSetAclOpExecutorRepeatable(executor)
            with pytest.raises(TypeError, match=_wrong("aclSetInputTensorAddr", "tensor", "aclTensor *",
                                                       "acl.aclCreateTensor", "aclIntArray")):
                acl.aclSetInputTensorAddr(executor, 0, ints, addr)
            with pytest.raises(TypeError, match=_wrong("aclSetInputTensorAddr", "executor", "aclOpExecutor *",
                                                       "acl.aclnn<Op>GetWorkspaceSize", "aclTensor")):
                acl.aclSetInputTensorAddr(t, 0, t, addr)
            acl.aclDestroyAclOpExecutor(executor)
            assert acl.aclGetViewShape(t) == [4]   # nothing was consumed or destroyed by the refusals
        finally:
            acl.aclDestroyIntArray(ints)
            acl.aclDestroyScalar(scalar)
            acl.aclDestroyTensor(t)
            acl.aclrtFree(addr)
    gc.collect()
    assert live_handles() == before


def test_an_event_for_a_stream_is_the_runtimes_107000(backend: str) -> None:
    """Both void * to C (acl_base.h): the runtime's own handle check refuses them, on both."""
    with pyaclnn.Device(0) as device, device.create_stream() as stream, device.create_event() as event:
        raw_stream, raw_event = acl.aclrtCreateStream(), acl.aclrtCreateEvent()
        try:
            for call in (lambda: acl.aclrtSynchronizeStream(raw_event), lambda: acl.aclrtRecordEvent(raw_stream, stream)):
                with pytest.raises(errors.RtParamInvalidError) as info:
                    call()
                assert info.value.status == 107000
        finally:
            acl.aclrtDestroyEvent(raw_event)
            acl.aclrtDestroyStream(raw_stream)
        assert event.handle and stream.handle
