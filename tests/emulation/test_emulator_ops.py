"""The emulator's operators beyond the four seed ops (issue 11) and its custom operator package.

Driven straight through cffi on the emulator libraries (pyaclnn does not know these ops): the
prototypes are read from the real-style headers the emulated toolkit installs, results are
compared with PyTorch CPU, statuses with the real op_api sources (hicann/ops-math aclnn_add.cpp,
aclnn_cat.cpp; generated aclnn for AmpUpdateScale and AddCustom).
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from emulator.build import (SOC_DIR, aclnnop_dir, build_custom_opp, build_toolkit,  # noqa: E402
                            library_paths)
from test_emulator import (INVALID, NULLPTR, OK, TILING, Acl, Dev, defined_symbols, needed,  # noqa: E402
                           readelf_dynamic, run_script)

ACL = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.int8): 2, np.dtype(np.int32): 3,
       np.dtype(np.uint8): 4, np.dtype(np.int16): 6, np.dtype(np.int64): 9, np.dtype(np.float64): 11,
       np.dtype(np.bool_): 12}
ACL_BF16, ACL_COMPLEX64, ACL_UINT16 = 27, 16, 7
SEED_HEADERS = {"aclnn_mse_loss_backward.h", "aclnn_group_norm_backward.h", "aclnn_cross_entropy_loss_grad.h",
                "aclnn_prelu_backward.h"}
MATH_HEADERS = {"aclnn_add.h", "aclnn_cat.h", "aclnn_reduce_sum.h", "aclnn_amp_update_scale.h"}   # ops-math
NN_HEADERS = {"aclnn_foreach_mul_scalar_list.h"}                                                # ops-nn
NEW_HEADERS = MATH_HEADERS | NN_HEADERS
GENERATED = {"aclnn_cross_entropy_loss_grad.h", "aclnn_amp_update_scale.h", "aclnn_foreach_mul_scalar_list.h"}


def prototypes(path: Path) -> str:
    """The function declarations of a real-style header, as cffi can read them."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#")
                     and ln.strip() not in ('extern "C" {', "}"))
    return text.replace("ACLNN_API", "").replace('__attribute__((visibility("default")))', "")


def declared(path: Path) -> list[str]:
    return re.findall(r"\b(aclnn\w+)\s*\(", prototypes(path))


# ------------------------------------------------------------------------------------------------
# fixtures: the suite's 8.x toolkit in this process, with the new prototypes cdef'd
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def acl11(request, tmp_path_factory) -> Iterator[Acl]:
    try:
        home = Path(request.getfixturevalue("emulator_home"))
    except pytest.FixtureLookupError:
        home = build_toolkit(tmp_path_factory.mktemp("emu-cann11"), "8.x")
    acl = Acl(home)
    acl.ffi.cdef("\n".join(prototypes(aclnnop_dir(home) / h) for h in sorted(NEW_HEADERS)))
    acl.ffi.cdef("aclnnStatus aclnnAddCustomGetWorkspaceSize(const aclTensor *x, const aclTensor *y, "
                 "const aclTensor *z, uint64_t *workspaceSize, aclOpExecutor **executor);"
                 "aclnnStatus aclnnAddCustom(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
                 "const aclrtStream stream);")
    acl.op = acl.ffi.dlopen(str(library_paths(home)[-1]), acl.ffi.RTLD_NOW)   # sees the new cdefs
    yield acl
    acl.close()


class Dev11(Dev):
    def put(self, arr, dtype=None):
        arr = np.asarray(arr, dtype=dtype)
        ptr = self.upload(arr)
        return self.tensor(ptr, arr.shape, ACL[arr.dtype]), ptr

    def empty(self, shape, dtype=np.float32, acl_dtype=None):
        n = max(1, int(np.prod(shape)))
        ptr = self.malloc(n * np.dtype(dtype).itemsize)
        return self.tensor(ptr, shape, ACL[np.dtype(dtype)] if acl_dtype is None else acl_dtype), ptr

    def get(self, ptr, shape, dtype=np.float32):
        assert self.rt.aclrtSynchronizeStream(self.acl.stream) == OK
        return self.download(ptr, int(np.prod(shape)), dtype).reshape(shape)

    def get_raw(self, tensor):
        raw = self.ffi.new("void **")
        assert self.nn.aclGetRawTensorAddr(tensor, raw) == OK
        return raw[0]

    def scalar(self, value, dtype):
        arr = np.array([value], dtype=dtype)
        s = self.nn.aclCreateScalar(self.ffi.from_buffer(arr), ACL[arr.dtype])
        assert s != self.ffi.NULL
        self.scalars.append(s)
        return s

    def tensor_list(self, tensors):
        """A tensor list, which from now on owns `tensors` (aclDestroyTensorList destroys them)."""
        arr = self.ffi.new("aclTensor *[]", tensors)
        lst = self.nn.aclCreateTensorList(arr, len(tensors))
        assert lst != self.ffi.NULL
        self.lists.append(lst)
        self.tensors = [x for x in self.tensors if x not in tensors]
        return lst

    def close(self):
        for s in self.scalars:
            self.nn.aclDestroyScalar(s)
        for lst in self.lists:
            self.nn.aclDestroyTensorList(lst)
        for a in self.int_arrays:
            self.nn.aclDestroyIntArray(a)
        for sl in self.scalar_lists:
            self.nn.aclDestroyScalarList(sl)
        super().close()


@pytest.fixture
def dev(acl11, monkeypatch):
    monkeypatch.setenv("ASCEND_OPP_PATH", str(acl11.home / "opp"))
    for var in ("EMU_DEVICE_COUNT", "EMU_SOC_NAME", "EMU_REQUIRE_OPP_PATH"):
        monkeypatch.delenv(var, raising=False)
    acl11.emu.set_device_count(None)
    acl11.emu.reset_faults()
    acl11.ensure()
    acl11.emu.reset_counters()
    acl11.errmsg()
    kinds = ("tensor", "executor", "device_alloc", "scalar", "tensor_list", "int_array", "scalar_list")
    base = {k: acl11.emu.live(k) for k in kinds}
    d = Dev11(acl11)
    d.scalars, d.lists, d.int_arrays, d.scalar_lists = [], [], [], []
    yield d
    acl11.emu.reset_faults()
    d.close()
    assert acl11.emu.misuse() == d.expected_misuse, acl11.emu.last_misuse()
    assert {k: acl11.emu.live(k) for k in kinds} == base


def run2(dev, op, *args):
    """Both phases; returns the first non-zero status."""
    status, ws, ex = dev.phase1(op, *args)
    if status:
        return status
    return getattr(dev.op, f"aclnn{op}")(dev.malloc(ws) if ws else dev.ffi.NULL, ws, ex, dev.acl.stream)


# ------------------------------------------------------------------------------------------------
# headers, libraries, op definitions in both layouts
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def home9(tmp_path_factory):
    return build_toolkit(tmp_path_factory.mktemp("emu-cann11-9"), "9.x")


