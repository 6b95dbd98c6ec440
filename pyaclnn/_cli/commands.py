"""The command line: ``python -m pyaclnn {samples,doctor,ops,bench,check}`` (console script ``pyaclnn``).

Exit codes: 0 success; 1 the work failed (the requested backend is unavailable, a sample
raised an AclError, ``check`` found a hazard, a leak or the script's failure); 2 usage errors
(bad arguments, a bad PYACLNN_* variable, ``bench`` not available). Expected failures print
one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import textwrap
from pathlib import Path
from typing import Any, Sequence

from .. import __version__
from .._core import env as _env
from ..errors import AclError, BackendUnavailableError, PyaclnnError
from .doctor import (DOCTOR_KEYS, FAILED, OK, PRECEDENCE, PROG, USAGE, backend_line, doctor_report, doctor_text,
                     env_problems, one_line)




def _error(message: Any) -> None:
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)






# -- samples ------------------------------------------------------------------------------------
def _backend_or_status() -> dict[str, Any] | int:
    """backend_info() for a command that runs something, or, when it cannot, the exit status
    after one error line (a bad PYACLNN_* variable: USAGE; no backend: FAILED)."""
    problems = env_problems()
    if problems:
        _error(f"{problems[0]['problem']} (fix: {problems[0]['fix']})")
        return USAGE
    from .. import backend_info
    try:
        return backend_info()
    except ValueError as exc:
        _error(exc)
        return USAGE
    except BackendUnavailableError as exc:
        _error(f"{exc} (run `{PROG} doctor` for details)")
        return FAILED


def cmd_samples(args: argparse.Namespace) -> int:
    from ..ops.samples import SAMPLES, run

    info = _backend_or_status()
    if isinstance(info, int):
        return info
    print(backend_line(info), flush=True)
    status, mismatched = OK, []
    for name in args.names or list(SAMPLES):
        print(f"== aclnn{name} ==", flush=True)
        try:
            if not run(name, print):
                mismatched.append(name)
        except (PyaclnnError, ValueError) as exc:
            _error(f"{name}: {exc}")
            status = FAILED
        except Exception as exc:  # noqa: BLE001 - e.g. an unsupported numpy: one line, not a traceback
            _error(f"{name}: {type(exc).__name__}: {exc} (`{PROG} doctor` checks the install)")
            status = FAILED
        sys.stdout.flush()
    if mismatched:
        _error(f"MISMATCH: {', '.join(mismatched)} printed values that differ from the documented expected values "
               f"on backend {info['backend']} (see the MISMATCH lines above; `{PROG} doctor` checks the install)")
        status = FAILED
    return status


# -- doctor -------------------------------------------------------------------------------------












def cmd_doctor(args: argparse.Namespace) -> int:
    data = doctor_report()
    if args.json:
        print(json.dumps(data, indent=None if args.compact else 2, sort_keys=False))
    else:
        print(doctor_text(data))
    return int(data["exit_code"])


# -- ops ------------------------------------------------------------------------------------------
def _matches(pattern: str | None, name: str) -> bool:
    if not pattern:
        return True
    import fnmatch
    pattern = pattern.lower()
    for candidate in (name.lower(), f"aclnn{name}".lower()):
        if any(c in pattern for c in "*?[") and fnmatch.fnmatchcase(candidate, pattern):
            return True
        if not any(c in pattern for c in "*?[") and pattern in candidate:
            return True
    return False


def _describe(name: str, has_reference: bool) -> dict[str, Any]:
    """How the operator's reference is described (pyaclnn._registry.coverage.describe); for a
    prototype the reference was not written for, why it has none."""
    from .coverage import describe
    found = describe(name)
    if found["tier"] is not None and not has_reference:
        return {"tier": None, "left_out": {"group": "prototype", "reason": (
            f"this declaration's prototype is not the one the {found['tier']} reference was written for")}}
    return found


def ops_table(pattern: str | None = None) -> list[dict[str, Any]]:
    """The operators of the active backend's registry whose name matches ``pattern`` (a
    substring, or a shell pattern with * ? [...]; case-insensitive), parsed, in name order;
    ``reference``: the NumPy reference's tier, "exact", "aten" or None (pyaclnn.ops.tier)."""
    from .. import ops as _ops
    from .._objects import backend as _backend
    registry = _backend.current().runtime.registry
    rows = []
    for name in registry.all():
        if not _matches(pattern, name):
            continue
        info = registry.get(name)
        if info is None:  # listed by the index: always declared
            continue
        rows.append({
            "name": f"aclnn{name}", "source": info.source.label, "header": str(info.header),
            "library": None if info.source.library is None else str(info.source.library),
            "reference": _ops.tier(name) if info.has_reference else None,
            "described": _describe(name, info.has_reference), "problem": info.signature.problem,
            "skipped": [{"source": k.source.label, "header": str(k.header), "reason": k.reason}
                        for k in info.skipped],
            "provided": all(k.source != info.source for k in info.skipped),
            "roles_problem": info.roles_problem, "index_rule": info.index_rule,
            "params": [{"name": p.name, "ctype": p.ctype, "kind": p.kind,
                        "role": info.role_text(i) if p.kind in ("tensor", "tensor_list") else None}
                       for i, p in enumerate(info.signature.params)],
            "launch": [{"name": p.name, "ctype": p.ctype, "kind": p.kind} for p in info.signature.launch],
            "conflicts": [{"source": d.source.label, "header": str(d.header), "declaration": str(d.signature)}
                          for d in info.conflicts]})
    return rows


