"""aclnnPreluBackward: the documentation sample in idiomatic pyaclnn.

Same data and output as prelu_backward_acl.py (the line-by-line port of the C++ sample).

Run it from the repository root with the Python of the virtual environment pyaclnn is
installed in (``.venv``, made by the README's set-up command)::

    .venv/bin/python examples/prelu_backward.py

It runs on an Ascend device when CANN finds one, else on the NumPy reference backend
(``PYACLNN_BACKEND=numpy`` chooses it, ``acl`` requires the device); the first line it
prints names the backend.
"""
import numpy as np

import pyaclnn

info = pyaclnn.backend_info()
print("backend: %s (SoC %s)" % (info["backend"], info["soc_name"]))

with pyaclnn.Device(0) as device, device.create_stream() as stream:
    input = pyaclnn.Tensor.from_numpy(np.arange(8, dtype=np.float32).reshape(4, 2))
    weight = pyaclnn.Tensor.from_numpy(np.array([0.5, 0.5], np.float32))
    grad_output = pyaclnn.Tensor.from_numpy(np.ones((4, 2), np.float32))
    grad_input = pyaclnn.Tensor.zeros((4, 2), np.float32)
    grad_weight = pyaclnn.Tensor.zeros(2, np.float32)

    executor = pyaclnn.PreluBackward(grad_output, input, weight, grad_input, grad_weight)
    executor.run(stream)
    stream.synchronize()

    for label, tensor in (("gradInput", grad_input), ("gradWeight", grad_weight)):
        for i, value in enumerate(tensor.numpy().ravel()):
            print("%s[%d] is: %f" % (label, i, value))
