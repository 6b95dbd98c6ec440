"""Tensor descriptors over memory freed since they were made (a use after free the bounds cannot
see: the allocator handed the address out again, as large or larger).

An aclTensor holds a bare address (hicann/opbase aclTensor: SetStorageAddr / GetStorageAddr);
phase 2 launches the kernels on it with no check (opbase CommonOpExecutorRun), so a descriptor
made over an allocation that aclrtFree released, then launched after a later aclrtMalloc
returned the same address, reads and writes the new allocation: another object's memory on a
device. The reference has each descriptor remember the allocation it was made over (``Made``,
set by aclCreateTensor / aclInitTensor and again by a re-pointing call:
aclSetInputTensorAddr, aclSetOutputTensorAddr, aclSetTensorAddr, aclSetRawTensorAddr) and a
launch through one whose allocation is gone is a HazardError naming the descriptor's line, the
free and the new allocation. Host memory registered for a NumPy-in/out call is not tracked (each
call registers it anew: pyaclnn's own descriptors are re-pointed at it).
"""
from __future__ import annotations

from typing import Any, Callable

from .._core.sites import Site
from .memory import AddressSpace

_ALLOCATORS = {"device": "aclrtMalloc", "host": "aclrtMallocHost"}

# The allocation a descriptor was made (or re-pointed) over: (its serial, the address space's frees
# then: none since, nothing can be stale; the call that made or re-pointed it). Plain ints and no
# stack walk: aclCreateTensor runs for every tensor. Its line is the handle's, where handle sites are
# tracked (``pyaclnn check`` and its pytest plugin: NumpySession.track_sites).
Made = tuple[int, int, str]


def made_over(memory: AddressSpace, addr: int, api: str) -> Made | None:
    """What a descriptor at ``addr`` is made over now (None: no aclrtMalloc / aclrtMallocHost memory)."""
    alloc = memory.find(addr) if addr else None
    if alloc is None or alloc.kind == "registered":
        return None
    return alloc.serial, memory.frees, api


def _descs(args: tuple, names: tuple[str, ...]) -> list[tuple[str, Any]]:
    """(parameter name, descriptor) of every tensor and tensor-list member of a launch's args."""
    out: list[tuple[str, Any]] = []
    for i, a in enumerate(args):
        name = names[i] if i < len(names) else f"argument {i}"
        if getattr(a, "made", None) is not None:
            out.append((name, a))
        elif isinstance(a, tuple):
            out += [(f"{name}[{j}]", d) for j, d in enumerate(a) if getattr(d, "made", None) is not None]
    return out


def stale_tensor(memory: AddressSpace, args: tuple, names: tuple[str, ...],
                 site_of: Callable[[Any], Site | None]) -> str | None:
    """Why the first descriptor of ``args`` whose allocation was freed since it was made is stale
    (for the launch's hazard: "<name> ... a use after free"), or None: none is. ``site_of(desc)``:
    the user's line that made its handle, if known."""
    frees = memory.frees
    for name, desc in _descs(args, names):
        serial, made_frees, api = desc.made
        if made_frees == frees:
            continue
        alloc = memory.find(desc.addr)
        if alloc is None or alloc.serial == serial:
            continue  # (outside any allocation: the bounds check names it)
        site = site_of(desc)
        created = api in ("aclCreateTensor", "aclInitTensor")
        made = (f"made by {api}{f' at {site}' if site is not None else ''}" if created else
                f"re-pointed by {api}{f' (made at {site})' if site is not None else ''}")
        if site is None:
            made += " (`pyaclnn check` names its line)"
        freed = memory.free_of(serial)
        how = (f"memory allocated at {freed[2]}, which {freed[0]} at {freed[1]} freed"
               if freed is not None else "memory freed since")
        again = (f"{_ALLOCATORS.get(alloc.kind, alloc.kind)}{f' at {alloc.site}' if alloc.site else ''} "
                 f"handed the address out again ({alloc.size} bytes)")
        return (f"{name} at {desc.addr:#x} was {made} over {how}; {again}: the kernel would read or write "
                f"another allocation's memory (a use after free). Make a new aclTensor over the new memory, "
                f"or re-point it (aclSetInputTensorAddr / aclSetOutputTensorAddr)")
    return None
