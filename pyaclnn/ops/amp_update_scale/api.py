"""aclnnAmpUpdateScale's public face: ``pyaclnn.Op("AmpUpdateScale", currentScale, growthTracker,
foundInf, growthFactor, backoffFactor, growthInterval, updatedScale, updatedGrowthTracker)``, and
the CANN documentation's sample."""
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

ALIAS = "amp_update_scale"  # its short name on the command line
IN_DOCTOR = False           # A2, A3 and 950 only (the page: not 910 or 310P)

# The page's sample (math/amp_update_scale/docs/) prints both results; its formula on its data, by
# hand: foundInf 0 and 900 + 1 != 1000, so the scale stays 65536 and the tracker becomes 901.
EXPECTED: dict[str, tuple[float, ...]] = {"updatedScale": (65536.0,), "updatedGrowthTracker": (901.0,)}


def sample(emit: Callable[[str], None] = print) -> None:
    """The CANN documentation's C++ sample (float32 scale, one-element tensors of shape (1,))."""
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        scale = Tensor.from_numpy(np.array([65536.0], np.float32))
        tracker = Tensor.from_numpy(np.array([900], np.int32))
        found = Tensor.from_numpy(np.array([0.0], np.float32))
        new_scale, new_tracker = Tensor.zeros((1,), np.float32), Tensor.zeros((1,), np.int32)
        with Op(OP, scale, tracker, found, 2.0, 0.5, 1000, new_scale, new_tracker) as op:
            op.run(stream)
        stream.synchronize()
        print_values(emit, "updatedScale", new_scale)
        print_values(emit, "updatedGrowthTracker", new_tracker)