def test_operator_headers_in_both_layouts(acl11, home9):
    home8 = acl11.home
    real8 = home8 / "opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop"
    assert aclnnop_dir(home8) == real8 and real8.is_dir() and not real8.is_symlink()
    assert (home8 / "include/aclnnop").is_symlink() and (home8 / "include/aclnnop").resolve() == real8.resolve()
    assert aclnnop_dir(home9) == home9 / "include/aclnnop" and not aclnnop_dir(home9).is_symlink()
    for home in (home8, home9):
        folder = home / "include/aclnnop"
        names = {p.name for p in folder.glob("aclnn_*.h")}
        assert names == SEED_HEADERS | NEW_HEADERS | {"aclnn_util.h"}
        for name in SEED_HEADERS | NEW_HEADERS:
            text = (folder / name).read_text()
            assert re.search(r"#ifndef (\w+)\s*\n#define \1", text), name           # include guard
            assert '#ifdef __cplusplus\nextern "C" {' in text, name
            if name in GENERATED:           # generated style: every tensor const, visibility attribute
                assert '#include "aclnn/acl_meta.h"' in text
                assert text.count('__attribute__((visibility("default")))') == 2
                assert "aclTensor *" not in text.replace("const aclTensor *", "")
            else:
                assert '#include "aclnn/aclnn_base.h"' in text and '#include "aclnn_util.h"' in text
                assert text.count("ACLNN_API aclnnStatus") == len(declared(folder / name))
        assert {f for h in folder.glob("aclnn_*.h") for f in declared(h)} >= {
            "aclnnAddGetWorkspaceSize", "aclnnAdd", "aclnnInplaceAddGetWorkspaceSize", "aclnnInplaceAdd",
            "aclnnCatGetWorkspaceSize", "aclnnCat", "aclnnAmpUpdateScaleGetWorkspaceSize", "aclnnAmpUpdateScale",
            "aclnnReduceSumGetWorkspaceSize", "aclnnReduceSum", "aclnnForeachMulScalarListGetWorkspaceSize",
            "aclnnForeachMulScalarList"}
        # the installed tree compiles on its own (include/acl, include/aclnn come with it)
        src = "".join(f'#include "aclnnop/{h}"\n' for h in sorted(SEED_HEADERS | NEW_HEADERS))
        proc = subprocess.run(["cc", "-fsyntax-only", "-Wall", "-Werror", "-x", "c", "-", f"-I{home / 'include'}"],
                              input=src, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_operator_symbols_per_layout(acl11, home9):
    lib8 = acl11.home / "lib64"
    for folder, libs, not_in in ((aclnnop_dir(acl11.home), [lib8 / "libopapi.so"], []),
                                 (aclnnop_dir(home9), [home9 / "lib64/libopapi_math.so", home9 / "lib64/libopapi_nn.so"], [])):
        have = set().union(*(defined_symbols(p) for p in libs))
        for h in folder.glob("aclnn_*.h"):
            assert set(declared(h)) <= have, h.name
    math_syms, nn_syms = defined_symbols(home9 / "lib64/libopapi_math.so"), defined_symbols(home9 / "lib64/libopapi_nn.so")
    for h in MATH_HEADERS:                          # ops-math ops in libopapi_math.so only
        for f in declared(aclnnop_dir(home9) / h):
            assert f in math_syms and f not in nn_syms, f
    for h in SEED_HEADERS | NN_HEADERS:             # ops-nn ops (the four seeds too) in libopapi_nn.so
        for f in declared(aclnnop_dir(home9) / h):
            assert f in nn_syms and f not in math_syms, f
    assert needed(home9 / "lib64/libopapi_math.so") == ["libnnopbase.so", "libacl_rt.so"]


def test_op_info_json(acl11, home9):
    for home in (acl11.home, home9):
        path = home / f"opp/built-in/op_impl/ai_core/tbe/config/{SOC_DIR}/aic-{SOC_DIR}-ops-info.json"
        info = json.loads(path.read_text())
        assert set(info) == {"Add", "ConcatD", "ReduceSum", "AmpUpdateScale", "ForeachMulScalarList", "CrossEntropyLossGrad"}
        fe = info["ForeachMulScalarList"]
        assert (fe["input0"]["paramType"], fe["input1"]["paramType"], fe["output0"]["paramType"]) == (
            "dynamic", "required", "dynamic")
        ce = info["CrossEntropyLossGrad"]
        assert [ce[f"input{i}"]["paramType"] for i in range(6)] == ["required"] * 3 + ["optional"] * 3
        assert ce["attr_reduction"]["defaultValue"] == "mean"
        amp = info["AmpUpdateScale"]
        assert [amp[f"input{i}"]["name"] for i in range(3)] == ["current_scale", "growth_tracker", "found_inf"]
        assert [amp[f"output{i}"]["name"] for i in range(2)] == ["updated_scale", "updated_growth_tracker"]
        assert amp["input0"]["paramType"] == "required" and info["ConcatD"]["input0"]["paramType"] == "dynamic"
        for entry in info.values():                  # one dtype column per combination, all aligned
            cols = {len(v["dtype"].split(",")) for k, v in entry.items() if k.startswith(("input", "output"))}
            assert len(cols) == 1 and {len(v["format"].split(",")) for k, v in entry.items()
                                       if k.startswith(("input", "output"))} == cols


# ------------------------------------------------------------------------------------------------
# aclnnAdd / aclnnInplaceAdd
# ------------------------------------------------------------------------------------------------
def t(a, dtype=None):
    return torch.from_numpy(np.array(a, dtype=dtype))


@pytest.mark.parametrize("dtype,alpha", [(np.float32, 1.0), (np.float32, 2.5), (np.float16, 1.0), (np.float16, -0.3),
                                         (np.int32, 3), (np.int64, -2), (np.int8, 5), (np.float64, 0.7)])
def test_add_against_torch(dev, dtype, alpha):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((2, 3, 4)) * 50).astype(dtype)
    b = (rng.standard_normal((3, 1)) * 50).astype(dtype)
    ta, pa = dev.put(a)
    tb, _ = dev.put(b)
    to, po = dev.empty((2, 3, 4), dtype)
    alpha_dt = {np.float64: np.float64, np.float32: np.float32, np.float16: np.float32}.get(dtype, np.int64)
    assert run2(dev, "Add", ta, tb, dev.scalar(alpha, alpha_dt), to) == OK
    got = dev.get(po, (2, 3, 4), dtype)
    want = torch.add(t(a), t(b), alpha=alpha).numpy()
    if dtype in (np.float32, np.float16) and alpha != 1:
        # Axpy: the golden of hicann/ops-math math/axpy/tests/assets/golden.py (float16 widened to
        # float32, float32 to float64; x1 + x2 * float32(alpha); rounded once). torch rounds
        # alpha * other to float16 first, so it is only close.
        wide = np.float32 if dtype == np.float16 else np.float64
        golden = (a.astype(wide) + b.astype(wide) * wide(np.float32(alpha))).astype(dtype)
        np.testing.assert_array_equal(got, golden)
        np.testing.assert_allclose(got, want, rtol=2e-3 if dtype == np.float16 else 1e-6)
    elif dtype == np.float64 and alpha != 1:        # not an Axpy dtype: Mul, then Add
        np.testing.assert_array_equal(got, a + b * alpha)
        np.testing.assert_allclose(got, want, rtol=1e-15)
    else:
        np.testing.assert_array_equal(got, want)


