"""``python -m pyaclnn`` (samples, doctor, bench): output, JSON report and exit codes.

Exit codes: 0 the chosen backend works / the command succeeded; 1 PYACLNN_BACKEND=acl was
requested and is unavailable (or a sample failed); 2 usage errors (bad arguments, a bad
PYACLNN_* variable, ``bench`` not available). Expected failures are one line, no traceback.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pyaclnn._acl._ffi import FUNCTIONS
from pyaclnn._core.env import DEFAULT_HOMES
from pyaclnn._cli.commands import DOCTOR_KEYS, main

from conftest import CANN_VARS, subprocess_env

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
EMULATOR_BUILD = Path(__file__).resolve().parents[1] / "emulator" / "build.py"
def pyaclnn_cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyaclnn", *args], env=subprocess_env(**env), capture_output=True,
                          text=True, check=False, timeout=60, cwd=ROOT)


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("pyaclnn: error: ") or lines[0].startswith("pyaclnn samples: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def no_default_cann() -> bool:
    return not any(Path(home).exists() for home in DEFAULT_HOMES)


# -- samples ----------------------------------------------------------------------------------------
def test_samples_names_backend_and_soc_and_prints_the_examples_numbers() -> None:
    proc = pyaclnn_cli("samples")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("backend: numpy, SoC Ascend910B"), lines[0]
    assert "why: PYACLNN_BACKEND=numpy" in lines[0]
    sections: dict[str, list[str]] = {}
    for line in lines[1:]:
        m = re.match(r"^== aclnn(\w+) ==$", line)
        if m:
            current = sections.setdefault(m.group(1), [])
        else:
            current.append(line)
    assert list(sections) == ["Add", "AmpUpdateScale", "Cat", "CrossEntropyLossGrad", "ForeachMulScalarList", "GroupNormBackward",
                              "InplaceAdd", "MseLossBackward",
                              "PreluBackward", "ReduceSum"]
    # The same values as the idiomatic examples (checked against oracles in test_examples.py),
    # each followed by its expected value, and a verdict per sample.
    for op, script in (("MseLossBackward", "mse_loss_backward"), ("GroupNormBackward", "group_norm_backward"),
                       ("CrossEntropyLossGrad", "cross_entropy_loss_grad"), ("PreluBackward", "prelu_backward")):
        example = subprocess.run([sys.executable, str(EXAMPLES / f"{script}.py")], env=subprocess_env(),
                                 capture_output=True, text=True, timeout=60, check=True).stdout
        values = [line for line in sections[op] if " is: " in line]
        assert [line.split("  (expected ")[0] for line in values] == example.splitlines()[1:], op
        assert all(re.search(r"  \(expected -?\d+\.\d{6}\)$", line) for line in values), op
        assert sections[op][-1].startswith(f"aclnn{op}: OK ("), sections[op][-1]


def test_samples_follows_pyaclnn_soc_and_runs_one_sample() -> None:
    proc = pyaclnn_cli("samples", "MseLossBackward", PYACLNN_SOC="Ascend950")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("backend: numpy, SoC Ascend950")
    assert lines[1:] == ["== aclnnMseLossBackward ==", "result[0] is: -0.000000  (expected 0.000000)",
                         "result[1] is: 0.000000  (expected 0.000000)", "result[2] is: 1.000000  (expected 1.000000)",
                         "result[3] is: 3.000000  (expected 3.000000)",
                         "aclnnMseLossBackward: OK (4 values match the expected within 1e-05 + 1e-05 * |expected|)"]


def test_samples_sample_unsupported_on_the_soc_fails_with_one_line_and_exit_1() -> None:
    # CrossEntropyLossGrad is documented for A2/A3 only; Atlas training (Ascend910) rejects it.
    proc = pyaclnn_cli("samples", "CrossEntropyLossGrad", PYACLNN_SOC="Ascend910")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert_one_line_error(proc, "CrossEntropyLossGrad")


def test_samples_unknown_name_is_a_usage_error() -> None:
    proc = pyaclnn_cli("samples", "Softmax")
    assert proc.returncode == 2
    assert "unknown sample Softmax" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", ["samples", "doctor"])
def test_bogus_backend_is_a_usage_error(command: str) -> None:
    proc = pyaclnn_cli(command, PYACLNN_BACKEND="bogus")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    if command == "samples":
        assert_one_line_error(proc, "PYACLNN_BACKEND='bogus'", "auto, acl, numpy")
        assert proc.stdout == ""
    else:
        assert "PYACLNN_BACKEND='bogus'" in proc.stdout
        assert "fix: unset PYACLNN_BACKEND or set it to auto, acl or numpy" in proc.stdout


def test_bogus_soc_is_a_usage_error() -> None:
    proc = pyaclnn_cli("samples", PYACLNN_SOC="Ascend999")
    assert proc.returncode == 2
    assert_one_line_error(proc, "PYACLNN_SOC='Ascend999'")


# -- doctor -----------------------------------------------------------------------------------------
def doctor_json(**env: str) -> tuple[int, dict]:
    proc = pyaclnn_cli("doctor", "--json", **env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_doctor_json_has_the_documented_keys_on_numpy() -> None:
    code, data = doctor_json()
    assert code == 0
    assert list(data) == list(DOCTOR_KEYS)
    assert data["exit_code"] == 0
    assert data["backend"]["name"] == "numpy" and data["backend"]["reason"] == "PYACLNN_BACKEND=numpy"
    assert data["backend"]["soc"] == "Ascend910B" and data["backend"]["error"] is None
    assert data["requested_backend"] == "numpy"
    assert set(data["env"]) >= set(CANN_VARS)
    assert set(data["discovery"]) >= {"found", "home", "layout", "attempts", "search_dirs", "error"}
    assert set(data["libraries"]) == {"runtime", "nnopbase", "opapi"}
    # every declared function is listed, per library
    assert {role: set(names) for role, names in data["symbols"].items()} == \
        {role: set(names) for role, names in FUNCTIONS.items()}
    for key in ("cann_version", "device_count", "soc_name"):
        assert set(data[key]) == {"value", "error"}
    assert set(data["acl_init"]) == {"ok", "status", "error"}
    for problem in data["problems"]:
        assert set(problem) == {"problem", "fix"} and problem["fix"]


def test_doctor_text_names_the_backend_and_exits_0() -> None:
    proc = pyaclnn_cli("doctor")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("pyaclnn ")
    assert "backend: numpy, SoC Ascend910B" in proc.stdout
    assert "result: OK, backend numpy works" in proc.stdout


@pytest.mark.skipif(not no_default_cann(), reason="a CANN install exists in the default directories")
def test_doctor_auto_without_cann_falls_back_and_says_no_device(tmp_path: Path) -> None:
    code, data = doctor_json(PYACLNN_BACKEND="auto", ASCEND_HOME_PATH=str(tmp_path))
    assert code == 0
    assert data["backend"]["name"] == "numpy"
    assert data["backend"]["reason"].startswith("auto: acl unavailable")
    assert data["device_found"] is False
    assert any("no Ascend device found" in note for note in data["notes"])
    assert data["discovery"]["found"] is False
    assert any(str(tmp_path) in a for a in data["discovery"]["attempts"])


@pytest.mark.skipif(not no_default_cann(), reason="a CANN install exists in the default directories")
def test_doctor_acl_requested_without_cann_exits_1_with_a_fix(tmp_path: Path) -> None:
    proc = pyaclnn_cli("doctor", PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(tmp_path))
    assert proc.returncode == 1, proc.stdout
    assert "Traceback" not in proc.stderr
    assert "CANN not found" in proc.stdout
    assert ("fix: point ASCEND_HOME_PATH at the toolkit directory that holds lib64/ "
            "(e.g. /usr/local/Ascend/ascend-toolkit/latest) or source <toolkit>/set_env.sh") in proc.stdout
    assert "result: FAILED, PYACLNN_BACKEND=acl is unavailable" in proc.stdout

    code, data = doctor_json(PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(tmp_path))
    assert code == 1 and data["exit_code"] == 1
    assert data["backend"]["name"] is None and "CANN not found" in data["backend"]["error"]
    assert all(not lib["loaded"] for lib in data["libraries"].values())
    fixes = " ".join(p["fix"] for p in data["problems"])
    assert "set_env.sh" in fixes and "PYACLNN_BACKEND=numpy" in fixes


@pytest.mark.skipif(not no_default_cann(), reason="a CANN install exists in the default directories")
def test_samples_acl_requested_without_cann_is_one_line_exit_1(tmp_path: Path) -> None:
    proc = pyaclnn_cli("samples", PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(tmp_path))
    assert proc.returncode == 1
    assert_one_line_error(proc, "PYACLNN_BACKEND=acl", "CANN not found", "pyaclnn doctor")


# -- bench and argparse -------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [["--help"], ["samples", "--help"], ["doctor", "--help"], ["--version"]])
def test_help_exits_0(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    assert capsys.readouterr().out


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["doctor", "--yaml"]])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "usage:" in capsys.readouterr().err


# -- doctor on the CANN ABI emulator ------------------------------------------------------------------
@pytest.fixture(scope="session")
def emulator_toolkit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An emulated CANN 8.x toolkit (tests/emulator), built once per session."""
    if not EMULATOR_BUILD.is_file():
        pytest.skip("the CANN ABI emulator (tests/emulator/build.py) is not there yet")
    from emulator.build import build_toolkit
    return Path(build_toolkit(tmp_path_factory.mktemp("doctor-cann"), layout="8.x"))


