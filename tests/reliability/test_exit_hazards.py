"""A hazard found while pyaclnn's exit hook closes what was left open is reported (issue 25,
point 4): on stderr, and the process exits 1 where it would have exited 0. It was dropped:
the exit hook ignored what the closes raised, and Python only prints an atexit hook's error.

The program: a pinned host buffer (aclrtMallocHost) is written after an aclrtMemcpyAsync from
it was queued on a Stream left open; the copy only runs when the exit hook synchronizes that
stream, and the reference finds the write then (the same hazard as tests/reference/
test_hazards_missed.py, found at a synchronize there).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import subprocess_env

SCRIPT = """
import ctypes, sys
import numpy as np
import pyaclnn
from pyaclnn import acl
device = pyaclnn.Device(0)
stream = device.create_stream()
t = pyaclnn.Tensor.empty((16,), np.uint8)
host = acl.aclrtMallocHost(16)
view = np.ctypeslib.as_array((ctypes.c_uint8 * 16).from_address(host))
view[:] = 1
acl.aclrtMemcpyAsync(t.data_ptr, 16, host, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE, stream)
if {fixed}:
    stream.synchronize()
view[4:8] = 2
print("done", flush=True)
"""


def run(tmp_path: Path, fixed: bool) -> subprocess.CompletedProcess:
    script = tmp_path / "exits.py"
    script.write_text(SCRIPT.format(fixed=fixed))
    return subprocess.run([sys.executable, str(script)], env=subprocess_env(), capture_output=True, text=True,
                          timeout=120)


def test_a_hazard_found_at_exit_is_reported_and_fails_the_process(tmp_path: Path) -> None:
    done = run(tmp_path, fixed=False)
    assert done.stdout == "done\n"
    assert done.returncode == 1, done.stderr
    assert "pyaclnn: closing what was left open: HazardError: aclrtMemcpyAsync queued at exits.py:12" \
        in done.stderr, done.stderr


def test_a_correct_program_exits_0_and_quietly(tmp_path: Path) -> None:
    done = run(tmp_path, fixed=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "done\n", "")
