"""Tests of the CANN host emulator itself (tests/emulator), driven directly through cffi ABI mode.

The emulator stands in for the Ascend runtime in pyaclnn's device-path tests, so it is proven
here on its own: install layouts and symbol tables, the runtime rules (init, per-thread contexts,
memory), handle bookkeeping, fault injection, error messages, and the four operators' checks and
results against small NumPy references written from shared/reference/ops.md.

The 8.x toolkit is loaded into this process; the 9.x layout and the stub build run in
subprocesses (two toolkits cannot share one process: their libraries have the same SONAMEs).
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

cffi = pytest.importorskip("cffi")

from emulator.build import KEEPER, Emulator, build_toolkit, library_paths, toolkit_env  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]
HEADERS = TESTS.parent / "headers"
ABI_JSON = TESTS.parent.parent / "shared" / "reference" / "abi.json"
HEADER_ORDER = ["acl_base.h", "acl_rt.h", "acl_meta.h", "aclnn_base.h", "aclnn_mse_loss_backward.h",
                "aclnn_group_norm_backward.h", "aclnn_cross_entropy_loss_grad.h", "aclnn_prelu_backward.h"]
RUNTIME_HEADERS = HEADER_ORDER[:2]
NNOPBASE_HEADERS = HEADER_ORDER[2:4]
OP_HEADERS = HEADER_ORDER[4:]

# status codes used below
OK = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_REPEAT_FINALIZE = 100037
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
ACL_ERROR_RT_NO_DEVICE = 207004
ACL_ERROR_RT_AICORE_EXCEPTION = 507015
ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899
NULLPTR = 161001
INVALID = 161002
RUNTIME_ERROR = 361001
TILING = 561002
INNER = 561000
INNER_NULLPTR = 561103
OPP_PATH = 561107

ACL_FLOAT, ACL_FLOAT16, ACL_INT64, ACL_BF16 = 0, 1, 9, 27
ND = 2
H2D, D2H = 1, 2
DTYPES = {np.dtype(np.float32): ACL_FLOAT, np.dtype(np.float16): ACL_FLOAT16, np.dtype(np.int64): ACL_INT64}


def header_functions(names: list[str]) -> list[str]:
    """Function names declared in the given headers (declarations end with ');')."""
    out = []
    for name in names:
        for line in (HEADERS / name).read_text().splitlines():
            line = line.strip()
            if line.endswith(");") and not line.startswith(("typedef", "#", "/*", "*")):
                out.append(re.match(r"[^(]*?(\w+)\s*\(", line).group(1))
    return out


def make_ffi() -> "cffi.FFI":
    ffi = cffi.FFI()
    ffi.cdef("\n".join((HEADERS / h).read_text() for h in HEADER_ORDER))
    return ffi


# ------------------------------------------------------------------------------------------------
# fixtures
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def toolkits(request, tmp_path_factory):
    """The 8.x toolkit loaded in this process and a 9.x one (only used from subprocesses / readelf).

    One process can host one emulated toolkit (the libraries share SONAMEs), so the 8.x toolkit is
    the suite's own (conftest's ``emulator_home``) when there is one."""
    root = tmp_path_factory.mktemp("emu-cann")
    try:
        home8 = Path(request.getfixturevalue("emulator_home"))
    except pytest.FixtureLookupError:
        home8 = build_toolkit(root, "8.x")
    return {"8.x": home8, "9.x": build_toolkit(root, "9.x")}


class Acl:
    """The 8.x emulated toolkit loaded in this process, plus small device helpers."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.ffi = ffi = make_ffi()
        rt, nn, op = library_paths(home)
        flags = ffi.RTLD_NOW | ffi.RTLD_GLOBAL
        self.keeper = ffi.dlopen(str(home / "lib64" / KEEPER), flags)   # the runtime's DT_NEEDED
        self.rt = ffi.dlopen(str(rt), flags)          # dependency order, absolute paths
        self.nn = ffi.dlopen(str(nn), flags)
        self.op = ffi.dlopen(str(op), ffi.RTLD_NOW)
        self.emu = Emulator(home)
        self._seen = threading.local()
        self.stream = self.event = None
        self.ensure()

    def ensure(self) -> None:
        """aclInit + device 0 + a usable stream in the main thread (other tests of the suite may
        have finalized acl or reset the device since the last test)."""
        ffi = self.ffi
        # the probe: waiting for an event never recorded queues nothing, but needs a context, a
        # live stream of that context and a live event (a zero-byte copy succeeds before any check)
        if self.stream is not None and self.rt.aclrtStreamWaitEvent(self.stream, self.event) == OK:
            return
        assert self.rt.aclInit(ffi.NULL) in (OK, ACL_ERROR_REPEAT_INITIALIZE)
        assert self.rt.aclrtSetDevice(0) == OK
        p = ffi.new("aclrtStream *")
        assert self.rt.aclrtCreateStream(p) == OK
        e = ffi.new("aclrtEvent *")
        assert self.rt.aclrtCreateEvent(e) == OK
        self.stream, self.event = p[0], e[0]
        self.errmsg()

    def close(self) -> None:
        """Give back what ensure() took (its event and stream, its aclrtSetDevice and its aclInit
        reference), so that later test files of the session start from a process where nothing
        is initialized: a reference kept to the end of the session is what other files see."""
        if self.stream is None:
            return
        rt, ffi = self.rt, self.ffi
        if rt.aclrtStreamWaitEvent(self.stream, self.event) == OK:   # the helper's context still lives
            assert rt.aclrtDestroyEvent(self.event) == OK
            assert rt.aclrtDestroyStream(self.stream) == OK
            assert rt.aclrtResetDevice(0) == OK
        if self.emu.live("init"):
            assert rt.aclFinalizeReference(ffi.new("uint64_t *")) == OK
        self.stream = self.event = None
        self.errmsg()

    def errmsg(self) -> str | None:
        """The error text new since the last errmsg() of this thread: aclGetRecentErrMsg returns
        it followed by everything it returned before (see test_recent_error_message_order)."""
        m = self.rt.aclGetRecentErrMsg()
        text = None if m == self.ffi.NULL else self.ffi.string(m).decode()
        seen = getattr(self._seen, "text", None)
        self._seen.text = text
        if text is None or text == seen:
            return None
        return text[:-len(seen) - 1] if seen and text.endswith("\n" + seen) else text


@pytest.fixture(scope="module")
def acl(toolkits):
    helper = Acl(toolkits["8.x"])
    yield helper
    helper.close()


class Dev:
    """Per-test helper: device buffers and tensors, released at teardown; checks the misuse count."""

    def __init__(self, acl: Acl) -> None:
        self.acl, self.ffi, self.rt, self.nn, self.op = acl, acl.ffi, acl.rt, acl.nn, acl.op
        self.emu = acl.emu
        self.ptrs: list = []
        self.tensors: list = []
        self.expected_misuse = 0

    def malloc(self, nbytes: int):
        p = self.ffi.new("void **")
        assert self.rt.aclrtMalloc(p, nbytes, 0) == OK
        self.ptrs.append(p[0])
        return p[0]

    def upload(self, arr: np.ndarray, pad: int = 0):
        arr = np.ascontiguousarray(arr)
        ptr = self.malloc(arr.nbytes + pad)
        assert self.rt.aclrtMemcpy(ptr, arr.nbytes + pad, self.ffi.from_buffer(arr), arr.nbytes, H2D) == OK
        return ptr

    def download(self, ptr, n: int, dtype=np.float32) -> np.ndarray:
        """Synchronize the stream (phase 2 only queues the kernel), then copy to the host."""
        assert self.rt.aclrtSynchronizeStream(self.acl.stream) == OK
        out = np.empty(n, dtype)
        assert self.rt.aclrtMemcpy(self.ffi.from_buffer(out), out.nbytes, ptr, out.nbytes, D2H) == OK
        return out

    def tensor(self, ptr, shape, dtype=np.float32, strides=None, offset=0, storage=None):
        shape = list(shape)
        dims = self.ffi.new("int64_t[]", shape or [0])
        st = self.ffi.new("int64_t[]", list(strides)) if strides is not None else self.ffi.NULL
        storage = list(storage) if storage is not None else shape
        sd = self.ffi.new("int64_t[]", storage or [0])
        acl_dtype = dtype if isinstance(dtype, int) else DTYPES[np.dtype(dtype)]
        t = self.nn.aclCreateTensor(dims, len(shape), acl_dtype, st, offset, ND, sd,
                                    len(storage), ptr)
        assert t != self.ffi.NULL
        self.tensors.append(t)
        return t

    def put(self, arr, dtype=None):
        """Upload a contiguous array and wrap it in a tensor: returns (tensor, device pointer)."""
        arr = np.asarray(arr, dtype=dtype)
        ptr = self.upload(arr)
        return self.tensor(ptr, arr.shape, arr.dtype), ptr

    def empty(self, shape, dtype=np.float32):
        n = max(1, math.prod(shape))
        ptr = self.malloc(n * np.dtype(dtype).itemsize)
        return self.tensor(ptr, shape, dtype), ptr

    def bool_array(self, values):
        a = self.nn.aclCreateBoolArray(self.ffi.new("bool[]", list(values)), len(values))
        assert a != self.ffi.NULL
        return a

    def phase1(self, op: str, *args):
        ws = self.ffi.new("uint64_t *", 12345)
        ex = self.ffi.new("aclOpExecutor **")
        status = getattr(self.op, f"aclnn{op}GetWorkspaceSize")(*args, ws, ex)
        return status, ws[0], ex[0]

    def run(self, op: str, *args) -> int:
        """Both phases; returns the first non-zero status (or 0)."""
        status, ws, ex = self.phase1(op, *args)
        if status:
            return status
        wsp = self.malloc(ws) if ws else self.ffi.NULL
        return getattr(self.op, f"aclnn{op}")(wsp, ws, ex, self.acl.stream)

    def close(self) -> None:
        self.rt.aclrtSynchronizeStream(self.acl.stream)  # queued work first, then the frees
        for t in self.tensors:
            self.nn.aclDestroyTensor(t)
        for p in self.ptrs:
            self.rt.aclrtFree(p)


