"""``pyaclnn doctor``: what pyaclnn finds (CANN, libraries, symbols, devices, the backend and why), as a report and as text."""
from __future__ import annotations

import importlib.util

import contextlib
import json
import os
import platform
import textwrap
from pathlib import Path
from typing import Any

from .. import __version__
from .._core import env as _env
from ..errors import BackendUnavailableError

OK, FAILED, USAGE = 0, 1, 2  # the exit codes of every command


PROG = "pyaclnn"


SKIPPED_SHOWN = 20  # doctor's text lists this many skipped declarations (--json: all)


# Which declaration of an operator declared twice is used (pyaclnn._registry.operators's docstring).
PRECEDENCE = ("custom packages whose library runs it, then the installed CANN's headers, then pyaclnn's headers/; "
              "within one, the operator's own aclnn_<snake_case>.h, then by file name")


def one_line(text: Any) -> str:
    """A message of several lines (attempt lists, CANN text, hints) as one line."""
    parts = [p for p in (line.strip().lstrip("- ").strip() for line in str(text).splitlines()) if p]
    out = ""
    for part in parts:
        out += part if not out else (" " if out.endswith(":") else "; ") + part
    return out


def backend_line(info: dict[str, Any]) -> str:
    if info["backend"] == "numpy":
        soc = f"SoC {info['soc_name']} (emulated by the NumPy reference backend)"
    else:
        soc = f"SoC {info['soc_name']}" + (f", CANN {info['cann_version']}" if info.get("cann_version") else "")
    lines = str(info["reason"]).strip().splitlines() or [""]
    why = lines[0].rstrip(":") + (f" (details: `{PROG} doctor`)" if len(lines) > 1 else "")
    return f"backend: {info['backend']}, {soc}; why: {why}"


def env_problems() -> list[dict[str, str]]:
    """A {problem, fix} for each PYACLNN_* variable whose value is invalid."""
    problems = []
    for name, read, fix in (
            ("PYACLNN_BACKEND", _env.backend, "unset PYACLNN_BACKEND or set it to auto, acl or numpy"),
            ("PYACLNN_SOC", _env.soc, "unset PYACLNN_SOC or set it to one of " + ", ".join(_env.SOCS)),
            ("PYACLNN_DEVICE", _env.device_id, "unset PYACLNN_DEVICE or set it to a device id (0, 1, ...)"),
            ("PYACLNN_HAZARDS", _env.hazards, "unset PYACLNN_HAZARDS or set it to raise, warn or off")):
        try:
            read()
        except ValueError as exc:
            text = str(exc) if name in str(exc) else f"{name}={_env.get(name)!r}: {exc}"
            problems.append({"problem": text, "fix": fix})
    return problems


def _cann_report() -> dict[str, Any]:
    try:
        from .._acl import diagnostics
    except Exception as exc:  # noqa: BLE001 - cffi or headers/ missing: still report
        error = f"cannot import the acl binding: {type(exc).__name__}: {exc}"
        probe = {"value": None, "error": error}
        return {"env": _env.cann_vars(), "discovery": {"found": False, "attempts": [], "error": error},
                "simulators": [], "libraries": {}, "opened_by_name": {}, "symbols": {}, "missing_required": [], "missing_optional": [],
                "operators": {"sources": [], "libraries": [], "skipped": [], "conflicts": [], "total": 0, "tiers": {"exact": 0, "aten": 0, "none": 0}, "references": [],
                              "error": error},
                "acl_init": {"ok": None, "status": None, "error": error}, "cann_version": dict(probe),
                "device_count": dict(probe), "soc_name": dict(probe)}
    return diagnostics.report()


