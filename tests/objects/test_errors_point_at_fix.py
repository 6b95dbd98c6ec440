"""Errors that point at the fix (issue 16 points 4 and 6), the same class on both backends (the
reference, and acl through the emulator).

Each case misled before: a Python float read as float64 gave "gradOutput dtype float64 != self
dtype float32" with no word of where float64 came from; np.float32 where an aclDataType goes was
561103 "unknown aclDataType" on the reference and cffi's "an integer is required" on the
emulator; a 1-D log_prob gave "target dim 0 1 != logProb dim 0 3"; ``ops Add`` without CANN said
only "no operator matches 'Add'". And cross-entropy 'mean' with a grad_loss of shape (N,) uses
grad_loss[0] without a word: pinned here against torch, as documented.
"""
from __future__ import annotations

import gc
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl, errors
from pyaclnn import _functional

from conftest import headers_package, live_handles, subprocess_env

ROOT = Path(__file__).resolve().parents[2]
F32 = np.float32
MSE_API = "aclnnMseLossBackwardGetWorkspaceSize"
CE_API = "aclnnCrossEntropyLossGradGetWorkspaceSize"


# -- a Python float or list where a tensor goes ------------------------------------------------------
@pytest.mark.parametrize("which", ["float", "list"])
def test_python_float_where_a_tensor_goes_says_float64_came_from_it(backend, which) -> None:
    x = np.arange(6, dtype=F32).reshape(2, 3)
    if which == "float":
        args, name, what = (1.0, x, x), "grad_output", "the Python float 1.0"
    else:
        args, name, what = (x, x, [[1.0, 2.0, 3.0]] * 2), "target", "a Python list"
    with pytest.raises(pyaclnn.AclnnParamInvalidError) as info:  # the library's own status, kept
        pyaclnn.mse_loss_backward(*args)
    text = str(info.value)
    assert info.value.status == 161002 and text.startswith(f"{MSE_API}: ACLNN_ERR_PARAM_INVALID (161002)")
    assert f"hint: {name} was {what}, converted to a float64 array (NumPy's default for Python floats)" in text
    assert f"np.asarray({name}, np.float32)" in text
    back = pickle.loads(pickle.dumps(info.value))  # the hint survives a process boundary
    assert type(back) is type(info.value) and str(back) == text


def test_the_fix_the_hint_names_works(backend) -> None:
    x = np.arange(6, dtype=F32).reshape(2, 3)
    out = pyaclnn.mse_loss_backward(np.asarray(1.0, np.float32), x, np.zeros_like(x), reduction="sum")
    np.testing.assert_array_equal(out, 2 * x)  # d/dx sum((x - 0)^2) = 2x


def test_the_hint_suggests_the_calls_own_dtype(backend) -> None:
    x = np.ones((2, 3), np.float16)
    with pytest.raises(pyaclnn.AclnnParamInvalidError, match=r"np\.asarray\(grad_output, np\.float16\)"):
        pyaclnn.mse_loss_backward(0.5, x, x)


def test_no_hint_for_float64_the_caller_wrote(backend) -> None:
    x = np.ones((2, 3), F32)
    with pytest.raises(pyaclnn.AclnnParamInvalidError) as info:
        pyaclnn.mse_loss_backward(np.ones((2, 3), np.float64), x, x)
    assert "Python" not in str(info.value) and "hint" not in str(info.value)


def test_python_floats_leave_nothing_behind() -> None:
    x = np.ones(3, F32)
    for _ in range(50):
        with pytest.raises(pyaclnn.AclnnParamInvalidError):
            pyaclnn.mse_loss_backward(1.0, x, x)
    gc.collect()
    assert _functional._FROM_PYTHON == {}  # each entry leaves with its array


# -- a NumPy type where an aclDataType goes ----------------------------------------------------------
def _device_buffer() -> int:
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    return acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)


@pytest.mark.parametrize("value, fix", [(np.float32, "pyaclnn.acl.ACL_FLOAT"),
                                        (np.dtype(np.float16), "pyaclnn.acl.ACL_FLOAT16"),
                                        ("int64", "pyaclnn.acl.ACL_INT64"),
                                        (None, "a constant such as pyaclnn.acl.ACL_FLOAT"),
                                        (0.0, "a constant such as pyaclnn.acl.ACL_FLOAT")], ids=repr)
