"""The reference backend fails where a device would misbehave (issue 19), and nowhere else.

Each scenario is a small port written with pyaclnn.acl, in a broken and a fixed form. Run on:

- the NumPy backend (PYACLNN_HAZARDS=raise, the default): the broken form raises
  pyaclnn.HazardError at the call that misbehaves, naming the C calls and the source lines of
  both sides; the fixed form computes the right values;
- the NumPy backend as a device (PYACLNN_HAZARDS=off): the broken form gives what a device gives
  (poison, stale data, a fault at the next synchronize), and with ``warn`` a HazardWarning too;
- the acl backend on the emulator, with queued work run at synchronisation as on a device
  (EMU_STREAM_MODE=deferred; its queues follow hicann/runtime, cited in emu_rt_streams.c): the same
  broken form misbehaves there the same way, or the emulator counts the misuse.

So the reference and the emulator agree on which programs are wrong. The oracle for values is
MseLossBackward's "none" reduction in closed form, 2 * (x - y) * g.
"""
from __future__ import annotations

import re
import warnings
from typing import Callable, Iterator

import numpy as np
import pytest

import pyaclnn
from conftest import on_device_0
from pyaclnn import acl, errors
from helpers.sites import marked_line  # noqa: E402

F32 = np.float32
NONE = 0
H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
G = np.array([[1, 2], [3, 4]], F32)
X = np.array([[0, 1], [2, 3]], F32)
Y = np.ones((2, 2), F32)
WANT = 2 * (X - Y) * G


def line_of(marker: str) -> str:
    return marked_line(__file__, marker)


class Port:
    """What a ported C sample holds; released at the end (after a device synchronize)."""

    def __init__(self) -> None:
        self.streams = [acl.aclrtCreateStream(), acl.aclrtCreateStream()]
        self.allocs: list[int] = []
        self.tensors: list[object] = []

    def malloc(self, nbytes: int = 16) -> int:
        addr = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)  # <malloc>
        self.allocs.append(addr)
        return addr

    def workspace(self, size: int) -> int | None:
        """Phase 2's workspace, as the samples make it: aclrtMalloc(size) when size > 0, else NULL."""
        return self.malloc(size) if size > 0 else None

    def upload(self, array: np.ndarray) -> int:
        addr = self.malloc(array.nbytes)
        acl.aclrtMemcpy(addr, array.nbytes, array, array.nbytes, H2D)
        return addr

    def tensor(self, addr: int, offset: int = 0) -> object:
        t = acl.aclCreateTensor([2, 2], 2, acl.ACL_FLOAT, [2, 1], offset, acl.ACL_FORMAT_ND, [2, 2], 2, addr)
        self.tensors.append(t)
        return t

    def close(self) -> None:
        for t in self.tensors:
            acl.aclDestroyTensor(t)
        for addr in self.allocs:
            acl.aclrtFree(addr)
        for stream in self.streams:
            acl.aclrtDestroyStream(stream)


def download(addr: int) -> np.ndarray:
    out = np.empty((2, 2), F32)
    acl.aclrtMemcpy(out, out.nbytes, addr, out.nbytes, D2H)  # <read>
    return out


def mse(p: Port, g: object, x: object, y: object, out: object, stream: object) -> None:
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(g, x, y, NONE, out)
    acl.aclnnMseLossBackward(p.workspace(ws), ws, ex, stream)  # <launch>


# -- the scenarios: each returns what the port reads back ------------------------------------------
def read_without_sync(p: Port, fixed: bool) -> np.ndarray:
    out = p.malloc()
    mse(p, p.tensor(p.upload(G)), p.tensor(p.upload(X)), p.tensor(p.upload(Y)), p.tensor(out), p.streams[0])
    if fixed:
        acl.aclrtSynchronizeStream(p.streams[0])
    return download(out)


def host_write_under_queued_read(p: Port, fixed: bool) -> np.ndarray:
    x = p.upload(X)
    out = p.malloc()
    mse(p, p.tensor(p.upload(G)), p.tensor(x), p.tensor(p.upload(Y)), p.tensor(out), p.streams[0])
    if fixed:
        acl.aclrtSynchronizeStream(p.streams[0])
    zeros = np.zeros((2, 2), F32)
    acl.aclrtMemcpy(x, 16, zeros, 16, H2D)  # <overwrite>
    acl.aclrtSynchronizeStream(p.streams[0])
    return download(out)


