"""A launch function declared with more than (workspace, workspaceSize, executor, stream).

ops-cv's aclnnGaussianBlur takes its phase-1 parameters again between the executor and the
stream, and checks them again before it runs (experimental/image/gaussian_blur/op_api/
aclnn_gaussian_blur.cpp). The emulator's custom package has an operator of that shape,
BoxBlurCustom (tests/emulator/src/emu_ops_custom_blur.c; header include/custom/
aclnn_box_blur_custom.h). ``pyaclnn.acl.aclnnBoxBlurCustom`` takes the C signature 1:1; ``Op.run``
passes phase 1's values by name. Results against torch (conv1d with a box kernel).
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl

torch = pytest.importorskip("torch")
LAUNCH = ["workspace", "workspaceSize", "executor", "src", "ksize", "scale", "borderType", "dst", "stream"]


@pytest.fixture(scope="module")
def blur_vendor(tmp_path_factory: pytest.TempPathFactory):
    from emulator.build import build_custom_opp
    return build_custom_opp(tmp_path_factory.mktemp("opp-blur"), ops=("AddCustom", "BoxBlurCustom"))


@pytest.fixture
def stream(emulator, emulator_home, blur_vendor, use_backend, monkeypatch):
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(blur_vendor))
    use_backend("acl", home=emulator_home)
    with pyaclnn.Device(0) as dev, dev.create_stream() as s:
        yield s


def box_blur(x: np.ndarray, k: int, scale: float) -> np.ndarray:
    """The oracle: scale * (sum of the k-wide window) along the last dim, zeros beyond the edges."""
    t = torch.from_numpy(x.reshape(-1, 1, x.shape[-1]))
    weight = torch.full((1, 1, k), scale, dtype=torch.float32)
    return torch.nn.functional.conv1d(t, weight, padding=k // 2).reshape(x.shape).numpy()


def test_the_c_layer_takes_the_launch_prototype_one_to_one(stream):
    x = np.random.default_rng(0).standard_normal((3, 10)).astype(np.float32)
    src, dst = pyaclnn.Tensor.from_numpy(x), pyaclnn.Tensor.from_numpy(np.zeros_like(x))
    assert list(inspect.signature(acl.aclnnBoxBlurCustom).parameters) == LAUNCH
    ksize = acl.aclCreateIntArray([5], 1)
    try:
        size, executor = acl.aclnnBoxBlurCustomGetWorkspaceSize(src, ksize, 0.2, 0, dst)
        acl.aclnnBoxBlurCustom(None, size, executor, src, ksize, 0.2, 0, dst, stream)
        stream.synchronize()
        np.testing.assert_allclose(dst.numpy(), box_blur(x, 5, 0.2), rtol=1e-6, atol=1e-6)
        # the launch checks its own arguments again, as aclnnGaussianBlur's CheckParams does
        _, executor = acl.aclnnBoxBlurCustomGetWorkspaceSize(src, ksize, 0.2, 0, dst)
        with pytest.raises(pyaclnn.AclnnParamInvalidError, match="borderType=3"):
            acl.aclnnBoxBlurCustom(None, 0, executor, src, ksize, 0.2, 3, dst, stream)
        with pytest.raises(TypeError, match="borderType"):  # a plain value is checked as phase 1's
            acl.aclnnBoxBlurCustom(None, 0, executor, src, ksize, 0.2, "reflect", dst, stream)
        with pytest.raises(TypeError):  # the four-argument call is not this operator's
            acl.aclnnBoxBlurCustom(None, 0, executor, stream)
        # refused before it ran (CheckParams returns before CommonOpExecutorRun): the executor and
        # the descriptors phase 1 got for the Tensors are still live, and it runs
        acl.aclrtMemset(dst.storage.addr, x.nbytes, 0, x.nbytes)
        acl.aclnnBoxBlurCustom(None, 0, executor, src, ksize, 0.2, 0, dst, stream)
        stream.synchronize()
        np.testing.assert_allclose(dst.numpy(), box_blur(x, 5, 0.2), rtol=1e-6, atol=1e-6)
    finally:
        acl.aclDestroyIntArray(ksize)


def test_op_run_passes_phase_1_values_by_name(stream):
    x = np.random.default_rng(1).standard_normal((2, 4, 9)).astype(np.float32)
    op = pyaclnn.Op("BoxBlurCustom", x, [3], 1 / 3, 0, np.zeros_like(x))
    assert op.workspace_size == 0
    op.run(stream)  # its aclIntArray, made by phase 1, is alive until phase 2 returned
    stream.synchronize()
    np.testing.assert_allclose(op["dst"].numpy(), box_blur(x, 3, 1 / 3), rtol=1e-6, atol=1e-6)
    info = pyaclnn._objects.backend.current().runtime.op_info("BoxBlurCustom")
    assert info.inputs == (0,) and info.outputs == (4,)  # roles from the launch's `aclTensor *dst`


def test_a_repeatable_executor_launches_its_moved_descriptors(stream):
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((4, 7)).astype(np.float32) for _ in range(2))
    src, other = pyaclnn.Tensor.from_numpy(a), pyaclnn.Tensor.from_numpy(b)
    dst = pyaclnn.Tensor.from_numpy(np.zeros_like(a))
    with pyaclnn.Op("BoxBlurCustom", src=src, ksize=[7], scale=0.5, borderType=0, dst=dst, repeatable=True) as op:
        op.run(stream)
        stream.synchronize()
        np.testing.assert_allclose(dst.numpy(), box_blur(a, 7, 0.5), rtol=1e-6, atol=1e-6)
        op.set_input("src", other)
        op.run(stream)
        stream.synchronize()
        np.testing.assert_allclose(dst.numpy(), box_blur(b, 7, 0.5), rtol=1e-6, atol=1e-6)


def test_a_launch_parameter_phase_1_lacks_is_named(emulator, emulator_home, use_backend, monkeypatch, tmp_path):
    from conftest import headers_package
    pkg = headers_package(tmp_path / "pkg", {"aclnn_odd.h":
        "aclnnStatus aclnnOddGetWorkspaceSize(const aclTensor *x, aclTensor *y, uint64_t *workspaceSize, "
        "aclOpExecutor **executor);\n"
        "aclnnStatus aclnnOdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, int64_t mode, "
        "aclrtStream stream);\n"})
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(pkg))
    use_backend("acl", home=emulator_home)
    with pytest.raises(pyaclnn.NotSupportedError, match="launch function takes mode, which its phase 1 does not"):
        pyaclnn.Op("Odd", np.ones(2, np.float32), np.ones(2, np.float32))
    assert list(inspect.signature(acl.aclnnOdd).parameters) == ["workspace", "workspaceSize", "executor", "mode",
                                                                "stream"]
