"""Operators pyaclnn never shipped a header for, found at run time and called generically.

On the emulator (tests/emulator): Add / InplaceAdd / Cat / AmpUpdateScale from the toolkit's
aclnnop folder, AddCustom from a custom operator package (ASCEND_CUSTOM_OPP_PATH), through
``pyaclnn.acl`` and through ``pyaclnn.Op``; results against PyTorch CPU; failing statuses as the
right AclError. On the NumPy backend they raise NotSupportedError; the four seed operators run
through the same generic object on both backends.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl
from conftest import headers_package

torch = pytest.importorskip("torch")
TESTS = Path(__file__).resolve().parents[1]
# the launch function a header declares with each phase 1 (without it, there is no operator)
LAUNCH = "aclnnStatus aclnn{}(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);\n"


@pytest.fixture(scope="module")
def custom_vendor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from emulator.build import build_custom_opp
    return build_custom_opp(tmp_path_factory.mktemp("opp"))


@pytest.fixture
def device_acl(emulator, emulator_home, custom_vendor, use_backend, monkeypatch):
    """The acl backend on the emulator, with the custom package on ASCEND_CUSTOM_OPP_PATH."""
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(custom_vendor))
    use_backend("acl", home=emulator_home)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        yield stream


def _acl_tensor(array: np.ndarray) -> tuple[object, int]:
    """aclrtMalloc + aclrtMemcpy + aclCreateTensor, as a C sample does."""
    size = max(array.nbytes, 1)
    addr = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    if array.nbytes:
        acl.aclrtMemcpy(addr, size, np.ascontiguousarray(array), array.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    dtype = {np.float32: acl.ACL_FLOAT, np.float16: acl.ACL_FLOAT16, np.int32: acl.ACL_INT32}[array.dtype.type]
    shape = list(array.shape)
    strides = [s // array.itemsize for s in array.strides]
    return acl.aclCreateTensor(shape, len(shape), dtype, strides, 0, acl.ACL_FORMAT_ND, shape, len(shape), addr), addr


def test_add_through_pyaclnn_acl_as_the_cann_sample(device_acl):
    """The CANN aclnnAdd sample, line by line: self + alpha * other."""
    stream = device_acl
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    y = np.full((4, 2), 0.5, np.float32)
    (tx, ax), (ty, ay), (tout, aout) = _acl_tensor(x), _acl_tensor(y), _acl_tensor(np.zeros_like(x))
    alpha = acl.aclCreateScalar(1.2, acl.ACL_FLOAT)
    ws_size, executor = acl.aclnnAddGetWorkspaceSize(tx, ty, alpha, tout)
    ws = acl.aclrtMalloc(ws_size, acl.ACL_MEM_MALLOC_HUGE_FIRST) if ws_size else None
    acl.aclnnAdd(ws, ws_size, executor, stream.raw)
    acl.aclrtSynchronizeStream(stream.raw)
    out = np.zeros_like(x)
    acl.aclrtMemcpy(out, out.nbytes, aout, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    expected = torch.add(torch.from_numpy(x), torch.from_numpy(y), alpha=float(np.float32(1.2)))
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-6)
    for t in (tx, ty, tout):
        acl.aclDestroyTensor(t)
    acl.aclDestroyScalar(alpha)
    for a in (ax, ay, aout) + ((ws,) if ws else ()):
        acl.aclrtFree(a)


def test_failing_status_is_the_right_acl_error(device_acl):
    tx, ax = _acl_tensor(np.ones((2, 3), np.float32))
    ty, ay = _acl_tensor(np.ones((4,), np.float32))
    alpha = acl.aclCreateScalar(1, acl.ACL_INT64)
    with pytest.raises(pyaclnn.AclnnParamInvalidError) as info:  # shapes do not broadcast
        acl.aclnnAddGetWorkspaceSize(tx, ty, alpha, tx)
    assert info.value.status == 161002 and info.value.api == "aclnnAddGetWorkspaceSize"
    assert info.value.cann_message
    with pytest.raises(pyaclnn.AclnnParamNullptrError) as info:
        acl.aclnnAddGetWorkspaceSize(tx, None, alpha, tx)
    assert info.value.api == "aclnnAddGetWorkspaceSize"
    with pytest.raises(pyaclnn.AclnnParamNullptrError) as info:  # generated op, custom package
        acl.aclnnAddCustomGetWorkspaceSize(tx, None, tx)
    assert info.value.api == "aclnnAddCustomGetWorkspaceSize"
    for t in (tx, ty):
        acl.aclDestroyTensor(t)
    acl.aclDestroyScalar(alpha)
    acl.aclrtFree(ax)
    acl.aclrtFree(ay)


@pytest.mark.parametrize("alpha", [1, 2.5, np.float32(-0.75)])
def test_add_through_the_generic_object(device_acl, alpha):
    stream = device_acl
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((4,)).astype(np.float32)
    out = pyaclnn.Tensor.zeros((3, 4))
    with pyaclnn.Op("Add", self=pyaclnn.Tensor.from_numpy(x), other=y, alpha=alpha, out=out) as op:
        op.run(stream)
        stream.synchronize()
    expected = torch.add(torch.from_numpy(x), torch.from_numpy(y), alpha=float(alpha))
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


def test_inplace_add_ref_is_input_and_output(device_acl):
    stream = device_acl
    x = np.arange(4, dtype=np.float32)
    t = pyaclnn.Tensor.from_numpy(x)
    op = pyaclnn.Op("InplaceAdd", t, np.ones(4, np.float32), 3)
    assert op.inputs[0] is t and op.outputs == [t]
    op.run(stream)
    stream.synchronize()
    np.testing.assert_array_equal(t.numpy(), x + 3)


def test_cat_takes_a_tensor_list(device_acl):
    stream = device_acl
    parts = [np.full((1, 2), i, np.float32) for i in range(3)] + [pyaclnn.Tensor.from_numpy(np.ones((2, 2), np.float32))]
    op = pyaclnn.Op("Cat", tensors=parts, dim=0, out=np.zeros((5, 2), np.float32))
    op.run(stream)
    stream.synchronize()
    expected = torch.cat([torch.from_numpy(np.asarray(p)) for p in parts], 0)
    np.testing.assert_array_equal(op["out"].numpy(), expected.numpy())
    op.close()


def test_generated_op_roles_from_the_op_definition_and_position_index(device_acl):
    """AmpUpdateScale's header declares its outputs const: the ops-info json says which they are."""
    stream = device_acl
    from pyaclnn._registry.operators import Registry
    runtime = pyaclnn._objects.backend.current().runtime
    toolkit = Registry([s for s in runtime.registry.sources if s.kind == "builtin"]).get("AmpUpdateScale")
    assert toolkit.source.kind == "builtin" and toolkit.index_rule == "position"  # roles: the ops-info json
    assert [toolkit.names[i] for i in toolkit.outputs] == ["updatedScale", "updatedGrowthTracker"]
    info = runtime.op_info("AmpUpdateScale")  # the toolkit's header comes first: the same prototype as
    assert info.source.kind == "builtin" and info.shipped  # headers/', whose reference runs on the NumPy backend
    assert (info.inputs, info.outputs, info.index_rule) == (toolkit.inputs, toolkit.outputs, toolkit.index_rule)
    ours = Registry([s for s in runtime.registry.sources if s.kind == "pyaclnn"]).get("AmpUpdateScale")
    assert (ours.inputs, ours.outputs, ours.index_rule) == (info.inputs, info.outputs, info.index_rule)  # spec ROLES
    scale, tracker = pyaclnn.Tensor.from_numpy(np.array([4.0], np.float32)), pyaclnn.Tensor.from_numpy(np.array([1], np.int32))
    found_inf = pyaclnn.Tensor.from_numpy(np.array([0.0], np.float32))
    new_scale, new_tracker = pyaclnn.Tensor.zeros((1,)), pyaclnn.Tensor.zeros((1,), np.int32)
    op = pyaclnn.Op("AmpUpdateScale", scale, tracker, found_inf, 2.0, 0.5, 2, new_scale, new_tracker,
                    repeatable=True)
    op.run(stream)
    s, g = torch.tensor([4.0]), torch.tensor([1], dtype=torch.int32)
    torch._amp_update_scale_(s, g, torch.tensor([0.0]), 2.0, 0.5, 2)
    stream.synchronize()
    assert new_scale.numpy().tolist() == s.tolist() and new_tracker.numpy().tolist() == g.tolist()
    other = pyaclnn.Tensor.from_numpy(np.array([7], np.int32))
    new_tracker.copy_from(np.array([5], np.int32))
    op.set_output("updatedGrowthTracker", other)  # by C name; C index 1 of the op definition
    op.run(stream)  # the same inputs again: the same results, now in `other`
    stream.synchronize()
    assert other.numpy().tolist() == g.tolist() and new_tracker.numpy().tolist() == [5]
    op.close()


