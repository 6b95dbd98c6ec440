"""The device path as a real machine runs it (issue 10, points 4-6), through the emulator.

- Sharing the process: a host application's aclInit session survives pyaclnn's shutdown; ops
  run on a stream (Stream.from_handle) and device memory (Tensor.from_address) that another
  framework owns, which pyaclnn never destroys or frees.
- The op cache: an identical plan after a run gets CANN's cache wrapper, which refuses
  aclSetAclOpExecutorRepeatable (561000); repeatable=True still works (it re-plans).
- Generated ops (CrossEntropyLossGrad) number aclSetInputTensorAddr by the op definition.
Oracles: PyTorch CPU autograd.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from conftest import live_handles
from pyaclnn import acl
from pyaclnn._objects import backend as _backend

TESTS = Path(__file__).resolve().parents[1]
F32 = np.float32


def _torch():
    # The oracle; the oldest-dependencies run of .ci/run has no torch, and only the tests
    # that need the oracle skip there.
    return pytest.importorskip("torch")


def torch_mse_grad(g, x, y, reduction):
    torch = _torch()
    xt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.mse_loss(xt, torch.tensor(y), reduction=reduction).backward(torch.tensor(g))
    return xt.grad.numpy()


def torch_ce_grad(grad_loss, log_prob, target, reduction):
    torch = _torch()
    lp = torch.tensor(log_prob, requires_grad=True)  # log_softmax(lp) == lp: lp is log-probabilities
    torch.nn.functional.cross_entropy(lp, torch.tensor(target), reduction=reduction).backward(torch.tensor(grad_loss))
    return lp.grad.numpy()


# -- 4. sharing the process ---------------------------------------------------------------------
HOST_FIRST = """
    import ctypes, json, os, numpy as np
    home = os.environ["ASCEND_HOME_PATH"]
    rt = ctypes.CDLL(home + "/lib64/libascendcl.so", mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    assert rt.aclInit(None) == 0                       # the host application initialises CANN
    import pyaclnn
    from pyaclnn._objects import backend as _backend
    out = pyaclnn.mse_loss_backward(np.arange(4, dtype=np.float32), np.arange(4, dtype=np.float32),
                                    np.ones(4, np.float32))
    _backend.current().shutdown()                      # what pyaclnn's exit hook does
    count = ctypes.c_uint32()
    after = [rt.aclrtGetDeviceCount(ctypes.byref(count)), rt.aclrtSetDevice(0), rt.aclrtResetDevice(0)]
    print(json.dumps({"out": out.tolist(), "after": after, "finalize": rt.aclFinalize()}))
"""


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("LD_LIBRARY_PATH", "ASCEND_OPP_PATH") and not k.startswith("PYACLNN_")}
    clean["PYTHONPATH"] = os.pathsep.join([str(TESTS.parent), str(TESTS)])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**clean, **env}, timeout=60)


def test_host_session_survives_pyaclnn_shutdown(emulator_home):
    # the host application was started after set_env.sh, as CANN's own samples are
    result = run_python(HOST_FIRST, PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(emulator_home),
                        LD_LIBRARY_PATH=str(emulator_home / "lib64"))
    assert result.returncode == 0, result.stderr
    import json
    info = json.loads(result.stdout)
    assert info["out"] == [0.0, 0.0, 1.0, 3.0]
    assert info["after"] == [0, 0, 0]  # not 100001: the host's session is still initialised
    assert info["finalize"] == 0       # and the host ends it itself


def test_pyaclnn_gives_back_only_its_own_references(emulator):
    """In-process: the host initialises after pyaclnn; pyaclnn's shutdown drops its references
    with aclFinalizeReference, and without that function it never calls aclFinalize on a
    session it found initialised (aclInit -> 100002)."""
    from pyaclnn._acl._lib import ffi, get as get_lib
    rt = get_lib().rt
    assert rt.aclInit(ffi.NULL) == 100002            # the host's own reference
    _backend.reset_for_tests()                        # pyaclnn's exit
    assert emulator.live("init") == 1
    count = ffi.new("uint32_t *")
    assert rt.aclrtGetDeviceCount(count) == 0
    # an older runtime without aclFinalizeReference: pyaclnn found CANN initialised -> no aclFinalize
    runtime = _backend.current().runtime
    runtime.lib.missing["runtime"].append("aclFinalizeReference")
    try:
        emulator.reset_counters()
        _backend.reset_for_tests()
        assert emulator.calls("aclFinalize") == 0 and emulator.live("init") == 1
    finally:
        runtime.lib.missing["runtime"].remove("aclFinalizeReference")
    assert rt.aclFinalize() == 0
    assert emulator.live("init") == 0


def test_borrowed_stream_and_memory(backend):
    """Ops run on a stream and on device memory another framework owns (here made with the
    C-shaped layer); closing pyaclnn's objects destroys and frees neither."""
    g = np.array([[1, 2], [3, 4]], F32)
    x, y = g * 3, np.ones((2, 2), F32)
    want = torch_mse_grad(g, x, y, "none")
    with pyaclnn.Device(0):
        acl.aclrtSetDevice(0)
        raw_stream = acl.aclrtCreateStream()
        handle = _backend.current().runtime.as_int(raw_stream)
        ptrs = []
        for arr in (g, x, y, np.zeros_like(g)):
            p = acl.aclrtMalloc(arr.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            acl.aclrtMemcpy(p, arr.nbytes, arr, arr.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
            ptrs.append(p)
        stream = pyaclnn.Stream.from_handle(handle)
        assert not stream.owned and stream.handle == handle and "borrowed" in repr(stream)
        tg, tx, ty, out = (pyaclnn.Tensor.from_address(p, (2, 2), F32) for p in ptrs)
        assert not out.storage.owned and out.data_ptr == ptrs[3]
        pyaclnn.MseLossBackward(tg, tx, ty, "none", out).run(stream)
        stream.synchronize()
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
        # a strided view over the same foreign memory: the transpose of x
        xt = pyaclnn.Tensor.from_address(ptrs[1], (2, 2), F32, strides=(1, 2))
        np.testing.assert_array_equal(xt.numpy(), x.T)
        for t in (tg, tx, ty, out, xt):
            t.close()
        stream.close()
        host = np.empty_like(g)
        acl.aclrtMemcpy(host, host.nbytes, ptrs[3], host.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        np.testing.assert_allclose(host, want, rtol=1e-6)  # the memory is still the owner's
        for p in ptrs:
            acl.aclrtFree(p)                                # not freed twice: no error
        acl.aclrtDestroyStream(raw_stream)                  # not destroyed by pyaclnn
        acl.aclrtResetDevice(0)


def test_borrowed_objects_reject_bad_arguments(backend):
    with pytest.raises(TypeError, match="positive int"):
        pyaclnn.Stream.from_handle(0)
    with pytest.raises(TypeError, match="non-negative int"):
        pyaclnn.Tensor.from_address(-1, (2,), F32)
    with pytest.raises(ValueError, match="before addr"):
        pyaclnn.Tensor.from_address(64, (2,), F32, strides=(-1,))
    with pytest.raises(ValueError, match="nullptr"):
        pyaclnn.Tensor.from_address(0, (2,), F32)


@pytest.mark.parametrize("handle", ["x", "123", 1.5, 2.0, [1], None])
def test_from_handle_refuses_what_is_not_a_stream_address(backend, handle):
    """Neither text nor a float is a stream: refused, not truncated or cast to an address
    (cffi casts a 1-character str to its code point, int() truncates 1.5 to 1)."""
    with pytest.raises(TypeError, match="positive int"):
        pyaclnn.Stream.from_handle(handle)


@pytest.mark.parametrize("shape", [(-1,), (2, -3), (2.5,), "ab"])
def test_from_address_refuses_a_bad_shape(backend, shape):
    """The same shape rule as Tensor.empty, before any descriptor is made."""
    with pytest.raises((ValueError, TypeError), match="shape"):
        pyaclnn.Tensor.from_address(64, shape, F32)


# -- 5. the op cache ----------------------------------------------------------------------------
def test_repeatable_after_an_identical_run_replans(emulator):
    g = np.array([[1, 2], [3, 4]], F32)
    x, y = g * 3, np.ones((2, 2), F32)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        # views (storage shape = the whole buffer): the layout pyaclnn's private descriptors have
        tg, tx, ty = (pyaclnn.Tensor.from_numpy(np.stack([a, a]))[1] for a in (g, x, y))
        out = pyaclnn.Tensor.zeros((2, 2, 2))[0]
        first = pyaclnn.MseLossBackward(tg, tx, ty, "none", out, repeatable=True)
        assert not first.replans                       # nothing cached yet: really repeatable
        first.close()
        pyaclnn.MseLossBackward(tg, tx, ty, "none", out).run(stream)   # fills CANN's op cache
        assert emulator.op_cache_entries() == 1
        ex = pyaclnn.MseLossBackward(tg, tx, ty, "none", out, repeatable=True)
        assert ex.replans                               # CANN said 561000 to the cache wrapper
        assert emulator.live("executor") == 0          # the wrapper was freed at once
        ex.run(stream)
        np.testing.assert_allclose(out.numpy(), torch_mse_grad(g, x, y, "none"), rtol=1e-6)
        x2 = x * -2
        out2 = pyaclnn.Tensor.zeros((2, 2, 2))[0]
        ex.set_input(1, pyaclnn.Tensor.from_numpy(np.stack([x2, x2]))[1])
        ex.set_output(0, out2)
        for _ in range(3):
            ex.run(stream)
        stream.synchronize()
        np.testing.assert_allclose(out2.numpy(), torch_mse_grad(g, x2, y, "none"), rtol=1e-6)
        assert not ex.launched and "repeatable" in repr(ex)
        ex.close()
        assert emulator.live("executor") == 0
    assert emulator.misuse() == 0, emulator.last_misuse()


def test_any_561000_refusal_replans(emulator):
    """aclSetAclOpExecutorRepeatable refuses some ops too (AI CPU / DSA tasks): same fallback."""
    x = np.linspace(-1, 1, 6, dtype=F32).reshape(1, 2, 3)
    w = np.array([0.25, 0.5], F32)
    emulator.fail("aclSetAclOpExecutorRepeatable", 561000)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        tx, tw = pyaclnn.Tensor.from_numpy(x), pyaclnn.Tensor.from_numpy(w)
        gi, gw = pyaclnn.Tensor.zeros(x.shape), pyaclnn.Tensor.zeros(w.shape)
        with pyaclnn.PreluBackward(tx, tx, tw, gi, gw, repeatable=True) as ex:
            assert ex.replans
            ex.run(stream)
            ex.run(stream)
        torch = _torch()
        xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
        torch.nn.functional.prelu(xt, wt).backward(torch.tensor(x))
        np.testing.assert_allclose(gi.numpy(), xt.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(gw.numpy(), wt.grad.numpy(), rtol=1e-6)


def test_replanning_group_norm_keeps_its_mask(emulator):
    """The re-planning path keeps the bool array (outputMask) it owns across plans, and frees it
    at close: same results as a single-use plan, no handle left."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 4, 3)).astype(F32)
    dy = rng.standard_normal((2, 4, 3)).astype(F32)
    mean, rstd = np.zeros((2, 2), F32), np.ones((2, 2), F32)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        args = [pyaclnn.Tensor.from_numpy(a) for a in (dy, x, mean, rstd)]
        outs = [pyaclnn.Tensor.zeros(s) for s in ((2, 4, 3), (4,), (4,))]
        pyaclnn.GroupNormBackward(*args, None, 2, 4, 3, 2, (True, True, True), *outs).run(stream)
        want = [o.numpy() for o in outs]
        emulator.fail("aclSetAclOpExecutorRepeatable", 561000)
        arrays = emulator.live("bool_array")
        got = [pyaclnn.Tensor.zeros(s) for s in ((2, 4, 3), (4,), (4,))]
        with pyaclnn.GroupNormBackward(*args, None, 2, 4, 3, 2, (True, True, True), *got, repeatable=True) as ex:
            assert ex.replans and emulator.live("bool_array") == arrays + 1
            ex.run(stream)
            ex.run(stream)
        assert emulator.live("bool_array") == arrays and emulator.live("executor") == 0
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w)
    assert emulator.misuse() == 0, emulator.last_misuse()


# -- 6. indexes of generated ops ------------------------------------------------------------------
def test_cross_entropy_set_input_after_a_null_optional(backend):
    """weight=None, grad_zloss given: grad_zloss is non-NULL input 3 for pyaclnn, but slot 4 of
    the op definition, which is the index the generated executor takes."""
    rng = np.random.default_rng(5)
    N, C = 4, 3
    logits = rng.standard_normal((N, C))
    lp = (logits - np.log(np.exp(logits).sum(1, keepdims=True))).astype(F32)
    lp2 = np.ascontiguousarray(lp[::-1])
    target = np.array([0, 2, 1, 2], np.int64)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        tl, tlp, tt = (pyaclnn.Tensor.from_numpy(a) for a in (np.array(1.5, F32), lp, target))
        tz = pyaclnn.Tensor.zeros((N,))
        out = pyaclnn.Tensor.zeros((N, C))
        with pyaclnn.CrossEntropyLossGrad(tl, tlp, tt, None, tz, None, "sum", out=out, repeatable=True) as ex:
            ex.set_input(3, pyaclnn.Tensor.zeros((N,)))          # grad_zloss: C index 4
            ex.set_input(1, pyaclnn.Tensor.from_numpy(lp2))      # log_prob: C index 1
            with pytest.raises(IndexError):
                ex.set_input(4, tz)                              # only 4 non-NULL inputs
            ex.run(stream)
            stream.synchronize()
        np.testing.assert_allclose(out.numpy(), torch_ce_grad(np.float32(1.5), lp2, target, "sum"),
                                   rtol=1e-5, atol=1e-6)


def test_a3_soc_names_map_to_the_910_93_family(emulator, monkeypatch, use_backend):
    """A3 chips report Ascend910_93xx names (hicann/runtime src: Ascend910_9362 ... _9392)."""
    from pyaclnn._spec import soc_family
    for name in ("Ascend910_9362", "Ascend910_9372", "Ascend910_9381", "Ascend910_9382", "Ascend910_9391",
                 "Ascend910_9392"):
        assert soc_family(name) == "Ascend910_93", name
    monkeypatch.setenv("EMU_SOC_NAME", "Ascend910_9382")
    home = _backend.current().paths["home"]
    info = use_backend("acl", home=home).info()
    assert (info["soc_name"], info["soc"]) == ("Ascend910_9382", "Ascend910_93")


# -- also: aclGetRecentErrMsg returns new text first, then all it returned before -----------------------
def test_each_error_carries_only_its_own_cann_text(emulator):
    """CANN 9's aclGetRecentErrMsg prepends new text to what it returned before (hicann/runtime
    acl.cpp aclGetRecentErrMsgImpl): an error must not carry the text of earlier ones."""
    with pyaclnn.Device(0):
        a, b, out = pyaclnn.Tensor.zeros((2,)), pyaclnn.Tensor.zeros((3,)), pyaclnn.Tensor.zeros((2,))
        messages = []
        for _ in range(3):
            with pytest.raises(pyaclnn.AclnnParamInvalidError) as info:
                pyaclnn.MseLossBackward(a, a, b, "none", out)
            messages.append(info.value.cann_message)
        assert all(m is not None and m.count("EZ1001") == 1 and "cannot broadcast" in m for m in messages)
        assert acl.aclGetRecentErrMsg() is None   # nothing new since


def test_each_error_keeps_its_own_text_after_kilobytes_of_errors(backend):
    """A thread's error text outgrows the emulator's 8 KiB buffer: each error still carries its
    own text only, whatever earlier tests left in a thread (tests/acl/test_acl_sharing.py's test above
    failed after test_emulator*.py: the emulator cut the tail of the old text, a text no CANN
    returns, and pyaclnn then took the whole 8 KiB for new). Both backends: the same class and
    status; the NumPy backend has no CANN text."""
    import threading
    seen: list = []

    def body() -> None:
        with pyaclnn.Device(0):
            a, b, out = pyaclnn.Tensor.zeros((2,)), pyaclnn.Tensor.zeros((3,)), pyaclnn.Tensor.zeros((2,))
            for _ in range(200):  # about 25 KiB of text
                try:
                    pyaclnn.MseLossBackward(a, a, b, "none", out)
                except pyaclnn.AclnnParamInvalidError as exc:
                    seen.append((exc.status, exc.cann_message))
            for t in (a, b, out):
                t.close()

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert len(seen) == 200 and all(status == 161002 for status, _ in seen)
    for _, text in seen:
        if backend == "acl":
            assert text is not None and text.count("EZ1001") == 1 and "cannot broadcast" in text, text[:300]
        else:
            assert text is None


def test_a_borrowed_handle_that_is_no_stream_fails_the_launch_alike(backend):
    """A launch on an address that is no live stream: phase 2's runtime error, 361001, on both
    backends (the NumPy backend answered the runtime's 107000); nothing is left queued."""
    stream = pyaclnn.Stream.from_handle(0x1E240)      # opens the default device, nothing else
    before = live_handles()
    t = pyaclnn.Tensor.from_numpy(np.ones(4, F32))
    out = pyaclnn.Tensor.empty(4)
    with pytest.raises(pyaclnn.AclnnRuntimeError) as info:
        pyaclnn.MseLossBackward(t, t, t, "none", out).run(stream)
    assert info.value.status == 361001
    stream.close()
    t.close(), out.close()
    assert live_handles() == before
