"""The shared op specs (pyaclnn._spec.*) against ops.md §1.2, §2.2, §3.2, §4.2.

Every rule: exception class, ``.status`` and a message naming the rule; plus rule order,
per-SoC dtype tables, the UT-confirmed cases quoted in ops.md, and the empty-tensor returns.
"""
from __future__ import annotations

import pytest

from pyaclnn.dtypes import DType
from pyaclnn.errors import (AclnnInnerNullptrError, AclnnInnerTilingError,
                            AclnnParamInvalidError, AclnnParamNullptrError)
from pyaclnn._spec import TensorMeta
from pyaclnn.ops.cross_entropy_loss_grad import spec as ce
from pyaclnn.ops.group_norm_backward import spec as gn
from pyaclnn.ops.mse_loss_backward import spec as mse
from pyaclnn.ops.prelu_backward import spec as prelu

F32, F16, BF16, I32, I64 = DType.FLOAT, DType.FLOAT16, DType.BF16, DType.INT32, DType.INT64
ALL_SOCS = ["Ascend910B", "Ascend910_93", "Ascend950", "Ascend910", "Ascend310P"]
BF16_SOCS = ["Ascend910B", "Ascend910_93", "Ascend950"]
NO_BF16_SOCS = ["Ascend910", "Ascend310P"]
NULL = (AclnnParamNullptrError, 161001)
INVALID = (AclnnParamInvalidError, 161002)
TILING = (AclnnInnerTilingError, 561002)
NINE_D = (1,) * 9


def T(*shape: int, dt: DType = F32) -> TensorMeta:
    return TensorMeta(tuple(shape), dt)


def expect(kind, fn, *fragments: str):
    cls, status = kind
    with pytest.raises(cls) as info:
        fn()
    err = info.value
    assert type(err) is cls and err.status == status
    for fragment in fragments:
        assert fragment in str(err), (fragment, str(err))
    return err


# ============================================================ 1. aclnnMseLossBackward

def mse_call(soc="Ascend910B", reduction=1, **kw):
    args = dict(grad_output=T(2, 3), self=T(2, 3), target=T(2, 3), out=T(2, 3))
    args.update(kw)
    return lambda: mse.check(soc, args["grad_output"], args["self"], args["target"], reduction,
                             args["out"])


@pytest.mark.parametrize("soc", ALL_SOCS)
def test_mse_valid(soc):
    assert mse.check(soc, T(2, 3), T(2, 3), T(2, 3), 1, T(2, 3)) is False


@pytest.mark.parametrize("missing", ["grad_output", "self", "target", "out"])
def test_mse_null(missing):
    name = {"grad_output": "gradOutput"}.get(missing, missing)
    expect(NULL, mse_call(**{missing: None}), f"{name} is nullptr")


def test_mse_null_order():
    expect(NULL, mse_call(grad_output=None, self=None, target=None, out=None), "gradOutput")
    expect(NULL, mse_call(target=None, out=None), "target is nullptr")


def test_mse_null_before_dtype():
    expect(NULL, mse_call(grad_output=T(2, 3, dt=F16), out=None), "out is nullptr")


@pytest.mark.parametrize("kw, message", [
    ({"grad_output": T(2, 3, dt=F16)}, "gradOutput dtype float16 != self dtype float32"),
    ({"target": T(2, 3, dt=F16)}, "target dtype float16 != self dtype float32"),
    ({"self": T(2, 3, dt=I32), "grad_output": T(2, 3, dt=I32), "target": T(2, 3, dt=I32)},
     "self dtype int32 not supported on Ascend910B"),
    ({"out": T(2, 3, dt=I64)}, "out dtype int64 not supported on Ascend910B"),
])
def test_mse_dtype(kw, message):
    expect(INVALID, mse_call(**kw), message)


def test_mse_dtype_order():
    # gradOutput==self is checked before target==self, which is before the support list
    expect(INVALID, mse_call(grad_output=T(2, 3, dt=F16), target=T(2, 3, dt=BF16)), "gradOutput")
    expect(INVALID, mse_call(soc="Ascend910", self=T(2, 3, dt=BF16), grad_output=T(2, 3, dt=BF16),
                             target=T(2, 3, dt=F16)), "target dtype float16 != self dtype bfloat16")


@pytest.mark.parametrize("soc", NO_BF16_SOCS)
def test_mse_bf16_rejected(soc):
    bf = T(2, 3, dt=BF16)
    expect(INVALID, mse_call(soc, grad_output=bf, self=bf, target=bf, out=bf),
           f"self dtype bfloat16 not supported on {soc} (supported: float32, float16)")
    expect(INVALID, mse_call(soc, out=bf), f"out dtype bfloat16 not supported on {soc}")


@pytest.mark.parametrize("soc", BF16_SOCS)
def test_mse_bf16_accepted(soc):
    bf = T(2, 3, dt=BF16)
    assert mse.check(soc, bf, bf, bf, 0, bf) is False


@pytest.mark.parametrize("inputs, out", [(F32, F16), (F16, F32), (BF16, F32)])
def test_mse_out_dtype_may_differ(inputs, out):
    x = T(2, 3, dt=inputs)
    assert mse.check("Ascend910B", x, x, x, 1, T(2, 3, dt=out)) is False


