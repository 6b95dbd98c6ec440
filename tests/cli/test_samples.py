"""``python -m pyaclnn samples``: expected values, OK / MISMATCH per sample, exit codes, names;
the doctor's compute check; the NumPy < 2.1 reshape path.

The expected values in pyaclnn.ops.samples.EXPECTED are checked against PyTorch CPU (float64), the
independent oracle; the rest runs without torch (it is part of the oldest-dependencies run of
.ci/run). A mismatch is injected by making the reference kernel compute a wrong value.
"""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn._cli import commands as _cli
from pyaclnn.ops import samples as _samples
from pyaclnn._cli.commands import main
from pyaclnn.ops.mse_loss_backward import kernel as mse_kernel
from pyaclnn._numpy.kernels import _layout


def test_expected_values_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    F64 = torch.float64
    x = torch.tensor([[0.0, 1], [2, 3]], dtype=F64)
    want = {"MseLossBackward": {"result": torch.ops.aten.mse_loss_backward(x, x, torch.ones(2, 2, dtype=F64), 1)}}
    x = torch.arange(1, 25, dtype=F64).reshape(2, 3, 4)
    mean, rstd = torch.tensor([[6.5], [18.5]], dtype=F64), torch.tensor([[0.2896827], [0.2896827]], dtype=F64)
    dx, dg, db = torch.ops.aten.native_group_norm_backward(x, x, mean, rstd, torch.ones(3, dtype=F64), 2, 3, 4, 1,
                                                           [True, True, True])
    want["GroupNormBackward"] = {"gradInputResultData": dx, "gradGammaOutResultData": dg, "gradBetaOutResultData": db}
    logits = torch.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0], [2.0, -1.0, 0.0], [0.5, 0.5, 1.5]], dtype=F64)
    log_prob = torch.log_softmax(logits, dim=1).float().double().requires_grad_()
    torch.nn.functional.nll_loss(torch.log_softmax(log_prob, dim=1), torch.tensor([1, 2, 0, 2]),
                                 weight=torch.tensor([0.2, 0.3, 0.5], dtype=F64)).backward()
    want["CrossEntropyLossGrad"] = {"result": log_prob.grad}
    x = torch.arange(8, dtype=F64).reshape(4, 2).requires_grad_()
    w = torch.tensor([0.5, 0.5], dtype=F64).requires_grad_()
    torch.nn.functional.prelu(x, w).backward(torch.ones(4, 2, dtype=F64))
    want["PreluBackward"] = {"gradInput": x.grad, "gradWeight": w.grad}
    self_, other = torch.arange(8, dtype=F64).reshape(4, 2), torch.tensor([1, 1, 1, 2, 2, 2, 3, 3], dtype=F64).reshape(4, 2)
    want["Add"] = {"result": torch.add(self_, other, alpha=1.2)}
    want["InplaceAdd"] = {"result": self_.clone().add_(other, alpha=1.2)}
    want["Cat"] = {"result": torch.cat([torch.arange(1, 7, dtype=F64).reshape(2, 3),
                                        torch.arange(7, 10, dtype=F64).reshape(1, 3)], 0)}
    want["ReduceSum"] = {"result": torch.arange(8, dtype=F64).reshape(4, 2).sum(dim=0)}
    scale, tracker = torch.tensor([65536.0]), torch.tensor([900], dtype=torch.int32)
    torch._amp_update_scale_(scale, tracker, torch.tensor([0.0]), 2.0, 0.5, 1000)
    want["AmpUpdateScale"] = {"updatedScale": scale, "updatedGrowthTracker": tracker}
    out1, out2 = torch._foreach_mul([torch.arange(1, 7, dtype=torch.float32).reshape(2, 3),
                                     torch.tensor([[70.0, 80, 90]])], [1.2, 2.2])  # float32 scalars, as the page's
    want["ForeachMulScalarList"] = {"out1 result": out1, "out2 result": out2}

    assert list(_samples.EXPECTED) == sorted(want) == list(_samples.SAMPLES)  # pyaclnn/ops folder order
    for name, labels in want.items():
        assert list(_samples.EXPECTED[name]) == list(labels), name
        for label, ref in labels.items():
            np.testing.assert_allclose(_samples.EXPECTED[name][label], ref.detach().numpy().ravel(),
                                       rtol=1e-8, atol=1e-6, err_msg=f"{name} {label}")


def test_samples_print_the_expected_values_and_ok(capsys) -> None:
    assert main(["samples"]) == 0
    out = capsys.readouterr()
    assert out.err == ""
    lines = out.out.splitlines()
    for name, labels in _samples.EXPECTED.items():
        assert f"aclnn{name}: OK ({sum(map(len, labels.values()))} values match the expected within 1e-05 + " \
               "1e-05 * |expected|)" in lines
    assert "gradGammaOutResultData[2] is: 155.849289  (expected 155.849293)" in lines
    assert "gradBetaOutResultData[0] is: 68.000000  (expected 68.000000)" in lines


def test_group_norm_sample_says_its_gradinput_is_degenerate(capsys) -> None:
    assert main(["samples", "GroupNormBackward"]) == 0
    lines = capsys.readouterr().out.splitlines()
    note = lines.index("== aclnnGroupNormBackward ==") + 1
    assert lines[note].startswith("note: the documented data are degenerate for gradInput")
    assert all(line.endswith("(expected 0.000000)") for line in lines if line.startswith("gradInputResultData["))


