"""headers/ must declare exactly what CANN's official headers declare (abi.json).

Prototypes are compared as parsed C (pycparser, the parser cffi uses), so spelling and
whitespace do not matter but every type, qualifier and parameter does.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pycparser
import pytest
from pycparser import c_ast, c_generator

from conftest import reference_abi, shared_folder

ROOT = Path(__file__).resolve().parents[2]
HEADERS = ROOT / "headers"
VENDORED = Path(__file__).resolve().parents[1] / "data" / "abi.json"
SHARED = shared_folder("reference", "abi.json")  # beside this checkout, or beside its main worktree
PRELUDE = ("typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;"
           "typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;"
           "typedef unsigned long uint64_t; typedef unsigned long size_t; typedef unsigned long uintptr_t;"
           "typedef _Bool bool;\n")
HEADER_ORDER = ["acl_base.h", "acl_rt.h", "acl_meta.h", "aclnn_base.h", "aclnn_mse_loss_backward.h",
                "aclnn_group_norm_backward.h", "aclnn_cross_entropy_loss_grad.h", "aclnn_prelu_backward.h"]
DEFINE = re.compile(r"^#define\s+(\w+)\s+(\S+)\s*$", re.M)


def abi() -> dict:
    """abi.json plus the graph-capture declarations (tests/data/abi_capture.json)."""
    return reference_abi()


def header_text() -> str:
    return "\n".join((HEADERS / name).read_text() for name in HEADER_ORDER)


def parse(text: str) -> c_ast.FileAST:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = DEFINE.sub("", text)
    return pycparser.CParser().parse(PRELUDE + text)


def prototypes(ast: c_ast.FileAST) -> dict[str, str]:
    gen = c_generator.CGenerator()
    out = {}
    for node in ast.ext:
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl):
            func = node.type
            params = []
            for p in (func.args.params if func.args else []):
                # parameter names are not part of the ABI; compare the types only
                p = _strip_name(p)
                params.append(gen.visit(p))
            ret = gen.visit(_strip_name(c_ast.Typename(None, [], None, func.type)))
            out[node.name] = f"{ret} {node.name}({', '.join(params)})"
    return out


def _strip_name(node: c_ast.Node) -> c_ast.Node:
    for child in node.children():
        _strip_name(child[1])
    if isinstance(node, c_ast.TypeDecl):
        node.declname = None
    if isinstance(node, c_ast.Decl):
        node.name = None
    return node


def enums(ast: c_ast.FileAST) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for node in ast.ext:
        if isinstance(node, c_ast.Typedef) and isinstance(node.type.type, c_ast.Enum):
            members = {}
            for e in node.type.type.values.enumerators:
                members[e.name] = int(pycparser.c_generator.CGenerator().visit(e.value).replace(" ", ""), 0)
            found[node.name] = members
    return found


def test_vendored_abi_json_matches_shared_reference():
    if SHARED is None or not SHARED.is_file():
        pytest.skip("shared/reference/abi.json is not beside this checkout")
    assert json.loads(SHARED.read_text()) == json.loads(VENDORED.read_text()), \
        "tests/data/abi.json is stale: copy shared/reference/abi.json"


def test_every_prototype_matches_abi_json():
    ours = prototypes(parse(header_text()))
    official_text = "\n".join(re.sub(r"\(\s*\)", "(void)", p) for p in abi()["prototypes"].values())
    official = prototypes(parse(_declarations_for(official_text)))
    assert sorted(ours) == sorted(official), (set(ours) ^ set(official))
    mismatched = {name: (ours[name], official[name]) for name in official if ours[name] != official[name]}
    assert not mismatched


def _declarations_for(prototype_text: str) -> str:
    """abi.json prototypes need the typedefs and enums our headers declare (not the functions)."""
    decls = [line for line in parse_types_only().splitlines()]
    return "\n".join(decls) + "\n" + prototype_text


def parse_types_only() -> str:
    text = re.sub(r"/\*.*?\*/", "", header_text(), flags=re.S)
    text = DEFINE.sub("", text)
    # drop function declarations: lines ending in ');' that are not typedefs
    return "\n".join(l for l in text.splitlines() if not (l.rstrip().endswith(");") and not l.startswith("typedef")))


def test_every_enum_member_matches_abi_json():
    ours = enums(parse(header_text()))
    for name, members in abi()["enums"].items():
        assert name in ours, f"enum {name} missing from headers/"
        official = {k.split(" ")[0]: v for k, v in members.items()}
        assert ours[name] == official, name


def test_every_status_code_and_macro_matches_abi_json():
    defines = {name: value for name, value in DEFINE.findall(header_text())}
    data = abi()
    for name, value in data["status_codes"].items():  # includes the zero-valued *_SUCCESS aliases
        assert defines.get(name) == str(value), f"{name}: headers say {defines.get(name)}, abi.json {value}"
    for name, value in data["macros"].items():
        if isinstance(value, int):
            assert int(defines[name.split(" ")[0]], 0) == value, name
    status_like = ("ACL_ERROR", "ACLNN_ERR", "ACL_SUCCESS", "ACL_RT_SUCCESS", "ACLNN_SUCCESS")
    assert {n for n in defines if n.startswith(status_like)} == set(data["status_codes"])


def test_struct_matches_abi_json():
    official = abi()["structs"]["aclCANNPackageVersion"].split("/*")[0]
    assert re.sub(r"\s+", " ", official).strip() in re.sub(r"\s+", " ", header_text())


# ops-nn operators of headers/ beyond abi.json's four: the op library pyaclnn loads exports them too
# (libopapi.so on 8.x, libopapi_nn.so on 9.x: their specs' REPO), so the "opapi" role declares them
OPS_NN_EXTRA = {"aclnnForeachMulScalarListGetWorkspaceSize", "aclnnForeachMulScalarList"}


def test_headers_parse_with_cffi_and_declare_every_abi_function():
    from pyaclnn._acl._ffi import FUNCTIONS, ffi
    declared = {n for names in FUNCTIONS.values() for n in names}
    assert declared == set(abi()["prototypes"]) | OPS_NN_EXTRA
    assert ffi.sizeof("aclCANNPackageVersion") == 512
    assert ffi.sizeof("aclDataType") == 4


def test_each_library_role_declares_what_that_library_exports():
    from pyaclnn._acl._ffi import FUNCTIONS
    libraries = abi()["libraries"]
    assert set(FUNCTIONS["runtime"]) == set(libraries["libascendcl.so"])
    assert set(FUNCTIONS["nnopbase"]) == set(libraries["libnnopbase.so"])
    assert set(FUNCTIONS["opapi"]) - OPS_NN_EXTRA == set(libraries["libopapi.so"]) == set(libraries["libopapi_nn.so"])


def test_error_table_is_generated_from_headers():
    import subprocess
    import sys
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_errors.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_acl_constants_are_generated_from_headers():
    import subprocess
    import sys
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_constants.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    from pyaclnn import acl
    from pyaclnn._core.headers_path import constants
    assert {name: getattr(acl, name) for name in constants()} == constants()


# 717 real op_api headers (MANIFEST.json: their sources), beside the checkout (or a worktree's main)
REAL_HEADERS = next((p for p in (ROOT.parent / "shared" / "headers", ROOT.parents[1] / "shared" / "headers")
                     if p.is_dir()), ROOT.parent / "shared" / "headers")


def test_operator_headers_beyond_the_spec_match_the_real_ones():
    """headers/ declares, for the operators beyond abi.json's four (pyaclnn/ops: Add, InplaceAdd),
    each phase-1 function exactly as CANN's own header does: the same parameters, names, C types
    and constness (read with pyaclnn's header parser from ../shared/headers, never a copy)."""
    from pyaclnn._registry.signature import parse_header
    if not REAL_HEADERS.is_dir():
        pytest.skip("../shared/headers is not there")
    spec = set(HEADER_ORDER)
    extra = sorted(p for p in HEADERS.glob("aclnn_*.h") if p.name not in spec)
    assert {p.name for p in extra} >= {"aclnn_add.h", "aclnn_reduce_sum.h", "aclnn_amp_update_scale.h",
                                       "aclnn_foreach_mul_scalar_list.h"}
    for path in extra:
        ours = parse_header(path.read_text())
        # a generated header is in no repository: the CANN emulator's, written from the op
        # definition and its page's prototype (tests/emulator/include/aclnnop), stands in for it
        source = REAL_HEADERS / path.name
        if not source.is_file():
            source = ROOT / "tests" / "emulator" / "include" / "aclnnop" / path.name
        real = parse_header(source.read_text())
        assert ours and set(ours) <= set(real), path.name
        for name, sig in ours.items():
            assert sig.params == real[name].params, (path.name, name)
        # and the launch function: the 4-argument prototype, as the real header declares it
        text = re.sub(r"\s+", " ", source.read_text())
        for name in ours:
            assert re.search(rf"aclnnStatus\s+aclnn{name}\s*\(\s*void\s*\*\s*workspace, uint64_t workspaceSize, "
                             r"aclOpExecutor\s*\*\s*executor, (const )?aclrtStream stream\)", text), name


def test_graph_capture_declarations_match_cann():
    """The aclmdlRI capture API (issue 26), beyond abi.json: its handle type, its two enums with
    CANN's values (the enum test above compares every member), and its functions in the runtime
    library's role, each with the source it was read from (tests/data/abi_capture.json)."""
    from pyaclnn._acl._ffi import FUNCTIONS, ffi
    capture = json.loads((VENDORED.parent / "abi_capture.json").read_text())
    assert set(capture["sources"]) == {"RT", "C81"}
    text = re.sub(r"\s+", " ", header_text())
    for decl in capture["typedefs"].values():
        assert re.sub(r"\s+", " ", decl) in text
    assert set(capture["prototypes"]) <= set(FUNCTIONS["runtime"])
    assert ffi.sizeof("aclmdlRI") == ffi.sizeof("void *") and ffi.sizeof("aclmdlRICaptureMode") == 4
    assert int(ffi.cast("aclmdlRICaptureMode", 2)) == capture["enums"]["aclmdlRICaptureMode"]["ACL_MODEL_RI_CAPTURE_MODE_RELAXED"]