@pytest.mark.parametrize("reduction", [-1, 3, 100])
def test_mse_reduction(reduction):
    expect(INVALID, mse_call(reduction=reduction), f"reduction {reduction} not in [0, 2]")


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_mse_reduction_ok(reduction):
    assert mse_call(reduction=reduction)() is False


def test_mse_order_dtype_reduction_shape():
    expect(INVALID, mse_call(reduction=5, grad_output=T(2, 3, dt=F16)), "gradOutput dtype")
    expect(INVALID, mse_call(reduction=5, out=T(7, 7)), "reduction 5")


@pytest.mark.parametrize("which", ["grad_output", "self", "target"])
def test_mse_rank_9(which):
    name = {"grad_output": "gradOutput"}.get(which, which)
    expect(INVALID, mse_call(**{which: T(*NINE_D)}), f"{name} rank 9 > 8")


def test_mse_rank_8_ok_and_out_not_rank_checked_directly():
    eight = T(*(1,) * 8)
    assert mse.check("Ascend910B", eight, eight, eight, 1, eight) is False
    expect(INVALID, mse_call(out=T(*NINE_D)), "out shape")


def test_mse_rank_before_broadcast():
    expect(INVALID, mse_call(grad_output=T(5, 7), target=T(*NINE_D)), "target rank 9")


def test_mse_broadcast_grad_self():
    expect(INVALID, mse_call(grad_output=T(2, 4)),
           "gradOutput shape (2, 4) and self shape (2, 3) do not broadcast")


def test_mse_broadcast_target():
    expect(INVALID, mse_call(target=T(4, 3)), "target shape (4, 3) does not broadcast")


def test_mse_out_shape():
    err = expect(INVALID, lambda: mse.check("Ascend910B", T(2, 1), T(2, 2), T(2), 1, T(2, 3)),
                 "out shape (2, 3) != broadcast shape (2, 2)")
    assert "ACLNN_ERR_PARAM_INVALID" in str(err)


@pytest.mark.parametrize("g, s, t, o", [
    ((), (), (), ()),                       # 0-D allowed
    ((), (2, 3), (2, 3), (2, 3)),
    ((3,), (2, 1), (1,), (2, 3)),           # out is the broadcast of all three
    ((1, 3), (2, 1), (4, 1, 1), (4, 2, 3)),
])
def test_mse_broadcast_ok(g, s, t, o):
    assert mse.check("Ascend910B", T(*g), T(*s), T(*t), 1, T(*o)) is False
    assert mse.out_shape(g, s, t) == o


@pytest.mark.parametrize("g, s, t, o", [
    ((0, 3), (0, 3), (0, 3), (0, 3)),
    ((1, 3), (0, 3), (1, 3), (0, 3)),       # self empty
    ((0, 3), (1, 3), (1, 3), (0, 3)),       # gradOutput empty
    ((1, 3), (1, 3), (0, 1), (0, 3)),       # target empty
])
def test_mse_empty(g, s, t, o):
    assert mse.check("Ascend910B", T(*g), T(*s), T(*t), 1, T(*o)) is True


def test_mse_empty_still_shape_checked():
    expect(INVALID, lambda: mse.check("Ascend910B", T(0, 3), T(0, 3), T(0, 3), 1, T(3,)), "out shape")


def test_mse_out_shape_helper_fallback():
    assert mse.out_shape((2, 4), (2, 3), (2, 3)) == (2, 3)


# ============================================================ 2. aclnnGroupNormBackward

def gn_args(**kw):
    args = dict(grad_out=T(2, 4, 3), input=T(2, 4, 3), mean=T(2, 2), rstd=T(2, 2), gamma=T(4),
                N=2, C=4, HxW=3, group=2, output_mask=(True, True, True),
                grad_input=T(2, 4, 3), grad_gamma=T(4), grad_beta=T(4))
    args.update(kw)
    return args


def gn_call(soc="Ascend910B", **kw):
    args = gn_args(**kw)
    return lambda: gn.check(soc, **args)


@pytest.mark.parametrize("soc", ALL_SOCS)
def test_gn_valid(soc):
    assert gn_call(soc)() is False


@pytest.mark.parametrize("missing, name", [("grad_out", "gradOut"), ("input", "input"),
                                           ("mean", "mean"), ("rstd", "rstd")])
def test_gn_null(missing, name):
    expect(NULL, gn_call(**{missing: None}), f"{name} is nullptr")


def test_gn_null_order_and_gamma_optional():
    expect(NULL, gn_call(mean=None, rstd=None, output_mask=None), "mean is nullptr")
    assert gn_call(gamma=None)() is False


def test_gn_mask_null():
    # ops.md: outputMask == nullptr is 161002 (CheckMaskNotNull -> ACLNN_ERR_PARAM_INVALID)
    expect(INVALID, gn_call(output_mask=None), "outputMask is nullptr")


@pytest.mark.parametrize("mask", [(), (True, True), (True, True, True, True)])
def test_gn_mask_length(mask):
    expect(INVALID, gn_call(output_mask=mask), f"outputMask length {len(mask)} != 3")


@pytest.mark.parametrize("index, out, name", [(0, "grad_input", "gradInput"),
                                              (1, "grad_gamma", "gradGammaOut"),
                                              (2, "grad_beta", "gradBetaOut")])
def test_gn_mask_true_null_output_is_161002(index, out, name):
    # code wins over doc (doc says 161001)
    expect(INVALID, gn_call(**{out: None}), f"{name} is nullptr but its outputMask entry is true")
    mask = [True] * 3
    mask[index] = False
    assert gn_call(output_mask=tuple(mask), **{out: None})() is False