@pytest.fixture
def dev(acl, monkeypatch):
    monkeypatch.setenv("ASCEND_OPP_PATH", str(acl.home / "opp"))
    for var in ("EMU_DEVICE_COUNT", "EMU_SOC_NAME", "EMU_CANN_VERSION", "EMU_ACL_VERSION", "EMU_REQUIRE_OPP_PATH"):
        monkeypatch.delenv(var, raising=False)
    acl.emu.set_device_count(None)
    acl.emu.reset_faults()
    acl.emu.clear_op_cache()
    acl.ensure()
    acl.emu.reset_counters()
    acl.errmsg()                                  # start with no pending error text
    base = {k: acl.emu.live(k) for k in ("tensor", "executor", "device_alloc", "bool_array")}
    d = Dev(acl)
    yield d
    acl.emu.reset_faults()
    d.close()
    assert acl.emu.misuse() == d.expected_misuse, acl.emu.last_misuse()
    assert {k: acl.emu.live(k) for k in base} == base


def run_script(home: Path, body: str, extra_env: dict | None = None) -> str:
    """Run `body` in a fresh interpreter with `ffi`, `libs` (dlopened in order), `emu`, `home` set."""
    prelude = textwrap.dedent(f"""
        import sys, os
        sys.path.insert(0, {str(TESTS)!r})
        from pathlib import Path
        import cffi
        from emulator.build import Emulator, library_paths, plugin_paths
        home = Path({str(home)!r})
        ffi = cffi.FFI()
        ffi.cdef("\\n".join((Path({str(HEADERS)!r}) / h).read_text() for h in {HEADER_ORDER!r}))
        def load_all():  # what aclInit opens by bare name first, then the toolkit (the returned list)
            plugins = [ffi.dlopen(str(p), ffi.RTLD_NOW | ffi.RTLD_GLOBAL) for p in plugin_paths(home)]
            return [ffi.dlopen(str(p), ffi.RTLD_NOW | ffi.RTLD_GLOBAL) for p in library_paths(home)]
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EMU_", "ASCEND_"))}
    env.pop("LD_LIBRARY_PATH", None)
    env.update(extra_env or {})
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(body)], capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


# ------------------------------------------------------------------------------------------------
# layouts and symbols
# ------------------------------------------------------------------------------------------------
def readelf_dynamic(path: Path) -> str:
    if not shutil.which("readelf"):
        pytest.skip("readelf not installed")
    return subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout


def needed(path: Path) -> list[str]:
    return [n for n in re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", readelf_dynamic(path))
            if n.startswith("lib") and not n.startswith(("libc.", "libm.", "libpthread", "ld-"))]


def test_layouts(toolkits):
    home8, home9 = toolkits["8.x"], toolkits["9.x"]
    assert home8.name == "latest" and home8.parent.name == "ascend-toolkit"
    assert home9.name == "cann"
    for home in (home8, home9):
        assert (home / "opp").is_dir()
        assert toolkit_env(home)["ASCEND_OPP_PATH"] == str(home / "opp")
    plugins = ["libruntime_v100.so", "libruntime_v200.so", "libtsdclient.so"]  # opened by bare name
    assert sorted(p.name for p in (home8 / "lib64").iterdir()) == sorted(
        ["libruntime.so", "libascendcl.so", "libnnopbase.so", "libopapi.so"] + plugins)
    assert sorted(p.name for p in (home9 / "lib64").iterdir()) == sorted([
        "libruntime.so", "libacl_rt.so", "libascendcl.so", "libnnopbase.so", "libopapi_math.so",
        "libopapi_nn.so"] + plugins)
    deps = {
        **{home / "lib64" / name: [] for home in (home8, home9) for name in plugins + ["libruntime.so"]},
        home8 / "lib64/libascendcl.so": ["libruntime.so"], home8 / "lib64/libnnopbase.so": ["libascendcl.so"],
        home8 / "lib64/libopapi.so": ["libnnopbase.so", "libascendcl.so"],
        home9 / "lib64/libacl_rt.so": ["libruntime.so"], home9 / "lib64/libascendcl.so": ["libacl_rt.so"],
        home9 / "lib64/libnnopbase.so": ["libacl_rt.so"],
        home9 / "lib64/libopapi_math.so": ["libnnopbase.so", "libacl_rt.so"],
        home9 / "lib64/libopapi_nn.so": ["libopapi_math.so", "libnnopbase.so", "libacl_rt.so"],
    }
    for path, want in deps.items():
        dyn = readelf_dynamic(path)
        assert f"Library soname: [{path.name}]" in dyn
        assert "RPATH" not in dyn and "RUNPATH" not in dyn, path
        assert needed(path) == want, path


def defined_symbols(path: Path) -> set[str]:
    if not shutil.which("nm"):
        pytest.skip("nm not installed")
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_symbols_defined_in_the_right_library(toolkits):
    rt_f, nn_f, op_f = (set(header_functions(h)) for h in (RUNTIME_HEADERS, NNOPBASE_HEADERS, OP_HEADERS))
    assert len(op_f) == 8 and "aclCreateTensor" in nn_f and "aclrtMalloc" in rt_f
    if ABI_JSON.exists():                         # the reference's per-library lists, as a guide
        from conftest import reference_abi       # (abi.json + the graph-capture API, abi_capture.json)
        libs = reference_abi()["libraries"]
        assert rt_f == set(libs["libascendcl.so"]) and nn_f == set(libs["libnnopbase.so"])
        assert op_f == set(libs["libopapi.so"])
    home8, home9 = toolkits["8.x"] / "lib64", toolkits["9.x"] / "lib64"
    control = {"emu_live", "emu_calls", "emu_misuse", "emu_fail", "emu_reset_faults", "emu_reset_counters"}
    for lib, want, not_here in (
        (home8 / "libascendcl.so", rt_f | control, nn_f | op_f),
        (home8 / "libnnopbase.so", nn_f, rt_f | op_f),
        (home8 / "libopapi.so", op_f, rt_f | nn_f),
        (home9 / "libacl_rt.so", rt_f | control, nn_f | op_f),
        (home9 / "libnnopbase.so", nn_f, rt_f | op_f),
        (home9 / "libopapi_nn.so", op_f, rt_f | nn_f),
    ):
        syms = defined_symbols(lib)
        assert want <= syms, (lib.name, sorted(want - syms))
        assert not (syms & not_here), (lib.name, sorted(syms & not_here))
    # the 9.x compat libascendcl.so shows the link editor every runtime symbol (CANN 9 links
    # programs with -lascendcl), as a filter: at run time they resolve in libacl_rt.so
    assert rt_f <= defined_symbols(home9 / "libascendcl.so")
    assert "Filter library: [libacl_rt.so]" in readelf_dynamic(home9 / "libascendcl.so")


def test_symbols_resolve_through_cffi(acl):
    for lib, headers in ((acl.rt, RUNTIME_HEADERS), (acl.nn, NNOPBASE_HEADERS), (acl.op, OP_HEADERS)):
        for name in header_functions(headers):
            assert getattr(lib, name) is not None, name


def test_layout_9x_in_a_subprocess(toolkits):
    """9.x: no rpath (the op library only loads after its dependencies), the compat libascendcl.so
    resolves every runtime symbol through libacl_rt.so, the MSE doc sample runs."""
    out = run_script(toolkits["9.x"], """
        import numpy as np
        paths = library_paths(home)
        assert [p.name for p in paths] == ["libacl_rt.so", "libascendcl.so", "libnnopbase.so",
                                           "libopapi_math.so", "libopapi_nn.so"]
        try:
            ffi.dlopen(str(paths[-1]))
            raise SystemExit("libopapi_nn.so loaded without its dependencies: an rpath?")
        except OSError as e:
            assert "libopapi_math.so" in str(e) or "libnnopbase.so" in str(e) or "libacl_rt.so" in str(e), e
        rt, compat, nn, math_, op = load_all()
        emu = Emulator(home)
        assert emu.runtime_path.name == "libacl_rt.so"
        for name in ("aclInit", "aclrtMalloc", "aclGetRecentErrMsg", "aclrtGetSocName"):
            assert getattr(rt, name) is not None and getattr(compat, name) is not None
        assert rt.aclInit(ffi.NULL) == 0 and compat.aclInit(ffi.NULL) == 100002   # one shared state
        assert rt.aclrtSetDevice(0) == 0
        def up(a):
            p = ffi.new("void **"); assert rt.aclrtMalloc(p, a.nbytes, 0) == 0
            assert rt.aclrtMemcpy(p[0], a.nbytes, ffi.from_buffer(a), a.nbytes, 1) == 0
            return p[0]
        def ten(p):
            d = ffi.new("int64_t[]", [2, 2])
            return nn.aclCreateTensor(d, 2, 0, ffi.NULL, 0, 2, d, 2, p)
        g, s, t = (np.array(v, np.float32) for v in ([0, 1, 2, 3], [0, 1, 2, 3], [1, 1, 1, 1]))
        pg, ps, pt, po = up(g), up(s), up(t), up(np.zeros(4, np.float32))
        tg, ts, tt, to = ten(pg), ten(ps), ten(pt), ten(po)
        ws = ffi.new("uint64_t *"); ex = ffi.new("aclOpExecutor **")
        assert op.aclnnMseLossBackwardGetWorkspaceSize(tg, ts, tt, 1, to, ws, ex) == 561107   # no ASCEND_OPP_PATH
        os.environ["ASCEND_OPP_PATH"] = str(home / "opp")
        # 512: MseLossGradV2's 0-byte workspace request, aligned; its kernel never reads it
        assert op.aclnnMseLossBackwardGetWorkspaceSize(tg, ts, tt, 1, to, ws, ex) == 0 and ws[0] == 512
        assert op.aclnnMseLossBackward(ffi.NULL, 0, ex[0], ffi.NULL) == 0
        assert rt.aclrtSynchronizeStream(ffi.NULL) == 0   # the NULL stream is asynchronous too
        out = np.empty(4, np.float32)
        assert rt.aclrtMemcpy(ffi.from_buffer(out), 16, po, 16, 2) == 0
        assert out.tolist() == [0, 0, 1, 3], out
        assert emu.calls("aclnnMseLossBackward") == 1 and emu.live("executor") == 0
        print("ok9")
    """)
    assert "ok9" in out


def test_the_helper_gives_back_what_it_took(acl):
    """The module's helper is closed at teardown: its aclInit reference, device set, stream and
    event must all go back, or later test files of the session find acl initialized (the
    order-dependent failure of test_acl_backend's live("init") == 0 after this file)."""
    rt, ffi = acl.rt, acl.ffi

    def held() -> tuple[int, ...]:
        r = ffi.new("uint64_t *")          # aclInit then aclFinalizeReference: the others' references
        assert rt.aclInit(ffi.NULL) in (OK, ACL_ERROR_REPEAT_INITIALIZE) and rt.aclFinalizeReference(r) == OK
        return (int(r[0]),) + tuple(acl.emu.live(k) for k in ("device_set", "stream", "event"))

    before = held()
    helper = Acl(acl.home)
    assert held() == (before[0] + 1, before[1] + 1, before[2] + 1, before[3] + 1)
    helper.close()
    assert held() == before
    acl.ensure()


def test_stub_build_and_lifecycle_in_a_subprocess(tmp_path):
    """stub=True: no driver (device count 0, aclrtSetDevice 207004). Also aclInit/aclFinalize rules,
    which would disturb the shared in-process state."""
    home = build_toolkit(tmp_path, "8.x", stub=True)
    out = run_script(home, """
        rt, nn, op = load_all()
        emu = Emulator(home)
        n = ffi.new("uint32_t *", 99)
        assert rt.aclrtGetDeviceCount(n) == 100001            # before aclInit
        assert rt.aclFinalize() == 100037
        assert rt.aclInit(ffi.NULL) == 0 and rt.aclInit(ffi.NULL) == 100002
        assert rt.aclrtGetDeviceCount(n) == 0 and n[0] == 0
        assert rt.aclrtSetDevice(0) == 207004
        emu.set_device_count(2)                               # a "driver" appears
        assert rt.aclrtSetDevice(1) == 0 and rt.aclrtSetDevice(2) == 107001
        p = ffi.new("void **")
        assert rt.aclrtMalloc(p, 64, 0) == 0 and emu.live("device_alloc") == 1
        assert rt.aclFinalize() == 0 and rt.aclFinalize() == 100037
        assert rt.aclrtMalloc(p, 64, 0) == 100001 and rt.aclrtFree(p[0]) == 100001
        assert rt.aclInit(ffi.NULL) == 0
        assert rt.aclrtMalloc(p, 64, 0) == 0                  # aclFinalize reset no device
        assert rt.aclrtFree(p[0]) == 0 and rt.aclrtResetDevice(1) == 0
        r = ffi.new("uint64_t *")
        assert rt.aclInit(ffi.NULL) == 100002 and rt.aclFinalizeReference(r) == 0 and r[0] == 1
        assert rt.aclFinalizeReference(r) == 0 and r[0] == 0 and emu.live("init") == 0
        r[0] = 7
        assert rt.aclFinalizeReference(r) == 100037 and r[0] == 0   # the count, 0, even then
        print("okstub")
    """)
    assert "okstub" in out


def test_finalize_leaves_the_device_session(toolkits):
    """aclFinalize de-initialises acl only (hicann/runtime acl.cpp aclFinalizeInternal): the
    device's default context, a stream and the work queued on it, device memory and the device
    reference all survive, and after a new aclInit (allowed: the runtime's UT duplicate_aclinit)
    they are used as before; aclrtResetDevice still owes one reset per set. The emulator used to
    reset every device at aclFinalize (then 107002 without a new aclrtSetDevice, the stream lost)."""
    out = run_script(toolkits["8.x"], """
        rt, nn, op = load_all()
        emu = Emulator(home)
        emu.set_stream_mode("deferred")                       # the copy stays queued
        assert rt.aclInit(ffi.NULL) == 0 and rt.aclrtSetDevice(0) == 0
        s, p = ffi.new("aclrtStream *"), ffi.new("void **")
        assert rt.aclrtCreateStream(s) == 0 and rt.aclrtMalloc(p, 64, 0) == 0
        host = ffi.new("char[64]", b"x" * 64)
        assert rt.aclrtMemcpyAsync(p[0], 64, host, 64, 1, s[0]) == 0
        assert rt.aclFinalize() == 0
        assert emu.live("queued") == 1 and emu.live("device_set") == 1 and emu.live("device_alloc") == 1
        assert rt.aclInit(ffi.NULL) == 0                      # count 0: a full init again
        assert rt.aclrtSynchronizeStream(s[0]) == 0 and emu.live("queued") == 0
        back = ffi.new("char[64]")
        assert rt.aclrtMemcpy(back, 64, p[0], 64, 2) == 0 and ffi.buffer(back)[:] == b"x" * 64
        assert rt.aclrtDestroyStream(s[0]) == 0 and rt.aclrtFree(p[0]) == 0
        assert rt.aclrtResetDevice(0) == 0 and rt.aclrtResetDevice(0) == 507007   # one set, one reset
        assert rt.aclFinalize() == 0 and emu.misuse() == 1                        # the extra reset
        print("oksession")
    """)
    assert "oksession" in out


# ------------------------------------------------------------------------------------------------
# MSE: the documented sample, views, executors
# ------------------------------------------------------------------------------------------------
def mse_tensors(dev, out_shape=(2, 2)):
    g, _ = dev.put(np.array([[0, 1], [2, 3]], np.float32))
    s, _ = dev.put(np.array([[0, 1], [2, 3]], np.float32))
    t, _ = dev.put(np.array([[1, 1], [1, 1]], np.float32))
    o, po = dev.empty(out_shape)
    return g, s, t, o, po


def test_mse_doc_sample(dev):
    g, s, t, o, po = mse_tensors(dev)
    status, ws, ex = dev.phase1("MseLossBackward", g, s, t, 1, o)
    # MseLossGradV2's 0-byte workspace request, Align()ed to 512 (its kernel never reads it: NULL runs)
    assert (status, ws) == (OK, 512) and ex != dev.ffi.NULL
    assert dev.emu.live("executor") == 1
    assert dev.op.aclnnMseLossBackward(dev.ffi.NULL, 0, ex, dev.acl.stream) == OK
    assert dev.rt.aclrtSynchronizeStream(dev.acl.stream) == OK
    assert dev.download(po, 4).tolist() == [0, 0, 1, 3]
    assert dev.emu.live("executor") == 0           # phase 2 consumed it
    assert dev.emu.calls("aclnnMseLossBackwardGetWorkspaceSize") == 1


def test_mse_non_contiguous_views(dev):
    rng = np.random.default_rng(0)
    g = rng.standard_normal((3, 4)).astype(np.float32)
    s = rng.standard_normal((3, 4)).astype(np.float32)
    tgt = rng.standard_normal((4,)).astype(np.float32)         # broadcast over rows
    # self stored transposed: a (4, 3) buffer viewed as (3, 4) with strides (1, 3)
    ps = dev.upload(np.ascontiguousarray(s.T))
    ts = dev.tensor(ps, (3, 4), strides=(1, 3), storage=(12,))
    tg, _ = dev.put(g)
    tt, _ = dev.put(tgt)
    # out: every other element of a 2*12+1 buffer, starting at element 1, transposed
    po = dev.upload(np.full(25, -7.0, np.float32))
    to = dev.tensor(po, (3, 4), strides=(2, 6), offset=1, storage=(25,))
    assert dev.run("MseLossBackward", tg, ts, tt, 0, to) == OK
    want = (s - tgt) * 2.0 * g
    raw = dev.download(po, 25)
    got = np.lib.stride_tricks.as_strided(raw[1:], (3, 4), (8, 24))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    mask = np.ones(25, bool)
    mask[1 + np.add.outer(np.arange(3) * 2, np.arange(4) * 6).ravel()] = False
    assert (raw[mask] == -7.0).all()                            # nothing else written


def test_mse_float16_and_mean_cof(dev):
    x = (np.arange(6, dtype=np.float32) / 7).reshape(2, 3)
    g, _ = dev.put(np.ones((1, 3), np.float16))
    s, _ = dev.put(x.astype(np.float16))
    t, _ = dev.put(np.zeros((2, 3), np.float16))
    o, po = dev.empty((2, 3), np.float32)                       # out dtype may differ
    assert dev.run("MseLossBackward", g, s, t, 1, o) == OK
    want = ((x.astype(np.float16).astype(np.float32) * np.float32(2 / 6))).astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(dev.download(po, 6).reshape(2, 3), want)
    # bfloat16 in, bfloat16 out (dtype given as the aclDataType value)
    bf16 = pytest.importorskip("ml_dtypes").bfloat16
    xb = x.astype(bf16)
    pb = [dev.upload(a.view(np.uint16)) for a in (np.ones((2, 3), bf16), xb, np.zeros((2, 3), bf16))]
    tb = [dev.tensor(p, (2, 3), ACL_BF16) for p in pb]
    pob = dev.malloc(12)
    tob = dev.tensor(pob, (2, 3), ACL_BF16)
    assert dev.run("MseLossBackward", *tb, 0, tob) == OK
    got = dev.download(pob, 6, np.uint16).view(bf16).astype(np.float32)
    np.testing.assert_array_equal(got, (xb.astype(np.float32) * 2).astype(bf16).astype(np.float32).ravel())


def test_executor_single_use(dev):
    g, s, t, o, _ = mse_tensors(dev)
    _, _, ex = dev.phase1("MseLossBackward", g, s, t, 0, o)
    assert dev.op.aclnnMseLossBackward(dev.ffi.NULL, 0, ex, dev.acl.stream) == OK
    assert dev.op.aclnnMseLossBackward(dev.ffi.NULL, 0, ex, dev.acl.stream) == INNER_NULLPTR
    assert dev.emu.misuse() == 1 and "freed" in dev.acl.errmsg()
    assert dev.nn.aclDestroyAclOpExecutor(ex) == INNER_NULLPTR          # also already freed
    assert dev.nn.aclDestroyAclOpExecutor(dev.ffi.NULL) == INNER_NULLPTR  # NULL: no misuse
    assert dev.emu.misuse() == 2
    dev.expected_misuse = 2
    # an executor whose phase 2 fails is consumed too (a composite op's executor given a generated
    # op's phase 2: refused, see test_other_operators_executor)
    _, _, ex = dev.phase1("MseLossBackward", g, s, t, 0, o)
    assert dev.op.aclnnCrossEntropyLossGrad(dev.ffi.NULL, 0, ex, dev.acl.stream) == INNER_NULLPTR
    assert dev.emu.live("executor") == 0
    dev.expected_misuse = 3


def test_repeatable_executor_and_address_updates(dev):
    g, s, t, o, po = mse_tensors(dev)
    _, _, ex = dev.phase1("MseLossBackward", g, s, t, 2, o)
    assert dev.nn.aclSetAclOpExecutorRepeatable(ex) == OK
    for _ in range(3):
        assert dev.op.aclnnMseLossBackward(dev.ffi.NULL, 0, ex, dev.acl.stream) == OK
    assert dev.download(po, 4).tolist() == [0, 0, 4, 12]
    # input 1 = self (inputs: gradOutput, self, target), output 0 = out
    ps2 = dev.upload(np.array([5, 5, 5, 5], np.float32))
    po2 = dev.malloc(16)
    assert dev.nn.aclSetInputTensorAddr(ex, 1, s, ps2) == OK
    assert dev.nn.aclSetOutputTensorAddr(ex, 0, dev.ffi.NULL, po2) == INNER_NULLPTR  # tensor NULL
    assert dev.nn.aclSetOutputTensorAddr(ex, 0, o, po2) == OK
    assert dev.nn.aclSetInputTensorAddr(ex, 3, s, ps2) == INVALID      # only 3 inputs
    assert dev.nn.aclSetInputTensorAddr(ex, 0, s, ps2) == INVALID      # input 0 is gradOutput
    assert dev.op.aclnnMseLossBackward(dev.ffi.NULL, 0, ex, dev.acl.stream) == OK
    assert dev.download(po2, 4).tolist() == [0, 8, 16, 24]
    assert dev.download(po, 4).tolist() == [0, 0, 4, 12]               # old output untouched
    assert dev.nn.aclSetTensorAddr(ex, 3, o, po) == OK                  # 3 inputs then outputs
    assert dev.op.aclnnMseLossBackward(dev.ffi.NULL, 0, ex, dev.acl.stream) == OK
    assert dev.download(po, 4).tolist() == [0, 8, 16, 24]
    assert dev.emu.live("executor") == 1
    assert dev.nn.aclDestroyAclOpExecutor(ex) == OK
    assert dev.emu.live("executor") == 0


def test_op_cache_wrapper_refuses_repeatable(dev, monkeypatch):
    """hicann/opbase: an identical composite phase 1 after a run returns an OpExecCacheWrap, which
    runs on the addresses of ITS phase 1 and answers 561000 to aclSetAclOpExecutorRepeatable."""
    g, s, t, o, po = mse_tensors(dev)
    _, _, ex = dev.phase1("MseLossBackward", g, s, t, 2, o)
    assert dev.nn.aclSetAclOpExecutorRepeatable(ex) == OK             # nothing cached yet
    assert dev.op.aclnnMseLossBackward(dev.ffi.NULL, 0, ex, dev.acl.stream) == OK
    assert dev.nn.aclDestroyAclOpExecutor(ex) == OK
    assert dev.emu.op_cache_entries() == 0                             # repeatable runs are not cached
    assert dev.run("MseLossBackward", g, s, t, 2, o) == OK             # a default run fills the cache
    assert dev.emu.op_cache_entries() == 1
    status, _, wrap = dev.phase1("MseLossBackward", g, s, t, 2, o)
    assert status == OK
    assert dev.nn.aclSetAclOpExecutorRepeatable(wrap) == INNER
    assert "cache" in dev.acl.errmsg()
    ps2 = dev.upload(np.array([5, 5, 5, 5], np.float32))
    assert dev.nn.aclSetInputTensorAddr(wrap, 1, s, ps2) == OK         # accepted, no effect on a wrapper
    assert dev.op.aclnnMseLossBackward(dev.ffi.NULL, 0, wrap, dev.acl.stream) == OK
    assert dev.download(po, 4).tolist() == [0, 0, 4, 12]               # phase-1 addresses
    assert dev.emu.live("executor") == 0                               # phase 2 consumed the wrapper
    # another layout or attribute is another key; CrossEntropyLossGrad (generated) is never cached
    _, _, ex = dev.phase1("MseLossBackward", g, s, t, 1, o)
    assert dev.nn.aclSetAclOpExecutorRepeatable(ex) == OK
    assert dev.nn.aclDestroyAclOpExecutor(ex) == OK
    # ACLNN_CACHE_LIMIT=0: the cache is full from the start, nothing is added
    dev.emu.clear_op_cache()
    monkeypatch.setenv("ACLNN_CACHE_LIMIT", "0")
    assert dev.run("MseLossBackward", g, s, t, 2, o) == OK
    assert dev.emu.op_cache_entries() == 0


def test_generated_executor_indexes_count_null_optional_slots(dev):
    """CrossEntropyLossGrad runs on the generated ("Nnopbase") executor: aclSetInputTensorAddr's
    index is the position in the op definition, NULL optional slots counted; a NULL slot: 161002."""
    N, C = 2, 3
    lp = np.log(np.full((N, C), 1 / C, np.float32))
    tg, _ = dev.put(np.array(1.0, np.float32))
    tlp, _ = dev.put(lp)
    tt, _ = dev.put(np.array([0, 2], np.int64))
    tz, _ = dev.put(np.zeros(N, np.float32))                           # gradZlossOptional
    to, po = dev.empty((N, C))
    nul = dev.ffi.NULL
    red = dev.ffi.new("char[]", b"sum")
    status, ws, ex = dev.phase1("CrossEntropyLossGrad", tg, tlp, tt, nul, tz, nul, red, -100, 0.0, 0.0, to)
    assert status == OK
    assert dev.nn.aclSetAclOpExecutorRepeatable(ex) == OK
    tt2, pt2 = dev.put(np.array([1, 1], np.int64))
    assert dev.nn.aclSetInputTensorAddr(ex, 3, tz, pt2) == INVALID      # slot 3 = weightOptional: NULL
    assert "null pointer" in dev.acl.errmsg()
    assert dev.nn.aclSetInputTensorAddr(ex, 4, tz, dev.upload(np.zeros(N, np.float32))) == OK   # gradZloss
    assert dev.nn.aclSetInputTensorAddr(ex, 6, tt, pt2) == INVALID      # 6 inputs in the definition
    assert dev.nn.aclSetInputTensorAddr(ex, 2, tt, pt2) == OK           # target
    po2 = dev.malloc(N * C * 4)
    assert dev.nn.aclSetOutputTensorAddr(ex, 0, to, po2) == OK
    assert dev.nn.aclSetTensorAddr(ex, 6, to, po2) == OK                # 6 inputs, then output 0
    wsp = dev.malloc(ws)
    assert dev.op.aclnnCrossEntropyLossGrad(wsp, ws, ex, dev.acl.stream) == OK
    want = np.exp(lp) - np.eye(C, dtype=np.float32)[[1, 1]]
    np.testing.assert_allclose(dev.download(po2, N * C).reshape(N, C), want, rtol=1e-6, atol=1e-6)
    assert dev.emu.op_cache_entries() == 0
    assert dev.nn.aclDestroyAclOpExecutor(ex) == OK


def test_abandoned_executor_and_phase2_checks(dev):
    g, s, t, o, _ = mse_tensors(dev)
    _, _, ex = dev.phase1("MseLossBackward", g, s, t, 0, o)
    assert dev.nn.aclDestroyAclOpExecutor(ex) == OK                     # phase 2 never ran
    # unknown stream: the executor is consumed, the misuse counted
    _, _, ex = dev.phase1("MseLossBackward", g, s, t, 0, o)
    bogus = dev.ffi.cast("void *", 0x1234)
    assert dev.op.aclnnMseLossBackward(dev.ffi.NULL, 0, ex, bogus) == RUNTIME_ERROR
    # (a host pointer posing as device memory: test_emulator_audit.py, the page fault is sticky)
    # a tensor destroyed between the phases
    t2, _ = dev.put(np.ones((2, 2), np.float32))
    _, _, ex = dev.phase1("MseLossBackward", g, s, t2, 0, o)
    dev.tensors.remove(t2)
    assert dev.nn.aclDestroyTensor(t2) == OK
    assert dev.op.aclnnMseLossBackward(dev.ffi.NULL, 0, ex, dev.acl.stream) == INNER_NULLPTR
    assert dev.emu.live("executor") == 0
    dev.expected_misuse = 2


# ------------------------------------------------------------------------------------------------
# runtime rules
# ------------------------------------------------------------------------------------------------
def test_fault_injection(dev):
    ffi, rt, nn, emu = dev.ffi, dev.rt, dev.nn, dev.emu
    p = ffi.new("void **", ffi.cast("void *", 0xABC))
    emu.fail("aclrtMalloc", ACL_ERROR_RT_MEMORY_ALLOCATION)
    assert rt.aclrtMalloc(p, 64, 0) == ACL_ERROR_RT_MEMORY_ALLOCATION
    assert int(ffi.cast("uintptr_t", p[0])) == 0xABC                   # untouched
    assert "aclrtMalloc" in dev.acl.errmsg()
    assert rt.aclrtMalloc(p, 64, 0) == OK                              # times=1: next call passes
    assert rt.aclrtFree(p[0]) == OK
    dims = ffi.new("int64_t[]", [2])
    emu.fail("aclCreateTensor", 0, skip=1, times=2)                    # pointer API: NULL
    t = nn.aclCreateTensor(dims, 1, ACL_FLOAT, ffi.NULL, 0, ND, dims, 1, ffi.NULL)
    assert t != ffi.NULL and nn.aclDestroyTensor(t) == OK
    assert nn.aclCreateTensor(dims, 1, ACL_FLOAT, ffi.NULL, 0, ND, dims, 1, ffi.NULL) == ffi.NULL
    assert nn.aclCreateTensor(dims, 1, ACL_FLOAT, ffi.NULL, 0, ND, dims, 1, ffi.NULL) == ffi.NULL
    t = nn.aclCreateTensor(dims, 1, ACL_FLOAT, ffi.NULL, 0, ND, dims, 1, ffi.NULL)
    assert t != ffi.NULL and nn.aclDestroyTensor(t) == OK
    emu.fail("aclCreateBoolArray", 0, times=-1)
    for _ in range(3):
        assert nn.aclCreateBoolArray(ffi.new("bool[]", [True]), 1) == ffi.NULL
    emu.reset_faults()
    a = dev.bool_array([True])
    assert nn.aclDestroyBoolArray(a) == OK
    # phase 2 failing by injection still consumes the executor
    g, s, tt, o, _ = mse_tensors(dev)
    emu.fail("aclnnMseLossBackward", 507015)
    assert dev.run("MseLossBackward", g, s, tt, 0, o) == 507015
    assert emu.live("executor") == 0
    emu.fail("aclnnMseLossBackwardGetWorkspaceSize", INVALID)
    assert dev.phase1("MseLossBackward", g, s, tt, 0, o)[0] == INVALID
    assert emu.calls("aclnnMseLossBackwardGetWorkspaceSize") == 2
    assert emu.calls("aclCreateTensor") >= 5 and emu.calls("aclrtMalloc") >= 2


def test_recent_error_message_order(dev):
    """hicann/runtime acl.cpp aclGetRecentErrMsgImpl: each read prepends the text new since the
    previous read to what was returned before (newest first); nothing new: the same text again.
    Run in a new thread: the text is per thread, so what earlier tests left in this one (up to
    the buffer's cap, beyond which the older text is dropped whole) cannot change what is seen."""
    ffi, rt = dev.ffi, dev.rt
    seen: dict = {}

    def raw():
        m = rt.aclGetRecentErrMsg()
        return None if m == ffi.NULL else ffi.string(m).decode()

    def body() -> None:
        p = ffi.new("void **")
        assert rt.aclrtSetDevice(0) == OK
        try:
            seen["before"] = raw()
            assert rt.aclrtMalloc(p, 0, 0) == ACL_ERROR_INVALID_PARAM
            seen["first"] = raw()
            seen["again"] = raw()
            assert rt.aclrtFree(ffi.NULL) == ACL_ERROR_INVALID_PARAM
            assert rt.aclrtMalloc(p, 16, 99) == ACL_ERROR_INVALID_PARAM
            seen["second"] = raw()
        finally:
            assert rt.aclrtResetDevice(0) == OK

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    first = seen["first"]
    assert seen["before"] is None and first.startswith("EH0001: aclrtMalloc:") and "\n" not in first
    assert seen["again"] == first                                     # nothing new: the same text
    newest, older = seen["second"].split("\n", 2)[:2], seen["second"].split("\n", 2)[2]
    assert newest[0].startswith("EH0001: aclrtFree:") and newest[1].startswith("EH0001: aclrtMalloc:")
    assert older == first                                              # newer reads first


def test_recent_error_message_new_text_per_read(dev):
    ffi, rt = dev.ffi, dev.rt
    p = ffi.new("void **")
    assert dev.acl.errmsg() is None
    assert rt.aclrtMalloc(p, 0, 0) == ACL_ERROR_INVALID_PARAM
    msg = dev.acl.errmsg()
    assert msg and "aclrtMalloc" in msg and "size" in msg
    assert dev.acl.errmsg() is None                                    # nothing new
    g, s, t, _, _ = mse_tensors(dev)
    bad, _ = dev.empty((3, 3))
    assert dev.phase1("MseLossBackward", g, s, t, 1, bad)[0] == INVALID
    msg = dev.acl.errmsg()
    assert msg.startswith("EZ1001: aclnnMseLossBackwardGetWorkspaceSize:") and "out shape" in msg
    # messages are per thread
    assert rt.aclrtMalloc(p, 0, 0) == ACL_ERROR_INVALID_PARAM
    seen = []
    th = threading.Thread(target=lambda: seen.append(dev.acl.errmsg()))
    th.start()
    th.join()
    assert seen == [None] and dev.acl.errmsg() is not None


def test_context_null_in_a_new_thread(dev):
    ffi, rt = dev.ffi, dev.rt
    g, s, t, o, _ = mse_tensors(dev)
    _, _, ex = dev.phase1("MseLossBackward", g, s, t, 0, o)
    res = {}

    def worker():
        p = ffi.new("void **")
        q = ffi.new("aclrtStream *")
        res["malloc"] = rt.aclrtMalloc(p, 64, 0)
        res["stream"] = rt.aclrtCreateStream(q)
        res["phase2"] = dev.op.aclnnMseLossBackward(ffi.NULL, 0, ex, ffi.NULL)
        res["msg"] = dev.acl.errmsg()
        res["set"] = rt.aclrtSetDevice(0)
        res["malloc2"] = rt.aclrtMalloc(p, 64, 0)
        res["free"] = rt.aclrtFree(p[0])
        res["bad_dev"] = rt.aclrtSetDevice(5)
        res["reset"] = rt.aclrtResetDevice(0)

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    assert res["malloc"] == res["stream"] == res["phase2"] == ACL_ERROR_RT_CONTEXT_NULL
    assert "aclrtSetDevice" in res["msg"]
    assert res["set"] == res["malloc2"] == res["free"] == res["reset"] == OK
    assert res["bad_dev"] == ACL_ERROR_RT_INVALID_DEVICEID
    assert dev.emu.live("executor") == 0                               # consumed by the failure


def test_no_device_mode_at_runtime(dev, monkeypatch):
    n = dev.ffi.new("uint32_t *")
    monkeypatch.setenv("EMU_DEVICE_COUNT", "0")
    assert dev.rt.aclrtGetDeviceCount(n) == OK and n[0] == 0
    assert dev.rt.aclrtSetDevice(0) == ACL_ERROR_RT_NO_DEVICE
    monkeypatch.setenv("EMU_DEVICE_COUNT", "4")
    assert dev.rt.aclrtGetDeviceCount(n) == OK and n[0] == 4
    monkeypatch.delenv("EMU_DEVICE_COUNT")
    assert dev.rt.aclrtGetDeviceCount(n) == OK and n[0] == 1


def test_memory_rules(dev):
    ffi, rt, emu = dev.ffi, dev.rt, dev.emu
    p = ffi.new("void **")
    allocs, nbytes = emu.live("device_alloc"), emu.live("device_bytes")
    assert rt.aclrtMalloc(p, 100, 0) == OK
    assert int(ffi.cast("uintptr_t", p[0])) % 64 == 0
    assert (emu.live("device_alloc"), emu.live("device_bytes")) == (allocs + 1, nbytes + 100)
    buf = np.arange(25, dtype=np.float32)
    assert rt.aclrtMemcpy(p[0], 100, ffi.from_buffer(buf), 100, H2D) == OK
    assert rt.aclrtMemcpy(p[0], 96, ffi.from_buffer(buf), 100, H2D) == ACL_ERROR_RT_PARAM_INVALID  # destMax
    assert rt.aclrtMemset(p[0], 100, 0, 101) == ACL_ERROR_RT_PARAM_INVALID                        # maxCount
    assert rt.aclrtMemset(p[0], 100, 0, 100) == OK
    assert rt.aclrtMemcpyAsync(p[0], 100, ffi.from_buffer(buf), 100, H2D, dev.acl.stream) == OK
    assert rt.aclrtSynchronizeStream(dev.acl.stream) == OK  # the queued copy, before the free
    assert rt.aclrtFree(p[0]) == OK
    assert rt.aclrtFree(p[0]) == ACL_ERROR_RT_PARAM_INVALID                 # double free
    assert rt.aclrtMemcpy(p[0], 100, ffi.from_buffer(buf), 100, H2D) == ACL_ERROR_RT_DRV_INTERNAL_ERROR  # freed
    assert rt.aclrtFree(ffi.NULL) == ACL_ERROR_INVALID_PARAM
    assert rt.aclrtMalloc(p, 0, 0) == ACL_ERROR_INVALID_PARAM
    assert emu.misuse() == 2
    dev.expected_misuse = 2
    h = ffi.new("void **")
    assert rt.aclrtMallocHost(h, 32) == OK and emu.live("host_alloc") >= 1
    assert rt.aclrtFreeHost(h[0]) == OK
    free_, total = ffi.new("size_t *"), ffi.new("size_t *")
    assert rt.aclrtGetMemInfo(1, free_, total) == OK and 0 < free_[0] <= total[0]


def test_malloc_beyond_device_memory_fails_at_once(dev):
    """An allocation the device cannot hold fails with ACL_ERROR_RT_MEMORY_ALLOCATION before any
    memory is touched (the driver's halMemAlloc: DRV_ERROR_OUT_OF_MEMORY -> 207001, errcode_manage.cc);
    1 << 36 bytes, padded past the 64 GiB, used to be mapped and filled for a minute. A size the
    padding would wrap around is ACL_ERROR_INVALID_PARAM ("size too large", memory.cpp
    GetAlignedAndPaddingSize)."""
    ffi, rt, emu = dev.ffi, dev.rt, dev.emu
    p = ffi.new("void **")
    allocs = emu.live("device_alloc")
    total = ffi.new("int64_t *")
    assert rt.aclrtGetDeviceInfo(0, 301, total) == OK     # ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE
    for size in (1 << 36, total[0] - 16, total[0] + 1):   # each padded beyond the device memory
        start = time.monotonic()
        assert rt.aclrtMalloc(p, size, 0) == ACL_ERROR_RT_MEMORY_ALLOCATION
        assert time.monotonic() - start < 2.0
        assert "out of memory" in dev.acl.errmsg()
    assert rt.aclrtMalloc(p, 2**64 - 40, 0) == ACL_ERROR_INVALID_PARAM   # + 64 wraps around
    assert rt.aclrtMalloc(p, 2**64 - 40, 6) == ACL_ERROR_RT_MEMORY_ALLOCATION  # HUGE1G_ONLY: + 32, no pad
    assert emu.live("device_alloc") == allocs


def test_streams_events_contexts(dev):
    ffi, rt, emu = dev.ffi, dev.rt, dev.emu
    ev = [ffi.new("aclrtEvent *") for _ in range(2)]
    assert rt.aclrtCreateEvent(ev[0]) == OK and rt.aclrtCreateEvent(ev[1]) == OK
    assert rt.aclrtRecordEvent(ev[0][0], dev.acl.stream) == OK
    assert rt.aclrtRecordEvent(ev[1][0], dev.acl.stream) == OK
    assert rt.aclrtSynchronizeEvent(ev[1][0]) == OK
    ms = ffi.new("float *")
    assert rt.aclrtEventElapsedTime(ms, ev[0][0], ev[1][0]) == OK and 0 <= ms[0] < 1000
    for e in ev:
        assert rt.aclrtDestroyEvent(e[0]) == OK
    assert rt.aclrtDestroyEvent(ev[0][0]) == ACL_ERROR_RT_PARAM_INVALID
    assert rt.aclrtSynchronizeStream(ffi.cast("void *", 0x10)) == ACL_ERROR_RT_PARAM_INVALID
    assert emu.misuse() == 2
    dev.expected_misuse = 2
    ctx, cur = ffi.new("aclrtContext *"), ffi.new("aclrtContext *")
    assert rt.aclrtGetCurrentContext(cur) == OK
    contexts = emu.live("context")
    assert rt.aclrtCreateContext(ctx, 0) == OK and emu.live("context") == contexts + 1
    q = ffi.new("aclrtStream *")
    assert rt.aclrtCreateStream(q) == OK
    assert rt.aclrtSetCurrentContext(cur[0]) == OK
    # a stream of another context takes no work from this one
    buf = np.zeros(4, np.float32)
    p = dev.malloc(16)
    assert rt.aclrtMemcpyAsync(p, 16, ffi.from_buffer(buf), 16, H2D, q[0]) == 107003
    # nor is it destroyed from here (ApiImpl::StreamDestroy checks the stream's context)
    assert rt.aclrtDestroyStream(q[0]) == 107003
    assert rt.aclrtSetCurrentContext(ctx[0]) == OK and rt.aclrtDestroyStream(q[0]) == OK
    assert rt.aclrtSetCurrentContext(cur[0]) == OK and rt.aclrtDestroyContext(ctx[0]) == OK
    assert emu.live("context") == contexts
    soc = rt.aclrtGetSocName()
    assert ffi.string(soc) == b"Ascend910B3"
    v = ffi.new("aclCANNPackageVersion *")
    assert rt.aclsysGetCANNVersion(0, v) == OK and ffi.string(v.version) == b"8.1.RC1"
    a, b, c = (ffi.new("int32_t *") for _ in range(3))
    assert rt.aclrtGetVersion(a, b, c) == OK and (a[0], b[0]) == (1, 13)
    val = ffi.new("int64_t *")
    assert rt.aclGetDeviceCapability(0, 0, val) == OK and val[0] > 0
    assert rt.aclrtGetDeviceInfo(0, 101, val) == OK and val[0] > 0


def test_float16_conversions_and_dtype_sizes(dev):
    rt = dev.rt
    rng = np.random.default_rng(1)
    bits = np.concatenate([rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32),
                           np.array([0, 0x80000000, 0x7f800000, 0x477fe000, 0x477ff000, 0x477fefff,
                                     0x33000000, 0x33000001, 0x387fc000, 0x38800000, 0x3f800000], np.uint32)])
    floats = bits.view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        want = floats.astype(np.float16).view(np.uint16)
    got = np.array([rt.aclFloatToFloat16(float(f)) for f in floats], np.uint16)
    nan = np.isnan(floats)
    assert (got[~nan] == want[~nan]).all()
    assert np.isnan(got[nan].view(np.float16)).all()
    halves = np.arange(0, 65536, 97, dtype=np.uint32).astype(np.uint16)
    back = np.array([rt.aclFloat16ToFloat(int(h)) for h in halves], np.float32)
    ref = halves.view(np.float16).astype(np.float32)
    assert np.array_equal(back, ref, equal_nan=True)
    sizes = {0: 4, 1: 2, 2: 1, 3: 4, 9: 8, 11: 8, 12: 1, 27: 2, 16: 8, 17: 16}
    assert {k: rt.aclDataTypeSize(k) for k in sizes} == sizes


def test_tensor_and_array_bookkeeping(dev):
    ffi, nn, emu = dev.ffi, dev.nn, dev.emu
    dims = ffi.new("int64_t[]", [2, 3])
    assert nn.aclCreateTensor(ffi.NULL, 2, ACL_FLOAT, ffi.NULL, 0, ND, dims, 2, ffi.NULL) == ffi.NULL
    assert nn.aclCreateTensor(dims, 2, ACL_FLOAT, ffi.NULL, 0, ND, ffi.NULL, 2, ffi.NULL) == ffi.NULL
    t0 = nn.aclCreateTensor(ffi.NULL, 0, ACL_FLOAT, ffi.NULL, 0, ND, ffi.NULL, 0, ffi.NULL)   # 0-D
    assert t0 != ffi.NULL
    t = nn.aclCreateTensor(dims, 2, ACL_FLOAT16, ffi.NULL, 5, ND, ffi.new("int64_t[]", [11]), 1,
                           ffi.cast("void *", 0x1000))
    shape, n = ffi.new("int64_t **"), ffi.new("uint64_t *")
    assert nn.aclGetViewShape(t, shape, n) == OK and list(shape[0][0:n[0]]) == [2, 3]
    assert nn.aclGetViewStrides(t, shape, n) == OK and list(shape[0][0:n[0]]) == [3, 1]
    assert nn.aclGetStorageShape(t, shape, n) == OK and list(shape[0][0:n[0]]) == [11]
    off, dt, addr = ffi.new("int64_t *"), ffi.new("aclDataType *"), ffi.new("void **")
    assert nn.aclGetViewOffset(t, off) == OK and off[0] == 5
    assert nn.aclGetDataType(t, dt) == OK and dt[0] == ACL_FLOAT16
    assert nn.aclSetRawTensorAddr(t, ffi.cast("void *", 0x2000)) == OK
    assert nn.aclGetRawTensorAddr(t, addr) == OK and int(ffi.cast("uintptr_t", addr[0])) == 0x2000
    assert nn.aclInitTensor(t, dims, 1, ACL_FLOAT, ffi.NULL, 0, ND, dims, 1, ffi.NULL) == OK
    assert nn.aclGetViewShape(t, shape, n) == OK and n[0] == 1
    tensors = emu.live("tensor")
    lst = nn.aclCreateTensorList(ffi.new("aclTensor *[]", [t, t0]), 2)
    assert lst != ffi.NULL and emu.live("tensor_list") >= 1
    size = ffi.new("uint64_t *")
    assert nn.aclGetTensorListSize(lst, size) == OK and size[0] == 2
    assert nn.aclDestroyTensorList(lst) == OK                           # destroys t and t0 too
    assert emu.live("tensor") == tensors - 2
    assert nn.aclDestroyTensor(t) == INVALID and emu.misuse() == 1      # double free
    assert nn.aclDestroyTensor(ffi.NULL) == OK
    ia = nn.aclCreateIntArray(ffi.new("int64_t[]", [1, 2, 3]), 3)
    assert nn.aclGetIntArraySize(ia, size) == OK and size[0] == 3
    assert nn.aclDestroyIntArray(ia) == OK and nn.aclDestroyIntArray(ia) == INVALID
    one = ffi.new("float *", 1.5)
    sc = nn.aclCreateScalar(one, ACL_FLOAT)
    assert nn.aclCreateScalar(ffi.NULL, ACL_FLOAT) == ffi.NULL
    assert nn.aclDestroyScalar(sc) == OK and emu.live("scalar") == 0
    assert emu.misuse() == 2
    dev.expected_misuse = 2


# ------------------------------------------------------------------------------------------------
# the other three operators
# ------------------------------------------------------------------------------------------------
def gn_ref(dy, x, mean, rstd, gamma, N, C, HW, G):
    D = C // G
    dy = dy.reshape(N, C, HW).astype(np.float64)
    x = x.reshape(N, C, HW).astype(np.float64)
    mu = np.repeat(mean.reshape(N, G).astype(np.float64), D, axis=1)[:, :, None]
    rs = np.repeat(rstd.reshape(N, G).astype(np.float64), D, axis=1)[:, :, None]
    gam = np.ones(C) if gamma is None else gamma.astype(np.float64).ravel()
    xhat = (x - mu) * rs
    sdy, sdyx = dy.sum(2), (dy * xhat).sum(2)
    c1 = np.repeat((gam * sdy).reshape(N, G, D).sum(2) / (D * HW), D, axis=1)[:, :, None]
    c2 = np.repeat((gam * sdyx).reshape(N, G, D).sum(2) / (D * HW), D, axis=1)[:, :, None]
    dx = rs * (gam[None, :, None] * dy - c1 - xhat * c2)
    return dx, sdyx.sum(0), sdy.sum(0)


def test_group_norm_backward(dev):
    rng = np.random.default_rng(2)
    N, C, HW, G = 2, 6, 5, 3
    dy = rng.standard_normal((N, C, HW)).astype(np.float32)
    x = rng.standard_normal((N, C, HW)).astype(np.float32)
    mean = rng.standard_normal((N, G)).astype(np.float32)
    rstd = rng.uniform(0.5, 2, (N, G)).astype(np.float32)
    gamma = rng.standard_normal(C).astype(np.float32)
    tdy, _ = dev.put(dy)
    tx, _ = dev.put(x)
    tm, _ = dev.put(mean.ravel())                    # any shape with N*G elements
    tr, _ = dev.put(rstd)
    tgam, _ = dev.put(gamma)
    tdx, pdx = dev.empty((N, C, HW))
    tdg, pdg = dev.empty((C,))
    tdb, pdb = dev.empty((C,))
    mask = dev.bool_array([True, True, True])
    args = (tdy, tx, tm, tr, tgam, N, C, HW, G, mask, tdx, tdg, tdb)
    status, ws, ex = dev.phase1("GroupNormBackward", *args)
    assert (status, ws) == (OK, (16 << 20) + 512)   # GroupNormGrad: 16 MiB system workspace (fp32, N <= 2), aligned
    # workspace NULL with size > 0: 161001, and the executor is consumed anyway
    assert dev.op.aclnnGroupNormBackward(dev.ffi.NULL, ws, ex, dev.acl.stream) == NULLPTR
    assert dev.emu.live("executor") == 0
    # a workspace that is not device memory
    status, ws, ex = dev.phase1("GroupNormBackward", *args)
    host = np.zeros(ws, np.uint8)
    assert dev.op.aclnnGroupNormBackward(dev.ffi.from_buffer(host), ws, ex, dev.acl.stream) == RUNTIME_ERROR
    dev.expected_misuse = 1
    assert dev.run("GroupNormBackward", *args) == OK
    dx, dg, db = gn_ref(dy, x, mean, rstd, gamma, N, C, HW, G)
    np.testing.assert_allclose(dev.download(pdx, N * C * HW), dx.ravel(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dev.download(pdg, C), dg, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dev.download(pdb, C), db, rtol=1e-5, atol=1e-5)
    # gamma NULL = ones; mask false: output untouched and may be NULL
    assert dev.rt.aclrtMemset(pdg, 4 * C, 0, 4 * C) == OK
    mask2 = dev.bool_array([True, False, True])
    assert dev.run("GroupNormBackward", tdy, tx, tm, tr, dev.ffi.NULL, N, C, HW, G, mask2, tdx, dev.ffi.NULL, tdb) == OK
    dx, _, _ = gn_ref(dy, x, mean, rstd, None, N, C, HW, G)
    np.testing.assert_allclose(dev.download(pdx, N * C * HW), dx.ravel(), rtol=1e-5, atol=1e-5)
    assert (dev.download(pdg, C) == 0).all()
    # checks: mask true + NULL output -> 161002 (the code), group, numel
    assert dev.phase1("GroupNormBackward", tdy, tx, tm, tr, tgam, N, C, HW, G, mask, tdx, dev.ffi.NULL, tdb)[0] == INVALID
    assert dev.phase1("GroupNormBackward", tdy, tx, tm, tr, tgam, N, C, HW, 4, mask, tdx, tdg, tdb)[0] == INVALID
    assert dev.phase1("GroupNormBackward", tdy, tx, tm, tr, tgam, N, C, HW + 1, G, mask, tdx, tdg, tdb)[0] == INVALID
    assert dev.phase1("GroupNormBackward", tdy, dev.ffi.NULL, tm, tr, tgam, N, C, HW, G, mask, tdx, tdg, tdb)[0] == NULLPTR
    for a in (mask, mask2):
        assert dev.nn.aclDestroyBoolArray(a) == OK


def ce_ref(gl, lp, tgt, w, reduction, ignore):
    N, C = lp.shape
    mask = (tgt.astype(np.float32) != np.float32(ignore)).astype(np.float32)
    inr = (tgt >= 0) & (tgt < C)
    wi = np.ones(N, np.float32) if w is None else np.where(inr, w[np.clip(tgt, 0, C - 1)], 0).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        if reduction == "mean":
            lg = np.float32(gl.ravel()[0]) / np.float32((wi * mask).sum()) * mask
        elif reduction == "sum":
            lg = np.float32(gl.ravel()[0]) * mask
        else:
            lg = gl.ravel()[:N] * mask
        nll = (lg * wi).astype(np.float32)
        out = np.exp(lp.astype(np.float32)) * nll[:, None]
    rows = np.nonzero(inr)[0]
    out[rows, tgt[rows]] -= nll[rows]
    return out


def test_cross_entropy_loss_grad(dev):
    rng = np.random.default_rng(3)
    N, C = 5, 4
    logits = rng.standard_normal((N, C))
    lp = (logits - np.log(np.exp(logits).sum(1, keepdims=True))).astype(np.float32)
    tgt = np.array([0, 3, -100, 2, 1], np.int64)
    w = rng.uniform(0.5, 2, C).astype(np.float32)
    tlp, _ = dev.put(lp)
    tt, _ = dev.put(tgt)
    tw, _ = dev.put(w)
    tg0, _ = dev.put(np.array(0.7, np.float32))                    # 0-D for mean/sum
    gln = rng.standard_normal(N).astype(np.float32)
    tgn, _ = dev.put(gln)                                          # (N,) for none
    to, po = dev.empty((N, C))
    mean = dev.ffi.new("char[]", b"mean")
    g0 = np.array([0.7], np.float32)
    for red, tg, gl, weight in (("mean", tg0, g0, tw), ("sum", tg0, g0, None), ("none", tgn, gln, tw),
                                (None, tg0, g0, tw), ("bogus", tgn, gln, None)):
        cred = dev.ffi.new("char[]", red.encode()) if red else dev.ffi.NULL
        status, ws, ex = dev.phase1("CrossEntropyLossGrad", tg, tlp, tt, weight or dev.ffi.NULL, dev.ffi.NULL,
                                    dev.ffi.NULL, cred, -100, 0.0, 0.0, to)
        assert (status, ws) == (OK, 160 + (16 << 20)), red   # CeilAlign(40 cores * 4, 32) + 16 MiB
        wsp = dev.malloc(ws)
        assert dev.op.aclnnCrossEntropyLossGrad(wsp, ws, ex, dev.acl.stream) == OK
        # reduction NULL -> "mean"; an unknown string acts as "none" (A2/A3)
        want = ce_ref(gl, lp, tgt, w if weight else None, {None: "mean", "bogus": "none"}.get(red, red), -100)
        np.testing.assert_allclose(dev.download(po, N * C).reshape(N, C), want, rtol=1e-5, atol=1e-6)
    # all targets ignored with mean: NaN everywhere
    tign, _ = dev.put(np.full(N, 7, np.int64))
    assert dev.run("CrossEntropyLossGrad", tg0, tlp, tign, dev.ffi.NULL, dev.ffi.NULL, dev.ffi.NULL, mean, 7,
                   0.0, 0.0, to) == OK
    assert np.isnan(dev.download(po, N * C)).all()
    # tiling checks -> 561002; dtype rows -> 161002; nulls -> 161001
    tt_short, _ = dev.put(np.zeros(N - 1, np.int64))
    tw_short, _ = dev.put(np.ones(C + 1, np.float32))
    nul = dev.ffi.NULL
    assert dev.phase1("CrossEntropyLossGrad", tg0, tlp, tt_short, nul, nul, nul, mean, -100, 0.0, 0.0, to)[0] == TILING
    assert dev.phase1("CrossEntropyLossGrad", tg0, tlp, tt, tw_short, nul, nul, mean, -100, 0.0, 0.0, to)[0] == TILING
    assert dev.phase1("CrossEntropyLossGrad", tg0, tlp, tlp, nul, nul, nul, mean, -100, 0.0, 0.0, to)[0] == INVALID
    assert dev.phase1("CrossEntropyLossGrad", nul, tlp, tt, nul, nul, nul, mean, -100, 0.0, 0.0, to)[0] == NULLPTR
    ex = dev.ffi.new("aclOpExecutor **")
    ws = dev.ffi.new("uint64_t *")
    assert dev.op.aclnnCrossEntropyLossGradGetWorkspaceSize(tg0, tlp, tt, nul, nul, nul, mean, -100, 0.0, 0.0, to,
                                                            ws, nul) == NULLPTR
    # an empty batch: success, no workspace
    tlpe, _ = dev.empty((0, C))
    tte, _ = dev.empty((0,), np.int64)
    toe, _ = dev.empty((0, C))
    status, wsz, ex2 = dev.phase1("CrossEntropyLossGrad", tg0, tlpe, tte, nul, nul, nul, mean, -100, 0.0, 0.0, toe)
    assert (status, wsz) == (OK, 0)
    assert dev.op.aclnnCrossEntropyLossGrad(nul, 0, ex2, dev.acl.stream) == OK


def prelu_ref(dy, x, w):
    dyb = np.broadcast_to(dy, x.shape).astype(np.float64)
    if w.size == 1:
        wb = np.float64(w.ravel()[0])
    else:
        shape = [1] * x.ndim
        shape[1] = w.size
        wb = w.astype(np.float64).reshape(shape)
    dx = np.where(x > 0, dyb, dyb * wb)
    upd = np.where(x > 0, 0.0, x * dyb)
    dw = upd.sum() if w.size == 1 else upd.sum(axis=tuple(i for i in range(x.ndim) if i != 1))
    return dx, dw


def test_prelu_backward(dev):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    x[0, 0, :2] = 0.0                                  # x == 0 takes the weight branch
    dy = rng.standard_normal((3, 4)).astype(np.float32)   # broadcast to self
    w = rng.standard_normal(3).astype(np.float32)
    tx, _ = dev.put(x)
    tdy, _ = dev.put(dy)
    tw, _ = dev.put(w)
    tdx, pdx = dev.empty(x.shape)
    tdw, pdw = dev.empty((3,))
    status, ws, ex = dev.phase1("PreluBackward", tdy, tx, tw, tdx, tdw)
    assert (status, ws) == (OK, 512)   # the 96-byte `update` tensor, Align()ed
    assert dev.op.aclnnPreluBackward(dev.malloc(ws), ws, ex, dev.acl.stream) == OK
    dx, dw = prelu_ref(dy, x, w)
    np.testing.assert_allclose(dev.download(pdx, x.size).reshape(x.shape), dx, rtol=1e-6)
    np.testing.assert_allclose(dev.download(pdw, 3), dw, rtol=1e-5, atol=1e-6)
    # one weight for every channel; gradWeight shaped like weight
    tw1, _ = dev.put(np.array([[0.25]], np.float32))
    tdw1, pdw1 = dev.empty((1, 1))
    assert dev.run("PreluBackward", tdy, tx, tw1, tdx, tdw1) == OK
    dx, dw = prelu_ref(dy, x, np.array([[0.25]], np.float32))
    np.testing.assert_allclose(dev.download(pdx, x.size).reshape(x.shape), dx, rtol=1e-6)
    np.testing.assert_allclose(dev.download(pdw1, 1)[0], dw, rtol=1e-5, atol=1e-6)
    # checks
    tdw_bad, _ = dev.empty((1,))
    assert dev.phase1("PreluBackward", tdy, tx, tw1, tdx, tdw_bad)[0] == INVALID    # (1,1) vs (1,)
    tdy_bad, _ = dev.empty((2, 2, 3, 4))
    assert dev.phase1("PreluBackward", tdy_bad, tx, tw, tdx, tdw)[0] == INVALID       # only broadcast *to* self
    th, _ = dev.empty(x.shape, np.float16)
    assert dev.phase1("PreluBackward", tdy, tx, tw, th, tdw)[0] == INVALID
    assert dev.phase1("PreluBackward", tdy, tx, dev.ffi.NULL, tdx, tdw)[0] == NULLPTR


def test_opp_path_is_required(dev, monkeypatch):
    g, s, t, o, _ = mse_tensors(dev)
    monkeypatch.delenv("ASCEND_OPP_PATH")
    assert dev.phase1("MseLossBackward", g, s, t, 0, o)[0] == OPP_PATH
    assert "ASCEND_OPP_PATH" in dev.acl.errmsg()
    monkeypatch.setenv("EMU_REQUIRE_OPP_PATH", "0")
    assert dev.run("MseLossBackward", g, s, t, 0, o) == OK


def test_eight_threads(dev):
    """Concurrent callers, each with its own device binding; counters stay consistent."""
    ffi, rt = dev.ffi, dev.rt
    g, s, t, _, _ = mse_tensors(dev)
    outs = [dev.empty((2, 2)) for _ in range(8)]
    errors: list = []
    streams, sets = dev.emu.live("stream"), dev.emu.live("device_set")

    def worker(k):
        try:
            assert rt.aclrtSetDevice(0) == OK
            q = ffi.new("aclrtStream *")
            assert rt.aclrtCreateStream(q) == OK
            for _ in range(25):
                ws, ex = ffi.new("uint64_t *"), ffi.new("aclOpExecutor **")
                assert dev.op.aclnnMseLossBackwardGetWorkspaceSize(g, s, t, 1, outs[k][0], ws, ex) == OK
                assert dev.op.aclnnMseLossBackward(ffi.NULL, 0, ex[0], q[0]) == OK
            assert rt.aclrtSynchronizeStream(q[0]) == OK
            assert rt.aclrtDestroyStream(q[0]) == OK
            assert rt.aclrtResetDevice(0) == OK
        except BaseException as e:             # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert dev.emu.calls("aclnnMseLossBackward") == 200
    for _, p in outs:
        assert dev.download(p, 4).tolist() == [0, 0, 1, 3]
    assert (dev.emu.live("stream"), dev.emu.live("device_set")) == (streams, sets)