def test_numpy_type_where_an_acl_data_type_goes_is_a_type_error(backend, value, fix) -> None:
    addr = _device_buffer()
    before = live_handles()
    calls = {
        "aclCreateTensor": lambda: acl.aclCreateTensor([2, 2], 2, value, [2, 1], 0, acl.ACL_FORMAT_ND, [2, 2], 2,
                                                       addr),
        "aclCreateScalar": lambda: acl.aclCreateScalar(1.0, value),
        "aclDataTypeSize": lambda: acl.aclDataTypeSize(value),
    }
    for api, call in calls.items():
        with pytest.raises(TypeError, match=rf"^{api}: dataType must be an aclDataType \(an int\), got .*; "
                                            rf"pass {re.escape(fix)}"):
            call()
    assert live_handles() == before  # refused before any handle was made
    tensor = acl.aclCreateTensor([2], 1, acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, [2], 1, addr)
    with pytest.raises(TypeError, match=r"^aclInitTensor: dataType .* pass pyaclnn\.acl\.ACL_FLOAT"):
        acl.aclInitTensor(tensor, [2], 1, np.float32, None, 0, acl.ACL_FORMAT_ND, [2], 1, addr)
    acl.aclDestroyTensor(tensor)
    acl.aclrtFree(addr)


@pytest.mark.parametrize("value", [acl.ACL_FLOAT16, pyaclnn.DType.FLOAT16, np.int32(1)], ids=repr)
def test_integer_data_types_are_taken_as_c_takes_them(backend, value) -> None:
    addr = _device_buffer()
    tensor = acl.aclCreateTensor([2], 1, value, None, 0, acl.ACL_FORMAT_ND, [2], 1, addr)
    assert acl.aclGetDataType(tensor) == acl.ACL_FLOAT16 and acl.aclDataTypeSize(value) == 2
    acl.aclDestroyTensor(tensor)
    acl.aclrtFree(addr)


# -- cross-entropy with a log_prob that is not 2-D ---------------------------------------------------
@pytest.mark.parametrize("log_prob_shape, target_shape", [((3,), (1,)), ((3,), (3,))])
def test_cross_entropy_with_a_1d_log_prob_says_it_must_be_2d(backend, log_prob_shape, target_shape) -> None:
    # The A2/A3 tiling's status (ops.md §3.2: target dim 0 against logProb dim 0), kept; the message
    # says logProb must be 2-D (N, C) (the emulator's text stands for CANN's own on acl).
    with pytest.raises(pyaclnn.AclnnInnerTilingError) as info:
        pyaclnn.cross_entropy_loss_grad(np.float32(1.0), np.zeros(log_prob_shape, F32),
                                        np.zeros(target_shape, np.int64))
    assert info.value.status == 561002
    assert re.search(r"logProb must (be 2-D \(N, C\)|have 2 dims)", str(info.value)), str(info.value)


def test_cross_entropy_1d_log_prob_names_the_shape_to_pass(use_backend) -> None:
    use_backend("numpy")
    with pytest.raises(pyaclnn.AclnnInnerTilingError, match=r"^.*target dim 0 1 != logProb dim 0 3 .*; logProb must "
                                                            r"be 2-D \(N, C\), got \(3,\): one sample is shape \(1, C\)$"):
        pyaclnn.cross_entropy_loss_grad(np.float32(1.0), np.zeros(3, F32), np.zeros(1, np.int64))
    with pytest.raises(pyaclnn.AclnnInnerTilingError) as info:  # 2-D, wrong N: no 2-D advice
        pyaclnn.cross_entropy_loss_grad(np.float32(1.0), np.zeros((2, 3), F32), np.zeros(3, np.int64))
    assert "2-D" not in str(info.value)


