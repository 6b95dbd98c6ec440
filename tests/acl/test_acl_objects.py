"""pyaclnn objects where pyaclnn.acl takes a handle (pyaclnn._objects.handles), on both backends.

Ports of CANN samples mix the two layers: Tensors and Streams made with the objects, the op run
through acl's two phases. Where a handle goes, a function takes the handle, None, its int
address or the object of that C type (Tensor, Stream, Event); the object stays the owner. The
oracle for numbers is PyTorch (aten's mse_loss_backward / prelu autograd) when installed, else
the closed forms written here; the oracle for "every handle parameter" is a plain scan of the
header text.
"""
from __future__ import annotations

import gc
import re
import weakref
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl
from conftest import live_handles
from helpers.oracles import mse_oracle, prelu_oracle  # noqa: E402

F32 = np.float32
HEADERS = Path(__file__).resolve().parents[2] / "headers"


def test_a_sample_ported_on_objects(backend):
    """The aclnnMseLossBackward and aclnnPreluBackward samples, ported with pyaclnn objects for
    the device, the stream and the tensors (a transposed view among them) and the C layer for
    the two phases, the synchronize and the copy back; nothing leaks."""
    rng = np.random.default_rng(0)
    g, x, y = (rng.standard_normal((3, 4)).astype(F32) for _ in range(3))
    dy, xp = rng.standard_normal((2, 3, 4)).astype(F32), rng.standard_normal((2, 3, 4)).astype(F32)
    w = np.array([0.25, -0.5, 2.0], F32)
    before = live_handles()
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        tg, ty = pyaclnn.Tensor.from_numpy(g), pyaclnn.Tensor.from_numpy(y)
        tx = pyaclnn.Tensor.from_numpy(np.ascontiguousarray(x.T)).T    # a strided view: x again
        out = pyaclnn.Tensor.zeros((3, 4))
        ws_size, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, 1, out)
        ws = acl.aclrtMalloc(ws_size, acl.ACL_MEM_MALLOC_HUGE_FIRST) if ws_size > 0 else None
        acl.aclnnMseLossBackward(ws, ws_size, executor, stream)
        acl.aclrtSynchronizeStream(stream)
        result = np.zeros(12, F32)
        acl.aclrtMemcpy(result, result.nbytes, out.data_ptr, result.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        np.testing.assert_allclose(result.reshape(3, 4), mse_oracle(g, x, y, 1), rtol=1e-5, atol=1e-7)
        if ws:
            acl.aclrtFree(ws)

        tdy, txp, tw = (pyaclnn.Tensor.from_numpy(a) for a in (dy, xp, w))
        gx, gw = pyaclnn.Tensor.zeros(xp.shape), pyaclnn.Tensor.zeros(w.shape)
        ws_size, executor = acl.aclnnPreluBackwardGetWorkspaceSize(tdy, txp, tw, gx, gw)
        ws = acl.aclrtMalloc(ws_size, acl.ACL_MEM_MALLOC_HUGE_FIRST) if ws_size > 0 else None
        acl.aclnnPreluBackward(ws, ws_size, executor, stream.handle)   # the stream's int address
        acl.aclrtSynchronizeStream(stream.handle)
        want_x, want_w = prelu_oracle(dy, xp, w)
        np.testing.assert_allclose(gx.numpy(), want_x, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gw.numpy(), want_w, rtol=1e-5, atol=1e-5)
        if ws:
            acl.aclrtFree(ws)
        # the object's handle, the object and its int address are the same aclTensor to the C layer
        assert acl.aclGetViewShape(tx) == acl.aclGetViewShape(tx.handle) == [3, 4]
        assert acl.aclGetViewStrides(tx) == [1, 3] and acl.aclGetRawTensorAddr(tx) == tx.data_ptr
    gc.collect()
    assert live_handles() == before


def test_a_repeatable_executor_planned_on_objects(backend):
    """aclSetAclOpExecutorRepeatable + aclSetInputTensorAddr on an executor planned on Tensors:
    CANN moves the aclTensor it is given (hicann/opbase acl_op_api.cpp SetStorageAddr), so the
    C layer gave phase 1 a descriptor of its own: the Tensor keeps viewing its own memory, and
    an object-layer op on it afterwards reads that memory."""
    rng = np.random.default_rng(1)
    g, g2, x, y = (rng.standard_normal(6).astype(F32) for _ in range(4))
    before = live_handles()
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        tg, tg2, tx, ty = (pyaclnn.Tensor.from_numpy(a) for a in (g, g2, x, y))
        out = pyaclnn.Tensor.zeros(6)
        ws_size, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, 0, out)
        acl.aclSetAclOpExecutorRepeatable(executor)
        ws = acl.aclrtMalloc(ws_size, acl.ACL_MEM_MALLOC_HUGE_FIRST) if ws_size > 0 else None
        acl.aclnnMseLossBackward(ws, ws_size, executor, stream)
        acl.aclrtSynchronizeStream(stream)
        np.testing.assert_allclose(out.numpy(), mse_oracle(g, x, y, 0), rtol=1e-6)
        acl.aclSetInputTensorAddr(executor, 0, tg, tg2.data_ptr)   # gradOutput now reads g2
        acl.aclnnMseLossBackward(ws, ws_size, executor, stream)
        acl.aclrtSynchronizeStream(stream)
        np.testing.assert_allclose(out.numpy(), mse_oracle(g2, x, y, 0), rtol=1e-6)
        assert acl.aclGetRawTensorAddr(tg) == tg.data_ptr            # the Tensor did not move
        np.testing.assert_array_equal(tg.numpy(), g)
        other = pyaclnn.Tensor.zeros(6)
        pyaclnn.MseLossBackward(tg, tx, ty, "none", other).run(stream)
        stream.synchronize()
        np.testing.assert_allclose(other.numpy(), mse_oracle(g, x, y, 0), rtol=1e-6)
        with pytest.raises(TypeError, match=r"^aclSetInputTensorAddr: tensor \(aclTensor \*\) is a pyaclnn.Tensor "
                                            "this executor was not planned with"):
            acl.aclSetInputTensorAddr(executor, 0, tg2, tg2.data_ptr)
        acl.aclDestroyAclOpExecutor(executor)   # its descriptors go with it
        if ws:
            acl.aclrtFree(ws)
    gc.collect()
    assert live_handles() == before


