"""aclnnSort: the official example of hicann/ops-math, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-math math/sort/examples/test_aclnn_sort.cpp
(commit c41933244c31e44fd496e3bb3212164f8c48c214). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.
The sample releases through shared_ptr/unique_ptr guards; here in the same order, explicitly.

    .venv/bin/python examples/official/sort_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    stable = False
    dim = 0
    descending = False
    selfShape = [3, 4]
    outValuesShape = [3, 4]
    outIndicesShape = [3, 4]
    selfHostData = np.array([7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6], dtype=np.int64)
    outValuesHostData = np.zeros(12, dtype=np.int64)
    outIndicesHostData = np.zeros(12, dtype=np.int64)
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_INT64)
    outValuesDeviceAddr, outValues = CreateAclTensor(outValuesHostData, outValuesShape, acl.ACL_INT64)
    outIndicesDeviceAddr, outIndices = CreateAclTensor(outIndicesHostData, outIndicesShape, acl.ACL_INT64)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnSortGetWorkspaceSize(self, stable, dim, descending, outValues, outIndices)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnSort(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the results back
    size = GetShapeSize(outValuesShape)
    resultData = np.zeros(size, dtype=np.int64)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outValuesDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result values [%d] is: %d\n", i, resultData[i])
    size1 = GetShapeSize(outIndicesShape)
    resultData2 = np.zeros(size1, dtype=np.int64)
    acl.aclrtMemcpy(resultData2, resultData2.nbytes, outIndicesDeviceAddr, size1 * resultData2.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size1):
        LOG_PRINT("result indices [%d] is: %d\n", i, resultData2[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(self)
    acl.aclDestroyTensor(outValues)
    acl.aclDestroyTensor(outIndices)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(outValuesDeviceAddr)
    acl.aclrtFree(outIndicesDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
