"""What a module's function answered, call by call, while a test runs."""
from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest


def answers(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str) -> list:
    """Wrap ``module.<name>`` for the test: each call's return value is appended to the list
    returned (the call itself is unchanged)."""
    found: list = []
    real = getattr(module, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        found.append(real(*args, **kwargs))
        return found[-1]
    monkeypatch.setattr(module, name, spy)
    return found
