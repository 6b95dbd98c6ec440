"""pyaclnn's session survives the user's aclFinalize and aclrtResetDevice (issue 25 point 1),
on both backends.

What CANN does (traced in /work/notes/i25-sessions.md): aclFinalize de-initialises acl only
(hicann/runtime acl.cpp aclFinalizeInternal: no device reset; devices, streams and memory survive)
and clears the aclInit count, pyaclnn's reference included; aclInit may be called again (the
runtime's UT duplicate_aclinit). So the next high-level call takes pyaclnn's reference back, with
or without the user's own new aclInit, and computes as before. aclrtResetDevice counts references
per device; at 0 the device is released with its default context, the streams made in it and
(on CANN) its memory (runtime.cc PrimaryContextRelease, context.cc TearDown, hicann/driver
devmm_svm.c drvMemDeviceCloseInner): a reset beyond the user's own aclrtSetDevice calls takes one
of pyaclnn's; pyaclnn takes it back when it held more, else opens a new device.
"""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl

# The documented example of pyaclnn.mse_loss_backward (its docstring): the oracle.
G = np.array([[0, 1], [2, 3]], np.float32)
WANT = np.array([[-0.0, 0.0], [1.0, 3.0]], np.float32)


def mse_sample() -> np.ndarray:
    return pyaclnn.mse_loss_backward(G, G, np.ones((2, 2), np.float32), reduction="mean")


@pytest.mark.parametrize("how", ["aclFinalize", "aclFinalizeReference"])
@pytest.mark.parametrize("then_init", [False, True], ids=["no-aclInit", "then-aclInit"])
def test_high_level_call_after_the_users_finalize(backend, how, then_init):
    np.testing.assert_array_equal(mse_sample(), WANT)       # pyaclnn's session is up
    acl.aclInit(None)                                       # the user's own reference...
    if how == "aclFinalize":
        acl.aclFinalize()                                   # ...and every one, pyaclnn's too
    else:
        while acl.aclFinalizeReference() > 0:
            pass
    if then_init:
        acl.aclInit(None)
    np.testing.assert_array_equal(mse_sample(), WANT)       # used to raise 100001 / 107000
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        x = pyaclnn.Tensor.from_numpy(G, device)
        np.testing.assert_array_equal(x.numpy(), G)
    if then_init:
        acl.aclFinalizeReference()                          # the user gives theirs back
    np.testing.assert_array_equal(mse_sample(), WANT)


def test_objects_made_before_the_finalize_go_on(backend):
    """A Device, Stream and Tensor made before the user's aclFinalize keep working after it: CANN
    kept them (no device reset at aclFinalize), and pyaclnn only needed its aclInit back."""
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        x = pyaclnn.Tensor.from_numpy(G, device)
        acl.aclInit(None)
        acl.aclFinalize()
        acl.aclInit(None)
        y = pyaclnn.Tensor.from_numpy(np.ones((2, 2), np.float32), device)
        np.testing.assert_array_equal(mse_sample(), WANT)
        stream.synchronize()
        np.testing.assert_array_equal(x.numpy(), G)
        np.testing.assert_array_equal(y.numpy(), np.ones((2, 2), np.float32))
        acl.aclFinalizeReference()


def test_high_level_call_after_an_extra_reset(backend):
    """The user resets the device pyaclnn set (never having set it): the device is released, and
    the next high-level call opens a new one instead of failing on the dead context (107002 /
    107000 for everything, close() included)."""
    np.testing.assert_array_equal(mse_sample(), WANT)
    acl.aclrtResetDevice(0)                                 # pyaclnn's only reference: released
    np.testing.assert_array_equal(mse_sample(), WANT)
    with pyaclnn.Device(0) as device:
        np.testing.assert_array_equal(pyaclnn.Tensor.from_numpy(G, device).numpy(), G)


def test_extra_reset_while_pyaclnn_holds_more(backend):
    """pyaclnn holds two references (its default device and an open Device); the user's extra
    reset takes one: the device lives on and pyaclnn takes it back, so closing the Device (one
    reset) does not release the device the high-level calls still use."""
    np.testing.assert_array_equal(mse_sample(), WANT)
    with pyaclnn.Device(0) as device:
        x = pyaclnn.Tensor.from_numpy(G, device)
        acl.aclrtSetDevice(0)
        acl.aclrtResetDevice(0)                             # the user's own: balanced
        acl.aclrtResetDevice(0)                             # one of pyaclnn's
        np.testing.assert_array_equal(mse_sample(), WANT)
        np.testing.assert_array_equal(x.numpy(), G)
    np.testing.assert_array_equal(mse_sample(), WANT)       # the default device still lives
