"""aclnnAddmm: the official example of hicann/ops-nn, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-nn matmul/mat_mul_v3/examples/test_aclnn_addmm_aclnninplace_addmm.cpp
(commit e5c3fa9327ea95ba26d06227e746923580d10921). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.
The sample then runs aclnnInplaceAddmm on self. It releases its tensors and device memory
through std::unique_ptr when main() returns, after aclFinalize; here before the stream.

    .venv/bin/python examples/official/addmm_acl.py
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
    mat1Shape = [2, 3]
    mat2Shape = [3, 4]
    outShape = [2, 4]
    selfHostData = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.float32)
    mat1HostData = np.array([1, 1, 1, 2, 2, 2], dtype=np.float32)
    mat2HostData = np.array([1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4], dtype=np.float32)
    outHostData = np.zeros(8, dtype=np.float32)
    cubeMathType = 1  # ALLOW_FP32_DOWN_PRECISION (the reference computes float32 exactly)
    alphaValue = 1.2
    betaValue = 1.0
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    mat1DeviceAddr, mat1 = CreateAclTensor(mat1HostData, mat1Shape, acl.ACL_FLOAT)
    mat2DeviceAddr, mat2 = CreateAclTensor(mat2HostData, mat2Shape, acl.ACL_FLOAT)
    alpha = acl.aclCreateScalar(alphaValue, acl.ACL_FLOAT)
    beta = acl.aclCreateScalar(betaValue, acl.ACL_FLOAT)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnAddmmGetWorkspaceSize(self, mat1, mat2, beta, alpha, out, cubeMathType)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnAddmm(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back
    size = GetShapeSize(outShape)
    resultData = np.zeros(size, dtype=np.float32)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %f\n", i, resultData[i])

    # aclnnInplaceAddmm on self, the same way
    LOG_PRINT("\ntest aclnnInplaceAddmm\n")
    workspaceSizeForInplace, executor = acl.aclnnInplaceAddmmGetWorkspaceSize(self, mat1, mat2, beta, alpha,
                                                                              cubeMathType)
    workspaceAddrForInplace = None
    if workspaceSizeForInplace > 0:
        workspaceAddrForInplace = acl.aclrtMalloc(workspaceSizeForInplace, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnInplaceAddmm(workspaceAddrForInplace, workspaceSizeForInplace, executor, stream)
    acl.aclrtSynchronizeStream(stream)
    acl.aclrtMemcpy(resultData, resultData.nbytes, selfDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %f\n", i, resultData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyScalar(beta)
    acl.aclDestroyScalar(alpha)
    acl.aclDestroyTensor(self)
    acl.aclDestroyTensor(mat1)
    acl.aclDestroyTensor(mat2)
    acl.aclDestroyTensor(out)
    if workspaceSizeForInplace > 0:
        acl.aclrtFree(workspaceAddrForInplace)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(mat1DeviceAddr)
    acl.aclrtFree(mat2DeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