def _no_match(pattern: str | None, backend: str) -> str:
    """Why ``ops PATTERN`` found nothing: what this backend knows, where it looked, and how to
    make the others visible (a CANN install, a custom operator package)."""
    from .._objects import backend as _backend
    registry = _backend.current().runtime.registry
    known = sorted(registry.names())
    shown = ", ".join(known[:8]) + (f", ... (`{PROG} ops` lists all)" if len(known) > 8 else "")
    text = (f"no operator matches {pattern!r} on the {backend} backend, which knows {len(known)} "
            f"operator(s): {shown or 'none'}; it searched {registry.searched()}")
    kinds = {source.kind for source in registry.sources}
    missing = [(what, fix) for kind, what, fix in (
        ("builtin", "no CANN install with aclnnop headers (ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, /usr/local/Ascend)",
         "for CANN's operators, run where CANN is installed or set ASCEND_HOME_PATH to the install"),
        ("custom", "no custom operator package (ASCEND_CUSTOM_OPP_PATH, $ASCEND_OPP_PATH/vendors/config.ini)",
         "for a custom operator package, set ASCEND_CUSTOM_OPP_PATH to its vendor folder"))
        if kind not in kinds]
    if missing:
        text += (f"; found {' and '.join(what for what, _ in missing)}. To see more operators: "
                 f"{'; '.join(fix for _, fix in missing)} (either backend then lists them; the NumPy backend runs "
                 "only those with a NumPy reference)")
    else:
        text += "; PATTERN is a name substring or a shell pattern (e.g. 'aclnn*Backward'), case-insensitive"
    return text


def _reference_lines(d: dict[str, Any]) -> list[str]:
    """The operator's tier, where it is described, its checks and notes (``ops`` text)."""
    if d["tier"] is None:
        why = d["left_out"]
        return [f"reference: none ({why['group']}" + (f": {why['reason']})" if why["reason"] else ")")]
    lines = [f"reference: {d['tier']} ({d['where']}" + (f"; {d['aten']})" if d["aten"] else ")"),
             f"checks: {d['checks']}"]
    return lines + ([f"known differences: {d['notes']}"] if d["notes"] else [])


def cmd_ops(args: argparse.Namespace) -> int:
    info = _backend_or_status()
    if isinstance(info, int):
        return info
    rows = ops_table(args.pattern)
    if args.json:
        print(json.dumps({"backend": info["backend"], "operators": rows}, indent=2))
        return OK if rows else FAILED
    print(backend_line(info))
    if info["backend"] == "numpy":
        print("(the NumPy backend runs the operators with a NumPy reference; the others listed run with "
              "PYACLNN_BACKEND=acl on a device)")
    for row in rows:
        tag = "NumPy reference" if row["reference"] else "no NumPy reference"
        print(f"\n{row['name']}  [{row['source']}: {Path(row['header']).name}; {tag}]")
        width = max([len(p["name"]) for p in row["params"]] + [4])
        for p in row["params"]:
            role = p["role"] or ""
            print(f"    {p['name']:<{width}}  {role:<6} {p['kind']:<12} {p['ctype']}")
        if row["launch"]:
            print(f"    launch: aclnn{row['name'][5:]}(workspace, workspaceSize, executor, "
                  f"{', '.join(p['name'] for p in row['launch'])}, stream)")
        for line in _reference_lines(row["described"]):
            print(f"    {line}")
        for problem in (row["problem"], row["roles_problem"]):
            if problem:
                print(f"    note: {problem}")
        for d in row["conflicts"]:
            print(f"    note: CONFLICT: {d['source']} ({Path(d['header']).name}) declares it differently, "
                  f"{d['declaration']}; the declaration above is used ({PRECEDENCE})")
        for k in row["skipped"]:
            print(f"    note: skipped {k['source']} ({Path(k['header']).name}): {k['reason']}")
        if not row["provided"]:
            print("    note: no source provides it: calling it raises NotSupportedError")
    if not rows:
        _error(_no_match(args.pattern, info["backend"]))
        return FAILED
    print(f"\n{len(rows)} operator(s)")
    return OK


# -- bench ----------------------------------------------------------------------------------------
def cmd_bench(argv: Sequence[str]) -> int:
    from . import bench as _bench  # imported here: it is only needed for this command
    return int(_bench.main(list(argv)) or 0)


# -- check ----------------------------------------------------------------------------------------
def cmd_check(args: argparse.Namespace) -> int:
    from . import check as _check  # imported here: it is only needed for this command
    return _check.run(args.script, args.args)


