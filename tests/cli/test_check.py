"""`python -m pyaclnn check SCRIPT`: hazards and leaks found in a script, and the pytest plugin.

Each leak script releases nothing on the line named; its twin that releases everything must be
clean, so the check can neither flag everything nor nothing.
"""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def check(path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyaclnn", "check", str(path), *args], env=subprocess_env(**env),
                          capture_output=True, text=True, check=False, timeout=120, cwd=path.parent)


def script(tmp_path: Path, body: str, name: str = "port.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip("\n"))
    return path


def line_of(path: Path, fragment: str) -> int:
    """The 1-based line of ``path`` that holds ``fragment`` (exactly one)."""
    hits = [i for i, text in enumerate(path.read_text().splitlines(), 1) if fragment in text]
    assert len(hits) == 1, (fragment, hits)
    return hits[0]


def leak_lines(stderr: str) -> dict[int, str]:
    """{line: message} of the leak report ("  port.py:12: ...")."""
    return {int(m.group(1)): m.group(2)
            for m in re.finditer(r"^  port\.py:(\d+)(?: \(called from [^)]*\))?: (.*)$", stderr, re.M)}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_the_examples_run_clean(example: Path) -> None:
    proc = check(example)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"pyaclnn check: clean: {example} ran on the NumPy reference backend (Ascend910B, hazards: raise): "
        "no hazard, no handle left alive"]
    assert "[0] is: " in proc.stdout  # the script ran to its results


# Each raw C handle a sample must release: (the line that makes it, the line that releases it,
# what the report says). The leak script stops before the releases; the clean one runs them.
ACL_PORT = """
import numpy as np
from pyaclnn import acl

acl.aclInit(None)
acl.aclrtSetDevice(0)
stream = acl.aclrtCreateStream()
event = acl.aclrtCreateEvent()
addr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
host = acl.aclrtMallocHost(32)
t = acl.aclCreateTensor([2, 2], 2, acl.ACL_FLOAT, [2, 1], 0, acl.ACL_FORMAT_ND, [2, 2], 2, addr)
scalar = acl.aclCreateScalar(np.float32(1.5), acl.ACL_FLOAT)
ints = acl.aclCreateIntArray([1, 2, 3], 3)
floats = acl.aclCreateFloatArray([1.0], 1)
bools = acl.aclCreateBoolArray([True], 1)
tensors = acl.aclCreateTensorList([acl.aclCreateTensor([4], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], 1, addr)], 1)
scalars = acl.aclCreateScalarList([acl.aclCreateScalar(np.float32(2), acl.ACL_FLOAT)], 1)
ws, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(t, t, t, 1, t)
context = acl.aclrtCreateContext(0)
if RELEASE:
    acl.aclrtDestroyContext(context)
    acl.aclDestroyAclOpExecutor(executor)
    acl.aclDestroyScalarList(scalars)
    acl.aclDestroyTensorList(tensors)
    acl.aclDestroyBoolArray(bools)
    acl.aclDestroyFloatArray(floats)
    acl.aclDestroyIntArray(ints)
    acl.aclDestroyScalar(scalar)
    acl.aclDestroyTensor(t)
    acl.aclrtFreeHost(host)
    acl.aclrtFree(addr)
    acl.aclrtDestroyEvent(event)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(0)
    acl.aclFinalize()
"""
ACL_LEAKS = {
    "acl.aclInit(None)": "aclInit is never matched by aclFinalize",
    "acl.aclrtSetDevice(0)": "aclrtSetDevice(0) is never matched by aclrtResetDevice(0)",
    "aclrtCreateStream()": "stream 0x",
    "aclrtCreateEvent()": "event 0x",
    "aclrtMalloc(16,": "device memory at 0x",
    "aclrtMallocHost(32)": "pinned host memory at 0x",
    "t = acl.aclCreateTensor": "aclTensor 0x",
    "scalar = acl.aclCreateScalar": "aclScalar 0x",
    "aclCreateIntArray": "aclIntArray 0x",
    "aclCreateFloatArray": "aclFloatArray 0x",
    "aclCreateBoolArray": "aclBoolArray 0x",
    "aclCreateTensorList": "aclTensorList 0x",
    "aclCreateScalarList": "aclScalarList 0x",
    "GetWorkspaceSize": "aclOpExecutor 0x",
    "aclrtCreateContext(0)": "context 0x",
}
RELEASE_CALL = {"stream 0x": "aclrtDestroyStream", "event 0x": "aclrtDestroyEvent", "device memory": "aclrtFree",
                "pinned host": "aclrtFreeHost", "aclTensor 0x": "aclDestroyTensor", "aclScalar 0x": "aclDestroyScalar",
                "aclIntArray": "aclDestroyIntArray", "aclFloatArray": "aclDestroyFloatArray",
                "aclBoolArray": "aclDestroyBoolArray", "aclTensorList": "aclDestroyTensorList",
                "aclScalarList": "aclDestroyScalarList", "aclOpExecutor": "aclDestroyAclOpExecutor",
                "context 0x": "aclrtDestroyContext"}