def test_gn_mask_before_dtype():
    expect(INVALID, gn_call(grad_beta=None, input=T(2, 4, 3, dt=F16)), "gradBetaOut is nullptr")


@pytest.mark.parametrize("soc", NO_BF16_SOCS)
def test_gn_bf16_rejected(soc):
    expect(INVALID, gn_call(soc, grad_out=T(2, 4, 3, dt=BF16)),
           f"gradOut dtype bfloat16 not supported on {soc} (supported: float32, float16)")


@pytest.mark.parametrize("soc", BF16_SOCS)
def test_gn_bf16_accepted(soc):
    b = lambda *s: T(*s, dt=BF16)  # noqa: E731
    assert gn_call(soc, grad_out=b(2, 4, 3), input=b(2, 4, 3), mean=b(2, 2), rstd=b(2, 2),
                   gamma=b(4), grad_input=b(2, 4, 3), grad_gamma=b(4), grad_beta=b(4))() is False


@pytest.mark.parametrize("soc", ["Ascend910B", "Ascend910"])
@pytest.mark.parametrize("field, name", [
    ("input", "input"), ("mean", "mean"), ("rstd", "rstd"), ("gamma", "gamma"),
    ("grad_input", "gradInput"), ("grad_gamma", "gradGammaOut"), ("grad_beta", "gradBetaOut")])
def test_gn_dtype_must_equal_gradout_non_950(soc, field, name):
    shape = gn_args()[field].shape
    expect(INVALID, gn_call(soc, **{field: T(*shape, dt=F16)}),
           f"{name} dtype float16 != gradOut dtype float32")


def test_gn_masked_off_output_dtype_not_checked():
    assert gn_call(output_mask=(True, False, True), grad_gamma=T(4, dt=I32))() is False


def test_gn_dtype_order_non_950():
    expect(INVALID, gn_call(rstd=T(2, 2, dt=F16), gamma=T(4, dt=F16)), "rstd dtype")
    expect(INVALID, gn_call(grad_out=T(2, 4, 3, dt=I32), input=T(2, 4, 3, dt=F16)),
           "gradOut dtype int32 not supported")


def test_gn_no_mixed_precision_outside_950():
    h = lambda *s: T(*s, dt=F16)  # noqa: E731
    expect(INVALID, gn_call(grad_out=h(2, 4, 3), input=h(2, 4, 3), grad_input=h(2, 4, 3)),
           "mean dtype float32 != gradOut dtype float16")


@pytest.mark.parametrize("x, stats", [(F16, F32), (BF16, F32), (F16, F16), (BF16, BF16), (F32, F32)])
def test_gn_950_mixed_precision_ok(x, stats):
    assert gn_call("Ascend950", grad_out=T(2, 4, 3, dt=x), input=T(2, 4, 3, dt=x),
                   grad_input=T(2, 4, 3, dt=x), mean=T(2, 2, dt=stats), rstd=T(2, 2, dt=stats),
                   gamma=T(4, dt=stats), grad_gamma=T(4, dt=stats),
                   grad_beta=T(4, dt=stats))() is False


def _gn950(x=F16, stats=F32, **kw):
    args = dict(grad_out=T(2, 4, 3, dt=x), input=T(2, 4, 3, dt=x), grad_input=T(2, 4, 3, dt=x),
                mean=T(2, 2, dt=stats), rstd=T(2, 2, dt=stats), gamma=T(4, dt=stats),
                grad_gamma=T(4, dt=stats), grad_beta=T(4, dt=stats))
    args.update(kw)
    return gn_call("Ascend950", **args)


@pytest.mark.parametrize("call, message", [
    (_gn950(mean=T(2, 2, dt=I32)), "mean dtype int32 not supported on Ascend950"),
    (_gn950(input=T(2, 4, 3, dt=F32)), "input dtype float32 != gradOut dtype float16"),
    (_gn950(grad_input=T(2, 4, 3, dt=F32)), "gradInput dtype float32 != gradOut dtype float16"),
    (_gn950(x=F32, stats=F16), "mean dtype float16 != gradOut dtype float32"),
    (_gn950(x=F16, stats=BF16), "mean dtype bfloat16 not supported with gradOut dtype float16"),
    (_gn950(x=BF16, stats=F16), "mean dtype float16 not supported with gradOut dtype bfloat16"),
    (_gn950(rstd=T(2, 2, dt=F16)), "rstd dtype float16 != mean dtype float32"),
    (_gn950(gamma=T(4, dt=F16)), "gamma dtype float16 != mean dtype float32"),
    (_gn950(grad_gamma=T(4, dt=F16)), "gradGammaOut dtype float16 != mean dtype float32"),
    (_gn950(grad_beta=T(4, dt=F16)), "gradBetaOut dtype float16 != mean dtype float32"),
])
def test_gn_950_dtype_rules(call, message):
    expect(INVALID, call, message)


def test_gn_950_dtype_order():
    # mean's support list comes before input == gradOut
    expect(INVALID, _gn950(mean=T(2, 2, dt=I32), input=T(2, 4, 3, dt=F32)), "mean dtype int32")


@pytest.mark.parametrize("group", [0, -2])
def test_gn_group_positive(group):
    expect(INVALID, gn_call(group=group), f"group must be > 0, got {group}")


