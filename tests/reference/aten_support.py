"""Helpers of the aten-tier tests: the backend with the operators' signatures, and one call."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from conftest import shared_folder


def signatures_home(tmp_path: Path) -> Path | None:
    """A CANN home whose aclnnop folder is the real op_api headers (shared/headers), for the
    signatures of the operators pyaclnn's headers/ do not declare; None when pyaclnn knows them
    without (a shipped signature table) and the shared folder is not there."""
    headers = shared_folder("headers")
    if headers is None:
        return None
    home = tmp_path / "cann"
    (home / "include").mkdir(parents=True)
    (home / "include" / "aclnnop").symlink_to(headers, target_is_directory=True)
    return home


def aten_backend(use_backend: Callable[..., object], tmp_path: Path, soc: str = "Ascend910B") -> object:
    home = signatures_home(tmp_path)
    backend = use_backend("numpy", soc=soc, home=home)
    if not backend.runtime.registry.declares("Softmax"):  # type: ignore[attr-defined]
        pytest.skip("no signatures of the aten tier's operators (shared/headers) on this machine")
    return backend


def call(op: str, *args: Any, outputs: tuple[str, ...] = ("out",)) -> Any:
    """``pyaclnn.Op(op, *args)`` run and synchronized; the named outputs read back (one: itself)."""
    import pyaclnn
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        with pyaclnn.Op(op, *args) as ex:
            ex.run(stream)
            stream.synchronize()
            got = tuple(None if ex[n] is None else ex[n].numpy() for n in outputs)
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
