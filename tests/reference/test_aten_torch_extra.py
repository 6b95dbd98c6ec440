"""torch is an optional extra of the aten tier (issue 24, point 5): imported only when an
aten-tier operator first runs, a clear NotSupportedError naming the extra without it, and a
fixed thread count. Each case runs in a fresh interpreter (torch's import is per process)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[2]

# blocks `import torch` as a machine without the extra would fail it
_NO_TORCH = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch' (blocked by the test)")
        return None
sys.meta_path.insert(0, _Block())
"""

_SCRIPT = """
import json, sys
import numpy as np
import pyaclnn
report = {"after_import": "torch" in sys.modules}
x = np.array([[1.0, -2.0]], np.float32)
with pyaclnn.Device(0) as device, device.create_stream() as stream:
    with pyaclnn.Op("ReduceSum", x, [1], False, 0, np.zeros(1, np.float32)) as op:  # an exact reference
        op.run(stream)
        stream.synchronize()
        report["exact"] = op["out"].numpy().tolist()
    report["after_exact"] = "torch" in sys.modules
    try:
        with pyaclnn.Op("Abs", x, np.zeros_like(x)) as op:
            op.run(stream)
            stream.synchronize()
            report["aten"] = op["out"].numpy().tolist()
        import torch
        report["threads"] = torch.get_num_threads()
    except pyaclnn.NotSupportedError as exc:
        report["error"] = [type(exc).__name__, str(exc)]
print(json.dumps(report))
"""


def run(tmp_path: Path, prelude: str = "", **env: str) -> dict:
    extra = {"PYACLNN_BACKEND": "numpy", "PYTHONPATH": str(ROOT), **env}  # signatures: the shipped table
    proc = subprocess.run([sys.executable, "-c", prelude + _SCRIPT], capture_output=True, text=True, timeout=300,
                          env=subprocess_env(**extra), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_torch_is_imported_when_an_aten_operator_first_runs(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    report = run(tmp_path)
    assert report["after_import"] is False and report["after_exact"] is False
    assert report["exact"] == [-1.0] and report["aten"] == [[1.0, 2.0]]
    assert report["threads"] == 1


def test_the_thread_count_follows_pyaclnn_num_threads(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    assert run(tmp_path, PYACLNN_NUM_THREADS="2")["threads"] == 2


def test_without_torch_the_exact_references_run_and_the_error_names_the_extra(tmp_path: Path) -> None:
    report = run(tmp_path, _NO_TORCH)
    assert report["exact"] == [-1.0]
    kind, message = report["error"]
    assert kind == "NotSupportedError"
    assert "aclnnAbs" in message and "pip install 'pyaclnn[torch]'" in message
