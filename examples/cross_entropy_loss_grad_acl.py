"""aclnnCrossEntropyLossGrad in the structure of the CANN C++ samples (its documentation
page has no sample): N = 4, C = 3, reduction "mean", ignoreIndex -100, with a class weight.

Same structure as the other samples, through ``pyaclnn.acl`` (the C names; out-parameters
are return values; a failing status raises ``pyaclnn.AclError`` instead of CHECK_RET).

Run it from the repository root with the Python of the virtual environment pyaclnn is
installed in (``.venv``, made by the README's set-up command)::

    .venv/bin/python examples/cross_entropy_loss_grad_acl.py

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

    # 2. inputs and outputs: N = 4 samples, C = 3 classes, reduction "mean"
    gradLossShape = []  # 0-D for mean/sum; (N,) for none
    logProbShape = [4, 3]
    targetShape = [4]
    weightShape = [3]
    outShape = [4, 3]
    logits = np.array([[1.0, 2.0, 0.5],
                       [0.1, 0.2, 3.0],
                       [2.0, -1.0, 0.0],
                       [0.5, 0.5, 1.5]], dtype=np.float64)
    # logProb is the forward log_softmax result
    logProbHostData = (logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
                       ).astype(np.float32).ravel()
    gradLossHostData = np.array([1.0], dtype=np.float32)
    targetHostData = np.array([1, 2, 0, 2], dtype=np.int64)
    weightHostData = np.array([0.2, 0.3, 0.5], dtype=np.float32)
    outHostData = np.zeros(12, dtype=np.float32)
    gradLossDeviceAddr, gradLoss = CreateAclTensor(gradLossHostData, gradLossShape, acl.ACL_FLOAT)
    logProbDeviceAddr, logProb = CreateAclTensor(logProbHostData, logProbShape, acl.ACL_FLOAT)
    targetDeviceAddr, target = CreateAclTensor(targetHostData, targetShape, acl.ACL_INT64)
    weightDeviceAddr, weight = CreateAclTensor(weightHostData, weightShape, acl.ACL_FLOAT)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)
    reduction = "mean"
    ignoreIndex = -100
    labelSmoothing = 0.0  # only 0.0 is supported
    lseSquareScaleForZloss = 0.0  # only 0.0 is supported (no zloss)

    # 3. the two phases: workspace size + executor, then launch (gradZloss, lseForZloss: nullptr)
    workspaceSize, executor = acl.aclnnCrossEntropyLossGradGetWorkspaceSize(
        gradLoss, logProb, target, weight, None, None, reduction, ignoreIndex, labelSmoothing,
        lseSquareScaleForZloss, out)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnCrossEntropyLossGrad(workspaceAddr, workspaceSize, executor, stream)

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
    acl.aclDestroyTensor(gradLoss)
    acl.aclDestroyTensor(logProb)
    acl.aclDestroyTensor(target)
    acl.aclDestroyTensor(weight)
    acl.aclDestroyTensor(out)

    # 7. free device resources
    acl.aclrtFree(gradLossDeviceAddr)
    acl.aclrtFree(logProbDeviceAddr)
    acl.aclrtFree(targetDeviceAddr)
    acl.aclrtFree(weightDeviceAddr)
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
