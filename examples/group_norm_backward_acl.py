"""aclnnGroupNormBackward: the C++ sample of the CANN documentation, ported line by line.

Same structure and data as the sample, through ``pyaclnn.acl`` (the C names; out-parameters
are return values; a failing status raises ``pyaclnn.AclError`` instead of CHECK_RET).

Run it from the repository root with the Python of the virtual environment pyaclnn is
installed in (``.venv``, made by the README's set-up command)::

    .venv/bin/python examples/group_norm_backward_acl.py

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
    gradOutShape = [2, 3, 4]
    inputShape = [2, 3, 4]
    meanShape = [2, 1]
    rstdShape = [2, 1]
    gammaShape = [3]
    gradInputShape = [2, 3, 4]
    gradGammaOutShape = [3]
    gradBetaOutShape = [3]
    gradOutHostData = np.arange(1.0, 25.0, dtype=np.float32)  # 1.0, 2.0, ..., 24.0
    inputHostData = np.arange(1.0, 25.0, dtype=np.float32)
    meanHostData = np.array([6.5, 18.5], dtype=np.float32)
    rstdHostData = np.array([0.2896827, 0.2896827], dtype=np.float32)
    gammaHostData = np.array([1.0, 1.0, 1.0], dtype=np.float32)
    gradInputHostData = np.zeros(24, dtype=np.float32)
    gradGammaOutHostData = np.zeros(3, dtype=np.float32)
    gradBetaOutHostData = np.zeros(3, dtype=np.float32)
    N = 2
    C = 3
    HxW = 4
    group = 1
    outputMaskData = [True, True, True]
    gradOutDeviceAddr, gradOut = CreateAclTensor(gradOutHostData, gradOutShape, acl.ACL_FLOAT)
    inputDeviceAddr, input = CreateAclTensor(inputHostData, inputShape, acl.ACL_FLOAT)
    meanDeviceAddr, mean = CreateAclTensor(meanHostData, meanShape, acl.ACL_FLOAT)
    rstdDeviceAddr, rstd = CreateAclTensor(rstdHostData, rstdShape, acl.ACL_FLOAT)
    gammaDeviceAddr, gamma = CreateAclTensor(gammaHostData, gammaShape, acl.ACL_FLOAT)
    outputMask = acl.aclCreateBoolArray(outputMaskData, len(outputMaskData))
    gradInputDeviceAddr, gradInput = CreateAclTensor(gradInputHostData, gradInputShape,
                                                     acl.ACL_FLOAT)
    gradGammaOutDeviceAddr, gradGammaOut = CreateAclTensor(gradGammaOutHostData, gradGammaOutShape,
                                                           acl.ACL_FLOAT)
    gradBetaOutDeviceAddr, gradBetaOut = CreateAclTensor(gradBetaOutHostData, gradBetaOutShape,
                                                         acl.ACL_FLOAT)

    # 3. the two phases: workspace size + executor, then launch
    workspaceSize, executor = acl.aclnnGroupNormBackwardGetWorkspaceSize(
        gradOut, input, mean, rstd, gamma, N, C, HxW, group, outputMask, gradInput, gradGammaOut,
        gradBetaOut)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnGroupNormBackward(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the three results back to the host
    size = GetShapeSize(gradInputShape)
    gradInputResultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(gradInputResultData, gradInputResultData.nbytes, gradInputDeviceAddr, size * 4,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("gradInputResultData[%d] is: %f\n", i, gradInputResultData[i])
    size = GetShapeSize(gradGammaOutShape)
    gradGammaOutResultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(gradGammaOutResultData, gradGammaOutResultData.nbytes, gradGammaOutDeviceAddr,
                    size * 4, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("gradGammaOutResultData[%d] is: %f\n", i, gradGammaOutResultData[i])
    size = GetShapeSize(gradBetaOutShape)
    gradBetaOutResultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(gradBetaOutResultData, gradBetaOutResultData.nbytes, gradBetaOutDeviceAddr,
                    size * 4, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("gradBetaOutResultData[%d] is: %f\n", i, gradBetaOutResultData[i])

    # 6. destroy the aclTensors and the bool array
    acl.aclDestroyTensor(gradOut)
    acl.aclDestroyTensor(input)
    acl.aclDestroyTensor(mean)
    acl.aclDestroyTensor(rstd)
    acl.aclDestroyTensor(gamma)
    acl.aclDestroyBoolArray(outputMask)
    acl.aclDestroyTensor(gradInput)
    acl.aclDestroyTensor(gradGammaOut)
    acl.aclDestroyTensor(gradBetaOut)

    # 7. free device resources
    acl.aclrtFree(gradOutDeviceAddr)
    acl.aclrtFree(inputDeviceAddr)
    acl.aclrtFree(meanDeviceAddr)
    acl.aclrtFree(rstdDeviceAddr)
    acl.aclrtFree(gammaDeviceAddr)
    acl.aclrtFree(gradInputDeviceAddr)
    acl.aclrtFree(gradGammaOutDeviceAddr)
    acl.aclrtFree(gradBetaOutDeviceAddr)
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
