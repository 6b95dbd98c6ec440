"""The layer contract: ``pyaclnn._runtime.Runtime`` is complete, and both runtimes satisfy it.

Every member of the Protocol exists on both runtime classes with the same parameters (names,
kinds, defaults); every method the two runtimes share is in the Protocol (nothing of the
contract lives outside it); what only one runtime has is the declared extension
(``HostRuntime`` for the NumPy backend) or named here. mypy checks the types
(tests/project/test_types.py, at each runtime's ``_conforms``).
"""
from __future__ import annotations

import inspect
from typing import Any

import pytest

from pyaclnn._acl.runtime import AclRuntime
from pyaclnn._numpy.runtime import NumpyRuntime
from pyaclnn._runtime import HostRuntime, Runtime

ACL_ONLY = {"loading_hint"}  # used where the acl runtime is made (pyaclnn._objects.backend), before the contract


def _members(cls: type) -> dict[str, Any]:
    """Public methods and properties a class defines (its own, not the Protocol machinery's)."""
    return {name: value for name, value in vars(cls).items()
            if not name.startswith("_") and (inspect.isfunction(value) or isinstance(value, property))}


def _params(fn: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("cls", [AclRuntime, NumpyRuntime])
def test_each_runtime_has_every_member_of_the_contract_with_its_parameters(cls):
    contract = _members(Runtime)
    assert len(contract) > 80
    for name, member in contract.items():
        assert hasattr(cls, name), f"{cls.__name__} lacks {name}"
        if isinstance(member, property):  # an attribute: a class attribute of the runtime
            assert not inspect.isfunction(getattr(cls, name)), name
            continue
        assert _params(getattr(cls, name)) == _params(member), (cls.__name__, name)
    assert "registry" in Runtime.__annotations__


def test_what_both_runtimes_share_is_the_contract():
    shared = set(_members(AclRuntime)) & set(_members(NumpyRuntime))
    shared |= {n for n in ("name", "handle_class", "null") if hasattr(AclRuntime, n) and hasattr(NumpyRuntime, n)}
    assert shared == set(_members(Runtime)), sorted(shared ^ set(_members(Runtime)))
    assert set(_members(AclRuntime)) - set(_members(Runtime)) == ACL_ONLY
    host = set(_members(HostRuntime))
    assert set(_members(NumpyRuntime)) - set(_members(Runtime)) == host | {"meta"}  # meta: its own helper
    for name in host:
        assert _params(getattr(NumpyRuntime, name)) == _params(getattr(HostRuntime, name)), name


def test_both_runtime_instances_satisfy_it(emulator):
    """The runtime objects themselves (the registry is an instance attribute)."""
    from pyaclnn._objects import backend as _backend
    acl_runtime = _backend.current().runtime
    assert isinstance(acl_runtime, AclRuntime)
    for runtime in (acl_runtime, NumpyRuntime("Ascend910B")):
        for name in list(_members(Runtime)) + ["registry"]:
            assert hasattr(runtime, name), (type(runtime).__name__, name)
        assert runtime.registry.declares("MseLossBackward")
