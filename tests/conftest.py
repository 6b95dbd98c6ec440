"""Shared fixtures: backend selection per test, and the CANN ABI emulator for the acl backend."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))  # for `emulator.build`

# The suite's default is the reference backend, even on a machine that has CANN.
os.environ["PYACLNN_BACKEND"] = "numpy"
os.environ.pop("PYACLNN_SOC", None)


def pytest_report_header(config: pytest.Config) -> str:
    import numpy
    return f"pyaclnn tests: default backend numpy (SoC Ascend910B); numpy {numpy.__version__}"


CANN_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_AICPU_PATH",
             "ASCEND_CUSTOM_OPP_PATH")


def subprocess_env(**extra: str) -> dict[str, str]:
    """A clean environment for a child Python: no PYACLNN_*/CANN variables, the reference
    backend, and the pyaclnn these tests import; ``extra`` is added last."""
    import pyaclnn
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYACLNN_") and k not in CANN_VARS}
    env["PYACLNN_BACKEND"] = "numpy"
    package_root = str(Path(pyaclnn.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


@pytest.fixture
def use_backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., object]]:
    """use_backend("numpy", soc="Ascend950") or use_backend("acl", home=...): switch for one test."""
    from pyaclnn._objects import backend as _backend

    def switch(name: str, soc: str | None = None, home: str | Path | None = None) -> object:
        monkeypatch.setenv("PYACLNN_BACKEND", name)
        if soc:
            monkeypatch.setenv("PYACLNN_SOC", soc)
        else:
            monkeypatch.delenv("PYACLNN_SOC", raising=False)
        if home is not None:
            monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
            if name == "acl" and "ASCEND_OPP_PATH" not in os.environ and (Path(home) / "opp").is_dir():
                # what set_env.sh exports (unless the test set its own), per test: pyaclnn sets
                # it itself only when it first loads CANN, once per process, so a test that set
                # it with monkeypatch around that first load left later tests without it (561107)
                monkeypatch.setenv("ASCEND_OPP_PATH", str(Path(home) / "opp"))
        _backend.reset_for_tests()
        return _backend.current()

    yield switch
    _backend.reset_for_tests()


@pytest.fixture(params=["Ascend910B", "Ascend910_93", "Ascend910", "Ascend310P", "Ascend950"])
def soc(request: pytest.FixtureRequest, use_backend: Callable[..., object]) -> str:
    """Runs a test once per SoC on the numpy backend."""
    use_backend("numpy", soc=request.param)
    return request.param


@pytest.fixture(scope="session")
def emulator_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fake CANN 8.x toolkit whose libraries are the ABI emulator (built once per session)."""
    from emulator.build import build_toolkit
    return build_toolkit(tmp_path_factory.mktemp("cann"), layout="8.x")


@pytest.fixture
def emulator(emulator_home: Path, use_backend: Callable[..., object]):
    """The acl backend running on the emulator; yields its control API (counters, faults)."""
    from emulator.build import Emulator
    emu = Emulator(emulator_home)
    emu.reset_faults()
    emu.clear_op_cache()  # each test starts with an empty op cache (every thread's: it is per thread, like CANN's)
    use_backend("acl", home=emulator_home)
    emu.release_devices()  # what earlier tests left set (aclFinalize resets no device, as CANN)
    yield emu
    emu.reset_faults()


@pytest.fixture(params=["deferred", "worker"])
def emu(request: pytest.FixtureRequest, emulator):
    """The emulator with asynchronous streams (queued work runs at synchronisation, or on a
    worker thread); the test fails if the emulator saw misuse (memory freed under queued work)."""
    emulator.set_stream_mode(request.param)
    emulator.reset_counters()
    yield emulator
    assert emulator.misuse() == 0, emulator.last_misuse()
    emulator.set_stream_mode(None)


@pytest.fixture
def as_a_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """PYACLNN_HAZARDS=off: the reference behaves as a device on a program with a hazard (stale
    data, a fault at the next synchronize), for tests of what the device does then."""
    monkeypatch.setenv("PYACLNN_HAZARDS", "off")


@pytest.fixture(params=["numpy", "acl"])
def backend(request: pytest.FixtureRequest, use_backend: Callable[..., object]) -> str:
    """Runs a test on the reference backend and on the acl backend (through the emulator)."""
    if request.param == "acl":
        request.getfixturevalue("emulator")
    else:
        use_backend("numpy")
    return request.param


