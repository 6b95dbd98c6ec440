"""aclnnReduceSum's public face: ``pyaclnn.Op("ReduceSum", self, dims, keepDims, dtype, out)`` (no
class or NumPy-in/out function of its own: NumPy sums arrays itself), and the documented sample."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..._core import env as _env
from ..._objects.device import Device
from ..._objects.executor import Op
from ..samples import print_values
from ..._objects.tensor import Tensor
from ...dtypes import DType
from .spec import OP

__all__ = ["sample", "EXPECTED", "ALIAS", "IN_DOCTOR"]

ALIAS = "reduce_sum"  # its short name on the command line
IN_DOCTOR = True      # documented on every SoC pyaclnn emulates (not on Atlas 200I/500 A2, 310B)

# The page's sample (math/reduce_sum/docs/) prints no output: self = 0..7 as (4, 2) summed over dim 0
# into float32 (2,), by hand: 0 + 2 + 4 + 6 = 12, 1 + 3 + 5 + 7 = 16.
EXPECTED: dict[str, tuple[float, ...]] = {"result": (12.0, 16.0)}


def sample(emit: Callable[[str], None] = print) -> None:
    """The CANN documentation's C++ sample, printed as it prints."""
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        self = Tensor.from_numpy(np.arange(8, dtype=np.float32).reshape(4, 2))
        out = Tensor.zeros((2,), np.float32)
        with Op(OP, self, [0], False, DType.FLOAT, out) as op:
            op.run(stream)
        stream.synchronize()
        print_values(emit, "result", out)
