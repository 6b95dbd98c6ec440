"""The acl backend end to end, through the host emulator of the CANN ABI.

Discovery in both install layouts, loading by absolute path (no LD_LIBRARY_PATH), every
declared function called at least once with the signature of headers/, status -> exception
mapping with the library's message, and the stub toolkit (libraries but no device).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl

TESTS = Path(__file__).resolve().parents[1]


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "ASCEND_OPP_PATH")}
    clean["PYTHONPATH"] = os.pathsep.join([str(TESTS.parent), str(TESTS)])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**clean, **env}, timeout=60)


INFO = """
    import json, pyaclnn
    info = pyaclnn.backend_info()
    import numpy as np
    out = pyaclnn.mse_loss_backward(np.arange(4, dtype=np.float32), np.arange(4, dtype=np.float32),
                                    np.ones(4, np.float32))
    maps = open('/proc/self/maps').read()
    info['loaded'] = sorted({l.split('/')[-1] for l in maps.splitlines() if 'Ascend' in l or '/cann/' in l})
    info['out'] = out.tolist()
    print(json.dumps(info))
"""


def test_8x_layout_is_found_loaded_and_used_without_ld_library_path(emulator_home):
    result = run_python(INFO, PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(emulator_home))
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["backend"] == "acl" and info["paths"]["layout"] == "8.x"
    assert info["soc_name"] == "Ascend910B3" and info["soc"] == "Ascend910B"  # family from the SoC name
    assert info["cann_version"] == "8.1.RC1"
    assert info["paths"]["opapi"].endswith("/libopapi.so")
    assert info["out"] == [0.0, 0.0, 1.0, 3.0]  # the doc sample: 2*(x-1)*x / 4 with x=[0,1,2,3]


def test_9x_layout_prefers_acl_rt_and_opapi_nn(tmp_path):
    from emulator.build import build_toolkit
    home = build_toolkit(tmp_path, layout="9.x")
    result = run_python(INFO, PYACLNN_BACKEND="acl", ASCEND_TOOLKIT_HOME=str(home))
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["backend"] == "acl" and info["paths"]["layout"] == "9.x"
    assert info["paths"]["runtime"].endswith("/libacl_rt.so")
    assert info["paths"]["opapi"].endswith("/libopapi_nn.so")
    assert "libopapi.so" not in info["loaded"]  # never the aggregate library beside per-repo ones
    assert "libopapi_math.so" in info["loaded"]  # the DT_NEEDED dependency, preloaded by path


def test_ascend_home_path_wins_over_toolkit_home(emulator_home, tmp_path):
    result = run_python(INFO, PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(emulator_home),
                        ASCEND_TOOLKIT_HOME=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["paths"]["home"] == str(emulator_home)


def test_opp_path_is_set_from_the_install_when_missing(emulator_home):
    code = INFO.replace("print(json.dumps(info))", "import os; info['opp'] = os.environ.get('ASCEND_OPP_PATH'); print(json.dumps(info))")
    result = run_python(code, PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(emulator_home))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["opp"] == str(emulator_home / "opp")


def test_stub_toolkit_without_a_device_is_not_a_device(emulator_home):
    result = run_python(INFO, PYACLNN_BACKEND="auto", ASCEND_HOME_PATH=str(emulator_home), EMU_DEVICE_COUNT="0")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["backend"] == "numpy" and "0 devices" in info["reason"] and "stub" in info["reason"]
    result = run_python(INFO, PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(emulator_home), EMU_DEVICE_COUNT="0")
    assert result.returncode != 0 and "BackendUnavailableError" in result.stderr


def test_missing_libraries_are_reported_per_place_looked(tmp_path):
    (tmp_path / "lib64").mkdir()
    (tmp_path / "lib64" / "libascendcl.so").write_bytes(b"")
    from pyaclnn._acl._loader import discover
    old = os.environ.get("ASCEND_HOME_PATH")
    os.environ["ASCEND_HOME_PATH"] = str(tmp_path)
    try:
        found = discover()
    finally:
        os.environ.pop("ASCEND_HOME_PATH") if old is None else os.environ.__setitem__("ASCEND_HOME_PATH", old)
    assert not found.found
    assert any(str(tmp_path) in a and "libnnopbase.so" in a and "libopapi" in a for a in found.attempts)


def test_status_becomes_the_right_exception_with_the_library_message(emulator):
    emulator.fail("aclrtMalloc", 207001)
    with pytest.raises(pyaclnn.RtMemoryAllocationError) as info:
        pyaclnn.Tensor.empty((4,))
    err = info.value
    assert err.status == 207001 and err.api == "aclrtMalloc" and err.name == "ACL_ERROR_RT_MEMORY_ALLOCATION"
    assert err.cann_message and "aclrtMalloc" in err.cann_message
    assert isinstance(err, pyaclnn.AclResourceError)
    # the real library judges op arguments on acl: same class and status as the reference
    with pytest.raises(pyaclnn.AclnnParamInvalidError) as info:
        pyaclnn.mse_loss_backward(np.ones(2, np.float32), np.ones(2, np.float32), np.ones(3, np.float32))
    assert info.value.status == 161002 and info.value.api == "aclnnMseLossBackwardGetWorkspaceSize"
    assert info.value.cann_message  # copied from aclGetRecentErrMsg at once
    assert acl.aclGetRecentErrMsg() is None  # ...which clears it


def test_every_declared_function_is_called(emulator):
    """Drive pyaclnn's own paths, then call what pyaclnn does not use directly: all 93
    declared functions must reach the emulator with headers/' signatures."""
    from pyaclnn._acl._ffi import FUNCTIONS
    from pyaclnn._objects import backend as _backend
    from pyaclnn._acl._lib import ffi
    from pyaclnn._acl._lib import get as get_lib
    lib = get_lib()
    emulator.reset_counters()

    # pyaclnn's objects and functions: runtime, memory, tensors, the four ops, executors
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        e1, e2 = dev.create_event(), dev.create_event()
        e1.record(stream)
        x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
        pyaclnn.mse_loss_backward(x, x, x * 0.5)
        pyaclnn.group_norm_backward(x, x, np.zeros(2, np.float32), np.ones(2, np.float32), None, 2, 3, 4, 1)
        pyaclnn.cross_entropy_loss_grad(np.float32(1), np.log(np.full((3, 4), 0.25, np.float32)),
                                        np.array([0, 1, 3]), reduction="mean")
        pyaclnn.prelu_backward(x, x, np.full(3, 0.25, np.float32))
        tx = pyaclnn.Tensor.from_numpy(x)
        out = pyaclnn.Tensor.zeros(x.shape)
        with pyaclnn.MseLossBackward(tx, tx, tx, "sum", out, repeatable=True) as ex:
            ex.run(stream)
            ex.set_input(0, pyaclnn.Tensor.from_numpy(x))
            ex.set_output(0, pyaclnn.Tensor.zeros(x.shape))
            ex.run(stream)
        e2.record(stream)
        e2.synchronize()
        e1.elapsed_ms(e2)

    # the C-shaped layer
    acl.aclInit(None)  # again: 100002 ACL_ERROR_REPEAT_INITIALIZE is treated as success
    assert _backend.current().runtime.cann_version() == "8.1.RC1"  # aclsysGetVersionStr
    acl.aclrtSetDevice(0)
    acl.aclrtGetDevice(), acl.aclrtGetDeviceCount(), acl.aclrtGetSocName(), acl.aclrtGetMemInfo(acl.ACL_HBM_MEM)
    ctx = acl.aclrtCreateContext(0)
    acl.aclrtSetCurrentContext(ctx)
    assert acl.aclrtGetCurrentContext() is not None
    s = acl.aclrtCreateStream()
    host = acl.aclrtMallocHost(64)
    dev_ptr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemset(dev_ptr, 64, 0, 64)
    buf = np.arange(16, dtype=np.float32)
    acl.aclrtMemcpyAsync(dev_ptr, 64, buf, 64, acl.ACL_MEMCPY_HOST_TO_DEVICE, s)
    acl.aclrtSynchronizeStream(s)  # the async copy only queued: wait before reading
    acl.aclrtMemcpy(host, 64, dev_ptr, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    ints = acl.aclCreateIntArray([1, 2, 3], 3)
    acl.aclDestroyIntArray(ints)
    # graph capture: a memset captured, replayed once
    ev_ex = acl.aclrtCreateEventExWithFlag(acl.ACL_EVENT_SYNC)
    acl.aclmdlRICaptureBegin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    assert acl.aclmdlRICaptureGetInfo(s)[0] == acl.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
    acl.aclrtRecordEvent(ev_ex, s)
    acl.aclrtStreamWaitEvent(s, ev_ex)
    acl.aclrtMemsetAsync(dev_ptr, 64, 0, 64, s)
    assert acl.aclmdlRICaptureThreadExchangeMode(acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
    model = acl.aclmdlRICaptureEnd(s)
    acl.aclmdlRIExecuteAsync(model, s)
    acl.aclrtSynchronizeStream(s)
    acl.aclmdlRIDestroy(model)
    acl.aclrtDestroyEvent(ev_ex)

    # the rest, directly through the binding core (optional symbols and getters pyaclnn avoids)
    rt, nn = lib.rt, lib.nn
    i32 = ffi.new("int32_t[3]")
    i64 = ffi.new("int64_t *")
    u64 = ffi.new("uint64_t *")
    rt.aclsysGetCANNVersion(rt.ACL_PKG_NAME_CANN, ffi.new("aclCANNPackageVersion *"))
    rt.aclsysGetVersionNum(ffi.new("char[]", b"runtime"), i32)
    rt.aclrtGetVersion(i32, i32 + 1, i32 + 2)
    rt.aclrtGetRunMode(ffi.new("aclrtRunMode *"))
    rt.aclrtSynchronizeStreamWithTimeout(s, 1000)
    rt.aclrtSynchronizeDevice()
    rt.aclrtMemsetAsync(ffi.cast("void *", dev_ptr), 64, 0, 64, s)
    ev = ffi.new("aclrtEvent *")
    rt.aclrtCreateEventWithFlag(ev, rt.ACL_EVENT_SYNC)
    rt.aclrtRecordEvent(ev[0], s)
    rt.aclrtQueryEventStatus(ev[0], ffi.new("aclrtEventRecordedStatus *"))
    rt.aclrtStreamWaitEvent(s, ev[0])
    rt.aclrtDestroyEvent(ev[0])
    rt.aclrtGetLastError(rt.ACL_RT_THREAD_LEVEL)
    rt.aclrtPeekAtLastError(rt.ACL_RT_THREAD_LEVEL)
    rt.aclrtGetDeviceInfo(0, rt.ACL_DEV_ATTR_AICORE_CORE_NUM, i64)
    rt.aclGetDeviceCapability(0, rt.ACL_DEVICE_INFO_AI_CORE_NUM, i64)
    assert rt.aclDataTypeSize(rt.ACL_BF16) == 2
    assert rt.aclFloat16ToFloat(rt.aclFloatToFloat16(1.5)) == 1.5
    assert nn.aclnnInit(ffi.NULL) == 0
    value = ffi.new("float *", 2.0)
    scalar = nn.aclCreateScalar(value, rt.ACL_FLOAT)
    scalars = nn.aclCreateScalarList([nn.aclCreateScalar(value, rt.ACL_FLOAT)], 1)
    floats = nn.aclCreateFloatArray(ffi.new("float[]", [1.0, 2.0]), 2)
    bools = nn.aclCreateBoolArray(ffi.new("bool[]", [True]), 1)
    dims = ffi.new("int64_t[]", [4, 4])
    t1 = nn.aclCreateTensor(dims, 2, rt.ACL_FLOAT, ffi.NULL, 0, rt.ACL_FORMAT_ND, dims, 2, ffi.cast("void *", dev_ptr))
    t2 = nn.aclCreateTensor(dims, 2, rt.ACL_FLOAT, ffi.NULL, 0, rt.ACL_FORMAT_ND, dims, 2, ffi.cast("void *", dev_ptr))
    tlist = nn.aclCreateTensorList([t2], 1)
    pp, n = ffi.new("int64_t **"), ffi.new("uint64_t *")
    for getter in (nn.aclGetViewShape, nn.aclGetStorageShape, nn.aclGetViewStrides):
        assert getter(t1, pp, n) == 0  # the array is new[]'d in CANN: Python cannot free it
    nn.aclGetViewOffset(t1, i64)
    nn.aclGetFormat(t1, ffi.new("aclFormat *"))
    nn.aclGetDataType(t1, ffi.new("aclDataType *"))
    nn.aclGetIntArraySize(ffi.NULL, n)
    nn.aclGetFloatArraySize(floats, n)
    nn.aclGetBoolArraySize(bools, n)
    nn.aclGetTensorListSize(tlist, n)
    nn.aclGetScalarListSize(scalars, n)
    nn.aclInitTensor(t1, dims, 2, rt.ACL_FLOAT, ffi.NULL, 0, rt.ACL_FORMAT_ND, dims, 2, ffi.cast("void *", dev_ptr))
    nn.aclSetRawTensorAddr(t1, ffi.cast("void *", dev_ptr))
    nn.aclGetRawTensorAddr(t1, ffi.new("void **"))
    out_t = nn.aclCreateTensor(dims, 2, rt.ACL_FLOAT, ffi.NULL, 0, rt.ACL_FORMAT_ND, dims, 2, ffi.cast("void *", dev_ptr))
    size, exe = ffi.new("uint64_t *"), ffi.new("aclOpExecutor **")
    assert lib.op.aclnnMseLossBackwardGetWorkspaceSize(t1, t1, t1, 2, out_t, size, exe) == 0
    nn.aclSetAclOpExecutorRepeatable(exe[0])
    nn.aclSetTensorAddr(exe[0], 0, t1, ffi.cast("void *", dev_ptr))
    nn.aclSetDynamicInputTensorAddr(exe[0], 0, 0, tlist, ffi.cast("void *", dev_ptr))   # no list params: 161002
    nn.aclSetDynamicOutputTensorAddr(exe[0], 0, 0, tlist, ffi.cast("void *", dev_ptr))
    nn.aclSetDynamicTensorAddr(exe[0], 0, 0, tlist, ffi.cast("void *", dev_ptr))
    assert nn.aclDestroyAclOpExecutor(exe[0]) == 0
    # the ops-nn operator beyond abi.json the op library exports too: in place on t2 (lists, scalar list)
    assert lib.op.aclnnForeachMulScalarListGetWorkspaceSize(tlist, scalars, tlist, size, exe) == 0
    assert lib.op.aclnnForeachMulScalarList(ffi.NULL, 0, exe[0], s) == 0
    for destroy, handle in ((nn.aclDestroyScalar, scalar), (nn.aclDestroyScalarList, scalars),
                            (nn.aclDestroyFloatArray, floats), (nn.aclDestroyBoolArray, bools),
                            (nn.aclDestroyTensorList, tlist), (nn.aclDestroyTensor, t1), (nn.aclDestroyTensor, out_t)):
        assert destroy(handle) == 0
    assert nn.aclnnFinalize() == 0
    lib.rt.aclGetRecentErrMsg()  # clear what the dynamic-address calls left

    acl.aclrtSynchronizeStream(s)  # the queued memset and event work, before the free
    acl.aclrtFree(dev_ptr)
    acl.aclrtFreeHost(host)
    acl.aclrtDestroyStream(s)
    acl.aclrtDestroyContext(ctx)
    acl.aclrtResetDevice(0)
    _backend.reset_for_tests()  # closes what is left, then gives back pyaclnn's two aclInit references
    assert emulator.live("init") == 0  # (aclFinalizeReference: the last one finalized)
    assert rt.aclInit(ffi.NULL) == 0 and rt.aclInit(ffi.NULL) == 100002
    rt.aclFinalizeReference(u64)  # the reference-counted finalize: 2 -> 1
    assert u64[0] == 1 and emulator.live("init") == 1
    rt.aclFinalize()  # ends the session whatever the count

    declared = [f for names in FUNCTIONS.values() for f in names]
    assert len(declared) == 102  # abi.json's 93, aclnnForeachMulScalarList's two, the capture API's 7
    never = [f for f in declared if emulator.calls(f) == 0]
    assert not never, f"never called: {never}"
    assert emulator.misuse() == 0, emulator.last_misuse()
