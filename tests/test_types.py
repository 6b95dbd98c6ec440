"""The package's type hints are checked (mypy), so they stay true as the code changes."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "pyaclnn"


def test_mypy_is_clean():
    result = subprocess.run([sys.executable, "-m", "mypy", str(PKG), "--ignore-missing-imports",
                             "--cache-dir", "/dev/null", "--no-error-summary"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
