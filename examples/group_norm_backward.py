"""aclnnGroupNormBackward: the documentation sample in idiomatic pyaclnn.

Same data and output as group_norm_backward_acl.py (the line-by-line port of the C++ sample).

Run it from the repository root with the Python of the virtual environment pyaclnn is
installed in (``.venv``, made by the README's set-up command)::

    .venv/bin/python examples/group_norm_backward.py

It runs on an Ascend device when CANN finds one, else on the NumPy reference backend
(``PYACLNN_BACKEND=numpy`` chooses it, ``acl`` requires the device); the first line it
prints names the backend.
"""
import numpy as np

import pyaclnn

N, C, HxW, group = 2, 3, 4, 1

info = pyaclnn.backend_info()
print("backend: %s (SoC %s)" % (info["backend"], info["soc_name"]))

with pyaclnn.Device(0) as device, device.create_stream() as stream:
    grad_out = pyaclnn.Tensor.from_numpy(np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4))
    input = pyaclnn.Tensor.from_numpy(np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4))
    mean = pyaclnn.Tensor.from_numpy(np.array([[6.5], [18.5]], np.float32))
    rstd = pyaclnn.Tensor.from_numpy(np.array([[0.2896827], [0.2896827]], np.float32))
    gamma = pyaclnn.Tensor.from_numpy(np.ones(3, np.float32))
    grad_input = pyaclnn.Tensor.zeros((2, 3, 4), np.float32)
    grad_gamma = pyaclnn.Tensor.zeros(3, np.float32)
    grad_beta = pyaclnn.Tensor.zeros(3, np.float32)

    executor = pyaclnn.GroupNormBackward(grad_out, input, mean, rstd, gamma, N, C, HxW, group,
                                         (True, True, True), grad_input, grad_gamma, grad_beta)
    executor.run(stream)
    stream.synchronize()

    for label, tensor in (("gradInputResultData", grad_input),
                          ("gradGammaOutResultData", grad_gamma),
                          ("gradBetaOutResultData", grad_beta)):
        for i, value in enumerate(tensor.numpy().ravel()):
            print("%s[%d] is: %f" % (label, i, value))