def test_add_nan_alpha_counts_as_one(dev):
    """aclnn_add.cpp IsEqualToOne is !(alpha > 1 || alpha < 1): a NaN alpha takes the plain Add."""
    ta, tb = dev.put(np.array([1, 2], np.float32))[0], dev.put(np.array([10, 20], np.float32))[0]
    to, po = dev.empty((2,))
    assert run2(dev, "Add", ta, tb, dev.scalar(np.nan, np.float32), to) == OK
    assert dev.get(po, (2,)).tolist() == [11, 22]


def test_add_int32_axpy_runs_in_float32(dev):
    """int32 with alpha != 1 is Axpy, whose golden (ops-math math/axpy/tests/assets/golden.py)
    computes in float32 and truncates: exact for small values, not beyond 2**24."""
    a = np.array([2**24 + 1, 7, -7, 100], np.int32)
    b = np.array([1, 2, 2, -3], np.int32)
    ta, tb = dev.put(a)[0], dev.put(b)[0]
    to, po = dev.empty((4,), np.int32)
    assert run2(dev, "Add", ta, tb, dev.scalar(2, np.int32), to) == OK
    got = dev.get(po, (4,), np.int32)
    golden = (a.astype(np.float32) + b.astype(np.float32) * np.float32(2)).astype(np.int32)
    np.testing.assert_array_equal(got, golden)
    assert got[0] == 2**24 + 2 and torch.add(t(a), t(b), alpha=2)[0] == 2**24 + 3    # float32 rounding
    assert got[1:].tolist() == torch.add(t(a), t(b), alpha=2)[1:].tolist()
    # alpha == 1 is a plain integer Add: exact
    assert run2(dev, "Add", ta, tb, dev.scalar(1, np.int32), to) == OK
    assert dev.get(po, (4,), np.int32)[0] == 2**24 + 2


def test_add_bfloat16_multiplies_then_adds(dev):
    """bf16 is not an Axpy dtype on 910B: other * alpha (alpha cast to bf16) is rounded, then added."""
    rng = np.random.default_rng(2)
    a = torch.from_numpy(rng.standard_normal(64).astype(np.float32)).to(torch.bfloat16)
    b = torch.from_numpy(rng.standard_normal(64).astype(np.float32)).to(torch.bfloat16)
    bits = lambda x: x.view(torch.int16).numpy().view(np.uint16)  # noqa: E731
    pa, pb = dev.upload(bits(a)), dev.upload(bits(b))
    ta, tb = dev.tensor(pa, (64,), ACL_BF16), dev.tensor(pb, (64,), ACL_BF16)
    to, po = dev.empty((64,), np.uint16, ACL_BF16)
    assert run2(dev, "Add", ta, tb, dev.scalar(0.3, np.float32), to) == OK
    got = dev.get(po, (64,), np.uint16)
    alpha = torch.tensor(0.3, dtype=torch.bfloat16)
    want = bits(a + (b * alpha))                                  # each op rounds to bf16
    assert (got == want).all()
    assert not (got == bits(torch.add(a.float(), b.float(), alpha=0.3).to(torch.bfloat16))).all()


def test_add_promotion_and_cast_to_out(dev):
    a = np.array([[1.5, -2.25]], np.float16)
    b = np.array([[1, 2], [3, 4]], np.int32)
    ta, _ = dev.put(a)
    tb, _ = dev.put(b)
    to, po = dev.empty((2, 2), np.float32)                        # promote float16, out float32
    assert run2(dev, "Add", ta, tb, dev.scalar(2, np.int64), to) == OK
    np.testing.assert_array_equal(dev.get(po, (2, 2)), torch.add(t(a), t(b), alpha=2).float().numpy())
    # mixed float16 + float32 -> float32
    c = np.array([[0.1, 0.2]], np.float32)
    tc, _ = dev.put(c)
    to, po = dev.empty((1, 2), np.float32)
    assert run2(dev, "Add", ta, tc, dev.scalar(1.0, np.float32), to) == OK
    np.testing.assert_array_equal(dev.get(po, (1, 2)), torch.add(t(a), t(c)).numpy())


def test_add_non_contiguous_output(dev):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    ta, _ = dev.put(a)
    tb, _ = dev.put(np.ones(3, np.float32))
    po = dev.upload(np.zeros(12, np.float32))
    to = dev.tensor(po, (2, 3), np.float32, strides=(1, 4), offset=1)   # a transposed, offset view
    assert run2(dev, "Add", ta, tb, dev.scalar(1.0, np.float32), to) == OK
    flat = dev.get(po, (12,))
    want = np.zeros(12, np.float32)
    want[1 + np.arange(2)[:, None] + 4 * np.arange(3)[None, :]] = a + 1
    np.testing.assert_array_equal(flat, want)


def test_add_statuses(dev):
    """aclnn_add.cpp CheckParams: nulls (self, other, alpha, out) 161001 -> dtypes -> promotion,
    alpha and out castability -> shapes, all 161002."""
    f32 = lambda shape=(2, 2): dev.empty(shape)[0]  # noqa: E731
    x, y, o = f32(), f32(), f32()
    one = dev.scalar(1.0, np.float32)
    N = dev.ffi.NULL
    assert dev.phase1("Add", N, N, N, N)[0] == NULLPTR
    assert "self is nullptr" in dev.acl.errmsg()
    assert dev.phase1("Add", x, y, N, o)[0] == NULLPTR and "alpha" in dev.acl.errmsg()
    assert dev.phase1("Add", x, y, one, N)[0] == NULLPTR
    u16 = dev.empty((2, 2), np.uint16, ACL_UINT16)[0]
    assert dev.phase1("Add", u16, y, one, o)[0] == INVALID                      # not in the support list
    i32 = dev.empty((2, 2), np.int32)[0]
    assert dev.phase1("Add", i32, i32, dev.scalar(1.5, np.float32), i32)[0] == INVALID   # float alpha, int promote
    assert "alpha dtype" in dev.acl.errmsg()
    assert dev.phase1("Add", x, y, one, i32)[0] == INVALID                      # float result into int32 out
    assert dev.phase1("Add", x, f32((3,)), one, o)[0] == INVALID               # no broadcast
    assert dev.phase1("Add", x, f32((2,)), one, f32((2, 2, 1)))[0] == INVALID  # out shape
    assert dev.phase1("Add", f32((1, 1, 1, 1, 1, 1, 1, 1, 1)), y, one, o)[0] == INVALID   # rank 9
    assert dev.emu.live("executor") == 0
    # empty inputs: success, workspace 0, nothing written
    e, pe = dev.empty((0, 2))
    assert run2(dev, "Add", e, f32((2,)), one, dev.empty((0, 2))[0]) == OK


