"""aclnnCrossEntropyLossGrad in idiomatic pyaclnn: N = 4, C = 3, reduction "mean",
ignore_index -100, with a class weight.

Same data and output as cross_entropy_loss_grad_acl.py.

Run it from the repository root with the Python of the virtual environment pyaclnn is
installed in (``.venv``, made by the README's set-up command)::

    .venv/bin/python examples/cross_entropy_loss_grad.py

It runs on an Ascend device when CANN finds one, else on the NumPy reference backend
(``PYACLNN_BACKEND=numpy`` chooses it, ``acl`` requires the device); the first line it
prints names the backend.
"""
import numpy as np

import pyaclnn

logits = np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0], [2.0, -1.0, 0.0], [0.5, 0.5, 1.5]])
# log_softmax
log_prob = (logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))).astype(np.float32)

info = pyaclnn.backend_info()
print("backend: %s (SoC %s)" % (info["backend"], info["soc_name"]))

with pyaclnn.Device(0) as device, device.create_stream() as stream:
    grad_loss = pyaclnn.Tensor.from_numpy(np.array(1.0, np.float32))  # 0-D for "mean"
    log_prob = pyaclnn.Tensor.from_numpy(log_prob)
    target = pyaclnn.Tensor.from_numpy(np.array([1, 2, 0, 2], np.int64))
    weight = pyaclnn.Tensor.from_numpy(np.array([0.2, 0.3, 0.5], np.float32))
    out = pyaclnn.Tensor.zeros((4, 3), np.float32)

    executor = pyaclnn.CrossEntropyLossGrad(grad_loss, log_prob, target, weight, reduction="mean",
                                            ignore_index=-100, out=out)
    executor.run(stream)
    stream.synchronize()

    for i, value in enumerate(out.numpy().ravel()):
        print("result[%d] is: %f" % (i, value))
