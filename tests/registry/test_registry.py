"""The header parser and the operator registry, on header text written in the real CANN styles.

The fixtures copy the *shapes* of real headers (ops-math aclnn_add.h: ACLNN_API, several ops per
header, ``selfRef``; the generated custom-op header of the Ascend C flow: include guard, extern "C",
``__attribute__((visibility("default")))``, one parameter per line, every tensor const; ops-info
json of a custom package), not their text.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyaclnn._registry.operators import Registry, Source
from pyaclnn._registry.sources import cann_sources, custom_sources, pyaclnn_source
from pyaclnn._registry.signature import index_header, parse_header
from conftest import headers_package

HAND_WRITTEN = r'''/**
 * Copyright notice ... aclnnFakeGetWorkspaceSize( in a comment must not count
 */
#ifndef OP_API_INC_ADD_H_
#define OP_API_INC_ADD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief aclnnAdd: out = self + alpha * other
 * @param [in] self: npu device aclTensor
 */
ACLNN_API aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                                               aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnAdd(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

ACLNN_API aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor* selfRef, const aclTensor* other,
                                                      const aclScalar* alpha, uint64_t* workspaceSize,
                                                      aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnInplaceAdd(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                      aclrtStream stream);

// a line comment: aclnnNopeGetWorkspaceSize(int x);
ACLNN_API aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList *tensors, int64_t dim, aclTensor *out,
                                               uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnCat(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                               const aclrtStream stream);

ACLNN_API aclnnStatus aclnnEverythingGetWorkspaceSize(const aclIntArray *dims, const aclFloatArray *f,
    const aclBoolArray *mask, const aclScalarList *scalars, int8_t a, int32_t b, uint64_t c, double d,
    float e, bool g, const char *mode, char *reduction, aclDataType dtype, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnEverything(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                      aclrtStream stream);

ACLNN_API aclnnStatus aclnnWeirdGetWorkspaceSize(const aclTensor *const *tensors, aclTensor **outs,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnWeird(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream);

// a phase 1 without its launch function is no operator (an Inner op of an _inner.h does this)
ACLNN_API aclnnStatus aclnnOrphanGetWorkspaceSize(const aclTensor *self, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor);

#ifdef __cplusplus
}
#endif

#endif  // OP_API_INC_ADD_H_
'''

GENERATED = '''
/*
 * calution: this file was generated automaticlly donot change it.
*/

#ifndef ACLNN_ADD_CUSTOM_H_
#define ACLNN_ADD_CUSTOM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* funtion: aclnnAddCustomGetWorkspaceSize
 * parameters :
 * x : required
 * yOptional : optional
 * z : required
 */
__attribute__((visibility("default")))
aclnnStatus aclnnAddCustomGetWorkspaceSize(
    const aclTensor *x,
    const aclTensor *yOptional,
    double alpha,
    const aclTensor *z,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

__attribute__((visibility("default")))
aclnnStatus aclnnAddCustom(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
'''


def test_index_lists_operators_without_parsing_and_skips_comments():
    assert index_header(HAND_WRITTEN) == ["Add", "InplaceAdd", "Cat", "Everything", "Weird"]
    assert index_header(GENERATED) == ["AddCustom"]


def test_a_phase_1_without_launch_or_in_an_internal_header_is_no_operator_and_says_why(tmp_path):
    (tmp_path / "aclnn_add.h").write_text(HAND_WRITTEN)
    (tmp_path / "aclnn_thing_inner.h").write_text(GENERATED.replace("AddCustom", "InnerThing"))
    (tmp_path / "aclnn_common.h").write_text("using namespace op;\n" + GENERATED.replace("AddCustom", "Common"))
    registry = Registry([Source("builtin", "toolkit", (tmp_path,))])
    assert set(registry.all()) == {"Add", "InplaceAdd", "Cat", "Everything", "Weird"}
    assert "no launch function aclnnOrphan" in str(registry.unknown("Orphan"))
    assert "aclnn_thing_inner.h declares aclnnInnerThingGetWorkspaceSize, but is an op_api internal header" in \
        str(registry.unknown("InnerThing"))
    assert "C++ of the library's own sources ('using namespace')" in str(registry.unknown("Common"))
    assert "no header declares aclnnNopeGetWorkspaceSize" in str(registry.unknown("Nope"))


def test_hand_written_header_kinds_and_const():
    ops = parse_header(HAND_WRITTEN)
    add = ops["Add"]
    assert [(p.name, p.kind, p.const) for p in add.params] == [
        ("self", "tensor", True), ("other", "tensor", True), ("alpha", "scalar", True), ("out", "tensor", False)]
    assert add.problem is None and not add.all_const
    assert str(add) == ("aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other, "
                        "const aclScalar *alpha, aclTensor *out)")
    assert [p.kind for p in ops["Cat"].params] == ["tensor_list", "int", "tensor"]
    every = ops["Everything"]
    assert [p.kind for p in every.params] == [
        "int_array", "float_array", "bool_array", "scalar_list", "int", "int", "int", "float", "float", "bool",
        "string", "string", "int", "tensor"]
    assert every.problem is None


def test_unknown_parameter_kinds_are_listed_with_the_reason():
    weird = parse_header(HAND_WRITTEN)["Weird"]
    assert [p.kind for p in weird.params] == ["unsupported", "unsupported"]
    assert "'tensors'" in weird.problem and "'outs'" in weird.problem and "aclTensor **" in weird.problem


def test_generated_header_one_parameter_per_line_all_const():
    sig = parse_header(GENERATED)["AddCustom"]
    assert [p.name for p in sig.params] == ["x", "yOptional", "alpha", "z"]
    assert sig.all_const and sig.problem is None


def test_prototype_is_what_cffi_accepts():
    """The normalised prototype declares both phases against pyaclnn's own types."""
    from pyaclnn._acl._ffi import op_ffi
    for sig in parse_header(HAND_WRITTEN + GENERATED).values():
        if sig.problem is None:
            ffi = op_ffi(sig.prototype())
            assert ffi.typeof(f"aclnnStatus(*)({', '.join(p.ctype for p in sig.params)}, uint64_t *, "
                              "aclOpExecutor **)") is not None


