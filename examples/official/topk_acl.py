"""aclnnTopk: the official example of hicann/ops-math, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-math math/topk/docs/aclnnTopk.md
(commit c41933244c31e44fd496e3bb3212164f8c48c214). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.
The operator has no examples/ file; its documentation page's sample is the source.

    .venv/bin/python examples/official/topk_acl.py
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
    outShape = [2, 2]
    selfHostData = np.array([0, 1, 2.5, 3, 4, 5.5, 6, 7], dtype=np.float32)
    outHostData = np.array([0, 1, 2, 3.1], dtype=np.float32)
    indicesHostData = np.array([0, 1, 2, 3], dtype=np.int64)
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)
    indicesDeviceAddr, indices = CreateAclTensor(indicesHostData, outShape, acl.ACL_INT64)
    k = 2
    dim = 1
    largest = True
    sorted = True

    # 3. the two phases
    workspaceSize, executor = acl.aclnnTopkGetWorkspaceSize(self, k, dim, largest, sorted, out, indices)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnTopk(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the results back
    size = GetShapeSize(outShape)
    outData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(outData, outData.nbytes, outDeviceAddr, size * outData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("out[%d] is: %f\n", i, outData[i])
    size1 = GetShapeSize(outShape)
    indicesData = np.zeros(size1, dtype=np.int64)
    acl.aclrtMemcpy(indicesData, indicesData.nbytes, indicesDeviceAddr, size1 * indicesData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size1):
        LOG_PRINT("indices[%d] is: %d\n", i, indicesData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(self)
    acl.aclDestroyTensor(out)
    acl.aclDestroyTensor(indices)

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
