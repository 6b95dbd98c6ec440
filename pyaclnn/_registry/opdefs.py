"""The op definitions of a package (``aic-<soc>-ops-info.json``: each operator's input and output
names, in order, and its attribute count): what says which tensors of a generated header, whose
tensors are all const, are outputs (pyaclnn._registry.operators)."""
from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = ["OpDef", "normal_name", "read_opdefs"]


def normal_name(name: str) -> str:
    """gradLoss, grad_loss, weightOptional -> gradloss, gradloss, weight (for op-definition names)."""
    n = name.replace("_", "").lower()
    for suffix in ("optional", "ref"):
        if n.endswith(suffix) and len(n) > len(suffix):
            n = n[: -len(suffix)]
    return n


OpDef = tuple[list[str], list[str], int]  # input names, output names, attribute count


def read_opdefs(path: Path) -> dict[str, OpDef]:
    """{op type: its OpDef} of one ops-info json file (``inputN``/``outputN`` with a ``name``;
    ``attr.list``); {} if it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    defs: dict[str, OpDef] = {}
    for op, body in data.items() if isinstance(data, dict) else ():
        if not isinstance(body, dict):
            continue
        groups: dict[str, list[tuple[int, str]]] = {"input": [], "output": []}
        for key, value in body.items():
            m = re.fullmatch(r"(input|output)(\d+)", key)
            if m and isinstance(value, dict) and "name" in value:
                groups[m.group(1)].append((int(m.group(2)), str(value["name"])))
        attrs = body.get("attr", {}).get("list", "") if isinstance(body.get("attr"), dict) else ""
        defs[op] = ([n for _, n in sorted(groups["input"])], [n for _, n in sorted(groups["output"])],
                    len([a for a in str(attrs).split(",") if a.strip()]))
    return defs
