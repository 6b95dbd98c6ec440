"""pyaclnn.acl: every function headers/ declares, on both backends (acl through the emulator).

The oracle for "every function" is a plain scan of the header text (not pyaclnn's parser nor its
cffi declarations); values are checked against what was put in (shapes, sizes) or NumPy (fp16).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl

HEADERS = Path(__file__).resolve().parents[2] / "headers"


def declared_functions() -> list[str]:
    names = []
    for header in sorted(HEADERS.glob("*.h")):
        text = re.sub(r"/\*.*?\*/", "", header.read_text(), flags=re.S)
        names += re.findall(r"^[\w\s\*]*?\b(acl\w+)\s*\([^;]*\);", text, flags=re.M)
    return names


def test_every_declared_function_is_in_pyaclnn_acl():
    names = declared_functions()
    assert len(names) == len(set(names)) == 112  # abi.json's 93, Add, InplaceAdd, ReduceSum, AmpUpdateScale, Cat,
    #                                              ForeachMulScalarList, the capture API's 7 (abi_capture.json)
    missing = [n for n in names if not callable(getattr(acl, n, None))]
    assert not missing, missing


@pytest.fixture
def device(backend):
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    stream = acl.aclrtCreateStream()
    yield stream
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(0)


def _tensor(shape, dtype=None, addr=0, strides=None, offset=0):
    dtype = acl.ACL_FLOAT if dtype is None else dtype
    return acl.aclCreateTensor(shape, len(shape), dtype, strides, offset, acl.ACL_FORMAT_ND, shape, len(shape), addr)


def test_meta_objects_getters_and_sizes(device):
    addr = acl.aclrtMalloc(96, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    t = _tensor([2, 3], acl.ACL_FLOAT16, addr, strides=[1, 2], offset=1)
    assert acl.aclGetViewShape(t) == [2, 3] and acl.aclGetStorageShape(t) == [2, 3]
    assert acl.aclGetViewStrides(t) == [1, 2] and acl.aclGetViewOffset(t) == 1
    assert acl.aclGetDataType(t) == acl.ACL_FLOAT16 and acl.aclGetFormat(t) == acl.ACL_FORMAT_ND
    assert acl.aclGetRawTensorAddr(t) == addr
    acl.aclSetRawTensorAddr(t, addr + 32)
    assert acl.aclGetRawTensorAddr(t) == addr + 32
    acl.aclInitTensor(t, [4], 1, acl.ACL_INT32, None, 0, acl.ACL_FORMAT_ND, [4], 1, addr)
    assert acl.aclGetViewShape(t) == [4] and acl.aclGetDataType(t) == acl.ACL_INT32
    acl.aclDestroyTensor(t)

    ints = acl.aclCreateIntArray([1, 2, 3], 3)
    floats = acl.aclCreateFloatArray([0.5, 1.5], 2)
    bools = acl.aclCreateBoolArray([True], 1)
    assert (acl.aclGetIntArraySize(ints), acl.aclGetFloatArraySize(floats), acl.aclGetBoolArraySize(bools)) == (3, 2, 1)
    for destroy, h in ((acl.aclDestroyIntArray, ints), (acl.aclDestroyFloatArray, floats),
                       (acl.aclDestroyBoolArray, bools)):
        destroy(h)

    scalars = [acl.aclCreateScalar(2.5, acl.ACL_FLOAT), acl.aclCreateScalar(7, acl.ACL_INT64)]
    slist = acl.aclCreateScalarList(scalars, 2)
    tlist = acl.aclCreateTensorList([_tensor([1], addr=addr), _tensor([2], addr=addr)], 2)
    assert acl.aclGetScalarListSize(slist) == 2 and acl.aclGetTensorListSize(tlist) == 2
    acl.aclDestroyScalarList(slist)  # the lists own (and destroy) their elements
    acl.aclDestroyTensorList(tlist)
    single = acl.aclCreateScalar(np.array([3], np.int32).tobytes(), acl.ACL_INT32)  # a buffer: its bytes
    acl.aclDestroyScalar(single)
    acl.aclrtFree(addr)


def test_double_destroy_of_a_list_element_is_refused(device):
    """aclDestroyTensorList destroyed the element: destroying it again is a stale handle."""
    t = _tensor([1])
    tlist = acl.aclCreateTensorList([t], 1)
    acl.aclDestroyTensorList(tlist)
    with pytest.raises(pyaclnn.AclnnParamInvalidError):
        acl.aclDestroyTensorList(tlist)


def test_runtime_functions(device):
    stream = device
    addr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemsetAsync(addr, 64, 7, 64, stream)
    acl.aclrtSynchronizeStreamWithTimeout(stream, -1)
    acl.aclrtSynchronizeDevice()
    host = np.zeros(64, np.uint8)
    acl.aclrtMemcpy(host, 64, addr, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert (host == 7).all()
    acl.aclrtFree(addr)
    event = acl.aclrtCreateEventWithFlag(acl.ACL_EVENT_SYNC)
    acl.aclrtRecordEvent(event, stream)
    acl.aclrtStreamWaitEvent(stream, event)
    acl.aclrtSynchronizeEvent(event)
    assert acl.aclrtQueryEventStatus(event) == acl.ACL_EVENT_RECORDED_STATUS_COMPLETE
    acl.aclrtDestroyEvent(event)
    assert acl.aclrtGetRunMode() == acl.ACL_HOST
    assert acl.aclGetDeviceCapability(0, acl.ACL_DEVICE_INFO_AI_CORE_NUM) > 0
    assert acl.aclrtGetDeviceInfo(0, acl.ACL_DEV_ATTR_AICORE_CORE_NUM) > 0
    acl.aclnnInit(None)
    acl.aclnnFinalize()


def test_last_error_is_returned_not_raised(device):
    acl.aclrtGetLastError(0)
    with pytest.raises(pyaclnn.AclError) as info:
        acl.aclrtSetDevice(99)
    acl.aclGetRecentErrMsg()
    assert acl.aclrtPeekAtLastError(0) == info.value.status
    assert acl.aclrtGetLastError(0) == info.value.status
    assert acl.aclrtGetLastError(0) == 0


@pytest.mark.parametrize("value", [0.0, 1.0, -2.5, 65504.0, 1e-8, 70000.0, float("inf"), 0.1, 3.14159])
def test_fp16_conversions_match_torch(value):
    torch = pytest.importorskip("torch")
    half = torch.tensor(value, dtype=torch.float32).to(torch.float16)
    bits = acl.aclFloatToFloat16(value)
    assert bits == int(half.view(torch.int16).item()) & 0xFFFF
    assert acl.aclFloat16ToFloat(bits) == float(half.item())


def test_versions_on_the_emulator(emulator):
    assert acl.aclsysGetVersionStr("cann") == "8.1.RC1"
    assert acl.aclsysGetVersionNum("cann") == 8010100
    assert acl.aclsysGetCANNVersion(acl.ACL_PKG_NAME_CANN)["version"] == "8.1.RC1"
    assert acl.aclrtGetVersion() == (1, 13, 0)


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError):
        acl.aclNoSuchFunction  # noqa: B018
    with pytest.raises(AttributeError):
        acl.aclnnlowercase  # noqa: B018  (lower case after aclnn: no operator name)


def test_phase_2_with_a_null_executor_is_161001(device):
    """opbase CommonOpExecutorRun checks ``executor != nullptr`` first: ACLNN_ERR_PARAM_NULLPTR,
    on both backends (the NumPy runtime said 561103, 'not live')."""
    with pytest.raises(pyaclnn.AclnnParamNullptrError, match="executor"):
        acl.aclnnMseLossBackward(None, 0, None, device)  # the fixture yields a stream
