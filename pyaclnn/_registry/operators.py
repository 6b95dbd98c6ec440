"""The operator registry: which operators a backend can call, their signatures and roles.

Every operator is found in a header (``_signature``), in one of these *sources*, searched in
this order by the acl backend (custom operator libraries before the built-in ones, as torch_npu
looks them up, abi.md §5.4):

1. custom operator packages: each vendor folder of ASCEND_CUSTOM_OPP_PATH
   (colon-separated), then ``$ASCEND_OPP_PATH/vendors/<name>`` for each name of
   ``vendors/config.ini``'s ``load_priority``; headers in ``op_api/include/``, the library
   ``op_api/lib/libcust_opapi.so``, the op definitions in
   ``op_impl/ai_core/tbe/config/<soc>/aic-<soc>-ops-info.json``;
2. the installed CANN's aclnnop headers: ``<home>/include/aclnnop/`` (9.x, and
   8.x's link) and ``<home>/opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop/`` (8.x):
   they declare the library this CANN installed, so its own header comes before any copy;
3. pyaclnn's own ``headers/`` (the operators it ships, with their NumPy references), for a
   CANN whose toolkit has no header for them;
4. pyaclnn's signature table (``_signature_table``: every public operator's signature, generated
   from the CANN operator repositories' headers), so that an operator is known without CANN.

Within one source, the operator's own header comes first: ``aclnn_<snake_case>.h``, compared
without underscores or case (``aclnn_group_norm.h`` and ``aclnn_logsoftmax.h`` are GroupNorm's
and LogSoftmax's own), then the other headers declaring it, by file name. (Real packages do
declare a name twice: ops-nn's aclnn_group_norm.h and experimental aclnn_group_norm_experimental.h
both declare aclnnGroupNorm, with ``gamma``/``N`` and ``gammaOptional``/``n``.) Every declaration
of an operator whose prototype differs from the one used is kept (``OpInfo.conflicts``), and
``pyaclnn ops`` and ``doctor`` name it: the keyword names an operator takes come from the
declaration used.

The first source that declares an operator wins, except a custom package whose library does
not run it: its ``libcust_opapi.so`` is missing, or does not export both ``aclnn<Op>GetWorkspaceSize``
and ``aclnn<Op>`` (``library_problem``, read from the ELF symbol table). That declaration is
passed over (``Skipped``, kept for doctor and ``pyaclnn ops``) and the search goes on, as op-plugin's
GetOpApiFuncAddr goes on to the next library when a custom one is missing or its dlsym fails
(Ascend/op-plugin op_plugin/utils/op_api_common.h). nnopbase takes no part in this: the aclnn entry
points are found by whoever calls them. If no source provides the operator, its first declaration
stands, so that calling it says why it cannot run.

Only real API headers count (``_signature.internal_header``: not ``*_inner.h`` or the library's
own C++), and only operators a header declares both functions of (``_signature.index_header``).

The NumPy backend searches pyaclnn's ``headers/`` first (the operators it computes), then the same
custom packages, toolkit headers and signature table (``reference_sources``), with the same rule,
only to tell an operator it knows but cannot run from a name no header declares.

Operator names are indexed on first use (a regular expression over each header, no parse);
a header is parsed only when one of its operators is used, and parses are cached.

Inputs and outputs: a hand-written header declares inputs ``const aclTensor *`` and outputs
``aclTensor *``; a parameter named ``...Ref`` (``selfRef`` of the in-place ops) is both. A
generated header declares every tensor const: the op definition (ops-info json) of its
package says which are outputs (by name, else by position: opbuild writes the inputs, the
attributes, then the outputs); where nothing says, the roles are undetermined (``roles_problem``).
The signature table records the roles its generator found (tools/gen_signatures.py: const, else
opbuild's order or the names).
The index rule of aclSetInputTensorAddr / aclSetOutputTensorAddr is ``"non_null"`` (the non-null
tensors of the group, in parameter order: hand-written ops) or ``"position"`` (the position in
the op definition, counting NULL optional tensors: generated ops, abi.md Addendum).
"""
from __future__ import annotations

import difflib
import threading
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import errors
from .._core import elf as _elf
from .._core import env as _env
from .._core.headers_path import HEADER_DIR
from . import references as _references  # the operators with a reference, by name
from . import table as _signature_table
from .opdefs import OpDef, normal_name, read_opdefs
from .signature import Signature, internal_header, parse_header, scan_header

