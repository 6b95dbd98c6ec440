"""The package's type hints are checked (mypy), so they stay true as the code changes; and user
code type-checks against them as it is written (constants, precise return types)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "pyaclnn"

USER_CODE = '''
import numpy as np
import pyaclnn
from pyaclnn import acl

a = np.zeros((2, 4, 3), np.float32)
stats = np.ones((2, 2), np.float32)
gi, gg, gb = pyaclnn.group_norm_backward(a, a, stats, stats, None, 2, 4, 3, 2)
reveal_type(gi)
gi.shape  # no "Item None has no attribute" under the default mask
masked = pyaclnn.group_norm_backward(a, a, stats, stats, None, 2, 4, 3, 2, output_mask=[True, False, True])
reveal_type(masked[1])
reveal_type(acl.ACL_FLOAT)
reveal_type(acl.ACL_MEM_MALLOC_HUGE_FIRST)
reveal_type(acl.ACLNN_ERR_PARAM_INVALID)
executor = pyaclnn.MseLossBackward(None, None, None)
reveal_type(executor.workspace_size)
'''


def mypy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", *args, "--ignore-missing-imports",
                           "--cache-dir", "/dev/null", "--no-error-summary"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_mypy_is_clean():
    result = mypy(str(PKG))
    assert result.returncode == 0, result.stdout + result.stderr


def test_user_code_sees_constants_and_precise_types(tmp_path: Path):
    script = tmp_path / "user.py"
    script.write_text(USER_CODE)
    result = mypy(str(script))
    assert result.returncode == 0, result.stdout + result.stderr
    revealed = [line.split("Revealed type is ", 1)[1].strip('"')
                for line in result.stdout.splitlines() if "Revealed type is" in line]
    assert len(revealed) == 6, result.stdout
    assert revealed[0].startswith("numpy.ndarray") and not revealed[0].endswith("| None")
    assert revealed[1].startswith("numpy.ndarray") and revealed[1].endswith("| None")
    assert revealed[2:] == ["int"] * 4
