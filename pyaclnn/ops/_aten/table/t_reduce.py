"""Reductions, scans, list reductions, global pools, batch statistics and bin counts of the
ops-math tensor list (issue 24 expansion).

Dtypes from each operator's op_api source (hicann/ops-math <dir>/op_api/aclnn_<name>.cpp,
its ASCEND910B list; bf16 through SOCS_BF16); semantics from its docs/aclnn<Name>.md.
Compositions (``compose:tensor.*``) are in compose/tensor.py.
"""
from __future__ import annotations

from ._entry import ALL, COMPLEX_, FLOATS64, INTS, D, E, OutDtype, OutShape

F = "compose:tensor."

ENTRIES = [
    E("Aminmax", F + "aminmax_dims", "self dim keepDim minOut maxOut", ("self", "dim", "keepDim"),
      out="minOut maxOut", dtypes=ALL, notes="amin and amax over the dims"),
    E("InplaceCumprod", "aten::cumprod.default", "input dim", ("input", "dim"), out="input",
      dtypes=FLOATS64 + INTS),
    E("CumsumV2", F + "cumsum_v2", "self dim exclusive reverse out", ("self", "dim", "exclusive", "reverse"),
      dtypes=FLOATS64 + INTS + COMPLEX_),
    E("MeanV2", F + "mean_v2", "self dim keepDim noopWithEmptyAxes out",
      ("self", "dim", "keepDim", "noopWithEmptyAxes", OutDtype("out")), dtypes=FLOATS64 + COMPLEX_,
      notes="integer inputs (the device's too) refused: aten's mean takes floating or complex only"),
    E("MaxN", F + "max_n", "tensors out", ("tensors",), dtypes=(D.FLOAT16, D.FLOAT, D.INT8, D.INT32, D.INT64, D.BF16)),
    E("MinN", F + "min_n", "tensors out", ("tensors",), dtypes=(D.FLOAT16, D.FLOAT, D.INT8, D.INT32, D.INT64, D.BF16)),
    E("Sum", F + "sum_n", "tensors out", ("tensors",), dtypes=(D.FLOAT16, D.FLOAT, D.INT8, D.INT32, D.UINT8)),
    E("SumV2", F + "sum_n", "tensors out", ("tensors",), dtypes=(D.FLOAT16, D.FLOAT, D.INT8, D.INT32, D.UINT8),
      notes="as aclnnSum (no op_api source found for SumV2; the dtypes are Sum's)"),
    E("GlobalAveragePool", F + "global_average_pool", "self out", ("self",), dtypes=FLOATS64),
    E("GlobalMaxPool", F + "global_max_pool", "self out", ("self",), dtypes=(D.FLOAT, D.FLOAT16, D.DOUBLE)),
    E("BatchNormStats", F + "batch_norm_stats", "input eps mean invstd", ("input", "eps"), out="mean invstd",
      dtypes=(D.FLOAT, D.FLOAT16)),
    E("Bincount", F + "bincount", "self weights minlength out", ("self", "weights", "minlength", OutShape("out")),
      nullable="weights", dtypes={"self": INTS, "weights": (D.FLOAT, D.FLOAT16, D.DOUBLE) + INTS + (D.BOOL,)},
      out_dtypes=(D.FLOAT, D.DOUBLE, D.INT32, D.INT64),
      notes="out's length is the bins' count (the caller's max(self) + 1, or minlength); a negative self is "
            "refused when the kernel runs (it is data), not at phase 1"),
]
