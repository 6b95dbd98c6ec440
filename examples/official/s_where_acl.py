"""aclnnSWhere: the official example of hicann/ops-math, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-math math/select/examples/test_aclnn_s_where.cpp
(commit c41933244c31e44fd496e3bb3212164f8c48c214). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/s_where_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    selfShape = [4, 2]
    otherShape = [4, 2]
    conditionShape = [4, 2]
    outShape = [4, 2]
    selfHostData = np.array([0, 0, 0, 0, 0, 0, 0, 7], dtype=np.float32)
    otherHostData = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.float32)
    conditionHostData = np.array([False, False, False, False, True, True, True, True], dtype=np.int8)
    outHostData = np.array([10, 10, 10, 10, 10, 10, 10, 10], dtype=np.float32)
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    otherDeviceAddr, other = CreateAclTensor(otherHostData, otherShape, acl.ACL_FLOAT)
    conditionDeviceAddr, condition = CreateAclTensor(conditionHostData, conditionShape, acl.ACL_BOOL)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnSWhereGetWorkspaceSize(condition, self, other, out)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnSWhere(workspaceAddr, workspaceSize, executor, stream)

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
    acl.aclDestroyTensor(other)
    acl.aclDestroyTensor(condition)
    acl.aclDestroyTensor(out)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(otherDeviceAddr)
    acl.aclrtFree(conditionDeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