def test_custom_package_op_through_acl_and_the_generic_object(device_acl, custom_vendor):
    stream = device_acl
    info = pyaclnn._objects.backend.current().runtime.op_info("AddCustom")
    assert info.source.kind == "custom" and info.source.library == custom_vendor / "op_api/lib/libcust_opapi.so"
    assert [info.names[i] for i in info.outputs] == ["z"]
    x, y = np.arange(6, dtype=np.float16), np.full(6, 0.25, np.float16)
    (tx, ax), (ty, ay), (tz, az) = _acl_tensor(x), _acl_tensor(y), _acl_tensor(np.zeros_like(x))
    size, executor = acl.aclnnAddCustomGetWorkspaceSize(tx, ty, tz)
    acl.aclnnAddCustom(None, size, executor, stream.raw)
    acl.aclrtSynchronizeStream(stream.raw)
    out = np.zeros_like(x)
    acl.aclrtMemcpy(out, out.nbytes, az, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert out.tolist() == (torch.from_numpy(x) + torch.from_numpy(y)).tolist()
    for t, a in ((tx, ax), (ty, ay), (tz, az)):
        acl.aclDestroyTensor(t)
        acl.aclrtFree(a)
    op = pyaclnn.Op("AddCustom", x=x, y=y, z=np.zeros_like(x))
    op.run(stream)
    stream.synchronize()
    assert op["z"].numpy().tolist() == out.tolist()
    with pytest.raises(pyaclnn.AclnnParamInvalidError):  # float16 with float32: the package refuses
        pyaclnn.Op("AddCustom", x=x, y=y.astype(np.float32), z=np.zeros_like(x))


def test_custom_package_without_op_definition_runs_but_cannot_set_addresses(
        emulator, emulator_home, custom_vendor, use_backend, monkeypatch, tmp_path):
    bare = tmp_path / "bare"
    shutil.copytree(custom_vendor, bare, symlinks=True)
    shutil.rmtree(bare / "op_impl")
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(bare))
    use_backend("acl", home=emulator_home)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        x = pyaclnn.Tensor.from_numpy(np.ones(4, np.float32))
        op = pyaclnn.Op("AddCustom", x, x, pyaclnn.Tensor.zeros(4), repeatable=True)
        op.run(stream)
        stream.synchronize()
        with pytest.raises(pyaclnn.NotSupportedError, match="op definition"):
            op.set_input(0, x)
        op.close()