def test_gn_c_divisible():
    expect(INVALID, gn_call(group=3), "C 4 is not divisible by group 3")


def _big_c(C, group, N=1, HxW=1):
    return dict(N=N, C=C, HxW=HxW, group=group, grad_out=T(N, C, HxW), input=T(N, C, HxW),
                grad_input=T(N, C, HxW), mean=T(N, group), rstd=T(N, group), gamma=T(C),
                grad_gamma=T(C), grad_beta=T(C))


@pytest.mark.parametrize("soc", ["Ascend910B", "Ascend910_93"])
def test_gn_a2a3_limits(soc):
    expect(INVALID, gn_call(soc, **_big_c(8001, 1)), f"C / group = 8001 > 8000 (limit on {soc})")
    expect(INVALID, gn_call(soc, **_big_c(240040, 40)), f"C 240040 > 240000 (limit on {soc})")
    assert gn_call(soc, **_big_c(8000, 1))() is False
    assert gn_call(soc, **_big_c(240000, 30))() is False


@pytest.mark.parametrize("soc", ["Ascend910", "Ascend950", "Ascend310P"])
def test_gn_limits_only_on_a2a3(soc):
    assert gn_call(soc, **_big_c(8001, 1))() is False
    assert gn_call(soc, **_big_c(240040, 40))() is False


def test_gn_limit_order():
    # C/group is checked before C; attributes before shapes
    expect(INVALID, gn_call(**_big_c(240001, 1)), "C / group = 240001")
    expect(INVALID, gn_call(group=3, grad_out=T(5)), "not divisible")


def test_gn_dtype_before_attrs():
    expect(INVALID, gn_call(group=0, input=T(2, 4, 3, dt=F16)), "input dtype float16")


def test_gn_rank_9_only_gradout():
    expect(INVALID, gn_call(grad_out=T(2, 4, 3, *(1,) * 6)), "gradOut rank 9 > 8")
    nine = T(2, 4, 3, *(1,) * 6)
    assert gn_call(input=nine, grad_input=nine)() is False   # input is not rank-checked


def test_gn_ut_confirmed_shapes():
    assert gn_call(grad_out=T(24))() is False                              # 1-D gradOut
    assert gn_call(input=T(2, 4, 3, 1, 1), grad_input=T(2, 4, 3, 1, 1),   # (N,C,HxW,1,1)
                   gamma=T(1, 4), grad_gamma=T(1, 4), grad_beta=T(1, 4))() is False


@pytest.mark.parametrize("field, shape, message", [
    ("grad_out", (2, 4, 4), "gradOut numel 32 != N*C*HxW = 24"),
    ("input", (25,), "input numel 25 != N*C*HxW = 24"),
    ("mean", (2, 3), "mean numel 6 != N*group = 4"),
    ("rstd", (4, 2), "rstd numel 8 != N*group = 4"),
    ("gamma", (5,), "gamma numel 5 != C = 4"),
    ("grad_input", (24,), "gradInput shape (24,) != input shape (2, 4, 3)"),
    ("grad_gamma", (1, 4), "gradGammaOut shape (1, 4) != gamma shape (4,)"),
    ("grad_beta", (2, 2), "gradBetaOut shape (2, 2) != gamma shape (4,)"),
])
def test_gn_shape_rules(field, shape, message):
    expect(INVALID, gn_call(**{field: T(*shape)}), message)


def test_gn_any_mean_shape_with_right_numel():
    assert gn_call(mean=T(4), rstd=T(1, 4, 1))() is False


def test_gn_grad_gamma_shape_when_gamma_null():
    expect(INVALID, gn_call(gamma=None, grad_gamma=T(1, 4)), "gradGammaOut shape (1, 4) != (C,) (4,)")
    assert gn_call(gamma=None, grad_gamma=T(4), grad_beta=T(4))() is False


def test_gn_shape_order():
    expect(INVALID, gn_call(grad_out=T(3), mean=T(3)), "gradOut numel")
    expect(INVALID, gn_call(rstd=T(3), gamma=T(3)), "rstd numel")
    expect(INVALID, gn_call(grad_input=T(24), grad_beta=T(3)), "gradInput shape")


def test_gn_masked_off_output_shape_not_checked():
    assert gn_call(output_mask=(False, True, True), grad_input=T(7))() is False


def _gn_empty(soc, **kw):
    args = dict(N=0, grad_out=T(0, 4, 3), input=T(0, 4, 3), mean=T(0, 2), rstd=T(0, 2),
                grad_input=T(0, 4, 3))
    args.update(kw)
    return gn_call(soc, **args)


@pytest.mark.parametrize("soc", ["Ascend910B", "Ascend910_93", "Ascend910", "Ascend310P"])
def test_gn_empty_non_950(soc):
    assert _gn_empty(soc)() is True
    assert _gn_empty(soc, output_mask=(True, False, False), grad_gamma=None, grad_beta=None)() is True
    assert gn.empty_zero_fills(soc, T(0, 4, 3), T(0, 4, 3), T(0, 2), T(0, 2), T(4)) is False


def test_gn_empty_hxw_zero():
    assert gn_call(HxW=0, grad_out=T(2, 4, 0), input=T(2, 4, 0), grad_input=T(2, 4, 0))() is True


