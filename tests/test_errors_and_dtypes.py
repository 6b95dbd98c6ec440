"""The error hierarchy (generated from headers/) and the dtype tables."""
from __future__ import annotations

import pickle

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import errors
from pyaclnn.dtypes import DType, from_numpy, itemsize, to_numpy


def test_every_status_in_headers_has_its_class():
    from pyaclnn._headers_path import constants
    codes = {v for k, v in constants().items() if k.startswith(("ACL_ERROR", "ACLNN_ERR")) and v}
    for code in codes:
        cls = errors.class_for_status(code)
        assert cls is not errors.AclError and cls.status == code


@pytest.mark.parametrize("code,cls,family", [
    (161001, pyaclnn.AclnnParamNullptrError, pyaclnn.AclParamError),
    (161002, pyaclnn.AclnnParamInvalidError, pyaclnn.AclParamError),
    (561002, pyaclnn.AclnnInnerTilingErrorError, pyaclnn.AclInternalError),
    (207018, pyaclnn.RtDeviceOomError, pyaclnn.AclResourceError),
    (100002, pyaclnn.AclRepeatInitializeError, pyaclnn.AclParamError),
    (361001, pyaclnn.AclnnRuntimeErrorError, pyaclnn.AclRuntimeError),
])
def test_from_status_picks_class_and_family(code, cls, family):
    exc = errors.from_status(code, "aclFoo", "why", "EZ1001 text")
    assert type(exc) is cls and isinstance(exc, family) and isinstance(exc, pyaclnn.AclError)
    assert exc.status == code and exc.api == "aclFoo" and exc.detail == "why"
    assert exc.cann_message == "EZ1001 text" and exc.name == cls.symbol


def test_param_invalid_is_also_a_value_error():
    assert issubclass(pyaclnn.AclnnParamInvalidError, ValueError)
    assert not issubclass(pyaclnn.AclnnParamNullptrError, ValueError)


def test_message_format_names_api_status_and_rule():
    exc = errors.from_status(161002, "aclnnMseLossBackwardGetWorkspaceSize", "out shape (2, 3) != broadcast shape (2, 2)")
    assert str(exc) == ("aclnnMseLossBackwardGetWorkspaceSize: ACLNN_ERR_PARAM_INVALID (161002): "
                        "out shape (2, 3) != broadcast shape (2, 2)")
    exc = errors.from_status(561107, "aclnnFoo", cann_message="EZ9999 opp path")
    assert "CANN: EZ9999 opp path" in str(exc) and "hint: " in str(exc) and "ASCEND_OPP_PATH" in str(exc)


def test_errors_pickle_and_unknown_codes_survive():
    for exc in (errors.from_status(161002, "api", "d", "m"), errors.from_status(987654, "api")):
        back = pickle.loads(pickle.dumps(exc))
        assert type(back) is type(exc) and back.status == exc.status and str(back) == str(exc)
    assert errors.from_status(987654, "api").status == 987654


def test_public_names_are_exported_from_pyaclnn():
    for name in ("AclError", "AclnnParamNullptrError", "AclnnParamInvalidError", "BackendUnavailableError",
                 "ExecutorConsumedError", "ClosedError"):
        assert name in pyaclnn.__all__ and getattr(pyaclnn, name).__module__ == "pyaclnn"


@pytest.mark.parametrize("dt,npdt,size", [
    (DType.FLOAT, np.float32, 4), (DType.FLOAT16, np.float16, 2), (DType.BF16, ml_dtypes.bfloat16, 2),
    (DType.INT64, np.int64, 8), (DType.INT32, np.int32, 4), (DType.BOOL, np.bool_, 1),
    (DType.DOUBLE, np.float64, 8), (DType.UINT8, np.uint8, 1)])
def test_dtype_round_trip(dt, npdt, size):
    assert to_numpy(dt) == np.dtype(npdt) and from_numpy(npdt) is dt and itemsize(dt) == size


def test_dtype_values_are_the_c_values_with_their_gaps():
    from pyaclnn._headers_path import constants
    c = constants()
    for dt in DType:
        assert c[dt.c_name] == dt.value
    assert DType.BF16 == 27 and DType.INT4 == 29 and 5 not in {d.value for d in DType}


def test_dtypes_without_numpy_equivalent_are_clear():
    with pytest.raises(pyaclnn.NotSupportedError, match="ACL_INT4"):
        to_numpy(DType.INT4)
    with pytest.raises(pyaclnn.NotSupportedError, match="<U3"):
        from_numpy(np.dtype("U3"))
