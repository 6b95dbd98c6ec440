"""The operator registry on real headers: the 717 op_api headers of the public CANN operator
repositories in ``shared/headers`` (897 operators by its README; sources in its MANIFEST.json),
read where they are, never copied into the project.

What is checked: every operator listed declares both functions, internal C++ headers and
``Inner`` declarations without a launch function are not listed, every prototype parses and
cffi accepts it, a launch function with extra parameters (ops-cv's aclnnGaussianBlur) is read
with them, and an operator declared twice is taken from its own header whatever the file names,
with the conflict named by ``pyaclnn ops`` and ``doctor``.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import shared_folder
from pyaclnn._registry.operators import Registry, Source, own_header

REAL = shared_folder("headers")
pytestmark = pytest.mark.skipif(REAL is None, reason="shared/headers (the real op_api headers) is not beside "
                                                      "this checkout")
DOCUMENTED_OPERATORS = 897  # shared/headers/README.md: "717 aclnn_*.h files ... 897 operators"
# The three declarations the README's count includes that are no operator API (see the test).
INTERNAL = {"InnerFusedInferAttentionScore", "InnerFusedInferAttentionScoreTensor", "InnerDistributeBarrier"}


@pytest.fixture(scope="module")
def real() -> Registry:
    assert REAL is not None
    return Registry([Source("builtin", "real headers", (REAL,))])


def _declares(text: str, name: str) -> tuple[bool, bool]:
    """Whether ``text`` declares aclnn<name>GetWorkspaceSize and aclnn<name> (comments dropped):
    a plain scan, independent of pyaclnn's parser."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    return (re.search(rf"\baclnn{name}GetWorkspaceSize\s*\(", text) is not None,
            re.search(rf"\baclnn{name}\s*\(\s*void\s*\*\s*\w+\s*,", text) is not None)


def test_every_listed_operator_declares_both_functions_and_no_internal_one(real):
    names = real.all()
    assert len(list(REAL.glob("aclnn_*.h"))) == 717
    assert len(names) == DOCUMENTED_OPERATORS - len(INTERNAL)
    assert not INTERNAL & set(names) and not [n for n in names if n.startswith("Inner")]
    for name, (_source, header) in names.items():
        assert _declares(header.read_text(errors="replace"), name) == (True, True), (name, header.name)
    # the public operators whose internals those are stay listed
    assert {"FusedInferAttentionScore", "DistributeBarrier"} <= set(names)
    # why the three are not operators: a phase 1 without a launch function, or a header that is
    # the library's own C++ (an _inner.h, `using namespace op;` with opdev/ includes)
    inner = (REAL / "aclnn_fused_infer_attention_score_inner.h").read_text()
    assert _declares(inner, "InnerFusedInferAttentionScoreTensor") == (True, False)
    assert _declares(inner, "InnerFusedInferAttentionScore") == (True, True)
    common = (REAL / "aclnn_distribute_barrier_common.h").read_text()
    assert _declares(common, "InnerDistributeBarrier") == (True, True) and "using namespace op;" in common


def test_every_prototype_parses_and_cffi_declares_it(real):
    from pyaclnn._acl._ffi import op_ffi
    for name in real.all():
        info = real.get(name)
        assert info.signature.problem is None, (name, info.signature.problem)
        op_ffi(info.signature.prototype())  # raises cffi.CDefError on anything it cannot declare


def test_a_launch_function_with_extra_parameters_is_read_with_them(real):
    """ops-cv's aclnnGaussianBlur(workspace, workspaceSize, executor, src, ksize, sigmaX, sigmaY,
    borderType, dst, stream): the only launch of the 894 that is not the 4-argument one."""
    assert {n for n in real.all() if real.get(n).signature.launch} == {"GaussianBlur"}
    info = real.get("GaussianBlur")
    sig = info.signature
    assert [(p.name, p.ctype) for p in sig.launch] == [
        ("src", "const aclTensor *"), ("ksize", "const aclIntArray *"), ("sigmaX", "double"), ("sigmaY", "double"),
        ("borderType", "int64_t"), ("dst", "aclTensor *")]
    assert sig.launch_sources == (0, 1, 2, 3, 4, 5)  # phase 1's values, by name
    assert sig.prototype().splitlines()[1] == (
        "aclnnStatus aclnnGaussianBlur(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
        "const aclTensor *src, const aclIntArray *ksize, double sigmaX, double sigmaY, int64_t borderType, "
        "aclTensor *dst, aclrtStream stream);")
    # phase 1 declares dst const too; the launch's `aclTensor *dst` says it is the output
    assert info.inputs == (0,) and info.outputs == (5,) and info.roles_problem is None
    assert real.get("Add").signature.launch == () and real.get("Add").signature.launch_sources == ()


