"""Loading CANN without set_env.sh (issue 10, point 3), through the emulator, in subprocesses
with LD_LIBRARY_PATH unset.

The emulated runtime, like the real one (hicann/runtime runtime_keeper.cc, runtime.cc), opens
libruntime_v100.so / libruntime_v200.so and libtsdclient.so BY BARE NAME in aclInit, and its
libraries have no RPATH: pyaclnn must preload them by absolute path, set the variables
set_env.sh would, find a driver installed outside /usr/local/Ascend through the install info
file, and name what is missing with the exact fix when it still cannot load.
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

RUN = """
    import json, os
    import numpy as np
    import pyaclnn
    from pyaclnn._objects import backend as _backend
    from emulator.build import Emulator
    out = pyaclnn.mse_loss_backward(np.arange(4, dtype=np.float32), np.arange(4, dtype=np.float32),
                                    np.ones(4, np.float32))
    maps = open('/proc/self/maps').read()
    print(json.dumps({
        "out": out.tolist(),
        "plugins": Emulator(_backend.current().paths["home"], preload_plugins=False).runtime_plugins(),
        "loaded": sorted({l.split('/')[-1] for l in maps.splitlines() if '/lib64/' in l}),
        "env": {k: os.environ.get(k) for k in ("ASCEND_HOME_PATH", "ASCEND_AICPU_PATH", "ASCEND_OPP_PATH")},
    }))
"""

FAIL = """
    import pyaclnn
    try:
        pyaclnn.backend_info()
    except pyaclnn.BackendUnavailableError as exc:
        print(exc)
    else:
        raise SystemExit("the backend started")
"""


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("LD_LIBRARY_PATH", "ASCEND_OPP_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME",
                          "ASCEND_AICPU_PATH") and not k.startswith(("PYACLNN_", "EMU_"))}
    clean["PYTHONPATH"] = os.pathsep.join([str(TESTS.parent), str(TESTS)])
    clean["PYACLNN_ASCEND_INSTALL_INFO"] = "/nonexistent/ascend_install.info"  # the machine's is not ours
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**clean, **env}, timeout=60)


def test_by_name_libraries_are_preloaded_and_set_env_variables_set(emulator_home):
    """Only ASCEND_TOOLKIT_HOME given: the runtime's bare-name opens succeed (the implementation
    and libtsdclient.so), and ASCEND_HOME_PATH / ASCEND_AICPU_PATH / ASCEND_OPP_PATH are set as
    set_env.sh sets them."""
    result = run_python(RUN, PYACLNN_BACKEND="acl", ASCEND_TOOLKIT_HOME=str(emulator_home))
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["out"] == [0.0, 0.0, 1.0, 3.0]
    assert info["plugins"] == {"runtime_impl": True, "libtsdclient.so": True, "camodel": False}
    assert {"libruntime_v100.so", "libtsdclient.so"} <= set(info["loaded"])
    assert info["env"] == {"ASCEND_HOME_PATH": str(emulator_home), "ASCEND_AICPU_PATH": str(emulator_home),
                           "ASCEND_OPP_PATH": str(emulator_home / "opp")}


def test_950_loads_its_own_runtime_implementation(tmp_path):
    from emulator.build import build_toolkit
    home = build_toolkit(tmp_path, "9.x")
    result = run_python(RUN, PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(home), EMU_SOC_NAME="Ascend950PR_9599")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["plugins"]["runtime_impl"]


def test_a_missing_runtime_implementation_is_named_with_the_fix(tmp_path):
    from emulator.build import build_toolkit
    home = build_toolkit(tmp_path, "8.x")
    (home / "lib64" / "libruntime_v100.so").unlink()
    result = run_python(FAIL, PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(home))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "aclInit failed" in text and "500000" in text
    assert "missing: libruntime_v100.so" in text
    assert f"fix: put libruntime_v100.so in {home}/lib64" in text and "LD_LIBRARY_PATH" in text
    doctor = subprocess.run([sys.executable, "-m", "pyaclnn", "doctor", "--json"], capture_output=True, text=True,
                            env={**{k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"},
                                 "PYTHONPATH": str(TESTS.parent), "PYACLNN_BACKEND": "acl",
                                 "ASCEND_HOME_PATH": str(home)}, timeout=60)
    report = json.loads(doctor.stdout)
    assert report["acl_init"]["missing_libraries"] == ["libruntime_v100.so"]
    assert any("libruntime_v100.so" in p["problem"] and f"{home}/lib64" in p["fix"] for p in report["problems"])


def test_a_driver_outside_usr_local_is_found_through_the_install_info(tmp_path):
    """The runtime implementation needs the driver's libascend_hal.so; the driver is installed
    under <tmp>/opt/ascend, which only the install info file names."""
    from emulator.build import build_toolkit
    driver = tmp_path / "opt" / "ascend"
    home = build_toolkit(tmp_path / "toolkit", "8.x", driver=driver)
    info = tmp_path / "ascend_install.info"
    info.write_text(f"UserName=HwHiAiUser\nUserGroup=HwHiAiUser\nDriver_Install_Path_Param={driver}\n")
    result = run_python(RUN, PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(home),
                        PYACLNN_ASCEND_INSTALL_INFO=str(info))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["out"] == [0.0, 0.0, 1.0, 3.0] and "libascend_hal.so" in data["loaded"]
    # without the info file: the driver library is named, with where pyaclnn looked and the fix
    result = run_python(FAIL, PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(home))
    assert result.returncode == 0, result.stderr
    assert "missing: libascend_hal.so" in result.stdout
    assert "Driver_Install_Path_Param" in result.stdout and "/usr/local/Ascend/driver" in result.stdout


@pytest.mark.parametrize("layout", ["8.x", "9.x"])
def test_a_bare_host_without_preloading_cannot_initialise(tmp_path, layout):
    """The emulator's own fidelity: loading the runtime by absolute path is not enough."""
    from emulator.build import KEEPER, build_toolkit, library_paths
    home = build_toolkit(tmp_path, layout)
    code = f"""
        import ctypes, os
        ctypes.CDLL({str(home / "lib64" / KEEPER)!r}, mode=os.RTLD_NOW | os.RTLD_GLOBAL)   # its DT_NEEDED
        rt = ctypes.CDLL({str(library_paths(home)[0])!r}, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        print(rt.aclInit(None))
    """
    assert run_python(code).stdout.strip() == "500000"
    assert run_python(code, LD_LIBRARY_PATH=str(home / "lib64")).stdout.strip() == "0"
