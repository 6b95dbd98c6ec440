"""aclnnVarMean: the official example of hicann/ops-math, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-math math/reduce_var/examples/test_aclnn_reduce_var_mean.cpp
(commit c41933244c31e44fd496e3bb3212164f8c48c214). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/var_mean_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    selfShape = [2, 4]
    outShape = [2, 1]
    selfHostData = np.array([0.0, 1.1, 2, 3, 4, 5, 6, 7], dtype=np.float32)
    dimData = [1]
    correction = 1
    keepdim = True
    varHostData = np.array([0.0, 0], dtype=np.float32)
    meanHostData = np.array([0.0, 0], dtype=np.float32)
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    dim = acl.aclCreateIntArray(dimData, len(dimData))
    varDeviceAddr, var = CreateAclTensor(varHostData, outShape, acl.ACL_FLOAT)
    meanDeviceAddr, mean = CreateAclTensor(meanHostData, outShape, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnVarMeanGetWorkspaceSize(self, dim, correction, keepdim, var, mean)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnVarMean(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the results back
    size = GetShapeSize(outShape)
    meanData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(meanData, meanData.nbytes, meanDeviceAddr, size * meanData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("meanResult[%d] is: %f\n", i, meanData[i])
    size1 = GetShapeSize(outShape)
    varData = np.zeros(size1, dtype=np.float32)
    acl.aclrtMemcpy(varData, varData.nbytes, varDeviceAddr, size1 * varData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size1):
        LOG_PRINT("varResult[%d] is: %f\n", i, varData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(self)
    acl.aclDestroyIntArray(dim)
    acl.aclDestroyTensor(mean)
    acl.aclDestroyTensor(var)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(varDeviceAddr)
    acl.aclrtFree(meanDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
