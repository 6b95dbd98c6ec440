"""aclnnInplaceMuls: the official example of hicann/ops-math, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-math math/muls/examples/test_aclnn_inplace_muls.cpp
(commit c41933244c31e44fd496e3bb3212164f8c48c214). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/inplace_muls_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    selfRefShape = [4, 2]
    outShape = [4, 2]
    selfRefHostData = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.float32)
    otherValue = 1.2
    selfRefDeviceAddr, selfRef = CreateAclTensor(selfRefHostData, selfRefShape, acl.ACL_FLOAT)
    other = acl.aclCreateScalar(otherValue, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnInplaceMulsGetWorkspaceSize(selfRef, other)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnInplaceMuls(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back
    size = GetShapeSize(selfRefShape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, selfRefDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %f\n", i, resultData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(selfRef)
    acl.aclDestroyScalar(other)

    # 7. free device resources
    acl.aclrtFree(selfRefDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