def test_inplace_add(dev):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    ta, pa = dev.put(a)
    tb, _ = dev.put(np.array([10, 20, 30], np.float32))
    assert run2(dev, "InplaceAdd", ta, tb, dev.scalar(0.5, np.float32)) == OK
    np.testing.assert_array_equal(dev.get(pa, (2, 3)), a + 0.5 * np.array([10, 20, 30], np.float32))
    # CheckInplace: selfRef must already have the broadcast shape
    tc, _ = dev.put(np.ones((4, 2, 3), np.float32))
    assert dev.phase1("InplaceAdd", ta, tc, dev.scalar(1.0, np.float32))[0] == INVALID
    assert "selfRef" in dev.acl.errmsg()
    assert dev.phase1("InplaceAdd", dev.ffi.NULL, tb, dev.scalar(1.0, np.float32))[0] == NULLPTR
    assert dev.phase1("InplaceAdd", ta, tb, dev.ffi.NULL)[0] == NULLPTR           # alpha, checked by Add


def test_add_runs_through_the_common_phase_two(dev):
    """Repeatable executors, aclSetInputTensorAddr (input 1 = other), faults, call counters."""
    ta, _ = dev.put(np.array([1, 2], np.float32))
    tb, _ = dev.put(np.array([10, 20], np.float32))
    to, po = dev.empty((2,))
    status, ws, ex = dev.phase1("Add", ta, tb, dev.scalar(1.0, np.float32), to)
    assert (status, ws) == (OK, 0)
    assert dev.nn.aclSetAclOpExecutorRepeatable(ex) == OK
    assert dev.op.aclnnAdd(dev.ffi.NULL, 0, ex, dev.acl.stream) == OK
    assert dev.get(po, (2,)).tolist() == [11, 22]
    pb2 = dev.upload(np.array([100, 200], np.float32))
    assert dev.nn.aclSetInputTensorAddr(ex, 1, tb, pb2) == OK
    assert dev.op.aclnnAdd(dev.ffi.NULL, 0, ex, dev.acl.stream) == OK
    assert dev.get(po, (2,)).tolist() == [101, 202]
    dev.emu.fail("aclnnAdd", 507015)
    assert dev.op.aclnnAdd(dev.ffi.NULL, 0, ex, dev.acl.stream) == 507015
    assert dev.nn.aclDestroyAclOpExecutor(ex) == OK
    assert dev.emu.calls("aclnnAdd") == 3 and dev.emu.calls("aclnnAddGetWorkspaceSize") == 1


# ------------------------------------------------------------------------------------------------
# aclnnCat
# ------------------------------------------------------------------------------------------------
def test_cat_against_torch(dev):
    rng = np.random.default_rng(3)
    parts = [rng.standard_normal((2, k, 3)).astype(np.float32) for k in (1, 4, 2)]
    ts = [dev.put(p)[0] for p in parts]
    lst = dev.tensor_list(ts)
    to, po = dev.empty((2, 7, 3))
    assert run2(dev, "Cat", lst, -2, to) == OK
    np.testing.assert_array_equal(dev.get(po, (2, 7, 3)), torch.cat([t(p) for p in parts], dim=-2).numpy())


def test_cat_promotes_and_skips_legacy_empty(dev):
    a = np.array([[1, 2]], np.int32)
    b = np.array([[0.5, 1.5]], np.float16)
    ta, tb = dev.put(a)[0], dev.put(b)[0]
    te = dev.empty((0,))[0]                                      # a 1-D (0,) tensor is dropped
    lst = dev.tensor_list([ta, te, tb])
    to, po = dev.empty((2, 2), np.float32)
    assert run2(dev, "Cat", lst, 0, to) == OK
    np.testing.assert_array_equal(dev.get(po, (2, 2)), torch.cat([t(a), t(b)]).float().numpy())


def test_cat_statuses(dev):
    N = dev.ffi.NULL

    def lst(*shapes, dtype=np.float32):
        return dev.tensor_list([dev.empty(s, dtype)[0] for s in shapes])

    out = dev.empty((4, 3))[0]
    assert dev.phase1("Cat", N, 0, out)[0] == NULLPTR
    assert dev.phase1("Cat", lst((2, 3), (2, 3)), 0, N)[0] == NULLPTR
    assert dev.phase1("Cat", lst((2, 3), (2, 3)), 2, out)[0] == INVALID            # dim out of range
    assert "exceed the dim range" in dev.acl.errmsg()
    assert dev.phase1("Cat", lst((2, 3), (2, 3)), -3, out)[0] == INVALID
    assert dev.phase1("Cat", lst((2, 3), (2, 4)), 0, out)[0] == INVALID            # size off dim
    assert dev.phase1("Cat", lst((2, 3), (2, 3, 1)), 0, out)[0] == INVALID         # rank
    assert dev.phase1("Cat", lst((2, 3), (3, 3)), 0, out)[0] == INVALID            # out shape
    assert dev.phase1("Cat", lst((2, 3), (2, 3)), 0, dev.empty((4, 3), np.int32)[0])[0] == INVALID  # float -> int
    # only (0,) tensors: success at once, *workspaceSize untouched, out not even looked at
    status, ws, ex = dev.phase1("Cat", lst((0,), (0,)), 0, N)
    assert (status, ws) == (OK, 12345) and ex != N
    assert dev.op.aclnnCat(N, 0, ex, dev.acl.stream) == OK


def test_cat_emulator_limit_of_seven_tensors(dev):
    parts = [np.full((1, 2), i, np.float32) for i in range(8)]
    to, po = dev.empty((7, 2))
    assert run2(dev, "Cat", dev.tensor_list([dev.put(p)[0] for p in parts[:7]]), 0, to) == OK
    assert dev.get(po, (7, 2))[:, 0].tolist() == list(range(7))
    assert dev.phase1("Cat", dev.tensor_list([dev.put(p)[0] for p in parts]), 0, dev.empty((8, 2))[0])[0] == TILING
    assert "emulator limit" in dev.acl.errmsg()