def test_seed_operators_run_through_the_generic_object(backend):
    """MseLossBackward by its C parameter names, on both backends, against torch autograd."""
    g, x, y = (np.random.default_rng(i).standard_normal((2, 3)).astype(np.float32) for i in range(3))
    out = pyaclnn.Tensor.zeros((2, 3))
    with pyaclnn.Op("MseLossBackward", gradOutput=pyaclnn.Tensor.from_numpy(g), self=pyaclnn.Tensor.from_numpy(x),
                    target=pyaclnn.Tensor.from_numpy(y), reduction=2, out=out) as op:
        op.run()
    tx = torch.from_numpy(x).requires_grad_()
    torch.nn.functional.mse_loss(tx, torch.from_numpy(y), reduction="none").backward(torch.from_numpy(g))
    np.testing.assert_allclose(out.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_arguments_are_checked_against_the_signature(backend):
    x = pyaclnn.Tensor.zeros((2,))
    with pytest.raises(TypeError, match="needs target, reduction, out"):
        pyaclnn.Op("MseLossBackward", x, x)
    with pytest.raises(TypeError, match="no parameter 'input'"):
        pyaclnn.Op("MseLossBackward", x, x, x, 1, x, input=x)
    with pytest.raises(TypeError, match="given twice"):
        pyaclnn.Op("MseLossBackward", x, x, x, 1, x, self=x)
    with pytest.raises(TypeError, match=r"reduction \(int64_t\) must be an int, got float 1.0"):
        pyaclnn.Op("MseLossBackward", x, x, x, 1.0, x)
    with pytest.raises(TypeError, match=r"reduction \(int64_t\) must be an int, got str 'mean'"):
        acl.aclnnMseLossBackwardGetWorkspaceSize(x.raw, x.raw, x.raw, "mean", x.raw)
    with pytest.raises(ValueError, match=r"reduction \(int64_t\) = 9223372036854775808 is out of the int64_t range"):
        acl.aclnnMseLossBackwardGetWorkspaceSize(x.raw, x.raw, x.raw, 2 ** 63, x.raw)


def test_value_types_of_found_operators_are_checked_from_their_headers(device_acl):
    x = np.ones((2, 2), np.float32)
    with pytest.raises(TypeError, match=r"aclnnCatGetWorkspaceSize: dim \(int64_t\) must be an int, got float 0.0"):
        pyaclnn.Op("Cat", [x, x], 0.0, np.zeros((4, 2), np.float32))
    with pytest.raises(TypeError, match=r"growthFactor \(double\) must be an int or float, got str '2'"):
        acl.aclnnAmpUpdateScaleGetWorkspaceSize(None, None, None, "2", 0.5, 2, None, None)


def test_operators_without_a_reference_on_the_numpy_backend(unreferenced_toolkit, custom_vendor, use_backend,
                                                            monkeypatch):
    """The NumPy backend knows the operators of the CANN headers and custom packages found here,
    though it runs only those with a reference: the others say so (not "unknown")."""
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(custom_vendor))
    use_backend("numpy", home=unreferenced_toolkit)
    with pytest.raises(pyaclnn.NotSupportedError) as info:
        acl.aclnnForeachAddScalarListGetWorkspaceSize(1, 2, 3)
    message = str(info.value)
    assert "aclnnForeachAddScalarList" in message and "no NumPy reference" in message and "PYACLNN_BACKEND=acl" in message
    assert all(op in message for op in ("MseLossBackward", "GroupNormBackward", "CrossEntropyLossGrad",
                                        "PreluBackward", "Add"))
    with pytest.raises(pyaclnn.NotSupportedError, match="aclnnAddCustom has no NumPy reference"):
        pyaclnn.Op("AddCustom", np.ones(2), np.ones(2), np.ones(2))
    with pytest.raises(pyaclnn.NotSupportedError, match="aclnnForeachAddScalarList"):
        acl.aclnnForeachAddScalarList(None, 0, None, None)


def test_op_nowhere_declared_on_acl(device_acl):
    with pytest.raises(pyaclnn.NotSupportedError, match="no header declares aclnnNoSuchOpGetWorkspaceSize"):
        acl.aclnnNoSuchOpGetWorkspaceSize()


def test_ops_command_and_doctor_list_what_was_found(device_acl, emulator_home, custom_vendor, capsys):
    from pyaclnn._cli.commands import doctor_report, main
    assert main(["ops", "add"]) == 0
    text = capsys.readouterr().out
    assert "aclnnAdd  [CANN 8.x aclnnop: aclnn_add.h; NumPy reference]" in text  # the prototype of headers/
    assert "aclnnAddCustom  [custom package customize (ASCEND_CUSTOM_OPP_PATH)" in text
    assert "selfRef" in text and "in/out" in text
    assert main(["ops", "cat"]) == 0
    assert "aclnnCat  [CANN 8.x aclnnop: aclnn_cat.h; NumPy reference]" in capsys.readouterr().out
    assert main(["ops", "ForeachMulScalarList"]) == 0
    assert ("aclnnForeachMulScalarList  [CANN 8.x aclnnop: aclnn_foreach_mul_scalar_list.h; NumPy reference]"
            in capsys.readouterr().out)
    assert main(["ops", "--json", "aclnn*LossGrad"]) == 0
    rows = json.loads(capsys.readouterr().out)["operators"]
    # the toolkit's, and one it does not declare from the signature table (searched last)
    assert [(r["name"], r["source"], r["reference"]) for r in rows] == [
        ("aclnnCrossEntropyLossGrad", "CANN 8.x aclnnop", "exact"),
        ("aclnnFusedLinearCrossEntropyLossGrad", "pyaclnn signature table", None)]
    ops = doctor_report()["operators"]
    # the oracle: what the emulator's toolkit folder declares, by a plain scan of its headers
    from emulator.build import aclnnop_dir
    import re
    builtin = {m for h in aclnnop_dir(emulator_home).glob("*.h")
               for m in re.findall(r"^\s*(?:ACLNN_API\s+)?aclnnStatus\s+aclnn(\w+)GetWorkspaceSize\(",
                                   h.read_text(), flags=re.M)}
    assert {"Add", "Cat", "AmpUpdateScale", "MseLossBackward"} <= builtin
    counts = {s["kind"]: s["count"] for s in ops["sources"]}
    from pyaclnn._registry import table as _signature_table
    table = set(_signature_table.index())
    # headers/: the toolkit's six beyond the seed too
    assert counts == {"custom": 1, "pyaclnn": 10, "builtin": len(builtin), "table": len(table)}
    assert ops["total"] == len(builtin | {"AddCustom"} | table)
    exported = {Path(lib["path"]).name: lib["count"] for lib in ops["libraries"]}
    assert exported == {"libopapi.so": len(builtin), "libcust_opapi.so": 1}
    assert ops["references"] == ["Add", "AmpUpdateScale", "Cat", "CrossEntropyLossGrad", "ForeachMulScalarList", "GroupNormBackward",
                                 "InplaceAdd", "MseLossBackward",
                                 "PreluBackward", "ReduceSum"]


