"""pyaclnn under CANN's NPU Simulator (issue 17), through the emulator, in subprocesses.

The emulated 9.x toolkit has a driver (found through the install info file, as one installed
outside /usr/local/Ascend) and the simulator's folder tools/simulator/Ascend950PR/lib with
libruntime_camodel.so, libnpu_drv_camodel.so and the libruntime.so / libascend_hal.so links to
them that hicann/ops-math scripts/build_example.sh makes. Put first on LD_LIBRARY_PATH (as that
script does), the simulator's runtime is what the toolkit's libacl_rt.so gets for its DT_NEEDED
libruntime.so, and it opens no libruntime_v*.so and no libtsdclient.so (hicann/runtime
cmodel.cmake: STATIC_RT_LIB=1, CFG_DEV_PLATFORM_PC). pyaclnn must leave those names to the
dynamic linker, and preload only the runtime implementation the chip's runtime opens.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parents[1]
CHIP = "Ascend950PR"

# What runs in the child: the MSE sample's data (documented result [0, 0, 1, 3]), then what the
# process mapped from the toolkit and what the emulated runtime booted.
RUN = """
    import json
    import numpy as np
    import pyaclnn
    from emulator.build import Emulator
    out = pyaclnn.mse_loss_backward(np.arange(4, dtype=np.float32), np.arange(4, dtype=np.float32),
                                    np.ones(4, np.float32))
    info = pyaclnn.backend_info()
    maps = {line.split()[-1] for line in open('/proc/self/maps') if line.split()[-1].startswith('/')}
    print(json.dumps({"out": out.tolist(), "simulator": info.get("simulator"), "reason": info["reason"],
                      "boot": Emulator(info["paths"]["home"], preload_plugins=False).runtime_plugins(),
                      "mapped": sorted(maps)}))
"""


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 9.x toolkit with a driver (named by an install info file) and the simulator."""
    from emulator.build import build_simulator, build_toolkit
    root = tmp_path_factory.mktemp("cann-sim")
    driver = root / "driver-root"
    home = build_toolkit(root, "9.x", driver=driver)
    info = root / "ascend_install.info"
    info.write_text(f"Driver_Install_Path_Param={driver}\n")
    return {"home": home, "sim": build_simulator(home, CHIP), "info": info,
            "driver": driver / "driver" / "lib64" / "driver" / "libascend_hal.so"}


def run(args: list[str], toolkit: dict[str, Path], simulator: bool, **env: str) -> subprocess.CompletedProcess:
    """``python args`` with the toolkit's set_env.sh variables, and the simulator's folder first on
    LD_LIBRARY_PATH when ``simulator`` (emulator.build.simulator_env); ``env`` last."""
    from emulator.build import simulator_env, toolkit_env
    clean = {k: v for k, v in os.environ.items()
             if k not in ("LD_LIBRARY_PATH", "ASCEND_OPP_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME",
                          "ASCEND_AICPU_PATH", "ASCEND_CUSTOM_OPP_PATH") and not k.startswith(("PYACLNN_", "EMU_"))}
    clean.update(simulator_env(toolkit["home"], CHIP) if simulator else toolkit_env(toolkit["home"]))
    clean.update(PYTHONPATH=os.pathsep.join([str(TESTS.parent), str(TESTS)]), PYACLNN_BACKEND="acl",
                 PYACLNN_ASCEND_INSTALL_INFO=str(toolkit["info"]), EMU_SOC_NAME="Ascend950PR_9599")
    clean.update(env)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=clean, timeout=120)