def test_an_operator_declared_twice_comes_from_its_own_header_and_the_conflict_is_named(real):
    conflicts = real.conflicts()
    assert list(conflicts) == ["GroupNorm"]  # the other ten names declared twice declare the same prototype
    gn = conflicts["GroupNorm"]
    assert gn.header.name == "aclnn_group_norm.h" and gn.names[:6] == ("self", "gamma", "beta", "N", "C", "HxW")
    assert [(d.header.name, [p.name for p in d.signature.params][:4]) for d in gn.conflicts] == [
        ("aclnn_group_norm_experimental.h", ["self", "gammaOptional", "betaOptional", "n"])]
    manifest = {e["header"]: e for e in json.loads((REAL / "MANIFEST.json").read_text())}
    assert not manifest["aclnn_group_norm.h"]["path"].startswith("experimental/")  # ops-nn's norm/group_norm
    # wherever one of an operator's headers is its own file, that one is used
    for name in real.names():
        headers = [h for _, h in real.declarations(name)]
        if len(headers) > 1 and any(own_header(name, h) for h in headers):
            assert own_header(name, real.resolve(name)[1]), (name, headers)


def test_precedence_does_not_depend_on_file_names(tmp_path):
    """The experimental header under a name sorting first (as the alphabetically first file used
    to win): GroupNorm still comes from aclnn_group_norm.h. Links, not copies."""
    assert REAL is not None
    (tmp_path / "aclnn_gn_experimental.h").symlink_to(REAL / "aclnn_group_norm_experimental.h")
    (tmp_path / "aclnn_group_norm.h").symlink_to(REAL / "aclnn_group_norm.h")
    registry = Registry([Source("builtin", "links", (tmp_path,))])
    info = registry.get("GroupNorm")
    assert info.header.name == "aclnn_group_norm.h" and "gamma" in info.names and "N" in info.names
    assert [d.header.name for d in info.conflicts] == ["aclnn_gn_experimental.h"]


@pytest.fixture
def real_package(tmp_path: Path) -> Path:
    """A custom operator package whose op_api/include is a link to shared/headers (no library)."""
    assert REAL is not None
    (tmp_path / "op_api").mkdir()
    (tmp_path / "op_api" / "include").symlink_to(REAL, target_is_directory=True)
    return tmp_path


def test_ops_and_doctor_name_the_conflict(emulator, emulator_home, real_package, monkeypatch, capsys):
    """On the emulator's toolkit with shared/headers as a custom package (its library missing: every
    declaration is skipped, and the signature table, generated from the same headers, provides the
    operator from the toolkit's libraries)."""
    from pyaclnn._objects import backend as _backend
    from pyaclnn._cli.commands import doctor_report, doctor_text, main
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(real_package))
    _backend.reset_for_tests()
    assert main(["ops", "aclnnGroupNorm"]) == 0
    text = capsys.readouterr().out
    assert "aclnnGroupNorm  [pyaclnn signature table: aclnn_group_norm.h" in text
    assert "note: skipped custom package" in text and "libcust_opapi.so is missing" in text
    assert "CONFLICT" in text and "aclnn_group_norm_experimental.h" in text and "gammaOptional" in text
    assert main(["ops", "GaussianBlur"]) == 0
    text = capsys.readouterr().out
    assert "launch: aclnnGaussianBlur(workspace, workspaceSize, executor, src, ksize, sigmaX, sigmaY, " \
           "borderType, dst, stream)" in text
    assert main(["ops", "aclnnInner*"]) == 1  # none listed
    capsys.readouterr()
    data = doctor_report()
    conflicts = {c["op"]: c for c in data["operators"]["conflicts"]}
    assert set(conflicts) == {"GroupNorm"}
    assert Path(conflicts["GroupNorm"]["header"]).name == "aclnn_group_norm.h"
    assert [Path(d["header"]).name for d in conflicts["GroupNorm"]["others"]] == ["aclnn_group_norm_experimental.h"]
    assert "CONFLICT aclnnGroupNorm: uses pyaclnn signature table" in doctor_text(data)