def test_9x_layout_finds_add_in_libopapi_math(tmp_path, custom_vendor):
    """CANN 9 splits the operators across libopapi_*.so: Add lives in libopapi_math.so."""
    from emulator.build import build_toolkit
    home = build_toolkit(tmp_path, layout="9.x")
    code = textwrap.dedent("""
        import numpy as np, pyaclnn
        with pyaclnn.Device(0) as dev, dev.create_stream() as s:
            op = pyaclnn.Op("Add", np.ones(3, np.float32), np.arange(3, dtype=np.float32), 2, np.zeros(3, np.float32))
            op.run(s); s.synchronize()
            c = pyaclnn.Op("AddCustom", np.ones(2, np.float32), np.ones(2, np.float32), np.zeros(2, np.float32))
            c.run(s); s.synchronize()
            print(op["out"].numpy().tolist(), c["z"].numpy().tolist())
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "ASCEND_OPP_PATH")}
    env.update(PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(home), ASCEND_CUSTOM_OPP_PATH=str(custom_vendor),
               PYTHONPATH=os.pathsep.join([str(TESTS.parent), str(TESTS)]))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "[1.0, 3.0, 5.0] [2.0, 2.0]"


def test_custom_package_runs_through_op_on_the_npu_simulator(tmp_path, custom_vendor):
    """The package on the emulated NPU Simulator (its folder first on LD_LIBRARY_PATH, as the
    ops repos' build_example.sh runs a custom op's example): pyaclnn.Op runs AddCustom on the
    simulator's runtime (libruntime_camodel.so), not the toolkit's lib64/libruntime.so."""
    from emulator.build import build_simulator, build_toolkit, simulator_env
    home = build_toolkit(tmp_path, layout="9.x")
    sim = build_simulator(home)
    rng = np.random.default_rng(17)
    x, y = rng.standard_normal((4, 8)).astype(np.float16), rng.standard_normal((4, 8)).astype(np.float16)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    code = textwrap.dedent(f"""
        import json, numpy as np, pyaclnn
        from emulator.build import Emulator
        x, y = np.load({str(tmp_path / "x.npy")!r}), np.load({str(tmp_path / "y.npy")!r})
        with pyaclnn.Device(0) as dev, dev.create_stream() as s:
            op = pyaclnn.Op("AddCustom", x, y, np.zeros_like(x))
            op.run(s); s.synchronize()
            z = op["z"].numpy()
        info = pyaclnn.backend_info()
        maps = {{line.split()[-1] for line in open("/proc/self/maps")}}
        np.save({str(tmp_path / "z.npy")!r}, z)
        print(json.dumps({{"simulator": info.get("simulator"), "source": pyaclnn._objects.backend.current().runtime.op_info("AddCustom").source.label,
                           "boot": Emulator(info["paths"]["home"], preload_plugins=False).runtime_plugins(),
                           "lib64_runtime": {str(home / "lib64" / "libruntime.so")!r} in maps,
                           "camodel": {str(sim / "libruntime_camodel.so")!r} in maps}}))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "EMU_", "PYACLNN_"))}
    env.update(simulator_env(home), PYACLNN_BACKEND="acl", ASCEND_CUSTOM_OPP_PATH=str(custom_vendor),
               EMU_SOC_NAME="Ascend950PR_9599", PYTHONPATH=os.pathsep.join([str(TESTS.parent), str(TESTS)]))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["boot"] == {"runtime_impl": False, "libtsdclient.so": False, "camodel": True}
    assert data["camodel"] and not data["lib64_runtime"] and data["simulator"] == "Ascend950PR"
    assert data["source"].startswith("custom package customize")
    expected = (torch.from_numpy(x) + torch.from_numpy(y)).numpy()
    np.testing.assert_array_equal(np.load(tmp_path / "z.npy"), expected)


