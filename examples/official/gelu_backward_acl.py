"""aclnnGeluBackward: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn activation/gelu_grad/examples/test_aclnn_gelu_backward.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.
Its gradOutput is int32 (self float32): the op promotes the two (aclnn_gelu_backward.cpp
CheckPromoteType) and computes in float32.

    .venv/bin/python examples/official/gelu_backward_acl.py
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
    gradOutputShape = [4, 2]
    gradInputShape = [4, 2]
    selfHostData = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.float32)
    gradOutputHostData = np.array([1, 1, 1, 1, 1, 1, 1, 1], dtype=np.int32)  # std::vector<int>: an int32 gradient
    gradInputHostData = np.array([0, 0, 0, 0, 0, 0, 0, 0], dtype=np.int32)
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    gradOutputDeviceAddr, gradOutput = CreateAclTensor(gradOutputHostData, gradOutputShape, acl.ACL_INT32)
    gradInputDeviceAddr, gradInput = CreateAclTensor(gradInputHostData, gradInputShape, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnGeluBackwardGetWorkspaceSize(gradOutput, self, gradInput)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnGeluBackward(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back
    size = GetShapeSize(gradInputShape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, gradInputDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %f\n", i, resultData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(gradOutput)
    acl.aclDestroyTensor(self)
    acl.aclDestroyTensor(gradInput)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(gradOutputDeviceAddr)
    acl.aclrtFree(gradInputDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
