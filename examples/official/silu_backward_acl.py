"""aclnnSiluBackward: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn activation/silu_grad/examples/test_aclnn_silu_grad.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/silu_backward_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    gradOutputShape = [2, 3]
    selfShape = [2, 3]
    gradInputShape = [2, 3]
    gradOutHostData = np.array([1, 1, 1, 1, 1, 1], dtype=np.float32)
    selfHostData = np.array([1, 2, 3, 4, 5, 6], dtype=np.float32)
    gradInputHostData = np.array([0, 0, 0, 0, 0, 0], dtype=np.float32)
    gradOutDeviceAddr, gradOut = CreateAclTensor(gradOutHostData, gradOutputShape, acl.ACL_FLOAT)
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    gradInputDeviceAddr, gradInput = CreateAclTensor(gradInputHostData, gradInputShape, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnSiluBackwardGetWorkspaceSize(gradOut, self, gradInput)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnSiluBackward(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back
    size = GetShapeSize(gradInputShape)
    outData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(outData, outData.nbytes, gradInputDeviceAddr, size * outData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("out result[%d] is: %f\n", i, outData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(gradOut)
    acl.aclDestroyTensor(self)
    acl.aclDestroyTensor(gradInput)

    # 7. free device resources
    acl.aclrtFree(gradOutDeviceAddr)
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(gradInputDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