def test_every_raw_handle_left_alive_is_named_with_its_line(tmp_path: Path) -> None:
    path = script(tmp_path, "RELEASE = False\n" + ACL_PORT)
    proc = check(path)
    assert proc.returncode == 1, proc.stderr
    found = leak_lines(proc.stderr)
    expected = {line_of(path, fragment): text for fragment, text in ACL_LEAKS.items()}
    assert sorted(found) == sorted(expected), proc.stderr  # one line each: list elements go with their list
    for line, text in expected.items():
        assert found[line].startswith(text), (line, found[line])
        call = next((c for k, c in RELEASE_CALL.items() if text.startswith(k)), None)
        if call is not None:
            assert call in found[line]
    assert "(16 bytes)" in found[line_of(path, "aclrtMalloc(16,")]
    assert proc.stderr.splitlines()[-1] == f"pyaclnn check: FAILED: {len(ACL_LEAKS)} handle(s) left alive ({path})"


def test_the_same_port_releasing_everything_is_clean(tmp_path: Path) -> None:
    proc = check(script(tmp_path, "RELEASE = True\n" + ACL_PORT))
    assert proc.returncode == 0, proc.stderr
    assert "clean" in proc.stderr and "handle" in proc.stderr


@pytest.mark.parametrize("make, release", [
    ("ptr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)", "acl.aclrtFree(ptr)"),
    ("ptr = acl.aclCreateTensor([1], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [1], 1, 64)",
     "acl.aclDestroyTensor(ptr)"),
    ("ptr = acl.aclrtCreateStream()", "acl.aclrtDestroyStream(ptr)"),
])
def test_a_single_leak_in_a_function_fails_and_names_its_line(tmp_path: Path, make: str, release: str) -> None:
    body = f"""
    from pyaclnn import acl


    def main(release):
        acl.aclrtSetDevice(0)
        {make}
        if release:
            {release}
        acl.aclrtResetDevice(0)


    main(release=False)
    """
    path = script(tmp_path, body)
    proc = check(path)
    assert proc.returncode == 1
    assert list(leak_lines(proc.stderr)) == [line_of(path, make)], proc.stderr
    # the line is in main(): the report names its caller too, and stops there (before the runner)
    assert f"  port.py:{line_of(path, make)} (called from port.py:{line_of(path, 'main(release=False)')}): " \
        in proc.stderr, proc.stderr
    proc = check(script(tmp_path, body.replace("release=False", "release=True")))
    assert proc.returncode == 0, proc.stderr


OBJECTS = """
import numpy as np
import pyaclnn

a = np.ones((2, 3), np.float32)
device = pyaclnn.Device(0)
stream = device.create_stream()
event = device.create_event()
x = pyaclnn.Tensor.from_numpy(a, device)
view = x[1:]
executor = pyaclnn.MseLossBackward(x, x, x, "mean", x)
if CLOSE:
    executor.close()
    view.close()
    x.close()
    event.close()
    stream.close()
    device.close()
"""


def test_pyaclnn_objects_left_open_are_named_with_their_creation_line(tmp_path: Path) -> None:
    path = script(tmp_path, "CLOSE = False\n" + OBJECTS)
    proc = check(path)
    assert proc.returncode == 1
    found = leak_lines(proc.stderr)
    expected = {"pyaclnn.Device(0)": "pyaclnn.Device(0) is never closed",
                "create_stream()": "pyaclnn.Stream on device 0 is never closed",
                "create_event()": "pyaclnn.Event on device 0 is never closed",
                "x = pyaclnn.Tensor": "pyaclnn.Tensor of shape (2, 3) float32 is never closed",
                "x[1:]": "pyaclnn.Tensor of shape (1, 3) float32 is never closed",
                "MseLossBackward(": "pyaclnn.MseLossBackward (aclnnMseLossBackward) is never closed"}
    # the aclTensors, memory, stream and device set these objects own are not listed again
    assert {line: text.split(":")[0] for line, text in found.items()} == \
        {line_of(path, k): v for k, v in expected.items()}, proc.stderr
    assert check(script(tmp_path, "CLOSE = True\n" + OBJECTS)).returncode == 0


