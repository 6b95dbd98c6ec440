"""Every dtype an element-wise entry of the aten table accepts at phase 1 is one its CPU kernel
computes (else phase 1 would accept a call that phase 2 cannot run): each entry whose C inputs are
all tensors runs once per accepted dtype, on small in-range values, through pyaclnn.Op. The
values are not checked here (the families' tests do that against their own expressions)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

pytest.importorskip("torch")

import pyaclnn  # noqa: E402
from aten_support import aten_backend  # noqa: E402
from pyaclnn import ops  # noqa: E402
from pyaclnn.dtypes import DType, to_numpy  # noqa: E402
from pyaclnn.ops._aten import entries  # noqa: E402
from pyaclnn._registry import Registry, reference_sources  # noqa: E402
from pyaclnn._spec import TensorMeta  # noqa: E402

SOC = "Ascend910B"


REGISTRY = Registry(reference_sources())


def tensor_only(op: str) -> bool:
    """Every C parameter a tensor, each an aten argument as it is or an output."""
    e, info = entries()[op], REGISTRY.get(op)
    return info is not None and all(k == "tensor" for k in info.kinds) and not e.kwargs and \
        all(isinstance(a, str) for a in e.args) and all(n for n in e.out) and isinstance(e.dtypes, tuple)


OPS = [op for op in sorted(entries()) if tensor_only(op)]


@pytest.fixture
def aten(use_backend: Callable[..., object], tmp_path: Path) -> object:
    return aten_backend(use_backend, tmp_path, soc=SOC)


def test_the_cases_cover_the_element_wise_families() -> None:
    assert len(OPS) >= 100


@pytest.mark.parametrize("op", OPS)
def test_each_accepted_dtype_runs(aten: object, op: str) -> None:
    entry = entries()[op]
    assert isinstance(entry.dtypes, tuple)
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        for dtype in entry.dtypes:
            if dtype not in (DType.COMPLEX64, DType.COMPLEX128):
                run_once(op, DType(dtype), stream)


def run_once(op: str, dtype: DType, stream: pyaclnn.Stream) -> None:
    """Phase 1 and 2 of ``op`` on inputs of ``dtype`` (of the first shape it takes)."""
    entry = entries()[op]
    ins = [n for n in entry.params if n in entry.args]
    npdt = to_numpy(dtype)
    for shape in ((2, 3), (3,), (1, 2, 3, 3), ()):  # the first shape the operator takes
        metas = [TensorMeta(shape, dtype) if n in ins else None for n in entry.params]
        try:
            rule = ops.spec(op)._rule(metas)  # the result's shape and dtype, for the outputs
            break
        except pyaclnn.AclnnParamInvalidError:
            continue
    else:
        return  # (none of these shapes is one it takes)
    n = int(np.prod(shape))
    if npdt.kind == "b":
        value = (np.arange(n) % 2 == 0).reshape(shape)
    elif npdt.kind in "iu":
        value = (np.arange(n) % 3 + 1).astype(npdt).reshape(shape)
    else:
        value = ((np.arange(n) % 7 + 1) / 8).astype(np.float32).astype(npdt).reshape(shape)
    args = []
    for name in entry.params:
        if name in ins:
            args.append(value.copy())
        else:
            out_shape, dt = rule[entry.out.index(name)]
            args.append(np.zeros(out_shape, to_numpy(dt)))
    try:
        ex = pyaclnn.Op(op, *args)
    except pyaclnn.AclnnParamInvalidError:  # (an in-place form whose result dtype is not self's)
        return
    with ex:
        ex.run(stream)  # NotSupportedError at the synchronize if the CPU kernel lacks the dtype
        stream.synchronize()
