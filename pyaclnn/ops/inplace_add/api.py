"""aclnnInplaceAdd's public face: ``pyaclnn.Op("InplaceAdd", selfRef, other, alpha)`` (no class or
NumPy-in/out function of its own), and the CANN documentation's sample."""
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

ALIAS = "inplace_add"  # its short name on the command line
IN_DOCTOR = False      # aclnnAdd's sample checks the same kernel

# The page's sample (math/add/docs/aclnnAdd&aclnnInplaceAdd.md, its aclnnInplaceAdd part) prints
# selfRef after selfRef += 1.2 * other on the same data as aclnnAdd's: by hand, 0 + 1.2, ..., 7 + 3.6.
EXPECTED: dict[str, tuple[float, ...]] = {"result": (1.2, 2.2, 3.2, 5.4, 6.4, 7.4, 9.6, 10.6)}


def sample(emit: Callable[[str], None] = print) -> None:
    """The CANN documentation's C++ sample, printed as it prints."""
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        self_ref = Tensor.from_numpy(np.array([0, 1, 2, 3, 4, 5, 6, 7], np.float32).reshape(4, 2))
        other = Tensor.from_numpy(np.array([1, 1, 1, 2, 2, 2, 3, 3], np.float32).reshape(4, 2))
        with Op(OP, self_ref, other, np.float32(1.2)) as op:
            op.run(stream)
        stream.synchronize()
        print_values(emit, "result", self_ref)