def test_what_pyaclnn_keeps_for_itself_is_no_leak(tmp_path: Path) -> None:
    """The high-level API's default device and default stream (run() without a stream), its
    workspace and a free waiting for that stream, and objects dropped without close()."""
    path = script(tmp_path, """
    import numpy as np
    import pyaclnn

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    print(pyaclnn.mse_loss_backward(a, a, a).sum())
    x = pyaclnn.Tensor.from_numpy(a)           # the default device
    out = pyaclnn.Tensor.zeros((2, 3))
    pyaclnn.MseLossBackward(x, x, x, "mean", out).run()  # the default stream, never synchronized
    x.close()                                  # its free waits for that stream
    out.close()
    pyaclnn.Tensor.from_numpy(a)               # dropped: the garbage collector releases it
    with pyaclnn.Device(0) as device:          # a default stream on the user's device too
        y = pyaclnn.Tensor.from_numpy(a, device)
        weight = pyaclnn.Tensor.from_numpy(np.ones(1, np.float32), device)
        grad_weight = pyaclnn.Tensor.zeros((1,), device=device)
        pyaclnn.PreluBackward(y, y, weight, pyaclnn.Tensor.zeros((2, 3), device=device), grad_weight).run()
    """)
    proc = check(path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0.0"


def test_a_hazard_error_is_reported_with_the_scripts_frames_only(tmp_path: Path) -> None:
    path = script(tmp_path, """
    import pyaclnn
    from pyaclnn import acl


    def copy_back():
        raise pyaclnn.HazardError("aclrtMemcpy at port.py:44 reads [0x10, +16) that aclnnX writes")


    copy_back()
    """)
    proc = check(path)
    assert proc.returncode == 1
    err = proc.stderr.splitlines()
    assert err[0] == "pyaclnn check: hazard: aclrtMemcpy at port.py:44 reads [0x10, +16) that aclnnX writes"
    assert err[1:4] == ["  where (most recent call last):", "    port.py:9 in <module>:  copy_back()",
                        f"    port.py:{line_of(path, 'raise')} in copy_back:  raise pyaclnn.HazardError(\"aclrtMemcpy at "
                        "port.py:44 reads [0x10, +16) that aclnnX writes\")"]
    assert err[-1] == f"pyaclnn check: FAILED: a hazard ({path})"
    assert "Traceback" not in proc.stderr and "runpy" not in proc.stderr


def test_an_error_inside_pyaclnn_shows_no_pyaclnn_frame(tmp_path: Path) -> None:
    path = script(tmp_path, """
    from pyaclnn import acl

    acl.aclrtSetDevice(0)
    ptr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtFree(ptr)
    acl.aclrtFree(ptr)
    """)
    proc = check(path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("pyaclnn check: the script failed with pyaclnn.RtParamInvalidError: aclrtFree: ")
    assert "    port.py:6 in <module>:  acl.aclrtFree(ptr)" in proc.stderr.splitlines()
    assert "pyaclnn/" not in proc.stderr and "runtime.py" not in proc.stderr
    assert "handles left alive are not listed: the script did not finish" in proc.stderr  # ptr's set is not one


def test_hazard_warnings_are_findings_and_the_script_goes_on(tmp_path: Path) -> None:
    path = script(tmp_path, """
    import warnings
    import pyaclnn

    for i in range(2):
        warnings.warn(pyaclnn.HazardWarning(f"race {i}"))
    print("went on")
    """)
    proc = check(path, PYACLNN_HAZARDS="warn")
    assert proc.returncode == 1
    assert proc.stdout == "went on\n"
    err = proc.stderr.splitlines()
    assert err[:2] == ["pyaclnn check: hazard: race 0", "pyaclnn check: hazard: race 1"]
    assert err[-1] == f"pyaclnn check: FAILED: 2 hazard warning(s) ({path})"


def test_runs_as_python_would_and_a_failing_script_is_a_finding(tmp_path: Path) -> None:
    path = script(tmp_path, """
    import os
    import sys
    import pyaclnn
    import helper  # next to the script, as `python port.py` finds it

    print(__name__, sys.argv[1:], os.environ["PYACLNN_BACKEND"], pyaclnn.backend_info()["backend"])
    sys.exit(int(sys.argv[1]))
    """)
    (tmp_path / "helper.py").write_text("")
    proc = check(path, "0", "--flag", PYACLNN_BACKEND="auto")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "__main__ ['0', '--flag'] numpy numpy\n"
    proc = check(path, "3")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["pyaclnn check: the script exited with status 3",
                                        "pyaclnn check: (handles left alive are not listed: the script did not "
                                        "finish)", f"pyaclnn check: FAILED: the script failed ({path})"]
    proc = check(script(tmp_path, "print(1 / 0)\n", "boom.py"))
    assert proc.returncode == 1
    assert "ZeroDivisionError: division by zero" in proc.stderr and "boom.py" in proc.stderr


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    proc = check(tmp_path / "missing.py")
    assert proc.returncode == 2 and "no script" in proc.stderr
    proc = check(script(tmp_path, "pass\n"), PYACLNN_HAZARDS="sometimes")
    assert proc.returncode == 2 and "PYACLNN_HAZARDS" in proc.stderr
    helped = subprocess.run([sys.executable, "-m", "pyaclnn", "--help"], env=subprocess_env(), capture_output=True,
                            text=True, check=False, timeout=60)
    assert helped.returncode == 0 and "check" in helped.stdout
    helped = subprocess.run([sys.executable, "-m", "pyaclnn", "check", "--help"], env=subprocess_env(),
                            capture_output=True, text=True, check=False, timeout=60)
    assert helped.returncode == 0 and "SCRIPT" in helped.stdout and "left alive" in helped.stdout


PYTEST_FILE = """
import numpy as np
import pytest
import pyaclnn
from pyaclnn import acl

kept = []


def test_malloc_leak(pyaclnn_check):
    acl.aclrtSetDevice(0)
    acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtResetDevice(0)


@pytest.mark.pyaclnn_check
def test_tensor_leak():
    kept.append(pyaclnn.Tensor.from_numpy(np.ones(3, np.float32)))


def test_clean(pyaclnn_check):
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        x = pyaclnn.Tensor.from_numpy(np.ones(3, np.float32))
        pyaclnn.MseLossBackward(x, x, x, "mean", x).run(stream)
    pyaclnn.mse_loss_backward(np.ones(3, np.float32), np.ones(3, np.float32), np.ones(3, np.float32))


def test_hazard_warning(pyaclnn_check):
    import warnings
    warnings.warn(pyaclnn.HazardWarning("race at x.py:1"))


def test_not_checked():
    kept.append(pyaclnn.Tensor.from_numpy(np.ones(3, np.float32)))
"""


def run_pytest(tmp_path: Path, *args: str) -> tuple[dict[str, str], str]:
    (tmp_path / "test_user.py").write_text(PYTEST_FILE.lstrip("\n"))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-p",
                           "pyaclnn.testing", "test_user.py", *args], env=subprocess_env(), capture_output=True,
                          text=True, check=False, timeout=120, cwd=tmp_path)
    outcomes = dict(reversed(m.groups()) for m in re.finditer(r"^(PASSED|FAILED) test_user\.py::(\w+)",
                                                             proc.stdout, re.M))
    return outcomes, proc.stdout


