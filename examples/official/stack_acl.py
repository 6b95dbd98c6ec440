"""aclnnStack: the official example of hicann/ops-math, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-math conversion/pack/examples/test_aclnn_stack.cpp
(commit c41933244c31e44fd496e3bb3212164f8c48c214). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.

    .venv/bin/python examples/official/stack_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    selfShape1 = [2, 3]
    selfShape2 = [2, 3]
    outShape = [2, 2, 3]
    input1HostData = np.array([1, 2, 3, 4, 5, 6], dtype=np.float32)
    input2HostData = np.array([7, 8, 9, 10, 11, 12], dtype=np.float32)
    outHostData = np.zeros(12, dtype=np.float32)
    input1DeviceAddr, input1 = CreateAclTensor(input1HostData, selfShape1, acl.ACL_FLOAT)
    input2DeviceAddr, input2 = CreateAclTensor(input2HostData, selfShape2, acl.ACL_FLOAT)
    tmp = [input1, input2]
    tensorList = acl.aclCreateTensorList(tmp, len(tmp))
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)
    dim = 0

    # 3. the two phases
    workspaceSize, executor = acl.aclnnStackGetWorkspaceSize(tensorList, dim, out)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnStack(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back
    size = GetShapeSize(outShape)
    outData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(outData, outData.nbytes, outDeviceAddr, size * outData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("out result[%d] is: %f\n", i, outData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensorList(tensorList)  # destroys input1 and input2 too
    acl.aclDestroyTensor(out)

    # 7. free device resources
    acl.aclrtFree(input1DeviceAddr)
    acl.aclrtFree(input2DeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