def test_shipped_headers_parse_to_the_documented_parameters():
    ops = Registry([pyaclnn_source()])
    mse = ops.get("MseLossBackward")
    assert mse.names == ("gradOutput", "self", "target", "reduction", "out")
    assert mse.inputs == (0, 1, 2) and mse.outputs == (4,) and mse.index_rule == "non_null"
    gn = ops.get("GroupNormBackward")
    assert gn.kinds[9] == "bool_array" and gn.inputs == (0, 1, 2, 3, 4) and gn.outputs == (10, 11, 12)
    ce = ops.get("CrossEntropyLossGrad")  # generated: all const; pyaclnn knows its output
    assert ce.signature.all_const and ce.outputs == (10,) and ce.inputs == (0, 1, 2, 3, 4, 5)
    assert ce.index_rule == "position"
    assert ops.get("PreluBackward").outputs == (3, 4)
    assert set(ops.all()) == {"MseLossBackward", "GroupNormBackward", "CrossEntropyLossGrad", "PreluBackward",
                              "Add", "InplaceAdd", "ReduceSum", "AmpUpdateScale", "Cat", "ForeachMulScalarList"}
    cat = ops.get("Cat")  # a tensor list: an input like a tensor
    assert cat.names == ("tensors", "dim", "out") and cat.inputs == (0,) and cat.outputs == (2,)
    fe = ops.get("ForeachMulScalarList")  # generated, all const: its spec's ROLES name the output list
    assert fe.names == ("x", "scalars", "out") and fe.inputs == (0,) and fe.outputs == (2,)
    assert fe.kinds == ("tensor_list", "scalar_list", "tensor_list") and fe.index_rule == "position"
    add, inplace = ops.get("Add"), ops.get("InplaceAdd")
    assert add.names == ("self", "other", "alpha", "out") and add.inputs == (0, 1) and add.outputs == (3,)
    assert inplace.inputs == (0, 1) and inplace.outputs == (0,)  # selfRef: in and out


def _package(root: Path, name: str, header: str, opdef: dict | None) -> Path:
    vendor = headers_package(root / name, {"aclnn_ops.h": header})
    if opdef is not None:
        config = vendor / "op_impl" / "ai_core" / "tbe" / "config" / "ascend910b"
        config.mkdir(parents=True)
        (config / "aic-ascend910b-ops-info.json").write_text(json.dumps(opdef))
    return vendor


OPDEF = {"AddCustom": {"input0": {"name": "x", "paramType": "required"},
                       "input1": {"name": "y", "paramType": "optional"},
                       "output0": {"name": "z", "paramType": "required"},
                       "opFile": {"value": "add_custom"}}}