def test_set_input_tensor_addr_moves_the_acl_tensor_it_is_given(backend):
    """What the repeatable test protects Tensors from, on raw handles: CANN's aclSetInputTensorAddr
    records addr in the aclTensor itself (hicann/opbase acl_op_api.cpp SetStorageAddr), on both
    backends (the emulator, too, since this change)."""
    with pyaclnn.Device(0):
        addrs = [acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST) for _ in range(5)]
        handles = [acl.aclCreateTensor([4], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], 1, a) for a in addrs[:4]]
        ws_size, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(*handles[:3], 2, handles[3])
        acl.aclSetAclOpExecutorRepeatable(executor)
        acl.aclSetInputTensorAddr(executor, 0, handles[0], addrs[4])
        assert acl.aclGetRawTensorAddr(handles[0]) == addrs[4]
        acl.aclDestroyAclOpExecutor(executor)
        for h in handles:
            acl.aclDestroyTensor(h)
        for a in addrs:
            acl.aclrtFree(a)


def test_closed_objects_raise_closed_error_naming_them(backend):
    before = live_handles()
    x = np.ones(4, F32)
    with pyaclnn.Device(0) as device:
        stream, event = device.create_stream(), device.create_event()
        t, out = pyaclnn.Tensor.from_numpy(x), pyaclnn.Tensor.zeros(4)
        closed = pyaclnn.Tensor.from_numpy(x)
        closed.close()
        with pytest.raises(pyaclnn.ClosedError, match=r"^aclnnMseLossBackwardGetWorkspaceSize: target "
                                                      r"\(const aclTensor \*\) is a closed pyaclnn.Tensor$"):
            acl.aclnnMseLossBackwardGetWorkspaceSize(t, t, closed, 0, out)
        with pytest.raises(pyaclnn.ClosedError, match=r"^aclGetViewShape: tensor \(aclTensor \*\) is a closed "):
            acl.aclGetViewShape(closed)
        # a Tensor the executor was planned with, closed before phase 2: refused before launching
        victim = pyaclnn.Tensor.from_numpy(x)
        ws_size, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(t, victim, t, 0, out)
        victim.close()
        with pytest.raises(pyaclnn.ClosedError, match=r"^aclnnMseLossBackward: a pyaclnn.Tensor this executor "
                                                      "was planned with is closed"):
            acl.aclnnMseLossBackward(None, ws_size, executor, stream)
        acl.aclDestroyAclOpExecutor(executor)
        event.close()
        with pytest.raises(pyaclnn.ClosedError, match=r"^aclrtRecordEvent: event \(aclrtEvent\) is a closed "
                                                      "pyaclnn.Event$"):
            acl.aclrtRecordEvent(event, stream)
        stream.close()
        with pytest.raises(pyaclnn.ClosedError, match=r"^aclrtSynchronizeStream: stream \(aclrtStream\) is a "
                                                      "closed pyaclnn.Stream$"):
            acl.aclrtSynchronizeStream(stream)
        ws_size, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(t, t, t, 0, out)
        with pytest.raises(pyaclnn.ClosedError, match=r"^aclnnMseLossBackward: stream \(aclrtStream\) is a closed"):
            acl.aclnnMseLossBackward(None, ws_size, executor, stream)
        acl.aclDestroyAclOpExecutor(executor)
    gc.collect()
    assert live_handles() == before