def test_gn_empty_950_zero_fills():
    assert _gn_empty("Ascend950")() is True
    assert gn.empty_zero_fills("Ascend950", T(0, 4, 3), T(0, 4, 3), T(0, 2), T(0, 2), T(4)) is True
    assert gn.empty_zero_fills("Ascend950", T(0, 4, 3), T(0, 4, 3), T(0, 2), T(0, 2), None, 4)
    assert not gn.empty_zero_fills("Ascend950", T(2, 4, 3), T(2, 4, 3), T(2, 2), T(2, 2), T(4))


def test_gn_empty_950_writes_outputs_regardless_of_mask():
    # dgamma/dbeta are ViewCopied even when masked off: a null one fails inside (561103, inferred)
    err = expect((AclnnInnerNullptrError, 561103),
                 _gn_empty("Ascend950", output_mask=(True, False, True), grad_gamma=None),
                 "gradGammaOut is nullptr")
    assert "regardless of outputMask" in str(err)
    assert _gn_empty("Ascend950", output_mask=(True, False, False))() is True


def test_gn_empty_950_c_zero_no_work():
    args = dict(C=0, gamma=T(0), grad_gamma=None, grad_beta=None, output_mask=(True, False, False),
                grad_out=T(2, 0, 3), input=T(2, 0, 3), grad_input=T(2, 0, 3), N=2,
                mean=T(2, 2), rstd=T(2, 2))
    assert gn_call("Ascend950", **args)() is True
    assert gn.empty_zero_fills("Ascend950", T(2, 0, 3), T(2, 0, 3), T(2, 2), T(2, 2), T(0)) is False


def test_gn_empty_still_validated():
    expect(INVALID, _gn_empty("Ascend910B", mean=T(1)), "mean numel 1 != N*group = 0")


def test_gn_negative_dims_refused():
    # C<0 and HxW<0 pass every library check (no sign checks); pyaclnn refuses
    call = gn_call(C=-4, HxW=-3, gamma=None, output_mask=(True, False, False), grad_gamma=None,
                   grad_beta=None)
    expect(INVALID, call, "pyaclnn refuses negative N/C/HxW")


def test_gn_int64_products_wrap():
    n = c = 2**32   # N*C*HxW wraps to 0 in int64
    call = gn_call(N=n, C=c, HxW=1, group=1, grad_out=T(0), input=T(0), grad_input=T(0),
                   mean=T(n), rstd=T(n), gamma=None, grad_gamma=T(c), grad_beta=T(c),
                   soc="Ascend910")
    assert call() is True


def test_gn_output_shapes():
    assert gn.output_shapes((2, 4, 3), (1, 4), 4) == ((2, 4, 3), (1, 4), (1, 4))
    assert gn.output_shapes((2, 4, 3), None, 4) == ((2, 4, 3), (4,), (4,))


# ============================================================ 3. aclnnCrossEntropyLossGrad

def ce_args(**kw):
    args = dict(grad_loss=T(), log_prob=T(4, 5), target=T(4, dt=I64), weight=T(5),
                grad_zloss=None, lse_for_zloss=None, reduction="mean", ignore_index=-100,
                label_smoothing=0.0, lse_square_scale_for_zloss=0.0, out=T(4, 5))
    args.update(kw)
    return args


def ce_call(soc="Ascend910B", **kw):
    args = ce_args(**kw)
    return lambda: ce.check(soc, **args)


@pytest.mark.parametrize("soc", BF16_SOCS)
@pytest.mark.parametrize("dt", [F32, F16, BF16])
def test_ce_valid(soc, dt):
    assert ce_call(soc, grad_loss=T(dt=dt), log_prob=T(4, 5, dt=dt), out=T(4, 5, dt=dt))() is False


@pytest.mark.parametrize("soc", BF16_SOCS)
def test_ce_optionals_may_be_null_and_zloss_ignored(soc):
    assert ce_call(soc, weight=None, reduction=None)() is False
    assert ce_call(soc, grad_zloss=T(4), lse_for_zloss=T(4), lse_square_scale_for_zloss=5.0)() is False


@pytest.mark.parametrize("missing, name", [("grad_loss", "gradLoss"), ("log_prob", "logProb"),
                                           ("target", "target"), ("out", "out")])
def test_ce_null(missing, name):
    expect(NULL, ce_call(**{missing: None}), f"{name} is nullptr")


def test_ce_null_order():
    expect(NULL, ce_call(log_prob=None, out=None), "logProb is nullptr")


@pytest.mark.parametrize("soc", NO_BF16_SOCS)
def test_ce_unsupported_soc(soc):
    expect(NULL, ce_call(soc), f"no CrossEntropyLossGrad kernel on {soc}")
    expect(NULL, ce_call(soc, grad_loss=None), "gradLoss is nullptr")   # null checks come first


@pytest.mark.parametrize("kw, message", [
    ({"grad_loss": T(dt=I32)}, "gradLoss dtype int32 not supported on Ascend910B"),
    ({"log_prob": T(4, 5, dt=F16)}, "logProb dtype float16 != gradLoss dtype float32"),
    ({"target": T(4, dt=I32)}, "target dtype int32 not supported on Ascend910B (supported: int64)"),
    ({"target": T(4, dt=F32)}, "target dtype float32 not supported"),
    ({"weight": T(5, dt=F16)}, "weight dtype float16 not supported on Ascend910B (supported: float32)"),
    ({"grad_zloss": T(4, dt=F16)}, "gradZlossOptional dtype float16 != gradLoss dtype float32"),
    ({"lse_for_zloss": T(4, dt=BF16)}, "lseForZlossOptional dtype bfloat16 != gradLoss"),
    ({"out": T(4, 5, dt=F16)}, "out dtype float16 != gradLoss dtype float32"),
])
def test_ce_dtype(kw, message):
    expect(INVALID, ce_call(**kw), message)


