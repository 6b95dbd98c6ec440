"""examples/official/*_acl.py: the official ops-math/ops-nn examples, ported through pyaclnn.acl,
run on the reference backend against independent expectations.

Each port is run as its own ``__main__`` (runpy, in this process: one torch import for all), under
pyaclnn's check (a stream hazard or a handle left alive fails it). Its printed lines are parsed
and compared with a NumPy or torch expression written here from the operator's documented
meaning (not the aten tier's table, which computes them): values printed with ``%f`` within that
rounding, integers exactly. A port whose operator has no reference on the backend is skipped,
naming it (pyaclnn.testing.require_reference).
"""
from __future__ import annotations

import ast
import contextlib
import io
import math
import re
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from conftest import subprocess_env
from pyaclnn.testing import require_reference

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PORTS_DIR = ROOT / "examples" / "official"
LINE = re.compile(r"^(?P<label>.*?) ?\[(?P<i>\d+)\] is: (?P<v>-?(?:\d+(?:\.\d+)?|nan|inf))$")
f32 = np.float32

Segments = list[tuple[str, np.ndarray]]


def parse(stdout: str) -> Segments:
    """The port's ``label[i] is: v`` lines as (label, values) runs in printed order (a run ends
    where the index restarts at 0 or the label changes); the first line names the backend, and
    the only other lines allowed are the blank and heading lines between two runs."""
    first, *lines = stdout.splitlines()
    assert first.startswith("backend: numpy (SoC "), first
    runs: list[tuple[str, list[float]]] = []
    for line in lines:
        m = LINE.match(line)
        if m is None:
            assert line == "" or line.startswith("test aclnn"), f"unexpected line {line!r}"
            continue
        label, i = m.group("label"), int(m.group("i"))
        if i == 0:
            runs.append((label, []))
        assert runs and runs[-1][0] == label and len(runs[-1][1]) == i, f"{line!r} out of order"
        runs[-1][1].append(float(m.group("v")))
    return [(label, np.array(v)) for label, v in runs]


# -- the expectations: (operators the port calls, [(label, expected values)]) -------------------------
def erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf)(x)


def _layer_norm() -> Segments:
    x = np.full((1, 2, 32), 2.0)
    mean = x.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)
    return [("out result", (x - mean) * rstd), ("mean result", mean), ("rstd result", rstd)]


def _layer_norm_backward() -> Segments:
    # d/dx of (x - mean) * rstd * w with the sample's given mean and rstd (not x's own):
    # dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w; dw = sum(dy * xhat); db = sum(dy)
    dy = np.array([[2.0, 3], [4, 5]])
    x = dy.copy()
    mean, rstd, w = np.array([[2.0], [3]]), np.array([[4.0], [5]]), np.ones(2)
    xhat = (x - mean) * rstd
    g = dy * w
    dx = rstd * (g - g.mean(1, keepdims=True) - xhat * (g * xhat).mean(1, keepdims=True))
    return [("out result", dx), ("dw result", (dy * xhat).sum(0)), ("db result", dy.sum(0))]


def _addmm() -> Segments:
    self = np.arange(8, dtype=f32).reshape(2, 4)
    m1 = np.array([[1, 1, 1], [2, 2, 2]], f32)
    m2 = np.array([1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4], f32).reshape(3, 4)
    out = 1.0 * self + f32(1.2) * (m1 @ m2)
    return [("result", out), ("result", out)]  # aclnnAddmm, then aclnnInplaceAddmm on the same self


def _silu_backward() -> Segments:
    x = np.arange(1, 7, dtype=np.float64)
    s = 1 / (1 + np.exp(-x))
    return [("out result", s * (1 + x * (1 - s)))]  # d/dx x*sigmoid(x), gradOut 1


def _gelu_backward() -> Segments:
    x = np.arange(8.0)
    cdf, pdf = 0.5 * (1 + erf(x / math.sqrt(2))), np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    return [("result", 1 * (cdf + x * pdf))]  # d/dx x*Phi(x), the int32 gradOutput all ones


