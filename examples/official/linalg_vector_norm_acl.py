"""aclnnLinalgVectorNorm: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn norm/lp_norm_v2/examples/test_aclnn_LinalgVectorNorm.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/linalg_vector_norm_acl.py
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
    outShape = [1, 2]
    selfHostData = np.array([0.1, 1.1, 2.1, 3.1, 4.1, 5.1, 6.1, 7.1], dtype=np.float32)
    outHostData = np.array([0.0, 0.0], dtype=np.float32)
    dimData = [0]
    pValue = 2.0
    keepDims = True
    dtype = acl.ACL_FLOAT
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)
    ord = acl.aclCreateScalar(pValue, acl.ACL_FLOAT)
    dims = acl.aclCreateIntArray(dimData, 1)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnLinalgVectorNormGetWorkspaceSize(self, ord, dims, keepDims, dtype, out)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnLinalgVectorNorm(workspaceAddr, workspaceSize, executor, stream)

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
    acl.aclDestroyIntArray(dims)
    acl.aclDestroyScalar(ord)
    acl.aclDestroyTensor(out)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
