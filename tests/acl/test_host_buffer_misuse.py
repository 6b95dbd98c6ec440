"""Host buffers pyaclnn.acl's copies cannot use: the same Python exception on both backends,
raised before CANN is called.

A host side of aclrtMemcpy / aclrtMemcpyAsync reaches C as a void* to ``count`` plain bytes, so a
non-C-contiguous array, a read-only destination or a buffer smaller than ``count`` is a misuse
only Python can see (C would copy the wrong bytes, write into read-only memory or past the end).
It was status 100000 on the NumPy backend (no CANN call returns that for it) and cffi's own
ValueError/TypeError (or, for a short buffer, an out-of-bounds copy) on the acl backend. Now:
TypeError for what is no buffer, ValueError otherwise, naming the API, the parameter and the fix;
CANN is not called (the emulator counts no call; nothing is written).
"""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl

H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST


@pytest.fixture
def setup(backend: str, request: pytest.FixtureRequest) -> Iterator[tuple[int, object, Callable[[str], int]]]:
    """A 64-byte device buffer holding 0..15 (float32), a stream, and a count of CANN calls."""
    emu = request.getfixturevalue("emulator") if backend == "acl" else None
    with pyaclnn.Device(0):
        acl.aclrtSetDevice(0)
        dev = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        acl.aclrtMemcpy(dev, 64, np.arange(16, dtype=np.float32), 64, H2D)
        stream = acl.aclrtCreateStream()
        if emu is not None:
            emu.reset_counters()
        try:
            yield dev, stream, (lambda name: emu.calls(name)) if emu is not None else (lambda name: 0)
        finally:
            acl.aclrtDestroyStream(stream)
            acl.aclrtFree(dev)
            acl.aclrtResetDevice(0)


def _copy(api: str, dst: object, src: object, count: int, kind: int, stream: object) -> None:
    if api == "aclrtMemcpy":
        acl.aclrtMemcpy(dst, 64, src, count, kind)
    else:
        acl.aclrtMemcpyAsync(dst, 64, src, count, kind, stream)
        acl.aclrtSynchronizeStream(stream)


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# (what, dst-or-src, exception, words the message must hold)
CASES = {
    "non-contiguous src": ("src", ValueError, ["src", "C-contiguous", "np.ascontiguousarray(src)"]),
    "non-contiguous dst": ("dst", ValueError, ["dst", "C-contiguous", "np.ascontiguousarray(dst)"]),
    "read-only dst": ("dst", ValueError, ["dst", "read-only", "writable"]),
    "bytes dst": ("dst", ValueError, ["dst", "read-only", "writable"]),
    "short src": ("src", ValueError, ["count 64", "src's 16 bytes"]),
    "short dst": ("dst", ValueError, ["count 64", "dst's 16 bytes"]),
    "no buffer": ("src", TypeError, ["src", "host buffer", "list"]),
}


def _host(what: str) -> object:
    return {"non-contiguous src": np.arange(32, dtype=np.float32)[::2],
            "non-contiguous dst": np.zeros(32, np.float32)[::2],
            "read-only dst": _readonly(np.zeros(16, np.float32)),
            "bytes dst": bytes(64),
            "short src": np.arange(4, dtype=np.float32),
            "short dst": np.zeros(4, np.float32),
            "no buffer": [1.0] * 16}[what]


@pytest.mark.parametrize("api", ["aclrtMemcpy", "aclrtMemcpyAsync"])
@pytest.mark.parametrize("what", list(CASES))
def test_a_host_buffer_the_copy_cannot_use_is_a_python_error(setup, api: str, what: str) -> None:
    dev, stream, calls = setup
    side, exc, words = CASES[what]
    host = _host(what)
    before = np.array(host, copy=True) if isinstance(host, np.ndarray) else None
    with pytest.raises(exc) as info:
        if side == "src":
            _copy(api, dev, host, 64, H2D, stream)
        else:
            _copy(api, host, dev, 64, D2H, stream)
    message = str(info.value)
    assert message.startswith(f"{api}: ") and all(w in message for w in words), message
    assert calls(api) == 0  # refused before CANN
    if before is not None:
        np.testing.assert_array_equal(host, before)  # nothing written
    out = np.zeros(16, np.float32)  # the device memory is untouched
    acl.aclrtMemcpy(out, 64, dev, 64, D2H)
    np.testing.assert_array_equal(out, np.arange(16, dtype=np.float32))


def test_buffers_that_can_serve_still_work(setup) -> None:
    """A read-only source, a bytearray destination, count smaller than the buffer."""
    dev, stream, calls = setup
    src = _readonly(np.full(16, 7, np.float32))
    acl.aclrtMemcpy(dev, 64, src, 32, H2D)
    dst = bytearray(80)
    acl.aclrtMemcpyAsync(dst, 80, dev, 64, D2H, stream)
    acl.aclrtSynchronizeStream(stream)
    expected = np.arange(16, dtype=np.float32)
    expected[:8] = 7
    np.testing.assert_array_equal(np.frombuffer(bytes(dst[:64]), np.float32), expected)
