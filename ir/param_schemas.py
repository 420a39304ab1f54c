"""The params schema of every primitive: one flat table, primitive name → {param name: `Param`}.

`check_params(primitive, params)` is what `typecheck` runs on every equation before its shape rule: an
unknown param name, a missing required param, a value of the wrong kind or out of its range raises
`JaxprTypeError` naming the param (typecheck adds the equation and primitive). A primitive without a row
keeps its params unchecked; one without a shape rule either never gets here, `typecheck` refuses it first
with `UnsupportedPrimitive`.

The rows are derived from every param the oracle fixtures print (`tests/oracle/*.json`, JAX 0.10.2) and
from what the shape rules and NumPy implementations read; `tests/ir/test_param_schemas.py` checks that
each fixture program passes and that each registered primitive has a row.

| kind       | accepted values                                                         |
|------------|-------------------------------------------------------------------------|
| `int`      | an int (not a bool) within int64                                        |
| `nat`      | an int ≥ 0 within int64                                                 |
| `ints`     | a tuple or list of `int`                                                |
| `pairs`    | a tuple or list of `(int, int)` or `(int, int, int)` (padding configs)  |
| `float`    | an int or float (±inf and nan included)                                 |
| `finite`   | a finite int or float                                                   |
| `bool`     | True or False                                                           |
| `dtype`    | an `ir.dtypes.DType`                                                    |
| `symbol`   | a bare name or string (`Symbol`, `str`)                                 |
| `record`   | an `ir.params.Record` (dimension numbers)                               |
| `dot_dims` | `((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))`, each `ints`   |
| `jaxpr`    | a `ClosedJaxpr`                                                          |
| `jaxprs`   | a non-empty tuple of `ClosedJaxpr`                                      |
| `any`      | anything (shardings, layouts, callables JAX prints as reprs, ...)      |

`Param(kind, optional=True)` also accepts None; `required=False` lets the param be absent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ir.core import ClosedJaxpr
from ir.dtypes import DType
from ir.errors import JaxprTypeError, clipped
from ir.params import Record

INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class Param:
    kind: str
    optional: bool = False  # None is accepted
    required: bool = True  # the param must be present


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and INT64[0] <= v <= INT64[1]


def _is_ints(v: Any) -> bool:
    return isinstance(v, (tuple, list)) and all(_is_int(x) for x in v)


def _is_pairs(v: Any) -> bool:
    return isinstance(v, (tuple, list)) and all(
        isinstance(p, (tuple, list)) and len(p) in (2, 3) and _is_ints(p) for p in v)


def _is_dot_dims(v: Any) -> bool:
    try:
        (lc, rc), (lb, rb) = v
    except (TypeError, ValueError):
        return False
    return all(_is_ints(x) for x in (lc, rc, lb, rb))


KINDS = {
    "int": _is_int,
    "nat": lambda v: _is_int(v) and v >= 0,
    "ints": _is_ints,
    "pairs": _is_pairs,
    "float": lambda v: (_is_int(v) or isinstance(v, float)) and not isinstance(v, bool),
    "finite": lambda v: (_is_int(v) or (isinstance(v, float) and math.isfinite(v))) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "dtype": lambda v: isinstance(v, DType),
    "symbol": lambda v: isinstance(v, str),
    "record": lambda v: isinstance(v, Record),
    "dot_dims": _is_dot_dims,
    "jaxpr": lambda v: isinstance(v, ClosedJaxpr),
    "jaxprs": lambda v: isinstance(v, tuple) and len(v) > 0 and all(isinstance(x, ClosedJaxpr) for x in v),
    "any": lambda v: True,
}
_WHAT = {"int": "an integer", "nat": "a non-negative integer", "ints": "a tuple of integers",
         "pairs": "a tuple of (low, high[, interior]) integer pairs", "float": "a number",
         "finite": "a finite number", "bool": "True or False", "dtype": "a dtype such as float64",
         "symbol": "a name", "record": "a record such as GatherDimensionNumbers(...)",
         "dot_dims": "((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))", "jaxpr": "a jaxpr",
         "jaxprs": "a tuple of jaxprs", "any": "any value"}

ANY = Param("any", optional=True, required=False)  # a param JAX prints that nothing in eqjax reads
INT, NAT, INTS, BOOL, DTYPE = Param("int"), Param("nat"), Param("ints"), Param("bool"), Param("dtype")
SYMBOL, RECORD, JAXPR = Param("symbol"), Param("record"), Param("jaxpr")

_WINDOW = {"window_dimensions": INTS, "window_strides": INTS, "padding": Param("pairs"),
           "base_dilation": Param("ints", required=False), "window_dilation": Param("ints", required=False)}
_CUMULATIVE = {"axis": NAT, "reverse": BOOL}
_AXES = {"axes": INTS, "out_sharding": ANY}
ENUM = Param("symbol", optional=True)  # an enum member JAX prints bare (`GatherScatterMode.CLIP`) or None
_SCATTER = {"dimension_numbers": RECORD, "indices_are_sorted": BOOL, "unique_indices": BOOL, "mode": ENUM,
            "update_jaxpr": Param("jaxpr", optional=True, required=False), "update_consts": ANY}
_CALL = {"jaxpr": JAXPR, "name": ANY}
# jit's params: those JAX prints, and those it hides at their defaults (ir/text/eqn_rules.py)
_JIT = {**_CALL, "donated_invars": ANY, "inline": ANY, "keep_unused": ANY, "in_shardings": ANY,
        "out_shardings": ANY, "in_layouts": ANY, "out_layouts": ANY, "ctx_mesh": ANY,
        "compiler_options_kvs": ANY}
_CUSTOM_CALL = {"call_jaxpr": JAXPR, "name": ANY, "num_consts": NAT, "symbolic_zeros": ANY}
_RNG = {"shape": INTS, "dtype": DTYPE, "algorithm": ENUM, "out_sharding": ANY}
_NO_PARAMS: dict[str, Param] = {}

_PARAMLESS = """
abs acos acosh add add_any and asin asinh atan atan2 atanh bessel_i0e bessel_i1e cbrt ceil cholesky
cholesky_update clamp clz complex copy copy_p cos cosh digamma div dynamic_update_slice eq eq_to erf
erf_inv erfc exp exp2 expm1 floor ge geqrf gt hessenberg householder_product igamma igamma_grad_a igammac imag
is_finite le le_to lgamma log log1p logistic lt lt_to lu max min mul ne neg nextafter not
optimization_barrier or polygamma population_count pow random_clone random_fold_in random_gamma_grad
random_unwrap real regularized_incomplete_beta rem rsqrt select_n shift_left shift_right_arithmetic
shift_right_logical sign sin sinh sqrt square stop_gradient sub tan tanh threefry2x32 xor zeta
""".split()

SCHEMAS: dict[str, dict[str, Param]] = {
    **{name: _NO_PARAMS for name in _PARAMLESS},
    "approx_top_k": {"k": NAT, "reduction_dimension": INT, "recall_target": Param("finite"), "is_max_k": BOOL,
                     "reduction_input_size_override": INT, "aggregate_to_topk": BOOL},
    "argmax": {"axes": INTS, "index_dtype": DTYPE},
    "argmin": {"axes": INTS, "index_dtype": DTYPE},
    "bitcast_convert_type": {"new_dtype": DTYPE},
    "broadcast_in_dim": {"shape": INTS, "broadcast_dimensions": INTS, "sharding": ANY},
    "closed_call": {"call_jaxpr": JAXPR},
    "core_call": {"call_jaxpr": JAXPR, "name": ANY},
    "checkpoint": {"jaxpr": JAXPR, "prevent_cse": ANY, "differentiated": ANY, "policy": ANY},
    "remat2": {"jaxpr": JAXPR, "prevent_cse": ANY, "differentiated": ANY, "policy": ANY},
    "composite": {"jaxpr": JAXPR, "name": ANY, "attributes": ANY, "version": ANY},
    "concatenate": {"dimension": NAT},
    "cond": {"branches": Param("jaxprs"), "branches_platforms": ANY},
    "conj": {"input_dtype": Param("dtype", required=False)},
    "conv_general_dilated": {"window_strides": INTS, "padding": Param("pairs"), "lhs_dilation": INTS,
                             "rhs_dilation": INTS, "dimension_numbers": Param("record", optional=True),
                             "feature_group_count": NAT, "batch_group_count": NAT, "precision": ANY,
                             "preferred_element_type": Param("dtype", optional=True, required=False),
                             "out_sharding": ANY},
    "convert_element_type": {"new_dtype": DTYPE, "weak_type": BOOL, "sharding": ANY},
    "cumlogsumexp": _CUMULATIVE, "cummax": _CUMULATIVE, "cummin": _CUMULATIVE, "cumprod": _CUMULATIVE,
    "cumsum": _CUMULATIVE,
    "custom_jvp_call": {**_CUSTOM_CALL, "jvp_jaxpr_fun": ANY, "jvp_jaxpr_thunk": ANY, "jvp": ANY},
    "custom_vjp_call": {**_CUSTOM_CALL, "fwd": ANY, "bwd": ANY, "out_trees": ANY, "fwd_jaxpr_thunk": ANY},
    "custom_vjp_call_jaxpr": {"fun_jaxpr": JAXPR, "num_consts": NAT, "fwd_jaxpr_thunk": ANY, "bwd": ANY,
                              "out_trees": ANY, "symbolic_zeros": ANY},
    "custom_linear_solve": {"const_lengths": RECORD, "jaxprs": RECORD},
    "device_put": {"devices": ANY, "srcs": ANY, "copy_semantics": ANY},
    "dot_general": {"dimension_numbers": Param("dot_dims"), "precision": ANY,
                    "preferred_element_type": Param("dtype", optional=True), "out_sharding": ANY},
    "dynamic_slice": {"slice_sizes": INTS},
    "eig": {"compute_left_eigenvectors": BOOL, "compute_right_eigenvectors": BOOL,
            "enable_eigvec_derivs": ANY, "implementation": ANY},
    "eigh": {"lower": BOOL, "sort_eigenvalues": BOOL, "subset_by_index": ANY, "algorithm": ENUM},
    "empty2": {"dtype": DTYPE, "memory_space": ANY},
    "fft": {"fft_type": ANY, "fft_lengths": INTS},
    "gather": {"dimension_numbers": RECORD, "slice_sizes": INTS, "indices_are_sorted": BOOL,
               "unique_indices": BOOL, "mode": ENUM, "fill_value": Param("float", optional=True)},
    "integer_pow": {"y": INT},
    "iota": {"dtype": DTYPE, "shape": INTS, "dimension": NAT, "sharding": ANY},
    "jit": _JIT, "pjit": _JIT,
    "lu_pivots_to_permutation": {"permutation_size": NAT},
    "pad": {"padding_config": Param("pairs")},
    "platform_index": {"platforms": ANY},
    "qr": {"full_matrices": BOOL, "pivoting": ANY, "use_magma": ANY},
    "ragged_dot_general": {"ragged_dot_dimension_numbers": RECORD, "precision": ANY,
                           "preferred_element_type": Param("dtype", optional=True), "group_offset": ANY,
                           "out_sharding": ANY},
    "random_bits": {"bit_width": NAT, "shape": INTS},
    "random_gamma": {"log_space": BOOL},
    "random_seed": {"impl": ANY},
    "random_split": {"shape": INTS},
    "random_wrap": {"impl": ANY},
    "reduce": {"computation": ANY, "jaxpr": JAXPR, "dimensions": INTS},
    "reduce_and": _AXES, "reduce_max": _AXES, "reduce_min": _AXES, "reduce_or": _AXES, "reduce_prod": _AXES,
    "reduce_sum": _AXES, "reduce_xor": _AXES,
    "reduce_precision": {"exponent_bits": NAT, "mantissa_bits": NAT},
    "reduce_window": {**_WINDOW, "jaxpr": JAXPR, "consts": ANY},
    "reduce_window_max": _WINDOW, "reduce_window_min": _WINDOW, "reduce_window_sum": _WINDOW,
    "reshape": {"new_sizes": INTS, "dimensions": Param("ints", optional=True), "sharding": ANY},
    "rev": {"dimensions": INTS},
    "rng_bit_generator": _RNG,
    "rng_uniform": {"shape": INTS},
    "round": {"rounding_method": ANY},
    "scan": {"jaxpr": JAXPR, "length": NAT, "reverse": BOOL, "num_consts": NAT, "num_carry": NAT,
             "linear": ANY, "unroll": ANY, "_split_transpose": ANY},
    "scatter": _SCATTER, "scatter-add": _SCATTER, "scatter-sub": _SCATTER, "scatter-mul": _SCATTER,
    "scatter-min": _SCATTER, "scatter-max": _SCATTER,
    "schur": {"compute_schur_vectors": BOOL, "sort_eig_vals": ANY, "select_callable": ANY},
    "select_and_gather_add": {**_WINDOW, "select_prim": ANY},
    "select_and_scatter_add": {"window_dimensions": INTS, "window_strides": INTS, "padding": Param("pairs"),
                               "select_prim": ANY},
    "slice": {"start_indices": INTS, "limit_indices": INTS, "strides": Param("ints", optional=True)},
    "sort": {"dimension": NAT, "is_stable": BOOL, "num_keys": NAT},
    "split": {"sizes": INTS, "axis": NAT},
    "squeeze": {"dimensions": INTS},
    "stack": {"axis": NAT},
    "svd": {"full_matrices": BOOL, "compute_uv": BOOL, "subset_by_index": ANY, "algorithm": ENUM},
    "tile": {"reps": INTS},
    "top_k": {"k": NAT, "axis": Param("int", required=False)},
    "transpose": {"permutation": INTS},
    "triangular_solve": {"left_side": BOOL, "lower": BOOL, "transpose_a": BOOL, "conjugate_a": BOOL,
                         "unit_diagonal": BOOL},
    "tridiagonal": {"lower": BOOL},
    "unstack": {"axis": NAT},
    "tridiagonal_solve": {"perturb_singular": ANY},
    "while": {"cond_jaxpr": JAXPR, "body_jaxpr": JAXPR, "cond_nconsts": NAT, "body_nconsts": NAT},
}


def check_params(primitive: str, params: dict[str, Any]) -> None:
    """Raise `JaxprTypeError` (naming the param) if `params` do not fit `primitive`'s schema row."""
    schema = SCHEMAS.get(primitive)
    if schema is None:
        return
    for name, value in params.items():
        spec = schema.get(name)
        if spec is None:
            known = ", ".join(sorted(schema)) or "none"
            raise JaxprTypeError(f"unknown param {clipped(name, 60)!r} (params of {primitive}: {known})",
                                 primitive=primitive)
        if value is None and spec.optional:
            continue
        if not KINDS[spec.kind](value):
            raise JaxprTypeError(f"param {name}={clipped(repr(value), 80)} is not {_WHAT[spec.kind]}",
                                 primitive=primitive)
    missing = [name for name, spec in schema.items() if spec.required and name not in params]
    if missing:
        raise JaxprTypeError(f"missing param{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                             primitive=primitive)
