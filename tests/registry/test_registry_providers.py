"""A custom operator package that declares an operator but cannot run it does not hide the next
one that can.

op-plugin's GetOpApiFuncAddr (Ascend/op-plugin op_plugin/utils/op_api_common.h) goes through the
custom packages' libcust_opapi.so in order and moves on when a library is missing or its dlsym
fails; the registry does the same with the ELF symbol table: the operator resolves to the first
declaring package whose library exports both aclnn<Op>GetWorkspaceSize and aclnn<Op>, else the
toolkit's. The package passed over stays visible (OpInfo.skipped, `doctor`, `pyaclnn ops`).

The oracles are the packages as built (which library exports what: a plain `nm`-free fact of the
emulator build, checked with the same C source compiled here) and the arithmetic of the ops
(AddCustom z = x + y, the toolkit's Add out = self + alpha * other) computed with NumPy.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl
from pyaclnn._registry.operators import Registry, Source
from pyaclnn._registry.sources import pyaclnn_source
from conftest import headers_package

TESTS = Path(__file__).resolve().parents[1]
LIB = Path("op_api") / "lib" / "libcust_opapi.so"


@pytest.fixture(scope="module")
def custom_vendor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from emulator.build import build_custom_opp
    return build_custom_opp(tmp_path_factory.mktemp("opp"))


def _headers_only(root: Path, header: Path) -> Path:
    """A vendor folder with a header and no op_api/lib (a package installed half-way)."""
    return headers_package(root, {header.name: header.read_text()})


def _run_add_custom() -> list[float]:
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        x, y = np.array([1.0, 2.5], np.float32), np.array([0.5, -4.0], np.float32)
        with pyaclnn.Op("AddCustom", x, y, np.zeros(2, np.float32)) as op:
            op.run(stream)
            stream.synchronize()
            got = op["z"].numpy()
    np.testing.assert_array_equal(got, x + y)
    return got.tolist()


# -- on the emulator -------------------------------------------------------------------------------
def test_a_package_without_its_library_does_not_hide_the_next_package(
        emulator, emulator_home, custom_vendor, use_backend, monkeypatch, tmp_path):
    """ASCEND_CUSTOM_OPP_PATH lists a package whose libcust_opapi.so is missing first: AddCustom
    runs from the next package (it raised "no library exports" from the first)."""
    empty = _headers_only(tmp_path / "empty", custom_vendor / "op_api" / "include" / "aclnn_add_custom.h")
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", f"{empty}:{custom_vendor}")
    use_backend("acl", home=emulator_home)
    info = pyaclnn._objects.backend.current().runtime.op_info("AddCustom")
    assert info.source.library == custom_vendor / LIB
    assert [(s.source.library, s.reason) for s in info.skipped] == [
        (empty / LIB, f"its library {empty / LIB} is missing")]
    _run_add_custom()


def test_a_package_not_exporting_the_op_does_not_hide_the_toolkit(emulator, emulator_home, use_backend,
                                                                  monkeypatch, tmp_path):
    """A vendors/config.ini package whose header declares aclnnAdd(x1, x2, y) but whose library
    exports only AddCustom: Add is the toolkit's aclnnAdd(self, other, alpha, out), and runs."""
    from emulator.build import INCLUDE, build_custom_opp
    opp = tmp_path / "opp"
    shutil.copytree(Path(emulator_home) / "opp", opp, symlinks=True)
    vendor = build_custom_opp(opp, "partial", ops=("AddCustom",))
    shutil.copy(INCLUDE / "custom" / "aclnn_add.h", vendor / "op_api" / "include")
    monkeypatch.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    monkeypatch.setenv("ASCEND_OPP_PATH", str(opp))
    use_backend("acl", home=emulator_home)
    info = pyaclnn._objects.backend.current().runtime.op_info("Add")
    assert info.source.kind == "builtin" and info.names == ("self", "other", "alpha", "out")
    assert len(info.skipped) == 1 and info.skipped[0].source.label == "custom package partial (vendors/config.ini)"
    assert info.skipped[0].reason == (f"its library {vendor / LIB} does not export "
                                      "aclnnAddGetWorkspaceSize or aclnnAdd")
    x, y = np.arange(3, dtype=np.float32), np.full(3, 0.25, np.float32)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        with pyaclnn.Op("Add", x, y, 4, np.zeros(3, np.float32)) as op:
            op.run(stream)
            stream.synchronize()
            np.testing.assert_array_equal(op["out"].numpy(), x + 4 * y)
    assert pyaclnn._objects.backend.current().runtime.op_info("AddCustom").source == info.skipped[0].source
    _run_add_custom()  # the package still runs what it does export
    # the NumPy backend (same machine, no device) searches its headers/ first: Add has a reference there
    resolved = use_backend("numpy", home=emulator_home).runtime.registry.resolve("Add")
    assert resolved[0].kind == "pyaclnn" and resolved[2] == ()  # its headers/ first (Add's reference)


