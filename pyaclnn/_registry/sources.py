"""Where each backend looks for operators' headers: pyaclnn's headers/, custom operator packages,
the installed CANN's aclnnop headers, and pyaclnn's signature table (last: every public operator,
known without CANN)."""
from __future__ import annotations

import configparser
import json
import os
from pathlib import Path
from .._core import env as _env
from .._core.headers_path import HEADER_DIR
from . import table as _signature_table
from .operators import Source


def pyaclnn_source() -> Source:
    return Source("pyaclnn", "pyaclnn headers/", (HEADER_DIR,))


def table_source() -> Source:
    """pyaclnn's signature table (nothing read until the registry searches it)."""
    return Source("table", "pyaclnn signature table", (_signature_table.PATH,))


def _vendor_source(root: Path, label: str) -> Source | None:
    include = root / "op_api" / "include"
    if not include.is_dir():
        return None
    opdefs = tuple(sorted((root / "op_impl" / "ai_core" / "tbe" / "config").glob("*/aic-*-ops-info.json")))
    return Source("custom", label, (include,), root / "op_api" / "lib" / "libcust_opapi.so", opdefs)


def custom_sources(opp: Path | None) -> list[Source]:
    """ASCEND_CUSTOM_OPP_PATH's vendor folders, then ``<opp>/vendors`` by config.ini load_priority."""
    found: list[Source] = []
    seen: set[Path] = set()

    def add(root: Path, label: str) -> None:
        key = root.resolve()
        if key in seen:
            return
        source = _vendor_source(root, label)
        if source is not None:
            seen.add(key)
            found.append(source)

    for entry in (os.environ.get("ASCEND_CUSTOM_OPP_PATH") or "").split(":"):
        if entry.strip():
            path = Path(entry.strip())
            add(path, f"custom package {path.name} (ASCEND_CUSTOM_OPP_PATH)")
    if opp is not None:
        config = opp / "vendors" / "config.ini"
        if config.is_file():
            parser = configparser.ConfigParser()
            try:
                parser.read_string("[vendors]\n" + config.read_text(encoding="utf-8", errors="replace"))
                priority = parser.get("vendors", "load_priority", fallback="")
            except configparser.Error:
                priority = ""
            for name in (n.strip() for n in priority.split(",")):
                if name:
                    add(opp / "vendors" / name, f"custom package {name} (vendors/config.ini)")
    return found


def builtin_dirs(home: Path) -> list[Path]:
    """The toolkit's aclnnop header folders (9.x: include/aclnnop; 8.x: the op_api folder)."""
    candidates = [home / "include" / "aclnnop",
                  home / "opp" / "built-in" / "op_impl" / "ai_core" / "tbe" / "op_api" / "include" / "aclnnop"]
    candidates += sorted(home.glob("*-linux/include/aclnnop"))
    out: list[Path] = []
    for c in candidates:
        if c.is_dir() and all(c.resolve() != o.resolve() for o in out):
            out.append(c)
    return out


def cann_sources(home: Path | None, layout: str | None) -> list[Source]:
    """Every source of the acl backend, in search order (``home`` None: no toolkit headers):
    custom packages, the installed CANN's own headers, pyaclnn's headers/, then its signature table."""
    opp_env = os.environ.get("ASCEND_OPP_PATH")
    opp = Path(opp_env) if opp_env else (home / "opp" if home is not None else None)
    sources = custom_sources(opp)
    dirs = builtin_dirs(home) if home is not None else []
    if dirs:
        assert home is not None and opp is not None
        opdefs = tuple(sorted((opp / "built-in" / "op_impl" / "ai_core" / "tbe" / "config").glob(
            "*/aic-*-ops-info.json")))
        sources.append(Source("builtin", f"CANN {layout or ''} aclnnop".replace("  ", " "), tuple(dirs), None, opdefs))
    sources += [pyaclnn_source(), table_source()]
    return sources


def reference_sources() -> list[Source]:
    """The NumPy backend's sources: pyaclnn's headers/ first (the operators it computes), then the
    custom packages and the aclnnop headers of the first CANN home that has them (found without
    loading anything), then the signature table, so that an operator they declare is known, though
    it cannot run there."""
    home = next((h for _, h in _env.cann_homes() if builtin_dirs(h)), None)
    return [pyaclnn_source()] + [s for s in cann_sources(home, None) if s.kind != "pyaclnn"]
