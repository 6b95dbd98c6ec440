"""Shared fixtures: backend selection per test, and the CANN ABI emulator for the acl backend."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))  # for `emulator.build`

# The suite's default is the reference backend, even on a machine that has CANN.
os.environ["PYACLNN_BACKEND"] = "numpy"
os.environ.pop("PYACLNN_SOC", None)


def pytest_report_header(config: pytest.Config) -> str:
    import numpy
    return f"pyaclnn tests: default backend numpy (SoC Ascend910B); numpy {numpy.__version__}"


@pytest.fixture
def use_backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., object]]:
    """use_backend("numpy", soc="Ascend950") or use_backend("acl", home=...): switch for one test."""
    from pyaclnn import _backend

    def switch(name: str, soc: str | None = None, home: str | Path | None = None) -> object:
        monkeypatch.setenv("PYACLNN_BACKEND", name)
        if soc:
            monkeypatch.setenv("PYACLNN_SOC", soc)
        else:
            monkeypatch.delenv("PYACLNN_SOC", raising=False)
        if home is not None:
            monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
        _backend.reset_for_tests()
        return _backend.current()

    yield switch
    _backend.reset_for_tests()


@pytest.fixture(params=["Ascend910B", "Ascend910_93", "Ascend910", "Ascend310P", "Ascend950"])
def soc(request: pytest.FixtureRequest, use_backend: Callable[..., object]) -> str:
    """Runs a test once per SoC on the numpy backend."""
    use_backend("numpy", soc=request.param)
    return request.param
