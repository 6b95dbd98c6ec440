"""An operator name no header declares: no attribute in pyaclnn.acl (hasattr is False), and one
error class, UnknownOperatorError (a NotSupportedError), naming where the backend looked, on
both backends; a known operator without a NumPy reference keeps its "no NumPy reference" error.

The oracle for "declared" is a plain scan of the header folders (the same regex as the CANN
headers' declarations), not pyaclnn's index.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl

HEADERS = Path(__file__).resolve().parents[2] / "headers"
TABLE = Path(__file__).resolve().parents[2] / "pyaclnn" / "_registry" / "signatures.json.gz"


def _declared(folder: Path) -> set[str]:
    return {m for h in folder.glob("aclnn*.h")
            for m in re.findall(r"\baclnn(\w+)GetWorkspaceSize\s*\(", h.read_text())}


@pytest.fixture(scope="module")
def custom_vendor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from emulator.build import build_custom_opp
    return build_custom_opp(tmp_path_factory.mktemp("opp"))


@pytest.fixture
def no_cann(monkeypatch):
    """No CANN install nor custom package visible (the NumPy backend then knows headers/ only)."""
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH"):
        monkeypatch.delenv(var, raising=False)
    if any(Path(h).exists() for h in ("/usr/local/Ascend/cann", "/usr/local/Ascend/ascend-toolkit/latest")):
        pytest.skip("a CANN install is present in the default location")


@pytest.mark.parametrize("name", ["aclnnNoSuchOpGetWorkspaceSize", "aclnnNoSuchOp"])
def test_an_unknown_operator_is_no_attribute_on_both_backends(backend, name):
    assert not hasattr(acl, name)
    with pytest.raises(AttributeError) as info:
        getattr(acl, name)
    exc = info.value
    assert isinstance(exc, pyaclnn.UnknownOperatorError) and isinstance(exc, pyaclnn.NotSupportedError)
    assert exc.name == name and exc.obj is acl
    message = str(exc)
    assert message.startswith(f"module 'pyaclnn.acl' has no attribute '{name}': aclnnNoSuchOp is not a known "
                              "operator: no header declares aclnnNoSuchOpGetWorkspaceSize (searched ")
    assert f"pyaclnn headers/: {HEADERS}" in message
    if backend == "acl":
        home = Path(pyaclnn.backend_info()["paths"]["home"])
        assert f"CANN 8.x aclnnop: {home}/" in message
    assert name not in vars(acl)  # not made, not cached


@pytest.mark.parametrize("name, meant", [("aclnnAdddGetWorkspaceSize", "aclnnAddGetWorkspaceSize"),
                                         ("aclnnAddd", "aclnnAdd")])
def test_a_near_miss_attribute_suggests_the_attribute(backend, name, meant):
    # pyaclnn.acl suggested the operator name ("did you mean 'Add'?"), which is no attribute of it
    with pytest.raises(pyaclnn.UnknownOperatorError) as info:
        getattr(acl, name)
    assert str(info.value).startswith(f"module 'pyaclnn.acl' has no attribute '{name}': aclnnAddd is not a known "
                                      f"operator (did you mean '{meant}'?): ")
    assert info.value.close_name == "Add"


def test_known_operators_stay_attributes_and_dir_lists_them(backend, emulator_home):
    shipped = _declared(HEADERS)
    assert shipped == {"MseLossBackward", "GroupNormBackward", "CrossEntropyLossGrad", "PreluBackward", "Add",
                       "InplaceAdd", "ReduceSum", "AmpUpdateScale", "Cat", "ForeachMulScalarList"}
    for op in shipped:
        assert callable(getattr(acl, f"aclnn{op}GetWorkspaceSize")) and callable(getattr(acl, f"aclnn{op}"))
    names = dir(acl)
    assert names == sorted(set(names)) and {f"aclnn{op}GetWorkspaceSize" for op in shipped} <= set(names)
    assert "aclInit" in names and "ACL_FLOAT" in names and "aclnnNoSuchOpGetWorkspaceSize" not in names
    if backend == "acl":  # the toolkit's operators too, once the backend is in use
        from emulator.build import aclnnop_dir
        toolkit = _declared(aclnnop_dir(emulator_home))
        assert {"Add", "Cat"} <= toolkit
        assert {f"aclnn{op}{p}" for op in toolkit for p in ("", "GetWorkspaceSize")} <= set(names)
        assert hasattr(acl, "aclnnAddGetWorkspaceSize") and hasattr(acl, "aclnnCat")
    missing = [n for n in names if not hasattr(acl, n)]  # tab completion: every listed name resolves
    assert not missing, missing


def test_what_one_backend_knew_is_forgotten_for_the_next(emulator_home, custom_vendor, use_backend, no_cann,
                                                         monkeypatch):
    """aclnnAddCustom made on the acl backend (a custom package's header; every operator of the
    emulated toolkit is in headers/) is not an attribute once the NumPy backend without any CANN
    headers or package runs; back on acl it is again."""
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(custom_vendor))
    use_backend("acl", home=emulator_home)
    assert callable(acl.aclnnAddCustomGetWorkspaceSize)
    monkeypatch.delenv("ASCEND_HOME_PATH")
    monkeypatch.delenv("ASCEND_CUSTOM_OPP_PATH")
    use_backend("numpy")
    assert not hasattr(acl, "aclnnAddCustomGetWorkspaceSize") and not hasattr(acl, "aclnnAddCustom")
    assert hasattr(acl, "aclnnMseLossBackwardGetWorkspaceSize") and hasattr(acl, "aclnnAdd")  # headers/
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(custom_vendor))
    use_backend("acl", home=emulator_home)
    assert hasattr(acl, "aclnnAddCustomGetWorkspaceSize")


def test_attribute_lookup_reads_only_the_header_index_once(backend, monkeypatch):
    """No header is parsed to answer, and the index is built once: later lookups of unknown
    names only consult it."""
    import pyaclnn._registry.operators as reg
    from pyaclnn._objects import backend as _backend
    _backend.current()
    indexed: list[int] = []
    real_index = reg.scan_header
    monkeypatch.setattr(reg, "scan_header", lambda text: indexed.append(1) or real_index(text))
    monkeypatch.setattr(reg, "parse_header", lambda text: pytest.fail("a header was parsed"))
    for i in range(3):
        assert not hasattr(acl, f"aclnnNoSuchOp{i}GetWorkspaceSize")
    first = len(indexed)
    for i in range(50):
        assert not hasattr(acl, f"aclnnNoSuchOp{i}")
    assert len(indexed) == first


def test_an_unknown_operator_is_one_error_class_on_both_backends(backend):
    for call in (lambda: pyaclnn.Op("NoSuchOp", np.ones(2, np.float32)),
                 lambda: pyaclnn._objects.backend.current().runtime.op_info("NoSuchOp")):
        with pytest.raises(pyaclnn.UnknownOperatorError,
                           match=r"^aclnnNoSuchOp is not a known operator: no header declares "
                                 r"aclnnNoSuchOpGetWorkspaceSize \(searched .*pyaclnn headers/"):
            call()


def test_numpy_backend_unknown_name_is_not_reported_as_missing_a_reference(use_backend, no_cann):
    """It said "aclnnNoSuchOp has no NumPy reference in pyaclnn: it runs with PYACLNN_BACKEND=acl"."""
    runtime = use_backend("numpy").runtime
    calls = (lambda: pyaclnn.Op("NoSuchOp"),
             lambda: runtime.launch("NoSuchOp", 0, 0, None, None),
             lambda: runtime.launch("NoSuchOp", 0, 0, 0x1234, None),
             lambda: runtime.workspace_size("NoSuchOp", ()))
    for call in calls:
        with pytest.raises(pyaclnn.UnknownOperatorError) as info:
            call()
        message = str(info.value)
        assert "no NumPy reference" not in message
        assert message.startswith("aclnnNoSuchOp is not a known operator: no header declares "
                                  f"aclnnNoSuchOpGetWorkspaceSize (searched pyaclnn headers/: {HEADERS}; pyaclnn "
                                  f"signature table: {TABLE}); found no "
                                  "custom operator package (ASCEND_CUSTOM_OPP_PATH")
        assert "and no CANN aclnnop headers (ASCEND_HOME_PATH" in message
        assert message.endswith("Operators with a NumPy reference: Add, AmpUpdateScale, Cat, CrossEntropyLossGrad, "
                                "ForeachMulScalarList, GroupNormBackward, InplaceAdd, MseLossBackward, PreluBackward, "
                                "ReduceSum")


def test_numpy_backend_known_operator_keeps_its_no_reference_error(unreferenced_toolkit, use_backend, monkeypatch):
    """With CANN headers installed (no device), aclnnForeachAddScalarList is known: NotSupportedError "no NumPy
    reference" (not UnknownOperatorError), and a typo is still unknown, naming the toolkit folder."""
    monkeypatch.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    monkeypatch.delenv("ASCEND_OPP_PATH", raising=False)
    use_backend("numpy", home=unreferenced_toolkit)
    assert hasattr(acl, "aclnnForeachAddScalarListGetWorkspaceSize")
    for call in (lambda: acl.aclnnForeachAddScalarListGetWorkspaceSize(None, None, None),
                 lambda: acl.aclnnForeachAddScalarList(None, 0, None, None),
                 lambda: pyaclnn.Op("ForeachAddScalarList", [np.ones(2, np.float32)], [2.0], [np.ones(2, np.float32)])):
        with pytest.raises(pyaclnn.NotSupportedError) as info:
            call()
        assert type(info.value) is pyaclnn.NotSupportedError
        assert str(info.value).startswith("aclnnForeachAddScalarList has no NumPy reference in pyaclnn: it runs with "
                                          "PYACLNN_BACKEND=acl on a device")
    with pytest.raises(pyaclnn.UnknownOperatorError) as unknown:
        pyaclnn.Op("Ad")
    assert f"; CANN aclnnop: {unreferenced_toolkit}/" in str(unknown.value)
    assert "found no custom operator package" in str(unknown.value)
    assert "CANN aclnnop headers" not in str(unknown.value)


def test_a_near_miss_name_says_which_operator_was_meant(backend):
    # the C name or another case was only "aclnnaclnnAdd is not a known operator: ..."; a
    # non-str name was an UnknownOperatorError about "aclnnNone"
    x = np.ones(2, np.float32)
    with pytest.raises(pyaclnn.UnknownOperatorError,
                       match=r"^aclnnaclnnAdd is not a known operator \(pass the name without its prefix: 'Add'\)"):
        pyaclnn.Op("aclnnAdd", x, x, 1, x.copy())
    with pytest.raises(pyaclnn.UnknownOperatorError,
                       match=r"^aclnnmseLossBackward is not a known operator \(did you mean 'MseLossBackward'\?\)"):
        pyaclnn.Op("mseLossBackward", x, x, x, 1, x.copy())
    with pytest.raises(pyaclnn.UnknownOperatorError, match=r"^aclnnNoSuchOp is not a known operator: "):
        pyaclnn.Op("NoSuchOp", x)  # nothing close: no suggestion
    with pytest.raises(TypeError, match=r"pyaclnn.Op takes the operator's name first, a str .* got NoneType None"):
        pyaclnn.Op(None, x)
