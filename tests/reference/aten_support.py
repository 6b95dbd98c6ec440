"""Helpers of the aten-tier tests: the backend with the operators' signatures, and one call."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest



def aten_backend(use_backend: Callable[..., object], tmp_path: Path, soc: str = "Ascend910B") -> object:
    """The NumPy backend on ``soc``, its registry knowing the aten tier's operators from
    pyaclnn's shipped signature table (no CANN, no headers)."""
    backend = use_backend("numpy", soc=soc)
    if not backend.runtime.registry.declares("Softmax"):  # type: ignore[attr-defined]
        pytest.fail("the shipped signature table does not declare aclnnSoftmax")
    return backend


def call(op: str, *args: Any, outputs: tuple[str, ...] = ("out",)) -> Any:
    """``pyaclnn.Op(op, *args)`` run and synchronized; the named outputs read back (one: itself)."""
    import pyaclnn
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        with pyaclnn.Op(op, *args) as ex:
            ex.run(stream)
            stream.synchronize()
            got = tuple(None if ex[n] is None else [t.numpy() for t in ex[n]] if isinstance(ex[n], list)
                        else ex[n].numpy() for n in outputs)
    return got[0] if len(got) == 1 else got


def status_of(op: str, *args: Any) -> int:
    """The status phase 1 of ``op`` refuses ``args`` with (0: accepted)."""
    import pyaclnn
    try:
        with pyaclnn.Device(0):
            pyaclnn.Op(op, *args).close()
    except pyaclnn.AclError as exc:
        return int(exc.status)
    return 0


def bf16(a: np.ndarray) -> np.ndarray:
    import ml_dtypes
    return np.asarray(a, np.float32).astype(ml_dtypes.bfloat16)