def doctor_report() -> dict[str, Any]:
    """Everything ``doctor`` prints, as one JSON-ready dict (see ``DOCTOR_KEYS``)."""
    from .. import backend_info

    data: dict[str, Any] = {"pyaclnn": __version__, "python": platform.python_version(),
                            "platform": f"{platform.system()} {platform.machine()}"}
    problems: list[dict[str, str]] = []
    notes: list[str] = []
    exit_code = OK

    requested = _env.get("PYACLNN_BACKEND") or "auto"
    data["pyaclnn_env"] = {name: _env.get(name) for name in ("PYACLNN_BACKEND", "PYACLNN_SOC", "PYACLNN_DEVICE",
                                                         "PYACLNN_HAZARDS")}
    problems += env_problems()
    if problems:
        exit_code = USAGE
    data["requested_backend"] = requested

    backend: dict[str, Any] = {"name": None, "reason": None, "soc": None, "soc_name": None,
                               "cann_version": None, "paths": {}, "error": None}
    if exit_code == OK:
        try:
            backend.update(backend_info())
            backend["name"] = backend.pop("backend")
        except BackendUnavailableError as exc:
            backend["error"] = str(exc)
            exit_code = FAILED
        except Exception as exc:  # noqa: BLE001 - doctor reports, never crashes
            backend["error"] = f"{type(exc).__name__}: {exc}"
            exit_code = FAILED
    else:
        backend["error"] = "not chosen: fix the environment variables first"
    data["backend"] = backend

    cann = _cann_report()
    data.update(cann)
    count = cann.get("device_count", {}).get("value")
    data["device_found"] = backend["name"] == "acl" or bool(count)

    disc = cann.get("discovery", {})
    env = cann.get("env", {})
    home = disc.get("home")
    if not disc.get("found"):
        where = one_line("\n".join(disc.get("attempts") or [])) or disc.get("error") or "nowhere"
        if env.get("ASCEND_HOME_PATH") or env.get("ASCEND_TOOLKIT_HOME"):
            fix = ("point ASCEND_HOME_PATH at the toolkit directory that holds lib64/ "
                   "(e.g. /usr/local/Ascend/ascend-toolkit/latest) or source <toolkit>/set_env.sh")
        else:
            fix = "install the CANN toolkit, then set ASCEND_HOME_PATH=<toolkit> or source <toolkit>/set_env.sh"
        problems.append({"problem": f"CANN not found ({where})", "fix": fix})
    else:
        for role, lib in cann.get("libraries", {}).items():
            if not lib.get("loaded"):
                problems.append({
                    "problem": f"the {role} library {lib.get('path')} does not load: {one_line(lib.get('error'))}",
                    "fix": f"source {home}/set_env.sh (its dependencies, e.g. the driver's libascend_hal.so, "
                           "must be found) or reinstall the toolkit"})
        missing = cann.get("missing_required") or []
        if missing:
            problems.append({
                "problem": f"{len(missing)} required function(s) missing: {', '.join(missing)}",
                "fix": "install a complete CANN toolkit (8.x or later) with its operator package; "
                       "the op library must export the aclnn operators of pyaclnn's headers/"})
        for name, lib in cann.get("opened_by_name", {}).items():
            if not lib.get("loaded") and not lib.get("skipped"):
                problems.append({
                    "problem": f"{name} (CANN opens it by name at run time) does not load: {one_line(lib.get('error'))}",
                    "fix": f"install what it needs, or export LD_LIBRARY_PATH to the directories holding its "
                           f"dependencies before starting Python (source {home}/set_env.sh)"})
        init = cann.get("acl_init", {})
        if init.get("ok") is False:
            missing = init.get("missing_libraries") or []
            problems.append({"problem": f"aclInit failed: {one_line(init.get('error'))}"
                                        + (f" (cannot open {', '.join(missing)})" if missing else ""),
                             "fix": init.get("fix") or "check the driver (npu-smi info) and that the toolkit "
                                                       "version matches it"})
        elif init.get("ok") and not count and backend["name"] != "acl":
            why = cann.get("device_count", {}).get("error") or "aclrtGetDeviceCount reports 0 devices"
            problems.append({
                "problem": f"libraries load but no device ({one_line(why)})",
                "fix": "stub toolkit without a driver: install the Ascend driver (npu-smi info must list a "
                       "device) or use PYACLNN_BACKEND=numpy"})
        opp = env.get("ASCEND_OPP_PATH")
        if not opp:
            problems.append({"problem": "ASCEND_OPP_PATH is not set: aclnn returns 561107 without it",
                             "fix": f"export ASCEND_OPP_PATH={home}/opp, or source {home}/set_env.sh"})
        else:
            from pathlib import Path
            if not Path(opp).is_dir():
                problems.append({"problem": f"ASCEND_OPP_PATH={opp} is not a directory: aclnn will fail (561107)",
                                 "fix": f"export ASCEND_OPP_PATH={home}/opp, or source {home}/set_env.sh"})
    data["simulators"] = cann.get("simulators") or []
    unlinked = disc.get("unlinked_simulator")
    if unlinked:
        problems.append({"problem": f"the NPU Simulator's folder {unlinked} is first on LD_LIBRARY_PATH but holds no "
                                    "libruntime.so: the toolkit's runtime runs, not the simulator's",
                         "fix": " && ".join(disc.get("unlinked_simulator_fix") or [])
                                + " (as the ops repos' build_example.sh does), then start Python again"})
    changed = _env.ld_library_path_changed()
    if changed:  # what pyaclnn and the dynamic linker use is the start-up value; os.environ misleads
        problems.append({"problem": f"LD_LIBRARY_PATH was changed after start-up (start-up: {changed[0] or '(unset)'}; "
                                    f"now: {changed[1] or '(unset)'}): the dynamic linker uses the start-up value",
                         "fix": "set it before starting python (LD_LIBRARY_PATH=... python SCRIPT.py, or export it "
                                "in the shell first), not in the script"})
    ops = cann.get("operators") or {}
    missing_libs = {lib["path"] for lib in ops.get("libraries", []) if not lib.get("exists", True)}
    for source in ops.get("sources", []):
        if source.get("library") in missing_libs and source.get("count"):
            notes.append(f"{source['label']} declares {source['count']} operator(s) but has no library "
                         f"{source['library']}: its declarations are skipped (a later package or the toolkit "
                         "runs those it provides; the others raise NotSupportedError when called); build and "
                         "install the package: its op_api/lib/libcust_opapi.so")
    optional = cann.get("missing_optional") or []
    if optional:
        notes.append(f"optional functions this CANN does not export (pyaclnn works without them): "
                     f"{', '.join(optional)}")

    data["compute"] = compute = _compute_check() if backend["name"] else None
    if compute and not compute["ok"]:
        failed = "; ".join(f"{name}: {result}" for name, result in compute["samples"].items() if result != "OK")
        problems.append({"problem": f"the {backend['name']} backend computes wrong results or fails: {failed}",
                         "fix": "check the installed versions (numpy, ml_dtypes, cffi: `pip list`) against "
                                "pyaclnn's requirements, reinstall pyaclnn, and run `pyaclnn samples`"})
        exit_code = FAILED
    if backend["error"] and exit_code == FAILED:
        problems.append({"problem": str(backend["error"]).strip().splitlines()[0].rstrip(":"),
                         "fix": "fix the problems above, or use PYACLNN_BACKEND=auto (falls back) or "
                                "PYACLNN_BACKEND=numpy to run on the reference backend"})
    if backend["name"] == "numpy":
        if requested.strip().lower() == "numpy":
            notes.append(f"PYACLNN_BACKEND=numpy: no device is used; the NumPy reference backend emulates "
                         f"{backend['soc']}")
        else:
            notes.append(f"no Ascend device found: pyaclnn runs on the NumPy reference backend "
                         f"(emulating {backend['soc']})")
    data["problems"] = problems
    data["notes"] = notes
    data["exit_code"] = exit_code
    return {key: data.get(key) for key in DOCTOR_KEYS}


