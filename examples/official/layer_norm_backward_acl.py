"""aclnnLayerNormBackward: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn norm/layer_norm_grad_v3/examples/test_aclnn_layer_norm_grad_v3.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/layer_norm_backward_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    xShape = [2, 2]
    meanShape = [2, 1]
    normShape = [2]
    dyHostData = np.array([2, 3, 4, 5], dtype=np.float32)
    xHostData = np.array([2, 3, 4, 5], dtype=np.float32)
    normData = [2]
    meanHostData = np.array([2, 3], dtype=np.float32)
    rstdHostData = np.array([4, 5], dtype=np.float32)
    weightHostData = np.array([1, 1], dtype=np.float32)
    biasHostData = np.array([0, 0], dtype=np.float32)
    outHostData = np.zeros(4, dtype=np.float32)
    dwHostData = np.zeros(2, dtype=np.float32)
    dbHostData = np.zeros(2, dtype=np.float32)
    dyDeviceAddr, dy = CreateAclTensor(dyHostData, xShape, acl.ACL_FLOAT)
    xDeviceAddr, x = CreateAclTensor(xHostData, xShape, acl.ACL_FLOAT)
    norm = acl.aclCreateIntArray(normData, 1)
    meanDeviceAddr, mean = CreateAclTensor(meanHostData, meanShape, acl.ACL_FLOAT)
    rstdDeviceAddr, rstd = CreateAclTensor(rstdHostData, meanShape, acl.ACL_FLOAT)
    weightDeviceAddr, weight = CreateAclTensor(weightHostData, normShape, acl.ACL_FLOAT)
    biasDeviceAddr, bias = CreateAclTensor(biasHostData, normShape, acl.ACL_FLOAT)
    maskData = [True, True, True]
    mask = acl.aclCreateBoolArray(maskData, 3)
    outDeviceAddr, out = CreateAclTensor(outHostData, xShape, acl.ACL_FLOAT)
    dwDeviceAddr, dw = CreateAclTensor(dwHostData, normShape, acl.ACL_FLOAT)
    dbDeviceAddr, db = CreateAclTensor(dbHostData, normShape, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnLayerNormBackwardGetWorkspaceSize(dy, x, norm, mean, rstd, weight, bias,
                                                                         mask, out, dw, db)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnLayerNormBackward(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the three results back
    size = GetShapeSize(xShape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("out result[%d] is: %f\n", i, resultData[i])
    size1 = GetShapeSize(normShape)
    resultData1 = np.zeros(size1, dtype=np.float32)
    acl.aclrtMemcpy(resultData1, resultData1.nbytes, dwDeviceAddr, size1 * resultData1.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size1):
        LOG_PRINT("dw result[%d] is: %f\n", i, resultData1[i])
    size2 = GetShapeSize(normShape)
    resultData2 = np.zeros(size2, dtype=np.float32)
    acl.aclrtMemcpy(resultData2, resultData2.nbytes, dbDeviceAddr, size2 * resultData2.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size2):
        LOG_PRINT("db result[%d] is: %f\n", i, resultData2[i])

    # 6. destroy the aclTensors and arrays
    acl.aclDestroyTensor(dy)
    acl.aclDestroyTensor(x)
    acl.aclDestroyIntArray(norm)
    acl.aclDestroyTensor(mean)
    acl.aclDestroyTensor(rstd)
    acl.aclDestroyTensor(weight)
    acl.aclDestroyTensor(bias)
    acl.aclDestroyBoolArray(mask)
    acl.aclDestroyTensor(out)
    acl.aclDestroyTensor(dw)
    acl.aclDestroyTensor(db)

    # 7. free device resources
    for addr in (dyDeviceAddr, xDeviceAddr, meanDeviceAddr, rstdDeviceAddr, weightDeviceAddr, biasDeviceAddr,
                 outDeviceAddr, dwDeviceAddr, dbDeviceAddr):
        acl.aclrtFree(addr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
