"""The layer contract: ``pyaclnn._runtime`` is complete, and both runtimes satisfy it, family by family.

The contract is one Protocol per C object family (``pyaclnn/_runtime/<family>.py``), and each
backend implements each family in a module of the same name (``pyaclnn/_acl/runtime/<family>.py``,
``pyaclnn/_numpy/runtime/<family>.py``) with the same parameters (names, kinds, defaults). Every
method the two runtimes share is in the contract (nothing of it lives outside); what only one
runtime has is the declared extension (``HostRuntime`` for the NumPy backend) or named here. mypy
checks the types (tests/project/test_types.py, at each runtime's ``_conforms``).
"""
from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest

from pyaclnn._acl.runtime import AclRuntime
from pyaclnn._numpy.runtime import NumpyRuntime
from pyaclnn._runtime import HostRuntime, Runtime

FAMILIES = ("session", "streams", "memory", "descriptors", "executors", "capture")
ACL_ONLY = {"session": {"loading_hint"}}  # used where the acl runtime is made (pyaclnn._objects.backend)
# The NumPy backend's own: HostRuntime's members, each in its family, and its descriptors' helper.
NUMPY_ONLY = {"session": {"live_counts", "track_sites", "live_handles"},
              "memory": {"host_view", "register_host", "unregister_host"},
              "descriptors": {"meta"}, "executors": {"executor_kernel"}}
BACKENDS = {"acl": ("Acl", ACL_ONLY), "numpy": ("Numpy", NUMPY_ONLY)}


def _own(cls: type) -> dict[str, Any]:
    """Public methods and properties a class itself defines (not the Protocol machinery's)."""
    return {name: value for name, value in vars(cls).items()
            if not name.startswith("_") and (inspect.isfunction(value) or isinstance(value, property))}


def _members(cls: type) -> dict[str, Any]:
    """The same, over the class and its bases (a runtime is its families stacked)."""
    found: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        found.update(_own(base))
    return found


def _params(fn: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def _protocol(family: str) -> type:
    return getattr(importlib.import_module(f"pyaclnn._runtime.{family}"), family.capitalize())


def _mixin(backend: str, family: str) -> type:
    prefix = BACKENDS[backend][0]
    return getattr(importlib.import_module(f"pyaclnn._{backend}.runtime.{family}"), prefix + family.capitalize())


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("family", FAMILIES)
def test_each_backend_implements_each_family_in_its_module_of_that_name(backend, family):
    """File for file: the backend's module of a family defines exactly that family's members (and
    its declared extension), with the contract's parameters."""
    contract = _own(_protocol(family))
    assert contract or family == "executors"  # executors' registry is an attribute (below)
    mixin = _mixin(backend, family)
    own = _own(mixin)
    attributes = {n for n, m in contract.items() if isinstance(m, property)}  # class attributes on a runtime
    assert set(own) | (attributes & set(dir(mixin))) == set(contract) | BACKENDS[backend][1].get(family, set()), \
        sorted(set(own) ^ set(contract))
    for name, member in contract.items():
        if isinstance(member, property):
            assert not inspect.isfunction(getattr(mixin, name)), name
            continue
        assert _params(getattr(mixin, name)) == _params(member), (backend, family, name)


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
    assert "registry" in _protocol("executors").__annotations__
    assert set(contract) == set().union(*(_own(_protocol(f)) for f in FAMILIES))  # Runtime is the families


def test_what_both_runtimes_share_is_the_contract():
    shared = set(_members(AclRuntime)) & set(_members(NumpyRuntime))
    shared |= {n for n in ("name", "handle_class", "null") if hasattr(AclRuntime, n) and hasattr(NumpyRuntime, n)}
    assert shared == set(_members(Runtime)), sorted(shared ^ set(_members(Runtime)))
    assert set(_members(AclRuntime)) - set(_members(Runtime)) == set().union(*ACL_ONLY.values())
    host = set(_own(HostRuntime))
    assert set(_members(NumpyRuntime)) - set(_members(Runtime)) == set().union(*NUMPY_ONLY.values())
    assert host == set().union(*NUMPY_ONLY.values()) - {"meta"}  # meta: its own helper
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
