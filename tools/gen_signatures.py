"""Regenerate pyaclnn/_registry/signatures.json.gz: every operator a folder of aclnn headers declares.

Usage: python tools/gen_signatures.py [--check] [--name NAME] [FOLDER ...]

FOLDER: header folders searched as one source, in order (default ../shared/headers beside the
repository: the public op_api headers of the CANN operator repositories); for an installed CANN,
its aclnnop folders (``<home>/include/aclnnop``; 8.x: also
``<home>/opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop``). NAME: the source's name
recorded in the table (default: the folder's last two path parts, e.g. ``shared/headers``).
--check exits 1 (and writes nothing) when the shipped table differs from what the folders give
now; a test runs it.

Which headers and declarations count, and which header of an operator declared twice is used,
is the registry's rule (pyaclnn/_registry.py): the folders are read as one registry source.
Signatures are ``_signature``'s parse. Roles (which tensors are outputs): a hand-written header
says them through const (the registry's ``_roles``); where a header declares every tensor const
(opbuild's generated headers), ``generated_roles`` decides, and the table records which rule did
(pyaclnn/_registry/table.py describes the file).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyaclnn._registry.operators import TENSOR_KINDS, Registry, Source  # noqa: E402
from pyaclnn._registry.signature import Signature  # noqa: E402
from pyaclnn._registry.table import COLUMNS, FORMAT, PATH  # noqa: E402



def _default() -> Path:
    """../shared/headers beside the repository, else beside the main checkout of a git worktree."""
    import subprocess
    candidates = [ROOT.parent / "shared" / "headers"]
    try:
        common = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        common = ""
    if common:
        candidates.append(Path(common).parent.parent / "shared" / "headers")
    return next((c for c in candidates if c.is_dir()), candidates[0])


DEFAULT = _default()
# the license the public op_api headers carry (each header's first comment)
LICENSE = "CANN Open Software License Agreement Version 2.0"
# parameters an opbuild header puts between the inputs and the outputs: attributes (an aclScalar
# or aclScalarList may be an input, as aclnnPowScalarTensor's self, so it is no separator)
_ATTRIBUTE_KINDS = {"int", "float", "bool", "string", "int_array", "float_array", "bool_array"}
# names of an operator's only output when it is the last tensor (aclnnRelu's out, aclnnXlog1py's z,
# aclnnMatmulEmuSplitWeight's y, aclnnGeluBackward's gradInput, aclnnAtanGrad's dx)
_LAST_OUTPUT = {"out", "output", "result", "y", "z", "dx", "gradInput", "gradIn"}
# names only an output has: ...Out / ..._out (aclnnDynamicQuant's yOut, aclnnViewCopy's dst_out),
# but not gradOut, an input of the backward ops (aclnnGluBackward)
_OUTPUT_NAME = re.compile(r"(?!grad_?Out$).+(Out|_out)$")


def _base(name: str) -> str:
    return name[: -len("Optional")] if name.endswith("Optional") and len(name) > 8 else name


def _gradient_of(name: str, earlier: set[str]) -> bool:
    """``grad_<x>`` / ``<x>_grad`` of an earlier tensor ``x`` (aclnnModulateBackward's grad_scale,
    aclnnAcosGrad's x_grad): the gradient a backward op writes."""
    m = re.fullmatch(r"grad_(\w+)|(\w+)_grad", name)
    return m is not None and (m.group(1) or m.group(2)) in earlier


def generated_roles(name: str, sig: Signature) -> tuple[list[int], list[int], str] | None:
    """(inputs, outputs, rule) of an operator whose header declares every tensor const; None if
    no rule says. Rules, in order:

    - ``position``: opbuild writes the op definition's inputs, its attributes, then its outputs
      (the registry's ops-info rule); the tensors after the last attribute are the outputs;
    - ``name``: without an attribute after the tensors, the trailing tensors named as outputs
      (``_LAST_OUTPUT`` for the last one, ``...Out``, a gradient of an earlier tensor); an
      ``Inplace`` operator's ``self`` is its input and output.
    """
    params = sig.params
    tensors = [i for i, p in enumerate(params) if p.kind in TENSOR_KINDS]
    attributes = [i for i, p in enumerate(params) if p.kind in _ATTRIBUTE_KINDS]
    outputs: list[int] = []
    rule = "position"
    if attributes and tensors and tensors[0] < attributes[-1]:
        outputs = [i for i in tensors if i > attributes[-1]]
    if not outputs:
        rule = "name"
        earlier_all = [_base(params[i].name) for i in tensors]
        for k in range(len(tensors) - 1, -1, -1):
            n = earlier_all[k]
            earlier = set(earlier_all[:k])
            last = k == len(tensors) - 1
            if (last and n in _LAST_OUTPUT) or _OUTPUT_NAME.fullmatch(n) or _gradient_of(n, earlier):
                outputs.insert(0, tensors[k])
            else:
                break
    both = [i for i in tensors if name.startswith("Inplace") and params[i].name in ("self", "selfRef")]
    outputs = sorted(set(outputs) | set(both))
    if not outputs:
        return None
    inputs = [i for i in tensors if i not in outputs or i in both]
    return inputs, outputs, rule


def _hash(folders: list[Path]) -> tuple[int, str]:
    """(how many aclnn*.h files, SHA-256 over each file's name and bytes, by name)."""
    files: dict[str, Path] = {}
    for folder in folders:
        for path in sorted(folder.glob("aclnn*.h")):
            files.setdefault(path.name, path)
    digest = hashlib.sha256()
    for file_name in sorted(files):
        digest.update(file_name.encode() + b"\0" + files[file_name].read_bytes() + b"\0")
    return len(files), digest.hexdigest()


def _manifest(folders: list[Path]) -> dict[str, dict[str, str]]:
    """{header file name: {repo, path, blob}} from the folders' MANIFEST.json (shared/headers')."""
    out: dict[str, dict[str, str]] = {}
    for folder in folders:
        try:
            entries = json.loads((folder / "MANIFEST.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for e in entries if isinstance(entries, list) else ():
            if isinstance(e, dict) and "header" in e:
                out.setdefault(e["header"], {"repo": str(e.get("repo", "")).replace("+", "/"),
                                             "path": str(e.get("path", "")), "blob": str(e.get("blob", ""))})
    return out


def build(folders: list[Path], name: str) -> tuple[dict, dict[str, str]]:
    """(the table, {name: why a header's declaration is no operator}) of ``folders``."""
    registry = Registry([Source("builtin", name, tuple(folders))])
    manifest = _manifest(folders)
    ops: dict[str, dict] = {}
    used: dict[str, dict[str, str]] = {}
    for op, (_source, header) in registry.all().items():
        info = registry.get(op)
        assert info is not None
        sig = info.signature
        entry: dict = {"header": header.name,
                       "params": [[p.name, p.ctype, p.kind, int(p.const)] for p in sig.params]}
        if sig.launch:
            entry["launch"] = [[p.name, p.ctype, p.kind, int(p.const)] for p in sig.launch]
        if sig.problem:  # the registry's text names the header by its path: keep only its name
            entry["problem"] = sig.problem.replace(str(header), header.name)
        if info.inputs is not None and info.outputs is not None and not sig.all_const:
            entry.update(inputs=list(info.inputs), outputs=list(info.outputs), roles="const")
        elif info.inputs is not None and info.outputs is not None and sig.launch:
            entry.update(inputs=list(info.inputs), outputs=list(info.outputs), roles="const")  # the launch's const
        else:
            found = generated_roles(op, sig)
            if found is None:
                entry["roles"] = "unknown"
            else:
                entry.update(inputs=found[0], outputs=found[1], roles=found[2])
        ops[op] = entry
        used[header.name] = manifest.get(header.name, {})
    count, digest = _hash(folders)
    registry.names()
    table = {"format": FORMAT, "source": {"name": name, "headers": count, "sha256": digest, "license": LICENSE},
             "columns": COLUMNS, "headers": {h: used[h] for h in sorted(used)}, "ops": dict(sorted(ops.items()))}
    return table, dict(sorted(registry._not_ops.items()))


def encode(table: dict) -> bytes:
    """The file's bytes: compact JSON, gzip'd without a timestamp (the same table, the same bytes)."""
    text = json.dumps(table, separators=(",", ":"), ensure_ascii=False, sort_keys=False)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, help=f"header folders (default {DEFAULT})")
    parser.add_argument("--name", help="the source's name recorded in the table")
    parser.add_argument("--check", action="store_true", help="exit 1 if the shipped table is out of date")
    parser.add_argument("--out", type=Path, default=PATH, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    folders = [f.resolve() for f in (args.folders or [DEFAULT])]
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        print(f"gen_signatures: no such header folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    name = args.name or "/".join(folders[0].parts[-2:])
    table, not_ops = build(folders, name)
    if args.check:
        try:
            shipped = json.loads(gzip.decompress(args.out.read_bytes()))
        except (OSError, ValueError, EOFError):
            shipped = None
        if shipped != table:
            print(f"{args.out} is out of date for {', '.join(map(str, folders))}: run python tools/gen_signatures.py",
                  file=sys.stderr)
            return 1
        return 0
    args.out.write_bytes(encode(table))
    counts: dict[str, int] = {}
    for entry in table["ops"].values():
        counts[entry["roles"]] = counts.get(entry["roles"], 0) + 1
    problems = {op: e["problem"] for op, e in table["ops"].items() if "problem" in e}
    print(f"{args.out}: {len(table['ops'])} operators from {table['source']['headers']} headers "
          f"({args.out.stat().st_size} bytes); roles: {counts}")
    for op, why in problems.items():
        print(f"  aclnn{op} cannot be called: {why}")
    for op, why in not_ops.items():
        print(f"  not an operator: aclnn{op}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