__all__ = ["Source", "Skipped", "Declaration", "OpInfo", "Registry", "shipped_roles", "references"]

TENSOR_KINDS = ("tensor", "tensor_list")


def references() -> tuple[str, ...]:
    """The operators pyaclnn ships with a spec and a NumPy reference (a folder of pyaclnn/ops each)."""
    return _references.names()


def shipped_roles(name: str) -> tuple[tuple[str, ...], str] | None:
    """(outputs, index rule) of a shipped operator whose header cannot say them (generated, all
    const): its spec's ``ROLES``, from the op definitions traced in shared/reference/ops.md. Only
    these: everything else comes from headers."""
    return getattr(_references.spec(name), "ROLES", None) if name in _references.names() else None


@dataclass(frozen=True)
class Source:
    """Where operators are declared, and which library exports them."""
    kind: str                          # "custom", "pyaclnn", "builtin" or "table"
    label: str                         # for doctor and `pyaclnn ops`
    include_dirs: tuple[Path, ...]     # kind "table": the table's file
    library: Path | None = None        # libcust_opapi.so; None: the toolkit's op libraries
    opdef_files: tuple[Path, ...] = ()  # aic-<soc>-ops-info.json of a package

    def headers(self) -> Iterator[Path]:
        seen: set[Path] = set()
        for folder in self.include_dirs:
            for path in sorted(folder.glob("aclnn*.h")):
                real = path.resolve()
                if real not in seen:
                    seen.add(real)
                    yield path


@dataclass(frozen=True)
class Skipped:
    """A declaration passed over: the library of its package cannot run the operator."""
    source: Source
    header: Path
    reason: str                        # "its library ... is missing", "... does not export ..."

    def text(self, name: str) -> str:
        return f"{self.source.label} declares aclnn{name} ({self.header}) but {self.reason}"


@dataclass(frozen=True)
class Declaration:
    """Another declaration of an operator, whose prototype differs from the one used."""
    source: Source
    header: Path
    signature: Signature

    def text(self, name: str) -> str:
        return f"{self.source.label} ({self.header.name}) declares {self.signature}"


def own_header(name: str, header: Path) -> bool:
    """``header`` is the operator's own file: aclnn_<snake_case>.h, compared without underscores
    or case (GroupNorm: aclnn_group_norm.h; LogSoftmax: aclnn_log_softmax.h or aclnn_logsoftmax.h)."""
    return header.name.lower().replace("_", "") == f"aclnn{name.lower()}.h"


# (source, operator name) -> why the source's own library cannot run it, None if it can
Provides = Callable[[Source, str], "str | None"]


def library_problem(source: Source, name: str, exports: Callable[[Path], set[str] | None]) -> str | None:
    """Why the library of ``source`` (a custom package) cannot run ``aclnn<name>``, None if it
    can: it must be there and export both functions, as ``exports`` (the aclnn* functions of
    its ELF symbol table) says. A source without its own library (headers/, the toolkit's) is
    never judged here: the toolkit's libraries are the last place to look."""
    lib = source.library
    if lib is None:
        return None
    if not lib.is_file():
        return f"its library {lib} is missing"
    names = exports(lib)
    if names is None:
        return f"its library {lib} is not a readable ELF shared object"
    missing = [f for f in (f"aclnn{name}GetWorkspaceSize", f"aclnn{name}") if f not in names]
    return f"its library {lib} does not export {' or '.join(missing)}" if missing else None


