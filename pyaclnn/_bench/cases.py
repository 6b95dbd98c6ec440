"""The four benchmark cases: inputs, the pyaclnn call, the torch peer, bytes moved.

Each builder takes the sizes, so the large tables (``make_cases``) and the small-call table
(``small.py``) time the same calls against the same aten peers."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

F32 = np.float32


@dataclass
class Case:
    """One operator benchmark: inputs, the pyaclnn call, the torch call, and its byte count."""
    name: str
    label: str
    params: dict[str, Any]
    make: Callable[[np.random.Generator], dict[str, Any]]
    run_pyaclnn: Callable[[dict[str, Any]], Any]
    peer_ops: tuple[str, ...]
    run_torch: Callable[[dict[str, Any]], Any]  # gets the inputs as torch tensors (shared memory)
    # Bytes that must move: each input element read once, each output element written once.
    bytes_read: Callable[[dict[str, Any]], int]
    bytes_written: Callable[[dict[str, Any]], int]
    # Steady state: the outputs as (shape, dtype), in the executor's parameter order; phase 1 on
    # pyaclnn Tensors (inputs by name, preallocated outputs); the torch outputs and the aten
    # out= call writing into them (both None: aten has no out= overload for the op).
    steady_outputs: Callable[[dict[str, Any]], list[tuple[tuple[int, ...], Any]]] | None = None
    plan_pyaclnn: Callable[[dict[str, Any], list[Any]], Any] | None = None
    peer_out_ops: tuple[str, ...] = ()
    torch_outputs: Callable[[dict[str, Any]], list[Any]] | None = None
    run_torch_out: Callable[[dict[str, Any], list[Any]], Any] | None = None
    inputs: dict[str, Any] = field(default_factory=dict)


def _nbytes(*arrays: Any) -> int:
    return sum(int(a.nbytes) for a in arrays if a is not None)


def _outputs(result: Any) -> list[Any]:
    items = result if isinstance(result, (tuple, list)) else (result,)
    return [r for r in items if r is not None]


def mse_case(shape: tuple[int, ...]) -> Case:

    def make(rng: np.random.Generator) -> dict[str, Any]:
        return {k: rng.standard_normal(shape, dtype=F32) for k in ("grad", "x", "y")}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        import pyaclnn
        return pyaclnn.mse_loss_backward(i["grad"], i["x"], i["y"], "none")

    def run_torch(t: dict[str, Any]) -> Any:
        import torch
        return torch.ops.aten.mse_loss_backward(t["grad"], t["x"], t["y"], 0)  # 0: reduction none

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        import pyaclnn
        return pyaclnn.MseLossBackward(t["grad"], t["x"], t["y"], "none", outs[0])

    def torch_outputs(t: dict[str, Any]) -> list[Any]:
        import torch
        return [torch.empty_like(t["x"])]

    def run_torch_out(t: dict[str, Any], outs: list[Any]) -> Any:
        import torch
        return torch.ops.aten.mse_loss_backward.grad_input(t["grad"], t["x"], t["y"], 0, grad_input=outs[0])

    n = math.prod(shape)
    return Case("mse", f"MseLossBackward none, {n} elements", {"shape": shape, "reduction": "none"},
                make, run_pyaclnn, ("mse_loss_backward",), run_torch,
                # read grad, x, y; write out
                bytes_read=lambda i: _nbytes(i["grad"], i["x"], i["y"]),
                bytes_written=lambda i: i["x"].nbytes,
                steady_outputs=lambda i: [(shape, F32)], plan_pyaclnn=plan_pyaclnn,
                peer_out_ops=("mse_loss_backward.grad_input",), torch_outputs=torch_outputs,
                run_torch_out=run_torch_out)


def group_norm_case(N: int, C: int, H: int, W: int, G: int) -> Case:
    HxW = H * W

    def make(rng: np.random.Generator) -> dict[str, Any]:
        x = rng.standard_normal((N, C, H, W), dtype=F32)
        dy = rng.standard_normal((N, C, H, W), dtype=F32)
        groups = x.reshape(N, G, -1)
        mean = groups.mean(axis=-1, dtype=np.float64)
        rstd = 1.0 / np.sqrt(groups.var(axis=-1, dtype=np.float64) + 1e-5)
        gamma = rng.uniform(0.5, 1.5, C).astype(F32)
        return {"dy": dy, "x": x, "mean": mean.astype(F32), "rstd": rstd.astype(F32), "gamma": gamma}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        import pyaclnn
        return pyaclnn.group_norm_backward(i["dy"], i["x"], i["mean"], i["rstd"], i["gamma"], N, C, HxW, G)

    def run_torch(t: dict[str, Any]) -> Any:
        import torch
        return torch.ops.aten.native_group_norm_backward(t["dy"], t["x"], t["mean"], t["rstd"], t["gamma"],
                                                         N, C, HxW, G, [True, True, True])

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        import pyaclnn
        return pyaclnn.GroupNormBackward(t["dy"], t["x"], t["mean"], t["rstd"], t["gamma"], N, C, HxW, G,
                                         (True, True, True), *outs)

    def torch_outputs(t: dict[str, Any]) -> list[Any]:
        import torch
        return [torch.empty_like(t["x"]), torch.empty_like(t["gamma"]), torch.empty_like(t["gamma"])]

    def run_torch_out(t: dict[str, Any], outs: list[Any]) -> Any:
        import torch
        return torch.ops.aten.native_group_norm_backward.out(t["dy"], t["x"], t["mean"], t["rstd"], t["gamma"],
                                                             N, C, HxW, G, [True, True, True],
                                                             out0=outs[0], out1=outs[1], out2=outs[2])

    return Case("group_norm", f"GroupNormBackward N={N} C={C} HxW={HxW} G={G}",
                {"N": N, "C": C, "HxW": HxW, "group": G, "output_mask": [True, True, True]},
                make, run_pyaclnn, ("native_group_norm_backward",), run_torch,
                # read dy, x, mean, rstd, gamma; write grad_input (N*C*HxW), grad_gamma, grad_beta (C).
                # One read of dy and x suffices: a (n, group) slab (C/G*HxW elements) fits in cache,
                # so its sums and its grad_input can be made in the same pass.
                bytes_read=lambda i: _nbytes(i["dy"], i["x"], i["mean"], i["rstd"], i["gamma"]),
                bytes_written=lambda i: i["x"].nbytes + 2 * i["gamma"].nbytes,
                steady_outputs=lambda i: [((N, C, H, W), F32), ((C,), F32), ((C,), F32)],
                plan_pyaclnn=plan_pyaclnn, peer_out_ops=("native_group_norm_backward.out",),
                torch_outputs=torch_outputs, run_torch_out=run_torch_out)


def cross_entropy_case(N: int, C: int) -> Case:

    def make(rng: np.random.Generator) -> dict[str, Any]:
        logits = rng.standard_normal((N, C), dtype=F32)
        logits -= np.log(np.exp(logits).sum(axis=1, dtype=F32, keepdims=True))  # log_softmax, in place
        # grad_loss 0-D (reduction mean); total_weight is aten's (N: no weight, nothing ignored)
        return {"grad_loss": np.array(rng.uniform(0.5, 1.5), F32), "log_prob": logits,
                "target": rng.integers(0, C, N, dtype=np.int64), "total_weight": np.array(N, F32)}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        import pyaclnn
        return pyaclnn.cross_entropy_loss_grad(i["grad_loss"], i["log_prob"], i["target"], reduction="mean")

    def run_torch(t: dict[str, Any]) -> Any:
        import torch
        # cross_entropy = nll_loss(log_softmax(z)); its backward is this pair of aten kernels.
        g = torch.ops.aten.nll_loss_backward(t["grad_loss"], t["log_prob"], t["target"], None, 1, -100,
                                             t["total_weight"])
        return torch.ops.aten._log_softmax_backward_data(g, t["log_prob"], 1, torch.float32)

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        import pyaclnn
        return pyaclnn.CrossEntropyLossGrad(t["grad_loss"], t["log_prob"], t["target"], reduction="mean",
                                            out=outs[0])

    def torch_outputs(t: dict[str, Any]) -> list[Any]:
        import torch
        # the final gradient, and nll_loss_backward's result (aten's intermediate) before it
        return [torch.empty_like(t["log_prob"]), torch.empty_like(t["log_prob"])]

    def run_torch_out(t: dict[str, Any], outs: list[Any]) -> Any:
        import torch
        g = torch.ops.aten.nll_loss_backward.grad_input(t["grad_loss"], t["log_prob"], t["target"], None, 1,
                                                        -100, t["total_weight"], grad_input=outs[1])
        return torch.ops.aten._log_softmax_backward_data.out(g, t["log_prob"], 1, torch.float32, out=outs[0])

    return Case("cross_entropy", f"CrossEntropyLossGrad N={N} C={C} mean",
                {"N": N, "C": C, "reduction": "mean", "target_dtype": "int64", "weight": None},
                make, run_pyaclnn, ("nll_loss_backward", "_log_softmax_backward_data"), run_torch,
                # read log_prob, target, grad_loss; write out (N x C)
                bytes_read=lambda i: _nbytes(i["log_prob"], i["target"], i["grad_loss"]),
                bytes_written=lambda i: i["log_prob"].nbytes,
                steady_outputs=lambda i: [((N, C), F32)], plan_pyaclnn=plan_pyaclnn,
                peer_out_ops=("nll_loss_backward.grad_input", "_log_softmax_backward_data.out"),
                torch_outputs=torch_outputs, run_torch_out=run_torch_out)


def prelu_case(shape: tuple[int, ...]) -> Case:
    C = shape[1]
    per_channel = (1, C) + (1,) * (len(shape) - 2)  # the weight as aten's kernel takes it
    other_dims = tuple(d for d in range(len(shape)) if d != 1)

    def make(rng: np.random.Generator) -> dict[str, Any]:
        return {"dy": rng.standard_normal(shape, dtype=F32), "x": rng.standard_normal(shape, dtype=F32),
                "weight": rng.uniform(0.05, 0.3, C).astype(F32)}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        import pyaclnn
        return pyaclnn.prelu_backward(i["dy"], i["x"], i["weight"])

    def run_torch(t: dict[str, Any]) -> Any:
        # The kernel returns the weight gradient at the input's shape; autograd then sums it to
        # the weight's shape (sum_to_size). Both are needed for the same two outputs.
        import torch
        gi, gw = torch.ops.aten._prelu_kernel_backward(t["dy"], t["x"], t["weight"].view(per_channel))
        return gi, gw.sum(dim=other_dims)

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        import pyaclnn
        return pyaclnn.PreluBackward(t["dy"], t["x"], t["weight"], *outs)

    return Case("prelu", f"PreluBackward {'x'.join(map(str, shape))}, {C} weights",
                {"shape": shape, "weights": C},
                make, run_pyaclnn, ("_prelu_kernel_backward", "sum"), run_torch,
                # read dy, x, weight; write grad_input, grad_weight (C)
                bytes_read=lambda i: _nbytes(i["dy"], i["x"], i["weight"]),
                bytes_written=lambda i: i["x"].nbytes + i["weight"].nbytes,
                # aten has no out= overload of _prelu_kernel_backward: the peer allocates
                steady_outputs=lambda i: [(shape, F32), ((C,), F32)], plan_pyaclnn=plan_pyaclnn)


def make_cases(quick: bool) -> list[Case]:
    if quick:
        return [mse_case((64, 64)), group_norm_case(2, 8, 4, 4, 4), cross_entropy_case(16, 100),
                prelu_case((2, 8, 4, 4))]
    return [mse_case((4096, 4096)),  # 2^24 elements
            group_norm_case(32, 256, 56, 56, 32), cross_entropy_case(4096, 32000), prelu_case((32, 256, 56, 56))]


CASE_NAMES = ("mse", "group_norm", "cross_entropy", "prelu")