def race_across_streams(p: Port, fixed: bool) -> np.ndarray:
    """Stream 0 computes d = 2(x-y)g; stream 1 computes 2(d-y)*1 from it (without an event: a race)."""
    d, out = p.malloc(), p.malloc()
    mse(p, p.tensor(p.upload(G)), p.tensor(p.upload(X)), p.tensor(p.upload(Y)), p.tensor(d), p.streams[0])
    if fixed:
        event = acl.aclrtCreateEvent()
        acl.aclrtRecordEvent(event, p.streams[0])
        acl.aclrtStreamWaitEvent(p.streams[1], event)
    ones = p.tensor(p.upload(np.ones((2, 2), F32)))
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(ones, p.tensor(d), p.tensor(p.upload(Y)), NONE, p.tensor(out))
    acl.aclnnMseLossBackward(p.workspace(ws), ws, ex, p.streams[1])  # <second stream>
    acl.aclrtSynchronizeStream(p.streams[1])
    acl.aclrtSynchronizeStream(p.streams[0])
    if fixed:
        acl.aclrtDestroyEvent(event)
    return download(out)


def uninitialised_input(p: Port, fixed: bool) -> np.ndarray:
    x = p.malloc()
    if fixed:
        acl.aclrtMemcpy(x, 16, X, 16, H2D)
    out = p.malloc()
    mse(p, p.tensor(p.upload(G)), p.tensor(x), p.tensor(p.upload(Y)), p.tensor(out), p.streams[0])
    acl.aclrtSynchronizeStream(p.streams[0])
    return download(out)


# What each fixed port reads back.
RIGHT = {"read_without_sync": WANT, "host_write_under_queued_read": WANT, "uninitialised_input": WANT,
         "race_across_streams": 2 * (WANT - Y)}
SCENARIOS: dict[str, tuple[Callable[[Port, bool], np.ndarray], list[str], list[str]]] = {
    # name: (scenario, the sites the message names, words it must hold)
    "read_without_sync": (read_without_sync, ["read", "launch"], ["aclrtMemcpy", "reads", "aclnnMseLossBackward",
                                                                  "writes", "Synchronize"]),
    "host_write_under_queued_read": (host_write_under_queued_read, ["overwrite", "launch"],
                                     ["aclrtMemcpy", "writes", "aclnnMseLossBackward", "reads"]),
    "race_across_streams": (race_across_streams, ["second stream", "launch"],
                            ["no event between the two streams", "aclrtStreamWaitEvent"]),
    "uninitialised_input": (uninitialised_input, ["launch", "malloc"], ["never written since aclrtMalloc"]),
}


@pytest.fixture
def port_numpy(use_backend: Callable[..., object]) -> Iterator[Port]:
    use_backend("numpy")
    with on_device_0(Port) as port:
        yield port
        acl.aclrtSynchronizeDevice()


@pytest.fixture
def deferred_emulator(emulator) -> Iterator[object]:
    """The emulator with queued work run at synchronisation, as on a device."""
    emulator.set_stream_mode("deferred")
    emulator.reset_counters()
    try:
        yield emulator
    finally:
        emulator.set_stream_mode(None)
        emulator.reset_counters()


def run_port(scenario: Callable[[Port, bool], np.ndarray], fixed: bool) -> np.ndarray:
    with on_device_0(Port) as port:
        got = scenario(port, fixed)
        acl.aclrtSynchronizeDevice()
    return got


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_reference_raises_at_the_call_naming_both_sites(port_numpy: Port, name: str) -> None:
    scenario, sites, words = SCENARIOS[name]
    with pytest.raises(pyaclnn.HazardError) as info:
        scenario(port_numpy, False)
    message = str(info.value)
    for marker in sites:
        assert line_of(marker) in message, (marker, message)
    for word in words:
        assert word in message, (word, message)
    assert re.search(r"\[0x[0-9a-f]+, \+\d+\)", message), message  # the byte range


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_fixed_port_runs_clean_on_both_backends(backend: str, name: str) -> None:
    np.testing.assert_array_equal(run_port(SCENARIOS[name][0], True), RIGHT[name])


