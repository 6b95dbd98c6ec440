"""aclnnBatchMatMul: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn matmul/batch_mat_mul_v3/examples/test_aclnn_batchmatmul.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.
The sample releases its tensors and device memory through std::unique_ptr at the end of main(),
after aclFinalize; here they are released in order, before the stream.

    .venv/bin/python examples/official/batch_mat_mul_acl.py
"""
import numpy as np

from _sample import CreateAclTensor, GetShapeSize, Init, LOG_PRINT, run
from pyaclnn import acl


def main():
    # 1. (fixed) device/stream initialisation
    deviceId = 0
    stream = Init(deviceId)

    # 2. inputs and outputs
    selfShape = [1, 2, 3]
    mat2Shape = [1, 3, 4]
    outShape = [1, 2, 4]
    selfHostData = np.array([0, 1, 2, 3, 4, 5], dtype=np.float32)
    mat2HostData = np.array([1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4], dtype=np.float32)
    outHostData = np.zeros(8, dtype=np.float32)  # 8=outShape[1]*outShape[2]
    cubeMathType = 1  # ALLOW_FP32_DOWN_PRECISION (the reference computes float32 exactly)
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    mat2DeviceAddr, mat2 = CreateAclTensor(mat2HostData, mat2Shape, acl.ACL_FLOAT)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnBatchMatMulGetWorkspaceSize(self, mat2, out, cubeMathType)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnBatchMatMul(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back
    size = GetShapeSize(outShape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %f\n", i, resultData[i])

    # 6./7. release (the sample's unique_ptrs)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclDestroyTensor(out)
    acl.aclrtFree(outDeviceAddr)
    acl.aclDestroyTensor(mat2)
    acl.aclrtFree(mat2DeviceAddr)
    acl.aclDestroyTensor(self)
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
