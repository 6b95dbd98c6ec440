"""Storage: one aclrtMalloc allocation that tensors view; freed when its last tensor is closed, once the streams that use it have passed it."""
from __future__ import annotations

from . import lifetimes
from .device import Device, free_now
from .resource import Resource
from .._core.constants import ACL_MEM_MALLOC_HUGE_FIRST


class Storage(Resource):
    """One aclrtMalloc allocation (none for 0 bytes: aclrtMalloc rejects size 0), or device
    memory another framework owns (``Storage.borrowed``: ``owned`` is False, never freed)."""
    _what = "Storage"
    owned = True

    def __init__(self, device: Device, nbytes: int) -> None:
        device.use()
        self.device, self.nbytes = device, int(nbytes)
        self.addr = 0
        try:  # a KeyboardInterrupt between aclrtMalloc and _own must not lose the memory
            self.addr = device.runtime.malloc(self.nbytes, ACL_MEM_MALLOC_HUGE_FIRST) if self.nbytes else 0
            self.users = 0  # open tensors viewing this storage
            # streams with queued launches using this memory -> number of the last such launch
            # (pyaclnn._objects.lifetimes): the free waits for them, host reads and writes too
            self.uses: dict[lifetimes.Order, int] = {}
            self._own(device.backend, device, "storage", _free, device, self.addr, self.uses)
        except BaseException:
            if self.addr and not self._registered():
                device.runtime.free(self.addr)
            raise

    @classmethod
    def borrowed(cls, device: Device, addr: int, nbytes: int) -> "Storage":
        """``nbytes`` of device memory at ``addr`` that pyaclnn uses but never frees."""
        self = object.__new__(cls)
        self.device, self.addr, self.nbytes, self.users, self.owned = device, int(addr), int(nbytes), 0, False
        self.uses = {}  # as for owned memory: host reads and writes wait for queued launches
        self._own(device.backend, device, "storage", _forget)
        return self

    def release_user(self) -> None:
        self.users -= 1
        if self.users <= 0:
            self.close()


def _forget() -> None:
    """Closing borrowed memory frees nothing: its owner does."""


def _free(device: Device, addr: int, uses: dict) -> None:
    if addr:  # aclrtFree does not wait for queued work: the free waits for the streams instead
        lifetimes.free_after_uses(uses, free_now, device, addr)