def _compute_check() -> dict[str, Any]:
    """Run the samples documented on every SoC (_samples.doctor_samples) on the chosen backend and compare with their expected values:
    {"ok": bool, "samples": {name: "OK" | "MISMATCH ..." | "<error>"}}. On the numpy backend
    each sample runs twice: the samples are small, so the second run forces the kernels' tiled
    path (the one large inputs take) and both must pass."""
    from .._objects.backend import current
    from ..ops.samples import doctor_samples, run

    passes: list[Any] = [contextlib.nullcontext]
    if current().name == "numpy":
        from .._numpy.kernels._parallel import tiled_only
        passes.append(tiled_only)
    results: dict[str, str] = {}
    for name in doctor_samples():
        results[name] = "OK"
        for kernel_path in passes:
            lines: list[str] = []
            try:
                with kernel_path():
                    ok = run(name, lines.append)
                result = "OK" if ok else lines[-1].split(": ", 1)[1]
            except Exception as exc:  # noqa: BLE001 - doctor reports, never crashes
                result = f"{type(exc).__name__}: {one_line(exc)}"
            if result != "OK":
                results[name] = result
                break
    return {"ok": all(r == "OK" for r in results.values()), "samples": results}


# Top-level keys of `doctor --json`.
DOCTOR_KEYS = ("pyaclnn", "python", "platform", "pyaclnn_env", "requested_backend", "backend", "device_found",
               "env", "discovery", "simulators", "libraries", "opened_by_name", "symbols", "missing_required", "missing_optional",
               "operators", "acl_init", "cann_version", "device_count", "soc_name", "compute", "problems", "notes",
               "exit_code")