def test_a_wrong_object_type_is_a_type_error_naming_the_c_parameter(backend):
    before = live_handles()
    x = np.ones(4, F32)
    with pyaclnn.Device(0) as device, device.create_stream() as stream, device.create_event() as event:
        t, out = pyaclnn.Tensor.from_numpy(x), pyaclnn.Tensor.zeros(4)
        phase1 = acl.aclnnMseLossBackwardGetWorkspaceSize
        for bad, got in ((stream, "pyaclnn.Stream"), (event, "pyaclnn.Event"), (x, "ndarray"), ("t", "str"),
                         (1.5, "float"), (True, "bool"), ([t], "list")):
            with pytest.raises(TypeError, match=rf"^aclnnMseLossBackwardGetWorkspaceSize: self \(const aclTensor \*\) "
                                                rf"takes an aclTensor handle .*; got {got}"):
                phase1(t, bad, t, 0, out)
        with pytest.raises(TypeError, match=r"^aclrtSynchronizeStream: stream \(aclrtStream\) takes an aclrtStream "
                                            r"handle \(acl.aclrtCreateStream\), a pyaclnn.Stream, .*; got pyaclnn.Tensor"):
            acl.aclrtSynchronizeStream(t)
        with pytest.raises(TypeError, match=r"^aclrtRecordEvent: event \(aclrtEvent\) .*; got pyaclnn.Stream"):
            acl.aclrtRecordEvent(stream, stream)
        with pytest.raises(TypeError, match=r"^aclrtStreamWaitEvent: stream \(aclrtStream\) .*; got pyaclnn.Event"):
            acl.aclrtStreamWaitEvent(stream=event, event=event)             # by keyword too
        ws_size, executor = phase1(t, t, t, 0, out)
        with pytest.raises(TypeError, match=r"^aclnnMseLossBackward: stream \(aclrtStream\) .*; got pyaclnn.Event"):
            acl.aclnnMseLossBackward(None, ws_size, executor, event)
        acl.aclDestroyAclOpExecutor(executor)
        with pyaclnn.MseLossBackward(t, t, t, "none", out) as ex:   # an executor runs with run()
            with pytest.raises(TypeError, match=r"^aclnnMseLossBackward: executor \(aclOpExecutor \*\) .*got "
                                                r"pyaclnn.MseLossBackward .*run\(stream\)"):
                acl.aclnnMseLossBackward(None, 0, ex, stream)
        with pytest.raises(TypeError, match=r"^aclCreateTensorList: value\[1\] \(aclTensor \*\) .*got pyaclnn.Stream"):
            acl.aclCreateTensorList([0, stream], 2)
    gc.collect()
    assert live_handles() == before


def test_the_object_stays_the_owner(backend):
    """Calls that would free an object's handle, give it to another owner or re-describe it
    refuse the object, naming its own way; the object is untouched and still works."""
    before = live_handles()
    x = np.arange(4, dtype=F32)
    with pyaclnn.Device(0) as device:
        stream, event, t = device.create_stream(), device.create_event(), pyaclnn.Tensor.from_numpy(x)
        refused = [(acl.aclDestroyTensor, (t,), "tensor", "close"), (acl.aclrtDestroyStream, (stream,), "stream", "close"),
                   (acl.aclrtDestroyEvent, (event,), "event", "close"),
                   (acl.aclSetRawTensorAddr, (t, 0), "tensor", "view"),
                   (acl.aclInitTensor, (t, [2], 1, acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, [2], 1, t.data_ptr),
                    "tensor", "view")]
        for fn, args, name, fix in refused:
            with pytest.raises(TypeError, match=rf"^{fn.__name__}: {name} \(\w+ ?\*?\) is a pyaclnn.\w+, which owns "
                                                rf"its .*{fix}"):
                fn(*args)
        assert acl.aclGetViewShape(t) == [4] and acl.aclGetRawTensorAddr(t) == t.data_ptr
        acl.aclrtRecordEvent(event, stream)
        acl.aclrtSynchronizeEvent(event)
        acl.aclrtStreamWaitEvent(stream, event)
        assert acl.aclrtQueryEventStatus(event) == acl.ACL_EVENT_RECORDED_STATUS_COMPLETE
        acl.aclrtSynchronizeStreamWithTimeout(stream, -1)
        np.testing.assert_array_equal(t.numpy(), x)
        t.close(), event.close(), stream.close()   # each released once, by its owner
    gc.collect()
    assert live_handles() == before