def test_doctor_and_ops_name_the_skipped_package_and_why(emulator, emulator_home, custom_vendor, use_backend,
                                                         monkeypatch, tmp_path, capsys):
    from emulator.build import INCLUDE
    from pyaclnn._cli.commands import doctor_report, doctor_text, main
    empty = _headers_only(tmp_path / "empty", custom_vendor / "op_api" / "include" / "aclnn_add_custom.h")
    partial = tmp_path / "partial"
    shutil.copytree(custom_vendor, partial, symlinks=True)
    shutil.copy(INCLUDE / "custom" / "aclnn_add.h", partial / "op_api" / "include")
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", f"{empty}:{partial}")
    use_backend("acl", home=emulator_home)
    label = "custom package {} (ASCEND_CUSTOM_OPP_PATH)"
    data = doctor_report()
    rows = {(r["op"], r["source"]): r for r in data["operators"]["skipped"]}
    assert rows == {
        ("aclnnAddCustom", label.format("empty")): {
            "op": "aclnnAddCustom", "source": label.format("empty"),
            "header": str(empty / "op_api" / "include" / "aclnn_add_custom.h"),
            "reason": f"its library {empty / LIB} is missing", "used": label.format("partial")},
        ("aclnnAdd", label.format("partial")): {
            "op": "aclnnAdd", "source": label.format("partial"),
            "header": str(partial / "op_api" / "include" / "aclnn_add.h"),
            "reason": f"its library {partial / LIB} does not export aclnnAddGetWorkspaceSize or aclnnAdd",
            "used": "CANN 8.x aclnnop"}}
    text = doctor_text(data)
    assert (f"    aclnnAddCustom: {label.format('empty')} (aclnn_add_custom.h): its library {empty / LIB} "
            f"is missing; uses {label.format('partial')}") in text
    assert f"    aclnnAdd: {label.format('partial')} (aclnn_add.h): its library {partial / LIB} does not " in text
    assert main(["ops", "Add"]) == 0
    out = capsys.readouterr().out
    assert "aclnnAdd  [CANN 8.x aclnnop: aclnn_add.h; NumPy reference]" in out
    assert (f"note: skipped {label.format('partial')} (aclnn_add.h): its library {partial / LIB} does not export "
            "aclnnAddGetWorkspaceSize or aclnnAdd") in out
    assert f"aclnnAddCustom  [{label.format('partial')}: aclnn_add_custom.h" in out
    assert f"note: skipped {label.format('empty')} (aclnn_add_custom.h): its library {empty / LIB} is missing" in out
    assert main(["ops", "--json", "AddCustom"]) == 0
    import json
    row = json.loads(capsys.readouterr().out)["operators"][0]
    assert row["provided"] and row["skipped"] == [{"source": label.format("empty"), "reason": f"its library "
                                                   f"{empty / LIB} is missing",
                                                   "header": str(empty / "op_api/include/aclnn_add_custom.h")}]


def test_an_op_no_package_provides_still_says_why_when_called(emulator, emulator_home, custom_vendor,
                                                             use_backend, monkeypatch, tmp_path, capsys):
    """Declared by two packages, provided by none: the first declaration stands (calling it names
    both), `ops` says no source provides it."""
    one = _headers_only(tmp_path / "one", custom_vendor / "op_api" / "include" / "aclnn_add_custom.h")
    two = _headers_only(tmp_path / "two", custom_vendor / "op_api" / "include" / "aclnn_add_custom.h")
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", f"{one}:{two}")
    use_backend("acl", home=emulator_home)
    with pytest.raises(pyaclnn.NotSupportedError) as info:
        acl.aclnnAddCustomGetWorkspaceSize(None, None, None)
    message = str(info.value)
    assert f"declared in {one / 'op_api/include/aclnn_add_custom.h'}" in message
    assert f"also custom package two (ASCEND_CUSTOM_OPP_PATH) declares aclnnAddCustom" in message
    assert f"its library {two / LIB} is missing" in message
    from pyaclnn._cli.commands import main
    assert main(["ops", "AddCustom"]) == 0
    assert "note: no source provides it: calling it raises NotSupportedError" in capsys.readouterr().out


