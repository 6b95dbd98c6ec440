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
import subprocess
import sys
import textwrap
from pathlib import Path

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
