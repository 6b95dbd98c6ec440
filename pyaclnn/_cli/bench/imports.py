"""``pyaclnn bench --import-time``: what ``import pyaclnn`` costs on top of ``import numpy``.

Each run is a fresh interpreter that imports numpy, then pyaclnn, timing each import with
``time.perf_counter`` inside the process (interpreter start-up is in neither figure). The
medians over the runs are reported; issue 23's target is at most 40 ms over numpy.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
from typing import Any

TARGET_MS = 40.0
_PROBE = ("import time; t0 = time.perf_counter(); import numpy; t1 = time.perf_counter(); "
          "import pyaclnn; t2 = time.perf_counter(); print(t1 - t0, t2 - t1)")


def measure(runs: int) -> dict[str, Any]:
    """Median import times (ms) of numpy and of pyaclnn after it, over ``runs`` fresh interpreters."""
    numpy_ms, pyaclnn_ms = [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
        first, second = (float(v) * 1e3 for v in out.stdout.split())
        numpy_ms.append(first)
        pyaclnn_ms.append(second)
    return {"runs": runs, "numpy_ms": statistics.median(numpy_ms),
            "pyaclnn_over_numpy_ms": statistics.median(pyaclnn_ms), "target_ms": TARGET_MS}


def report(result: dict[str, Any]) -> str:
    over = result["pyaclnn_over_numpy_ms"]
    verdict = "within" if over <= result["target_ms"] else "OVER"
    return (f"import numpy: {result['numpy_ms']:.1f} ms; import pyaclnn after it: {over:.1f} ms "
            f"(median of {result['runs']} fresh interpreters; {verdict} the {result['target_ms']:.0f} ms target)")