def test_doctor_on_the_emulator_finds_every_declared_symbol(emulator_toolkit: Path) -> None:
    code, data = doctor_json(PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(emulator_toolkit),
                             ASCEND_OPP_PATH=str(emulator_toolkit / "opp"))
    assert data["backend"]["name"] == "acl", data["backend"]
    assert data["backend"]["error"] is None
    assert code == 0 and data["exit_code"] == 0, data["problems"]
    assert data["discovery"]["found"] is True and data["discovery"]["layout"] == "8.x"
    assert all(lib["loaded"] for lib in data["libraries"].values()), data["libraries"]
    missing = {role: [n for n, ok in names.items() if ok is not True] for role, names in data["symbols"].items()}
    assert missing == {role: [] for role in FUNCTIONS}
    assert {role: set(names) for role, names in data["symbols"].items()} == \
        {role: set(names) for role, names in FUNCTIONS.items()}
    assert data["missing_required"] == [] and data["missing_optional"] == []
    assert data["acl_init"]["ok"] is True
    assert data["device_found"] is True and data["device_count"]["value"] >= 1
    assert data["soc_name"]["value"] == data["backend"]["soc_name"]
    assert data["problems"] == []


@pytest.mark.parametrize("requested, code", [("auto", 0), ("acl", 1)])
def test_doctor_on_a_toolkit_without_a_device_says_so(emulator_toolkit: Path, requested: str, code: int) -> None:
    # EMU_DEVICE_COUNT=0: the libraries load and aclInit works, but there is no device (no driver).
    got, data = doctor_json(PYACLNN_BACKEND=requested, ASCEND_HOME_PATH=str(emulator_toolkit),
                            ASCEND_OPP_PATH=str(emulator_toolkit / "opp"), EMU_DEVICE_COUNT="0")
    assert got == code and data["exit_code"] == code
    assert data["device_found"] is False and data["device_count"]["value"] == 0
    assert data["backend"]["name"] == ("numpy" if requested == "auto" else None)
    assert all(lib["loaded"] for lib in data["libraries"].values())
    fixes = [p["fix"] for p in data["problems"] if p["problem"].startswith("libraries load but no device")]
    assert fixes and "install the Ascend driver" in fixes[0] and "PYACLNN_BACKEND=numpy" in fixes[0]


def test_bogus_hazards_mode_is_a_usage_error_and_the_doctor_shows_it() -> None:
    proc = pyaclnn_cli("samples", PYACLNN_HAZARDS="maybe")
    assert proc.returncode == 2
    assert_one_line_error(proc, "PYACLNN_HAZARDS='maybe'", "raise, warn, off")
    code, data = doctor_json(PYACLNN_HAZARDS="maybe")
    assert code == 2
    assert data["pyaclnn_env"]["PYACLNN_HAZARDS"] == "maybe"
    assert any("PYACLNN_HAZARDS='maybe'" in p["problem"] for p in data["problems"]), data["problems"]


def test_samples_help_promises_no_bench_case_the_bench_refuses() -> None:
    # `samples --help` said its short names were those of `bench --case`, which takes only the
    # benchmarked operators' (`bench --case add` is a usage error)
    from pyaclnn.ops.cases import CASE_NAMES
    from pyaclnn.ops.samples import ALIASES
    text = " ".join(pyaclnn_cli("samples", "--help").stdout.split())
    assert "bench --case" not in text or set(ALIASES) <= set(CASE_NAMES), text