# -- the rule itself, without the emulator ---------------------------------------------------------
GENERATED = ("aclnnStatus aclnn{op}GetWorkspaceSize(const aclTensor *x, const aclTensor *y,\n"
             "    uint64_t *workspaceSize, aclOpExecutor **executor);\n"
             "aclnnStatus aclnn{op}(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,\n"
             "    aclrtStream stream);\n")


def _source(root: Path, name: str, ops: tuple[str, ...]) -> Source:
    include = root / name / "op_api" / "include"
    include.mkdir(parents=True)
    for op in ops:
        (include / f"aclnn_{op.lower()}.h").write_text(GENERATED.format(op=op))
    return Source("custom", name, (include,), root / name / LIB)


def test_resolution_order_skips_and_falls_back(tmp_path):
    a, b = _source(tmp_path, "a", ("Foo", "Bar")), _source(tmp_path, "b", ("Foo", "Baz"))
    asked: list[tuple[str, str]] = []

    def provides(source: Source, name: str) -> str | None:
        asked.append((source.label, name))
        return None if (source.label, name) == ("b", "Foo") else f"{source.label} cannot"

    registry = Registry([a, b, pyaclnn_source()], provides=provides)
    foo = registry.resolve("Foo")
    assert foo is not None and foo[0] == b and [s.source for s in foo[2]] == [a]
    bar = registry.resolve("Bar")  # provided by none: the first declaration, itself skipped
    assert bar is not None and bar[0] == a and [(s.source, s.reason) for s in bar[2]] == [(a, "a cannot")]
    mse = registry.resolve("MseLossBackward")  # headers/: no library of its own, never judged
    assert mse is not None and mse[0].kind == "pyaclnn" and mse[2] == ()
    assert registry.resolve("Nope") is None and not registry.declares("Nope") and registry.declares("Baz")
    registry.resolve("Foo")
    assert asked == [("a", "Foo"), ("b", "Foo"), ("a", "Bar")]  # cached; nothing asked of headers/
    assert registry.get("Foo").skipped == foo[2]
    assert registry.all()["Foo"][0] == b and registry.all()["Baz"][0] == b


def test_library_problem_reads_the_symbol_table(tmp_path):
    """Missing file, not an ELF file, a library exporting only phase 1, and one exporting both:
    compiled here from C, so which symbol is exported is known independently of the reader."""
    from emulator.build import _compiler
    from pyaclnn._core.elf import exported_functions
    from pyaclnn._registry.operators import library_problem
    src = tmp_path / "ops.c"
    src.write_text("int aclnnFooGetWorkspaceSize(void) { return 0; }\n"
                   "int aclnnBar(void) { return 0; }\nint aclnnBarGetWorkspaceSize(void) { return 0; }\n"
                   "static int aclnnBaz(void) { return 0; }\nint aclnnBazGetWorkspaceSize(void) { return aclnnBaz(); }\n")
    source = Source("custom", "pkg", (tmp_path,), tmp_path / "lib" / "libcust_opapi.so")

    def problem(op: str) -> str | None:
        return library_problem(source, op, lambda path: exported_functions(path, "aclnn"))

    assert problem("Foo") == f"its library {source.library} is missing"
    source.library.parent.mkdir()
    source.library.write_bytes(b"not an ELF file")
    assert problem("Foo") == f"its library {source.library} is not a readable ELF shared object"
    subprocess.run(_compiler() + ["-shared", "-fPIC", "-o", str(source.library), str(src)], check=True)
    assert problem("Foo") == f"its library {source.library} does not export aclnnFoo"
    assert problem("Baz") == f"its library {source.library} does not export aclnnBaz"  # static: not exported
    assert problem("Bar") is None
    assert problem("Qux") == f"its library {source.library} does not export aclnnQuxGetWorkspaceSize or aclnnQux"
    assert library_problem(pyaclnn_source(), "Qux", lambda path: set()) is None  # the toolkit's: not judged


def test_doctor_text_caps_the_skipped_list(use_backend):
    from pyaclnn._cli.commands import doctor_report, doctor_text
    use_backend("numpy")
    data = doctor_report()
    data["operators"]["skipped"] = [{"op": f"aclnnOp{i}", "source": "pkg", "header": "/x/aclnn_op.h",
                                     "reason": "its library /x/libcust_opapi.so is missing", "used": None}
                                    for i in range(25)]
    text = doctor_text(data)
    assert "    aclnnOp19: pkg (aclnn_op.h): its library /x/libcust_opapi.so is missing; no source provides it" in text
    assert "aclnnOp20:" not in text and "    ... and 5 more (`pyaclnn doctor --json`)" in text
