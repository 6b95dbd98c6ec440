"""aclnnMseLossBackward: the C++ sample of the CANN documentation, ported line by line.

Same structure and data as the sample, through ``pyaclnn.acl`` (the C names; out-parameters
are return values; a failing status raises ``pyaclnn.AclError`` instead of CHECK_RET).

Run it from the repository root with the Python of the virtual environment pyaclnn is
installed in (``.venv``, made by the README's set-up command)::

    .venv/bin/python examples/mse_loss_backward_acl.py

It runs on an Ascend device when CANN finds one, else on the NumPy reference backend
(``PYACLNN_BACKEND=numpy`` chooses it, ``acl`` requires the device); the first line it
prints names the backend.
"""
import sys

import numpy as np

import pyaclnn
from pyaclnn import acl


def LOG_PRINT(message, *args):
    print(message % args, end="")


def GetShapeSize(shape):
    shapeSize = 1
    for i in shape:
        shapeSize *= i
    return shapeSize


def Init(deviceId):
    # (fixed) AscendCL initialisation
    acl.aclInit(None)
    acl.aclrtSetDevice(deviceId)
    return acl.aclrtCreateStream()


def CreateAclTensor(hostData, shape, dataType):
    """aclrtMalloc + aclrtMemcpy to the device + aclCreateTensor; returns (deviceAddr, tensor)."""
    size = GetShapeSize(shape) * hostData.itemsize
    # aclrtMalloc: device memory
    deviceAddr = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    # aclrtMemcpy: host data to the device
    acl.aclrtMemcpy(deviceAddr, size, hostData, size, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    # strides of a contiguous tensor
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    # aclCreateTensor
    tensor = acl.aclCreateTensor(shape, len(shape), dataType, strides, 0, acl.ACL_FORMAT_ND,
                                 shape, len(shape), deviceAddr)
    return deviceAddr, tensor


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)
    info = pyaclnn.backend_info()  # not in the C++ sample: say which backend runs it
    LOG_PRINT("backend: %s (SoC %s)\n", info["backend"], info["soc_name"])

    # 2. inputs and outputs
    gradOutputShape = [2, 2]
    selfShape = [2, 2]
    targetShape = [2, 2]
    outShape = [2, 2]
    gradOutputHostData = np.array([0, 1, 2, 3], dtype=np.float32)
    selfHostData = np.array([0, 1, 2, 3], dtype=np.float32)
    targetHostData = np.array([1, 1, 1, 1], dtype=np.float32)
    outHostData = np.zeros(4, dtype=np.float32)
    gradOutputDeviceAddr, gradOutput = CreateAclTensor(gradOutputHostData, gradOutputShape,
                                                       acl.ACL_FLOAT)
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    targetDeviceAddr, target = CreateAclTensor(targetHostData, targetShape, acl.ACL_FLOAT)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)
    reduction = 1  # mean

    # 3. the two phases: workspace size + executor, then launch
    workspaceSize, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(gradOutput, self, target,
                                                                       reduction, out)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnMseLossBackward(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back to the host
    size = GetShapeSize(outShape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %f\n", i, resultData[i])

    # 6. destroy the aclTensors
    acl.aclDestroyTensor(gradOutput)
    acl.aclDestroyTensor(self)
    acl.aclDestroyTensor(target)
    acl.aclDestroyTensor(out)

    # 7. free device resources
    acl.aclrtFree(gradOutputDeviceAddr)
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(targetDeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except pyaclnn.AclError as e:  # what CHECK_RET + LOG_PRINT report in the C++ sample
        LOG_PRINT("%s failed. ERROR: %d\n%s\n", e.api, e.status, e)
        sys.exit(1)