def test_ce_weight_fp32_even_for_half_logits():
    h = dict(grad_loss=T(dt=F16), log_prob=T(4, 5, dt=F16), out=T(4, 5, dt=F16))
    assert ce_call(weight=T(5), **h)() is False
    expect(INVALID, ce_call(weight=T(5, dt=F16), **h), "weight dtype float16")


def test_ce_int32_target_only_on_950():
    assert ce_call("Ascend950", target=T(4, dt=I32))() is False
    expect(INVALID, ce_call("Ascend910_93", target=T(4, dt=I32)), "target dtype int32")


def test_ce_dtype_before_tiling():
    expect(INVALID, ce_call(target=T(3, dt=I32)), "target dtype int32")
    expect(INVALID, ce_call("Ascend950", reduction="bogus", out=T(4, 5, dt=F16)), "out dtype")


@pytest.mark.parametrize("soc", ["Ascend910B", "Ascend910_93"])
@pytest.mark.parametrize("kw, message", [
    ({"target": T(3, dt=I64)}, "target dim 0 3 != logProb dim 0 4"),
    ({"weight": T(6)}, "weight dim 0 6 != logProb dim 1 5"),
    ({"weight": T()}, "weight dim 0 missing != logProb dim 1 5"),
    ({"target": T(dt=I64)}, "target dim 0 missing"),                        # 0-D target
    ({"log_prob": T(), "target": T(dt=I64), "out": T()}, "logProb dim 0 missing"),   # both 0-D
    ({"log_prob": T(4), "out": T(4), "weight": None}, "has no dim 1 (C)"),
    ({"log_prob": T(4), "out": T(4)}, "weight dim 0 5 != logProb dim 1 missing"),
])
def test_ce_a2a3_tiling(soc, kw, message):
    expect(TILING, ce_call(soc, **kw), message)


def test_ce_a2a3_unknown_reduction_acts_as_none():
    assert ce.effective_reduction("Ascend910B", "bogus") == "none"
    assert ce.effective_reduction("Ascend910B", "Mean") == "none"    # strcmp is case-sensitive
    assert ce_call(reduction="bogus", grad_loss=T(4))() is False
    expect(INVALID, ce_call(reduction="bogus", grad_loss=T()), "gradLoss numel 1 != N = 4")


@pytest.mark.parametrize("soc", ALL_SOCS)
def test_ce_effective_reduction(soc):
    assert ce.effective_reduction(soc, None) == "mean"
    for r in ("none", "mean", "sum"):
        assert ce.effective_reduction(soc, r) == r


@pytest.mark.parametrize("kw, message", [
    ({"log_prob": T(4, 5, 2), "out": T(4, 5, 2)}, "logProb must be 2-D (N, C), got (4, 5, 2)"),
    ({"target": T(4, 1, dt=I64)}, "target must be 1-D (4,), got (4, 1)"),
    ({"weight": T(5, 1)}, "weight must be 1-D (5,), got (5, 1)"),
    ({"reduction": "none", "grad_loss": T(3)}, "gradLoss numel 3 != N = 4"),
    ({"reduction": "sum", "grad_loss": T(0)}, "gradLoss is empty"),
    ({"out": T(4, 6)}, "out shape (4, 6) != logProb shape (4, 5)"),
    ({"out": T(20)}, "out shape (20,) != logProb shape (4, 5)"),
])
def test_ce_a2a3_undefined_shapes_refused(kw, message):
    err = expect(INVALID, ce_call(**kw), message)
    assert "pyaclnn refuses" in str(err)


@pytest.mark.parametrize("kw", [{"grad_loss": T(1)}, {"grad_loss": T(1, 1)}, {"grad_loss": T(4)}])
def test_ce_a2a3_grad_loss_shapes_read_element_0(kw):
    assert ce_call(**kw)() is False


@pytest.mark.parametrize("soc", ["Ascend910B", "Ascend910_93"])
@pytest.mark.parametrize("ls", [0.1, -0.5, 1.0, float("nan")])
def test_ce_label_smoothing_refused_on_a2a3(soc, ls):
    err = expect(INVALID, ce_call(soc, label_smoothing=ls),
                 f"labelSmoothing {ls} != 0 is not implemented on {soc}", "garbage or hangs")
    assert "pyaclnn refuses" in str(err)


def test_ce_label_smoothing_narrowed_to_float():
    assert ce_call(label_smoothing=1e-50)() is False   # 0.0f on the device


@pytest.mark.parametrize("ls", [0.0, 0.3, 1.0])
def test_ce_950_label_smoothing_ok(ls):
    assert ce_call("Ascend950", label_smoothing=ls)() is False