def _max_pool2d() -> Segments:
    x = np.array([0.0850, -0.5147, -0.0212, -0.5654, -0.3222, 0.5847,
                  1.7510, 0.9954, 0.1842, 0.8392, 0.4835, 0.9213], f32).reshape(4, 3)
    # 2x2 windows, stride 2, no padding: rows 0-1 and 2-3 of columns 0-1; indices into the flat 4x3 plane
    windows = [x[r:r + 2, 0:2] for r in (0, 2)]
    flat = [r * 3 + c for r, c in (np.unravel_index(w.argmax(), w.shape) for w in windows)]
    return [("result", np.array([w.max() for w in windows])), ("result", np.array(flat) + np.array([0, 6]))]


def _softmax_backward() -> Segments:
    g, y = np.arange(8.0).reshape(4, 2), np.array([1, 1, 1, 2, 2, 2, 3, 3.0]).reshape(4, 2)
    return [("result", y * (g - (g * y).sum(0)))]  # the softmax Jacobian-vector product along dim 0


def _scatter_add() -> Segments:
    out = np.zeros((4, 4))
    index = np.array([0, 1, 2, 1, 0, 1, 2, 0, 2, 2, 1, 0]).reshape(3, 4)
    src = np.arange(16.0).reshape(4, 4)
    for i in range(3):  # out[index[i][j]][j] += src[i][j] over index's shape (dim 0)
        for j in range(4):
            out[index[i, j], j] += src[i, j]
    return [("result", out)]


def _sort() -> Segments:
    x = np.array([7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6]).reshape(3, 4)
    return [("result values", np.sort(x, axis=0)), ("result indices", np.argsort(x, axis=0, kind="stable"))]


def _topk() -> Segments:
    values, indices = torch.topk(torch.tensor([[0, 1, 2.5, 3], [4, 5.5, 6, 7]]), 2, dim=1, largest=True, sorted=True)
    return [("out", values.numpy()), ("indices", indices.numpy())]


def _var_mean() -> Segments:
    x = np.array([[0.0, 1.1, 2, 3], [4, 5, 6, 7]], f32).astype(np.float64)
    return [("meanResult", x.mean(1)), ("varResult", x.var(1, ddof=1))]


def _sub() -> Segments:
    out = np.arange(8, dtype=f32) - f32(1.2) * np.full(8, 2, f32)
    return [("result", out), ("result", out)]  # aclnnSub, then aclnnInplaceSub on self


def _nll_loss() -> Segments:
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    w, t = np.array([1.1, 1.2, 1.3], f32), np.array([0, 2])
    return [("result", -w[t] * x[[0, 1], t])]  # reduction none: -weight[t] * self[i, t]