def test_the_pytest_plugin_fails_a_test_that_leaks_or_trips_a_hazard(tmp_path: Path) -> None:
    outcomes, out = run_pytest(tmp_path)
    assert outcomes == {"test_malloc_leak": "FAILED", "test_tensor_leak": "FAILED", "test_clean": "PASSED",
                        "test_hazard_warning": "FAILED", "test_not_checked": "PASSED"}, out
    assert "test_user.py:11: device memory at 0x" in out and "(16 bytes) is never freed: call aclrtFree" in out
    assert "test_user.py:17: pyaclnn.Tensor of shape (3,) float32 is never closed" in out
    assert "pyaclnn check: hazard: race at x.py:1" in out
    outcomes, out = run_pytest(tmp_path, "--pyaclnn-check")
    assert outcomes["test_not_checked"] == "FAILED" and outcomes["test_clean"] == "PASSED", out


def test_the_pytest_plugin_is_registered_as_an_entry_point() -> None:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: pytest depends on tomli there
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"pyaclnn.testing": "pyaclnn.testing"}


def test_sites_of_live_handles_survive_pruning() -> None:
    """The site table forgets destroyed handles now and then; a live one keeps its line."""
    from pyaclnn._numpy.runtime import NumpyRuntime
    runtime = NumpyRuntime("Ascend910B")
    runtime.init()
    runtime.track_sites(True)
    kept = runtime.create_int_array([1])
    line = sys._getframe().f_lineno - 1
    for _ in range(10_000):
        runtime.destroy_int_array(runtime.create_int_array([2]))
    assert len(runtime._sites or {}) < 5000
    [live] = runtime.live_handles()
    assert (live.kind, live.handle, live.site.line, live.detail) == ("int_array", kept, line, "[1]")