def test_cat_repeatable_with_dynamic_input_addresses(dev):
    """aclSetDynamicInputTensorAddr sets the list element's address (acl_op_api.cpp); the
    composite executor reads it at phase 2."""
    a, b = np.array([1, 2], np.float32), np.array([3, 4], np.float32)
    ta, tb = dev.put(a)[0], dev.put(b)[0]
    lst = dev.tensor_list([ta, tb])
    to, po = dev.empty((4,))
    status, ws, ex = dev.phase1("Cat", lst, 0, to)
    assert status == OK and dev.nn.aclSetAclOpExecutorRepeatable(ex) == OK
    assert dev.op.aclnnCat(dev.ffi.NULL, 0, ex, dev.acl.stream) == OK
    assert dev.get(po, (4,)).tolist() == [1, 2, 3, 4]
    pb2 = dev.upload(np.array([30, 40], np.float32))
    assert dev.nn.aclSetDynamicInputTensorAddr(ex, 0, 1, lst, pb2) == OK
    assert dev.op.aclnnCat(dev.ffi.NULL, 0, ex, dev.acl.stream) == OK
    assert dev.get(po, (4,)).tolist() == [1, 2, 30, 40]
    raw = dev.ffi.new("void **")
    assert dev.nn.aclGetRawTensorAddr(tb, raw) == OK and raw[0] == pb2      # the tensor itself moved
    assert dev.nn.aclSetDynamicInputTensorAddr(ex, 0, 2, lst, pb2) == INVALID           # relativeIndex
    assert dev.nn.aclSetDynamicInputTensorAddr(ex, 0, 0, dev.ffi.NULL, pb2) == 561103
    assert dev.nn.aclSetDynamicTensorAddr(dev.ffi.NULL, 0, 0, lst, dev.get_raw(ta)) == 561103
    assert dev.nn.aclDestroyAclOpExecutor(ex) == OK


# ------------------------------------------------------------------------------------------------
# aclnnReduceSum (aclIntArray, bool, aclDataType parameters)
# ------------------------------------------------------------------------------------------------
def int_array(dev, values):
    a = dev.nn.aclCreateIntArray(dev.ffi.new("int64_t[]", list(values) or [0]), len(values))
    assert a != dev.ffi.NULL
    dev.int_arrays.append(a)
    return a


@pytest.mark.parametrize("src,dims,keep,dtype", [
    (np.float32, [0, -1], False, np.float32), (np.float32, [1], True, np.float32), (np.float32, [], False, np.float32),
    (np.float16, [2], False, np.float32), (np.int32, [0, 1], True, np.int64), (np.bool_, [1], False, np.int64),
    (np.int8, [2], False, np.int8), (np.float32, [0], False, np.int32)])
def test_reduce_sum_against_torch(dev, src, dims, keep, dtype):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 4, 5)) * 40).astype(src)
    tx = dev.put(x)[0]
    tdt = torch.from_numpy(np.zeros(0, dtype)).dtype
    # self is cast to dtype first (floats to integers truncate), then summed over dims (all when empty)
    want = t(x).to(tdt).sum(dim=tuple(dims) or (0, 1, 2), keepdim=keep, dtype=tdt)
    to, po = dev.empty(tuple(want.shape), dtype)
    assert run2(dev, "ReduceSum", tx, int_array(dev, dims), keep, ACL[np.dtype(dtype)], to) == OK
    got = dev.get(po, tuple(want.shape), dtype)
    if np.dtype(dtype).kind == "f":       # float sums: accumulated in double, rounded once
        exact = np.sum(x.astype(np.float64), axis=tuple(dims) or None, keepdims=keep).astype(dtype)
        np.testing.assert_array_equal(got, exact)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5)
    else:
        np.testing.assert_array_equal(got, want.numpy())


def test_reduce_sum_bool_dtype_is_any_and_statuses(dev):
    x = np.array([[0, 0, 3], [0, 0, 0]], np.int32)
    tx = dev.put(x)[0]
    tb, pb = dev.empty((2,), np.bool_)
    assert run2(dev, "ReduceSum", tx, int_array(dev, [1]), False, ACL[np.dtype(np.bool_)], tb) == OK
    assert dev.get(pb, (2,), np.bool_).tolist() == [True, False]
    N, f32 = dev.ffi.NULL, ACL[np.dtype(np.float32)]
    to = dev.empty((2,))[0]
    assert dev.phase1("ReduceSum", tx, N, False, f32, to)[0] == NULLPTR
    assert "dims is nullptr" in dev.acl.errmsg()
    assert dev.phase1("ReduceSum", tx, int_array(dev, [1]), False, ACL[np.dtype(np.int64)], to)[0] == INVALID   # out != dtype
    assert dev.phase1("ReduceSum", tx, int_array(dev, [2]), False, f32, to)[0] == INVALID      # dim range
    assert dev.phase1("ReduceSum", tx, int_array(dev, [1, -1]), False, f32, to)[0] == INVALID  # repeated
    assert "appears multiple times" in dev.acl.errmsg()
    assert dev.phase1("ReduceSum", tx, int_array(dev, [1]), True, f32, to)[0] == INVALID       # out shape (2, 1)
    # CheckShapeAndScalarSame (ops-math aclnn_check.h): a one-element result may land in any
    # one-element out; other shapes must match exactly
    for shape in ((1,), (1, 1)):
        t1, p1 = dev.empty(shape)
        assert run2(dev, "ReduceSum", tx, int_array(dev, []), False, f32, t1) == OK
        assert dev.get(p1, shape).ravel().tolist() == [3.0]
    assert dev.phase1("ReduceSum", tx, int_array(dev, []), False, f32, dev.empty((2,))[0])[0] == INVALID
    # an empty self fills out with 0, whatever out's shape
    te = dev.empty((0, 3))[0]
    to3, po3 = dev.put(np.full(3, 7, np.float32))
    assert run2(dev, "ReduceSum", te, int_array(dev, [1]), False, f32, to3) == OK
    assert dev.get(po3, (3,)).tolist() == [0, 0, 0]


# ------------------------------------------------------------------------------------------------
# aclnnForeachMulScalarList (generated; tensor-list input and output, aclScalarList)
# ------------------------------------------------------------------------------------------------
def scalar_list(dev, values, dtype):
    dtypes = dtype if isinstance(dtype, list) else [dtype] * len(values)
    arr = dev.ffi.new("aclScalar *[]", [dev.nn.aclCreateScalar(dev.ffi.from_buffer(np.array([v], dt)), ACL[np.dtype(dt)])
                                        for v, dt in zip(values, dtypes)])
    lst = dev.nn.aclCreateScalarList(arr, len(values))
    assert lst != dev.ffi.NULL
    dev.scalar_lists.append(lst)                    # destroys its scalars too
    return lst


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_foreach_mul_scalar_list_against_torch(dev, dtype):
    """torch._foreach_mul on float32 tensors (int32 with int64 scalars) as the golden
    (ops-nn foreach_mul_scalar_list/tests/assets/golden.py) does; float16 as the A2/A3 kernel computes
    it, natively in half with the scalar rounded to half (foreach_one_scalar_list_binary.h
    ProcessPlusInLoop): torch's float16 product of the half-rounded scalars (exact, then one rounding)."""
    rng = np.random.default_rng(6)
    xs = [(rng.standard_normal(s) * (300 if dtype == np.float16 else 30)).astype(dtype) for s in ((2, 3), (5,), (1, 2, 2))]
    sdt = np.int64 if dtype == np.int32 else np.float32
    svals = [3, -2, 7] if dtype == np.int32 else [1.0003, -1.5, 0.3]  # half(1.0003) is 1: x*1.0003 rounds elsewhere
    outs = [dev.empty(x.shape, dtype) for x in xs]
    xl = dev.tensor_list([dev.put(x)[0] for x in xs])
    ol = dev.tensor_list([o for o, _ in outs])
    assert run2(dev, "ForeachMulScalarList", xl, scalar_list(dev, svals, sdt), ol) == OK
    wide = [torch.from_numpy(x.astype(np.float32) if dtype == np.float16 else x) for x in xs]
    scal = [torch.scalar_tensor(float(np.float16(v)) if dtype == np.float16 else v,
                                dtype=torch.int64 if sdt == np.int64 else torch.float32) for v in svals]
    for (_, p), x, w in zip(outs, xs, torch._foreach_mul(tuple(wide), scal)):
        np.testing.assert_array_equal(dev.get(p, x.shape, dtype), w.numpy().astype(dtype))