@dataclass
class OpInfo:
    """One operator: its signature, where it was found, and which tensors are inputs/outputs."""
    name: str
    signature: Signature
    source: Source
    header: Path
    inputs: tuple[int, ...] | None      # parameter positions; None: undetermined
    outputs: tuple[int, ...] | None
    index_rule: str = "non_null"        # or "position"
    roles_problem: str | None = None    # why inputs/outputs are undetermined
    skipped: tuple[Skipped, ...] = ()   # declarations before this one, passed over (Registry.resolve)
    conflicts: tuple[Declaration, ...] = ()  # the other declarations whose prototype differs
    shipped: bool = False               # the prototype pyaclnn's headers/ declare (its spec and reference apply)
    cache: dict[str, Any] = field(default_factory=dict)  # per-backend plans (argument slots...)

    @cached_property
    def kinds(self) -> tuple[str, ...]:
        return tuple(p.kind for p in self.signature.params)

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.signature.params)

    def role_text(self, position: int) -> str:
        if self.inputs is None or self.outputs is None:
            return "?"
        if position in self.inputs and position in self.outputs:
            return "in/out"
        return "in" if position in self.inputs else ("out" if position in self.outputs else "")

    @cached_property  # asked on every call of the operator: its answer never changes
    def has_reference(self) -> bool:
        """A NumPy reference exists, and this is the operator it was written for: the prototype
        of pyaclnn's headers/ (whichever source's header declares it), or, for the aten tier,
        the C parameters its table entry names (``references.aten_fits``)."""
        return (self.shipped and self.name in _references.names()) or _references.aten_fits(self.name, self.names)

    @property
    def tier(self) -> str | None:
        """The tier of its NumPy reference, "exact" or "aten" (``references.tier``), or None without one."""
        return _references.tier(self.name) if self.has_reference else None


