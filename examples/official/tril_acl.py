"""aclnnTril: the official example of hicann/ops-math, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-math conversion/tril/examples/test_aclnn_tril.cpp
(commit c41933244c31e44fd496e3bb3212164f8c48c214). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.
The sample queues aclnnTril (self -> out) and then aclnnInplaceTril (self) on the same stream,
and synchronizes once before reading both: stream order makes the first read self before the
second writes it.

    .venv/bin/python examples/official/tril_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    selfShape = [3, 3]
    outShape = [3, 3]
    selfHostData = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=np.int32)  # std::vector<int>
    outHostData = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=np.int32)
    diagonal = 0
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_INT32)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_INT32)

    # 3. the two phases of aclnnTril, then of aclnnInplaceTril, on one stream
    workspaceSize, executor = acl.aclnnTrilGetWorkspaceSize(self, diagonal, out)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnTril(workspaceAddr, workspaceSize, executor, stream)
    inplaceWorkspaceSize, inplaceExecutor = acl.aclnnInplaceTrilGetWorkspaceSize(self, diagonal)
    inplaceWorkspaceAddr = None
    if inplaceWorkspaceSize > 0:
        inplaceWorkspaceAddr = acl.aclrtMalloc(inplaceWorkspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnInplaceTril(inplaceWorkspaceAddr, inplaceWorkspaceSize, inplaceExecutor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the two results back
    size = GetShapeSize(outShape)
    resultData = np.zeros(size, dtype=np.int32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %d\n", i, resultData[i])
    inplaceSize = GetShapeSize(selfShape)
    inplaceResultData = np.zeros(inplaceSize, dtype=np.int32)
    acl.aclrtMemcpy(inplaceResultData, inplaceResultData.nbytes, selfDeviceAddr,
                    inplaceSize * inplaceResultData.itemsize, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(inplaceSize):
        LOG_PRINT("inplaceResult[%d] is: %d\n", i, inplaceResultData[i])

    # 6. destroy the aclTensors
    acl.aclDestroyTensor(self)
    acl.aclDestroyTensor(out)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    if inplaceWorkspaceSize > 0:  # missing in the C++ sample, which leaks the second workspace
        acl.aclrtFree(inplaceWorkspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