def test_tensors_in_a_tensor_list_get_descriptors_of_the_lists_own(backend, request):
    """aclDestroyTensorList destroys its elements (hicann/opbase acl_op_api.cpp: aclDestroyTensor
    on each), so a Tensor in a list gets a descriptor of its own, the list's: destroying the list
    frees those and leaves the Tensor whole. The Tensors stay alive while the list does."""
    before = live_handles()
    x = np.arange(6, dtype=F32).reshape(2, 3)
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        t = pyaclnn.Tensor.from_numpy(x)
        view = t.T
        addr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        raw = acl.aclCreateTensor([4], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], 1, addr)
        tensors = live_handles()["tensor"]
        temporary = pyaclnn.Tensor.from_numpy(np.ones(4, F32))
        kept = weakref.ref(temporary)
        tensor_list = acl.aclCreateTensorList([t, raw, temporary, view, t], 4)   # the 5th is beyond size
        assert live_handles()["tensor"] == tensors + 1 + 3                      # temporary's, and 3 for the list
        del temporary
        gc.collect()
        assert kept() is not None                                               # the list keeps it alive
        acl.aclDestroyTensorList(tensor_list)                                   # raw goes with it, as in C
        gc.collect()
        assert kept() is None and live_handles()["tensor"] == tensors - 1
        assert acl.aclGetViewShape(t) == [2, 3] and acl.aclGetRawTensorAddr(t) == t.data_ptr
        np.testing.assert_array_equal(t.numpy(), x)
        np.testing.assert_array_equal(view.numpy(), x.T)
        closed = pyaclnn.Tensor.zeros(2)
        closed.close()
        with pytest.raises(pyaclnn.ClosedError, match=r"^aclCreateTensorList: value\[1\] \(aclTensor \*\) is a closed"):
            acl.aclCreateTensorList([t, closed], 2)
        with pytest.raises(TypeError, match=r"^aclCreateTensorList: value\[1\] \(aclTensor \*\) .*; got pyaclnn.Stream"):
            acl.aclCreateTensorList([t, stream], 2)
        if backend == "acl":   # a list CANN does not make (NULL): the descriptors made for it go
            request.getfixturevalue("emulator").fail("aclCreateTensorList", 0)
            stale = None
        else:                  # the NumPy backend refuses a stale element that way
            stale = acl.aclCreateTensor([1], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [1], 1, addr)
            acl.aclDestroyTensor(stale)
        with pytest.raises(pyaclnn.AclnnInnerNullptrError):
            acl.aclCreateTensorList([t, view] + ([stale] if stale else []), 3 if stale else 2)
        assert live_handles()["tensor"] == tensors - 1                          # refused: nothing made is left
        view.close(), t.close()
        acl.aclrtFree(addr)
    gc.collect()
    assert live_handles() == before


def test_int_addresses_and_nullptr(backend):
    """An int is the handle's address (Tensor.handle, Stream.handle, Event.handle, or a host
    framework's); 0 is nullptr, as None is: the same error on both backends."""
    with pyaclnn.Device(0) as device, device.create_stream() as stream, device.create_event() as event:
        t = pyaclnn.Tensor.from_numpy(np.ones((2, 3), F32))
        assert acl.aclGetViewShape(t.handle) == [2, 3]
        acl.aclrtRecordEvent(event.handle, stream.handle)
        acl.aclrtSynchronizeEvent(event.handle)
        for null in (None, 0):
            with pytest.raises(pyaclnn.AclnnParamNullptrError):
                acl.aclnnMseLossBackwardGetWorkspaceSize(t, null, t, 0, t)