class Registry:
    """The operators of a list of sources; thread-safe, lazy, cached."""

    def __init__(self, sources: list[Source], provides: Provides | None = None) -> None:
        self.sources = list(sources)
        # default: library_problem on the ELF symbol tables, each library read once
        self._provides = provides or (lambda source, name: library_problem(source, name, self.exports))
        self._exports: dict[Path, set[str] | None] = {}
        self._resolved: dict[str, tuple[Source, Path, tuple[Skipped, ...]] | None] = {}
        self._lock = threading.Lock()
        self._indexes: dict[int, dict[str, list[Path]]] = {}  # source position -> {op: its headers, own first}
        self._not_ops: dict[str, str] = {}  # name -> why a header declaring its phase 1 lists no operator
        self._parsed: dict[Path, dict[str, Signature]] = {}
        self._opdefs: dict[Path, dict[str, OpDef]] = {}  # parsed ops-info files
        self._ops: dict[str, OpInfo | None] = {}

    # -- discovery ---------------------------------------------------------------------------
    def _index(self, i: int) -> dict[str, list[Path]]:
        index = self._indexes.get(i)
        if index is None:
            index = {}
            source = self.sources[i]
            if source.kind == "table":  # one header per operator, the table's file standing for its folder
                table = source.include_dirs[0]
                self._indexes[i] = {n: [table / h] for n, h in _signature_table.index(table).items()}
                return self._indexes[i]
            for header in source.headers():  # by file name
                try:
                    text = header.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                names, halves = scan_header(text)
                internal = internal_header(header.name, text)
                if internal:
                    halves, names = halves + names, []
                for name in halves:
                    self._not_ops.setdefault(name, f"{header} declares aclnn{name}GetWorkspaceSize, but "
                                                   + (f"is {internal}" if internal else
                                                      f"no launch function aclnn{name}"))
                for name in names:
                    index.setdefault(name, []).append(header)
            for name, headers in index.items():
                if len(headers) > 1:  # the operator's own header first (module docstring)
                    headers.sort(key=lambda h, n=name: not own_header(n, h))  # type: ignore[misc]
            self._indexes[i] = index
        return index

    def declared(self, source: Source) -> dict[str, Path]:
        """The operators ``source`` declares (its own index, whoever wins), by name, with the
        header used from it."""
        return {name: headers[0] for name, headers in self._index(self.sources.index(source)).items()}

    def declarations(self, name: str, table: bool = True) -> list[tuple[Source, Path]]:
        """Every (source, header) declaring ``name``, in precedence order (indexes every source;
        ``table`` False: not the signature table)."""
        return [(s, h) for i, s in enumerate(self.sources) if table or s.kind != "table"
                for h in self._index(i).get(name, ())]

    def conflicts(self) -> dict[str, OpInfo]:
        """The operators declared with differing prototypes (parses only the headers of names
        declared more than once), by name."""
        counts: dict[str, int] = {}
        tabled: set[str] = set()
        for i in range(len(self.sources)):
            if self.sources[i].kind == "table":
                tabled.update(self._index(i))
                continue
            for name, headers in self._index(i).items():
                counts[name] = counts.get(name, 0) + len(headers)
        out = {}
        # the table's declaration counts only where it is used (a package's passed over): see _load
        for name in sorted(n for n, c in counts.items() if c > 1 or (n in tabled and self._tabled(n))):
            info = self.get(name)
            if info is not None and info.conflicts:
                out[name] = info
        return out

    def _tabled(self, name: str) -> bool:
        where = self.resolve(name)
        return where is not None and where[0].kind == "table"

    def exports(self, library: Path) -> set[str] | None:
        """The aclnn* functions ``library`` exports (ELF symbol table, cached; None: unreadable)."""
        if library not in self._exports:
            self._exports[library] = _elf.exported_functions(library, "aclnn")
        return self._exports[library]

    def names(self) -> set[str]:
        """Every operator name any source declares (index only; indexes every source)."""
        found: set[str] = set()
        for i in range(len(self.sources)):
            found.update(self._index(i))
        return found

    def declares(self, name: str) -> bool:
        """Whether any source declares ``name`` (index only: nothing parsed, no library read)."""
        return any(name in self._index(i) for i in range(len(self.sources)))

    def resolve(self, name: str) -> tuple[Source, Path, tuple[Skipped, ...]] | None:
        """The source and header a backend uses for ``name``, with the declarations passed over
        before it (module docstring); None if no source declares it. Sources are indexed only
        as far as needed; the answer is cached."""
        if name in self._resolved:
            return self._resolved[name]
        skipped: list[Skipped] = []
        found: tuple[Source, Path, tuple[Skipped, ...]] | None = None
        for i, source in enumerate(self.sources):
            headers = self._index(i).get(name)
            if not headers:
                continue
            header = headers[0]
            reason = self._provides(source, name) if source.library is not None else None
            if reason is None:
                found = (source, header, tuple(skipped))
                break
            skipped.append(Skipped(source, header, reason))
        if found is None and skipped:  # declared, provided by none: the first declaration stands
            found = (skipped[0].source, skipped[0].header, tuple(skipped))
        self._resolved[name] = found
        return found

    def all(self) -> dict[str, tuple[Source, Path]]:
        """Every operator name found, with the source and header used for it (indexes every source)."""
        found: dict[str, tuple[Source, Path]] = {}
        for name in sorted(self.names()):
            where = self.resolve(name)
            assert where is not None
            found[name] = where[:2]
        return found

    def unknown(self, name: str, note: str = "") -> errors.UnknownOperatorError:
        """The error for ``name`` when no source declares it, naming every place searched."""
        self.names()  # every source indexed: _not_ops complete
        why = self._not_ops.get(name)
        declared = (f"no API header declares both aclnn{name}GetWorkspaceSize and aclnn{name} ({why}; "
                    if why else f"no header declares aclnn{name}GetWorkspaceSize (")
        if name.startswith("aclnn") and name[5:] in self.names():
            hint, close = f" (pass the name without its prefix: {name[5:]!r})", None
        else:
            close = self.close_name(name)
            hint = f" (did you mean {close!r}?)" if close else ""
        error = errors.UnknownOperatorError(
            f"aclnn{name} is not a known operator{hint}: {declared}searched {self.searched()}){note}")
        error.close_name = close
        return error

    def close_name(self, name: str) -> str | None:
        """A known operator name close to ``name`` (another case or a typo), or None."""
        by_lower = {n.lower(): n for n in self.names()}
        close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.85)
        return by_lower[close[0]] if close else None

    def searched(self) -> str:
        return "; ".join(f"{s.label}: {', '.join(str(d) for d in s.include_dirs) or '-'}" for s in self.sources)

    # -- operators ---------------------------------------------------------------------------
    def get(self, name: str) -> OpInfo | None:
        """The operator ``name`` ("Add"), parsed on first use; None if no source declares it."""
        try:
            return self._ops[name]
        except KeyError:
            pass
        with self._lock:
            if name not in self._ops:
                self._ops[name] = self._load(name)
        return self._ops[name]

    def _parse(self, source: Source, header: Path, name: str) -> Signature | None:
        if source.kind == "table":
            return _signature_table.signature(name, source.include_dirs[0])
        parsed = self._parsed.get(header)
        if parsed is None:
            parsed = self._parsed[header] = parse_header(header.read_text(encoding="utf-8", errors="replace"))
        return parsed.get(name)

    def _load(self, name: str) -> OpInfo | None:
        where = self.resolve(name)
        if where is None:
            return None
        source, header, skipped = where
        signature = self._parse(source, header, name)
        if signature is None:  # indexed, yet the declaration is not one pyaclnn can read
            signature = Signature(name, (), f"the declaration of aclnn{name}GetWorkspaceSize in {header} "
                                            "could not be parsed")
        conflicts = []
        shipped = source.kind == "pyaclnn"
        # the table's declaration is never a conflict: it describes the public repositories'
        # headers, not this install's (the install's own header is the one that counts)
        for other_source, other in self.declarations(name, table=False):
            if other == header:
                continue
            sig = self._parse(other_source, other, name)
            if sig is None:
                continue
            if sig.same_prototype(signature):
                shipped = shipped or other_source.kind == "pyaclnn"
            else:
                conflicts.append(Declaration(other_source, other, sig))
        return self._roles(name, signature, source, header, skipped, tuple(conflicts), shipped)

    def _roles(self, name: str, sig: Signature, source: Source, header: Path,
               skipped: tuple[Skipped, ...] = (), conflicts: tuple[Declaration, ...] = (),
               shipped: bool = False) -> OpInfo:
        tensors = [i for i, p in enumerate(sig.params) if p.kind in TENSOR_KINDS]
        info = OpInfo(name, sig, source, header, None, None, skipped=skipped, conflicts=conflicts, shipped=shipped)
        const = {i: sig.params[i].const for i in tensors}
        relaunched = {p.name: p.const for p in sig.launch if p.kind in TENSOR_KINDS}
        if sig.all_const and relaunched and not all(relaunched.values()):
            # a launch that re-declares the tensors is hand-written (opbuild writes the 4-argument
            # one), and says which are outputs: aclnnGaussianBlur's phase 1 takes `const aclTensor
            # *dst`, its launch `aclTensor *dst` (ops-cv experimental/image/gaussian_blur/op_api)
            const = {i: relaunched.get(sig.params[i].name, c) for i, c in const.items()}
        if not sig.all_const or const != {i: True for i in tensors}:
            # hand-written: const is an input, non-const an output, ...Ref both
            info.inputs = tuple(i for i in tensors if const[i] or sig.params[i].name.endswith("Ref"))
            info.outputs = tuple(i for i in tensors if not const[i] or sig.params[i].name.endswith("Ref"))
            return info
        info.index_rule = "position"  # generated headers come with generated (nnopbase) executors
        outputs: set[str] | None = None
        roles = shipped_roles(name) if shipped else None
        table = _signature_table.roles(name, source.include_dirs[0]) if source.kind == "table" else None
        if roles is not None:
            names, info.index_rule = roles
            outputs = {normal_name(n) for n in names}
        elif table is not None:  # what the table's generator found (its file says how)
            info.inputs, info.outputs = table[0], table[1]
            return info
        else:
            opdef = self._opdef(source, name)
            if opdef is not None:
                ins, outs, n_attrs = opdef
                outputs = {normal_name(n) for n in outs}
                known = outputs | {normal_name(n) for n in ins}
                unknown = [sig.params[i].name for i in tensors if normal_name(sig.params[i].name) not in known]
                n = len(sig.params)
                if unknown and n == len(ins) + n_attrs + len(outs):
                    # opbuild writes the definition's inputs, its attributes, then its outputs, and
                    # may rename an output (ForeachMulScalarList's y is `out`): go by position
                    info.outputs = tuple(i for i in tensors if i >= n - len(outs))
                    info.inputs = tuple(i for i in tensors if i < len(ins))
                    return info
                if unknown:
                    outputs = None
                    info.roles_problem = (f"the op definition of {name} names no tensor {', '.join(unknown)}")
        if outputs is None:
            info.roles_problem = info.roles_problem or (
                f"aclnn{name}'s header ({header.name}) declares every tensor const and "
                + ("no rule of the table's generator (tools/gen_signatures.py) says which are outputs"
                   if source.kind == "table" else f"no op definition of {source.label} names its outputs"))
            return info
        info.outputs = tuple(i for i in tensors if normal_name(sig.params[i].name) in outputs)
        info.inputs = tuple(i for i in tensors if i not in info.outputs)
        return info

    def _opdef(self, source: Source, name: str) -> OpDef | None:
        """``name``'s definition in the first of ``source``'s ops-info files that has it (one per
        SoC; a toolkit's are large, so they are read one at a time, only as far as needed)."""
        for path in source.opdef_files:
            defs = self._opdefs.get(path)
            if defs is None:
                defs = self._opdefs[path] = read_opdefs(path)
            if name in defs:
                return defs[name]
        return None


