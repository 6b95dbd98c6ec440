"""The fixed part every official ops-math/ops-nn example repeats, ported once through ``pyaclnn.acl``.

Each ``examples/test_aclnn_<op>.cpp`` of hicann/ops-math and hicann/ops-nn opens with the same
helpers (``CHECK_RET``, ``LOG_PRINT``, ``GetShapeSize``, ``Init``, ``CreateAclTensor``); the
ports in this folder import them from here and port only the sample's ``main()``, line by line.

What changes from C++ (docs/guide/porting.md): out-parameters are return values, host vectors
are NumPy arrays (the C++ element type is the array's dtype), and a failing status raises the
``pyaclnn.AclError`` of that status, which :func:`run` reports as ``CHECK_RET``/``LOG_PRINT`` do.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

import pyaclnn
from pyaclnn import acl


def LOG_PRINT(message: str, *args: Any) -> None:
    """printf(message, ...): the samples' LOG_PRINT."""
    print(message % args, end="")


def GetShapeSize(shape: list[int]) -> int:
    shapeSize = 1
    for i in shape:
        shapeSize *= i
    return shapeSize


def Init(deviceId: int) -> int:
    """aclInit + aclrtSetDevice + aclrtCreateStream (the samples' fixed initialisation); returns
    the stream. Not in the C++: the first printed line names the backend that runs the port."""
    acl.aclInit(None)
    acl.aclrtSetDevice(deviceId)
    stream = acl.aclrtCreateStream()
    info = pyaclnn.backend_info()
    LOG_PRINT("backend: %s (SoC %s)\n", info["backend"], info["soc_name"])
    return stream


def CreateAclTensor(hostData: np.ndarray, shape: list[int], dataType: int) -> tuple[int, int]:
    """aclrtMalloc + aclrtMemcpy (host to device) + aclCreateTensor of a contiguous ND tensor;
    returns (deviceAddr, tensor). ``hostData``'s dtype is the C++ vector's element type."""
    size = GetShapeSize(shape) * hostData.itemsize
    deviceAddr = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemcpy(deviceAddr, size, hostData, size, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    # strides of a contiguous tensor
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    tensor = acl.aclCreateTensor(shape, len(shape), dataType, strides, 0, acl.ACL_FORMAT_ND,
                                 shape, len(shape), deviceAddr)
    return deviceAddr, tensor


def run(main: Callable[[], int]) -> None:
    """Run ``main`` as the sample's ``main()``: a failing status is printed as CHECK_RET and
    LOG_PRINT print it ("<api> failed. ERROR: <status>") and the exit status is 1."""
    try:
        sys.exit(main())
    except pyaclnn.AclError as e:
        LOG_PRINT("%s failed. ERROR: %d\n%s\n", e.api, e.status, e)
        sys.exit(1)
