"""The operators with a NumPy reference, asked by name: the catalog the lower layers look in.

The registry (which operators have a reference, and of which tier), the reference device (each
operator's spec and kernel) and the acl loader (which library a shipped header's operators are
in: its spec's ``REPO``) ask here. They never import the operators' folders: ``pyaclnn/ops/<op>/``
also holds the operator's public face (its class and NumPy-in/out function, over the object layer),
so the folders stand above every layer that asks. Their finder, ``pyaclnn.ops``, is plugged in
from the top instead: the package's ``__init__`` installs it when ``pyaclnn`` is imported, before
any module of the package can ask (importing ``pyaclnn.ops`` loads no operator).
"""
from __future__ import annotations

from typing import Any, Protocol

__all__ = ["Finder", "install", "names", "spec", "kernel", "tier", "aten_fits"]


class Finder(Protocol):
    """What the catalog asks of the operators' finder (the module ``pyaclnn.ops`` is one)."""

    def names(self) -> tuple[str, ...]: ...

    def spec(self, op: str) -> Any: ...

    def kernel(self, op: str) -> Any: ...

    def tier(self, op: str) -> str | None: ...

    def aten_fits(self, op: str, params: tuple[str, ...]) -> bool: ...


_finder: Finder | None = None


def install(finder: Finder) -> None:
    """Plug in the operators' finder (``pyaclnn/__init__.py`` does, with ``pyaclnn.ops``)."""
    global _finder
    _finder = finder


def _installed() -> Finder:
    if _finder is None:  # only if the package __init__ was bypassed: it installs the finder first
        raise RuntimeError("pyaclnn's operators are not installed in pyaclnn._registry.references "
                           "(pyaclnn/__init__.py installs pyaclnn.ops when pyaclnn is imported)")
    return _finder


def names() -> tuple[str, ...]:
    """The operators with an exact reference (a folder of pyaclnn/ops each), CANN names in folder order."""
    return _installed().names()


def spec(op: str) -> Any:
    """The spec of ``op``: its folder's spec.py, or the aten tier's generic spec of its table entry
    (KeyError without a reference)."""
    return _installed().spec(op)


def kernel(op: str) -> Any:
    """The NumPy backend's phase 2 of ``op``: its folder's kernel.py, or the aten tier's generic kernel."""
    return _installed().kernel(op)


def tier(op: str) -> str | None:
    """``"exact"``, ``"aten"`` or None: which tier of references computes ``op``."""
    return _installed().tier(op)


def aten_fits(op: str, params: tuple[str, ...]) -> bool:
    """Whether the aten tier's table has ``op`` for the prototype with C parameters ``params``."""
    return _installed().aten_fits(op, params)