def test_roles_of_a_generated_op_come_from_the_op_definition(tmp_path):
    vendor = _package(tmp_path, "customize", GENERATED, OPDEF)
    registry = Registry([Source("custom", "customize", (vendor / "op_api" / "include",), None,
                                tuple(vendor.rglob("*.json")))])
    info = registry.get("AddCustom")
    assert info.inputs == (0, 1) and info.outputs == (3,) and info.index_rule == "position"
    assert info.roles_problem is None
    assert [info.role_text(i) for i in range(4)] == ["in", "in", "", "out"]


def test_a_renamed_output_goes_by_position_in_the_op_definition(tmp_path):
    """opbuild names a generated op's output `out` where the definition says `y`: the header
    lists the definition's inputs, attributes, then outputs, so the last tensor is the output."""
    renamed = {"AddCustom": {"input0": {"name": "x"}, "input1": {"name": "y"}, "output0": {"name": "w"},
                             "attr": {"list": "alpha"}}}
    vendor = _package(tmp_path, "renamed", GENERATED, renamed)
    registry = Registry([Source("custom", "renamed", (vendor / "op_api" / "include",), None,
                                tuple(vendor.rglob("*.json")))])
    info = registry.get("AddCustom")
    assert info.inputs == (0, 1) and info.outputs == (3,) and info.roles_problem is None
    extra = {"AddCustom": {"input0": {"name": "x"}, "output0": {"name": "w"}}}  # counts differ: undetermined
    vendor = _package(tmp_path / "2", "extra", GENERATED, extra)
    info = Registry([Source("custom", "extra", (vendor / "op_api" / "include",), None,
                            tuple(vendor.rglob("*.json")))]).get("AddCustom")
    assert info.outputs is None and "names no tensor" in info.roles_problem


def test_roles_undetermined_without_an_op_definition(tmp_path):
    vendor = _package(tmp_path, "nodef", GENERATED, None)
    info = Registry([Source("custom", "nodef", (vendor / "op_api" / "include",))]).get("AddCustom")
    assert info.inputs is None and info.outputs is None
    assert "const" in info.roles_problem and "op definition" in info.roles_problem


def test_inplace_ref_parameter_is_input_and_output(tmp_path):
    (tmp_path / "aclnn_add.h").write_text(HAND_WRITTEN)
    info = Registry([Source("builtin", "toolkit", (tmp_path,))]).get("InplaceAdd")
    assert info.inputs == (0, 1) and info.outputs == (0,) and info.role_text(0) == "in/out"


def test_custom_packages_come_first_in_env_order_then_config_ini(tmp_path, monkeypatch):
    first = _package(tmp_path / "a", "first", GENERATED, OPDEF)
    second = _package(tmp_path / "b", "second", GENERATED.replace("double alpha", "float alpha"), OPDEF)
    opp = tmp_path / "opp"
    third = _package(opp / "vendors", "third", HAND_WRITTEN, None)
    (opp / "vendors" / "config.ini").write_text("load_priority=missing,third\n")
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", f"{first}:{second}:")
    sources = custom_sources(opp)
    assert [s.include_dirs[0].parent.parent for s in sources] == [first, second, third]
    assert sources[0].library == first / "op_api" / "lib" / "libcust_opapi.so"
    registry = Registry(sources + [pyaclnn_source()])
    assert registry.get("AddCustom").signature.params[2].ctype == "double"  # the first package wins
    add = registry.get("Add")  # third's library is missing: passed over for pyaclnn's headers/
    assert add.source.kind == "pyaclnn" and add.skipped[0].source.label.startswith("custom package third")


