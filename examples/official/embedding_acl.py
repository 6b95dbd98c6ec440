"""aclnnEmbedding: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn index/embedding/examples/test_aclnn_embedding.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/embedding_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    weightShape = [10, 3]
    indicesShape = [4]
    outShape = [4, 3]
    weightHostData = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                               16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30], dtype=np.float32)
    indicesHostData = np.array([1, 2, 3, 4], dtype=np.int64)
    outHostData = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=np.float32)
    weightDeviceAddr, weight = CreateAclTensor(weightHostData, weightShape, acl.ACL_FLOAT)
    indicesDeviceAddr, indices = CreateAclTensor(indicesHostData, indicesShape, acl.ACL_INT64)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnEmbeddingGetWorkspaceSize(weight, indices, out)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnEmbedding(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back
    size = GetShapeSize(outShape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("resultData[%d] is: %f\n", i, resultData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(weight)
    acl.aclDestroyTensor(indices)
    acl.aclDestroyTensor(out)

    # 7. free device resources
    acl.aclrtFree(weightDeviceAddr)
    acl.aclrtFree(indicesDeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