def test_foreach_mul_scalar_list_statuses_and_dynamic_addresses(dev):
    N = dev.ffi.NULL
    f32 = lambda *s: dev.empty(s)[0]  # noqa: E731
    x1, x2 = dev.put(np.array([1, 2], np.float32)), dev.put(np.array([3, 4, 5], np.float32))
    o1, o2 = dev.empty((2,)), dev.empty((3,))
    xl, ol = dev.tensor_list([x1[0], x2[0]]), dev.tensor_list([o1[0], o2[0]])
    sl = scalar_list(dev, [2.0, 10.0], np.float32)
    assert dev.phase1("ForeachMulScalarList", N, sl, ol)[0] == NULLPTR
    assert dev.phase1("ForeachMulScalarList", xl, N, ol)[0] == NULLPTR
    assert dev.phase1("ForeachMulScalarList", xl, scalar_list(dev, [2, 3], np.int64), ol)[0] == INVALID   # not a def row
    assert dev.phase1("ForeachMulScalarList", xl, sl, dev.tensor_list([dev.empty((2,), np.float16)[0]]))[0] == INVALID
    assert dev.phase1("ForeachMulScalarList", xl, sl, dev.tensor_list([f32(2)]))[0] == TILING          # lengths
    assert dev.phase1("ForeachMulScalarList", xl, sl, dev.tensor_list([f32(2), f32(2)]))[0] == TILING  # out smaller
    assert dev.phase1("ForeachMulScalarList", dev.tensor_list([f32(2), dev.empty((2,), np.float16)[0]]), sl,
                      dev.tensor_list([f32(2), f32(2)]))[0] == TILING                                  # mixed dtypes
    # nnopbase (hicann/opbase): DOUBLE scalars are stored as float (NnopbaseExecutorAddScalarListInput);
    # every out tensor empty -> no tiling (NnopbaseExecutorMatchCache); the A2/A3 tiling does not
    # look at out tensors beyond len(x) (foreach_tiling_class.h CheckOutputShapeAndDtype)
    for args, want in [((xl, scalar_list(dev, [2.0, 10.0], np.float64), ol), (OK, 0)),
                       ((xl, scalar_list(dev, [2.0], np.float32), dev.tensor_list([dev.empty((0,))[0]])), (OK, 0)),
                       ((xl, sl, dev.tensor_list([f32(2), f32(3), f32(1)])), (OK, 0))]:
        status, ws, ex = dev.phase1("ForeachMulScalarList", *args)
        assert (status, ws) == want and dev.nn.aclDestroyAclOpExecutor(ex) == OK
    assert dev.phase1("ForeachMulScalarList", xl, scalar_list(dev, [2, 3.0], [np.int64, np.float64]), ol)[0] == INVALID
    # a repeatable generated executor: the dynamic address calls update its tensor-list slots
    status, ws, ex = dev.phase1("ForeachMulScalarList", xl, sl, ol)
    assert (status, ws) == (OK, 0) and dev.nn.aclSetAclOpExecutorRepeatable(ex) == OK
    assert dev.op.aclnnForeachMulScalarList(N, 0, ex, dev.acl.stream) == OK
    assert dev.get(o2[1], (3,)).tolist() == [30, 40, 50]
    px2 = dev.upload(np.array([-1, -2, -3], np.float32))
    po2 = dev.malloc(12)
    assert dev.nn.aclSetDynamicInputTensorAddr(ex, 0, 1, xl, px2) == OK
    assert dev.nn.aclSetDynamicOutputTensorAddr(ex, 0, 1, ol, po2) == OK
    assert dev.op.aclnnForeachMulScalarList(N, 0, ex, dev.acl.stream) == OK
    assert dev.get(po2, (3,)).tolist() == [-10, -20, -30] and dev.get(o2[1], (3,)).tolist() == [30, 40, 50]
    assert dev.nn.aclSetDynamicTensorAddr(ex, 2, 1, ol, o2[1]) == OK        # inputs x, scalars; output 0 is IR 2
    assert dev.op.aclnnForeachMulScalarList(N, 0, ex, dev.acl.stream) == OK
    assert dev.get(o2[1], (3,)).tolist() == [-10, -20, -30]
    assert dev.nn.aclSetDynamicInputTensorAddr(ex, 1, 0, xl, px2) == INVALID    # IR input 1 (scalars) is no list
    assert dev.nn.aclSetDynamicInputTensorAddr(ex, 0, 2, xl, px2) == INVALID    # beyond the list
    assert dev.nn.aclDestroyAclOpExecutor(ex) == OK


# ------------------------------------------------------------------------------------------------
# aclnnAmpUpdateScale (generated aclnn)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scale,tracker,found,interval", [
    (1024.0, 0, 0.0, 3), (1024.0, 2, 0.0, 3), (1024.0, 2, 1.0, 3), (3e38, 4, 0.0, 5), (8.0, 1, float("nan"), 2)])
def test_amp_update_scale_against_torch(dev, scale, tracker, found, interval):
    s, ps = dev.put(np.array([scale], np.float32))
    g, pg = dev.put(np.array([tracker], np.int32))
    f, _ = dev.put(np.array([found], np.float32))
    os_, pos = dev.empty((1,))
    og, pog = dev.empty((1,), np.int32)
    assert run2(dev, "AmpUpdateScale", s, g, f, 2.0, 0.5, interval, os_, og) == OK
    ws, wg = torch.tensor([scale]), torch.tensor([tracker], dtype=torch.int32)
    torch._amp_update_scale_(ws, wg, torch.tensor([found]), 2.0, 0.5, interval)
    assert dev.get(pos, (1,)).tolist() == ws.tolist() and dev.get(pog, (1,), np.int32).tolist() == wg.tolist()
    # outputs may alias the inputs (torch_npu passes the same tensors)
    assert run2(dev, "AmpUpdateScale", s, g, f, 2.0, 0.5, interval, s, g) == OK
    assert dev.get(ps, (1,)).tolist() == ws.tolist() and dev.get(pg, (1,), np.int32).tolist() == wg.tolist()


