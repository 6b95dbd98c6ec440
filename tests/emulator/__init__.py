"""Host emulator of the CANN runtime / nnopbase / opapi ABI, for pyaclnn's device-path tests.

See README.md beside this file; the Python entry points live in ``emulator.build``.
"""
from .build import Emulator, EmulatorBuildError, build_toolkit, library_paths, toolkit_env

__all__ = ["Emulator", "EmulatorBuildError", "build_toolkit", "library_paths", "toolkit_env"]