def test_refused_calls_release_what_phase_1_made(backend, request):
    """A phase 1 the library refuses, and a phase 2 that fails, leave no descriptor behind."""
    before = live_handles()
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        a, b, out = pyaclnn.Tensor.from_numpy(np.ones(4, F32)), pyaclnn.Tensor.zeros(3), pyaclnn.Tensor.zeros(4)
        with pytest.raises(pyaclnn.AclnnParamInvalidError):          # shapes (4,) and (3,): 161002
            acl.aclnnMseLossBackwardGetWorkspaceSize(a, a, b, 0, out)
        if backend == "acl":
            request.getfixturevalue("emulator").fail("aclnnMseLossBackward", 561103, 0, 1)
            ws_size, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(a, a, a, 0, out)
            with pytest.raises(pyaclnn.AclnnInnerNullptrError):
                acl.aclnnMseLossBackward(None, ws_size, executor, stream)   # consumed, even so
        for t in (a, b, out):
            t.close()
    gc.collect()
    assert live_handles() == before


def test_a_launch_on_a_stream_object_keeps_what_it_uses(emu):
    """Phase 2 through the C layer on a pyaclnn.Stream is ordered like the objects' own launches
    (the emulator's streams run queued work later; freeing it early, or reading before it ran,
    counts as misuse): the inputs closed right after the launch stay allocated until the stream
    passed it, and out.numpy() waits for it."""
    rng = np.random.default_rng(2)
    g, x, y = (rng.standard_normal(8).astype(F32) for _ in range(3))
    before = live_handles()
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        ins = [pyaclnn.Tensor.from_numpy(a) for a in (g, x, y)]
        out = pyaclnn.Tensor.zeros(8)
        ws_size, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(*ins, 0, out)
        acl.aclnnMseLossBackward(stream.workspace(ws_size), ws_size, executor, stream)
        for t in ins:
            t.close()
        del ins
        gc.collect()
        np.testing.assert_allclose(out.numpy(), mse_oracle(g, x, y, 0), rtol=1e-6)
    gc.collect()
    assert live_handles() == before


# -- every handle parameter of headers/ ----------------------------------------------------------
_HANDLE_TYPES = {"aclTensor": "aclTensor *", "aclScalar": "aclScalar *", "aclIntArray": "aclIntArray *",
                 "aclFloatArray": "aclFloatArray *", "aclBoolArray": "aclBoolArray *",
                 "aclTensorList": "aclTensorList *", "aclScalarList": "aclScalarList *",
                 "aclOpExecutor": "aclOpExecutor *", "aclrtStream": "aclrtStream", "aclrtEvent": "aclrtEvent",
                 "aclrtContext": "aclrtContext"}
# the tensor these take is resolved against their executor (a Tensor stands for its descriptor)
_BY_EXECUTOR = {("aclSetInputTensorAddr", "tensor"), ("aclSetOutputTensorAddr", "tensor"),
                ("aclSetTensorAddr", "tensor")}


def declared_handle_parameters() -> dict[str, list[tuple[int, str, str]]]:
    """function -> (position, name, C type) of each parameter taking a handle, read from headers/
    (out-parameters, one pointer more, are return values and not listed)."""
    found: dict[str, list[tuple[int, str, str]]] = {}
    for header in ("acl_rt.h", "acl_meta.h", "aclnn_base.h"):
        text = re.sub(r"/\*.*?\*/", "", (HEADERS / header).read_text(), flags=re.S)
        for name, params in re.findall(r"\b(acl\w+)\s*\(([^;]*?)\)\s*;", text):
            for i, p in enumerate(q.strip() for q in params.split(",")):
                words = p.replace("*", " * ").replace("const", "").split()
                if len(words) < 2 or words[0] not in _HANDLE_TYPES:
                    continue
                stars = words.count("*") - (0 if words[0].startswith("aclrt") else 1)
                if stars == 0:
                    found.setdefault(name, []).append((i, words[-1], _HANDLE_TYPES[words[0]]))
                elif stars == 1 and name in ("aclCreateTensorList", "aclCreateScalarList"):  # T *const *value
                    found.setdefault(name, []).append((i, words[-1], _HANDLE_TYPES[words[0]] + "[]"))
    return found


def test_every_handle_parameter_of_the_headers_takes_objects():
    declared = declared_handle_parameters()
    assert len(declared) == 48, sorted(declared)  # + the capture calls taking a stream (4)
    for fn, params in declared.items():
        wrapped = getattr(acl, fn)
        # by name: the Python function has no out-parameters, so positions may differ (aclrtEventElapsedTime)
        slots = {(name, ctype + ("[]" if many else "")) for _, name, ctype, many in getattr(wrapped, "handle_params", ())}
        for _, name, ctype in params:
            if (fn, name) not in _BY_EXECUTOR:
                assert (name, ctype) in slots, (fn, name, ctype, slots)
