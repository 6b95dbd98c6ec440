"""The pytest plugin (pyaclnn.testing) leaves pyaclnn's frames out of a failing test's traceback
when pyaclnn raised the error on purpose, and keeps them for anything else (issue 25)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import subprocess_env

USER_TESTS = '''
import numpy as np
import pyaclnn
from pyaclnn import acl


def test_a_pyaclnn_error():
    acl.aclrtFree(12345)  # no device set: pyaclnn.AclError 107002


class Broken:
    def __array__(self, *args, **kwargs):
        raise ZeroDivisionError("the user's own bug")


def test_another_exception():
    pyaclnn.mse_loss_backward(Broken(), np.ones(3, np.float32), np.ones(3, np.float32))
'''


def run(tmp_path: Path, *args: str) -> dict[str, str]:
    """Each test's section of the failure report, by test name."""
    (tmp_path / "test_user.py").write_text(USER_TESTS.lstrip("\n"))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "pyaclnn.testing",
                           "test_user.py", *args], env=subprocess_env(), capture_output=True, text=True,
                          check=False, timeout=120, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    sections = re.split(r"^_+ (\w+) _+$", proc.stdout, flags=re.M)
    return dict(zip(sections[1::2], sections[2::2]))


def own_frames(section: str) -> list[str]:
    """The locations in pyaclnn's sources a section shows (a frame's or the exception's)."""
    return re.findall(r"\bpyaclnn/[\w/]+\.py:\d+", section)


def test_a_pyaclnn_error_shows_the_users_frames_only(tmp_path: Path) -> None:
    report = run(tmp_path)
    section = report["test_a_pyaclnn_error"]
    assert "107002" in section and "acl.aclrtFree(12345)" in section, section
    assert own_frames(section) == [], section
    # not a blanket filter: pyaclnn's frames stay for an exception it did not mean to raise ...
    assert own_frames(report["test_another_exception"]), report["test_another_exception"]
    # ... and --fulltrace shows them all
    assert own_frames(run(tmp_path, "--fulltrace")["test_a_pyaclnn_error"])
