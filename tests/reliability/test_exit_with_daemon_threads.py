"""Exit while daemon threads still use pyaclnn (issue 25, point 4): 1 run in ~30 of the acl
backend died with SIGSEGV. Python runs atexit hooks while daemon threads go on running, and
pyaclnn's hook freed the memory a daemon thread was copying into (its aclrtMemcpy runs without
the GIL; the emulator's copy, like a device's, then wrote to unmapped memory). Now the hook
releases nothing while a thread that used pyaclnn still runs: the process's end gives it back.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import subprocess_env
from emulator.build import toolkit_env

# pyaclnn's exit hook registers at pyaclnn's first use, after this script's own: it runs first
HOLD = """
import atexit, threading
import numpy as np
atexit.register(lambda: print("freed" if tensor.closed else "kept", flush=True))
import pyaclnn
ready = threading.Event()
def hold():
    global tensor
    tensor = pyaclnn.Tensor.from_numpy(np.ones(4, np.float32))
    ready.set()
    threading.Event().wait()   # alive at exit, as a daemon thread in the middle of its work
threading.Thread(target=hold, daemon=True).start()
ready.wait()
"""

# daemon threads launching ops and copying while the main thread exits (the crash's scenario)
LAUNCHING = """
import random, sys, threading, time
import numpy as np
import pyaclnn
x = np.ones(1 << 20, np.float32)
pyaclnn.mse_loss_backward(x, x, x, "mean")
def loop():
    g = pyaclnn.Tensor.from_numpy(x); i = pyaclnn.Tensor.from_numpy(x)
    out = pyaclnn.Tensor.empty((1 << 20,), np.float32)
    while True:
        try:
            with pyaclnn.MseLossBackward(g, i, g, "sum", out) as op:
                op.run()
            pyaclnn.mse_loss_backward(x, x, x, "mean")
        except pyaclnn.PyaclnnError:
            pass
for _ in range(6):
    threading.Thread(target=loop, daemon=True).start()
time.sleep(random.uniform(0, 0.1))
"""


def run(script: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-X", "faulthandler", str(script)], env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_exit_hook_frees_nothing_a_running_thread_may_use(backend, emulator_home: Path,
                                                              tmp_path: Path) -> None:
    script = tmp_path / "hold.py"
    script.write_text(HOLD)
    env = subprocess_env(PYACLNN_BACKEND=backend, **(toolkit_env(emulator_home) if backend == "acl" else {}))
    done = run(script, env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "kept\n", "")  # was "freed"


def test_exiting_while_daemon_threads_launch_never_crashes(emulator_home: Path, tmp_path: Path) -> None:
    script = tmp_path / "launching.py"
    script.write_text(LAUNCHING)
    env = subprocess_env(PYACLNN_BACKEND="acl", **toolkit_env(emulator_home))
    deadline = time.monotonic() + 15
    runs = 0
    while time.monotonic() < deadline or runs < 3:
        done = run(script, env)
        runs += 1
        assert done.returncode == 0, f"run {runs}: exit status {done.returncode}\n{done.stderr[-3000:]}"
