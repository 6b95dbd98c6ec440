"""Where each operator's two functions live: the library that exports them, declared to cffi
from the operator's own prototype only (``_ffi.op_ffi``).

Libraries searched (abi.md §5.4, as op-plugin's GetOpApiFuncAddr does):
- an operator of a custom package: that package's ``op_api/lib/libcust_opapi.so``;
- any other: the op library the backend loaded (``libopapi.so`` on 8.x, ``libopapi_nn.so`` on
  9.x), then every other ``libopapi_*.so`` of the toolkit's lib64 (9.x splits the operators
  across libopapi_math, _cv, _transformer...), then the 8.x feature libraries
  (``libaclnn_ops_infer.so``...). Never ``libopapi.so`` beside per-repo libraries.
Which library exports a name is read from its ELF symbol table (``_elf.exported_functions``,
cached by ``Registry.exports``), so nothing is dlopened just to be probed; the registry asks the
same of a custom package before its declaration wins (``_registry.library_problem``).
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from .. import errors
from .._registry.operators import OpInfo
from ._ffi import FUNCTIONS, ffi, op_ffi
from ._lib import Lib
from ._loader import Discovery, open_library

FALLBACKS = ("libaclnn_ops_infer.so", "libaclnn_ops_train.so", "libaclnn_math.so", "libaclnn_sparse.so",
             "libaclnn_fft.so", "libaclnn_rand.so")
_SEED = frozenset(FUNCTIONS["opapi"])  # declared in the base FFI: used straight from lib.op


def builtin_libraries(found: Discovery) -> list[Path]:
    """The toolkit's op libraries, in search order (module docstring)."""
    dirs = [d for d in found.search_dirs if d.is_dir()]
    out: list[Path] = [found.opapi] if found.opapi else []
    for d in dirs:
        out += sorted(p for p in d.glob("libopapi_*.so") if p.is_file())
    if found.opapi is not None and found.opapi.name == "libopapi.so":
        out += [d / n for n in FALLBACKS for d in dirs if (d / n).is_file()]
    unique: list[Path] = []
    for p in out:
        if all(p.resolve() != u.resolve() for u in unique):
            unique.append(p)
    return unique


class OpLibraries:
    """The op libraries of one loaded CANN, opened on demand."""

    def __init__(self, lib: Lib, exports: Callable[[Path], set[str] | None]) -> None:
        self.lib = lib
        self._lock = threading.Lock()
        self._opened: dict[str, Any] = {}            # dlopen bookkeeping shared with the loader
        self._keep: list[Any] = []                   # each operator's FFI library: must stay alive
        self.exports = exports  # aclnn* functions a library exports (None: not ELF): the registry's cache

    def builtin_libraries(self) -> list[Path]:
        return builtin_libraries(self.lib.found)

    def candidates(self, info: OpInfo) -> list[Path]:
        if info.source.library is not None:
            return [info.source.library]
        return self.builtin_libraries()

    def functions(self, info: OpInfo) -> tuple[Any, Any]:
        """(phase 1, phase 2) of ``info`` as cffi functions; NotSupportedError if none exports them."""
        name = f"aclnn{info.name}"
        phase1 = f"{name}GetWorkspaceSize"
        candidates = self.candidates(info)
        if (info.shipped and phase1 in _SEED and candidates
                and candidates[0] == self.lib.found.opapi):
            try:  # the seed operators: headers/' prototype, already bound on the loaded library
                return getattr(self.lib.op, phase1), getattr(self.lib.op, name)
            except AttributeError:
                pass
        problems: list[str] = []
        with self._lock:
            for path in candidates:
                exports = self.exports(path) if path.is_file() else set()
                if exports is not None and phase1 not in exports:
                    continue
                try:
                    open_library(path, self.lib.found.search_dirs + [path.parent], self._opened, self.lib.found.leave)
                    lib = op_ffi(info.signature.prototype()).dlopen(str(path), ffi.RTLD_NOW | ffi.RTLD_GLOBAL)
                    fns = getattr(lib, phase1), getattr(lib, name)
                except (OSError, AttributeError) as exc:
                    problems.append(f"{path.name}: {exc}")
                    continue
                self._keep.append(lib)
                return fns
        where = ", ".join(str(p) for p in candidates) or "no op library"
        others = [s.text(info.name) for s in info.skipped if s.source != info.source]
        raise errors.NotSupportedError(
            f"{name} is declared in {info.header} ({info.source.label}) but no library exports "
            f"{phase1} and {name} (looked in {where})" + (f"; {'; '.join(problems)}" if problems else "")
            + (f"; also {'; '.join(others)}" if others else ""))
