"""Python-level misuse gets a clear error naming the argument and the fix, the same class on
both backends (the reference, and acl through the emulator), raised before any allocation.

Each case failed before (issue 12 point 6): a TypeError from deep inside (output_mask=True,
reduction="mean" in pyaclnn.acl), a NotSupportedError about dtype <U4 for a str, a bare int()
ValueError for PYACLNN_DEVICE, "aclrtMalloc size must not be 0 (got -8)" for a negative
shape, RtParamInvalidError for a stream closed by Device.close(), MemoryError for a huge
broadcast.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn import Tensor, acl
from pyaclnn.errors import ClosedError, OutputTooLargeError

from conftest import live_handles

ROOT = Path(__file__).resolve().parents[2]
F32 = np.float32
GN_API = "aclnnGroupNormBackwardGetWorkspaceSize"


def gn_arrays():
    x = np.ones((2, 6, 4), F32)
    return x, x, np.zeros((2, 3), F32), np.ones((2, 3), F32), None


# -- output_mask ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mask", [True, False, 1, "abc", b"\x01\x01\x01", (True, 1, True), [True, None, False]],
                         ids=repr)
def test_group_norm_output_mask_must_be_bools(backend, mask) -> None:
    with pytest.raises(TypeError, match=rf"^{GN_API}: output_mask (must be a sequence of bools|entries must be "
                                        r"bools).*e\.g\. \(True, True, False\)$"):
        pyaclnn.group_norm_backward(*gn_arrays(), 2, 6, 4, 3, output_mask=mask)
    t = [Tensor.from_numpy(a) for a in gn_arrays()[:4]]
    outs = Tensor.zeros((2, 6, 4)), Tensor.zeros(6), Tensor.zeros(6)
    before = live_handles()
    with pytest.raises(TypeError, match=rf"^{GN_API}: output_mask "):
        pyaclnn.GroupNormBackward(*t, None, 2, 6, 4, 3, mask, *outs)
    assert live_handles() == before  # refused before any handle was made


def test_group_norm_output_mask_of_numpy_bools_and_length_is_the_library_check(backend) -> None:
    dx, dg, db = pyaclnn.group_norm_backward(*gn_arrays(), 2, 6, 4, 3, output_mask=np.array([True, False, True]))
    assert dx is not None and dg is None and db is not None
    with pytest.raises(pyaclnn.AclnnParamInvalidError):  # 161002 from the library (emulator) or the spec
        pyaclnn.group_norm_backward(*gn_arrays(), 2, 6, 4, 3, output_mask=(True, True))


# -- value parameters: a wrong Python type is a TypeError naming the C parameter ------------------------
def mse_handles():
    g = Tensor.from_numpy(np.ones((2, 2), F32))
    out = Tensor.zeros((2, 2))
    return g, out


@pytest.mark.parametrize("reduction", ["mean", 1.0, None, True, [1]], ids=repr)
def test_acl_mse_reduction_of_a_wrong_type_names_the_c_parameter(backend, reduction) -> None:
    g, out = mse_handles()
    expected = {str: "str 'mean'", float: "float 1.0", type(None): "NoneType None", bool: "bool True",
                list: "list [1]"}[type(reduction)]
    with pytest.raises(TypeError, match=re.escape(
            f"aclnnMseLossBackwardGetWorkspaceSize: reduction (int64_t) must be an int, got {expected} "
            "(0 = none, 1 = mean, 2 = sum)")):
        acl.aclnnMseLossBackwardGetWorkspaceSize(g.raw, g.raw, g.raw, reduction, out.raw)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(g.raw, g.raw, g.raw, np.int64(1), out.raw)
    acl.aclDestroyAclOpExecutor(ex)


@pytest.mark.parametrize("name, value, expected", [
    ("N", "2", "N (int64_t) must be an int, got str '2'"),
    ("C", 6.0, "C (int64_t) must be an int, got float 6.0"),
    ("group", np.float32(3), "group (int64_t) must be an int, got float32 "),
    ("HxW", False, "HxW (int64_t) must be an int, got bool False"),
], ids=lambda v: repr(v)[:20])
def test_group_norm_ints_of_a_wrong_type(backend, name, value, expected) -> None:
    args = dict(N=2, C=6, HxW=4, group=3)
    args[name] = value
    with pytest.raises(TypeError, match=re.escape(f"{GN_API}: {expected}")):
        pyaclnn.group_norm_backward(*gn_arrays(), **args)
    t = [Tensor.from_numpy(a) for a in gn_arrays()[:4]]
    with pytest.raises(TypeError, match=re.escape(f"{GN_API}: {expected}")):
        pyaclnn.GroupNormBackward(*t, None, *args.values(), (True, True, True), Tensor.zeros((2, 6, 4)),
                                  Tensor.zeros(6), Tensor.zeros(6))
    mask = acl.aclCreateBoolArray([True, False, False], 3)
    with pytest.raises(TypeError, match=re.escape(f"{GN_API}: {expected}")):
        acl.aclnnGroupNormBackwardGetWorkspaceSize(*(x.raw for x in t), None, *args.values(), mask,
                                                   Tensor.zeros((2, 6, 4)).raw, None, None)
    acl.aclDestroyBoolArray(mask)


@pytest.mark.parametrize("kwargs, expected", [
    (dict(ignore_index="-100"), "ignoreIndex (int64_t) must be an int, got str '-100'"),
    (dict(label_smoothing="0.1"), "labelSmoothing (double) must be an int or float, got str '0.1'"),
    (dict(lse_square_scale_for_zloss=None), "lseSquareScaleForZloss (double) must be an int or float, got NoneType"),
], ids=repr)
def test_cross_entropy_values_of_a_wrong_type(backend, kwargs, expected) -> None:
    lp = np.log(np.full((4, 3), 1 / 3, F32))
    target = np.array([0, 2, 1, 0], np.int64)
    with pytest.raises(TypeError, match=re.escape(f"aclnnCrossEntropyLossGradGetWorkspaceSize: {expected}")):
        pyaclnn.cross_entropy_loss_grad(np.float32(1), lp, target, **kwargs)


def test_acl_cross_entropy_reduction_must_be_text(backend) -> None:
    with pytest.raises(TypeError, match=re.escape("reductionOptional (char*) must be a str or None, got int 1")):
        acl.aclnnCrossEntropyLossGradGetWorkspaceSize(None, None, None, None, None, None, 1, -100, 0.0, 0.0, None)


def test_out_of_range_int64_is_a_value_error(backend) -> None:
    with pytest.raises(ValueError, match=r"N \(int64_t\) = 9223372036854775808 is out of the int64_t range"):
        pyaclnn.group_norm_backward(*gn_arrays(), 2 ** 63, 6, 4, 3)


def test_mse_reduction_of_a_wrong_type_in_the_python_api(backend) -> None:
    g = np.ones(2, F32)
    with pytest.raises(TypeError, match=r"reduction must be 'none', 'mean', 'sum' or the int64_t 0, 1, 2; got float 1.5"):
        pyaclnn.mse_loss_backward(g, g, g, 1.5)
    with pytest.raises(pyaclnn.AclnnParamInvalidError):  # a bad name or int stays the library's 161002
        pyaclnn.mse_loss_backward(g, g, g, "avg")


# -- a str (or objects) where a tensor goes ------------------------------------------------------------
@pytest.mark.parametrize("value, what", [("abcd", "str 'abcd'"), (b"ab", "bytes b'ab'"),
                                         (np.array(["a", "b"]), "an array of dtype <U1"),
                                         ([object(), 1], "an array of dtype object")], ids=repr)
def test_text_where_a_tensor_goes_is_a_type_error(backend, value, what) -> None:
    g = np.ones((2,), F32)
    with pytest.raises(TypeError, match=re.escape(f"aclnnMseLossBackwardGetWorkspaceSize: target must be a NumPy "
                                                  f"array (or pyaclnn.Tensor) of numbers, got {what}")):
        pyaclnn.mse_loss_backward(g, g, value)
    with pytest.raises(TypeError, match=re.escape("aclnnPreluBackwardGetWorkspaceSize: weight must be")):
        pyaclnn.prelu_backward(g, g, value)
    with pytest.raises(TypeError, match="Tensor.from_numpy takes an array of numbers"):
        Tensor.from_numpy(value)


# -- PYACLNN_DEVICE ------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["abc", "-1", "1.0", "0x1"])
def test_bad_pyaclnn_device_names_the_variable(backend, monkeypatch, value) -> None:
    monkeypatch.setenv("PYACLNN_DEVICE", value)
    with pytest.raises(ValueError, match=re.escape(f"PYACLNN_DEVICE={value!r}: expected a device id, an int >= 0")):
        Tensor.zeros(2)


def test_empty_pyaclnn_device_is_the_default(backend, monkeypatch) -> None:
    monkeypatch.setenv("PYACLNN_DEVICE", " ")
    with Tensor.zeros(2) as t:
        assert t.device.id == 0


# -- shapes of the factories -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, -1), -3, [4, -2, 1]], ids=repr)
def test_negative_shape_is_a_value_error_before_any_allocation(backend, shape) -> None:
    Tensor.zeros(1).close()  # the default device exists: count only what the call would make
    before = live_handles()
    for factory in (Tensor.zeros, Tensor.empty):
        with pytest.raises(ValueError, match=re.escape(f"Tensor shape {shape!r} has a negative dimension")):
            factory(shape)
    assert live_handles() == before


@pytest.mark.parametrize("shape", [(2.0, 3), "ab", None], ids=repr)
def test_non_int_shape_is_a_type_error(backend, shape) -> None:
    with pytest.raises(TypeError, match="Tensor shape must be an int or a sequence of ints"):
        Tensor.zeros(shape)


def test_numpy_int_shapes_are_accepted(backend) -> None:
    with Tensor.zeros((np.int64(2), np.int32(3))) as t, Tensor.empty(np.int64(4)) as u:
        assert t.shape == (2, 3) and u.shape == (4,)


# -- a stream closed by Device.close() ----------------------------------------------------------------------
def test_running_on_a_stream_closed_by_device_close_is_closed_error(backend) -> None:
    g = Tensor.from_numpy(np.ones((2, 2), F32))
    out = Tensor.zeros((2, 2))
    executor = pyaclnn.MseLossBackward(g, g, g, "mean", out)
    device = pyaclnn.Device(0)
    stream = device.create_stream()
    device.close()
    with pytest.raises(ClosedError, match="the stream is closed"):
        executor.run(stream)
    executor.run()  # still planned: the refusal consumed nothing
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 2)))


# -- a broadcast too large for the machine ---------------------------------------------------------------------
def test_huge_broadcast_is_refused_before_allocating(backend) -> None:
    # (1000000, 1) with (1, 1000000): a 4 TB float32 result. The library sets no size limit
    # (ops.md: no such check), so this is pyaclnn's own refusal, not a 161002, and not MemoryError.
    a, b = np.ones((10 ** 6, 1), F32), np.ones((1, 10 ** 6), F32)
    with pytest.raises(OutputTooLargeError, match=r"aclnnMseLossBackwardGetWorkspaceSize: the output\(s\) "
                                                  r"\(1000000, 1000000\) float32 need 3,725\.3 GiB, more than"):
        pyaclnn.mse_loss_backward(a, b, np.float32(1))
    assert not issubclass(OutputTooLargeError, MemoryError) and issubclass(OutputTooLargeError, ValueError)
    big = np.broadcast_to(np.float32(1), (10 ** 6, 10 ** 6))  # a zero-stride input of that size
    with pytest.raises(OutputTooLargeError, match="aclnnPreluBackwardGetWorkspaceSize"):
        pyaclnn.prelu_backward(big, big, np.ones(1, F32))


def test_bad_pyaclnn_device_in_the_cli_is_a_usage_error(capsys, monkeypatch) -> None:
    from pyaclnn._cli.commands import main
    monkeypatch.setenv("PYACLNN_DEVICE", "abc")
    assert main(["samples", "mse"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["pyaclnn: error: PYACLNN_DEVICE='abc': expected a device id, an int >= 0 (0, 1, ...) "
                   "(fix: unset PYACLNN_DEVICE or set it to a device id (0, 1, ...))"]


@pytest.mark.parametrize("device", [0, 1, "npu:0"])
@pytest.mark.parametrize("make", [
    lambda d: Tensor.empty((2,), device=d),
    lambda d: Tensor.zeros((2,), device=d),
    lambda d: Tensor.from_numpy(np.ones(2, F32), device=d),
    lambda d: Tensor.from_address(64, (2,), F32, device=d),
    lambda d: pyaclnn.Stream.from_handle(64, d),
])
def test_device_argument_must_be_a_device(backend, make, device) -> None:
    """device= takes a pyaclnn.Device: an int is refused, not read as 'the default device'
    (device=0 was silently ignored, device=1 was an AttributeError from inside)."""
    before = live_handles()
    with pytest.raises(TypeError, match=r"pyaclnn\.Device"):
        make(device)
    assert live_handles() == before


@pytest.mark.parametrize("stream", [0, 5, "s"])
def test_run_takes_a_stream(backend, stream) -> None:
    """run(stream) takes a pyaclnn.Stream or None: a stream handle as an int (torch_npu's
    npu_stream) is a TypeError pointing at Stream.from_handle (run(0) ran on the default stream,
    run(5) was an AttributeError from inside)."""
    t = Tensor.from_numpy(np.ones(4, F32))
    with pyaclnn.MseLossBackward(t, t, t, "none", Tensor.empty(4)) as ex:
        with pytest.raises(TypeError, match=r"Stream\.from_handle"):
            ex.run(stream)


@pytest.mark.parametrize("stream", [None, 5])
def test_event_record_takes_a_stream(backend, stream) -> None:
    with pyaclnn.Device(0) as d:
        e = d.create_event()
        with pytest.raises(TypeError, match=r"pyaclnn\.Stream"):
            e.record(stream)
        with pytest.raises(TypeError, match=r"pyaclnn\.Event"):
            e.elapsed_ms(stream)


@pytest.mark.parametrize("device_id", [0.7, 1.5, "0", None])
def test_device_id_must_be_an_int(backend, device_id) -> None:
    """Device(0.7) opened device 0 and Device("0") device 0 (int() of anything): a TypeError."""
    with pytest.raises(TypeError, match="Device takes a device id"):
        pyaclnn.Device(device_id)


@pytest.mark.parametrize("cls", [pyaclnn.Stream, pyaclnn.Event])
@pytest.mark.parametrize("device", [0, None])
def test_stream_and_event_take_a_device(backend, cls, device) -> None:
    """Stream(0) / Event(None) were AttributeErrors from inside: a TypeError naming the Device."""
    with pytest.raises(TypeError, match=r"pyaclnn\.Device"):
        cls(device)


# -- a generated operator's phase 2 refusing its workspace ---------------------------------------
def test_a_generated_phase2_refusing_its_workspace_keeps_the_executor(backend) -> None:
    """NnopbaseRunWithWorkspace (hicann/opbase individual_op_api.cpp) refuses a NULL workspace
    with a size (161001) before it runs the executor: the executor is still live, its tensors
    must stay alive, and a launch with a workspace runs it. Oracle: the mean cross-entropy
    gradient of uniform log-probabilities, (1/C - onehot) / N."""
    n, c = 2, 3
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        lp = Tensor.from_numpy(np.log(np.full((n, c), 1 / c, F32)))
        target = Tensor.from_numpy(np.array([0, 2], np.int64))
        grad_loss = Tensor.from_numpy(np.array(1.0, F32))
        out = Tensor.zeros((n, c))
        ws, ex = acl.aclnnCrossEntropyLossGradGetWorkspaceSize(grad_loss, lp, target, None, None, None, "mean",
                                                               -100, 0.0, 0.0, out)
        executors = live_handles()["executor"]
        with pytest.raises(pyaclnn.AclnnParamNullptrError):
            acl.aclnnCrossEntropyLossGrad(None, ws + 16, ex, stream)
        assert live_handles()["executor"] == executors  # not consumed
        workspace = acl.aclrtMalloc(ws, acl.ACL_MEM_MALLOC_HUGE_FIRST) if ws else None
        acl.aclnnCrossEntropyLossGrad(workspace, ws, ex, stream)
        stream.synchronize()
        assert live_handles()["executor"] == executors - 1
        want = np.full((n, c), 1 / c, F32)
        want[[0, 1], [0, 2]] -= 1
        np.testing.assert_allclose(out.numpy(), want / n, rtol=1e-6)
        if workspace:
            acl.aclrtFree(workspace)
        for t in (lp, target, grad_loss, out):
            t.close()


def test_resetting_a_device_more_often_than_set_is_507007(backend) -> None:
    """hicann/runtime runtime.cc Runtime::PrimaryContextRelease: no reference left to release is
    RT_ERROR_CONTEXT_DEL, ACL_ERROR_RT_CONTEXT_RELEASE_ERROR (the NumPy backend said 107001, the
    emulator 0)."""
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    acl.aclrtResetDevice(0)  # the only reference (nothing else in the test has set device 0)
    with pytest.raises(pyaclnn.errors.RtContextReleaseError) as info:
        acl.aclrtResetDevice(0)
    assert info.value.status == 507007 and info.value.api == "aclrtResetDevice"


# -- PYACLNN_HAZARDS -----------------------------------------------------------------------------------
def test_bad_pyaclnn_hazards_fails_at_the_first_call_not_at_the_first_hazard(use_backend, monkeypatch) -> None:
    # A typo used to pass silently until a hazard happened, and then a ValueError replaced the
    # HazardError; now the backend refuses it when it starts, as it refuses a bad PYACLNN_SOC.
    monkeypatch.setenv("PYACLNN_HAZARDS", "maybe")
    with pytest.raises(ValueError, match=re.escape("PYACLNN_HAZARDS='maybe': expected one of raise, warn, off")):
        use_backend("numpy")  # starts the backend
        Tensor.zeros(2)


@pytest.mark.parametrize("api", ["aclrtMalloc", "aclrtMallocHost"])
def test_a_malloc_size_that_is_no_size_t_names_the_parameter_on_both_backends(backend, api) -> None:
    # 16.0 failed inside the reference's allocator ("expected a sequence of integers ... '80.0'")
    # and was cffi's bare TypeError on acl; -1 was 100000 "size must not be 0 (got -1)" on the
    # reference and cffi's OverflowError on acl
    acl.aclrtSetDevice(0)
    malloc = (lambda size: acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)) if api == "aclrtMalloc" \
        else acl.aclrtMallocHost
    for size in (16.0, True, "16", None):
        with pytest.raises(TypeError, match=re.escape(f"{api}: size (size_t) must be an int, got")):
            malloc(size)
    for size in (-1, 2 ** 64):
        with pytest.raises(ValueError, match=re.escape(f"{api}: size (size_t) = {size} is out of the size_t range")):
            malloc(size)
    free = acl.aclrtFree if api == "aclrtMalloc" else acl.aclrtFreeHost
    free(malloc(np.int64(16)))  # a NumPy integer is a size
    acl.aclrtResetDevice(0)


def test_create_tensor_takes_none_as_nullptr_and_refuses_a_host_array_on_both_backends(backend) -> None:
    # None failed inside the reference ("int() argument must be ... not 'NoneType'") and in cffi's
    # cast; a host array given where the device address goes did too
    acl.aclrtSetDevice(0)
    tensor = acl.aclCreateTensor([0], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [0], 1, None)
    acl.aclDestroyTensor(tensor)
    with pytest.raises(TypeError, match=re.escape("aclCreateTensor: tensorData (void *) takes a device address "
                                                  "(an int from aclrtMalloc) or None, got ndarray; copy host")):
        acl.aclCreateTensor([4], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], 1, np.ones(4, np.float32))
    ptr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclDestroyTensor(acl.aclCreateTensor([4], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], 1, np.uint64(ptr)))
    acl.aclrtFree(ptr)
    acl.aclrtResetDevice(0)


def test_tensor_factories_take_a_dtype_as_their_docstrings_say(backend) -> None:
    # "a NumPy dtype or a DType": a DType was "Cannot interpret '<DType.FLOAT16: 1>' as a data
    # type" from NumPy, as were a torch dtype and a misspelt name
    from pyaclnn.dtypes import bfloat16
    for dtype, expected in ((pyaclnn.DType.FLOAT16, np.float16), (pyaclnn.DType.BF16, bfloat16()),
                            (pyaclnn.DType.INT64, np.int64)):
        with Tensor.zeros((2,), dtype) as t:
            assert t.dtype == np.dtype(expected) and t.acl_dtype == dtype
            assert t.numpy().tolist() == [0, 0]
    for bad in ("floaty", object(), 0):  # each factory names itself (Tensor.zeros said Tensor.empty)
        for factory in (Tensor.empty, Tensor.zeros):
            with pytest.raises(TypeError, match=rf"^{factory.__qualname__}: dtype must be a NumPy dtype .* or a "
                                                r"pyaclnn.DType, got"):
                factory((2,), bad)


def test_a_bare_executor_cannot_be_made(backend) -> None:
    # "never constructed directly", but Executor() made an empty object whose repr raised
    # AttributeError ('workspace_size') and whose run() failed deep inside
    with pytest.raises(TypeError, match=r"pyaclnn.Executor is made by phase 1 of an operator: pyaclnn.Op"):
        pyaclnn.Executor()
