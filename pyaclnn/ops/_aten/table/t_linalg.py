"""Linear algebra of the ops-math tensor list (issue 24 expansion): QR and singular value
decompositions, affine grids, Sinkhorn's optimal transport.

Dtypes from each operator's op_api source (hicann/ops-math math/<dir>/op_api/aclnn_<name>.cpp,
its ASCEND910B list; bf16 through SOCS_BF16); semantics from its docs/aclnn<Name>.md.
Compositions (``compose:tensor.*``) are in compose/tensor.py.
"""
from __future__ import annotations

from ._entry import COMPLEX_, Call, D, E, Enum, OutShape

F = "compose:tensor."
_LAPACK = (D.FLOAT, D.DOUBLE) + COMPLEX_  # aclnn_slogdet.cpp, aclnn_logdet.cpp, aclnn_svd.cpp, triangular_solve

ENTRIES = [
    E("LinalgQr", F + "qr", "self mode Q R", ("self", Enum("mode", ("reduced", "complete", "r"))), out="Q R",
      dtypes=(D.FLOAT, D.FLOAT16, D.DOUBLE) + COMPLEX_, notes="fp16 factored in fp32; mode 2 (r): Q empty"),
    E("Qr", F + "qr", "self some Q R", ("self", Call("some", lambda some: "reduced" if some else "complete")),
      out="Q R", dtypes=(D.FLOAT, D.FLOAT16, D.DOUBLE) + COMPLEX_,
      notes="some: reduced, else complete; fp16 factored in fp32"),
    E("Svd", F + "svd", "input fullMatrices computeUV sigma u v",
      ("input", "fullMatrices", "computeUV", OutShape("u"), OutShape("v")), out="sigma u v", dtypes=_LAPACK,
      notes="signs of singular vectors may differ from the device's; without computeUV, u and v (their "
            "shapes unchecked) are written as zeros where the device leaves them"),
    E("AffineGrid", "aten::affine_grid_generator.default", "theta size alignCorners out",
      ("theta", "size", "alignCorners")),
    E("Sinkhorn", F + "sinkhorn", "cost tol p", ("cost", "tol"), out="p", nullable="tol",
      notes="iterated in fp32 (aclnnSinkhorn.md); a nullptr tol is 0.0001"),
]