@pytest.fixture
def wrong_mse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference MSE kernel returns its result plus 0.5 in element 2 (a broken install)."""
    real = mse_kernel.mse_loss_backward

    def broken(*args, **kwargs):
        real(*args, **kwargs)
        out = args[4]
        out.reshape(-1)[2] += 0.5
    monkeypatch.setattr(mse_kernel, "mse_loss_backward", broken)


def test_a_mismatch_is_reported_and_exits_1(capsys, wrong_mse) -> None:
    assert main(["samples", "mse", "prelu"]) == 1
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert "result[2] is: 1.500000  (expected 1.000000)  MISMATCH" in lines
    assert "aclnnMseLossBackward: MISMATCH (1 of 4: result[2])" in lines
    assert lines[-1].startswith("aclnnPreluBackward: OK")
    err = out.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pyaclnn: error: MISMATCH: MseLossBackward printed values"), err


def test_doctor_computes_and_fails_on_a_mismatch(wrong_mse) -> None:
    data = _cli.doctor_report()
    assert data["exit_code"] == 1
    assert data["compute"]["ok"] is False
    assert data["compute"]["samples"]["MseLossBackward"] == "MISMATCH (1 of 4: result[2])"
    assert data["compute"]["samples"]["GroupNormBackward"] == "OK"
    assert any("computes wrong results" in p["problem"] for p in data["problems"])
    assert "result: FAILED, backend numpy computes wrong results" in _cli.doctor_text(data)


def test_doctor_fails_when_a_kernel_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """What NumPy 2.0 did to the kernels (reshape() got an unexpected keyword argument 'copy')."""
    def old_numpy(a, shape):
        raise TypeError("reshape() got an unexpected keyword argument 'copy'")
    monkeypatch.setattr(_layout, "reshape_view", old_numpy)
    data = _cli.doctor_report()
    assert data["exit_code"] == 1 and data["compute"]["ok"] is False
    assert data["compute"]["samples"]["MseLossBackward"] == \
        "TypeError: reshape() got an unexpected keyword argument 'copy'"
    # the doctor runs each sample on the kernels' small-input path and on their tiled path (the
    # one this fault breaks); samples runs the small one, so force the tiled one to see it fail
    from pyaclnn._numpy.kernels._parallel import tiled_only
    with tiled_only():
        assert main(["samples", "mse"]) == 1  # one line on stderr, not a traceback (checked by the CLI tests' style)


def test_doctor_compute_check_passes() -> None:
    data = _cli.doctor_report()
    assert data["exit_code"] == 0
    assert data["compute"] == {"ok": True, "samples": {name: "OK" for name in _samples.DOCTOR_SAMPLES}}


@pytest.mark.parametrize("name", ["mse", "MSE", "MseLossBackward", "aclnnMseLossBackward", "mse_loss_backward"])
def test_samples_accepts_the_bench_case_names(capsys, name: str) -> None:
    assert main(["samples", name]) == 0
    assert "aclnnMseLossBackward: OK" in capsys.readouterr().out


def test_every_bench_case_name_is_a_sample() -> None:
    from pyaclnn import ops
    from pyaclnn.ops.cases import CASE_NAMES
    with_cases = [op for op, api in ops.apis().items() if hasattr(api, "bench_case")]
    assert [_samples.resolve(n) for n in CASE_NAMES] == with_cases
    assert set(with_cases) <= set(_samples.SAMPLES)
    assert _samples.resolve("softmax") is None


def test_unknown_sample_lists_the_short_names(capsys) -> None:
    assert main(["samples", "softmax"]) == 2
    assert "choose from Add, AmpUpdateScale, Cat, CrossEntropyLossGrad, ForeachMulScalarList, GroupNormBackward, InplaceAdd, " \
           "MseLossBackward, PreluBackward, ReduceSum, or add, amp_update_scale, cat, cross_entropy, foreach_mul, group_norm, " \
           "inplace_add, mse, prelu, " \
           "reduce_sum" in capsys.readouterr().err


@pytest.mark.parametrize("has_copy", [True, False])
@pytest.mark.filterwarnings("ignore:Setting the shape:DeprecationWarning")  # the old path forced on NumPy >= 2.5
def test_reshape_view_on_every_numpy(monkeypatch: pytest.MonkeyPatch, has_copy: bool) -> None:
    """reshape_view is a view or ValueError, through np.reshape(copy=False) (NumPy >= 2.1) or the
    in-place shape change (older NumPy, which has no copy= in reshape)."""
    if has_copy and not _layout._RESHAPE_HAS_COPY:
        pytest.skip("this NumPy has no reshape(copy=)")
    monkeypatch.setattr(_layout, "_RESHAPE_HAS_COPY", has_copy)
    a = np.arange(24.0).reshape(2, 3, 4)
    v = _layout.reshape_view(a, (6, 4))
    assert v.shape == (6, 4) and np.shares_memory(v, a)
    with pytest.raises(ValueError):
        _layout.reshape_view(a.transpose(0, 2, 1), (2, 12))
    with pytest.raises(ValueError):
        _layout.reshape_view(a, (5, 5))
    assert main(["samples"]) == 0  # the kernels on this path
