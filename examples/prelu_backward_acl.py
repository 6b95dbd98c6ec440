"""aclnnPreluBackward: the C++ sample of the CANN documentation, ported line by line.

Same structure and data as the sample, through ``pyaclnn.acl`` (the C names; out-parameters
are return values; a failing status raises ``pyaclnn.AclError`` instead of CHECK_RET).

Run it from the repository root with the Python of the virtual environment pyaclnn is
installed in (``.venv``, made by the README's set-up command)::

    .venv/bin/python examples/prelu_backward_acl.py

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
    # (fixed) AscendCL initialisation; this sample also creates its own context
    acl.aclInit(None)
    acl.aclrtSetDevice(deviceId)
    context = acl.aclrtCreateContext(deviceId)
    acl.aclrtSetCurrentContext(context)
    stream = acl.aclrtCreateStream()
    return context, stream


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
    # 1. (fixed) device/context/stream initialisation
    deviceId = 0
    context, stream = Init(deviceId)
    info = pyaclnn.backend_info()  # not in the C++ sample: say which backend runs it
    LOG_PRINT("backend: %s (SoC %s)\n", info["backend"], info["soc_name"])

    # 2. inputs and outputs
    selfShape = [4, 2]
    weightShape = [2]
    gradOutputShape = [4, 2]
    gradInputShape = [4, 2]
    gradWeightShape = [2]
    selfHostData = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.float32)
    weightHostData = np.array([0.5, 0.5], dtype=np.float32)
    gradOutputHostData = np.array([1, 1, 1, 1, 1, 1, 1, 1], dtype=np.float32)
    gradInputHostData = np.zeros(8, dtype=np.float32)
    gradWeightHostData = np.zeros(2, dtype=np.float32)
    weightDeviceAddr, weight = CreateAclTensor(weightHostData, weightShape, acl.ACL_FLOAT)
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    gradOutputDeviceAddr, gradOutput = CreateAclTensor(gradOutputHostData, gradOutputShape,
                                                       acl.ACL_FLOAT)
    gradInputDeviceAddr, gradInput = CreateAclTensor(gradInputHostData, gradInputShape,
                                                     acl.ACL_FLOAT)
    gradWeightDeviceAddr, gradWeight = CreateAclTensor(gradWeightHostData, gradWeightShape,
                                                       acl.ACL_FLOAT)

    # 3. the two phases: workspace size + executor, then launch
    workspaceSize, executor = acl.aclnnPreluBackwardGetWorkspaceSize(gradOutput, self, weight,
                                                                     gradInput, gradWeight)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnPreluBackward(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the two results back to the host
    gradInputSize = GetShapeSize(gradInputShape)
    gradInputResultData = np.zeros(gradInputSize, dtype=np.float32)
    acl.aclrtMemcpy(gradInputResultData, gradInputResultData.nbytes, gradInputDeviceAddr,
                    gradInputSize * 4, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(gradInputSize):
        LOG_PRINT("gradInput[%d] is: %f\n", i, gradInputResultData[i])
    gradWeightSize = GetShapeSize(gradWeightShape)
    gradWeightResultData = np.zeros(gradWeightSize, dtype=np.float32)
    acl.aclrtMemcpy(gradWeightResultData, gradWeightResultData.nbytes, gradWeightDeviceAddr,
                    gradWeightSize * 4, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(gradWeightSize):
        LOG_PRINT("gradWeight[%d] is: %f\n", i, gradWeightResultData[i])

    # 6. destroy the aclTensors
    acl.aclDestroyTensor(gradOutput)
    acl.aclDestroyTensor(self)
    acl.aclDestroyTensor(weight)
    acl.aclDestroyTensor(gradInput)
    acl.aclDestroyTensor(gradWeight)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(gradOutputDeviceAddr)
    acl.aclrtFree(weightDeviceAddr)
    acl.aclrtFree(gradInputDeviceAddr)
    acl.aclrtFree(gradWeightDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtDestroyContext(context)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except pyaclnn.AclError as e:  # what CHECK_RET + LOG_PRINT report in the C++ sample
        LOG_PRINT("%s failed. ERROR: %d\n%s\n", e.api, e.status, e)
        sys.exit(1)
