"""``python -m pyaclnn bench`` and ``benchmarks/acl_overhead.py``: they run and their output is
well formed. No timing is judged here (the figures of --quick mean nothing)."""
from __future__ import annotations

import json
import math
import re
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn._cli import bench as _bench

ROOT = Path(__file__).resolve().parents[2]
ACL_OVERHEAD = ROOT / "benchmarks" / "acl_overhead.py"
LABELS = ("MseLossBackward", "GroupNormBackward", "CrossEntropyLossGrad", "PreluBackward")
TOP_KEYS = {"schema", "pyaclnn", "argv", "quick", "repeat", "warmup", "modes", "backend", "machine", "peer",
            "copy_bandwidth", "cases", "reuse_cases", "small_calls", "aten_small_calls", "elapsed_s"}
CASE_KEYS = {"name", "label", "params", "bytes_read", "bytes_written", "bound_ms", "output_bytes", "pyaclnn",
             "fresh_pages_ms", "peer", "ratio", "x_bound", "extra_peak_bytes", "first_call_extra_peak_bytes", "max_abs_diff"}
REUSE_KEYS = {"name", "label", "params", "bytes_read", "bytes_written", "bound_ms", "output_bytes", "pyaclnn",
              "peer", "ratio", "x_bound", "extra_peak_bytes", "max_abs_diff"}
ALLOC_TITLE = "Allocating:"
REUSE_TITLE = "Steady state (outputs reused):"
# aten has an out= overload for every peer but PReLU's _prelu_kernel_backward
OUT_VARIANT = {"mse": True, "group_norm": True, "cross_entropy": True, "prelu": False}


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("PYACLNN_")}
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(pyaclnn.__file__).resolve().parents[1]),
                                                    out.get("PYTHONPATH")) if p)
    out.update(extra)
    return out


def run(*cmd: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *cmd], env=env(), capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, check=False)