def test_unsupported_parameter_is_listed_and_named_when_called(
        emulator, emulator_home, custom_vendor, use_backend, monkeypatch, tmp_path, capsys):
    weird = headers_package(tmp_path / "weird", {"aclnn_weird.h":
        "ACLNN_API aclnnStatus aclnnWeirdGetWorkspaceSize(const aclTensor *x, aclTensor **outs,\n"
        "    uint64_t *workspaceSize, aclOpExecutor **executor);\n" + LAUNCH.format("Weird")})
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", f"{weird}:{custom_vendor}")
    use_backend("acl", home=emulator_home)
    from pyaclnn._cli.commands import main
    assert main(["ops", "Weird"]) == 0
    assert "outs" in capsys.readouterr().out
    with pytest.raises(pyaclnn.NotSupportedError, match=r"'outs' has C type 'aclTensor \*\*'"):
        acl.aclnnWeirdGetWorkspaceSize(None, None)
    with pytest.raises(pyaclnn.NotSupportedError, match="'outs'"):
        pyaclnn.Op("Weird", None, None)
    with pytest.raises(pyaclnn.NotSupportedError, match="no library exports"):  # declared, no libcust_opapi.so
        (weird / "op_api" / "include" / "aclnn_weird.h").write_text(
            "aclnnStatus aclnnWeirdGetWorkspaceSize(const aclTensor *x, uint64_t *workspaceSize, "
            "aclOpExecutor **executor);\n" + LAUNCH.format("Weird"))
        use_backend("acl", home=emulator_home)
        acl.aclnnWeirdGetWorkspaceSize(None)


def test_a_custom_package_shadows_the_builtin_operator(emulator, emulator_home, use_backend, monkeypatch,
                                                       tmp_path):
    """Custom packages are searched first (torch_npu's GetOpApiFuncAddr): its aclnnAdd(x1, x2, y)
    replaces the toolkit's aclnnAdd(self, other, alpha, out), signature and library."""
    from emulator.build import build_custom_opp
    vendor = build_custom_opp(tmp_path, "shadow", ops=("AddCustom", "Add"))
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(vendor))
    use_backend("acl", home=emulator_home)
    info = pyaclnn._objects.backend.current().runtime.op_info("Add")
    assert info.names == ("x1", "x2", "y") and info.source.kind == "custom"
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        op = pyaclnn.Op("Add", x1=np.ones(3, np.float32), x2=np.full(3, 2, np.float32), y=np.zeros(3, np.float32))
        op.run(stream)
        stream.synchronize()
        assert op["y"].numpy().tolist() == [3.0, 3.0, 3.0]
        op.close()


def test_vendors_config_ini_packages_are_found(emulator, emulator_home, use_backend, monkeypatch, tmp_path):
    """A package installed into $ASCEND_OPP_PATH/vendors and listed by config.ini's load_priority."""
    from emulator.build import build_custom_opp
    opp = tmp_path / "opp"
    shutil.copytree(Path(emulator_home) / "opp", opp, symlinks=True)
    build_custom_opp(opp, "acme")
    monkeypatch.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    monkeypatch.setenv("ASCEND_OPP_PATH", str(opp))
    use_backend("acl", home=emulator_home)
    info = pyaclnn._objects.backend.current().runtime.op_info("AddCustom")
    assert info.source.label == "custom package acme (vendors/config.ini)"
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        op = pyaclnn.Op("AddCustom", np.ones(2, np.float32), np.ones(2, np.float32), np.zeros(2, np.float32))
        op.run(stream)
        stream.synchronize()
        assert op["z"].numpy().tolist() == [2.0, 2.0]
        op.close()


def test_reduce_sum_int_array_bool_and_dtype_parameters(device_acl):
    stream = device_acl
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    info = pyaclnn._objects.backend.current().runtime.op_info("ReduceSum")
    assert info.kinds == ("tensor", "int_array", "bool", "int", "tensor")
    for dims, keep in (([0, 2], False), ([1], True)):
        expected = torch.sum(torch.from_numpy(x), dim=dims, keepdim=keep)
        op = pyaclnn.Op("ReduceSum", self=x, dims=dims, keepDims=keep, dtype=pyaclnn.DType.FLOAT,
                        out=np.zeros(tuple(expected.shape), np.float32))
        op.run(stream)
        stream.synchronize()
        np.testing.assert_allclose(op["out"].numpy(), expected.numpy(), rtol=1e-6)
        op.close()
    with pytest.raises(TypeError, match=r"keepDims \(bool\) must be a bool, got int 1"):
        pyaclnn.Op("ReduceSum", x, [0], 1, acl.ACL_FLOAT, np.zeros((3, 4), np.float32))
    with pytest.raises(pyaclnn.AclnnParamInvalidError):  # a repeated dim: the library's check
        pyaclnn.Op("ReduceSum", x, [0, 0], False, acl.ACL_FLOAT, np.zeros((3, 4), np.float32))


def test_foreach_mul_scalar_list_tensor_lists_in_and_out(device_acl):
    """Tensor lists as input and output, a scalar list; the scalar dtype rule decides the row:
    float32 tensors take float32 scalars (np.float32) and Python floats (ACL_DOUBLE, which nnopbase
    stores as float), not ints (int64: the int32 row's)."""
    stream = device_acl
    xs = [np.arange(3, dtype=np.float32), np.full((2, 2), 1.5, np.float32)]
    outs = [pyaclnn.Tensor.zeros((3,)), pyaclnn.Tensor.zeros((2, 2))]
    info = pyaclnn._objects.backend.current().runtime.op_info("ForeachMulScalarList")
    assert info.inputs == (0,) and info.outputs == (2,)  # the op definition's y is the header's out
    op = pyaclnn.Op("ForeachMulScalarList", x=xs, scalars=[np.float32(2), np.float32(-1)], out=outs)
    op.run(stream)
    stream.synchronize()
    expected = torch._foreach_mul([torch.from_numpy(a) for a in xs], [2.0, -1.0])
    for out, e in zip(outs, expected):
        np.testing.assert_array_equal(out.numpy(), e.numpy())
    op.close()
    with pyaclnn.Op("ForeachMulScalarList", x=xs, scalars=[0.1, -1.0], out=outs) as op:
        op.run(stream)
    stream.synchronize()
    np.testing.assert_array_equal(outs[0].numpy(), torch._foreach_mul([torch.from_numpy(xs[0])], [float(np.float32(0.1))])[0])
    with pytest.raises(pyaclnn.AclnnParamInvalidError):
        pyaclnn.Op("ForeachMulScalarList", x=xs, scalars=[2, -1], out=outs)


