"""Process life cycle: fork, interpreter exit with live objects, and garbage collection.

- A child forked after pyaclnn was initialised gets a clear PyaclnnError (naming fork and the
  'spawn' start method) from every entry point, and never touches the parent's handles, not
  even when it releases inherited objects or exits; a child forked before initialisation works.
- An interpreter that exits with live objects (device, streams, event, tensors and views, a
  repeatable executor, planned-but-never-run executors, the default device and stream of the
  functional API) exits 0 with an empty stderr, and pyaclnn's exit hook releases everything
  once, in dependency order, then gives back its aclInit once. An ``atexit`` hook registered before pyaclnn
  is imported runs after pyaclnn's (atexit is LIFO) and reports what is left.
- Objects dropped without close() are released by garbage collection, and GC never finalizes.

Each scenario runs in a subprocess, on both backends (acl through the emulator).
"""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from conftest import live_handles
from pyaclnn._objects import backend as _backend

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
F32 = np.float32

# Prepended to every child script: the report hook (registered before pyaclnn is imported, so
# it runs after pyaclnn's own exit hook), and the native-call counters of the emulator.
PRELUDE = """
import atexit, json, os, sys
sys.path.insert(0, {tests!r})
BACKEND = os.environ["PYACLNN_BACKEND"]
REPORT = {{}}
RELEASES = []      # (runtime method, handle) of every release, in order
LIVE_KINDS = ("tensor", "bool_array", "executor", "stream", "event", "device_alloc", "host_alloc",
              "device_set", "context")

def emulator():
    from emulator.build import Emulator
    return Emulator(os.environ["ASCEND_HOME_PATH"])

def native_calls():
    if BACKEND != "acl":
        return None
    emu = emulator()
    return {{f: emu.calls(f) for f in ("aclrtSetDevice", "aclrtMalloc", "aclrtMemcpy", "aclrtFree",
            "aclDestroyTensor", "aclDestroyAclOpExecutor", "aclrtDestroyStream", "aclrtResetDevice",
            "aclnnMseLossBackward", "aclFinalize", "aclFinalizeReference")}}

def live_now():
    if BACKEND == "acl":
        emu = emulator()
        live = {{k: emu.live(k) for k in LIVE_KINDS + ("init",)}}
        return live, emu.misuse(), emu.last_misuse()
    from pyaclnn._objects import backend as _backend
    if _backend.active is None:  # a child forked after initialisation has no backend
        return {{}}, 0, ""
    return _backend.active.runtime.live_counts(), 0, ""

def report():
    live, misuse, last = live_now() if "pyaclnn" in sys.modules else ({{}}, 0, "")
    REPORT.update(pid=os.getpid(), live=live, misuse=misuse, last_misuse=last, releases=RELEASES,
                  calls=native_calls())
    print("REPORT " + json.dumps(REPORT), flush=True)

atexit.register(report)

def log_releases(runtime):
    '''Record every release the runtime is asked for, with the handle (as an int).'''
    for name in ("destroy_executor", "destroy_tensor", "destroy_bool_array", "free", "destroy_event",
                 "destroy_stream", "reset_device", "release_init"):
        original = getattr(runtime, name)
        def wrapped(*args, _original=original, _name=name):
            handle = runtime.as_int(args[0]) if args and not isinstance(args[0], int) else (args or [None])[0]
            RELEASES.append((_name, handle))
            return _original(*args)
        setattr(runtime, name, wrapped)
"""


def run_script(body: str, backend: str, home: Path | None, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYACLNN_BACKEND"] = backend
    env.pop("PYACLNN_SOC", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS), env.get("PYTHONPATH", "")])
    if home is not None:
        env["ASCEND_HOME_PATH"] = str(home)
    script = PRELUDE.format(tests=str(TESTS)) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=str(ROOT))


def reports(proc: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line[len("REPORT "):]) for line in proc.stdout.splitlines() if line.startswith("REPORT ")]


