"""aclnnGeluV2: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn activation/gelu_v2/examples/test_aclnn_gelu_v2.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/gelu_v2_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    xShape = [4, 2]
    yShape = [4, 2]
    xHostData = np.array([1.3, 2.5, 6.7, -4, -1.4, -1.6, -8, -16.9], dtype=np.float32)
    yHostData = np.array([0, 0, 0, 0, 0, 0, 0, 0], dtype=np.float32)
    xDeviceAddr, x = CreateAclTensor(xHostData, xShape, acl.ACL_FLOAT)
    yDeviceAddr, y = CreateAclTensor(yHostData, yShape, acl.ACL_FLOAT)
    approximate = 0  # the sample passes 0: 'none', the erf form

    # 3. the two phases
    workspaceSize, executor = acl.aclnnGeluV2GetWorkspaceSize(x, approximate, y)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnGeluV2(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back
    size = GetShapeSize(yShape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, yDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %f\n", i, resultData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(x)
    acl.aclDestroyTensor(y)

    # 7. free device resources
    acl.aclrtFree(xDeviceAddr)
    acl.aclrtFree(yDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