def shared_folder(*parts: str) -> Path | None:
    """``shared/<parts>`` beside the checkout (the project's shared test inputs, never copied into
    it): beside this worktree's root, else beside the main checkout of a ``git worktree``; None
    if neither has it."""
    import subprocess
    root = TESTS.parent
    candidates = [root.parent / "shared"]
    try:
        common = subprocess.run(["git", "-C", str(root), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        common = ""
    if common:
        candidates.append(Path(common).parent.parent / "shared")  # <main>/.git -> <main>/../shared
    for shared in candidates:
        if shared.joinpath(*parts).exists():
            return shared.joinpath(*parts)
    return None


def headers_package(root: Path, headers: dict[str, str]) -> Path:
    """A custom operator package at ``root`` holding only ``op_api/include/<name>`` headers of
    the given texts (no library: a package installed half-way, or one made for a test)."""
    include = root / "op_api" / "include"
    include.mkdir(parents=True)
    for name, text in headers.items():
        (include / name).write_text(text)
    return root


S = TypeVar("S")


@contextmanager
def on_device_0(make: Callable[[], S]) -> Iterator[S]:
    """``make()`` (a C-layer session of the test's: streams, memory, tensors) with device 0
    current through both layers; its ``close()`` and the device reset run after the test."""
    import pyaclnn
    from pyaclnn import acl
    with pyaclnn.Device(0):
        acl.aclrtSetDevice(0)
        session: Any = make()
        try:
            yield session
        finally:
            session.close()
            acl.aclrtResetDevice(0)


@pytest.fixture
def reference_then_emulator(use_backend: Callable[..., object], emulator_home: Path,
                            monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], Any]], tuple[Any, Any]]:
    """``run(fn)``: ``fn()`` on the NumPy reference (Ascend910B, the SoC the emulator models), then
    on the acl backend over the emulator; returns (reference's result, emulator's result)."""
    monkeypatch.setenv("ASCEND_OPP_PATH", str(emulator_home / "opp"))

    def run(fn: Callable[[], Any]) -> tuple[Any, Any]:
        assert getattr(use_backend("numpy", soc="Ascend910B"), "name") == "numpy"
        reference = fn()
        assert getattr(use_backend("acl", home=emulator_home), "name") == "acl"  # the emulator, not a fallback
        return reference, fn()
    return run


# The generated header CANN ships for aclnnForeachAddScalarList (ops-nn foreach_add_scalar_list_def.cpp),
# an operator the toolkit declares and pyaclnn has no NumPy reference for.
UNREFERENCED_OP = "ForeachAddScalarList"
_UNREFERENCED_HEADER = """
aclnnStatus aclnnForeachAddScalarListGetWorkspaceSize(const aclTensorList *x, const aclScalarList *scalars,
                                                      const aclTensorList *out, uint64_t *workspaceSize,
                                                      aclOpExecutor **executor);
aclnnStatus aclnnForeachAddScalarList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                      aclrtStream stream);
"""


@pytest.fixture
def unreferenced_toolkit(tmp_path: Path) -> Path:
    """A CANN home (9.x layout) whose aclnnop folder declares only aclnnForeachAddScalarList, which
    has no NumPy reference: enough for the NumPy backend, which reads headers, not libraries."""
    folder = tmp_path / "cann" / "include" / "aclnnop"
    folder.mkdir(parents=True)
    (folder / "aclnn_foreach_add_scalar_list.h").write_text(_UNREFERENCED_HEADER)
    return tmp_path / "cann"


def outcome(result: Any) -> tuple:
    """A call's result, comparable across backends: ("error", class, status) or ("ok", dtype,
    shape, bytes)."""
    if isinstance(result, Exception):
        return ("error", type(result).__name__, result.status)
    return ("ok", result.dtype.str, result.shape, np.ascontiguousarray(result).tobytes())


def live_handles() -> dict[str, int]:
    """Live native handles of the current backend (emulator counters on acl)."""
    from pyaclnn._objects import backend as _backend
    backend = _backend.current()
    if backend.name == "numpy":
        return backend.runtime.live_counts()
    from emulator.build import Emulator
    emu = Emulator(backend.paths["home"])
    kinds = ("tensor", "bool_array", "executor", "stream", "event", "device_alloc", "host_alloc")
    return {k: emu.live(k) for k in kinds}


def reference_abi() -> dict:
    """tests/data/abi.json (the shared reference) with the graph-capture declarations added since
    (tests/data/abi_capture.json, with its sources): what headers/ must declare."""
    import json
    data = json.loads((TESTS / "data" / "abi.json").read_text())
    capture = json.loads((TESTS / "data" / "abi_capture.json").read_text())
    data["prototypes"] = {**data["prototypes"], **capture["prototypes"]}
    data["enums"] = {**data["enums"], **capture["enums"]}
    data["typedefs"] = {**data["typedefs"], **capture["typedefs"]}
    libraries = dict(data["libraries"])
    libraries[capture["library"]] = [*libraries[capture["library"]], *capture["prototypes"]]
    data["libraries"] = libraries
    return data