@pytest.mark.parametrize("kw, message", [
    ({"reduction": "bogus"}, "reduction 'bogus' is not one of none, mean, sum"),
    ({"reduction": "Mean"}, "reduction 'Mean'"),
    ({"label_smoothing": 1.5}, "labelSmoothing 1.5 not in [0, 1]"),
    ({"label_smoothing": -0.1}, "labelSmoothing -0.1 not in [0, 1]"),
    ({"label_smoothing": float("nan")}, "labelSmoothing nan not in [0, 1]"),
    ({"log_prob": T(4, 5, 1), "out": T(4, 5, 1)}, "logProb must be 2-D, got shape (4, 5, 1)"),
    ({"log_prob": T(), "out": T()}, "logProb must be 2-D, got shape ()"),
    ({"log_prob": T(20), "out": T(20)}, "logProb must be 2-D"),
    ({"reduction": "none", "grad_loss": T()}, "gradLoss shape () must be (N,) = (4,)"),
    ({"reduction": "none", "grad_loss": T(4, 1)}, "gradLoss shape (4, 1) must be (N,)"),
    ({"reduction": "mean", "grad_loss": T(4)}, "gradLoss shape (4,) must be () or (1,)"),
    ({"reduction": "sum", "grad_loss": T(1, 1)}, "gradLoss shape (1, 1) must be () or (1,)"),
    ({"target": T(4, 1, dt=I64)}, "target shape (4, 1) must be (N,) = (4,)"),
    ({"target": T(3, dt=I64)}, "target shape (3,) must be (N,) = (4,)"),
    ({"weight": T(5, 1)}, "weight shape (5, 1) must be (C,) = (5,)"),
    ({"weight": T(6)}, "weight shape (6,) must be (C,) = (5,)"),
])
def test_ce_950_tiling(kw, message):
    expect(TILING, ce_call("Ascend950", **kw), message)


def test_ce_950_tiling_order():
    # attributes (reduction, then labelSmoothing) before shapes
    expect(TILING, ce_call("Ascend950", reduction="x", label_smoothing=2.0, log_prob=T(4)), "reduction")
    expect(TILING, ce_call("Ascend950", label_smoothing=2.0, log_prob=T(4)), "labelSmoothing")
    expect(TILING, ce_call("Ascend950", log_prob=T(4, 5, 1), target=T(3, dt=I64)), "logProb")
    expect(TILING, ce_call("Ascend950", grad_loss=T(2), target=T(3, dt=I64)), "gradLoss")
    expect(TILING, ce_call("Ascend950", target=T(3, dt=I64), weight=T(6)), "target")


def test_ce_950_effective_reduction_rejects_unknown():
    expect(TILING, lambda: ce.effective_reduction("Ascend950", "bogus"), "reduction 'bogus'")


def test_ce_950_scalars_read_as_one_element():
    one = dict(log_prob=T(1, 5), out=T(1, 5), target=T(dt=I64))
    assert ce_call("Ascend950", reduction="none", grad_loss=T(), **one)() is False
    assert ce_call("Ascend950", reduction="mean", grad_loss=T(1), **one)() is False


def test_ce_950_out_shape_refused():
    err = expect(INVALID, ce_call("Ascend950", out=T(5, 4)), "out shape (5, 4) != logProb shape")
    assert "pyaclnn refuses" in str(err)


@pytest.mark.parametrize("soc", BF16_SOCS)
@pytest.mark.parametrize("n, c", [(0, 5), (4, 0), (0, 0)])
def test_ce_empty(soc, n, c):
    assert ce_call(soc, log_prob=T(n, c), out=T(n, c), target=T(n, dt=I64), weight=T(c))() is True


# ============================================================ 4. aclnnPreluBackward

def pr_args(**kw):
    args = dict(grad_output=T(2, 3, 4), self=T(2, 3, 4), weight=T(3), grad_input=T(2, 3, 4),
                grad_weight=T(3))
    args.update(kw)
    return args


def pr_call(soc="Ascend910B", **kw):
    args = pr_args(**kw)
    return lambda: prelu.check(soc, **args)


@pytest.mark.parametrize("soc", ALL_SOCS)
def test_prelu_valid(soc):
    assert pr_call(soc)() is False


@pytest.mark.parametrize("missing, name", [
    ("grad_output", "gradOutput"), ("self", "self"), ("weight", "weight"),
    ("grad_input", "gradInput"), ("grad_weight", "gradWeight")])
def test_prelu_null(missing, name):
    expect(NULL, pr_call(**{missing: None}), f"{name} is nullptr")


def test_prelu_null_order():
    expect(NULL, pr_call(weight=None, grad_input=None, grad_weight=None), "weight is nullptr")


@pytest.mark.parametrize("soc", NO_BF16_SOCS)
def test_prelu_bf16_rejected(soc):
    b = lambda *s: T(*s, dt=BF16)  # noqa: E731
    expect(INVALID, pr_call(soc, grad_output=b(2, 3, 4), self=b(2, 3, 4), weight=b(3),
                            grad_input=b(2, 3, 4), grad_weight=b(3)),
           f"self dtype bfloat16 not supported on {soc} (supported: float32, float16)")


@pytest.mark.parametrize("soc", BF16_SOCS)
def test_prelu_bf16_accepted(soc):
    b = lambda *s: T(*s, dt=BF16)  # noqa: E731
    assert pr_call(soc, grad_output=b(2, 3, 4), self=b(2, 3, 4), weight=b(3),
                   grad_input=b(2, 3, 4), grad_weight=b(3))() is False


@pytest.mark.parametrize("field, name", [
    ("grad_output", "gradOutput"), ("weight", "weight"), ("grad_input", "gradInput"),
    ("grad_weight", "gradWeight")])
