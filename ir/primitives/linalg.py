"""Catalogue rows of the contractions, convolutions, FFT and linear algebra (shape rules: ir/shapes/dot_conv.py,
fft.py, linalg.py)."""

from __future__ import annotations

from ir.primitives import NO_BATCHING_IN_JAX, NOT_DIFFERENTIABLE, define, variadic
from ir.primitives.schema import ANY, BOOL, ENUM, INTS, NAT, PAIRS, RECORD, OperandDtype, Param, defaulting, field

define("dot_general", operands=2, traits={"term"}, linear_in=(0, 1),
       params={"dimension_numbers": field(Param("dot_dims")), "out_sharding": defaulting(ANY, None, printed=False),
               "precision": defaulting(ANY, None, printed=False),
               "preferred_element_type": Param("dtype", optional=True, default=OperandDtype(0))})
define("ragged_dot_general", operands=3, linear_in=(0, 1), gaps={"batching": NO_BATCHING_IN_JAX},
       params={"ragged_dot_dimension_numbers": RECORD, "precision": ANY,
               "preferred_element_type": Param("dtype", optional=True), "group_offset": ANY, "out_sharding": ANY},
       traits={"term"})
define("conv_general_dilated", operands=2, linear_in=(0, 1),
       params={"window_strides": INTS, "padding": PAIRS, "lhs_dilation": INTS, "rhs_dilation": INTS,
               "dimension_numbers": Param("record", optional=True), "feature_group_count": NAT,
               "batch_group_count": NAT, "precision": ANY,
               "preferred_element_type": Param("dtype", optional=True, required=False), "out_sharding": ANY},
       traits={"term"})
define("fft", operands=1, params={"fft_type": ANY, "fft_lengths": INTS}, linear_in=(0,), traits={"term"})

define("cholesky", operands=1, traits={"term"})
define("cholesky_update", operands=2, gaps={**NOT_DIFFERENTIABLE, "batching": NO_BATCHING_IN_JAX}, traits={"term"})
define("triangular_solve", operands=2, linear_in=(1,),
       params={"left_side": BOOL, "lower": BOOL, "transpose_a": BOOL, "conjugate_a": BOOL, "unit_diagonal": BOOL},
       traits={"term"})
define("qr", operands=1, results=2, params={"full_matrices": BOOL, "pivoting": ANY, "use_magma": ANY},
       traits={"term"})
_GEQRF_NO_DERIVATIVE = ("JAX defines no derivative (jax/_src/lax/linalg.py); slogdet's QR method differentiates "
                        "by its custom rule")
define("geqrf", operands=1, results=2, traits={"term"},
       gaps={"jvp": _GEQRF_NO_DERIVATIVE, "vjp": _GEQRF_NO_DERIVATIVE})
define("householder_product", operands=2, gaps=NOT_DIFFERENTIABLE, traits={"term"})
define("lu", operands=1, results=3, traits={"term"})
define("lu_pivots_to_permutation", operands=1, params={"permutation_size": NAT}, traits={"term"},
       gaps=NOT_DIFFERENTIABLE)
define("svd", operands=1, results=variadic(1),
       params={"full_matrices": BOOL, "compute_uv": BOOL, "subset_by_index": ANY, "algorithm": ENUM},
       traits={"term"})
define("eigh", operands=1, results=2,
       params={"lower": BOOL, "sort_eigenvalues": BOOL, "subset_by_index": ANY, "algorithm": ENUM}, traits={"term"})
define("eig", operands=1, results=variadic(1),
       params={"compute_left_eigenvectors": BOOL, "compute_right_eigenvectors": BOOL, "enable_eigvec_derivs": ANY,
               "implementation": ANY}, traits={"term"})
define("schur", operands=1, results=variadic(1),
       params={"compute_schur_vectors": BOOL, "sort_eig_vals": ANY, "select_callable": ANY}, traits={"term"},
       gaps=NOT_DIFFERENTIABLE)
define("hessenberg", operands=1, results=2, traits={"term"}, gaps=NOT_DIFFERENTIABLE)
define("tridiagonal", operands=1, results=4, params={"lower": BOOL}, traits={"term"}, gaps=NOT_DIFFERENTIABLE)
define("tridiagonal_solve", operands=4, params={"perturb_singular": ANY}, traits={"term"})