x42 = np.arange(8, dtype=f32).reshape(4, 2)
EXPECTED: dict[str, tuple[tuple[str, ...], Callable[[], Segments]]] = {
    # activations, softmax
    "softmax": (("Softmax",), lambda: [("result", torch.softmax(torch.tensor(x42), 0).numpy())]),
    "log_softmax": (("LogSoftmax",), lambda: [
        ("result", torch.log_softmax(torch.arange(1.0, 10).reshape(3, 3), 1).numpy())]),
    "gelu_v2": (("GeluV2",), lambda: [("result", (lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))))(
        np.array([1.3, 2.5, 6.7, -4, -1.4, -1.6, -8, -16.9], f32).astype(np.float64)))]),
    "leaky_relu": (("LeakyRelu",), lambda: [("result", np.array([1.0, 2, 3, 4]))]),  # all positive: unchanged
    "inplace_relu": (("InplaceRelu",), lambda: [("aclnnInplaceRelu result", np.maximum(np.arange(4.0), 0))]),
    "silu_backward": (("SiluBackward",), _silu_backward),
    "softmax_backward": (("SoftmaxBackward",), _softmax_backward),
    "softplus": (("Softplus",), lambda: [  # beta 1, threshold 5: x where x > 5
        ("result", (lambda x: np.where(x > 5, x, np.log1p(np.exp(x))))(np.arange(8.0)))]),
    "gelu_backward": (("GeluBackward",), _gelu_backward),
    # norms
    "layer_norm": (("LayerNorm",), _layer_norm),
    "layer_norm_backward": (("LayerNormBackward",), _layer_norm_backward),
    # matrix products
    "dot": (("Dot",), lambda: [("result", np.array([np.dot(np.arange(4.0), np.arange(4.0))]))]),
    "matmul": (("Matmul",), lambda: [("result", np.ones((16, 32)) @ np.ones((32, 16)))]),
    "batch_mat_mul": (("BatchMatMul",), lambda: [("result", np.matmul(
        np.arange(6.0).reshape(1, 2, 3), np.array([1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4.0]).reshape(1, 3, 4)))]),
    "addmm": (("Addmm", "InplaceAddmm"), _addmm),
    # element-wise with scalars, in-place
    "sub": (("Sub", "InplaceSub"), _sub),
    "inplace_muls": (("InplaceMuls",), lambda: [("result", np.arange(8, dtype=f32) * f32(1.2))]),
    "eq_scalar": (("EqScalar",), lambda: [("result", (np.array([0, 1, 1.2, 0.3, 4.1, 5, 1.6, 7]) == 1.2).astype(int))]),
    "clamp": (("Clamp",), lambda: [("result", np.clip(np.array([0, 1, 0, 3, 0, 5, 0, 7.0]), 2, 5))]),
    "cast": (("Cast",), lambda: [("result", np.array([0.1, 1.1, 2.1, 3.1, 4.1, 5.1, 6.1, 7.1]).astype(f32))]),
    # reductions (int arrays of dims), scans, index outputs
    "mean": (("Mean",), lambda: [("result", np.array([2, 3, 5, 8, 4, 12, 6, 7.0]).reshape(2, 2, 2).mean((1, 2)))]),
    "amax": (("Amax",), lambda: [("result", np.arange(12.0).reshape(2, 3, 2).max((0, 2)))]),
    "var_mean": (("VarMean",), _var_mean),
    "linalg_vector_norm": (("LinalgVectorNorm",), lambda: [("result", np.sqrt((np.array(
        [0.1, 1.1, 2.1, 3.1, 4.1, 5.1, 6.1, 7.1], f32).astype(np.float64).reshape(4, 2) ** 2).sum(0)))]),
    "cumsum": (("Cumsum",), lambda: [("result", np.cumsum(np.array([[1, 2], [3, 4.0]]), 0))]),
    "arg_max": (("ArgMax",), lambda: [("result", np.argmax(x42, 0))]),
    "max_dim": (("MaxDim",), lambda: [("result", x42.max(0))]),
    "sort": (("Sort",), _sort),
    "topk": (("Topk",), _topk),
    "max_pool2d_with_indices": (("MaxPool2dWithIndices",), _max_pool2d),
    # layout and indexing
    "permute": (("Permute",), lambda: [("result", np.arange(1.0, 9).reshape(4, 2).T)]),
    "tril": (("Tril", "InplaceTril"), lambda: [("result", np.tril(np.arange(1, 10).reshape(3, 3))),
                                               ("inplaceResult", np.tril(np.arange(1, 10).reshape(3, 3)))]),
    "repeat": (("Repeat",), lambda: [("result", np.tile(np.ones((3, 2)), (2, 4, 2)))]),
    "flip": (("Flip",), lambda: [("result", np.flip(x42, 0))]),
    "constant_pad_nd": (("ConstantPadNd",), lambda: [("result", np.pad(np.arange(9.0).reshape(3, 3), 1))]),
    "stack": (("Stack",), lambda: [("out result", np.stack([np.arange(1.0, 7).reshape(2, 3),
                                                            np.arange(7.0, 13).reshape(2, 3)]))]),
    "embedding": (("Embedding",), lambda: [("resultData", np.arange(1.0, 31).reshape(10, 3)[[1, 2, 3, 4]])]),
    "index_select": (("IndexSelect",), lambda: [("result", x42[[1, 0]])]),
    "gather": (("Gather",), lambda: [
        ("result", np.take_along_axis(x42, np.array([[0, 1], [2, 3], [3, 2], [1, 0]]), 0))]),
    "scatter_add": (("ScatterAdd",), _scatter_add),
    "s_where": (("SWhere",), lambda: [  # condition: the last four
        ("result", np.where(np.arange(8) >= 4, [0, 0, 0, 0, 0, 0, 0, 7.0], np.arange(8.0)))]),
    # losses
    "nll_loss": (("NLLLoss",), _nll_loss),
    "binary_cross_entropy": (("BinaryCrossEntropy",), lambda: [("result", np.full(4, -(  # reduction none
        0.5 * np.log(np.float64(f32(0.3))) + 0.5 * np.log(1 - np.float64(f32(0.3))))))]),
}