def test_a_custom_library_that_does_not_load_is_named(emulator, emulator_home, custom_vendor, use_backend,
                                                       monkeypatch, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(custom_vendor, broken, symlinks=True)
    (broken / "op_api/lib/libcust_opapi.so").write_bytes(b"not an ELF file")
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(broken))
    use_backend("acl", home=emulator_home)
    with pytest.raises(pyaclnn.NotSupportedError, match=r"no library exports.*libcust_opapi.so: .*"):
        acl.aclnnAddCustomGetWorkspaceSize(None, None, None)


def test_repeatable_add_survives_the_op_cache(device_acl):
    """A second identical Add plan is the op cache's entry, which cannot be made repeatable
    (561000): the generic object re-plans per run, keeping its alpha scalar, and set_input works."""
    stream = device_acl
    x, y, z = (pyaclnn.Tensor.from_numpy(np.full(4, v, np.float32)) for v in (1.0, 2.0, 0.0))
    first = pyaclnn.Op("Add", x, y, 3, z)  # fills the cache for this layout
    first.run(stream)
    op = pyaclnn.Op("Add", self=x, other=y, alpha=3, out=z, repeatable=True)
    op.run(stream)
    stream.synchronize()
    assert z.numpy().tolist() == [7.0] * 4
    other = pyaclnn.Tensor.from_numpy(np.full(4, 10.0, np.float32))
    op.set_input("other", other)
    op.run(stream)
    op.run(stream)
    stream.synchronize()
    assert z.numpy().tolist() == [31.0] * 4
    assert op.replans  # the emulator, as CANN, refused repeatable on the cache entry
    op.close()
    first.close()


def test_the_generic_object_leaks_no_handle(device_acl, emulator):
    """Scalars, arrays, tensor and scalar lists, private descriptors and uploaded arrays are all
    released: after run (what phase 2 no longer needs) and at close (the rest)."""
    stream = device_acl
    kinds = ("tensor", "scalar", "int_array", "tensor_list", "scalar_list", "executor", "device_alloc")
    before = {k: emulator.live(k) for k in kinds}
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ops = [pyaclnn.Op("Add", x, x, 2.5, np.zeros_like(x)),
           pyaclnn.Op("ReduceSum", x, [1], False, acl.ACL_FLOAT, np.zeros(2, np.float32), repeatable=True),
           pyaclnn.Op("ForeachMulScalarList", [x, x], [np.float32(2), np.float32(3)], [x.copy(), x.copy()])]
    for op in ops:
        op.run(stream)
    stream.synchronize()
    assert emulator.live("scalar") == before["scalar"]  # Add's alpha went after its phase 2
    for op in ops:
        op.close()
    assert {k: emulator.live(k) for k in kinds} == before


def test_an_unparseable_declaration_is_named_whatever_the_arguments(
        emulator, emulator_home, custom_vendor, use_backend, monkeypatch, tmp_path):
    """A declaration pyaclnn cannot read has no parameters to count: the generic object says why it
    cannot call the operator, not that it "takes 0 arguments"."""
    bad = headers_package(tmp_path / "bad", {"aclnn_garbled.h":
        "aclnnStatus aclnnGarbledGetWorkspaceSize(const aclTensor *x, int (*cb)(int),\n"
        "    uint64_t *workspaceSize, aclOpExecutor **executor);\n" + LAUNCH.format("Garbled")})
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", f"{bad}:{custom_vendor}")
    use_backend("acl", home=emulator_home)
    for args in ((), (np.ones(2, np.float32), None)):
        with pytest.raises(pyaclnn.NotSupportedError, match="aclnnGarbledGetWorkspaceSize in .* could not be parsed"):
            pyaclnn.Op("Garbled", *args)


def test_meta_object_values_are_refused_never_cast(device_acl, emulator):
    """What no C value of the parameter means is refused naming the parameter, with nothing leaked:
    a Python int beyond int64 for an aclScalar (was an OverflowError from the conversion), bools and
    text in int/float arrays (were cast to 1, 1.5), a non-bool in a bool array (was bool(v))."""
    x = np.ones((2, 3), np.float32)
    kinds = ("tensor", "scalar", "int_array", "scalar_list", "tensor_list", "device_alloc")
    before = {k: emulator.live(k) for k in kinds}
    with pytest.raises(ValueError, match=r"aclnnAddGetWorkspaceSize: alpha takes aclScalar\*.*"
                                         r"1180591620717411303424 is out of the int64_t range"):
        pyaclnn.Op("Add", x, x, 2 ** 70, np.zeros_like(x))
    with pytest.raises(ValueError, match=r"dims takes aclIntArray\*.*out of the int64_t range"):
        pyaclnn.Op("ReduceSum", x, [2 ** 70], False, acl.ACL_FLOAT, np.zeros(2, np.float32))
    with pytest.raises(TypeError, match=r"dims takes aclIntArray\*.*got bool True"):
        pyaclnn.Op("ReduceSum", x, [True], False, acl.ACL_FLOAT, np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"scalars takes aclScalarList\*.*out of the int64_t range"):
        pyaclnn.Op("ForeachMulScalarList", [x, x], [1, -2 ** 64], [x.copy(), x.copy()])
    assert {k: emulator.live(k) for k in kinds} == before
    from pyaclnn._registry.signature import c_element
    assert (c_element(np.int32(3), "int"), c_element(2, "float"), c_element(np.bool_(True), "bool")) == (3, 2.0, True)