def run_code(code: str, toolkit: dict[str, Path], simulator: bool, **env: str) -> dict:
    result = run(["-c", textwrap.dedent(code)], toolkit, simulator, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_emulated_toolkit_picks_up_the_simulator_as_the_real_one(toolkit):
    """The emulator's own fidelity, without pyaclnn: a host that loads the toolkit's runtime by
    path boots the simulator's runtime when the folder is first on LD_LIBRARY_PATH, the toolkit's
    libruntime.so (and through it libruntime_v200.so, libtsdclient.so) when it is not."""
    from emulator.build import library_paths
    sim, lib64 = toolkit["sim"], toolkit["home"] / "lib64"
    assert sim == toolkit["home"] / "tools" / "simulator" / CHIP / "lib"
    assert {p.name: os.readlink(p) for p in sim.iterdir() if p.is_symlink()} == {
        "libruntime.so": str(sim / "libruntime_camodel.so"), "libascend_hal.so": str(sim / "libnpu_drv_camodel.so")}
    code = f"""
        import ctypes, json, os
        rt = ctypes.CDLL({str(library_paths(toolkit["home"])[0])!r}, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        status = rt.aclInit(None)
        maps = sorted({{l.split()[-1] for l in open('/proc/self/maps') if l.split()[-1].startswith('/')}})
        print(json.dumps({{"status": status, "boot": ctypes.CDLL(None).emu_runtime_plugins(), "mapped": maps}}))
    """
    on_sim = run_code(code, toolkit, simulator=True)
    assert on_sim["status"] == 0 and on_sim["boot"] == 4                       # camodel only
    assert {str(sim / "libruntime_camodel.so"), str(sim / "libnpu_drv_camodel.so")} <= set(on_sim["mapped"])
    assert not [p for p in on_sim["mapped"] if p.startswith(str(lib64)) and "runtime" in p]
    drivers = toolkit["driver"].parent
    off = run_code(code, toolkit, simulator=False, LD_LIBRARY_PATH=f"{lib64}:{drivers}")  # as set_env.sh
    assert off["status"] == 0 and off["boot"] == 3                             # implementation + tsdclient
    assert {str(lib64 / "libruntime.so"), str(lib64 / "libruntime_v200.so")} <= set(off["mapped"])
    assert not [p for p in off["mapped"] if p.startswith(str(sim))]



def test_the_simulated_driver_reports_its_build_not_the_machine(toolkit):
    """The simulated driver answers from how it was built, not from the hardware: hardware
    version PLATFORM_MINI_V1_CONFIG (0) for MODULE_TYPE_SYSTEM / INFO_TYPE_VERSION (hicann/runtime
    src/cmodel_driver/driver_api.c halGetDeviceInfo; CMakeLists.txt builds the 950 driver with
    PLATFORM_MINI_V1) and one device (cmodel_driver.h MAX_DEV_NUM, driver_api.c drvGetDevNum),
    where the installed driver reports the machine's chip (CHIP_DAVID = 15 for a 950)."""
    code = f"""
        import ctypes, json
        def version(path):
            lib = ctypes.CDLL(path)
            value = ctypes.c_int64(-1)
            return lib.halGetDeviceInfo(0, 0, 1, ctypes.byref(value)), value.value
        sim = ctypes.CDLL({str(toolkit["sim"] / "libnpu_drv_camodel.so")!r})
        count = ctypes.c_uint32(0)
        print(json.dumps({{"simulated": version({str(toolkit["sim"] / "libnpu_drv_camodel.so")!r}),
                           "installed": version({str(toolkit["driver"])!r}),
                           "devices": [sim.drvGetDevNum(ctypes.byref(count)), count.value]}}))
    """
    data = run_code(code, toolkit, simulator=False, EMU_SOC_NAME="Ascend950PR_9599", EMU_DEVICE_COUNT="4")
    assert data == {"simulated": [0, 0], "installed": [0, 15 << 8], "devices": [0, 1]}

@pytest.mark.parametrize("links", ["in the simulator folder", "in a folder of their own"])
def test_pyaclnn_runs_on_the_simulated_runtime_and_driver(toolkit, tmp_path, links):
    """Simulator first on LD_LIBRARY_PATH: nothing the simulator substitutes, and nothing its
    runtime would not open, is loaded from lib64 or the driver. The links libruntime.so and
    libascend_hal.so are in the simulator's folder (ops-math scripts/build_example.sh), or in a
    folder of their own before it (ops-nn build.sh build_single_example)."""
    from emulator.build import SIMULATOR_LINKS
    sim, lib64 = toolkit["sim"], toolkit["home"] / "lib64"
    env = {}
    if links == "in a folder of their own":
        own = tmp_path / "simulator"
        own.mkdir()
        for link, target in SIMULATOR_LINKS.items():
            (own / link).symlink_to(sim / target)
        env["LD_LIBRARY_PATH"] = f"{own}:{sim}:{lib64}"
    data = run_code(RUN, toolkit, simulator=True, **env)
    assert data["out"] == [0.0, 0.0, 1.0, 3.0]
    assert data["boot"] == {"runtime_impl": False, "libtsdclient.so": False, "camodel": True}
    assert {str(sim / "libruntime_camodel.so"), str(sim / "libnpu_drv_camodel.so")} <= set(data["mapped"])
    for shadow in (lib64 / "libruntime.so", lib64 / "libruntime_v100.so", lib64 / "libruntime_v200.so",
                   lib64 / "libtsdclient.so", toolkit["driver"]):
        assert str(shadow) not in data["mapped"], shadow
    assert data["simulator"] == CHIP
    assert data["reason"].startswith(f"acl on the NPU Simulator ({CHIP}): CANN 9.x at {toolkit['home']}")


@pytest.mark.parametrize("soc, used, unused", [("Ascend950PR_9599", "libruntime_v200.so", "libruntime_v100.so"),
                                               ("Ascend910B3", "libruntime_v100.so", "libruntime_v200.so")])
def test_without_the_simulator_only_the_chips_runtime_implementation_is_preloaded(toolkit, soc, used, unused):
    """No LD_LIBRARY_PATH: the toolkit's runtime and the driver, preloaded by path; of the
    runtime implementations only the one the driver's chip needs (runtime_keeper.cc)."""
    lib64 = toolkit["home"] / "lib64"
    data = run_code(RUN, toolkit, simulator=False, EMU_SOC_NAME=soc, LD_LIBRARY_PATH="")
    assert data["out"] == [0.0, 0.0, 1.0, 3.0]
    assert data["boot"] == {"runtime_impl": True, "libtsdclient.so": True, "camodel": False}
    assert {str(lib64 / "libruntime.so"), str(lib64 / used), str(toolkit["driver"])} <= set(data["mapped"])
    assert str(lib64 / unused) not in data["mapped"]
    assert not [p for p in data["mapped"] if "/tools/simulator/" in p]
    assert data["simulator"] is None and data["reason"].startswith("CANN 9.x at")


def test_a_simulator_after_lib64_on_the_path_is_not_used(toolkit):
    """The dynamic linker takes the first folder that has libruntime.so: lib64's here."""
    data = run_code(RUN, toolkit, simulator=False,
                    LD_LIBRARY_PATH=f"{toolkit['home'] / 'lib64'}:{toolkit['sim']}")
    assert data["boot"]["camodel"] is False and data["simulator"] is None
    assert not [p for p in data["mapped"] if "/tools/simulator/" in p]


def test_doctor_reports_the_simulators_and_how_to_run_on_one(toolkit, tmp_path):
    sim = toolkit["sim"]
    result = run(["-m", "pyaclnn", "doctor", "--json"], toolkit, simulator=False)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["simulators"] == [{
        "chip": CHIP, "lib": str(sim), "active": False, "links_missing": [],
        "commands": [f"LD_LIBRARY_PATH={sim}:$LD_LIBRARY_PATH python SCRIPT.py",
                     "npusim record python SCRIPT.py -s Ascend950"]}]
    assert report["discovery"]["simulator"] is None and "Simulator" not in report["backend"]["reason"]

    result = run(["-m", "pyaclnn", "doctor"], toolkit, simulator=True)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert f"why: acl on the NPU Simulator ({CHIP}): CANN 9.x at {toolkit['home']}" in text
    assert f"  {CHIP}: {sim}  IN USE\n" in text
    assert f"    run a script on it: LD_LIBRARY_PATH={sim}:$LD_LIBRARY_PATH python SCRIPT.py\n" in text
    assert "    or: npusim record python SCRIPT.py -s Ascend950\n" in text
    assert "libruntime_v100.so" not in text  # its runtime opens no implementation: none is listed


def test_doctor_without_a_simulator_lists_none(emulator_home):
    from emulator.build import toolkit_env
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYACLNN_", "EMU_", "ASCEND_"))}
    env.update(toolkit_env(emulator_home), PYTHONPATH=str(TESTS.parent), PYACLNN_BACKEND="acl")
    result = subprocess.run([sys.executable, "-m", "pyaclnn", "doctor", "--json"], capture_output=True, text=True,
                            env=env, timeout=120)
    report = json.loads(result.stdout)
    assert report["simulators"] == [] and report["backend"]["simulator"] is None
    assert "NPU Simulator" not in subprocess.run([sys.executable, "-m", "pyaclnn", "doctor"], capture_output=True,
                                                 text=True, env=env, timeout=120).stdout


def test_a_simulator_folder_without_its_links_is_a_problem_with_the_fix(tmp_path):
    """Only LD_LIBRARY_PATH set, no libruntime.so link: the toolkit's runtime runs (so pyaclnn
    preloads as without a simulator) and the doctor says how to link it."""
    from emulator.build import build_simulator, build_toolkit
    home = build_toolkit(tmp_path, "9.x")
    sim = build_simulator(home, CHIP, links=False)
    kit = {"home": home, "sim": sim, "info": tmp_path / "none.info"}
    data = run_code(RUN, kit, simulator=True)
    assert data["boot"]["camodel"] is False and data["simulator"] is None
    result = run(["-m", "pyaclnn", "doctor", "--json"], kit, simulator=True)
    report = json.loads(result.stdout)
    row, = report["simulators"]
    assert row["links_missing"] == ["libruntime.so", "libascend_hal.so"] and not row["active"]
    assert row["commands"][:2] == [f"ln -sf {sim}/libruntime_camodel.so {sim}/libruntime.so",
                                   f"ln -sf {sim}/libnpu_drv_camodel.so {sim}/libascend_hal.so"]
    problem, = [p for p in report["problems"] if "NPU Simulator" in p["problem"]]
    assert str(sim) in problem["problem"] and row["commands"][0] in problem["fix"] and row["commands"][1] in problem["fix"]


# ---- the samples and the examples run unchanged on it (issue 17 point 4) -----------------------
EXAMPLES = TESTS.parent / "examples"
# A child that runs its argument unchanged, as `python SCRIPT.py` (runpy, __main__) or
# `python -m pyaclnn samples`, then writes to $SIM_REPORT what the process ran on. The script's
# own stdout and exit status are left as they are.
UNCHANGED = """
import json, os, runpy, sys
target = sys.argv[1]
try:
    if target == "samples":
        sys.argv = ["pyaclnn", "samples"]
        runpy.run_module("pyaclnn", run_name="__main__", alter_sys=True)
    else:
        sys.argv = [target]
        runpy.run_path(target, run_name="__main__")
finally:
    import pyaclnn
    maps = sorted({line.split()[-1] for line in open("/proc/self/maps") if line.split()[-1].startswith("/")})
    with open(os.environ["SIM_REPORT"], "w") as f:
        json.dump({"simulator": pyaclnn.backend_info()["simulator"], "mapped": maps}, f)
"""
LINE = re.compile(r"^(\w+)\[(\d+)\] is: (-?\d+\.\d{6})")


def _camel(op: str) -> str:
    return "".join(part.title() for part in op.split("_"))


@pytest.fixture(scope="module")
def unchanged_runs(toolkit, tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, dict]]:
    """{script (or "samples"): (its process, what it ran on)}: every example and the samples,
    each in a process with the simulator's folder first on LD_LIBRARY_PATH."""
    out = tmp_path_factory.mktemp("sim-runs")
    runs = {}
    for target in ["samples", *sorted(p.name for p in EXAMPLES.glob("*.py"))]:
        report = out / f"{target}.json"
        proc = run(["-c", UNCHANGED, target if target == "samples" else str(EXAMPLES / target)], toolkit,
                   simulator=True, SIM_REPORT=str(report))
        runs[target] = (proc, json.loads(report.read_text()) if report.exists() else {})
    return runs