@pytest.fixture(params=["numpy", "acl"])
def child_backend(request, emulator_home):
    return request.param, (emulator_home if request.param == "acl" else None)


# -- fork --------------------------------------------------------------------------------------------
FORK_AFTER_INIT = """
import gc
import numpy as np
import pyaclnn
from pyaclnn import acl

x = np.arange(4, dtype=np.float32)
expected = pyaclnn.mse_loss_backward(x, x * 2, x)          # initialises pyaclnn
dev = pyaclnn.Device(0)
stream, event = dev.create_stream(), dev.create_event()
t, t2 = pyaclnn.Tensor.from_numpy(x), pyaclnn.Tensor.from_numpy(x * 2)
out = pyaclnn.Tensor.zeros(4)
ex = pyaclnn.MseLossBackward(t, t2, t, "mean", out)
rex = pyaclnn.MseLossBackward(t, t, t, "sum", pyaclnn.Tensor.zeros(4), repeatable=True)
log_releases(pyaclnn._objects.backend.current().runtime)

pid = os.fork()
if pid == 0:
    at_fork = native_calls()
    RELEASES.clear()
    attempts = {
        "mse_loss_backward": lambda: pyaclnn.mse_loss_backward(x, x, x),
        "Device": lambda: pyaclnn.Device(0),
        "Tensor.from_numpy": lambda: pyaclnn.Tensor.from_numpy(x),
        "Tensor.zeros(device=dev)": lambda: pyaclnn.Tensor.zeros(4, device=dev),
        "Tensor.numpy": t.numpy,
        "Tensor.copy_from": lambda: t.copy_from(x),
        "view": lambda: t[1:],
        "MseLossBackward": lambda: pyaclnn.MseLossBackward(t, t, t, "mean", out),
        "Executor.run": lambda: ex.run(stream),
        "repeatable.run": lambda: rex.run(stream),
        "set_input": lambda: rex.set_input(0, t),
        "Stream.synchronize": stream.synchronize,
        "Stream.workspace": lambda: stream.workspace(1 << 20),
        "create_stream": dev.create_stream,
        "Event.record": lambda: event.record(stream),
        "acl.aclrtMalloc": lambda: acl.aclrtMalloc(64, 0),
        "backend_info": pyaclnn.backend_info,
    }
    REPORT["errors"] = {}
    for name, call in attempts.items():
        try:
            call()
        except pyaclnn.PyaclnnError as exc:
            REPORT["errors"][name] = [type(exc).__name__, str(exc)]
        except BaseException as exc:
            REPORT["errors"][name] = [type(exc).__name__, "not a PyaclnnError: " + str(exc)]
        else:
            REPORT["errors"][name] = None
    # Inherited objects released in the child (explicitly and by GC): the parent's handles.
    t.close()
    del ex, rex
    gc.collect()
    REPORT["at_fork"] = at_fork
    sys.exit(7)                                            # atexit hooks run in the child too
_, status = os.waitpid(pid, 0)
REPORT["child_exit"] = os.waitstatus_to_exitcode(status)
# The parent goes on as if nothing happened.
np.testing.assert_array_equal(pyaclnn.mse_loss_backward(x, x * 2, x), expected)
ex.run(stream)
rex.run(stream)
stream.synchronize()
np.testing.assert_array_equal(out.numpy(), expected)
REPORT["parent_ok"] = True
"""


def test_fork_after_initialisation_gives_a_clear_error(child_backend):
    backend, home = child_backend
    proc = run_script(FORK_AFTER_INIT, backend, home)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    child, parent = sorted(reports(proc), key=lambda r: "child_exit" in r)
    assert parent["child_exit"] == 7 and parent["parent_ok"]
    for name, error in child["errors"].items():
        assert error is not None, f"{name} worked in a forked child"
        cls, message = error
        assert cls == "PyaclnnError", f"{name}: {cls}: {message}"
        assert "fork" in message and "'spawn'" in message, f"{name}: {message}"
    # The child never called CANN: not for the attempts, not to release inherited objects, not
    # at exit (pyaclnn's exit hook does nothing in a forked child).
    assert child["calls"] == child["at_fork"]
    assert child["releases"] == [] and child["misuse"] == 0
    # The parent then exited normally and released everything.
    assert all(v == 0 for v in parent["live"].values()), parent["live"]
    assert parent["misuse"] == 0, parent["last_misuse"]