BORROWED = """
import numpy as np
import pyaclnn
from pyaclnn import acl

acl.aclrtSetDevice(0)
raw_stream = acl.aclrtCreateStream()
addr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
with pyaclnn.Device(0) as device:
    stream = pyaclnn.Stream.from_handle(raw_stream, device)
    x = pyaclnn.Tensor.from_address(addr, (4,), np.float32, device=device)
    x.copy_from(np.ones(4, np.float32))
    out = pyaclnn.Tensor.zeros((4,), device=device)
    pyaclnn.MseLossBackward(x, x, x, "none", out).run(stream)
    stream.synchronize()
if RELEASE:
    acl.aclrtFree(addr)
    acl.aclrtDestroyStream(raw_stream)
    acl.aclrtResetDevice(0)
"""


def test_borrowed_streams_and_memory_stay_their_owners_leaks(tmp_path: Path) -> None:
    """Stream.from_handle and Tensor.from_address never release what they borrow: the raw
    handles are the script's to release, and are reported on the lines that made them."""
    path = script(tmp_path, "RELEASE = False\n" + BORROWED)
    proc = check(path)
    assert proc.returncode == 1
    found = leak_lines(proc.stderr)
    assert {line: text.split(" ")[0] for line, text in found.items()} == {
        line_of(path, "aclrtSetDevice"): "aclrtSetDevice(0)", line_of(path, "aclrtCreateStream"): "stream",
        line_of(path, "aclrtMalloc"): "device"}, proc.stderr
    assert check(script(tmp_path, "RELEASE = True\n" + BORROWED)).returncode == 0


def test_the_overhead_benchmark_runs() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "check_overhead.py"), "--batches", "1"],
                          env=subprocess_env(), capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()
    assert rows[0].split() == ["case", "off", "on", "on/off"] and len(rows) == 7


def test_an_acl_executor_planned_on_tensors_is_one_leak(tmp_path: Path) -> None:
    """pyaclnn.acl's phase 1 on pyaclnn Tensors makes descriptors of its own, destroyed with the
    executor: a leaked executor is reported alone, its descriptors are no separate leak."""
    body = """
    import numpy as np
    import pyaclnn
    from pyaclnn import acl

    with pyaclnn.Device(0):
        x = pyaclnn.Tensor.from_numpy(np.ones(4, np.float32))
        out = pyaclnn.Tensor.zeros((4,))
        ws, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(x, x, x, 0, out)
        if DESTROY:
            acl.aclDestroyAclOpExecutor(executor)
    acl.aclrtSetDevice(0)  # the Device's reset must not reset this one: the executor's device stays set
    """
    path = script(tmp_path, body.replace("DESTROY", "False"))
    proc = check(path)
    assert proc.returncode == 1
    found = leak_lines(proc.stderr)
    assert sorted(found) == [line_of(path, "GetWorkspaceSize"), line_of(path, "aclrtSetDevice")], proc.stderr
    assert found[line_of(path, "GetWorkspaceSize")].startswith("aclOpExecutor 0x")
    assert proc.stderr.splitlines()[-1].startswith("pyaclnn check: FAILED: 2 handle(s)")


def test_default_streams_of_other_threads_are_pyaclnns_own(tmp_path: Path) -> None:
    path = script(tmp_path, """
    import threading
    import numpy as np
    import pyaclnn

    ready = threading.Event()


    def work():
        x = pyaclnn.Tensor.from_numpy(np.ones(4, np.float32))
        pyaclnn.MseLossBackward(x, x, x, "none", x).run()  # this thread's default stream
        x.close()
        ready.set()
        threading.Event().wait()  # still alive when the script ends


    threading.Thread(target=work, daemon=True).start()
    ready.wait()
    """)
    proc = check(path)
    assert proc.returncode == 0, proc.stderr


