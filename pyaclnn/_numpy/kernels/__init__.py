"""Pure compute kernels of the NumPy reference backend, one module per operator.

The callers validate inputs (``pyaclnn._spec``) and skip empty ones; these functions only
compute, reading any-strided NumPy views and writing into the given (possibly strided) outputs.
Semantics and precision follow shared/reference/ops.md: fp16/bf16 are computed in fp32 and
rounded once (round-to-nearest-even) to the output dtype, sums are fp32, results are independent
of the number of threads.
"""
from .cross_entropy import cross_entropy_loss_grad
from .group_norm import group_norm_backward
from .mse import mse_loss_backward
from .prelu import prelu_backward

__all__ = ["mse_loss_backward", "group_norm_backward", "cross_entropy_loss_grad",
           "prelu_backward"]
