"""aclnnAdd's public face: ``pyaclnn.Op("Add", self, other, alpha, out)`` (no class or NumPy-in/out
function of its own: NumPy adds arrays itself), and the CANN documentation's sample."""
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

ALIAS = "add"     # its short name on the command line
IN_DOCTOR = False  # the page: not on 310P (Atlas inference), so not a check of every install

# The page's sample (math/add/docs/ (the page of aclnnAdd and its in-place form)) prints no output: self + 1.2 * other
# on its data, by hand: 0 + 1.2, 1 + 1.2, 2 + 1.2, 3 + 2.4, 4 + 2.4, 5 + 2.4, 6 + 3.6, 7 + 3.6.
EXPECTED: dict[str, tuple[float, ...]] = {"result": (1.2, 2.2, 3.2, 5.4, 6.4, 7.4, 9.6, 10.6)}


def sample(emit: Callable[[str], None] = print) -> None:
    """The CANN documentation's C++ sample (float32 (4, 2), alpha the float 1.2), printed as it prints."""
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        self = Tensor.from_numpy(np.array([0, 1, 2, 3, 4, 5, 6, 7], np.float32).reshape(4, 2))
        other = Tensor.from_numpy(np.array([1, 1, 1, 2, 2, 2, 3, 3], np.float32).reshape(4, 2))
        out = Tensor.zeros((4, 2), np.float32)
        with Op(OP, self, other, np.float32(1.2), out) as op:  # float alphaValue = 1.2f: ACL_FLOAT
            op.run(stream)
        stream.synchronize()
        print_values(emit, "result", out)
