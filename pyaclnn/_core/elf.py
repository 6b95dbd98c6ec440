"""Read an ELF shared object's DT_NEEDED entries and exported functions (pure Python, no
native code, nothing loaded).

The loader uses ``needed`` to preload a CANN library's dependencies by absolute path, so that no
LD_LIBRARY_PATH edit (which a running process cannot make take effect) is needed; the registry
and the op lookup use ``exported_functions`` to know which library exports an operator.
"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB = 0, 1, 5


def needed(path: str | Path) -> list[str]:
    """The DT_NEEDED sonames of ``path``, in order; [] if it has none or cannot be read."""
    try:
        return _needed(Path(path).read_bytes())
    except (OSError, ValueError, struct.error):
        return []


def _needed(data: bytes) -> list[str]:
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    is64, end = data[4] == 2, ("<" if data[5] == 1 else ">")
    if is64:
        (phoff,) = struct.unpack_from(end + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x36)
        phdr, dyn = end + "IIQQQQ", (end + "qQ", 16)
    else:
        (phoff,) = struct.unpack_from(end + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x2A)
        phdr, dyn = end + "IIII", (end + "iI", 8)

    loads: list[tuple[int, int, int]] = []  # (vaddr, file offset, size) of PT_LOAD segments
    dynamic = None
    for i in range(phnum):
        fields = struct.unpack_from(phdr, data, phoff + i * phentsize)
        if is64:
            p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = fields
        else:
            p_type, p_offset, p_vaddr, _paddr = fields
            (p_filesz,) = struct.unpack_from(end + "I", data, phoff + i * phentsize + 16)
        if p_type == _PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == _PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return []

    fmt, size = dyn
    name_offsets: list[int] = []
    strtab = 0
    for at in range(dynamic[0], dynamic[0] + dynamic[1], size):
        tag, value = struct.unpack_from(fmt, data, at)
        if tag == _DT_NULL:
            break
        if tag == _DT_NEEDED:
            name_offsets.append(value)
        elif tag == _DT_STRTAB:
            strtab = value
    # DT_STRTAB holds a virtual address: map it to a file offset through the PT_LOAD segments.
    base = next((off + strtab - vaddr for vaddr, off, sz in loads if vaddr <= strtab < vaddr + sz), strtab)
    return [data[base + n:data.index(b"\0", base + n)].decode() for n in name_offsets]


_SHT_DYNSYM = 11
_STB_GLOBAL, _STB_WEAK, _STT_FUNC = 1, 2, 2


def exported_functions(path: str | Path, prefix: str = "") -> set[str] | None:
    """The defined global functions of ``path``'s .dynsym starting with ``prefix``; None if the
    file cannot be read as ELF. Memory-mapped: only the symbol tables are touched."""
    import mmap
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _exports(data, prefix.encode())
    except (OSError, ValueError, struct.error):
        return None


def _exports(data: Any, prefix: bytes) -> set[str]:
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    is64, end = data[4] == 2, ("<" if data[5] == 1 else ">")
    if is64:
        (shoff,) = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
        shdr, sym, symsize = end + "IIQQQQIIQQ", end + "IBBHQQ", 24
    else:
        (shoff,) = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x2E)
        shdr, sym, symsize = end + "IIIIIIIIII", end + "IIIBBH", 16
    sections = [struct.unpack_from(shdr, data, shoff + i * shentsize) for i in range(shnum)]
    found: set[str] = set()
    for s in sections:
        if s[1] != _SHT_DYNSYM:
            continue
        offset, size, link = s[4], s[5], s[6]
        strtab = sections[link][4]
        for at in range(offset, offset + size, symsize):
            fields = struct.unpack_from(sym, data, at)
            if is64:
                name, info, _other, shndx = fields[0], fields[1], fields[2], fields[3]
            else:
                name, info, shndx = fields[0], fields[3], fields[5]
            if shndx == 0 or (info & 0xF) != _STT_FUNC or (info >> 4) not in (_STB_GLOBAL, _STB_WEAK):
                continue
            start = strtab + name
            if data[start:start + len(prefix)] == prefix:
                found.add(data[start:data.find(b"\0", start)].decode())
    return found
