"""aclnnMaxPool2dWithIndices: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn pooling/max_pool3d_with_argmax_v2/examples/test_aclnn_max_pool2d_with_indices.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/max_pool2d_with_indices_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    selfShape = [1, 1, 4, 3]
    outShape = [1, 1, 2, 1]
    indicesShape = [1, 1, 2, 1]
    kernelSizeData = [2, 2]
    strideData = [2, 2]
    paddingData = [0, 0]
    dilationData = [1, 1]
    selfHostData = np.array([0.0850, -0.5147, -0.0212, -0.5654, -0.3222, 0.5847,
                             1.7510, 0.9954, 0.1842, 0.8392, 0.4835, 0.9213], dtype=np.float32)
    outHostData = np.array([0, 0], dtype=np.float32)
    indicesHostData = np.array([0, 0], dtype=np.int32)
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)
    indicesDeviceAddr, indices = CreateAclTensor(indicesHostData, indicesShape, acl.ACL_INT32)
    kernelSize = acl.aclCreateIntArray(kernelSizeData, 2)
    stride = acl.aclCreateIntArray(strideData, 2)
    padding = acl.aclCreateIntArray(paddingData, 2)
    dilation = acl.aclCreateIntArray(dilationData, 2)
    ceilMode = False

    # 3. the two phases
    workspaceSize, executor = acl.aclnnMaxPool2dWithIndicesGetWorkspaceSize(self, kernelSize, stride, padding,
                                                                            dilation, ceilMode, out, indices)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnMaxPool2dWithIndices(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the results back
    size = GetShapeSize(outShape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %f\n", i, resultData[i])
    size1 = GetShapeSize(indicesShape)
    indicesResultData = np.zeros(size1, dtype=np.int32)
    acl.aclrtMemcpy(indicesResultData, indicesResultData.nbytes, indicesDeviceAddr, size1 * indicesResultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size1):
        LOG_PRINT("result[%d] is: %d\n", i, indicesResultData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(self)
    acl.aclDestroyTensor(out)
    acl.aclDestroyTensor(indices)
    # missing in the C++ sample, which leaks its four aclIntArrays:
    for array in (kernelSize, stride, padding, dilation):
        acl.aclDestroyIntArray(array)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    acl.aclrtFree(indicesDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