def test_amp_update_scale_statuses(dev):
    s, g, f = dev.empty((1,))[0], dev.empty((1,), np.int32)[0], dev.empty((1,))[0]
    h = dev.empty((1,), np.float16)[0]
    N = dev.ffi.NULL
    assert dev.phase1("AmpUpdateScale", s, g, f, 2.0, 0.5, 2, s, N)[0] == NULLPTR
    assert "updatedGrowthTracker is nullptr" in dev.acl.errmsg()
    assert dev.phase1("AmpUpdateScale", s, g, h, 2.0, 0.5, 2, s, g)[0] == INVALID        # not a def row
    assert dev.phase1("AmpUpdateScale", s, s, f, 2.0, 0.5, 2, s, g)[0] == INVALID
    assert dev.phase1("AmpUpdateScale", dev.empty((0,))[0], g, f, 2.0, 0.5, 2, s, g)[0] == TILING
    # the tiling (amp_update_scale_tiling.cpp AmpUpdateScaleTiling::Init): growthInterval in
    # [1, INT32_MAX], each input the scalar [1] (rank 0 counts as [1])
    for interval in (0, -3, 2**31):
        assert dev.phase1("AmpUpdateScale", s, g, f, 2.0, 0.5, interval, s, g)[0] == TILING
    assert "growthInterval" in dev.acl.errmsg()
    for shape in ((2,), (1, 1)):
        assert dev.phase1("AmpUpdateScale", s, g, dev.empty(shape)[0], 2.0, 0.5, 2, s, g)[0] == TILING
    status, _, ex = dev.phase1("AmpUpdateScale", s, g, dev.empty(())[0], 2.0, 0.5, 2**31 - 1, s, g)
    assert status == OK and dev.nn.aclDestroyAclOpExecutor(ex) == OK
    # a generated executor has no tensor-list parameter: the dynamic address calls answer 161002
    status, _, ex = dev.phase1("AmpUpdateScale", s, g, f, 2.0, 0.5, 2, s, g)
    lst = dev.tensor_list([dev.empty((1,))[0]])
    assert status == OK and dev.nn.aclSetDynamicInputTensorAddr(ex, 0, 0, lst, dev.get_raw(s)) == INVALID
    assert dev.nn.aclDestroyAclOpExecutor(ex) == OK


# ------------------------------------------------------------------------------------------------
# the custom operator package
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def custom_opp(tmp_path_factory):
    return build_custom_opp(tmp_path_factory.mktemp("opp"))


def test_custom_package_layout(custom_opp):
    vdir = custom_opp
    assert vdir.name == "customize" and vdir.parent.name == "vendors"
    assert (vdir.parent / "config.ini").read_text() == "load_priority=customize\n"
    header = vdir / "op_api/include/aclnn_add_custom.h"
    assert declared(header) == ["aclnnAddCustomGetWorkspaceSize", "aclnnAddCustom"]
    assert "const aclTensor *z," in header.read_text()
    lib = vdir / "op_api/lib/libcust_opapi.so"
    assert needed(lib) == ["libnnopbase.so", "libascendcl.so"]           # as the custom-op CMake links it
    dyn = readelf_dynamic(lib)
    assert "RPATH" not in dyn and "RUNPATH" not in dyn and "Library soname: [libcust_opapi.so]" in dyn
    assert {"aclnnAddCustomGetWorkspaceSize", "aclnnAddCustom"} <= defined_symbols(lib)
    info = json.loads((vdir / f"op_impl/ai_core/tbe/config/{SOC_DIR}/aic-{SOC_DIR}-ops-info.json").read_text())
    assert [info["AddCustom"][k]["name"] for k in ("input0", "input1", "output0")] == ["x", "y", "z"]
    assert str(vdir) in (vdir / "bin/set_env.bash").read_text()
    # a second vendor goes first in load_priority
    build_custom_opp(vdir.parent.parent, "second")
    assert (vdir.parent / "config.ini").read_text() == "load_priority=second,customize\n"


def test_custom_package_in_the_default_place(tmp_path):
    """root = <home>/opp: the installer's default place, opp/vendors/<vendor> + opp/vendors/config.ini."""
    home = tmp_path / "home"
    (home / "opp").mkdir(parents=True)
    vdir = build_custom_opp(home / "opp", "acme")
    assert vdir == home / "opp/vendors/acme" and (vdir / "op_api/lib/libcust_opapi.so").is_file()
    assert (home / "opp/vendors/config.ini").read_text() == "load_priority=acme\n"


def test_custom_op_runs_in_process(dev, custom_opp):
    cust = dev.ffi.dlopen(str(custom_opp / "op_api/lib/libcust_opapi.so"), dev.ffi.RTLD_NOW)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, 16)).astype(np.float16)
    y = rng.standard_normal((8, 16)).astype(np.float16)
    tx, ty = dev.put(x)[0], dev.put(y)[0]
    tz, pz = dev.empty((8, 16), np.float16)
    ws, ex = dev.ffi.new("uint64_t *"), dev.ffi.new("aclOpExecutor **")
    assert cust.aclnnAddCustomGetWorkspaceSize(tx, ty, tz, ws, ex) == OK and ws[0] == 0
    assert cust.aclnnAddCustom(dev.ffi.NULL, 0, ex[0], dev.acl.stream) == OK
    np.testing.assert_array_equal(dev.get(pz, (8, 16), np.float16), (t(x) + t(y)).numpy())
    assert dev.emu.calls("aclnnAddCustom") == 1                 # one runtime state with the toolkit
    tf = dev.empty((8, 16))[0]
    assert cust.aclnnAddCustomGetWorkspaceSize(tx, ty, tf, ws, ex) == INVALID
    assert cust.aclnnAddCustomGetWorkspaceSize(tx, dev.ffi.NULL, tz, ws, ex) == NULLPTR
    assert cust.aclnnAddCustomGetWorkspaceSize(tx, dev.empty((4,), np.float16)[0], tz, ws, ex) == TILING


