"""The error hierarchy (generated from headers/) and the dtype tables."""
from __future__ import annotations

import importlib
import pickle
import pydoc
import re
import sys
import types

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import errors
from pyaclnn.dtypes import DType, from_numpy, itemsize, to_numpy


def test_every_status_in_headers_has_its_class():
    from pyaclnn._core.headers_path import constants
    codes = {v for k, v in constants().items() if k.startswith(("ACL_ERROR", "ACLNN_ERR")) and v}
    for code in codes:
        cls = errors.class_for_status(code)
        assert cls is not errors.AclError and cls.status == code


@pytest.mark.parametrize("code,cls,family", [
    (161001, pyaclnn.AclnnParamNullptrError, pyaclnn.AclParamError),
    (161002, pyaclnn.AclnnParamInvalidError, pyaclnn.AclParamError),
    (561002, pyaclnn.AclnnInnerTilingError, pyaclnn.AclInternalError),
    (207018, pyaclnn.RtDeviceOomError, pyaclnn.AclResourceError),
    (100002, pyaclnn.AclRepeatInitializeError, pyaclnn.AclParamError),
    (361001, pyaclnn.AclnnRuntimeError, pyaclnn.AclRuntimeError),
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
                 "ExecutorConsumedError", "ClosedError", "RtContextNullError", "AclnnInnerTilingError",
                 "RtMemoryAllocationError", "AclUninitializeError"):
        assert name in pyaclnn.__all__ and getattr(pyaclnn, name).__module__ == "pyaclnn"
        assert getattr(pyaclnn, name) is getattr(errors, name)  # the full set stays in pyaclnn.errors


def test_top_level_namespace_is_the_api_plus_the_errors_users_catch():
    public = {n for n in dir(pyaclnn) if not n.startswith("_")}
    modules = {n for n in public if isinstance(getattr(pyaclnn, n), types.ModuleType)}
    assert public - modules == set(pyaclnn.__all__)
    assert len(public) <= 80, sorted(public)
    status_classes = [n for n in pyaclnn.__all__ if getattr(getattr(pyaclnn, n), "status", -1) > 0]
    assert 10 <= len(status_classes) < len(errors.__all__) // 4
    assert "RtSocketCloseError" not in public and hasattr(errors, "RtSocketCloseError")


def test_no_status_class_name_doubles_its_error_suffix():
    for name in errors.__all__:
        assert not re.search(r"(Error|Err)Error$", name), name
    assert errors.class_for_status(500000).__name__ == "AclGenericInternalError"
    assert errors.class_for_status(507001).__name__ == "RtTsError"
    assert errors.class_for_status(361001) is errors.AclnnRuntimeError
    # 561105 has two symbols in acl_meta.h (a misspelling and its fix): one class, the fixed name
    assert errors.class_for_status(561105).__name__ == "AclnnInnerKeyConflictError"
    assert not hasattr(errors, "AclnnInnerKeyConfilictError")
    assert errors.from_status(561105, "api").name == "ACLNN_ERR_INNER_KEY_CONFLICT"


def test_every_status_class_is_found_where_its_module_says():
    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type):
            assert getattr(sys.modules[value.__module__], value.__name__) is value, name


@pytest.mark.parametrize("module", ["pyaclnn", "pyaclnn.acl", "pyaclnn.errors", "pyaclnn.dtypes"])
def test_public_modules_do_not_leak_the_future_import(module):
    assert "annotations" not in dir(importlib.import_module(module))


def test_help_of_the_package_stays_readable():
    text = pydoc.render_doc(pyaclnn, renderer=pydoc.plaintext)
    assert len(text.splitlines()) < 6000  # 27,000 lines when every status class was top-level


@pytest.mark.parametrize("dt,npdt,size", [
    (DType.FLOAT, np.float32, 4), (DType.FLOAT16, np.float16, 2), (DType.BF16, ml_dtypes.bfloat16, 2),
    (DType.INT64, np.int64, 8), (DType.INT32, np.int32, 4), (DType.BOOL, np.bool_, 1),
    (DType.DOUBLE, np.float64, 8), (DType.UINT8, np.uint8, 1)])
def test_dtype_round_trip(dt, npdt, size):
    assert to_numpy(dt) == np.dtype(npdt) and from_numpy(npdt) is dt and itemsize(dt) == size


def test_dtype_values_are_the_c_values_with_their_gaps():
    from pyaclnn._core.headers_path import constants
    c = constants()
    for dt in DType:
        assert c[dt.c_name] == dt.value
    assert DType.BF16 == 27 and DType.INT4 == 29 and 5 not in {d.value for d in DType}


def test_dtypes_without_numpy_equivalent_are_clear():
    with pytest.raises(pyaclnn.NotSupportedError, match="ACL_INT4"):
        to_numpy(DType.INT4)
    with pytest.raises(pyaclnn.NotSupportedError, match="<U3"):
        from_numpy(np.dtype("U3"))