FORK_BEFORE_INIT = """
import numpy as np
import pyaclnn                                             # imported, not initialised

x = np.arange(6, dtype=np.float32).reshape(2, 3)
want = 2 * (x - 1) * x / x.size
pid = os.fork()
if pid == 0:
    got = pyaclnn.mse_loss_backward(x, x, np.ones_like(x))
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        t, y = pyaclnn.Tensor.from_numpy(x), pyaclnn.Tensor.from_numpy(np.ones_like(x))
        out = pyaclnn.Tensor.zeros((2, 3))
        pyaclnn.MseLossBackward(t, t, y, "mean", out).run(stream)
        stream.synchronize()
        REPORT["child_ok"] = bool(np.allclose(got, want) and np.allclose(out.numpy(), want))
    sys.exit(0)
_, status = os.waitpid(pid, 0)
REPORT["child_exit"] = os.waitstatus_to_exitcode(status)
REPORT["parent_ok"] = bool(np.allclose(pyaclnn.mse_loss_backward(x, x, np.ones_like(x)), want))
"""


def test_a_child_forked_before_initialisation_works(child_backend):
    backend, home = child_backend
    proc = run_script(FORK_BEFORE_INIT, backend, home)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    child, parent = sorted(reports(proc), key=lambda r: "child_exit" in r)
    assert child["child_ok"] and parent["child_exit"] == 0 and parent["parent_ok"]
    for r in (child, parent):  # each process released its own objects at exit
        assert all(v == 0 for v in r["live"].values()), r["live"]
        assert r["misuse"] == 0, r["last_misuse"]


# -- interpreter exit ---------------------------------------------------------------------------------
EXIT_WITH_LIVE_OBJECTS = """
import numpy as np
import pyaclnn
from pyaclnn._objects import backend as _backend

log_releases(_backend.current().runtime)
x = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
pyaclnn.mse_loss_backward(x, x, x)                         # default device + default stream
dev = pyaclnn.Device(0)
stream, stream2 = dev.create_stream(), dev.create_stream()
start, end = dev.create_event(), dev.create_event()
start.record(stream)
t = pyaclnn.Tensor.from_numpy(x)
view = t[:, ::2]                                           # shares t's storage
rex = pyaclnn.MseLossBackward(t, t, t, "sum", pyaclnn.Tensor.zeros(x.shape), repeatable=True)
rex.run(stream)
planned = pyaclnn.MseLossBackward(view, view, view, "none", pyaclnn.Tensor.zeros(view.shape))
stats = pyaclnn.Tensor.from_numpy(np.ones((2, 2), np.float32))
gamma = pyaclnn.Tensor.from_numpy(np.ones(4, np.float32))
gn = pyaclnn.GroupNormBackward(t, t, stats, stats, gamma, 2, 4, 3, 2, (True, True, True),
                               pyaclnn.Tensor.zeros(x.shape), pyaclnn.Tensor.zeros(4), pyaclnn.Tensor.zeros(4))
gn2 = pyaclnn.GroupNormBackward(t, t, stats, stats, gamma, 2, 4, 3, 2, (True, True, True),
                                pyaclnn.Tensor.zeros(x.shape), pyaclnn.Tensor.zeros(4), pyaclnn.Tensor.zeros(4))
gn2.run(stream2)                                           # gives stream2 a workspace
end.record(stream)
REPORT["calls_before_exit"] = native_calls()
REPORT["finalized_before_exit"] = _backend.current().finalized
RELEASES.clear()                                           # only what happens at exit
# ... and exit without closing anything
"""


