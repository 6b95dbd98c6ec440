"""Every entry of the aten tier's table against the operator's signature (issue 24): the
parameter names and their count, the kinds each conversion takes, the roles (the outputs the
entry writes are the signature's outputs, and every output is written), the aten function it
names exists in the installed torch; and the table's own rules (one family per operator, no
exact reference shadowed)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from aten_support import aten_backend
from pyaclnn import ops
from pyaclnn.ops._aten import entries
from pyaclnn.ops._aten.table._entry import Conv, Dtype, Enum, OutDtype, OutShape

ENTRIES = entries()


@pytest.fixture
def registry(use_backend: Callable[..., object], tmp_path: Path) -> Any:
    return aten_backend(use_backend, tmp_path).runtime.registry  # type: ignore[attr-defined]


def test_the_table_is_split_by_family_and_shadows_no_exact_reference() -> None:
    assert len(ENTRIES) >= 30
    assert not set(ENTRIES) & set(ops.names())
    assert len({e.family for e in ENTRIES.values()}) >= 4


@pytest.mark.parametrize("op", sorted(ENTRIES))
def test_entry_matches_the_signature(registry: Any, op: str) -> None:
    entry = ENTRIES[op]
    info = registry.get(op)
    assert info is not None, f"no header declares aclnn{op}"
    assert info.names == entry.params, f"the entry was written for {entry.params}, the header declares {info.names}"
    assert info.has_reference
    kinds = dict(zip(info.names, info.kinds))
    for a in list(entry.args) + [v for _, v in entry.kwargs]:
        if isinstance(a, str):
            assert a in kinds, f"{a} is no parameter of aclnn{op}"
            assert kinds[a] != "unsupported"
        elif isinstance(a, (Dtype, Enum)):
            assert kinds[a.param] == "int", f"{a.param}: {kinds[a.param]} converted as an int"
        elif isinstance(a, OutShape):
            assert a.param in entry.out and kinds[a.param] == "tensor"
        elif isinstance(a, OutDtype):
            assert kinds[a.param] == "tensor"
        elif isinstance(a, Conv):
            assert a.param in kinds
    referenced = set(entry.referenced())
    for name in entry.params:  # every input reaches aten, or the notes say why not
        if name not in entry.out and name not in referenced:
            assert name in entry.notes, f"aclnn{op}'s {name} is neither passed to aten nor named in the notes"
    if info.outputs is None:
        pytest.skip(f"aclnn{op}'s roles: {info.roles_problem}")
    outputs = {info.names[i] for i in info.outputs}
    written = {n for n in entry.out if n is not None}
    assert set(entry.nullable) <= set(entry.params)
    assert written <= outputs, f"{written - outputs} are not outputs of aclnn{op}"
    assert outputs <= written, f"aclnn{op}'s outputs {outputs - written} would be left unwritten"


@pytest.mark.parametrize("op", sorted(ENTRIES))
def test_the_aten_function_exists(op: str) -> None:
    pytest.importorskip("torch")
    from pyaclnn.ops._aten.spec import aten_callable
    assert callable(aten_callable(ENTRIES[op]))