def _on_the_simulator(toolkit, ran_on: dict) -> None:
    sim, lib64 = toolkit["sim"], toolkit["home"] / "lib64"
    assert ran_on["simulator"] == CHIP
    assert {str(sim / "libruntime_camodel.so"), str(sim / "libnpu_drv_camodel.so")} <= set(ran_on["mapped"])
    assert str(lib64 / "libruntime.so") not in ran_on["mapped"] and str(toolkit["driver"]) not in ran_on["mapped"]


def test_the_samples_run_unchanged_on_the_simulator(toolkit, unchanged_runs):
    """`python -m pyaclnn samples`: every sample's values match the documented expected ones
    (pyaclnn.ops.samples.EXPECTED, checked against PyTorch in tests/cli/test_samples.py)."""
    from pyaclnn.ops import samples as _samples
    proc, ran_on = unchanged_runs["samples"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _on_the_simulator(toolkit, ran_on)
    for name, labels in _samples.EXPECTED.items():
        assert f"aclnn{name}: OK ({sum(map(len, labels.values()))} values match" in proc.stdout, name


@pytest.mark.parametrize("op", sorted({p.stem.removesuffix("_acl") for p in EXAMPLES.glob("*.py")}))
def test_the_examples_run_unchanged_on_the_simulator(toolkit, unchanged_runs, op):
    """Both styles of each example (<op>_acl.py, the C sample's port; <op>.py) print the
    documented sample's values (the same data as `samples`: pyaclnn.ops.samples.EXPECTED)."""
    from pyaclnn.ops import samples as _samples
    expected = _samples.EXPECTED[_camel(op)]
    for script in (f"{op}_acl.py", f"{op}.py"):
        proc, ran_on = unchanged_runs[script]
        assert proc.returncode == 0 and proc.stderr == "", proc.stdout + proc.stderr
        _on_the_simulator(toolkit, ran_on)
        first, *lines = proc.stdout.splitlines()
        assert first.startswith("backend: acl (SoC "), first
        got: dict[str, list[float]] = {}
        for line in lines:
            m = LINE.match(line)
            assert m and int(m.group(2)) == len(got.setdefault(m.group(1), [])), line
            got[m.group(1)].append(float(m.group(3)))
        assert list(got) == list(expected), script
        for label, values in expected.items():
            np.testing.assert_allclose(got[label], values, rtol=1e-5, atol=1e-5, err_msg=f"{script} {label}")


# ---- the simulated device as the real simulator has it ---------------------------------------
DEVICES = """
    import json
    import pyaclnn
    from pyaclnn import acl
    info = pyaclnn.backend_info()
    count = acl.aclrtGetDeviceCount()
    try:
        acl.aclrtSetDevice(1)
        second = "set"
    except pyaclnn.AclError as exc:
        second = [type(exc).__name__, exc.status]
    print(json.dumps({"backend": info["backend"], "simulator": info["simulator"], "reason": info["reason"],
                      "count": count, "device 1": second}))
"""


@pytest.mark.parametrize("machine", [0, 4])
def test_the_simulator_has_one_device_whatever_the_machine_has(toolkit, machine):
    """One simulated device (hicann/runtime src/cmodel_driver/cmodel_driver.h MAX_DEV_NUM 1,
    driver_api.c drvGetDevNum), on a machine without a device (EMU_DEVICE_COUNT=0: no driver,
    which the simulator does not need) as on one with four: aclrtGetDeviceCount is 1 and
    aclrtSetDevice(1) fails as the runtime rejects a device id beyond the driver's count
    (api_error.cc ApiErrorDecorator::SetDevice: RT_ERROR_DEVICE_ID, which errcode_manage.cc maps
    to ACL_ERROR_RT_INVALID_DEVICEID). backend_info and the doctor say 1 device."""
    data = run_code(DEVICES, toolkit, simulator=True, EMU_DEVICE_COUNT=str(machine))
    assert data["backend"] == "acl" and data["simulator"] == CHIP
    assert data["count"] == 1 and data["reason"].endswith(", 1 device(s)")
    assert data["device 1"] == ["RtInvalidDeviceidError", 107001]
    result = run(["-m", "pyaclnn", "doctor", "--json"], toolkit, simulator=True, EMU_DEVICE_COUNT=str(machine))
    report = json.loads(result.stdout)
    assert report["device_count"]["value"] == 1 and report["backend"]["simulator"] == CHIP, result.stderr
    if machine:  # the same machine without the simulator: its own devices
        data = run_code(DEVICES, toolkit, simulator=False, EMU_DEVICE_COUNT=str(machine), LD_LIBRARY_PATH="")
        assert data["simulator"] is None and data["count"] == machine and data["device 1"] == "set"


# ---- LD_LIBRARY_PATH as the dynamic linker saw it --------------------------------------------
# glibc's ld.so reads LD_LIBRARY_PATH once, at start-up: a script that changes
# os.environ["LD_LIBRARY_PATH"] before importing pyaclnn changes no library lookup.
def changed(value: str) -> str:
    """RUN after the script sets os.environ["LD_LIBRARY_PATH"] = value."""
    return f"""
    import os
    os.environ["LD_LIBRARY_PATH"] = {value!r}
""" + RUN


@pytest.mark.parametrize("at_startup", [True, False])
def test_the_simulator_is_the_one_the_dynamic_linker_saw_at_startup(toolkit, at_startup):
    """Simulator first at start-up, then removed from os.environ: it is in use (and pyaclnn must
    not preload lib64's libruntime.so over it). Not on the path at start-up, then put first in
    os.environ: the toolkit's runtime runs, and pyaclnn must not claim the simulator."""
    from emulator.build import simulator_env, toolkit_env
    sim, lib64 = toolkit["sim"], toolkit["home"] / "lib64"
    later = (toolkit_env if at_startup else simulator_env)(toolkit["home"])["LD_LIBRARY_PATH"]
    data = run_code(changed(later), toolkit, simulator=at_startup)
    assert data["out"] == [0.0, 0.0, 1.0, 3.0]
    assert data["boot"]["camodel"] is at_startup
    assert (str(sim / "libruntime_camodel.so") in data["mapped"]) is at_startup
    assert (str(lib64 / "libruntime.so") in data["mapped"]) is not at_startup
    assert data["simulator"] == (CHIP if at_startup else None)


def test_doctor_warns_when_ld_library_path_was_changed_after_startup(toolkit):
    from emulator.build import toolkit_env
    startup = run(["-m", "pyaclnn", "doctor", "--json"], toolkit, simulator=True)
    assert not [p for p in json.loads(startup.stdout)["problems"] if "LD_LIBRARY_PATH was changed" in p["problem"]]
    later = toolkit_env(toolkit["home"])["LD_LIBRARY_PATH"]
    code = f"""
        import os, sys
        os.environ["LD_LIBRARY_PATH"] = {later!r}
        from pyaclnn._cli.commands import main
        sys.exit(main(["doctor", "--json"]))
    """
    report = json.loads(run(["-c", textwrap.dedent(code)], toolkit, simulator=True).stdout)
    problem, = [p for p in report["problems"] if "LD_LIBRARY_PATH" in p["problem"]]
    before = f"{toolkit['sim']}:{later}"
    assert problem["problem"] == (f"LD_LIBRARY_PATH was changed after start-up (start-up: {before}; now: {later}): "
                                  "the dynamic linker uses the start-up value")
    assert problem["fix"].startswith("set it before starting python")
    assert report["backend"]["simulator"] == CHIP  # what the process really runs on


def test_the_simulated_device_has_the_simulated_drivers_memory(toolkit):
    """The simulated driver hands every device allocation out of one pool of 768 MiB
    (hicann/runtime src/cmodel_driver/driver_mem.h HBM_MAX_ADDR - HBM_BASE for MODEL_V100, which
    CMakeLists.txt selects for ascend950pr_9599; driver_mem.c drvMemAlloc, 512-byte granules);
    beyond it DRV_ERROR_OUT_OF_MEMORY, i.e. ACL_ERROR_RT_MEMORY_ALLOCATION (errcode_manage.cc).
    A device of the toolkit's runtime has far more (the emulator's 64 GiB)."""
    code = """
        import json
        import pyaclnn
        from pyaclnn import acl
        MiB = 1 << 20
        acl.aclInit(None)
        acl.aclrtSetDevice(0)
        def malloc(size):
            try:
                return acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            except pyaclnn.AclError as exc:
                return [type(exc).__name__, exc.status]
        steps = {"800 MiB": malloc(800 * MiB)}
        first = malloc(500 * MiB)
        steps["500 MiB"] = isinstance(first, int)
        steps["then 300 MiB"] = malloc(300 * MiB)
        acl.aclrtFree(first)
        second = malloc(300 * MiB)
        steps["300 MiB once the 500 are freed"] = isinstance(second, int)
        acl.aclrtFree(second)
        print(json.dumps(steps))
    """
    oom = ["RtMemoryAllocationError", 207001]
    assert run_code(code, toolkit, simulator=True) == {
        "800 MiB": oom, "500 MiB": True, "then 300 MiB": oom, "300 MiB once the 500 are freed": True}


def test_ld_library_path_is_the_startup_value_in_process(monkeypatch):
    """In this process too: os.environ changed, the folders pyaclnn reads are the start-up ones
    (/proc/self/environ); where the start-up environment is unreadable, os.environ's."""
    from pyaclnn._core import env as _env
    raw = Path("/proc/self/environ").read_bytes().split(b"\0")
    startup = next((item[len(b"LD_LIBRARY_PATH="):].decode() for item in raw if item.startswith(b"LD_LIBRARY_PATH=")), "")
    assert _env.ld_library_path_changed() is None
    monkeypatch.setenv("LD_LIBRARY_PATH", "/changed/after/startup")
    assert _env.ld_library_path() == [p for p in startup.split(":") if p]
    assert _env.ld_library_path_changed() == (startup, "/changed/after/startup")
    monkeypatch.setattr(_env, "startup_environ", lambda: None)
    assert _env.ld_library_path() == ["/changed/after/startup"] and _env.ld_library_path_changed() is None


def test_doctor_finds_a_simulator_under_the_arch_linux_tree(tmp_path):
    """An installed 9.x toolkit keeps its simulators in <home>/<arch>-linux/simulator/<chip>/lib
    (hicann/runtime tests/cmodel_test/check_runtime_cmodel_undefined_symbols.sh); tools/simulator
    is where the ops repos' scripts look. Both are listed, a folder reached both ways once."""
    from emulator.build import build_simulator, build_toolkit
    home = build_toolkit(tmp_path, "9.x")
    sim = build_simulator(home, CHIP, links=False)
    tree = home / "x86_64-linux" / "simulator"
    tree.parent.mkdir()
    (home / "tools" / "simulator").rename(tree)
    (home / "tools" / "simulator").symlink_to(tree)  # the link an install may make
    kit = {"home": home, "sim": sim, "info": tmp_path / "none.info"}
    report = json.loads(run(["-m", "pyaclnn", "doctor", "--json"], kit, simulator=False).stdout)
    assert [row["chip"] for row in report["simulators"]] == [CHIP]
    (home / "tools" / "simulator").unlink()
    report = json.loads(run(["-m", "pyaclnn", "doctor", "--json"], kit, simulator=False).stdout)
    assert [(row["chip"], row["lib"]) for row in report["simulators"]] == [(CHIP, str(tree / CHIP / "lib"))]


def test_graph_capture_and_replay_run_on_the_simulator(toolkit):
    """Issue 26: a captured graph replays through the emulated NPU Simulator layout (the camodel
    runtime and driver first on LD_LIBRARY_PATH), as on the emulated toolkit. Oracle: NumPy,
    x += 2 * y once per replay (aclnnInplaceAdd), nothing before the first replay."""
    data = run_code("""
        import json, numpy as np, pyaclnn
        with pyaclnn.Device(0) as device, device.create_stream() as stream:
            x = pyaclnn.Tensor.from_numpy(np.arange(4, dtype=np.float32))
            y = pyaclnn.Tensor.from_numpy(np.ones(4, np.float32))
            with stream.capture() as graph:
                with pyaclnn.Op("InplaceAdd", x, y, np.float32(2.0)) as op:
                    op.run(stream)
            seen = [x.numpy().tolist()]
            for _ in range(3):
                graph.replay()
                seen.append(x.numpy().tolist())
            graph.close()
        print(json.dumps({"seen": seen, "simulator": pyaclnn.backend_info()["simulator"]}))
        """, toolkit, simulator=True)
    assert data["simulator"] == CHIP
    assert data["seen"] == [[0.0, 1.0, 2.0, 3.0]] + [[v + 2.0 * n for v in (0.0, 1.0, 2.0, 3.0)] for n in (1, 2, 3)]