def positive(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def has_torch() -> bool:
    import importlib.util
    return importlib.util.find_spec("torch") is not None


def test_bench_quick_prints_the_table_and_writes_the_json(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    proc = run("-m", "pyaclnn", "bench", "--quick", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    for column in ("case", "pyaclnn", "peer", "ratio", "bound", "x bound", "extra peak"):
        assert column in proc.stdout
    for label in LABELS:
        assert label in proc.stdout, label
    assert "copy bandwidth" in proc.stdout
    assert "bench: [1/4]" in proc.stderr and "bench: [4/4]" in proc.stderr  # progress on stderr
    # both tables by default, the allocating one first; the steady-state one says how the peer writes
    assert ALLOC_TITLE in proc.stdout and REUSE_TITLE in proc.stdout
    assert "fresh pages" in proc.stdout[:proc.stdout.index(REUSE_TITLE)]
    reuse_part = proc.stdout[proc.stdout.index(REUSE_TITLE):]
    assert proc.stdout.index(ALLOC_TITLE) < proc.stdout.index(REUSE_TITLE)
    assert "peer outputs" in reuse_part
    for label in LABELS:
        assert label in reuse_part, label
    if has_torch():
        assert "preallocated (out=)" in reuse_part and "allocated: no out= overload" in reuse_part

    data = json.loads(out.read_text())
    assert TOP_KEYS <= set(data)
    assert data["schema"] == _bench.SCHEMA and data["quick"] is True and data["repeat"] == 1
    assert data["modes"] == ["alloc", "reuse"]
    assert data["backend"]["backend"] == "numpy"
    assert positive(data["machine"]["cores"]) and data["machine"]["numpy"]
    bw = data["copy_bandwidth"]
    assert positive(bw["gbps"]) and positive(bw["single_thread_gbps"])
    assert all(positive(t) for t in bw["samples_single_ms"])
    assert [c["name"] for c in data["cases"]] == list(_bench.CASE_NAMES)
    for case in data["cases"]:
        assert CASE_KEYS <= set(case), case.get("error")
        for key in ("bytes_read", "bytes_written", "bound_ms", "output_bytes", "x_bound", "fresh_pages_ms"):
            assert positive(case[key]), (case["name"], key)
        ours = case["pyaclnn"]
        assert positive(ours["median_ms"]) and positive(ours["warmup_ms"])
        assert len(ours["samples_ms"]) == 1 and all(positive(t) for t in ours["samples_ms"])
        assert isinstance(case["extra_peak_bytes"], int) and case["extra_peak_bytes"] >= 0
        assert isinstance(case["first_call_extra_peak_bytes"], int)
        if data["peer"]["available"]:
            peer = case["peer"]
            assert positive(peer["median_ms"]) and all(positive(t) for t in peer["samples_ms"])
            assert positive(case["ratio"])
            assert peer["ops"] and all(op.startswith("torch.ops.aten.") for op in peer["ops"])
            # the peer computes the same thing (float32 round-off apart)
            assert case["max_abs_diff"] is not None and case["max_abs_diff"] < 1e-3, case["name"]
        else:
            assert case["peer"] is None and case["ratio"] is None
    assert data["peer"]["available"] == has_torch()
    check_reuse_cases(data, list(_bench.CASE_NAMES))
    assert "Small calls (inputs of <= 4096 elements)" in proc.stdout  # the default run has them too
    assert [r["name"] for r in data["small_calls"]] == list(_bench.CASE_NAMES) * 2
    assert ATEN_TITLE in proc.stdout  # and the aten-tier small calls (issue 24), last
    if has_torch():
        check_aten_small(data)
    else:
        assert data["aten_small_calls"]["skipped"] and data["aten_small_calls"]["rows"] == []


def check_reuse_cases(data: dict, names: list[str]) -> None:
    assert [c["name"] for c in data["reuse_cases"]] == names
    for case in data["reuse_cases"]:
        assert REUSE_KEYS <= set(case), case.get("error")
        for key in ("bytes_read", "bytes_written", "bound_ms", "output_bytes", "x_bound"):
            assert positive(case[key]), (case["name"], key)
        ours = case["pyaclnn"]
        assert ours["api"].startswith("pyaclnn.") and "plan + run" in ours["api"]
        assert positive(ours["median_ms"]) and positive(ours["warmup_ms"])
        assert len(ours["samples_ms"]) == data["repeat"] and all(positive(t) for t in ours["samples_ms"])
        assert isinstance(case["extra_peak_bytes"], int) and case["extra_peak_bytes"] >= 0
        if data["peer"]["available"]:
            peer = case["peer"]
            assert peer["out_variant"] is OUT_VARIANT[case["name"]]
            assert peer["ops"] and all(op.startswith("torch.ops.aten.") for op in peer["ops"])
            if peer["out_variant"]:
                assert any(op.endswith((".out", ".grad_input")) for op in peer["ops"]), peer["ops"]
            assert positive(peer["median_ms"]) and all(positive(t) for t in peer["samples_ms"])
            assert positive(case["ratio"])
            # the same numbers as the peer's, read back from the preallocated outputs
            assert case["max_abs_diff"] is not None and case["max_abs_diff"] < 1e-3, case["name"]
        else:
            assert case["peer"] is None and case["ratio"] is None


def test_bench_reuse_outputs_gives_only_the_steady_state_table(tmp_path: Path) -> None:
    out = tmp_path / "reuse.json"
    proc = run("-m", "pyaclnn", "bench", "--quick", "--reuse-outputs", "--case", "group_norm", "--case", "prelu",
               "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert REUSE_TITLE in proc.stdout and ALLOC_TITLE not in proc.stdout
    assert "GroupNormBackward" in proc.stdout and "PreluBackward" in proc.stdout
    data = json.loads(out.read_text())
    assert data["modes"] == ["reuse"] and data["cases"] == []
    check_reuse_cases(data, ["group_norm", "prelu"])


def test_bench_alloc_mode_gives_only_the_allocating_table(tmp_path: Path) -> None:
    out = tmp_path / "alloc.json"
    proc = run("-m", "pyaclnn", "bench", "--quick", "--mode", "alloc", "--case", "mse", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert ALLOC_TITLE in proc.stdout and REUSE_TITLE not in proc.stdout
    data = json.loads(out.read_text())
    assert data["modes"] == ["alloc"] and data["reuse_cases"] == []
    assert [c["name"] for c in data["cases"]] == ["mse"]


def test_bench_without_torch_measures_pyaclnn_alone(tmp_path: Path) -> None:
    out = tmp_path / "alone.json"
    proc = run("-m", "pyaclnn", "bench", "--quick", "--no-torch", "--case", "mse", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "no peer" in proc.stdout and "measured alone" in proc.stdout
    assert "PyTorch is not available" in proc.stderr
    data = json.loads(out.read_text())
    assert data["peer"]["available"] is False and data["peer"]["reason"]
    (case,) = data["cases"]
    assert case["name"] == "mse" and case["peer"] is None and case["ratio"] is None
    assert positive(case["pyaclnn"]["median_ms"])
    (steady,) = data["reuse_cases"]
    assert steady["name"] == "mse" and steady["peer"] is None and steady["ratio"] is None
    assert positive(steady["pyaclnn"]["median_ms"])


@pytest.mark.parametrize("argv", [["--repeat", "0"], ["--case", "nope"], ["--bogus"], ["--mode", "nope"],
                                  ["--reuse-outputs", "--mode", "alloc"]])
def test_bench_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench.main(argv) == 2
    assert "Traceback" not in capsys.readouterr().err


def _c_compiler() -> bool:
    cc = shlex.split(os.environ.get("CC") or "cc")
    return bool(cc) and shutil.which(cc[0]) is not None


ACL_ROWS = ("a. full call, public objects", "a. full call, pyaclnn.acl", "b. repeatable executor, public objects",
            "b. repeatable executor, pyaclnn.acl", "d. import pyaclnn")


@pytest.mark.skipif(not _c_compiler(), reason="no C compiler: the emulator and the C baseline are built at run time")
def test_acl_overhead_quick(tmp_path: Path) -> None:
    out = tmp_path / "acl.json"
    proc = run(str(ACL_OVERHEAD), "--quick", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    for row in ACL_ROWS:
        assert row in proc.stdout, row
    for column in ("Python", "C", "Py/C", "target", "result"):
        assert column in proc.stdout
    data = json.loads(out.read_text())
    for key in ("public_full_us", "acl_full_us", "public_repeat_us", "acl_repeat_us", "c_full_us", "c_repeat_us",
                "import_pyaclnn_ms", "import_numpy_ms"):
        assert positive(data["medians"][key]), key
    assert all(positive(v) for v in data["ratios"].values())
    assert set(data["targets"]) >= {"public_full", "acl_full", "public_repeat", "import"}
    assert all(positive(v) for v in data["public_full_stages_us"].values())


@pytest.mark.skipif(not _c_compiler(), reason="no C compiler: the emulator and the C baseline are built at run time")
def test_bench_acl_runs_the_overhead_benchmark_from_a_checkout() -> None:
    proc = run("-m", "pyaclnn", "bench", "--acl", "--quick")
    assert proc.returncode == 0, proc.stderr
    assert "through the CANN emulator" in proc.stdout and "a. full call" in proc.stdout


SMALL_TITLE = "Small calls (inputs of <= 4096 elements)"


def test_bench_small_calls_case_runs_against_aten(tmp_path: Path) -> None:
    """The small-input case (issue 12): the four NumPy-in/NumPy-out calls on 128 and 4096
    elements, per call against aten, with the 3x target stated; no timing is judged here."""
    out = tmp_path / "small.json"
    proc = run("-m", "pyaclnn", "bench", "--quick", "--case", "small", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert SMALL_TITLE in proc.stdout and "target <= 3x" in proc.stdout
    header = next(line for line in proc.stdout.splitlines() if line.startswith("case") and "aten 1 thread" in line)
    if has_torch():  # issue 16: pyaclnn on the same inputs as torch tensors, beside the ndarray call
        assert "torch in" in header and "/ ndarray" in header and "target <= 1.5x" in header
    assert "FAILED" not in proc.stdout
    assert ALLOC_TITLE not in proc.stdout and REUSE_TITLE not in proc.stdout  # no large case selected: no table
    for label in LABELS:
        assert proc.stdout.count(label) == 2, label  # 128 and 4096 elements
    data = json.loads(out.read_text())
    assert data["cases"] == [] and data["reuse_cases"] == []
    rows = data["small_calls"]
    assert [r["name"] for r in rows] == list(_bench.CASE_NAMES) * 2
    assert sorted({r["elements"] for r in rows}) == [128, 4096]
    for r in rows:
        assert "error" not in r, r.get("error")
        assert r["target_ratio"] == 3.0 and positive(r["pyaclnn"]["median_us"])
        assert len(r["pyaclnn"]["samples_us"]) == 3 and all(positive(t) for t in r["pyaclnn"]["samples_us"])
        if has_torch():
            assert positive(r["peer"]["median_us"]) and positive(r["ratio"])
            assert all(op.startswith("torch.ops.aten.") for op in r["peer"]["ops"])
            assert r["within_target"] is (r["ratio"] <= 3.0)
            one = r["peer_one_thread"]
            assert positive(one["median_us"]) and len(one["samples_us"]) == 3
            assert r["ratio_one_thread"] == r["pyaclnn"]["median_us"] / one["median_us"]
            assert r["max_abs_diff"] is not None and r["max_abs_diff"] < 1e-4, r["name"]
            tin = r["torch_inputs"]
            assert positive(tin["median_us"]) and len(tin["samples_us"]) == 3
            assert r["torch_input_ratio"] == tin["median_us"] / r["pyaclnn"]["median_us"]
            assert r["torch_input_target"] == 1.5
            assert r["torch_input_within_target"] is (r["torch_input_ratio"] <= 1.5)
        else:
            assert r["peer"] is None and r["ratio"] is None and r["within_target"] is None
            assert r["peer_one_thread"] is None and r["ratio_one_thread"] is None
            assert r["torch_inputs"] is None and r["torch_input_ratio"] is None


def test_bench_case_selection_without_small_leaves_the_small_calls_out(tmp_path: Path) -> None:
    out = tmp_path / "mse.json"
    proc = run("-m", "pyaclnn", "bench", "--quick", "--case", "mse", "--json", str(out))
    assert proc.returncode == 0 and SMALL_TITLE not in proc.stdout  # --case without small: not run
    data = json.loads(out.read_text())
    assert data["small_calls"] == [] and data["aten_small_calls"] is None and ATEN_TITLE not in proc.stdout
    assert "small" in _bench.cli.build_parser().format_help()
    assert "aten-small" in _bench.cli.build_parser().format_help()


ATEN_TITLE = "Aten-tier small calls"
ATEN_ROW_KEYS = {"name", "label", "shape", "elements", "batch", "pyaclnn", "phase1", "peer", "ratio", "target_ratio",
                 "within_target", "max_abs_diff"}


def check_aten_small(data: dict, quick: bool = True) -> None:
    """The aten-tier table's JSON (issue 24 point 7): five operators on 8x16 and 64x64, three
    timed sides each, the 3x target; no timing is judged."""
    from pyaclnn._cli.bench import aten_small
    table = data["aten_small_calls"]
    assert table["skipped"] is None and table["target_ratio"] == 3.0
    assert table["torch_threads"] == 1  # the aten tier's thread count (no PYACLNN_NUM_THREADS here)
    rows = table["rows"]
    assert [(r["name"], tuple(r["shape"])) for r in rows] == [(c.name, s) for s in ((8, 16), (64, 64))
                                                             for c in aten_small.CASES]
    assert {"Abs", "Mul", "Softmax", "Amax"} <= {r["name"] for r in rows}
    for r in rows:
        assert ATEN_ROW_KEYS <= set(r), r.get("error")
        assert r["elements"] == r["shape"][0] * r["shape"][1]
        for side in ("pyaclnn", "phase1", "peer"):
            assert positive(r[side]["median_us"]), (r["label"], side)
            assert len(r[side]["samples_us"]) == (3 if quick else 15)
            assert all(positive(t) for t in r[side]["samples_us"])
        assert r["pyaclnn"]["call"].startswith("pyaclnn.Op(")
        assert r["peer"]["op"].startswith("torch.ops.aten.")
        assert r["ratio"] == r["pyaclnn"]["median_us"] / r["peer"]["median_us"]
        assert r["within_target"] is (r["ratio"] <= 3.0) and r["target_ratio"] == 3.0
        assert r["max_abs_diff"] < 1e-5, r["label"]


@pytest.mark.skipif(not has_torch(), reason="the aten tier needs torch")
def test_bench_aten_small_case_times_pyaclnn_op_against_aten(tmp_path: Path) -> None:
    out = tmp_path / "aten.json"
    proc = run("-m", "pyaclnn", "bench", "--quick", "--case", "aten-small", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "FAILED" not in proc.stdout
    assert ALLOC_TITLE not in proc.stdout and REUSE_TITLE not in proc.stdout and "x bound" not in proc.stdout
    part = proc.stdout[proc.stdout.index(ATEN_TITLE):]
    assert "target: at most 3x aten" in part and "torch on 1 thread(s)" in part
    header = next(line for line in part.splitlines() if line.startswith("case"))
    assert header.split() == ["case", "elements", "pyaclnn.Op", "phase", "1", "aten", "ratio", "target", "<=", "3x"]
    for label in ("Abs 8x16", "Mul 8x16", "Softmax 8x16", "Amax 8x16", "Abs 64x64", "Amax 64x64"):
        assert label in part, label
    data = json.loads(out.read_text())
    assert data["cases"] == [] and data["reuse_cases"] == [] and data["small_calls"] == []
    check_aten_small(data)


def test_bench_aten_small_is_skipped_without_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   use_backend, capsys: pytest.CaptureFixture[str]) -> None:
    """torch is an optional extra: without it (its import fails) the table is one line saying
    why, the JSON says so, and the run succeeds."""
    use_backend("numpy")
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    out = tmp_path / "no-torch.json"
    assert _bench.main(["--quick", "--case", "aten-small", "--json", str(out)]) == 0
    stdout, stderr = capsys.readouterr()
    assert "Traceback" not in stderr
    line = next(line for line in stdout.splitlines() if line.startswith(ATEN_TITLE))
    assert line.startswith(f"{ATEN_TITLE}: skipped: PyTorch is not available (cannot import torch")
    assert "pip install 'pyaclnn[torch]'" in line
    table = json.loads(out.read_text())["aten_small_calls"]
    assert table["rows"] == [] and table["torch_threads"] is None and "cannot import torch" in table["skipped"]


def _softmax(x: "np.ndarray") -> "np.ndarray":
    e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# NumPy's own expressions for what each aten-small case computes (not the table's aten calls)
ATEN_SMALL_EXPECTED = {
    "Abs": lambda x: np.abs(x),
    "Mul": lambda x, y: x * y,
    "Sub": lambda x, y: x.astype(np.float64) - 2.5 * y.astype(np.float64),
    "Softmax": _softmax,
    "Amax": lambda x: x.max(axis=-1),
}


@pytest.mark.skipif(not has_torch(), reason="the aten tier needs torch")
def test_bench_aten_small_calls_compute_the_operators(use_backend) -> None:
    """What the table times is the operator: the pyaclnn.Op call and the aten peer both give
    NumPy's own result on the same inputs, every case and shape, repeatedly (the output Tensor
    is reused), and the Tensors are closed after."""
    import torch
    from pyaclnn._cli.bench import aten_small
    use_backend("numpy")
    assert set(ATEN_SMALL_EXPECTED) == {c.name for c in aten_small.CASES}
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        for shape in aten_small.SHAPES:
            for k, case in enumerate(aten_small.CASES):
                prepared = aten_small.prepare(case, shape, torch, stream, 7 + k)
                expected = ATEN_SMALL_EXPECTED[case.name](*prepared.arrays)
                for _ in range(2):
                    got = prepared.op()
                    assert got.shape == expected.shape and got.dtype == np.float32
                    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-7, err_msg=case.name)
                    np.testing.assert_allclose(prepared.peer(), expected, rtol=2e-6, atol=1e-7, err_msg=case.name)
                prepared.phase1()
                prepared.close()
                assert not any(t.is_open for t in prepared.tensors)


@pytest.mark.skipif(not has_torch(), reason="the aten tier needs torch")
def test_aten_overhead_script_runs_the_bench_calls(tmp_path: Path) -> None:
    """benchmarks/aten_overhead.py times the bench table's cases (its own two columns added)."""
    from pyaclnn._cli.bench import aten_small
    out = tmp_path / "aten_overhead.json"
    proc = run(str(ROOT / "benchmarks" / "aten_overhead.py"), "--calls", "20", "--samples", "2", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:7] == ["case", "aten", "us", "op", "us", "op-ndarray", "phase-1"]
    data = json.loads(out.read_text())
    assert list(data) == [c.name for c in aten_small.CASES]
    for row in data.values():
        assert all(positive(row[k]) for k in ("aten", "op", "op-ndarray", "phase-1", "exact-Add", "ratio"))
        assert row["ratio"] == row["op"] / row["aten"]


@pytest.mark.skipif(not has_torch(), reason="the aten tier needs torch")
def test_bench_aten_small_reports_a_failing_case_and_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             use_backend, capsys: pytest.CaptureFixture[str]) -> None:
    """A case that fails (here an operator no header declares) is a FAILED row with its error, the
    next case still runs, and the command exits 1."""
    from pyaclnn._cli.bench import aten_small
    use_backend("numpy")
    monkeypatch.setattr(aten_small, "CASES", (aten_small.AtenCase("NoSuchOperator", "abs.default", 1),
                                              aten_small.CASES[0]))
    monkeypatch.setattr(aten_small, "SHAPES", ((8, 16),))
    out = tmp_path / "failing.json"
    assert _bench.main(["--quick", "--case", "aten-small", "--json", str(out)]) == 1
    stdout, stderr = capsys.readouterr()
    assert "bench: [aten-small] NoSuchOperator 8x16: FAILED:" in stderr
    assert re.search(r"^NoSuchOperator 8x16 +- +FAILED", stdout, re.M)
    bad, good = json.loads(out.read_text())["aten_small_calls"]["rows"]
    assert bad["name"] == "NoSuchOperator" and "NoSuchOperator" in bad["error"] and bad["shape"] == [8, 16]
    assert good["name"] == aten_small.CASES[1].name and "error" not in good
