"""aclnnSub: the official example of hicann/ops-math, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-math math/sub/examples/test_aclnn_sub.cpp
(commit c41933244c31e44fd496e3bb3212164f8c48c214). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.
The sample then runs aclnnInplaceSub on self (its heading line says aclnnInplaceAcos: printed as is).

    .venv/bin/python examples/official/sub_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    shape = [4, 2]
    selfHostData = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.float32)
    otherHostData = np.array([2, 2, 2, 2, 2, 2, 2, 2], dtype=np.float32)
    outHostData = np.array([0, 0, 0, 0, 0, 0, 0, 0], dtype=np.float32)
    alphaValue = 1.2
    selfDeviceAddr, self = CreateAclTensor(selfHostData, shape, acl.ACL_FLOAT)
    otherDeviceAddr, other = CreateAclTensor(otherHostData, shape, acl.ACL_FLOAT)
    alpha = acl.aclCreateScalar(alphaValue, acl.ACL_FLOAT)
    outDeviceAddr, out = CreateAclTensor(outHostData, shape, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnSubGetWorkspaceSize(self, other, alpha, out)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnSub(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back
    size = GetShapeSize(shape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %f\n", i, resultData[i])

    # 3'. aclnnInplaceSub on self, the same way
    LOG_PRINT("\ntest aclnnInplaceAcos\n")
    if workspaceSize > 0:  # not in the sample: it reuses workspaceAddr and leaks the first workspace
        acl.aclrtFree(workspaceAddr)
    workspaceSize, executor = acl.aclnnInplaceSubGetWorkspaceSize(self, other, alpha)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnInplaceSub(workspaceAddr, workspaceSize, executor, stream)
    acl.aclrtSynchronizeStream(stream)
    acl.aclrtMemcpy(resultData, resultData.nbytes, selfDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %f\n", i, resultData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(self)
    acl.aclDestroyTensor(other)
    acl.aclDestroyScalar(alpha)
    acl.aclDestroyTensor(out)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(otherDeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
