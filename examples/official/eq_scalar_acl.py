"""aclnnEqScalar: the official example of hicann/ops-math, ported line by line through ``pyaclnn.acl``.

Source: hicann/ops-math math/equal/examples/test_aclnn_eq_scalar.cpp
(commit c41933244c31e44fd496e3bb3212164f8c48c214). Same data, shapes and printed lines; the
fixed helpers (Init, CreateAclTensor, LOG_PRINT) are in _sample.py.
The sample's helpers CreateInputs and ExecOpApi are inlined.

    .venv/bin/python examples/official/eq_scalar_acl.py
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
    outShape = [4, 2]
    # CreateInputs
    selfHostData = np.array([0, 1, 1.2, 0.3, 4.1, 5, 1.6, 7], dtype=np.float64)  # std::vector<double>
    outHostData = np.array([0, 0, 0, 0, 0, 0, 0, 0], dtype=np.int8)  # std::vector<char>, for an ACL_BOOL tensor
    otherValue = 1.2
    selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, acl.ACL_DOUBLE)
    other = acl.aclCreateScalar(otherValue, acl.ACL_DOUBLE)
    outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_BOOL)

    # 3. the two phases
    workspaceSize, executor = acl.aclnnEqScalarGetWorkspaceSize(self, other, out)
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnEqScalar(workspaceAddr, workspaceSize, executor, stream)

    # 4. (fixed) wait for the stream
    acl.aclrtSynchronizeStream(stream)

    # 5. copy the result back
    size = GetShapeSize(outShape)
    resultData = np.zeros(size, dtype=np.int8)
    acl.aclrtMemcpy(resultData, resultData.nbytes, outDeviceAddr, size * resultData.itemsize,
                    acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i in range(size):
        LOG_PRINT("result[%d] is: %d\n", i, resultData[i])

    # 6. destroy the aclTensors (and scalars, arrays)
    acl.aclDestroyTensor(self)
    acl.aclDestroyScalar(other)
    acl.aclDestroyTensor(out)

    # 7. free device resources
    acl.aclrtFree(selfDeviceAddr)
    acl.aclrtFree(outDeviceAddr)
    if workspaceSize > 0:
        acl.aclrtFree(workspaceAddr)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(deviceId)
    acl.aclFinalize()
    return 0


if __name__ == "__main__":
    run(main)
