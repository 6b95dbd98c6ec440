"""Linear algebra whose results are unique (no sign or order freedom: QR and SVD are left out,
LAPACK and the device may choose other signs)."""
from __future__ import annotations

from ._entry import E
from ....dtypes import DType

_F = (DType.FLOAT, DType.DOUBLE)

ENTRIES = [
    E("Inverse", "aten::inverse.default", "self out", ("self",), dtypes=_F + (DType.FLOAT16,)),
    E("Logdet", "aten::logdet.default", "self out", ("self",), dtypes=_F),
    E("Slogdet", "aten::slogdet.default", "self signOut logOut", ("self",), out="signOut logOut", dtypes=_F),
    E("LinalgCholesky", "compose:base.cholesky", "self upper out", ("self", "upper"),
      dtypes=(DType.FLOAT, DType.BF16, DType.FLOAT16), dtypes_v1=(), same_dtype="self out",
      traced="math/cholesky/op_api/aclnn_linalg_cholesky.cpp",
      notes="float16 and bf16 factored in float32; only Ascend910B/910_93/950 have it (elsewhere every dtype is "
            "refused); float64 is not in its list"),
    E("TriangularSolve", "aten::triangular_solve.default", "self A upper transpose unitriangular xOut mOut",
      ("self", "A", "upper", "transpose", "unitriangular"), out="xOut mOut", dtypes=_F,
      notes="solves A x = self; mOut is A's copy"),
    E("Renorm", "aten::renorm.default", "self p dim maxNorm out", ("self", "p", "dim", "maxNorm")),
    E("InplaceRenorm", "aten::renorm.default", "selfRef p dim maxNorm", ("selfRef", "p", "dim", "maxNorm")),
]
