"""Benchmark cases: inputs, the pyaclnn call, the torch peer, bytes moved.

Each operator builds its own (pyaclnn/ops/<op>/api.py: ``bench_case(quick)`` for the large tables,
``small_case(elements)`` for the small-call table, both from one builder that takes the sizes), so
both time the same calls against the same aten peers. This module holds the ``Case`` record and
finds the operators' cases."""
from __future__ import annotations

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


def nbytes(*arrays: Any) -> int:
    return sum(int(a.nbytes) for a in arrays if a is not None)


def _outputs(result: Any) -> list[Any]:
    items = result if isinstance(result, (tuple, list)) else (result,)
    return [r for r in items if r is not None]


def make_cases(quick: bool) -> list[Case]:
    """Each operator's large-table case (its api.py's ``bench_case``), in pyaclnn/ops order."""
    from .. import ops
    return [api.bench_case(quick) for api in ops.apis().values() if hasattr(api, "bench_case")]


def small_cases(elements: int) -> list[Case]:
    """Each operator's small-call case on inputs of ``elements`` elements (its ``small_case``)."""
    from .. import ops
    return [api.small_case(elements) for api in ops.apis().values() if hasattr(api, "small_case")]


def case_names() -> tuple[str, ...]:
    """The names of ``bench --case``: each operator's short name (its api.py's ``ALIAS``)."""
    from .. import ops
    return tuple(api.ALIAS for api in ops.apis().values() if hasattr(api, "bench_case"))


def __getattr__(name: str) -> Any:
    if name == "CASE_NAMES":  # found on first use: importing this module imports no operator
        return case_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
