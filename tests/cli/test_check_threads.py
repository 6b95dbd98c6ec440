"""A HazardError that ends a worker thread fails `pyaclnn check` (issue 25, point 4): Python only
prints it (threading.excepthook), and the script used to exit 0 with only leaks reported."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import subprocess_env
from test_check import check, line_of, script

WORKER = """
import threading

from pyaclnn import acl

acl.aclrtSetDevice(0)
dev, dev2 = acl.aclrtMalloc(16, 0), acl.aclrtMalloc(16, 0)


def worker():
    acl.aclrtSetDevice(0)
    try:
        acl.aclrtMemcpy(dev2, 16, dev, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)  # reads bytes never written
    finally:
        acl.aclrtResetDevice(0)


t = threading.Thread(target=worker, name="w1")
t.start()
t.join()
acl.aclrtFree(dev)
acl.aclrtFree(dev2)
acl.aclrtResetDevice(0)
print("done")
"""


def test_a_hazard_in_a_worker_thread_fails_the_check(tmp_path: Path) -> None:
    path = script(tmp_path, WORKER)
    proc = check(path)
    assert proc.returncode != 0, (proc.stdout, proc.stderr)
    assert "done" in proc.stdout  # the script went on, as Python goes on after a thread dies
    assert "in thread 'w1'" in proc.stderr and "hazard(s) in threads" in proc.stderr, proc.stderr
    assert f"port.py:{line_of(path, 'reads bytes never written')}" in proc.stderr, proc.stderr


PYTEST_FILE = """
import threading

import pytest
from pyaclnn import acl


def test_thread_hazard(pyaclnn_check):
    acl.aclrtSetDevice(0)
    dev, dev2 = acl.aclrtMalloc(16, 0), acl.aclrtMalloc(16, 0)

    def worker():
        acl.aclrtSetDevice(0)
        try:
            acl.aclrtMemcpy(dev2, 16, dev, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)
        finally:
            acl.aclrtResetDevice(0)
    t = threading.Thread(target=worker, name="w2")
    t.start()
    t.join()
    acl.aclrtFree(dev)
    acl.aclrtFree(dev2)
    acl.aclrtResetDevice(0)
"""


def test_a_hazard_in_a_worker_thread_fails_the_pytest_plugins_test(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(PYTEST_FILE.lstrip("\\n"))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-p",
                           "pyaclnn.testing", "test_user.py"], env=subprocess_env(), capture_output=True,
                          text=True, check=False, timeout=120, cwd=tmp_path)
    assert "FAILED test_user.py::test_thread_hazard" in proc.stdout, proc.stdout
    assert "hazard in thread 'w2'" in proc.stdout, proc.stdout