def test_a_real_hazard_names_the_port_lines_not_pyaclnns(tmp_path: Path) -> None:
    """A port that reads its result without synchronizing: the reference's HazardError, raised
    deep inside pyaclnn, is shown with its message and the port's own frames."""
    path = script(tmp_path, """
    import numpy as np
    from pyaclnn import acl


    def main():
        acl.aclrtSetDevice(0)
        stream = acl.aclrtCreateStream()
        ptrs = [acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST) for _ in range(4)]
        for p in ptrs[:3]:
            acl.aclrtMemcpy(p, 16, np.ones(4, np.float32), 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        g, x, y, out = (acl.aclCreateTensor([4], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], 1, p) for p in ptrs)
        ws, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(g, x, y, 0, out)
        wsp = acl.aclrtMalloc(ws, acl.ACL_MEM_MALLOC_HUGE_FIRST) if ws > 0 else None
        acl.aclnnMseLossBackward(wsp, ws, executor, stream)
        result = np.empty(4, np.float32)
        acl.aclrtMemcpy(result, 16, ptrs[3], 16, acl.ACL_MEMCPY_DEVICE_TO_HOST)  # no synchronize


    main()
    """)
    proc = check(path)
    assert proc.returncode == 1
    err = proc.stderr.splitlines()
    read, launch = line_of(path, "DEVICE_TO_HOST"), line_of(path, "aclnnMseLossBackward(wsp")
    call = len(path.read_text().splitlines())  # the last line: main()
    assert err[0].startswith(f"pyaclnn check: hazard: aclrtMemcpy at port.py:{read} (called from port.py:{call}) "
                             "reads ["), err
    assert f"port.py:{launch} (called from port.py:{call})" in err[0]
    assert err[1:4] == ["  where (most recent call last):", f"    port.py:{call} in <module>:  main()",
                        f"    port.py:{read} in main:  acl.aclrtMemcpy(result, 16, ptrs[3], 16, "
                        "acl.ACL_MEMCPY_DEVICE_TO_HOST)  # no synchronize"]
    assert "pyaclnn/" not in proc.stderr and err[-1] == f"pyaclnn check: FAILED: a hazard ({path})"


def test_check_without_a_script_asks_for_the_script_only() -> None:
    # it said "the following arguments are required: SCRIPT, ARGS": a script may take no arguments
    proc = subprocess.run([sys.executable, "-m", "pyaclnn", "check"], env=subprocess_env(), capture_output=True,
                          text=True, check=False, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["usage: pyaclnn check [-h] SCRIPT [ARGS ...]",
                                        "pyaclnn check: error: the following arguments are required: SCRIPT"]


def test_graphs_left_alive_are_named_with_their_line(tmp_path: Path) -> None:
    """A pyaclnn.Graph never closed, and an aclmdlRI never destroyed (pyaclnn.acl), are leaks:
    each keeps the memory of what it captured (that memory is not listed again)."""
    body = """
    import numpy as np
    import pyaclnn
    from pyaclnn import acl

    device = pyaclnn.Device(0)
    stream = device.create_stream()
    x, y = pyaclnn.Tensor.zeros(4, device=device), pyaclnn.Tensor.from_numpy(np.ones(4, np.float32), device)
    with stream.capture() as graph:
        pyaclnn.Op("InplaceAdd", x, y, np.float32(1)).run(stream)
    graph.replay()
    print(x.numpy()[0])
    x.close()
    y.close()
    s = acl.aclrtCreateStream()
    acl.aclmdlRICaptureBegin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    model = acl.aclmdlRICaptureEnd(s)
    acl.aclrtDestroyStream(s)
    if CLOSE:
        graph.close()
        acl.aclmdlRIDestroy(model)
        stream.close()
        device.close()  # (closing the device would close the graph too)
    """
    path = script(tmp_path, body.replace("CLOSE", "False"))
    proc = check(path)
    assert proc.returncode == 1, proc.stderr
    found = leak_lines(proc.stderr)
    assert set(found) == {line_of(path, k) for k in ("pyaclnn.Device(0)", "create_stream()", "stream.capture()",
                                                     "aclmdlRICaptureBegin(")}, proc.stderr
    assert "pyaclnn.Graph" in found[line_of(path, "stream.capture()")]
    assert "aclmdlRIDestroy" in found[line_of(path, "aclmdlRICaptureBegin(")]
    fixed = check(script(tmp_path, body.replace("CLOSE", "True")))
    assert fixed.returncode == 0, fixed.stderr
