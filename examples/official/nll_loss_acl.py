"""aclnnNLLLoss: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn loss/nll_loss/examples/test_aclnn_nll_loss.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/nll_loss_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    selfShape = [2, 3]
    targetShape = [2]
    weightShape = [3]
    outShape = [2]
    totalWeightOutShape = [1]
    selfHostData = np.array([0, 1, 2, 3, 4, 5], dtype=np.float32)
    targetHostData = np.array([0, 2], dtype=np.int32)
    weightHostData = np.array([1.1, 1.2, 1.3], dtype=np.float32)
    outHostData = np.zeros(2, dtype=np.float32)
    totalWeightOutHostData = np.zeros(1, dtype=np.float32)
    reduction = 0  # none
    ignoreIndex = -100
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    targetDeviceAddr, target = CreateAclTensor(targetHostData, targetShape, acl.ACL_INT32)
    weightDeviceAddr, weight = CreateAclTensor(weightHostData, weightShape, acl.ACL_FLOAT)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)
    totalWeightOutDeviceAddr, totalWeightOut = CreateAclTensor(
        totalWeightOutHostData, totalWeightOutShape, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnNLLLossGetWorkspaceSize(self, target, weight, reduction, ignoreIndex, out,
                                                               totalWeightOut)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnNLLLoss(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back
    size = GetShapeSize(outShape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %f\n", i, resultData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(self)
    acl.aclDestroyTensor(target)
    acl.aclDestroyTensor(weight)
    acl.aclDestroyTensor(out)
    acl.aclDestroyTensor(totalWeightOut)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(targetDeviceAddr)
    acl.aclrtFree(weightDeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    acl.aclrtFree(totalWeightOutDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