# -- python -m pyaclnn ops PATTERN, nothing found ----------------------------------------------------
def test_ops_without_a_match_names_what_the_backend_knows_and_how_to_see_more(tmp_path: Path) -> None:
    from pyaclnn._env import DEFAULT_HOMES
    if any(Path(home).exists() for home in DEFAULT_HOMES):
        pytest.skip("a CANN install is present: its operators are found")
    proc = subprocess.run([sys.executable, "-m", "pyaclnn", "ops", "ForeachAddScalarList"], capture_output=True, text=True,
                          env=subprocess_env(PYACLNN_BACKEND="numpy", ASCEND_HOME_PATH=str(tmp_path)),
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    # what headers/ and the signature table declare (a plain scan of headers/, the table's index)
    from pyaclnn import _signature_table
    shipped = {m for h in (ROOT / "headers").glob("aclnn*.h")
               for m in re.findall(r"\baclnn(\w+)GetWorkspaceSize\s*\(", h.read_text())}
    known = sorted(shipped | set(_signature_table.index()))
    assert "ForeachAddScalarList" not in known and len(known) > 700
    assert line.startswith(f"pyaclnn: error: no operator matches 'ForeachAddScalarList' on the numpy backend, which knows "
                           f"{len(known)} operator(s): {', '.join(known[:8])}, ... (`pyaclnn ops` lists all);")
    assert "found no CANN install with aclnnop headers" in line and "no custom operator package" in line
    assert "set ASCEND_HOME_PATH to the install" in line and "set ASCEND_CUSTOM_OPP_PATH" in line


def test_ops_without_a_match_on_cann_counts_its_operators(emulator, emulator_home, capsys) -> None:
    from pyaclnn._cli import main
    assert main(["ops", "NoSuchOperator"]) == 1
    err = capsys.readouterr().err
    known = pyaclnn._backend.current().runtime.registry.names()
    assert f"on the acl backend, which knows {len(known)} operator(s): {', '.join(sorted(known)[:8])}, ..." in err
    assert "(`pyaclnn ops` lists all)" in err and "searched CANN 8.x aclnnop: " in err  # its own headers first
    assert "found no custom operator package" in err and "set ASCEND_CUSTOM_OPP_PATH" in err
    assert "no CANN install" not in err and "ASCEND_HOME_PATH" not in err  # CANN's headers were found


def test_ops_without_a_match_when_everything_was_found_explains_the_pattern(emulator, emulator_home, use_backend,
                                                                           monkeypatch, tmp_path, capsys) -> None:
    vendor = headers_package(tmp_path / "vendor", {"aclnn_mine.h": (
        "ACLNN_API aclnnStatus aclnnMineGetWorkspaceSize(const aclTensor *x, aclTensor *out,\n"
        "    uint64_t *workspaceSize, aclOpExecutor **executor);\n")})
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(vendor))
    use_backend("acl", home=emulator_home)
    from pyaclnn._cli import main
    assert main(["ops", "NoSuchOperator"]) == 1
    err = capsys.readouterr().err
    assert "found no" not in err and "PATTERN is a name substring or a shell pattern" in err


# -- cross-entropy 'mean' / 'sum' read grad_loss[0] only (ops.md §3.1) --------------------------------
def ce_oracle(g0: float, log_prob: np.ndarray, target: np.ndarray, weight: np.ndarray, reduction: str) -> np.ndarray:
    torch = pytest.importorskip("torch")
    z = torch.from_numpy(log_prob.astype(np.float64)).requires_grad_()
    loss = torch.nn.functional.cross_entropy(z, torch.from_numpy(target), weight=torch.from_numpy(
        weight.astype(np.float64)), reduction=reduction)
    loss.backward(torch.tensor(g0, dtype=torch.float64))  # the scalar loss's gradient: grad_loss[0]
    return z.grad.numpy()


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_mean_and_sum_use_grad_loss_0_of_an_n_vector(backend, reduction) -> None:
    rng = np.random.default_rng(16)
    N, C = 5, 4
    logits = rng.standard_normal((N, C))
    log_prob = (logits - np.log(np.exp(logits).sum(1, keepdims=True))).astype(F32)
    target = rng.integers(0, C, N).astype(np.int64)
    weight = rng.uniform(0.5, 1.5, C).astype(F32)
    grad_loss = np.array([0.75, 9.0, -3.0, 100.0, 2.5], F32)  # only element 0 is read
    out = pyaclnn.cross_entropy_loss_grad(grad_loss, log_prob, target, weight, reduction=reduction)
    np.testing.assert_allclose(out, ce_oracle(0.75, log_prob, target, weight, reduction), rtol=1e-5, atol=1e-6)


def test_cross_entropy_mean_with_an_n_vector_is_refused_on_ascend950(use_backend) -> None:
    use_backend("numpy", soc="Ascend950")  # its tiling checks gradLoss is () or (1,) (ops.md §3.2)
    with pytest.raises(pyaclnn.AclnnInnerTilingError, match=r"gradLoss shape \(5,\) must be \(\) or \(1,\)"):
        pyaclnn.cross_entropy_loss_grad(np.ones(5, F32), np.zeros((5, 4), F32), np.zeros(5, np.int64))