def _value(probe: dict[str, Any]) -> str:
    return str(probe["value"]) if probe.get("value") is not None else f"unknown ({probe.get('error')})"


def doctor_text(data: dict[str, Any]) -> str:
    out: list[str] = [f"pyaclnn {data['pyaclnn']} doctor (Python {data['python']}, {data['platform']})", ""]
    b = data["backend"]
    if b["name"]:
        out.append(backend_line({"backend": b["name"], **b}))
    else:
        out.append(f"backend: unavailable (requested: {data['requested_backend']})")
        out += ["  " + line for line in str(b["error"]).splitlines()]
    out.append("device: " + ("found" if data["device_found"] else "NO ASCEND DEVICE FOUND"))

    disc = data.get("discovery", {})
    out += ["", "CANN discovery (ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, then the default install dirs):"]
    out += [f"  {a}" for a in disc.get("attempts") or []]
    if disc.get("found"):
        out.append(f"  => CANN {disc.get('layout')} layout at {disc.get('home')}")
    elif disc.get("error") and not disc.get("attempts"):
        out.append(f"  {disc['error']}")
    if data.get("simulators"):
        out += ["", "NPU Simulators in the toolkit (CANN's kernels on a simulated chip, no device needed):"]
        for row in data["simulators"]:
            state = "IN USE" if row["active"] else "not in use"
            out.append(f"  {row['chip']}: {row['lib']}  {state}")
            out.append("    run a script on it: " + " && ".join(c for c in row["commands"] if not c.startswith("npusim")))
            out += [f"    or: {c}" for c in row["commands"] if c.startswith("npusim")]
    out += ["", "environment:"]
    for name, value in {**data.get("env", {}), **data.get("pyaclnn_env", {})}.items():
        out.append(f"  {name}={value}" if value is not None else f"  {name} (unset)")
    if data.get("libraries"):
        out += ["", "libraries:"]
        for role, lib in data["libraries"].items():
            state = "loaded" if lib.get("loaded") else f"NOT LOADED: {one_line(lib.get('error'))}"
            out.append(f"  {role:<9} {lib.get('path') or '-'}  {state}")
    if data.get("opened_by_name"):
        out += ["", "opened by name by CANN at run time (preloaded by pyaclnn):"]
        for name, lib in data["opened_by_name"].items():
            state = ("loaded" if lib.get("loaded") else f"not preloaded: {lib['skipped']}" if lib.get("skipped")
                     else f"NOT LOADED: {one_line(lib.get('error'))}")
            out.append(f"  {name:<24} {lib.get('path')}  {state}")
    if data.get("symbols"):
        out += ["", "declared functions (headers/), per library:"]
        optional = set(data.get("missing_optional") or [])
        for role, symbols in data["symbols"].items():
            found = [n for n, ok in symbols.items() if ok]
            missing = [n for n, ok in symbols.items() if ok is False]
            if all(ok is None for ok in symbols.values()):
                out.append(f"  {role}: {len(symbols)} declared, not checked (library not loaded)")
                continue
            out.append(f"  {role}: {len(found)}/{len(symbols)} found")
            for name in missing:
                out.append(f"    MISSING {name}" + (" (optional)" if name in optional else ""))
            if found:
                out += textwrap.wrap(" ".join(found), width=100, initial_indent="    found: ",
                                     subsequent_indent="           ")
    ops = data.get("operators") or {}
    if ops.get("sources") or ops.get("error"):
        out += ["", f"operators: {ops.get('total', 0)} found (custom packages first, as torch_npu searches; "
                    f"`{PROG} ops` lists them)"]
        for source in ops.get("sources", []):
            where = ", ".join(source["folders"]) + (f"; library {source['library']}" if source.get("library") else "")
            out.append(f"  {source['label']}: {source['count']} declared ({where})")
            origin = source.get("generated_from")
            if origin and origin.get("name"):
                out.append(f"    generated from {origin['name']}: {origin['headers']} headers, "
                           f"sha256 {origin['sha256'][:12]}")
        for lib in ops.get("libraries", []):
            count = (f"{lib['count']} exported" if lib["count"] is not None else
                     "unreadable" if lib.get("exists", True) else "MISSING")
            out.append(f"  library {lib['path']}: {count}")
        skipped = ops.get("skipped") or []
        if skipped:
            out.append("  declared but not provided (skipped, as torch_npu skips a custom library without the "
                       "function):")
            for row in skipped[:SKIPPED_SHOWN]:
                used = f"uses {row['used']}" if row["used"] else "no source provides it"
                out.append(f"    {row['op']}: {row['source']} ({Path(row['header']).name}): {row['reason']}; {used}")
            if len(skipped) > SKIPPED_SHOWN:
                out.append(f"    ... and {len(skipped) - SKIPPED_SHOWN} more (`{PROG} doctor --json`)")
        conflicts = ops.get("conflicts") or []
        if conflicts:
            out.append(f"  declared differently in two headers ({PRECEDENCE}):")
            for row in conflicts:
                others = "; ".join(f"{d['source']} ({Path(d['header']).name})" for d in row["others"])
                out.append(f"    CONFLICT aclnn{row['op']}: uses {row['source']} ({Path(row['header']).name}), "
                           f"not {others} (`{PROG} ops {row['op']}` shows both)")
        tiers = ops.get("tiers") or {}
        out.append(f"  NumPy references: exact {tiers.get('exact', 0)}, aten {tiers.get('aten', 0)}, declared without "
                   f"a reference {tiers.get('none', 0)} (`{PROG} ops` shows each operator's tier)")
        if tiers.get("aten") and not _has_torch():
            out.append("  the aten tier needs PyTorch, which is not installed: pip install 'pyaclnn[torch]'")
        out.append(f"  with an exact NumPy reference (run on either backend): "
                   f"{', '.join(ops.get('references') or []) or 'none'}")
        if ops.get("error"):
            out.append(f"  error: {ops['error']}")
    out += ["", "runtime:"]
    init = data.get("acl_init", {})
    state = {True: "ok", False: "FAILED", None: "not attempted"}[init.get("ok")]
    out.append(f"  aclInit: {state}" + (f" ({init['error']})" if init.get("error") else ""))
    out.append(f"  CANN version: {_value(data.get('cann_version', {}))}")
    out.append(f"  devices: {_value(data.get('device_count', {}))}")
    out.append(f"  SoC: {_value(data.get('soc_name', {}))}")
    if data.get("compute"):
        out += ["", f"compute check (samples against their expected values, on backend {b['name']}):"]
        out += [f"  {name}: {result}" for name, result in data["compute"]["samples"].items()]
    if data["notes"]:
        out += ["", "notes:"] + [f"  - {n}" for n in data["notes"]]
    out += [""]
    if data["problems"]:
        out.append("problems:")
        for p in data["problems"]:
            out.append(f"  x {p['problem']}")
            out.append(f"    fix: {p['fix']}")
    else:
        out.append("no problems found")
    code = data["exit_code"]
    failed = (f"result: FAILED, backend {b['name']} computes wrong results" if data.get("compute") else
              f"result: FAILED, PYACLNN_BACKEND={data['requested_backend']} is unavailable")
    out += ["", {OK: f"result: OK, backend {b['name']} works",
                 FAILED: failed,
                 USAGE: "result: FAILED, fix the environment variables above"}[code]]
    return "\n".join(out)


def _has_torch() -> bool:
    """Whether PyTorch, which the aten tier computes with, can be imported (looked up, not imported)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except ValueError:  # sys.modules["torch"] is None: imports of it are blocked
        return False