@pytest.mark.parametrize("name", SCENARIOS)
def test_as_a_device_the_reference_misbehaves_as_the_emulator_does(deferred_emulator, use_backend,
                                                                   name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The broken port on the emulator reads something wrong (poison: NaN, or stale values);
    PYACLNN_HAZARDS=off, the reference reads the same, and is told nothing."""
    scenario = SCENARIOS[name][0]
    on_device = run_port(scenario, False)
    assert not np.array_equal(on_device, RIGHT[name]), "the emulator did not misbehave"
    use_backend("numpy")
    monkeypatch.setenv("PYACLNN_HAZARDS", "off")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # off is silent
        reference = run_port(scenario, False)
    np.testing.assert_array_equal(reference, on_device)  # NaN where NaN (assert_array_equal's rule)


def test_warn_mode_warns_at_the_users_line_and_goes_on_as_a_device(port_numpy: Port,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYACLNN_HAZARDS", "warn")
    with pytest.warns(pyaclnn.HazardWarning) as caught:
        got = read_without_sync(port_numpy, False)
    assert np.isnan(got).all()  # the kernel has not run: aclrtMalloc's poison, as on a device
    assert caught[0].filename == __file__ and f"test_hazards.py:{caught[0].lineno}" == line_of("read")


def test_an_unknown_mode_is_a_clear_error(port_numpy: Port, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYACLNN_HAZARDS", "loud")
    with pytest.raises(ValueError, match="PYACLNN_HAZARDS='loud': expected one of raise, warn, off"):
        read_without_sync(port_numpy, False)


# -- frees, out of bounds, the NULL stream ---------------------------------------------------------
def test_a_free_under_queued_work_is_a_use_after_free(port_numpy: Port) -> None:
    p = port_numpy
    out = p.malloc()
    mse(p, p.tensor(p.upload(G)), p.tensor(p.upload(X)), p.tensor(p.upload(Y)), p.tensor(out), p.streams[0])  # <mse>
    p.allocs.remove(out)
    # the launch is in the helper mse(): its caller, this test, is named too (and nothing above it)
    with pytest.raises(pyaclnn.HazardError, match=rf"aclrtFree at {line_of('free')} frees .* that "
                                                  rf"aclnnMseLossBackward, queued on stream 0x[0-9a-f]+ at "
                                                  rf"{line_of('launch')} \(called from {line_of('mse')}\), "
                                                  rf"still writes"):
        acl.aclrtFree(out)  # <free>
    acl.aclrtSynchronizeStream(p.streams[0])
    acl.aclrtFree(out)  # after the synchronize: fine


def test_as_a_device_a_freed_output_faults_at_the_next_synchronize(port_numpy: Port,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYACLNN_HAZARDS", "off")
    p = port_numpy
    out = p.malloc()
    mse(p, p.tensor(p.upload(G)), p.tensor(p.upload(X)), p.tensor(p.upload(Y)), p.tensor(out), p.streams[0])
    p.allocs.remove(out)
    acl.aclrtFree(out)
    with pytest.raises(errors.RtAicoreExceptionError, match="freed before it ran"):
        acl.aclrtSynchronizeStream(p.streams[0])


def test_on_the_emulator_a_free_under_queued_work_is_misuse(deferred_emulator) -> None:
    with on_device_0(Port) as p:
        out = p.malloc()
        mse(p, p.tensor(p.upload(G)), p.tensor(p.upload(X)), p.tensor(p.upload(Y)), p.tensor(out), p.streams[0])
        p.allocs.remove(out)
        acl.aclrtFree(out)
        acl.aclrtSynchronizeStream(p.streams[0])
    assert deferred_emulator.misuse() >= 1, deferred_emulator.last_misuse()
    assert "freed" in deferred_emulator.last_misuse()


def test_a_tensor_outside_its_allocation_is_named_at_the_launch(port_numpy: Port) -> None:
    p = port_numpy
    small = p.malloc(8)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(p.tensor(p.upload(G)), p.tensor(small), p.tensor(p.upload(Y)),
                                                      NONE, p.tensor(p.malloc()))
    with pytest.raises(pyaclnn.HazardError, match=rf"aclnnMseLossBackward at {line_of('oob')}: self at 0x[0-9a-f]+ "
                                                  r"\(offset 0, shape \(2, 2\).*reaches outside its device allocation"):
        acl.aclnnMseLossBackward(p.workspace(ws), ws, ex, p.streams[0])  # <oob>


def test_the_null_stream_is_asynchronous(port_numpy: Port) -> None:
    """An async copy on the NULL stream is queued on the context's default stream (hicann/runtime
    api_impl.cc ApiImpl::MemcpyAsync -> DefaultStream_()): a synchronous read does not wait."""
    p = port_numpy
    dst = p.malloc()
    acl.aclrtMemcpyAsync(dst, 16, X, 16, H2D, None)  # <null stream>
    with pytest.raises(pyaclnn.HazardError, match=rf"aclrtMemcpy at {line_of('read')} \(called from "
                                                  rf"{line_of('download 1')}\) reads .* that "
                                                  rf"aclrtMemcpyAsync, queued on the NULL stream .* at "
                                                  rf"{line_of('null stream')}, writes"):
        download(dst)  # <download 1>
    acl.aclrtSynchronizeStream(None)
    np.testing.assert_array_equal(download(dst), X)


# -- no false positives ------------------------------------------------------------------------
def test_disjoint_views_of_one_allocation_never_conflict(port_numpy: Port) -> None:
    """Two streams write the two halves of one buffer; the host reads the first half while the
    second is still queued: no hazard (an access is the span its view reaches)."""
    p = port_numpy
    g, x, y = (p.tensor(p.upload(a)) for a in (G, X, Y))
    both = p.malloc(32)
    mse(p, g, x, y, p.tensor(both), p.streams[0])
    mse(p, g, x, y, p.tensor(both, offset=4), p.streams[1])
    acl.aclrtSynchronizeStream(p.streams[0])
    first = np.empty(4, F32)
    acl.aclrtMemcpy(first, 16, both, 16, D2H)
    np.testing.assert_array_equal(first.reshape(2, 2), WANT)
    acl.aclrtSynchronizeStream(p.streams[1])


def test_memory_reused_after_a_synchronize_is_fine(port_numpy: Port) -> None:
    p = port_numpy
    g, x, y = (p.tensor(p.upload(a)) for a in (G, X, Y))
    for _ in range(3):
        out = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        t = acl.aclCreateTensor([2, 2], 2, acl.ACL_FLOAT, [2, 1], 0, acl.ACL_FORMAT_ND, [2, 2], 2, out)
        mse(p, g, x, y, t, p.streams[0])
        acl.aclrtSynchronizeStream(p.streams[0])
        np.testing.assert_array_equal(download(out), WANT)
        acl.aclDestroyTensor(t)
        acl.aclrtFree(out)


def test_streams_ordered_by_an_event_and_an_event_synchronize(port_numpy: Port) -> None:
    p = port_numpy
    out = p.malloc()
    mse(p, p.tensor(p.upload(G)), p.tensor(p.upload(X)), p.tensor(p.upload(Y)), p.tensor(out), p.streams[0])
    event = acl.aclrtCreateEvent()
    acl.aclrtRecordEvent(event, p.streams[0])
    acl.aclrtSynchronizeEvent(event)  # the work before the event is done: the host may read
    np.testing.assert_array_equal(download(out), WANT)
    acl.aclrtDestroyEvent(event)


def test_the_object_layer_and_borrowed_streams_and_memory(port_numpy: Port) -> None:
    """pyaclnn's objects keep their stream-ordered guarantees (Tensor.numpy waits for the
    launches on its memory), on a borrowed stream and over borrowed memory too."""
    p = port_numpy
    device = pyaclnn.Device(0)
    try:
        stream = pyaclnn.Stream.from_handle(p.streams[0], device)
        out_addr = p.malloc()
        out = pyaclnn.Tensor.from_address(out_addr, (2, 2), F32, device=device)
        g, x, y = (pyaclnn.Tensor.from_numpy(a, device) for a in (G, X, Y))
        pyaclnn.MseLossBackward(g, x, y, "none", out).run(stream)
        np.testing.assert_array_equal(out.numpy(), WANT)  # waits for the launch: no hazard
        pyaclnn.MseLossBackward(g, x, y, "none", out).run(stream)
        with pytest.raises(pyaclnn.HazardError, match="aclrtMemcpy at test_hazards.py:.* reads"):
            download(out_addr)  # the raw layer waits for nothing
        stream.synchronize()
        for t in (g, x, y, out):
            t.close()
        stream.close()
    finally:
        device.close()


def test_the_numpy_functions_wait_for_queued_launches_on_their_tensors(port_numpy: Port) -> None:
    device = pyaclnn.Device(0)
    try:
        with device.create_stream() as stream:
            g, x, y = (pyaclnn.Tensor.from_numpy(a, device) for a in (G, X, Y))
            d = pyaclnn.Tensor.empty((2, 2), F32, device)
            pyaclnn.MseLossBackward(g, x, y, "none", d).run(stream)
            got = pyaclnn.mse_loss_backward(d, y, y, reduction="none")  # reads d: waits for the launch
            np.testing.assert_array_equal(got, 2 * (Y - Y) * WANT)
            for t in (g, x, y, d):
                t.close()
    finally:
        device.close()


def test_an_async_memset_is_queued_and_a_sync_read_races_it(port_numpy: Port) -> None:
    p = port_numpy
    buf = p.upload(X)
    acl.aclrtMemsetAsync(buf, 16, 0, 16, p.streams[0])  # <memset>
    with pytest.raises(pyaclnn.HazardError, match=rf"aclrtMemcpy at {line_of('read')} \(called from "
                                                  rf"{line_of('download 2')}\) reads .* that aclrtMemsetAsync, "
                                                  rf"queued on stream 0x[0-9a-f]+ at {line_of('memset')}, writes"):
        download(buf)  # <download 2>
    acl.aclrtSynchronizeStream(p.streams[0])
    np.testing.assert_array_equal(download(buf), np.zeros((2, 2), F32))


def test_a_host_write_racing_a_queued_async_copy_out(port_numpy: Port) -> None:
    """aclrtMemcpyAsync device-to-host reads the device memory when it runs: writing that memory
    from the host before it ran is a race (the copy would see the new bytes)."""
    p = port_numpy
    buf = p.upload(X)
    host = np.empty((2, 2), F32)
    acl.aclrtMemcpyAsync(host, 16, buf, 16, D2H, p.streams[0])
    with pytest.raises(pyaclnn.HazardError, match="aclrtMemcpy at .* writes .* that aclrtMemcpyAsync, .* reads"):
        acl.aclrtMemcpy(buf, 16, np.zeros((2, 2), F32), 16, H2D)
    acl.aclrtSynchronizeStream(p.streams[0])
    np.testing.assert_array_equal(host, X)


def test_the_workspace_counts_as_memory_the_launch_uses(port_numpy: Port) -> None:
    """Freeing a workspace a queued launch was given is a use after free too."""
    p = port_numpy
    g, x, y, out = (p.tensor(p.upload(a)) for a in (G, X, Y, Y))
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(g, x, y, NONE, out)
    workspace = acl.aclrtMalloc(max(ws, 64), acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnMseLossBackward(workspace, max(ws, 64), ex, p.streams[0])
    with pytest.raises(pyaclnn.HazardError, match="aclrtFree at .* frees .* that aclnnMseLossBackward"):
        acl.aclrtFree(workspace)
    acl.aclrtSynchronizeStream(p.streams[0])
    acl.aclrtFree(workspace)


def test_the_reference_results_of_correct_programs_do_not_change(port_numpy: Port) -> None:
    """A correct port that never synchronizes between launches on one stream (in-stream order is
    the device's) gets the right values at its one synchronize."""
    p = port_numpy
    g, x, y = (p.tensor(p.upload(a)) for a in (G, X, Y))
    d, out = p.malloc(), p.malloc()
    mse(p, g, x, y, p.tensor(d), p.streams[0])
    ones = p.tensor(p.upload(np.ones((2, 2), F32)))
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(ones, p.tensor(d), y, NONE, p.tensor(out))
    acl.aclnnMseLossBackward(p.workspace(ws), ws, ex, p.streams[0])
    acl.aclrtSynchronizeStream(p.streams[0])
    np.testing.assert_array_equal(download(out), 2 * (WANT - Y))


def test_a_device_to_device_copy_of_never_written_bytes_is_named(port_numpy: Port) -> None:
    """A synchronous copy waits for no stream: a queued write does not make its source written."""
    p = port_numpy
    src, dst = p.malloc(), p.malloc()
    acl.aclrtMemcpyAsync(src, 8, X, 8, H2D, p.streams[0])  # the first half, queued
    with pytest.raises(pyaclnn.HazardError, match="aclrtMemcpy at .* reads .* that aclrtMemcpyAsync"):
        acl.aclrtMemcpy(dst, 16, src, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)
    acl.aclrtSynchronizeStream(p.streams[0])
    with pytest.raises(pyaclnn.HazardError, match=rf"aclrtMemcpy at .* reads \[0x[0-9a-f]+, \+8\), device memory "
                                                  rf"never written since aclrtMalloc, allocated at {line_of('malloc')}"):
        acl.aclrtMemcpy(dst, 16, src, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)
    acl.aclrtMemcpy(dst, 8, src, 8, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)  # the written half: fine
