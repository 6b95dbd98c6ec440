"""Regenerate pyaclnn/_core/constants.py: every enum member and integer #define of headers/*.h.

Usage: python tools/gen_constants.py [--check]
--check exits 1 (and writes nothing) when constants.py is out of date; a test runs it.

``pyaclnn.acl`` star-imports the module, so ``acl.ACL_FLOAT`` and the rest are real module
attributes that type checkers and IDEs see (they were added with ``globals().update`` before).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "pyaclnn" / "_core" / "constants.py"
# The same two forms pyaclnn._core.headers_path.constants() reads (the tests compare the two).
DEFINE = re.compile(r"^#define\s+(\w+)\s+(-?(?:0x[0-9a-fA-F]+|\d+))\s*$")
MEMBER = re.compile(r"^\s+(\w+)\s*=\s*(-?(?:0x[0-9a-fA-F]+|\d+))\s*,?\s*$")
HEAD = '''"""The integer constants of CANN's headers (enum members and #defines), for ``pyaclnn.acl``.

Generated from headers/*.h by tools/gen_constants.py: do not edit.
"""
'''


def render() -> str:
    lines = [HEAD.rstrip("\n")]
    seen: dict[str, int] = {}
    for header in sorted((ROOT / "headers").glob("*.h")):
        block: list[str] = []
        for line in header.read_text(encoding="ascii").splitlines():
            m = DEFINE.match(line) or MEMBER.match(line)
            if not m:
                continue
            name, value = m.group(1), int(m.group(2), 0)
            if name in seen:
                assert seen[name] == value, f"{name} declared twice with different values"
                continue
            seen[name] = value
            block.append(f"{name} = {value}")
        if block:
            lines += ["", f"# {header.name}", *block]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    new = render()
    if "--check" in argv:
        if not OUT.is_file() or OUT.read_text() != new:
            print("pyaclnn/_core/constants.py is out of date: run python tools/gen_constants.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
