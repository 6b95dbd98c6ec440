"""aclnnMseLossBackward: the documentation sample in idiomatic pyaclnn.

Same data and output as mse_loss_backward_acl.py (the line-by-line port of the C++ sample).

Run it from the repository root with the Python of the virtual environment pyaclnn is
installed in (``.venv``, made by the README's set-up command)::

    .venv/bin/python examples/mse_loss_backward.py

It runs on an Ascend device when CANN finds one, else on the NumPy reference backend
(``PYACLNN_BACKEND=numpy`` chooses it, ``acl`` requires the device); the first line it
prints names the backend.
"""
import numpy as np

import pyaclnn

info = pyaclnn.backend_info()
print("backend: %s (SoC %s)" % (info["backend"], info["soc_name"]))

with pyaclnn.Device(0) as device, device.create_stream() as stream:
    grad_output = pyaclnn.Tensor.from_numpy(np.array([[0, 1], [2, 3]], np.float32))
    input = pyaclnn.Tensor.from_numpy(np.array([[0, 1], [2, 3]], np.float32))
    target = pyaclnn.Tensor.from_numpy(np.ones((2, 2), np.float32))
    out = pyaclnn.Tensor.zeros((2, 2), np.float32)

    executor = pyaclnn.MseLossBackward(grad_output, input, target, "mean", out)  # phase 1
    executor.run(stream)                                                       # phase 2
    stream.synchronize()

    for i, value in enumerate(out.numpy().ravel()):
        print("result[%d] is: %f" % (i, value))
