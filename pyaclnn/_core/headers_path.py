"""Where ``headers/`` is, and the integer constants it declares (no cffi needed)."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

_PKG = Path(__file__).resolve().parents[1]  # pyaclnn/
# Installed wheel: pyaclnn/_headers; source checkout or editable install: <repo>/headers.
_CANDIDATES = (_PKG / "_headers", _PKG.parent / "headers")
HEADER_DIR = next((p for p in _CANDIDATES if (p / "acl_base.h").is_file()), _CANDIDATES[-1])

_DEFINE = re.compile(r"^#define\s+(\w+)\s+(-?(?:0x[0-9a-fA-F]+|\d+))\s*$", re.M)
_MEMBER = re.compile(r"^\s+(\w+)\s*=\s*(-?(?:0x[0-9a-fA-F]+|\d+))\s*,?\s*$", re.M)


@lru_cache(maxsize=1)
def constants() -> dict[str, int]:
    """Every enum member and integer #define of headers/*.h, by name."""
    found: dict[str, int] = {}
    for header in sorted(HEADER_DIR.glob("*.h")):
        text = header.read_text(encoding="ascii")
        for name, value in _DEFINE.findall(text) + _MEMBER.findall(text):
            found[name] = int(value, 0)
    return found