# -- main -----------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    from ..ops.samples import ALIASES, SAMPLES

    parser = argparse.ArgumentParser(
        prog=PROG, description="Drive Huawei CANN aclnn operators from Python (or the NumPy reference backend).",
        epilog="Environment: PYACLNN_BACKEND=auto|acl|numpy, PYACLNN_SOC, PYACLNN_DEVICE, PYACLNN_HAZARDS, "
               "ASCEND_HOME_PATH. "
               "Exit codes: 0 ok, 1 failed, 2 usage error.")
    parser.add_argument("--version", action="version", version=f"pyaclnn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    samples = sub.add_parser("samples", help="run the documented samples on the active backend",
                             description="Run the documented samples (the data of the CANN C++ samples) on "
                                         "the active backend, print their results as the samples do, each "
                                         "with its expected value, and OK or MISMATCH per sample. Exit 1 on "
                                         "a mismatch.")
    samples.add_argument("names", nargs="*", metavar="NAME",
                         help=f"samples to run (default: all): {', '.join(SAMPLES)}, or their short names "
                              f"{', '.join(ALIASES)}")
    doctor = sub.add_parser("doctor", help="check the CANN install, libraries, symbols, devices and backend",
                            description="Report CANN discovery, environment variables, libraries, every "
                                        "declared function found or missing, devices, SoC, CANN version and "
                                        "the chosen backend, with a fix for each problem. Exit 0 when the "
                                        "chosen backend works, 1 when PYACLNN_BACKEND=acl is unavailable, "
                                        "2 for a bad PYACLNN_* variable.")
    doctor.add_argument("--json", action="store_true", help="print one JSON object (for CI)")
    doctor.add_argument("--compact", action="store_true", help="with --json: on one line")
    ops = sub.add_parser("ops", help="list the operators found, with their signatures",
                         description="List the operators the active backend can call (custom operator "
                                     "packages, pyaclnn's headers/, the installed CANN's aclnnop headers), "
                                     "each with its C parameters, their kinds, which tensors are inputs and "
                                     "outputs, and its NumPy reference's tier (exact, aten or none: where "
                                     "it is described, its checks and known differences). Exit 1 if none "
                                     "matches.")
    ops.add_argument("pattern", nargs="?", default=None, metavar="PATTERN",
                     help="a name substring or shell pattern (e.g. Add, 'aclnn*Backward'), case-insensitive")
    ops.add_argument("--json", action="store_true", help="print one JSON object")
    sub.add_parser("bench", help="benchmark the operators (see `pyaclnn bench --help`)", add_help=False)
    check = sub.add_parser(
        "check", usage=f"{PROG} check [-h] SCRIPT [ARGS ...]", help="run a script as a device would judge it: hazards raised, leaked handles listed",
        description="Run SCRIPT with ARGS (as `python SCRIPT ARGS` would) on the NumPy reference backend "
                    "with hazards raised (PYACLNN_HAZARDS=raise, unless set to warn: then every hazard is "
                    "reported and the script goes on). Reports, on stderr: a pyaclnn.HazardError with the "
                    "script's own lines, each pyaclnn.HazardWarning, the script's failure, and every handle "
                    "left alive when it ends (aclTensor, aclScalar, arrays, lists, executors, streams, events, "
                    "contexts, device and host memory, devices still set, aclInit without aclFinalize, pyaclnn "
                    "objects never closed), each with the line that made it. What pyaclnn keeps for itself "
                    "(the default device and streams of the high-level API) is not counted. Exit 0 and one "
                    "'clean' line when there is no finding, 1 otherwise, 2 for a usage error.")
    # SCRIPT is checked in main: argparse lists a REMAINDER after a required positional as
    # required too ("required: SCRIPT, ARGS"), though a script may take no arguments
    check.add_argument("script", nargs="?", metavar="SCRIPT", help="the Python script to run")
    check.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="its arguments (sys.argv[1:])")
    check.set_defaults(usage_error=check.error)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "bench":
            return cmd_bench(argv[1:])
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
            if args.command == "samples":
                from ..ops.samples import ALIASES, SAMPLES, resolve
                unknown = [n for n in args.names if resolve(n) is None]
                if unknown:
                    parser.error(f"samples: unknown sample {', '.join(unknown)} (choose from "
                                 f"{', '.join(SAMPLES)}, or {', '.join(ALIASES)})")
                args.names = [resolve(n) for n in args.names]
            if args.command == "check" and args.script is None:
                args.usage_error("the following arguments are required: SCRIPT")
        except SystemExit as exc:  # --help (0) or a usage error (2)
            return int(exc.code or 0)
        if args.command == "samples":
            return cmd_samples(args)
        if args.command == "ops":
            return cmd_ops(args)
        if args.command == "check":
            return cmd_check(args)
        return cmd_doctor(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `pyaclnn samples | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return FAILED
    except ValueError as exc:  # bad environment variables surfacing late
        _error(exc)
        return USAGE
    except (AclError, PyaclnnError) as exc:
        _error(exc)
        return FAILED
