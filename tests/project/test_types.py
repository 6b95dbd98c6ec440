"""The package's type hints are checked (mypy), so they stay true as the code changes; and user
code type-checks against them as it is written (constants, precise return types)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "pyaclnn"

USER_CODE = '''
import numpy as np
import pyaclnn
from pyaclnn import acl

a = np.zeros((2, 4, 3), np.float32)
stats = np.ones((2, 2), np.float32)
gi, gg, gb = pyaclnn.group_norm_backward(a, a, stats, stats, None, 2, 4, 3, 2)
reveal_type(gi)
gi.shape  # no "Item None has no attribute" under the default mask
masked = pyaclnn.group_norm_backward(a, a, stats, stats, None, 2, 4, 3, 2, output_mask=[True, False, True])
reveal_type(masked[1])
reveal_type(acl.ACL_FLOAT)
reveal_type(acl.ACL_MEM_MALLOC_HUGE_FIRST)
reveal_type(acl.ACLNN_ERR_PARAM_INVALID)
executor = pyaclnn.MseLossBackward(None, None, None)
reveal_type(executor.workspace_size)
'''


# What a user writes from the README, checked with mypy --strict: the exceptions it catches, the
# constants through pyaclnn.acl, an executor's workspace_size, the functions' return types.
STRICT_USER_CODE = '''
import warnings

import numpy as np
import numpy.typing as npt
import pyaclnn
import pyaclnn.acl
from pyaclnn import acl, errors


def grad(g: npt.NDArray[np.float32], x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32] | None:
    try:
        out: np.ndarray = pyaclnn.mse_loss_backward(g, x, x, reduction="mean")
        return out
    except pyaclnn.AclnnParamInvalidError as e:
        print(e.status, e.name, e.api, e.detail)
    except pyaclnn.AclInternalError as e:
        cls: type[pyaclnn.AclError] = errors.class_for_status(e.status)
        print(cls)
    except (pyaclnn.AclError, pyaclnn.NotSupportedError, pyaclnn.UnknownOperatorError, pyaclnn.HazardError,
            pyaclnn.PyaclnnError):
        pass
    except errors.OutputTooLargeError:
        pass
    return None


warnings.simplefilter("error", pyaclnn.HazardWarning)


def dtypes() -> list[int]:
    return [pyaclnn.acl.ACL_FLOAT, acl.ACL_FLOAT16, acl.ACL_INT64, acl.ACL_FORMAT_ND,
            acl.ACL_MEM_MALLOC_HUGE_FIRST, acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACLNN_ERR_PARAM_INVALID]


def two_phase(x: pyaclnn.Tensor, out: pyaclnn.Tensor, stream: pyaclnn.Stream) -> int:
    ex: pyaclnn.Executor = pyaclnn.MseLossBackward(x, x, x, "mean", out)
    size: int = ex.workspace_size
    ex.run(stream)
    handle: acl.AclTensor = x
    print(handle)
    return size


a = np.zeros((2, 4, 3), np.float32)
stats = np.ones((2, 2), np.float32)
gi, gg, gb = pyaclnn.group_norm_backward(a, a, stats, stats, None, 2, 4, 3, 2)
gi_shape: tuple[int, ...] = gi.shape
gi2, gw = pyaclnn.prelu_backward(a, a, np.ones(4, np.float32))
ce: np.ndarray = pyaclnn.cross_entropy_loss_grad(np.float32(1.0), stats, np.zeros(2, np.int64))
info: dict[str, object] = pyaclnn.backend_info()
reveal_type(pyaclnn.mse_loss_backward(a, a, a))
reveal_type(gb)
reveal_type(gw)
reveal_type(ce)
'''


def mypy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", *args, "--ignore-missing-imports",
                           "--cache-dir", "/dev/null", "--no-error-summary"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_mypy_is_clean():
    result = mypy(str(PKG))
    assert result.returncode == 0, result.stdout + result.stderr


def test_user_code_sees_constants_and_precise_types(tmp_path: Path):
    script = tmp_path / "user.py"
    script.write_text(USER_CODE)
    result = mypy(str(script))
    assert result.returncode == 0, result.stdout + result.stderr
    revealed = [line.split("Revealed type is ", 1)[1].strip('"')
                for line in result.stdout.splitlines() if "Revealed type is" in line]
    assert len(revealed) == 6, result.stdout
    assert revealed[0].startswith("numpy.ndarray") and not revealed[0].endswith("| None")
    assert revealed[1].startswith("numpy.ndarray") and revealed[1].endswith("| None")
    assert revealed[2:] == ["int"] * 4


def test_user_code_type_checks_strictly(tmp_path: Path):
    """Every name the README shows is an explicit export: under --strict (no implicit
    re-exports) ``except pyaclnn.AclnnParamInvalidError`` must not be "not explicitly exported".
    The package's own modules are followed silently, as an installed package's are."""
    script = tmp_path / "user_strict.py"
    script.write_text(STRICT_USER_CODE)
    result = mypy("--strict", "--follow-imports=silent", str(script))
    assert result.returncode == 0, result.stdout + result.stderr
    revealed = [line.split("Revealed type is ", 1)[1].strip('"')
                for line in result.stdout.splitlines() if "Revealed type is" in line]
    assert len(revealed) == 4 and all(r.startswith("numpy.ndarray") and not r.endswith("| None")
                                      for r in revealed), result.stdout


def test_torch_in_gives_torch_out_to_type_checkers():
    """typed_torch_usage.py: the NumPy-in/out functions' types (NumPy in, NumPy out; any torch
    tensor in, torch out; a mix is torch) hold under mypy --strict, and its run-time checks
    show the calls return what the types say."""
    usage = Path(__file__).with_name("typed_torch_usage.py")
    result = mypy("--strict", "--follow-imports=silent", str(usage))
    assert result.returncode == 0, result.stdout + result.stderr
    from conftest import subprocess_env
    run = subprocess.run([sys.executable, str(usage)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT, env=subprocess_env())
    assert run.returncode == 0, run.stdout + run.stderr
