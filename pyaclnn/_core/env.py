"""Every environment variable pyaclnn reads is read here, at call time (never cached)."""
from __future__ import annotations

import os
from pathlib import Path

BACKENDS = ("auto", "acl", "numpy")
SOCS = ("Ascend910B", "Ascend910", "Ascend910_93", "Ascend310P", "Ascend950")
DEFAULT_SOC = "Ascend910B"

# CANN's own variables, reported by `doctor` and used for discovery.
CANN_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_AICPU_PATH",
             "ASCEND_CUSTOM_OPP_PATH", "LD_LIBRARY_PATH", "ASCEND_LOG_DEVICE_FLUSH_TIMEOUT")


# The default CANN installs (9.x, then 8.x), looked at after ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME.
DEFAULT_HOMES = ("/usr/local/Ascend/cann", "/usr/local/Ascend/ascend-toolkit/latest")


def cann_homes() -> list[tuple[str, Path]]:
    """Where a CANN install may be, in search order, each with where it came from
    (``$ASCEND_HOME_PATH``, ``$ASCEND_TOOLKIT_HOME``, ``default``); duplicates dropped."""
    homes: list[tuple[str, Path]] = []
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        value = os.environ.get(var)
        if value:
            homes.append((f"${var}", Path(value)))
    homes += [("default", Path(p)) for p in DEFAULT_HOMES]
    seen: set[Path] = set()
    unique = []
    for origin, path in homes:
        if path not in seen:
            seen.add(path)
            unique.append((origin, path))
    return unique


def backend() -> str:
    """PYACLNN_BACKEND: auto (default), acl or numpy. Raises ValueError on anything else."""
    value = os.environ.get("PYACLNN_BACKEND", "auto").strip().lower() or "auto"
    if value not in BACKENDS:
        raise ValueError(f"PYACLNN_BACKEND={value!r}: expected one of {', '.join(BACKENDS)}")
    return value


HAZARD_MODES = ("raise", "warn", "off")


def hazards() -> str:
    """PYACLNN_HAZARDS: what the NumPy backend does with a call that would misbehave on a
    device (pyaclnn.HazardError): raise (default), warn, or off. ValueError on anything else."""
    value = os.environ.get("PYACLNN_HAZARDS", "").strip().lower() or "raise"
    if value not in HAZARD_MODES:
        raise ValueError(f"PYACLNN_HAZARDS={value!r}: expected one of {', '.join(HAZARD_MODES)}")
    return value


def soc() -> str:
    """PYACLNN_SOC: the SoC the NumPy backend emulates (default Ascend910B)."""
    value = os.environ.get("PYACLNN_SOC", "").strip() or DEFAULT_SOC
    for known in SOCS:
        if value.lower() == known.lower():
            return known
    raise ValueError(f"PYACLNN_SOC={value!r}: expected one of {', '.join(SOCS)}")


def device_id() -> int:
    """PYACLNN_DEVICE: the device the high-level API uses by default (0). Raises ValueError
    unless it is a device id (an int >= 0)."""
    value = os.environ.get("PYACLNN_DEVICE", "").strip()
    if not value:
        return 0
    if not value.isdigit():  # digits only: no sign, no "1.0", no "abc"
        raise ValueError(f"PYACLNN_DEVICE={value!r}: expected a device id, an int >= 0 (0, 1, ...)")
    return int(value)


def install_info() -> str:
    """PYACLNN_ASCEND_INSTALL_INFO: the Ascend install info file (default /etc/ascend_install.info,
    whose Driver_Install_Path_Param says where the driver is)."""
    return os.environ.get("PYACLNN_ASCEND_INSTALL_INFO") or "/etc/ascend_install.info"


def startup_environ() -> dict[str, str] | None:
    """The environment the process started with, or None where the system does not show it.

    Linux keeps the start-up block in /proc/self/environ; assigning to os.environ (putenv) makes
    a new environment for later getenv calls and child processes, and leaves that block as it was."""
    try:
        raw = Path("/proc/self/environ").read_bytes()
    except OSError:
        return None
    env = {}
    for item in raw.split(b"\0"):
        name, sep, value = item.partition(b"=")
        if sep:
            env[os.fsdecode(name)] = os.fsdecode(value)
    return env


def startup_ld_library_path() -> str:
    """LD_LIBRARY_PATH as the dynamic linker saw it: glibc's ld.so reads it once, at process
    start-up (_dl_init_paths), so a later change of os.environ changes no library lookup.
    The start-up value where the system shows it (startup_environ), else os.environ's."""
    start = startup_environ()
    return (start if start is not None else os.environ).get("LD_LIBRARY_PATH") or ""


def ld_library_path() -> list[str]:
    """The folders of the start-up LD_LIBRARY_PATH (startup_ld_library_path), in order, empty
    entries dropped: which folder wins a bare-name library lookup (the NPU Simulator's set-up
    puts its folder first)."""
    return [p for p in startup_ld_library_path().split(":") if p]


def ld_library_path_changed() -> tuple[str, str] | None:
    """(start-up value, os.environ's value) when the script changed LD_LIBRARY_PATH after
    start-up, which the dynamic linker does not see; None when they agree (or the start-up
    value is not known)."""
    now = os.environ.get("LD_LIBRARY_PATH") or ""
    start = startup_ld_library_path()
    return None if start == now else (start, now)


def get(name: str) -> str | None:
    return os.environ.get(name) or None


def cann_vars() -> dict[str, str | None]:
    return {name: get(name) for name in CANN_VARS}


def set_default(name: str, value: str) -> bool:
    """Set ``name`` for this process (and the C libraries' getenv) if it is unset; True if set."""
    if os.environ.get(name):
        return False
    os.environ[name] = value
    return True