def test_the_c_shaped_layer_refuses_the_same_values_on_both_backends(backend):
    """acl.aclCreate*Array / aclCreateScalar and a phase 1 with the wrong argument count: the same
    error class on both backends (the NumPy backend cast 1.5 to 1, 'no' to True, '1.5' to 1.5,
    '1' to a scalar 1.0 and stored 2**70; the acl one raised cffi's messages; a wrong count was
    161002 on one and cffi's "expects 7 arguments, got 4" on the other)."""
    with pytest.raises(TypeError, match=r"aclCreateIntArray: value\[1\] must be an int \(int64_t\)"):
        acl.aclCreateIntArray([1, 1.5], 2)
    with pytest.raises(ValueError, match=r"aclCreateIntArray: value\[0\].*out of the int64_t range"):
        acl.aclCreateIntArray([2 ** 70], 1)
    with pytest.raises(TypeError, match=r"aclCreateBoolArray: value\[0\] must be a bool: got str 'no'"):
        acl.aclCreateBoolArray(["no"], 1)
    with pytest.raises(TypeError, match=r"aclCreateFloatArray: value\[0\] must be a real number"):
        acl.aclCreateFloatArray(["1.5"], 1)
    with pytest.raises(TypeError, match="aclCreateScalar: value must be a number"):
        acl.aclCreateScalar("1", acl.ACL_FLOAT)
    with pytest.raises(ValueError, match="aclCreateScalar: 1180591620717411303424 does not fit"):
        acl.aclCreateScalar(2 ** 70, acl.ACL_INT64)
    with pytest.raises(TypeError, match=r"aclnnMseLossBackwardGetWorkspaceSize takes 5 arguments \(gradOutput, "
                                        r"self, target, reduction, out\), got 2"):
        acl.aclnnMseLossBackwardGetWorkspaceSize(None, None)
    array = acl.aclCreateIntArray(np.array([3, -1]), 2)  # NumPy integers are ints
    acl.aclDestroyIntArray(array)


def test_a_wrong_tensor_argument_names_its_parameter(device_acl):
    """The generic object takes ndarrays: its error says so and names the C parameter (it said
    "must be pyaclnn.Tensor ... the pyaclnn.<op>() functions take NumPy arrays")."""
    x = np.ones((2, 2), np.float32)
    with pytest.raises(TypeError, match=r"^aclnnAddGetWorkspaceSize: other takes aclTensor\* \(a Tensor or "
                                        r"ndarray; None is nullptr\), got list$"):
        pyaclnn.Op("Add", x, [1.0, 2.0], 1.0, np.zeros_like(x))


def test_doctor_names_a_custom_package_without_its_library(
        emulator, emulator_home, custom_vendor, use_backend, monkeypatch, tmp_path):
    """A package whose headers are installed but whose libcust_opapi.so is not: the doctor says its
    library is MISSING (it said "unreadable") and notes that its operators cannot run."""
    header = custom_vendor / "op_api" / "include" / "aclnn_add_custom.h"
    headers_only = headers_package(tmp_path / "headers_only", {header.name: header.read_text()})
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", f"{headers_only}:{custom_vendor}")
    use_backend("acl", home=emulator_home)
    from pyaclnn._cli.commands import doctor_report, doctor_text
    data = doctor_report()
    text = doctor_text(data)
    missing = headers_only / "op_api" / "lib" / "libcust_opapi.so"
    assert f"library {missing}: MISSING" in text
    assert f"library {custom_vendor / 'op_api' / 'lib' / 'libcust_opapi.so'}: 1 exported" in text
    assert any("headers_only" in n and "declares 1 operator(s) but has no library" in n for n in data["notes"])
    # its declaration is skipped: the package that has the library runs the operator
    info = pyaclnn._objects.backend.current().runtime.op_info("AddCustom")
    assert info.source.library == custom_vendor / "op_api" / "lib" / "libcust_opapi.so"


def test_a_tensor_list_of_ndarrays_is_readable_after_the_run(device_acl):
    """op[name] of a tensor-list parameter is the list of its Tensors: ndarray outputs of
    ForeachMulScalarList can be read back (op["out"] was None, the results unreachable)."""
    stream = device_acl
    xs = [np.arange(3, dtype=np.float32), np.full((2, 2), 1.5, np.float32)]
    with pyaclnn.Op("ForeachMulScalarList", xs, [np.float32(2), np.float32(-1)],
                    [np.zeros(3, np.float32), np.zeros((2, 2), np.float32)]) as op:
        op.run(stream)
        stream.synchronize()
        outs = op["out"]
        expected = torch._foreach_mul([torch.from_numpy(a) for a in xs], [2.0, -1.0])
        assert isinstance(outs, list) and len(outs) == 2
        for out, e in zip(outs, expected):
            np.testing.assert_array_equal(out.numpy(), e.numpy())
        assert [t.numpy().tolist() for t in op["x"]] == [a.tolist() for a in xs]
        assert op["scalars"] == [np.float32(2), np.float32(-1)]  # the value passed


def test_op_item_is_the_argument_passed_for_every_parameter(backend):
    """op[name] of a scalar parameter is the value passed (it was None, which means a nullptr),
    and of a re-pointed tensor the Tensor set_input/set_output put there (it was the first one)."""
    x, y = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        with pyaclnn.Op("Add", x, y, 2.5, np.zeros(3, np.float32), repeatable=True) as op:
            assert op["alpha"] == 2.5
            other, out2 = pyaclnn.Tensor.from_numpy(x * 10), pyaclnn.Tensor.zeros(3)
            op.set_input("self", other)
            op.set_output("out", out2)
            assert op["self"] is other and op["out"] is out2
            op.run(stream)
            stream.synchronize()
            np.testing.assert_array_equal(op["out"].numpy(), torch.add(torch.from_numpy(x * 10),
                                                                       torch.from_numpy(y), alpha=2.5).numpy())
            other.close()
            out2.close()
        with pyaclnn.Op("MseLossBackward", y, x, y, 2, np.zeros(3, np.float32)) as op:
            assert op["reduction"] == 2