def test_exit_with_live_objects_finalizes_in_order_once(child_backend):
    backend, home = child_backend
    proc = run_script(EXIT_WITH_LIVE_OBJECTS, backend, home)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    (report,) = reports(proc)
    assert all(v == 0 for v in report["live"].values()), report["live"]
    assert report["misuse"] == 0, report["last_misuse"]
    if backend == "acl":  # pyaclnn's one aclInit is given back with aclFinalizeReference (the last one)
        assert report["calls_before_exit"]["aclFinalizeReference"] == 0
        assert report["calls"]["aclFinalizeReference"] == 1 and report["calls"]["aclFinalize"] == 0
        assert report["live"]["init"] == 0
    assert report["finalized_before_exit"] is False

    releases = [tuple(r) for r in report["releases"]]
    names = [name for name, _ in releases]
    handles = [r for r in releases if r[0] not in ("reset_device", "release_init")]
    assert len(set(handles)) == len(handles), "a handle was released twice"
    assert names[-1] == "release_init" and names.count("release_init") == 1
    first, last = ({n: names.index(n) for n in set(names)},
                   {n: len(names) - 1 - names[::-1].index(n) for n in set(names)})
    # planned (x2), repeatable: all destroyed; then tensors; storage after the executors holding it;
    # events before streams; streams before their device is reset; the reset before finalize.
    assert names.count("destroy_executor") == 3
    assert last["destroy_executor"] < first["free"]
    assert last["destroy_event"] < first["destroy_stream"]
    assert last["destroy_stream"] < first["reset_device"]
    assert last["reset_device"] < first["release_init"]
    # stream and stream2, and dev; also the functional API's default stream and device (its calls
    # run through the executor on both backends)
    assert names.count("destroy_stream") == 2 + 1
    assert names.count("reset_device") == 1 + 1          # each device was set once
    assert names.count("destroy_bool_array") == 1       # the planned GroupNorm's mask


# -- garbage collection ----------------------------------------------------------------------------
def test_gc_releases_dropped_objects_and_never_finalizes(backend):
    """Objects dropped without close() are released by GC (the safety net), and GC never calls
    aclFinalize (abi.md §6.3: no finalize from destructors)."""
    emu = None
    if backend == "acl":
        from emulator.build import Emulator
        emu = Emulator(_backend.current().paths["home"])
        emu.reset_counters()
    x = np.arange(24, dtype=F32).reshape(2, 4, 3)
    gc.collect()
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        inside = live_handles()

        def make_and_drop() -> None:
            s, e = dev.create_stream(), dev.create_event()
            e.record(s)
            t = pyaclnn.Tensor.from_numpy(x)
            view = t[:, ::2]
            out = pyaclnn.Tensor.zeros(x.shape)
            pyaclnn.MseLossBackward(t, t, t, "mean", out)                        # planned, dropped
            rex = pyaclnn.MseLossBackward(t, t, t, "sum", out, repeatable=True)  # ran, dropped
            rex.run(s)
            stats = pyaclnn.Tensor.from_numpy(np.ones((2, 2), F32))
            pyaclnn.GroupNormBackward(t, t, stats, stats, None, 2, 4, 3, 2, (True, False, False),
                                      pyaclnn.Tensor.zeros(x.shape))
            cycle = {"view": view}
            cycle["self"] = cycle                                                 # needs the cycle collector
            s.workspace(1024)

        for _ in range(20):
            make_and_drop()
        gc.collect()
        assert live_handles() == inside
        if emu is not None:
            assert emu.calls("aclFinalize") == 0 and emu.live("init") == 1
            assert emu.misuse() == 0, emu.last_misuse()
        assert not _backend.current().finalized
        # and the runtime is still fine
        out = pyaclnn.Tensor.zeros(3)
        t = pyaclnn.Tensor.from_numpy(np.ones(3, F32))
        pyaclnn.MseLossBackward(t, t, t, "mean", out).run(stream)
        stream.synchronize()
        np.testing.assert_array_equal(out.numpy(), np.zeros(3, F32))
