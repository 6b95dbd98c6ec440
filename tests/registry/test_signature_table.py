"""The signature table (pyaclnn/_registry/signatures.json.gz, tools/gen_signatures.py): every public
operator's signature known without CANN.

What is checked: every operator of the shipped table agrees with parsing its real header in
shared/headers where it is (never copied): names, count, C types, kinds, const, launch, roles where
a header says them through const; the table records its source (folder name, header count, a hash
of the headers' contents, each header's repository/path/blob from MANIFEST.json); it is searched
after an installed CANN's and a custom package's headers, which win; ``--check`` tells a stale
table; on the NumPy backend without CANN a public operator is known (NotSupportedError "no NumPy
reference", not UnknownOperatorError), and ``import pyaclnn`` does not read the table.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl
from conftest import headers_package, shared_folder, subprocess_env
from pyaclnn._registry import table as _signature_table
from pyaclnn._registry.operators import Registry, Source
from pyaclnn._registry.sources import table_source

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "gen_signatures.py"
REAL = shared_folder("headers")
needs_real = pytest.mark.skipif(REAL is None, reason="shared/headers (the real op_api headers) is not beside "
                                                      "this checkout")
# shared/headers/README.md: 897 operators, 3 of which are no operator API (test_real_headers.py)
OPERATORS = 894


@pytest.fixture(scope="module")
def table() -> dict:
    return json.loads(gzip.decompress(_signature_table.PATH.read_bytes()))


@pytest.fixture(scope="module")
def real() -> Registry:
    assert REAL is not None
    return Registry([Source("builtin", "real headers", (REAL,))])


@pytest.fixture(scope="module")
def tabled() -> Registry:
    return Registry([table_source()])


def _param_rows(params) -> list[tuple]:
    return [(p.name, p.ctype, p.kind, p.const) for p in params]


def test_the_table_ships_with_the_package_and_knows_the_public_operators(table):
    text = (ROOT / "pyproject.toml").read_text()
    assert '"pyaclnn._registry" = ["signatures.json.gz"]' in text  # package-data: in the wheel
    assert table["format"] == _signature_table.FORMAT and table["columns"] == ["name", "ctype", "kind", "const"]
    assert len(table["ops"]) >= 700
    assert _signature_table.PATH.stat().st_size < 100_000  # small: gzip'd interface facts only


@needs_real
def test_every_operator_agrees_with_its_real_header_parsed_in_place(table, real, tabled):
    names = real.all()
    assert len(names) == OPERATORS and set(tabled.all()) == set(names) == set(table["ops"])
    for name, (_source, header) in names.items():
        mine, theirs = tabled.get(name), real.get(name)
        assert mine.header.name == header.name, name
        assert mine.signature.prototype() == theirs.signature.prototype(), name  # names, C types, launch
        assert _param_rows(mine.signature.params) == _param_rows(theirs.signature.params), name  # kinds, const
        assert _param_rows(mine.signature.launch) == _param_rows(theirs.signature.launch), name
        assert mine.signature.problem == theirs.signature.problem, name
        entry = table["ops"][name]
        if theirs.roles_problem is None:  # the header says the roles (const, ...Ref, the launch's const)
            assert entry["roles"] == "const", name
            assert (mine.inputs, mine.outputs, mine.index_rule) == (theirs.inputs, theirs.outputs,
                                                                    theirs.index_rule), name
        else:  # every tensor const: the generator's rule, or nothing
            assert theirs.signature.all_const and entry["roles"] in ("position", "name", "unknown"), name
            assert mine.index_rule == "position", name
            if entry["roles"] == "unknown":
                assert mine.inputs is None and "tools/gen_signatures.py" in mine.roles_problem, name
            else:
                tensors = {i for i, p in enumerate(mine.signature.params) if p.kind in ("tensor", "tensor_list")}
                assert mine.outputs and set(mine.outputs) <= tensors and set(mine.inputs) | set(mine.outputs) == tensors


@needs_real
def test_the_table_records_its_source(table):
    assert REAL is not None
    files = sorted(REAL.glob("aclnn*.h"))
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    assert len(files) == 717  # shared/headers/README.md
    assert table["source"] == {"name": "shared/headers", "headers": 717,
                               "sha256": digest.hexdigest(),
                               "license": "CANN Open Software License Agreement Version 2.0"}
    assert "CANN Open Software License Agreement Version 2.0" in files[0].read_text()
    manifest = {e["header"]: e for e in json.loads((REAL / "MANIFEST.json").read_text())}
    used = {e["header"] for e in table["ops"].values()}
    assert set(table["headers"]) == used
    for header, where in table["headers"].items():
        m = manifest[header]
        assert where == {"repo": m["repo"].replace("+", "/"), "path": m["path"], "blob": m["blob"]}
    assert table["headers"]["aclnn_softmax.h"]["repo"] == "hicann/ops-nn"


def test_roles_of_all_const_headers_against_the_operators_documentation():
    """Where a header declares every tensor const, the roles the table records against what each
    operator's own documentation says: the 输入/输出 column of the parameter table of
    docs/aclnn<Op>.md in the hicann repositories (read for this test, cited per operator). Over
    the 97 such operators whose documentation has that table, the outputs agree for all but 8,
    where the documentation is at odds with itself: aclnnFastGeluV2.md and aclnnFusedBiasLeakyRelu.md
    label ``out`` 输入 and describe it as the output, five in-place operators label ``self`` 输入
    (see InplaceHardsigmoid), aclnnNsaSelectedAttentionGrad.md's table is its forward operator's."""
    expected = {  # name: (rule, inputs, outputs) by parameter name, in parameter order
        # hicann/ops-nn quant/quant_max/docs/aclnnQuantMax.md
        "QuantMax": ("position", ["x", "scale"], ["y", "amax"]),
        # hicann/ops-nn quant/anti_mx_quant/docs/aclnnAntiMxQuant.md: mxscale is an input there
        "AntiMxQuant": ("position", ["x", "mxscale"], ["y"]),
        # hicann/ops-nn quant/grouped_dynamic_mx_quant/docs/aclnnGroupedDynamicMxQuant.md: and an output here
        "GroupedDynamicMxQuant": ("position", ["x", "groupIndex"], ["y", "mxscale"]),
        # hicann/ops-nn activation/gelu_quant/docs/aclnnGeluQuant.md
        "GeluQuant": ("position", ["self", "inputScaleOptional", "inputOffsetOptional"], ["y", "outScaleOptional"]),
        # hicann/ops-nn activation/glu_grad/docs/aclnnGluBackward.md: gradOut is an input
        "GluBackward": ("position", ["gradOut", "self"], ["out"]),
        # hicann/ops-math conversion/unfold_grad/docs/aclnnUnfoldGrad.md
        "UnfoldGrad": ("position", ["gradOut"], ["gradIn"]),
        # hicann/ops-nn quant/dynamic_quant/docs/aclnnDynamicQuant.md
        "DynamicQuant": ("name", ["x", "smoothScalesOptional"], ["yOut", "scaleOut"]),
        # hicann/ops-math math/xlog1py/docs/aclnnXlog1py.md: y is an input, z the output
        "Xlog1py": ("name", ["x", "y"], ["z"]),
        # hicann/ops-nn index/embedding/docs/aclnnEmbedding.md
        "Embedding": ("name", ["weight", "indices"], ["out"]),
        # hicann/ops-nn vfusion/modulate_grad/docs/aclnnModulateBackward.md
        "ModulateBackward": ("name", ["grad_output", "input", "scale", "shift"],
                             ["grad_input", "grad_scale", "grad_shift"]),
        # hicann/ops-nn activation/gelu_grad/docs/aclnnGeluBackward.md
        "GeluBackward": ("name", ["gradOutput", "self"], ["gradInput"]),
        # hicann/ops-nn matmul/matmul_emu_split_weight/docs/aclnnMatmulEmuSplitWeight.md: y before attributes
        "MatmulEmuSplitWeight": ("name", ["x", "wHigh", "wLow"], ["y"]),
        # hicann/ops-math experimental/conversion/view_copy/docs/aclnnViewCopy.md
        "ViewCopy": ("name", ["dst", "dst_size", "dst_stride", "dst_storage_offset", "src", "src_size",
                              "src_stride", "src_storage_offset"], ["dst_out"]),
        # hicann/ops-math math/pow/docs/aclnnPowScalarTensor.md: self is an aclScalar input
        "PowScalarTensor": ("name", ["exponent"], ["out"]),
        # hicann/ops-nn activation/hard_sigmoid/docs/aclnnHardsigmoid&aclnnInplaceHardsigmoid.md:
        # self is 公式中的输入self和输出Hardsigmoid(self)
        "InplaceHardsigmoid": ("name", ["self"], ["self"]),
    }
    tabled = Registry([table_source()])
    for name, (rule, inputs, outputs) in expected.items():
        info = tabled.get(name)
        assert info.signature.all_const and _signature_table.roles(name)[2] == rule, name
        assert [info.names[i] for i in info.inputs] == inputs, name
        assert [info.names[i] for i in info.outputs] == outputs, name
    # where no rule says, the table says so: hicann/ops-math math/add/docs/aclnnAddV3&aclnnInplaceAddV3.md
    # makes `other` the output of aclnnInplaceAddV3(selfRef (an aclScalar), other, alpha)
    add_v3 = tabled.get("InplaceAddV3")
    assert _signature_table.roles("InplaceAddV3") is None and add_v3.outputs is None and add_v3.roles_problem


def test_the_table_is_searched_after_the_toolkit_headers(tmp_path, use_backend, monkeypatch):
    """An installed CANN's header of an operator the table knows wins (its own prototype, no
    conflict named: the table describes the public repositories, not this install); the operators
    it does not declare come from the table."""
    for var in ("ASCEND_CUSTOM_OPP_PATH", "ASCEND_OPP_PATH"):
        monkeypatch.delenv(var, raising=False)
    folder = tmp_path / "cann" / "include" / "aclnnop"
    folder.mkdir(parents=True)
    (folder / "aclnn_softmax.h").write_text(
        "aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t axis, aclTensor *out,\n"
        "    uint64_t *workspaceSize, aclOpExecutor **executor);\n"
        "aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
        "aclrtStream stream);\n")
    registry = use_backend("numpy", home=tmp_path / "cann").runtime.registry
    assert [s.kind for s in registry.sources] == ["pyaclnn", "builtin", "table"]
    info = registry.get("Softmax")
    assert info.source.kind == "builtin" and info.names == ("self", "axis", "out") and info.conflicts == ()
    assert registry.get("LogSoftmax").source.kind == "table"
    assert [s.kind for s, _ in registry.declarations("Softmax")] == ["builtin", "table"]
    assert "Softmax" not in registry.conflicts()
    with pytest.raises(pyaclnn.NotSupportedError, match="aclnnSoftmax has no NumPy reference"):
        pyaclnn.Op("Softmax", np.ones(3, np.float32), 0, np.empty(3, np.float32))


def test_the_table_is_searched_after_the_emulated_toolkit(emulator):
    """On the acl backend (the emulator's toolkit: its aclnnop headers declare the ten shipped
    operators): those come from the toolkit; Softmax from the table, and calling it says that no
    library of this install runs it."""
    from pyaclnn._objects import backend as _backend
    registry = _backend.current().runtime.registry
    assert [s.kind for s in registry.sources][-2:] == ["pyaclnn", "table"]
    assert registry.get("Add").source.kind == "builtin" and registry.get("Cat").source.kind == "builtin"
    softmax = registry.get("Softmax")
    assert softmax.source.kind == "table" and softmax.names == ("self", "dim", "out")
    assert softmax.inputs == (0,) and softmax.outputs == (2,)
    with pytest.raises(pyaclnn.NotSupportedError, match=r"aclnnSoftmax is declared in .*/signatures\.json\.gz"
                                                        r"/aclnn_softmax\.h \(pyaclnn signature table\)"):
        pyaclnn.Op("Softmax", np.ones(3, np.float32), 0, np.empty(3, np.float32))


def _library(path: Path, *functions: str) -> None:
    """A shared library exporting ``functions`` (what the registry reads of a custom package's
    libcust_opapi.so: its ELF symbol table)."""
    from emulator.build import EmulatorBuildError, _compiler
    try:
        cc = _compiler()
    except EmulatorBuildError as exc:
        pytest.skip(str(exc))
    path.parent.mkdir(parents=True, exist_ok=True)
    source = path.with_suffix(".c")
    source.write_text("".join(f"int {f}(void) {{ return 0; }}\n" for f in functions))
    subprocess.run([*cc, "-shared", "-fPIC", "-o", str(path), str(source)], check=True, capture_output=True)


def test_a_custom_package_wins_over_the_table_when_its_library_runs_the_operator(tmp_path, use_backend,
                                                                                   monkeypatch):
    header = ("aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *x, int64_t dim, aclTensor *y,\n"
              "    uint64_t *workspaceSize, aclOpExecutor **executor);\n"
              "aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
              "aclrtStream stream);\n")
    package = headers_package(tmp_path / "vendor", {"aclnn_softmax.h": header})
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    # no library: the package cannot run it, the table's declaration (the toolkit's libraries) is used
    registry = use_backend("numpy").runtime.registry
    info = registry.get("Softmax")
    assert info.source.kind == "table" and info.names == ("self", "dim", "out")
    assert [k.source.kind for k in info.skipped] == ["custom"] and "is missing" in info.skipped[0].reason
    _library(package / "op_api" / "lib" / "libcust_opapi.so", "aclnnSoftmaxGetWorkspaceSize", "aclnnSoftmax")
    registry = use_backend("numpy").runtime.registry
    info = registry.get("Softmax")
    assert info.source.kind == "custom" and info.names == ("x", "dim", "y") and info.skipped == ()
    assert info.inputs == (0,) and info.outputs == (2,)


def _run_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=300,
                          env=subprocess_env())


@needs_real
def test_check_says_when_the_shipped_table_is_stale(tmp_path):
    assert REAL is not None
    assert _run_tool("--check").returncode == 0, "pyaclnn/_registry/signatures.json.gz is out of date"
    # the same folder less one header (links: nothing copied): the shipped table is stale for it
    folder = tmp_path / "headers"
    folder.mkdir()
    for path in REAL.glob("aclnn*.h"):
        if path.name != "aclnn_softmax.h":
            (folder / path.name).symlink_to(path)
    (folder / "MANIFEST.json").symlink_to(REAL / "MANIFEST.json")
    proc = _run_tool("--check", "--name", "shared/headers", str(folder))
    assert proc.returncode == 1 and "out of date" in proc.stderr
    # a table edited by hand is stale too; a regenerated one is not
    out = tmp_path / "table.json.gz"
    data = json.loads(gzip.decompress(_signature_table.PATH.read_bytes()))
    data["ops"]["Softmax"]["params"][1][0] = "axis"
    out.write_bytes(gzip.compress(json.dumps(data).encode()))
    assert _run_tool("--check", "--out", str(out)).returncode == 1
    assert _run_tool("--out", str(out)).returncode == 0
    assert _run_tool("--check", "--out", str(out)).returncode == 0
    assert _run_tool("--check", str(tmp_path / "nowhere")).returncode == 2


def test_numpy_backend_knows_public_operators_without_cann(use_backend, monkeypatch):
    """It raised UnknownOperatorError ("no header declares aclnnSoftmaxGetWorkspaceSize")."""
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH"):
        monkeypatch.delenv(var, raising=False)
    if any(Path(h).exists() for h in ("/usr/local/Ascend/cann", "/usr/local/Ascend/ascend-toolkit/latest")):
        pytest.skip("a CANN install is present in the default location")
    registry = use_backend("numpy").runtime.registry
    assert [s.kind for s in registry.sources] == ["pyaclnn", "table"]
    assert len(registry.names()) >= 700
    x = np.ones((2, 3), np.float32)
    # (an RNG operator: the aten tier leaves those out, so it has no reference of either tier)
    for call in (lambda: pyaclnn.Op("DropoutGenMask", [2, 3], 0.5, 0, 0, np.empty(1, np.uint8)),
                 lambda: acl.aclnnDropoutGenMaskGetWorkspaceSize([2, 3], 0.5, 0, 0, None)):
        with pytest.raises(pyaclnn.NotSupportedError) as info:
            call()
        assert type(info.value) is pyaclnn.NotSupportedError
        assert str(info.value).startswith("aclnnDropoutGenMask has no NumPy reference in pyaclnn")
    softmax = registry.get("Softmax")
    assert softmax.source.kind == "table" and softmax.names == ("self", "dim", "out")
    assert (softmax.inputs, softmax.outputs) == ((0,), (2,))
    # the ten with a reference keep pyaclnn's headers/ and their reference
    add = registry.get("Add")
    assert add.source.kind == "pyaclnn" and add.has_reference and add.conflicts == ()
    # a typo is still unknown, now with the table's names to suggest from
    with pytest.raises(pyaclnn.UnknownOperatorError, match=r"did you mean 'Softmax'\?.*pyaclnn signature table: "):
        pyaclnn.Op("Sofmax", x)


def test_import_and_the_first_shipped_call_do_not_read_the_table(tmp_path):
    """The table (a few milliseconds to read) is read when a name is not found before it, not at
    import, nor for the operators of pyaclnn's headers/."""
    code = ("import numpy as np, pyaclnn\nfrom pyaclnn._registry import table as t\n"
            "assert not t._loaded, 'read at import'\n"
            "x = np.ones(3, np.float32)\nout = np.empty(3, np.float32)\n"
            "pyaclnn.Op('Add', x, x, 1, out)\nassert not t._loaded, 'read by Add'\n"
            "try:\n    pyaclnn.Op('Softmax', x, 0, out)\nexcept pyaclnn.NotSupportedError:\n    pass\n"
            "assert t._loaded, 'not read for Softmax'\n")
    env = subprocess_env(PYACLNN_BACKEND="numpy")
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH"):
        env.pop(var, None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_ops_and_doctor_show_the_table_as_a_source(use_backend, monkeypatch, capsys):
    from pyaclnn._cli.commands import doctor_report, doctor_text, main
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH"):
        monkeypatch.delenv(var, raising=False)
    use_backend("numpy")
    assert main(["ops", "aclnnDropoutGenMask"]) == 0
    text = capsys.readouterr().out
    assert "aclnnDropoutGenMask  [pyaclnn signature table: aclnn_dropout_gen_mask.h; no NumPy reference]" in text
    data = doctor_report()
    sources = {s["kind"]: s for s in data["operators"]["sources"]}
    assert sources["table"]["count"] >= 700 and sources["table"]["folders"] == [str(_signature_table.PATH)]
    assert sources["table"]["generated_from"]["name"] == "shared/headers"
    text = doctor_text(data)
    assert f"pyaclnn signature table: {sources['table']['count']} declared ({_signature_table.PATH})" in text
    assert "    generated from shared/headers: 717 headers, sha256 " in text
