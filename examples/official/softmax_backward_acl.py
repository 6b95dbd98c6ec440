"""aclnnSoftmaxBackward: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn activation/softmax_grad/examples/test_aclnn_softmax_grad.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/softmax_backward_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    gradOutputShape = [4, 2]
    outputShape = [4, 2]
    outShape = [4, 2]
    gradOutputHostData = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.float32)
    outputHostData = np.array([1, 1, 1, 2, 2, 2, 3, 3], dtype=np.float32)
    outHostData = np.array([0, 0, 0, 0, 0, 0, 0, 0], dtype=np.float32)
    gradOutputDeviceAddr, gradOutput = CreateAclTensor(gradOutputHostData, gradOutputShape, acl.ACL_FLOAT)
    outputDeviceAddr, output = CreateAclTensor(outputHostData, outputShape, acl.ACL_FLOAT)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)
    dim = 0

    # 3. the two phases
    workspaceSize, executor = acl.aclnnSoftmaxBackwardGetWorkspaceSize(gradOutput, output, dim, out)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnSoftmaxBackward(workspaceAddr, workspaceSize, executor, stream)

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
    acl.aclDestroyTensor(gradOutput)
    acl.aclDestroyTensor(output)
    acl.aclDestroyTensor(out)

    # 7. free device resources
    acl.aclrtFree(gradOutputDeviceAddr)
    acl.aclrtFree(outputDeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