@pytest.mark.parametrize("built_for", ["8.x", "9.x"])
def test_custom_op_with_the_9x_toolkit_in_a_subprocess(home9, tmp_path, built_for):
    """A package built with CANN 8 (DT_NEEDED libascendcl.so: the 9.x compat library) or CANN 9
    (libacl_rt.so) loads next to a 9.x toolkit and shares its state."""
    custom_opp = build_custom_opp(tmp_path, layout=built_for)
    assert needed(custom_opp / "op_api/lib/libcust_opapi.so")[1] == ("libascendcl.so" if built_for == "8.x" else "libacl_rt.so")
    out = run_script(home9, f"""
        import numpy as np
        libs = load_all()
        rt, nn = libs[0], libs[2]
        ffi.cdef("aclnnStatus aclnnAddCustomGetWorkspaceSize(const aclTensor *x, const aclTensor *y, const aclTensor *z, "
                 "uint64_t *workspaceSize, aclOpExecutor **executor);"
                 "aclnnStatus aclnnAddCustom(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
                 "const aclrtStream stream);")
        cust = ffi.dlopen({str(custom_opp / "op_api/lib/libcust_opapi.so")!r}, ffi.RTLD_NOW)
        os.environ["ASCEND_OPP_PATH"] = str(home / "opp")
        assert rt.aclInit(ffi.NULL) == 0 and rt.aclrtSetDevice(0) == 0
        def ten(a):
            p = ffi.new("void **"); assert rt.aclrtMalloc(p, a.nbytes, 0) == 0
            assert rt.aclrtMemcpy(p[0], a.nbytes, ffi.from_buffer(a), a.nbytes, 1) == 0
            d = ffi.new("int64_t[]", [a.size])
            return nn.aclCreateTensor(d, 1, 0, ffi.NULL, 0, 2, d, 1, p[0]), p[0]
        (tx, _), (ty, _), (tz, pz) = ten(np.arange(4, dtype=np.float32)), ten(np.ones(4, np.float32)), ten(np.zeros(4, np.float32))
        ws = ffi.new("uint64_t *"); ex = ffi.new("aclOpExecutor **")
        assert cust.aclnnAddCustomGetWorkspaceSize(tx, ty, tz, ws, ex) == 0
        assert cust.aclnnAddCustom(ffi.NULL, 0, ex[0], ffi.NULL) == 0
        assert rt.aclrtSynchronizeStream(ffi.NULL) == 0   # the NULL stream is asynchronous too
        out = np.empty(4, np.float32)
        assert rt.aclrtMemcpy(ffi.from_buffer(out), 16, pz, 16, 2) == 0
        assert out.tolist() == [1, 2, 3, 4], out
        assert Emulator(home).calls("aclnnAddCustom") == 1
        print("okcustom9")
    """)
    assert "okcustom9" in out


def test_custom_package_may_shadow_a_builtin_op(dev, tmp_path):
    """A custom op of type Add: its generated aclnnAdd(x1, x2, y) lives in libcust_opapi.so next to
    the toolkit's aclnnAdd(self, other, alpha, out); a package without it does not export aclnnAdd."""
    import cffi
    vdir = build_custom_opp(tmp_path, "shadow", ops=("AddCustom", "Add"))
    inc = vdir / "op_api/include"
    assert sorted(p.name for p in inc.iterdir()) == ["aclnn_add.h", "aclnn_add_custom.h"]
    text = (inc / "aclnn_add.h").read_text()
    assert "const aclTensor *x1," in text and "aclScalar" not in text
    info = json.loads((vdir / f"op_impl/ai_core/tbe/config/{SOC_DIR}/aic-{SOC_DIR}-ops-info.json").read_text())
    assert set(info) == {"AddCustom", "Add"} and info["Add"]["output0"]["name"] == "y"
    assert "REG_OP(Add)\n" in (vdir / "op_proto/inc/op_proto.h").read_text()
    lib = vdir / "op_api/lib/libcust_opapi.so"
    assert {"aclnnAdd", "aclnnAddGetWorkspaceSize", "aclnnAddCustom"} <= defined_symbols(lib)
    assert "aclnnAdd" not in defined_symbols(build_custom_opp(tmp_path, "plain") / "op_api/lib/libcust_opapi.so")
    with pytest.raises(ValueError):
        build_custom_opp(tmp_path, "bad", ops=("Mul",))

    ffi2 = cffi.FFI()                               # the custom signature, in its own FFI
    ffi2.cdef("typedef struct aclTensor aclTensor; typedef struct aclOpExecutor aclOpExecutor;"
              + prototypes(inc / "aclnn_add.h").replace("aclnnStatus", "int").replace("aclrtStream", "void *"))
    cust = ffi2.dlopen(str(lib), ffi2.RTLD_NOW)
    cast = lambda p: ffi2.cast("aclTensor *", int(dev.ffi.cast("uintptr_t", p)))  # noqa: E731
    x, y = np.array([1, 2, 3], np.float32), np.array([10, 20, 30], np.float32)
    tx, ty = dev.put(x)[0], dev.put(y)[0]
    tz, pz = dev.empty((3,))
    ws, ex = ffi2.new("uint64_t *"), ffi2.new("aclOpExecutor **")
    assert cust.aclnnAddGetWorkspaceSize(cast(tx), cast(ty), cast(tz), ws, ex) == OK
    assert cust.aclnnAdd(ffi2.NULL, 0, ex[0], ffi2.cast("void *", int(dev.ffi.cast("uintptr_t", dev.acl.stream)))) == OK
    assert dev.get(pz, (3,)).tolist() == [11, 22, 33]
    # the toolkit's aclnnAdd is untouched
    assert run2(dev, "Add", tx, ty, dev.scalar(2.0, np.float32), tz) == OK
    assert dev.get(pz, (3,)).tolist() == [21, 42, 63]


def test_math_ops_from_libopapi_math_in_a_9x_subprocess(home9):
    """9.x: Add, Cat and AmpUpdateScale come from libopapi_math.so (ops-math), which loads after
    libnnopbase.so and libacl_rt.so; the prototypes are the installed headers'."""
    decls = "\n".join(prototypes(aclnnop_dir(home9) / h) for h in sorted(NEW_HEADERS))
    out = run_script(home9, f"""
        import numpy as np
        ffi.cdef({decls!r})
        rt, compat, nn, math_, op = load_all()
        os.environ["ASCEND_OPP_PATH"] = str(home / "opp")
        assert rt.aclInit(ffi.NULL) == 0 and rt.aclrtSetDevice(0) == 0
        def ten(a, dt=0):
            p = ffi.new("void **"); assert rt.aclrtMalloc(p, a.nbytes, 0) == 0
            assert rt.aclrtMemcpy(p[0], a.nbytes, ffi.from_buffer(a), a.nbytes, 1) == 0
            d = ffi.new("int64_t[]", list(a.shape))
            return nn.aclCreateTensor(d, a.ndim, dt, ffi.NULL, 0, 2, d, a.ndim, p[0]), p[0]
        def get(p, n):
            assert rt.aclrtSynchronizeStream(ffi.NULL) == 0
            out = np.empty(n, np.float32)
            assert rt.aclrtMemcpy(ffi.from_buffer(out), out.nbytes, p, out.nbytes, 2) == 0
            return out.tolist()
        (ta, _), (tb, _), (to, po) = (ten(np.array(v, np.float32)) for v in ([1, 2], [10, 20], [0, 0]))
        alpha = nn.aclCreateScalar(ffi.new("float *", 2.0), 0)
        ws = ffi.new("uint64_t *"); ex = ffi.new("aclOpExecutor **")
        assert math_.aclnnAddGetWorkspaceSize(ta, tb, alpha, to, ws, ex) == 0
        assert math_.aclnnAdd(ffi.NULL, 0, ex[0], ffi.NULL) == 0
        assert get(po, 2) == [21, 42]
        (tc, pc) = ten(np.zeros(4, np.float32))
        lst = nn.aclCreateTensorList(ffi.new("aclTensor *[]", [ta, tb]), 2)
        assert math_.aclnnCatGetWorkspaceSize(lst, 0, tc, ws, ex) == 0
        assert math_.aclnnCat(ffi.NULL, 0, ex[0], ffi.NULL) == 0
        assert get(pc, 4) == [1, 2, 10, 20]
        print("okmath9")
    """)
    assert "okmath9" in out