def test_a_python_object_where_a_handle_goes_names_the_parameter_on_both_backends(backend):
    """pyaclnn.acl phase 1 takes handles (or a pyaclnn.Tensor: tests/acl/test_acl_objects.py): an
    ndarray there is one TypeError naming the C parameter on both backends (was cffi's
    "initializer for ctype 'aclTensor *'" on acl, "unhashable type: 'numpy.ndarray'" or 161002 on
    the NumPy backend); phase 2 takes None as nullptr (was a cffi TypeError on acl) and answers
    with an AclError."""
    x = np.ones((2, 2), np.float32)
    t = pyaclnn.Tensor.from_numpy(x)
    with pytest.raises(TypeError, match=r"^aclnnMseLossBackwardGetWorkspaceSize: self \(const aclTensor \*\) "
                                        r"takes an aclTensor handle \(acl.aclCreateTensor\), .*; got ndarray "):
        acl.aclnnMseLossBackwardGetWorkspaceSize(t.raw, x, t.raw, 1, t.raw)
    with pytest.raises(pyaclnn.AclError):
        acl.aclnnMseLossBackward(None, 0, None, None)
    t.close()


def test_one_array_or_a_number_where_a_list_goes_is_refused_saying_to_pass_a_list(backend):
    """One ndarray for an aclTensorList* was split into its rows (Cat of a (2, 2, 2) array ran as
    two (2, 2) tensors); a number for an array or list parameter was "'int' object is not iterable"."""
    x = np.ones((2, 2, 2), np.float32)
    with pytest.raises(TypeError, match=r"aclnnCatGetWorkspaceSize: tensors takes aclTensorList\*.*"
                                        r"got one ndarray; pass a list of them, e.g. \[x\]"):
        pyaclnn.Op("Cat", x, 0, np.zeros((4, 2), np.float32))
    with pytest.raises(TypeError, match=r"x takes aclTensorList\*.*got one Tensor; pass a list"):
        pyaclnn.Op("ForeachMulScalarList", pyaclnn.Tensor.from_numpy(x), [2.0], [x.copy()])
    with pytest.raises(TypeError, match=r"dims takes aclIntArray\*.*got int 1; pass a sequence, e.g. \[1\]"):
        pyaclnn.Op("ReduceSum", x, 1, False, acl.ACL_FLOAT, np.zeros((2, 2), np.float32))
    with pytest.raises(TypeError, match=r"scalars takes aclScalarList\*.*got float 2.0; pass a sequence"):
        pyaclnn.Op("ForeachMulScalarList", [x], 2.0, [x.copy()])


def test_set_input_index_of_a_wrong_type_is_a_type_error_naming_what_it_takes(backend):
    # a float index was "list indices must be integers or slices, not float" from inside the
    # executor; True was taken as position 1
    x = pyaclnn.Tensor.zeros((2,))
    with pyaclnn.Op("MseLossBackward", x, x, x, 1, pyaclnn.Tensor.zeros((2,)), repeatable=True) as op:
        for index in (0.0, True, None):
            with pytest.raises(TypeError, match="take an int position or a C parameter name, got"):
                op.set_input(index, x)
        op.set_input(np.int64(1), x)  # a NumPy integer is a position


def test_repeatable_must_be_a_bool(backend):
    # repeatable="no" was taken as True (bool("no")); a NumPy bool is a bool
    x = pyaclnn.Tensor.zeros((2,))
    for value in ("no", 1, None):
        with pytest.raises(TypeError, match=r"aclnnMseLossBackward: repeatable must be True or False, got"):
            pyaclnn.Op("MseLossBackward", x, x, x, 1, pyaclnn.Tensor.zeros((2,)), repeatable=value)
    with pyaclnn.Op("MseLossBackward", x, x, x, 1, pyaclnn.Tensor.zeros((2,)), repeatable=np.bool_(True)) as op:
        assert op.repeatable is True


def test_a_numpy_dtype_for_an_acl_data_type_parameter_says_how_to_convert_it(backend):
    # ReduceSum's dtype is an aclDataType: np.float32 was "must be an int, got type <class ...>"
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"dtype \(aclDataType\) must be an int, got type .*"
                                        r"pyaclnn.DType.FLOAT, acl.ACL_FLOAT.*pyaclnn.dtypes.from_numpy"):
        pyaclnn.Op("ReduceSum", x, [1], False, np.float32, np.zeros(2, np.float32))
    with pyaclnn.Op("ReduceSum", x, [1], False, pyaclnn.dtypes.from_numpy(np.float32),
                    np.zeros(2, np.float32)) as op:  # the conversion the message names works
        op.run()
        np.testing.assert_array_equal(op["out"].numpy(), [3, 3])


def test_a_torch_tensor_for_a_tensor_parameter_is_named_as_torch_with_the_upload(backend):
    # it read "takes aclTensor* (a Tensor or ndarray ...), got Tensor": which Tensor?
    torch_x = torch.ones(2)
    with pytest.raises(TypeError, match=r"self takes aclTensor\*.*got torch.Tensor; pyaclnn.Tensor.from_numpy "
                                        r"uploads a DLPack tensor"):
        pyaclnn.Op("Add", torch_x, np.ones(2, np.float32), 1, np.zeros(2, np.float32))
    with pytest.raises(TypeError, match=r"tensor arguments must be pyaclnn.Tensor or None, got torch.Tensor"):
        pyaclnn.MseLossBackward(torch_x, torch_x, torch_x, "mean", torch_x)