def test_toolkit_layouts(tmp_path, monkeypatch):
    monkeypatch.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    monkeypatch.delenv("ASCEND_OPP_PATH", raising=False)
    home8 = tmp_path / "8"
    real = home8 / "opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop"
    real.mkdir(parents=True)
    (real / "aclnn_add.h").write_text(HAND_WRITTEN)
    (home8 / "include").mkdir()
    (home8 / "include" / "aclnnop").symlink_to(real)
    home9 = tmp_path / "9"
    (home9 / "include" / "aclnnop").mkdir(parents=True)
    (home9 / "include" / "aclnnop" / "aclnn_add.h").write_text(HAND_WRITTEN)
    for home, layout in ((home8, "8.x"), (home9, "9.x")):
        sources = cann_sources(home, layout)
        # the installed CANN's own headers first, the signature table last
        assert [s.kind for s in sources] == ["builtin", "pyaclnn", "table"]
        assert len(sources[0].include_dirs) == 1  # the 8.x link is the same folder
        registry = Registry(sources)
        assert registry.get("Add").source.kind == "builtin"
        mse = registry.get("MseLossBackward")  # this toolkit has no header for it: headers/' declaration
        assert mse.source.kind == "pyaclnn" and mse.shipped and mse.has_reference
        assert registry.get("Cat").source.kind == "builtin"
        assert {"Add", "InplaceAdd", "Cat", "MseLossBackward"} <= set(registry.all())


def test_headers_are_parsed_only_when_used_and_once(tmp_path, monkeypatch):
    (tmp_path / "aclnn_add.h").write_text(HAND_WRITTEN)
    (tmp_path / "aclnn_broken.h").write_text("aclnnBrokenGetWorkspaceSize(\naclnnBroken(")
    calls = []
    import pyaclnn._registry.operators as reg
    real = reg.parse_header
    monkeypatch.setattr(reg, "parse_header", lambda text: calls.append(1) or real(text))
    registry = Registry([Source("builtin", "toolkit", (tmp_path,))])
    assert "Broken" in registry.all() and calls == []
    assert registry.get("Add") is registry.get("Add") and registry.get("Cat") is not None
    assert len(calls) == 1  # one header, parsed once for both of its operators
    broken = registry.get("Broken")
    assert broken is not None and "could not be parsed" in broken.signature.problem


def test_op_definitions_are_read_one_file_at_a_time(tmp_path, monkeypatch):
    """A toolkit ships one large ops-info json per SoC: only as many are parsed as needed."""
    import pyaclnn._registry.operators as reg
    vendor = _package(tmp_path, "multi", GENERATED, OPDEF)
    other = vendor / "op_impl/ai_core/tbe/config/ascend310p/aic-ascend310p-ops-info.json"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({"Other": {"input0": {"name": "a"}}}))
    files = tuple(sorted(vendor.rglob("*.json")))  # ascend310p first: it does not define AddCustom
    read: list[str] = []
    real = reg.read_opdefs
    monkeypatch.setattr(reg, "read_opdefs", lambda path: read.append(path.parent.name) or real(path))
    registry = Registry([Source("custom", "multi", (vendor / "op_api" / "include",), None, files)])
    assert registry.get("AddCustom").outputs == (3,)
    assert read == ["ascend310p", "ascend910b"]
    registry2 = Registry([Source("custom", "multi", (vendor / "op_api" / "include",), None, files[::-1])])
    read.clear()
    assert registry2.get("AddCustom").outputs == (3,) and read == ["ascend910b"]


def test_the_installed_cann_header_comes_before_pyaclnn_headers(tmp_path, monkeypatch):
    """The toolkit's own declaration describes the library it installed: it is used, and one that
    differs from headers/ is a named conflict, without the NumPy reference (written for headers/'
    prototype). The same prototype keeps the reference."""
    from pyaclnn._core.headers_path import HEADER_DIR
    monkeypatch.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    monkeypatch.delenv("ASCEND_OPP_PATH", raising=False)
    folder = tmp_path / "include" / "aclnnop"
    folder.mkdir(parents=True)
    shipped = (HEADER_DIR / "aclnn_mse_loss_backward.h").read_text()
    (folder / "aclnn_mse_loss_backward.h").write_text(shipped)
    (folder / "aclnn_prelu_backward.h").write_text(
        (HEADER_DIR / "aclnn_prelu_backward.h").read_text().replace("* gradOutput", "* gradOut"))
    registry = Registry(cann_sources(tmp_path, "9.x"))
    mse = registry.get("MseLossBackward")
    assert mse.source.kind == "builtin" and mse.shipped and mse.has_reference and mse.conflicts == ()
    prelu = registry.get("PreluBackward")
    assert prelu.source.kind == "builtin" and prelu.names[0] == "gradOut"
    assert not prelu.shipped and not prelu.has_reference
    assert [(d.source.kind, d.signature.params[0].name) for d in prelu.conflicts] == [("pyaclnn", "gradOutput")]
    assert list(registry.conflicts()) == ["PreluBackward"]
