"""The reference tiers shown by ``python -m pyaclnn ops`` and ``doctor`` (issue 24, point 4):
each operator's tier ("exact", "aten" or null), where it is described, and doctor's counts."""
from __future__ import annotations

import json
from typing import Any

import pytest

from pyaclnn import ops
from pyaclnn._cli.commands import doctor_report, doctor_text, main
from pyaclnn._registry import table as _signature_table


@pytest.fixture
def numpy_only(use_backend: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH"):
        monkeypatch.delenv(var, raising=False)
    use_backend("numpy")


def ops_json(capsys: pytest.CaptureFixture[str], pattern: str) -> dict[str, dict[str, Any]]:
    assert main(["ops", "--json", pattern]) == 0
    return {r["name"]: r for r in json.loads(capsys.readouterr().out)["operators"]}


def test_ops_json_says_each_operators_tier(numpy_only: None, capsys: pytest.CaptureFixture[str]) -> None:
    rows = ops_json(capsys, "aclnn*Softmax*")
    assert rows["aclnnSoftmax"]["reference"] == "aten"
    assert rows["aclnnSoftmax"]["described"]["aten"] == "aten::softmax.int"
    assert rows["aclnnScaledMaskedSoftmax"]["reference"] is None
    assert ops_json(capsys, "aclnnReduceSum")["aclnnReduceSum"]["reference"] == "exact"
    drop = ops_json(capsys, "aclnnDropoutGenMask")["aclnnDropoutGenMask"]
    assert drop["reference"] is None and "RNG" in drop["described"]["left_out"]["reason"]
    # every declared operator: the tier pyaclnn.ops says, null for the rest
    every = ops_json(capsys, "*")
    assert {r["reference"] for r in every.values()} == {"exact", "aten", None}
    assert all(r["reference"] == ops.tier(name[5:]) for name, r in every.items())


def test_ops_text_shows_the_tier_overload_checks_and_notes(numpy_only: None,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ops", "aclnnSoftmax"]) == 0
    text = capsys.readouterr().out
    assert "aclnnSoftmax  [pyaclnn signature table: aclnn_softmax.h; NumPy reference]" in text  # as before
    assert "    reference: aten (pyaclnn/ops/_aten/table/nn.py; aten::softmax.int)" in text
    assert "    checks: generic (nullptr 161001" in text
    assert main(["ops", "aclnnAddN"]) == 0  # a traced entry, with notes
    text = capsys.readouterr().out
    assert "    checks: traced: math/add_n/op_api/aclnn_add_n.cpp" in text
    assert "    known differences: same shapes and dtypes" in text
    assert main(["ops", "aclnnCat"]) == 0
    assert "    reference: exact (pyaclnn/ops/cat/)" in capsys.readouterr().out
    assert main(["ops", "aclnnFlashAttentionScore"]) == 0
    assert "    reference: none (fused transformer and MoE operators" in capsys.readouterr().out


def test_doctor_counts_the_tiers(numpy_only: None) -> None:
    data = doctor_report()
    tiers = data["operators"]["tiers"]
    declared = set(_signature_table.index()) | set(ops.names())
    # the oracle: pyaclnn.ops.tier over every declared operator (the table's and headers/')
    assert tiers == {"exact": len(ops.names()), "aten": sum(ops.tier(n) == "aten" for n in declared),
                     "none": sum(ops.tier(n) is None for n in declared)}
    assert tiers["exact"] == 10 and tiers["aten"] >= 400
    assert sum(tiers.values()) == data["operators"]["total"]
    text = doctor_text(data)
    assert (f"  NumPy references: exact 10, aten {tiers['aten']}, declared without a reference "
            f"{tiers['none']}") in text


def test_doctor_says_the_aten_tier_needs_torch_when_it_is_missing(numpy_only: None,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Without PyTorch the aten tier cannot run: doctor says so and names the extra."""
    import importlib.util
    import sys
    data = doctor_report()
    need = "the aten tier needs PyTorch, which is not installed: pip install 'pyaclnn[torch]'"
    if "torch" in sys.modules or importlib.util.find_spec("torch") is not None:
        assert need not in doctor_text(data)
    monkeypatch.setitem(sys.modules, "torch", None)  # as an interpreter without torch: imports fail
    assert need in doctor_text(data)