def test_prelu_dtype_equals_self(field, name):
    shape = pr_args()[field].shape
    expect(INVALID, pr_call(**{field: T(*shape, dt=F16)}), f"{name} dtype float16 != self dtype float32")


def test_prelu_dtype_order():
    i = lambda *s: T(*s, dt=I32)  # noqa: E731
    expect(INVALID, pr_call(self=i(2, 3, 4), grad_output=T(2, 3, 4, dt=F16)),
           "self dtype int32 not supported")
    expect(INVALID, pr_call(grad_output=T(2, 3, 4, dt=F16), weight=T(3, dt=F16)), "gradOutput dtype")


def test_prelu_dtype_before_shape():
    expect(INVALID, pr_call(weight=T(7, dt=F16)), "weight dtype float16")


@pytest.mark.parametrize("field, name", [
    ("grad_output", "gradOutput"), ("self", "self"), ("weight", "weight"),
    ("grad_input", "gradInput"), ("grad_weight", "gradWeight")])
def test_prelu_rank_9(field, name):
    expect(INVALID, pr_call(**{field: T(*NINE_D)}), f"{name} rank 9 > 8")


def test_prelu_grad_input_shape():
    expect(INVALID, pr_call(grad_input=T(2, 3, 5)), "gradInput shape (2, 3, 5) != self shape (2, 3, 4)")


def test_prelu_weight_numel_vs_channels():
    expect(INVALID, pr_call(weight=T(4), grad_weight=T(4)),
           "weight numel 4 (shape (4,)) != channels 3 (dim 1 of self (2, 3, 4))")


def test_prelu_grad_weight_shape():
    expect(INVALID, pr_call(grad_weight=T(3, 1)), "gradWeight shape (3, 1) != expected shape (C,) (3,)")


def test_prelu_grad_output_broadcasts_only_to_self():
    assert pr_call(grad_output=T(3, 1))() is False
    assert pr_call(grad_output=T())() is False
    expect(INVALID, pr_call(grad_output=T(2, 3, 5)),
           "gradOutput shape (2, 3, 5) does not broadcast to self shape (2, 3, 4)")
    expect(INVALID, pr_call(grad_output=T(1, 2, 3, 4)), "does not broadcast to self")


def test_prelu_shape_order():
    expect(INVALID, pr_call(grad_input=T(1), weight=T(4)), "gradInput shape")
    expect(INVALID, pr_call(weight=T(4), grad_output=T(9)), "weight numel 4")
    expect(INVALID, pr_call(grad_weight=T(2), grad_output=T(9)), "gradWeight shape")


# UT-confirmed cases quoted in ops.md §4.2
def test_prelu_ut_weight_2x2_with_c4():
    assert pr_call(self=T(2, 4, 3), grad_output=T(2, 4, 3), grad_input=T(2, 4, 3),
                   weight=T(2, 2), grad_weight=T(4))() is False


def test_prelu_ut_weight_1x1_needs_grad_weight_1x1():
    expect(INVALID, pr_call(weight=T(1, 1), grad_weight=T(1)), "gradWeight shape (1,) != weight shape (1, 1)")
    assert pr_call(weight=T(1, 1), grad_weight=T(1, 1))() is False


def test_prelu_ut_weight_empty():
    expect(INVALID, pr_call(weight=T(0), grad_weight=T(0)), "weight numel 0")


def test_prelu_ut_empty_self_with_bigger_grad_output():
    assert pr_call(self=T(0, 2, 3, 2), grad_output=T(1, 2, 3, 2), grad_input=T(0, 2, 3, 2),
                   weight=T(2), grad_weight=T(2))() is True


def test_prelu_ut_grad_output_bigger_than_self():
    expect(INVALID, pr_call(self=T(1, 2, 3, 2), grad_output=T(2, 2, 3, 2), grad_input=T(1, 2, 3, 2),
                            weight=T(2), grad_weight=T(2)), "does not broadcast to self")


def test_prelu_low_rank_self():
    scalar = dict(self=T(), grad_output=T(), grad_input=T())
    assert pr_call(weight=T(1), grad_weight=T(1), **scalar)() is False
    expect(INVALID, pr_call(weight=T(3), grad_weight=T(3), **scalar), "self is 0-D")
    vec = dict(self=T(5), grad_output=T(5), grad_input=T(5))
    assert pr_call(weight=T(), grad_weight=T(), **vec)() is False
    expect(INVALID, pr_call(weight=T(5), grad_weight=T(5), **vec), "channels 1")


@pytest.mark.parametrize("kw", [
    dict(self=T(2, 0, 3), grad_output=T(1, 0, 3), grad_input=T(2, 0, 3), weight=T(0), grad_weight=T(0)),
    dict(self=T(0, 3, 4), grad_output=T(0, 3, 4), grad_input=T(0, 3, 4)),
])
def test_prelu_empty(kw):
    assert pr_call(**kw)() is True


def test_prelu_helpers():
    assert prelu.channels(T(2, 3, 4), T(3)) == 3
    assert prelu.channels((2, 3, 4), (1,)) == 1
    assert prelu.channels((5,), (5,)) == 1
    assert prelu.output_shapes((2, 4, 3), (2, 2)) == ((2, 4, 3), (4,))
    assert prelu.output_shapes((2, 4, 3), (1, 1)) == ((2, 4, 3), (1, 1))
