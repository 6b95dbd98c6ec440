"""Running a piece of a test in another thread."""
from __future__ import annotations

import threading
from typing import Any, Callable


def in_thread(fn: Callable[[], Any], timeout: float = 30) -> Any:
    """Run ``fn`` in a new thread; return its result or re-raise its exception here."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "thread hung"
    if "error" in box:
        raise box["error"]
    return box.get("value")
