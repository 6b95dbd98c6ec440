"""aclnnCat's public face: ``pyaclnn.Op("Cat", [t0, t1, ...], dim, out)`` (no class or NumPy-in/out
function of its own: NumPy concatenates arrays itself), and the CANN documentation's sample."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..._core import env as _env
from ..._objects.device import Device
from ..._objects.executor import Op
from ..samples import print_values
from ..._objects.tensor import Tensor
from .spec import OP

__all__ = ["sample", "EXPECTED", "ALIAS", "IN_DOCTOR"]

ALIAS = "cat"     # its short name on the command line
IN_DOCTOR = True  # the page: on A2/A3, Atlas inference (310P) and training (910), every SoC emulated

# The page's sample (conversion/concat_d/docs/aclnnCat.md) prints out: float32 (2, 3) = 1..6 and
# (1, 3) = 7..9 concatenated on dim 0 into (3, 3), by hand 1..9.
EXPECTED: dict[str, tuple[float, ...]] = {"result": (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)}


def sample(emit: Callable[[str], None] = print) -> None:
    """The CANN documentation's C++ sample, printed as it prints."""
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        input1 = Tensor.from_numpy(np.array([1, 2, 3, 4, 5, 6], np.float32).reshape(2, 3))
        input2 = Tensor.from_numpy(np.array([7, 8, 9], np.float32).reshape(1, 3))
        out = Tensor.zeros((3, 3), np.float32)
        with Op(OP, [input1, input2], 0, out) as op:
            op.run(stream)
        stream.synchronize()
        print_values(emit, "result", out)
