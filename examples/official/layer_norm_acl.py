"""aclnnLayerNorm: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn norm/layer_norm_v4/examples/test_aclnn_layer_norm_v4.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.
The sample splits CreateAclTensor in two (CreateAclTensorMem: malloc + copy; aclCreateTensorP:
the descriptor); here both are CreateAclTensor.

    .venv/bin/python examples/official/layer_norm_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    xShape = [1, 2, 32]
    normShape = [32]
    meanShape = [1, 2, 1]
    xHostData = np.full(64, 2.0, dtype=np.float32)
    normData = [32]
    weightHostData = np.full(32, 1.0, dtype=np.float32)
    biasHostData = np.full(32, 0.0, dtype=np.float32)
    outHostData = np.full(64, 0.0, dtype=np.float32)
    meanHostData = np.full(2, 0.0, dtype=np.float32)
    rstdHostData = np.full(2, 0.0, dtype=np.float32)
    eps = 1e-5
    xDeviceAddr, x = CreateAclTensor(xHostData, xShape, acl.ACL_FLOAT)
    norm = acl.aclCreateIntArray(normData, len(normData))
    weightDeviceAddr, weight = CreateAclTensor(weightHostData, normShape, acl.ACL_FLOAT)
    biasDeviceAddr, bias = CreateAclTensor(biasHostData, normShape, acl.ACL_FLOAT)
    outDeviceAddr, out = CreateAclTensor(outHostData, xShape, acl.ACL_FLOAT)
    meanDeviceAddr, mean = CreateAclTensor(meanHostData, meanShape, acl.ACL_FLOAT)
    rstdDeviceAddr, rstd = CreateAclTensor(rstdHostData, meanShape, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnLayerNormGetWorkspaceSize(x, norm, weight, bias, eps, out, mean, rstd)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnLayerNorm(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the three results back
    size = GetShapeSize(xShape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("out result[%d] is: %f\n", i, resultData[i])
    size1 = GetShapeSize(meanShape)
    resultData1 = np.zeros(size1, dtype=np.float32)
    acl.aclrtMemcpy(resultData1, resultData1.nbytes, meanDeviceAddr, size1 * resultData1.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size1):
        LOG_PRINT("mean result[%d] is: %f\n", i, resultData1[i])
    size2 = GetShapeSize(meanShape)
    resultData2 = np.zeros(size2, dtype=np.float32)
    acl.aclrtMemcpy(resultData2, resultData2.nbytes, rstdDeviceAddr, size2 * resultData2.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size2):
        LOG_PRINT("rstd result[%d] is: %f\n", i, resultData2[i])

    # 6. destroy the aclTensors and the aclIntArray
    acl.aclDestroyTensor(x)
    acl.aclDestroyIntArray(norm)
    acl.aclDestroyTensor(weight)
    acl.aclDestroyTensor(bias)
    acl.aclDestroyTensor(out)
    acl.aclDestroyTensor(mean)
    acl.aclDestroyTensor(rstd)

    # 7. free device resources
    acl.aclrtFree(xDeviceAddr)
    acl.aclrtFree(weightDeviceAddr)
    acl.aclrtFree(biasDeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    acl.aclrtFree(meanDeviceAddr)
    acl.aclrtFree(rstdDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