# Ports the reference refuses although the device runs them: {port: reason}. Their test checks
# that the port still fails that way (xfail), and fails once the reference is fixed.
KNOWN_BUGS: dict[str, str] = {}


def run_port(name: str) -> tuple[int, str]:
    """Run examples/official/<name>_acl.py as __main__ in this process: (exit status, stdout)."""
    buffer = io.StringIO()
    sys.path.insert(0, str(PORTS_DIR))
    try:
        with contextlib.redirect_stdout(buffer):
            try:
                runpy.run_path(str(PORTS_DIR / f"{name}_acl.py"), run_name="__main__")
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.path.remove(str(PORTS_DIR))
    return code, buffer.getvalue()


def close(label: str, printed: np.ndarray, expected: np.ndarray) -> None:
    expected = np.asarray(expected).ravel()
    assert printed.shape == expected.shape, f"{label}: {printed.size} values printed, {expected.size} expected"
    if expected.dtype.kind in "iub":
        np.testing.assert_array_equal(printed, expected, err_msg=label)
    else:  # printed with %f: 6 decimals
        np.testing.assert_allclose(printed, expected.astype(np.float64), rtol=1e-5, atol=2e-6, err_msg=label)


def test_every_port_has_an_expectation() -> None:
    ports = sorted(p.name[:-len("_acl.py")] for p in PORTS_DIR.glob("*_acl.py"))
    assert ports == sorted(EXPECTED)
    assert len(ports) >= 20


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_port_cites_its_source(name: str) -> None:
    doc = ast.get_docstring(ast.parse((PORTS_DIR / f"{name}_acl.py").read_text())) or ""
    assert re.search(r"^Source: hicann/ops-(math|nn) \S+\.(cpp|md)$", doc, re.M), doc
    assert re.search(r"\(commit [0-9a-f]{40}\)", doc), doc
    assert f".venv/bin/python examples/official/{name}_acl.py" in doc
    ops = EXPECTED[name][0]
    assert doc.startswith(f"aclnn{ops[0]}: "), doc.splitlines()[0]


@pytest.fixture
def reference(use_backend) -> None:
    """The NumPy reference backend, chosen before the test body (pyaclnn_check watches the
    backend current when the body starts)."""
    use_backend("numpy")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_port_prints_the_expected_values(name: str, reference, pyaclnn_check) -> None:
    ops, expectation = EXPECTED[name]
    require_reference(*ops)
    code, stdout = run_port(name)
    if name in KNOWN_BUGS:
        assert code == 1 and "GetWorkspaceSize failed. ERROR: 161002" in stdout, \
            f"{name} no longer fails as KNOWN_BUGS says: remove it from there\n{stdout}"
        pytest.xfail(KNOWN_BUGS[name])
    assert code == 0, stdout
    got, expected = parse(stdout), expectation()
    assert [label for label, _ in got] == [label for label, _ in expected], stdout
    for (label, printed), (_, values) in zip(got, expected):
        close(label, printed, values)


def test_a_port_runs_as_a_script_from_the_repository_root() -> None:
    """As the docstrings say to run them: a script of its own, which finds _sample.py beside it."""
    proc = subprocess.run([sys.executable, str(PORTS_DIR / "softmax_acl.py")], env=subprocess_env(),
                          capture_output=True, text=True, check=False, timeout=120, cwd=ROOT)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    (label, printed), = parse(proc.stdout)
    close(label, printed, torch.softmax(torch.tensor(x42), 0).numpy())
