"""What ``python -m pyaclnn doctor`` knows about the CANN install, gathered without raising.

``report()`` walks the same path the acl backend takes (discovery, dlopen of the three
libraries, every declared function, aclInit, devices, SoC, version) and records each step's
result or its error string, so a broken install is described rather than thrown. It loads
the libraries independently of ``_lib.get()`` (which stops at the first failure), reusing the
backend's handles when they are already loaded.

aclInit: the report gives its reference back with aclFinalizeReference (which finalizes only
when it was the last); without that function it calls aclFinalize only if its own aclInit
initialised CANN (status 0), never when CANN was already initialised (100002).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from .._core.constants import ACL_ERROR_REPEAT_INITIALIZE
from .._core import env as _env
from .._registry import table as _signature_table
from .._registry.operators import Registry, references
from .._registry.sources import cann_sources, pyaclnn_source, table_source
from . import _lib, _loader
from ._ffi import FUNCTIONS, ffi
from ._ops import builtin_libraries

ROLES = ("runtime", "nnopbase", "opapi")

__all__ = ["report", "ROLES"]


def _err(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def _probe(fn: Callable[[], Any]) -> dict[str, Any]:
    try:
        return {"value": fn(), "error": None}
    except Exception as exc:  # noqa: BLE001 - a report never raises
        return {"value": None, "error": _err(exc)}


def _empty_libraries(error: str) -> dict[str, dict[str, Any]]:
    return {role: {"path": None, "loaded": False, "error": error} for role in ROLES}


def _load_each(found: _loader.Discovery) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """dlopen each library on its own (dependencies first), so one failure does not hide the
    others; then preload what CANN opens by name (``handles["by_name_errors"]``)."""
    existing = _lib.loaded()
    libraries: dict[str, dict[str, Any]] = {}
    handles: dict[str, Any] = {}
    done: dict[str, Any] = {}
    for role in ROLES:
        path = getattr(found, role)
        libraries[role] = {"path": None if path is None else str(path), "loaded": False, "error": None}
        if existing is not None and existing.found.home == found.home:
            handles[role] = {"runtime": existing.rt, "nnopbase": existing.nn, "opapi": existing.op}[role]
            libraries[role]["loaded"] = True
            continue
        try:
            handles[role] = _loader.open_library(path, found.search_dirs, done, found.leave)
        except Exception as exc:  # noqa: BLE001 - OSError from dlopen, or anything odd
            libraries[role]["error"] = _err(exc)
            continue
        libraries[role]["loaded"] = True
    if existing is not None and existing.found.home == found.home:
        handles["by_name_errors"] = dict(existing.by_name_errors)
        handles["by_name_skipped"] = dict(existing.by_name_skipped)
    else:
        handles["by_name_skipped"] = {}
        handles["by_name_errors"] = _loader.preload_by_name(found, done, handles["by_name_skipped"])
        _kept.append(done)  # a report's preloads stay loaded, as the backend's do
    return libraries, handles


_kept: list[dict[str, Any]] = []


def _by_name(found: _loader.Discovery, errors: dict[str, str], skipped: dict[str, str]) -> dict[str, dict[str, Any]]:
    """{file name: {path, loaded, error, skipped}} of the libraries CANN opens by name found in the
    install (``skipped``: why one was not preloaded, e.g. another chip's runtime implementation)."""
    return {p.name: {"path": str(p), "loaded": p.name not in errors and p.name not in skipped,
                     "error": errors.get(p.name), "skipped": skipped.get(p.name)}
            for p in found.by_name}


def _symbols(handles: dict[str, Any]) -> dict[str, dict[str, bool | None]]:
    """{role: {function: found}}; None for every function of a library that did not load."""
    out: dict[str, dict[str, bool | None]] = {}
    for role in ROLES:
        handle = handles.get(role)
        out[role] = {name: (None if handle is None else _lib.has(handle, name)) for name in FUNCTIONS[role]}
    return out


def _runtime_probes(found: _loader.Discovery, handles: dict[str, Any], symbols: dict[str, Any]) -> dict[str, Any]:
    from .runtime import AclRuntime

    result: dict[str, Any] = {
        "acl_init": {"ok": None, "status": None, "error": "not attempted: the libraries did not load"},
        "cann_version": {"value": None, "error": "not attempted"},
        "device_count": {"value": None, "error": "not attempted"},
        "soc_name": {"value": None, "error": "not attempted"},
    }
    if not set(ROLES) <= set(handles):
        return result
    missing_rt = [n for n, ok in symbols["runtime"].items() if not ok]
    if "aclInit" in missing_rt:
        result["acl_init"] = {"ok": False, "status": None, "error": "aclInit is not exported by the runtime library"}
        return result
    lib = _lib.loaded()
    if lib is None or lib.found.home != found.home:
        lib = _lib.Lib(found, _loader.Loaded(handles["runtime"], handles["nnopbase"], handles["opapi"], []))
    try:
        runtime = AclRuntime(lib)
    except Exception as exc:  # noqa: BLE001 - an op pair missing: AttributeError
        runtime = None
        init_error = _err(exc)
    try:
        status = int(lib.rt.aclInit(ffi.NULL))
    except Exception as exc:  # noqa: BLE001
        result["acl_init"] = {"ok": False, "status": None, "error": _err(exc)}
        return result
    ok = status in (0, ACL_ERROR_REPEAT_INITIALIZE)
    message = None if ok else (_lib.recent_error() or "")
    missing = [] if ok else _loader.missing_libraries(found, *handles.get("by_name_errors", {}).values(),
                                                      message or "")
    result["acl_init"] = {"ok": ok, "status": status,
                          "error": None if ok else f"aclInit returned {status}" + (f": {message}" if message else ""),
                          "missing_libraries": missing,
                          "fix": _loader.loading_fix(found, missing) if missing else None}
    if not ok:
        for key in ("cann_version", "device_count", "soc_name"):
            result[key] = {"value": None, "error": "not attempted: aclInit failed"}
        return result
    try:
        if runtime is None:
            for key in ("cann_version", "device_count", "soc_name"):
                result[key] = {"value": None, "error": init_error}
            return result
        result["cann_version"] = _probe(runtime.cann_version)
        if result["cann_version"]["value"] is None and result["cann_version"]["error"] is None:
            result["cann_version"]["error"] = ("the runtime reports no version (aclsysGetVersionStr and "
                                               "aclsysGetCANNVersion are missing or fail)")
        result["device_count"] = _probe(runtime.device_count)
        result["soc_name"] = _probe(runtime.soc_name)
        if result["soc_name"]["value"] == "unknown":
            result["soc_name"] = {"value": None, "error": "aclrtGetSocName is missing or returned NULL"}
    finally:
        try:  # give back this report's aclInit reference; never end a session it did not start
            if symbols["runtime"].get("aclFinalizeReference"):
                lib.rt.aclFinalizeReference(ffi.NULL)
            elif status == 0:
                lib.rt.aclFinalize()
        except Exception:  # noqa: BLE001
            pass
    return result


def operators(found: _loader.Discovery | None) -> dict[str, Any]:
    """What the operator registry of this install finds, by index only (no header is parsed):

    ``sources``: [{kind, label, folders, library, count}] in search order (custom packages,
    the toolkit's aclnnop headers, pyaclnn's headers/, its signature table, whose row also says
    what it was ``generated_from``: name, headers, sha256, license); ``libraries``: [{path, count}] of
    aclnn*GetWorkspaceSize each op library exports (ELF symbol table; None: missing (exists
    False) or unreadable);
    ``skipped``: [{op, source, header, reason, used}] for each declaration passed over because
    its package's library does not run the operator (``reason``: library missing, or which
    function it does not export); ``used`` is the source whose declaration is used instead,
    None if no source provides the operator;
    ``conflicts``: [{op, source, header, others: [{source, header, declaration}]}] for each
    operator declared with differing prototypes (which declaration is used: ``_registry``'s
    precedence; only the headers of names declared twice are parsed);
    ``total``: distinct operators; ``references``: those with an exact NumPy reference;
    ``tiers``: {exact, aten, none}: how many have a reference of each tier (pyaclnn.ops.tier),
    and how many are declared without one."""
    home = found.home if found is not None and found.found else None
    registry = Registry(cann_sources(home, found.layout) if home is not None and found is not None
                        else [pyaclnn_source(), table_source()])
    sources: list[dict[str, Any]] = []
    for source in registry.sources:
        sources.append({"kind": source.kind, "label": source.label,
                        "folders": [str(d) for d in source.include_dirs],
                        "library": None if source.library is None else str(source.library),
                        "count": len(registry.declared(source))})
        if source.kind == "table":  # what it was generated from (tools/gen_signatures.py)
            sources[-1]["generated_from"] = _signature_table.describe(source.include_dirs[0])
    libraries = []
    paths = builtin_libraries(found) if home is not None and found is not None else []
    paths += [s.library for s in registry.sources if s.library is not None]
    for path in paths:
        names = registry.exports(path) if path.is_file() else None
        libraries.append({"path": str(path), "exists": path.is_file(), "count": None if names is None else
                          len([n for n in names if n.endswith("GetWorkspaceSize")])})
    found_ops = registry.all()
    skipped = []
    for name, (used, _header) in found_ops.items():
        where = registry.resolve(name)
        for s in where[2] if where is not None else ():
            skipped.append({"op": f"aclnn{name}", "source": s.source.label, "header": str(s.header),
                            "reason": s.reason, "used": None if used == s.source else used.label})
    conflicts = [{"op": name, "source": info.source.label, "header": str(info.header),
                  "others": [{"source": d.source.label, "header": str(d.header), "declaration": str(d.signature)}
                             for d in info.conflicts]}
                 for name, info in registry.conflicts().items()]
    tiers = {"exact": 0, "aten": 0, "none": 0}
    for name in found_ops:  # the NumPy reference's tier of each, for the prototype found (ops.tier)
        info = registry.get(name)
        tiers[(info.tier if info is not None else None) or "none"] += 1
    return {"sources": sources, "libraries": libraries, "skipped": skipped, "conflicts": conflicts,
            "total": len(found_ops), "tiers": tiers,
            "references": [n for n in references() if n in found_ops and (i := registry.get(n)) is not None and i.has_reference]}


def link_commands(lib: Path, links: list[str]) -> list[str]:
    """The ``ln -sf`` commands that make ``links`` (of ``_loader.SIMULATOR_LINKS``) in the
    simulator folder ``lib``, as build_example.sh makes them."""
    return [f"ln -sf {lib}/{_loader.SIMULATOR_LINKS[link]} {lib}/{link}" for link in links]


def simulators(found: _loader.Discovery | None) -> list[dict[str, Any]]:
    """The toolkit's NPU Simulators (tools/simulator/*/lib): [{chip, lib, active, links_missing,
    commands}]; ``commands`` run a script on one: the links of ``_loader.SIMULATOR_LINKS`` when
    missing, then the script with the folder first on LD_LIBRARY_PATH, as hicann/ops-math
    scripts/build_example.sh runs an example on it, and, for a 950 (the only chip npusim
    simulates), under npusim (ops-math docs/zh/debug/npu_sim.md: `npusim record <app> -s Ascend950`)."""
    if found is None:
        return []
    active = found.simulator.lib.resolve() if found.simulator is not None else None
    rows = []
    for lib in found.simulators:
        chip = _loader.simulator_chip(lib)
        missing = [link for link in _loader.SIMULATOR_LINKS if not (lib / link).exists()]
        commands = link_commands(lib, missing)
        commands.append(f"LD_LIBRARY_PATH={lib}:$LD_LIBRARY_PATH python SCRIPT.py")
        if chip.startswith("Ascend950") or chip == "dav_3510":
            commands.append("npusim record python SCRIPT.py -s Ascend950")
        rows.append({"chip": chip, "lib": str(lib), "active": lib.resolve() == active, "links_missing": missing,
                     "commands": commands})
    return rows


def report() -> dict[str, Any]:
    """Everything known about the CANN install; never raises. Keys:

    - ``discovery``: found, home, layout, runtime/nnopbase/opapi paths, search_dirs,
      attempts (every place looked at), error;
    - ``env``: the CANN environment variables (None when unset);
    - ``libraries``: {role: {path, loaded, error}} for runtime, nnopbase, opapi;
    - ``opened_by_name``: {file: {path, loaded, error, skipped}} for the libraries of the install
      that CANN opens by bare name at run time (preloaded, so no LD_LIBRARY_PATH is needed;
      ``skipped``: why not, e.g. the runtime implementation of another chip);
    - ``symbols``: {role: {function: True|False|None}} for every declared function (None: the
      library did not load); ``missing_required`` / ``missing_optional``: function names;
    - ``acl_init``: {ok, status, error, missing_libraries, fix}; ``cann_version``, ``device_count``, ``soc_name``:
      {value, error};
    - ``simulators``: the toolkit's NPU Simulators and how to run on one (see ``simulators``);
    - ``operators``: what the operator registry finds (see ``operators``).
    """
    out: dict[str, Any] = {}
    try:
        out["env"] = _env.cann_vars()
    except Exception as exc:  # noqa: BLE001
        out["env"] = {"error": _err(exc)}
    try:
        found = _loader.discover()
        disc = found.as_dict()
        disc["found"] = found.found
        disc["error"] = None if found.found else "CANN not found: " + "; ".join(found.attempts)
        if found.unlinked_simulator is not None:
            disc["unlinked_simulator_fix"] = link_commands(found.unlinked_simulator, list(_loader.SIMULATOR_LINKS))
        out["discovery"] = disc
    except Exception as exc:  # noqa: BLE001
        found = None
        out["discovery"] = {"found": False, "home": None, "layout": None, "runtime": None, "nnopbase": None,
                            "opapi": None, "search_dirs": [], "attempts": [], "error": _err(exc)}
    handles: dict[str, Any] = {}
    out["opened_by_name"] = {}
    if found is not None and found.found:
        try:
            out["libraries"], handles = _load_each(found)
            out["opened_by_name"] = _by_name(found, handles.get("by_name_errors", {}), handles.get("by_name_skipped", {}))
        except Exception as exc:  # noqa: BLE001
            out["libraries"] = _empty_libraries(_err(exc))
    else:
        out["libraries"] = _empty_libraries("not found (see discovery)")
    try:
        out["symbols"] = _symbols(handles)
    except Exception:  # noqa: BLE001 - report the libraries as unchecked rather than raise
        out["symbols"] = _symbols({})
    optional = _lib.OPTIONAL
    missing = [n for role in ROLES for n, ok in out["symbols"][role].items() if ok is False]
    out["missing_required"] = [n for n in missing if n not in optional]
    out["missing_optional"] = [n for n in missing if n in optional]
    if found is not None and found.found:
        try:
            out.update(_runtime_probes(found, handles, out["symbols"]))
        except Exception as exc:  # noqa: BLE001
            out.update({"acl_init": {"ok": False, "status": None, "error": _err(exc)},
                        "cann_version": {"value": None, "error": _err(exc)},
                        "device_count": {"value": None, "error": _err(exc)},
                        "soc_name": {"value": None, "error": _err(exc)}})
    else:
        out.update(_runtime_probes(_loader.Discovery(), {}, out["symbols"]))
        for key in ("acl_init", "cann_version", "device_count", "soc_name"):
            out[key]["error"] = "not attempted: CANN not found"
    try:
        out["simulators"] = simulators(found if found is not None and found.found else None)
    except Exception:  # noqa: BLE001
        out["simulators"] = []
    try:
        out["operators"] = operators(found)
    except Exception as exc:  # noqa: BLE001
        out["operators"] = {"sources": [], "libraries": [], "skipped": [], "conflicts": [], "total": 0, "tiers": {"exact": 0, "aten": 0, "none": 0}, "references": [],
                            "error": _err(exc)}
    return out
