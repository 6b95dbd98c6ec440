"""aclnnForeachMulScalarList's public face: ``pyaclnn.Op("ForeachMulScalarList", [x0, x1, ...],
[s0, s1, ...], [out0, out1, ...])``, and the CANN documentation's sample.

No NumPy-in/out function: with NumPy arrays the operation is ``[x * s for x, s in zip(xs, scalars)]``,
and what the foreach form buys on a device (one launch for many tensors) buys nothing in NumPy; the
operator is for device tensors, through ``pyaclnn.Op`` (float scalars: ``np.float32`` values or
Python floats, which nnopbase converts to float32; int32 tensors take ints)."""
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

ALIAS = "foreach_mul"  # its short name on the command line
IN_DOCTOR = False      # A2, A3 and 950 only (the page: not 910 or 310P)

# The page's sample (foreach/foreach_mul_scalar_list/docs/) prints out1 = [1..6] (2, 3) * 1.2f and
# out2 = [70, 80, 90] (1, 3) * 2.2f, float32; by hand (the float32 products differ by < 3e-7).
EXPECTED: dict[str, tuple[float, ...]] = {"out1 result": (1.2, 2.4, 3.6, 4.8, 6.0, 7.2),
                                          "out2 result": (154.0, 176.0, 198.0)}


def sample(emit: Callable[[str], None] = print) -> None:
    """The CANN documentation's C++ sample (float32 tensors, float32 scalars), printed as it prints."""
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        input1 = Tensor.from_numpy(np.arange(1, 7, dtype=np.float32).reshape(2, 3))
        input2 = Tensor.from_numpy(np.array([[70, 80, 90]], np.float32))
        out1, out2 = Tensor.zeros((2, 3), np.float32), Tensor.zeros((1, 3), np.float32)
        with Op(OP, [input1, input2], [np.float32(1.2), np.float32(2.2)], [out1, out2]) as op:
            op.run(stream)
        stream.synchronize()
        print_values(emit, "out1 result", out1)
        print_values(emit, "out2 result", out2)
