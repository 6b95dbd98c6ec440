"""The cffi FFI object, declared from ``headers/`` (C text only, exactly as CANN's headers).

No dlopen happens here. ``HEADERS`` maps each library role to the headers whose functions it
must export, which lets ``doctor`` report every declared symbol as found or missing.
"""
from __future__ import annotations

import re
import cffi

from .._core.headers_path import HEADER_DIR


def _op_library_headers() -> tuple[str, ...]:
    """The headers of headers/ whose operators the op library pyaclnn loads must export: those
    of hicann/ops-nn (libopapi.so on 8.x, libopapi_nn.so on 9.x; their specs' REPO). Other
    operators of headers/ (ops-math: libopapi_math.so on 9.x) are found like any other, from
    their own prototype (``op_ffi``)."""
    # which library an operator of headers/ is in is its spec's REPO, asked by name of the
    # registry's catalog (which pyaclnn.ops fills: the operators' folders stand above this layer)
    from .._registry import references
    from .._registry.signature import index_header
    found = []
    for path in sorted(HEADER_DIR.glob("aclnn_*.h")):
        names = index_header(path.read_text(encoding="ascii")) if path.name != "aclnn_base.h" else []
        if names and all(n in references.names() and getattr(references.spec(n), "REPO", "") == "ops-nn"
                         for n in names):
            found.append(path.name)
    return tuple(found)


# Order matters: later headers use types of earlier ones.
HEADERS = {
    "runtime": ("acl_base.h", "acl_rt.h"),
    "nnopbase": ("acl_meta.h", "aclnn_base.h"),
    "opapi": _op_library_headers(),
}
_FUNC = re.compile(r"^[A-Za-z_][\w \*]*?\b(acl\w+)\s*\(", re.M)

ffi = cffi.FFI()
FUNCTIONS: dict[str, tuple[str, ...]] = {}
for _role, _names in HEADERS.items():
    _found: list[str] = []
    for _name in _names:
        _text = (HEADER_DIR / _name).read_text(encoding="ascii")
        ffi.cdef(_text)
        _found += _FUNC.findall(re.sub(r"/\*.*?\*/", "", _text, flags=re.S))
    FUNCTIONS[_role] = tuple(_found)


def op_ffi(prototype: str) -> cffi.FFI:
    """An FFI declaring one operator's two functions, sharing every type of ``ffi`` (include):
    each operator found at run time gets its own, so two packages declaring the same name
    never clash, and only the prototypes in use are ever parsed."""
    own = cffi.FFI()
    own.include(ffi)
    own.cdef(prototype, override=True)
    return own


# The driver's chip query (hicann/runtime pkg_inc/driver/ascend_hal_base.h; drvError_t is an enum,
# 0 = DRV_ERROR_NONE), which the runtime's boot asks to pick its implementation library
# (runtime_keeper.cc GetDeviceType); the loader asks it the same before aclInit.
hal_ffi = cffi.FFI()
hal_ffi.cdef("int halGetDeviceInfo(uint32_t devId, int32_t moduleType, int32_t infoType, int64_t *value);")

libc_ffi = cffi.FFI()
libc_ffi.cdef("void free(void *ptr);")
# aclGetViewShape & co. return arrays the caller must release (CANN: new[] of int64_t, which is
# malloc underneath with glibc's operator new[]; the emulator: malloc).
libc = libc_ffi.dlopen(None)
