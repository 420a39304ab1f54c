"""Cost models: the price of one equation, `model(primitive, params, in_avals, out_avals) -> int | float`.

| name    | model         | counts                                                                  |
|---------|---------------|-------------------------------------------------------------------------|
| `ops`   | `op_count`    | 1 per equation (leaves are priced by the term layer, at 0)              |
| `flops` | `flops`       | arithmetic operations, from shapes (rules below)                        |
| `bytes` | `bytes_moved` | bytes read + bytes written, from shapes and dtype item sizes            |

`flops`: elementwise ops cost out size × the weight in `ELEMENTWISE_WEIGHTS` (1 for add-like and
comparisons, 4 for div/sqrt, 10 for transcendentals, 30 for special functions; `integer_pow` counts
its square-and-multiply steps) and complex dtypes × 4 (a complex multiply-add is four real ones);
reductions, cumulative ops and arg-reductions cost their input size; `dot_general` 2 × batch × M × N × K
= 2 × out size × K; `conv_general_dilated` 2 × out size × kernel window × rhs input features (already
divided by the group count); data movement (`ZERO_FLOPS`, the catalogue's "data_movement" trait:
reshape, transpose, slices, gather, ...) costs 0; sort, FFT, linear algebra and random bits use the
textbook leading terms in `_FLOPS_RULES`.

`bytes_moved`: inputs plus outputs at their item size (a key<fry> is 8 bytes, float0 0 bytes),
except metadata-only ops (`FREE_BYTES`, the trait "metadata_only": reshape, squeeze, ...) at 0, and the
"region_read" ones (slice, dynamic_slice, gather), which read only the output-sized region they copy
(plus indices). Updates (dynamic_update_slice, scatter) are priced as functional copies, as eqjax's NumPy
evaluation performs them.

Higher-order primitives are priced by their bodies under the same model: `cond` its costliest branch,
`scan` length × body, `while` one trip of cond and body (the trip count is unknown),
`custom_linear_solve` its solve, and call-like primitives (jit, remat2, custom_jvp_call, ...) their
body. A primitive no table names costs, as a documented default, 1 flop per output element, and
inputs plus outputs in bytes. All models are deterministic and return exact Python ints.

`NAME+accuracy` (e.g. "flops+accuracy") is NAME plus a price on numerical error: each node's local error in
bits against the high-precision evaluator, Herbie style (`rewrites.accuracy.local`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from functools import partial
from typing import NamedTuple

from ir.core import ClosedJaxpr, Jaxpr, ShapedArray
from ir.params import Record, as_ints, walk_values
from ir.primitives import primitives_with
from ir.shapes.fft import fft_type_code

Cost = int | float
CostFn = Callable[[str, dict, list[ShapedArray], list[ShapedArray]], Cost]


class CostModel(NamedTuple):
    """A named cost model; calling it checks the result is a non-negative number. It is a pair, so
    `name, fn = get_cost_model("flops")` also works (`fn` is the unchecked function)."""

    name: str
    fn: CostFn

    def __call__(self, primitive: str, params: dict, in_avals: Sequence[ShapedArray],
                 out_avals: Sequence[ShapedArray]) -> Cost:
        value = self.fn(primitive, params, list(in_avals), list(out_avals))
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != value or value < 0:
            raise ValueError(f"cost model {self.name!r} gave {value!r} for {primitive}; "
                             "a cost must be a non-negative number")
        return int(value) if isinstance(value, numbers.Integral) else float(value)


def custom(fn: CostFn, name: str | None = None) -> CostModel:
    """Wrap any `fn(primitive, params, in_avals, out_avals) -> number` as a cost model."""
    if not callable(fn):
        raise TypeError(f"custom cost model must be callable, got {fn!r}")
    return CostModel(name or getattr(fn, "__name__", "custom"), fn)


def jaxpr_cost(model: CostModel, jaxpr: Jaxpr | ClosedJaxpr) -> Cost:
    """The sum of `model` over a jaxpr's equations (exact for ints); a model priced on the whole program
    (`rewrites.accuracy.local.AccuracyCost`) adds its program-wide term."""
    inner = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    costs = [model(e.primitive, e.params, [v.aval for v in e.invars], [v.aval for v in e.outvars])
             for e in inner.eqns]
    total = math.fsum(costs) if any(type(c) is float for c in costs) else sum(costs)
    if hasattr(model, "program_cost"):
        closed = jaxpr if isinstance(jaxpr, ClosedJaxpr) else ClosedJaxpr(
            Jaxpr([], [*inner.constvars, *inner.invars], inner.outvars, inner.eqns))
        return model.program_cost(closed, total)
    return total


def _size(avals: Sequence[ShapedArray]) -> int:
    return sum(a.size for a in avals)


def _nbytes(avals: Sequence[ShapedArray]) -> int:
    return sum(0 if a.dtype.kind == "float0" else a.size * a.dtype.itemsize for a in avals)


def _complex_factor(ins: Sequence[ShapedArray], outs: Sequence[ShapedArray]) -> int:
    return 4 if any(a.dtype.is_complex for a in (*ins, *outs)) else 1


# --- higher-order primitives: priced by their bodies, under whichever model is asking --------------

def body_runs(primitive: str, params: dict) -> tuple[str, list[tuple[int, ClosedJaxpr]]] | None:
    """How a control-flow or call primitive runs its bodies, as (how, [(times, body), ...]): `how` is
    "max" for `cond` (its costliest branch) and "sum" otherwise; None if it runs no body."""
    if primitive == "cond":
        return "max", [(1, b) for b in params["branches"]]
    if primitive == "scan":
        return "sum", [(int(params["length"]), params["jaxpr"])]
    if primitive == "while":
        return "sum", [(1, params["cond_jaxpr"]), (1, params["body_jaxpr"])]
    if primitive == "custom_linear_solve":
        jaxprs = params["jaxprs"]
        body = jaxprs.get("solve") or jaxprs.get("matvec")
        return "sum", [(1, body)] if isinstance(body, ClosedJaxpr) else []
    if primitive in _SCALAR_BODIES:
        return None
    bodies = [(1, v) for v in walk_values(params) if isinstance(v, ClosedJaxpr)]
    return ("sum", bodies) if bodies else None


def _nested_cost(model: CostModel, primitive: str, params: dict) -> Cost | None:
    """The cost of the jaxprs a control-flow or call primitive runs, or None if it runs none."""
    runs = body_runs(primitive, params)
    if runs is None:
        return None
    how, bodies = runs
    costs = [times * jaxpr_cost(model, body) for times, body in bodies]
    if how == "max":
        return max(costs)
    return math.fsum(costs) if any(type(c) is float for c in costs) else sum(costs)


# Primitives whose jaxpr param is a scalar combiner applied per element, priced by their own rules.
_SCALAR_BODIES = frozenset(primitives_with("scalar_combiner"))


# --- op_count ----------------------------------------------------------------------------------

def _op_count(primitive: str, params: dict, ins: list[ShapedArray], outs: list[ShapedArray]) -> int:
    return 1


# --- flops -------------------------------------------------------------------------------------

ELEMENTWISE_WEIGHTS: dict[str, int] = {
    **dict.fromkeys((
        "add", "add_any", "sub", "mul", "neg", "max", "min", "abs", "sign", "floor", "ceil", "round",
        "square", "is_finite", "select_n", "eq", "ne", "lt", "le", "gt", "ge", "eq_to", "le_to", "lt_to",
        "and", "or", "xor", "not", "shift_left", "shift_right_arithmetic", "shift_right_logical",
        "population_count", "clz", "convert_element_type", "reduce_precision", "complex", "conj",
        "nextafter"), 1),
    "clamp": 2,
    **dict.fromkeys(("div", "rem", "sqrt", "rsqrt"), 4),
    **dict.fromkeys((
        "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos",
        "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt", "erf", "erfc"), 10),
    "pow": 20,
    **dict.fromkeys((
        "lgamma", "digamma", "polygamma", "igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "zeta",
        "regularized_incomplete_beta", "bessel_i0e", "bessel_i1e", "erf_inv"), 30),
}

ZERO_FLOPS = frozenset(primitives_with("data_movement"))

# One operation per input element (cumlogsumexp, an exp and a log per element, has its own rule below).
REDUCTIONS = frozenset({*primitives_with("reduction"), *primitives_with("arg_reduction"),
                        *primitives_with("cumulative")} - {"cumlogsumexp"})

THREEFRY_PER_WORD = 50  # 20 rounds of add, rotate and xor per pair of 32-bit words


def _elementwise(weight: int, params, ins, outs) -> int:
    return weight * _complex_factor(ins, outs) * _size(outs[:1])


def _integer_pow(params, ins, outs) -> int:
    y = abs(int(params["y"]))
    steps = max(y.bit_length() - 1 + bin(y).count("1") - 1, 0)  # squarings + extra multiplies
    return (steps + (4 if int(params["y"]) < 0 else 0)) * _complex_factor(ins, outs) * _size(outs[:1])


def _dot_general(params, ins, outs) -> int:
    (lhs_contract, _), _ = params["dimension_numbers"]
    k = math.prod(ins[0].shape[d] for d in as_ints(lhs_contract))
    return 2 * outs[0].size * k * _complex_factor(ins, outs)


def _ragged_dot_general(params, ins, outs) -> int:
    dn = params["ragged_dot_dimension_numbers"]
    (lhs_contract, _), (lhs_batch, _) = dn.dot_dimension_numbers
    contract = as_ints(lhs_contract)
    k = math.prod(ins[0].shape[d] for d in contract)
    per_group_out = outs[0].size
    if as_ints(dn.lhs_ragged_dimensions)[0] in contract:  # the groups split K: out has a group axis
        per_group_out //= max(ins[2].shape[-1], 1)
    return 2 * per_group_out * k * _complex_factor(ins, outs)


def _conv_general_dilated(params, ins, outs) -> int:
    dn = params.get("dimension_numbers")
    rhs = ins[1]
    if isinstance(dn, Record):
        rhs_spec = as_ints(dn.rhs_spec)
    elif dn is None:
        rhs_spec = tuple(range(rhs.ndim))  # JAX's default: (out features, in features, spatial...)
    else:
        rhs_spec = as_ints(dn[1])
    window = math.prod(rhs.shape[d] for d in rhs_spec[2:])
    return 2 * outs[0].size * window * rhs.shape[rhs_spec[1]] * _complex_factor(ins, outs)


def _operand_size(index: int, weight: int, params, ins, outs) -> int:
    return weight * ins[index].size


def _variadic_reduce(params, ins, outs) -> int:
    body = params.get("jaxpr")
    per_step = max(jaxpr_cost(flops, body), 1) if isinstance(body, ClosedJaxpr) else 1
    return ins[0].size * per_step


def _window(params, ins, outs) -> int:
    window = math.prod(as_ints(params["window_dimensions"]))
    body = params.get("jaxpr")
    per_step = max(jaxpr_cost(flops, body), 1) if isinstance(body, ClosedJaxpr) else 1
    return outs[0].size * window * per_step


def _select_and_scatter(source_index: int, params, ins, outs) -> int:
    return 2 * ins[source_index].size * math.prod(as_ints(params["window_dimensions"]))


def _log2(n: int) -> int:
    return max(math.ceil(math.log2(n)), 1) if n > 1 else 1


def _sort(params, ins, outs) -> int:
    axis_len = ins[0].shape[int(params["dimension"])] if ins[0].ndim else 1
    return ins[0].size * _log2(axis_len) * int(params.get("num_keys", 1))


def _top_k(params, ins, outs) -> int:
    return ins[0].size * _log2(int(params["k"]) + 1)


def _fft(params, ins, outs) -> int:
    lengths = as_ints(params["fft_lengths"])
    n = math.prod(lengths)
    real = ins[0] if fft_type_code(params["fft_type"]) != 3 else outs[0]
    batch = real.size // n if n else 0
    half = 2 if fft_type_code(params["fft_type"]) in (2, 3) else 1
    return batch * 5 * n * _log2(n) // half


def _matrix(a: ShapedArray) -> tuple[int, int, int]:
    """(batch, rows, cols) of a batch of matrices."""
    rows, cols = a.shape[-2:]
    return math.prod(a.shape[:-2]), rows, cols


def _square_matrix(coef_num: int, coef_den: int, params, ins, outs) -> int:
    batch, n, _ = _matrix(ins[0])
    return batch * coef_num * n ** 3 // coef_den


def _lu(params, ins, outs) -> int:
    batch, m, n = _matrix(ins[0])
    big, k = max(m, n), min(m, n)
    return batch * (big * k * k - k ** 3 // 3)


def _qr(params, ins, outs) -> int:
    batch, m, n = _matrix(ins[0])
    big, k = max(m, n), min(m, n)
    return batch * (4 * big * k * k - 4 * k ** 3 // 3)  # R, then Q from the reflectors


def _geqrf(params, ins, outs) -> int:
    batch, m, n = _matrix(ins[0])
    big, k = max(m, n), min(m, n)
    return batch * (2 * big * k * k - 2 * k ** 3 // 3)  # R and the reflectors (qr without forming Q)


def _svd(params, ins, outs) -> int:
    batch, m, n = _matrix(ins[0])
    big, k = max(m, n), min(m, n)
    if params.get("compute_uv", True):
        return batch * (4 * big * k * k + 22 * k ** 3)  # Golub-Van Loan R-SVD with vectors
    return batch * (4 * big * k * k - 4 * k ** 3 // 3)


def _eig(params, ins, outs) -> int:
    batch, n, _ = _matrix(ins[0])
    vectors = params.get("compute_left_eigenvectors") or params.get("compute_right_eigenvectors")
    return batch * (25 if vectors else 10) * n ** 3


def _householder_product(params, ins, outs) -> int:
    batch, m, n = _matrix(ins[0])
    k = ins[1].shape[-1]
    return batch * max(4 * m * n * k - 2 * (m + n) * k * k + 4 * k ** 3 // 3, 0)


def _triangular_solve(params, ins, outs) -> int:
    return ins[0].shape[-1] * ins[1].size


def _random_bits(params, ins, outs) -> int:
    return outs[0].size * THREEFRY_PER_WORD * max(math.ceil(outs[0].dtype.bits / 32), 1)


def _per_output(weight: int, params, ins, outs) -> int:
    return weight * _size(outs)


_FLOPS_RULES: dict[str, Callable[[dict, list[ShapedArray], list[ShapedArray]], int]] = {
    **{name: partial(_elementwise, w) for name, w in ELEMENTWISE_WEIGHTS.items()},
    **{name: partial(_per_output, 0) for name in ZERO_FLOPS},
    **{name: partial(_operand_size, 0, 1) for name in REDUCTIONS},
    "cumlogsumexp": partial(_operand_size, 0, ELEMENTWISE_WEIGHTS["exp"] + ELEMENTWISE_WEIGHTS["log"]),
    "integer_pow": _integer_pow,
    "dot_general": _dot_general,
    "ragged_dot_general": _ragged_dot_general,
    "conv_general_dilated": _conv_general_dilated,
    "reduce": _variadic_reduce,
    **dict.fromkeys(("reduce_window_sum", "reduce_window_max", "reduce_window_min", "reduce_window"),
                    _window),
    "select_and_scatter_add": partial(_select_and_scatter, 0),
    "select_and_gather_add": partial(_select_and_scatter, 1),
    **dict.fromkeys(("scatter-add", "scatter-sub", "scatter-mul", "scatter-min", "scatter-max"),
                    partial(_operand_size, 2, 1)),  # one combine per update element
    "sort": _sort,
    "top_k": _top_k,
    "approx_top_k": _top_k,
    "fft": _fft,
    "cholesky": partial(_square_matrix, 1, 3),  # n^3/3
    "eigh": partial(_square_matrix, 9, 1),  # symmetric QR with vectors
    "schur": partial(_square_matrix, 25, 1),
    "hessenberg": partial(_square_matrix, 10, 3),
    "tridiagonal": partial(_square_matrix, 4, 3),
    "cholesky_update": partial(_operand_size, 0, 4),
    "lu": _lu,
    "qr": _qr,
    "geqrf": _geqrf,
    "svd": _svd,
    "eig": _eig,
    "householder_product": _householder_product,
    "triangular_solve": _triangular_solve,
    "tridiagonal_solve": partial(_operand_size, -1, 8),  # Thomas algorithm
    "lu_pivots_to_permutation": partial(_per_output, 1),
    "threefry2x32": partial(_per_output, THREEFRY_PER_WORD),
    "random_bits": _random_bits,
    "rng_bit_generator": partial(_per_output, THREEFRY_PER_WORD),
    "rng_uniform": partial(_per_output, THREEFRY_PER_WORD),
    "random_split": partial(_per_output, 2 * THREEFRY_PER_WORD),
    "random_fold_in": partial(_per_output, 2 * THREEFRY_PER_WORD),
    "random_seed": partial(_per_output, 1),
    "random_gamma": partial(_per_output, 200),  # rejection sampling: a few log/exp per draw
}


def _flops(primitive: str, params: dict, ins: list[ShapedArray], outs: list[ShapedArray]) -> Cost:
    nested = _nested_cost(flops, primitive, params)
    if nested is not None:
        return nested
    rule = _FLOPS_RULES.get(primitive)
    return rule(params, ins, outs) if rule is not None else _size(outs)


# --- bytes -------------------------------------------------------------------------------------

FREE_BYTES = frozenset(primitives_with("metadata_only"))
REGION_READS = frozenset(primitives_with("region_read"))


def _bytes_moved(primitive: str, params: dict, ins: list[ShapedArray], outs: list[ShapedArray]) -> Cost:
    nested = _nested_cost(bytes_moved, primitive, params)
    if nested is not None:
        return nested
    if primitive in FREE_BYTES:
        return 0
    if primitive in REGION_READS:
        return 2 * _nbytes(outs) + _nbytes(ins[1:])
    return _nbytes(ins) + _nbytes(outs)


op_count = CostModel("ops", _op_count)
flops = CostModel("flops", _flops)
bytes_moved = CostModel("bytes", _bytes_moved)

COST_MODELS: dict[str, CostModel] = {m.name: m for m in (op_count, flops, bytes_moved)}


PROFILED_NAMES = ("latency", "latency-numpy", "latency-xla", "learned:PATH")


def _is_profiled(name: str) -> bool:
    return name == "latency" or name.startswith(("latency-", "learned:"))


def for_backend(cost, backend: str):
    """`cost` with "latency" made the latency model of `backend`, the backend the program will run on."""
    if cost != "latency":
        return cost
    if backend not in ("numpy", "xla"):
        raise ValueError(f"cost='latency' means the latency profile of the backend in use, and eqjax calibrates "
                         f"numpy and xla, not {backend!r}; pass cost='latency-numpy' or 'latency-xla'")
    return f"latency-{backend}"


def get_cost_model(name_or_callable: str | CostFn, backend: str = "numpy") -> CostModel:
    """A model by name, or any callable wrapped by `custom`. Names: "ops", "flops", "bytes"; "latency"
    (the calibrated profile of `backend` on this machine), "latency-numpy", "latency-xla"; and
    "learned:PATH" (a model fitted by `rewrites.latency.learned.fit`). See `rewrites.latency`. Any of them
    followed by "+accuracy" (or "+accuracy:W", W per bit of error) adds the local error of each node
    (`rewrites.accuracy.local`)."""
    if isinstance(name_or_callable, CostModel) or hasattr(name_or_callable, "program_cost"):
        return name_or_callable
    if isinstance(name_or_callable, str):
        base, weight = split_accuracy(name_or_callable)
        if weight is not None:
            from rewrites.accuracy.local import accuracy_cost

            return accuracy_cost(base, weight, backend)
        if name_or_callable in COST_MODELS:
            return COST_MODELS[name_or_callable]
        if _is_profiled(name_or_callable):
            from rewrites.latency.named import named_model

            return named_model(for_backend(name_or_callable, backend))
        raise ValueError(f"unknown cost model {name_or_callable!r}; known: {', '.join(COST_MODELS)}, "
                         f"{', '.join(PROFILED_NAMES)}, each also as NAME+accuracy (or pass a callable)")
    return custom(name_or_callable)


ACCURACY_DEFAULT_WEIGHT = 64.0  # base-model units per bit of error per element (rewrites.accuracy.local)


def split_accuracy(name: str) -> tuple[str, float | None]:
    """("flops", 64.0) for "flops+accuracy", ("flops", 8.0) for "flops+accuracy:8", (name, None) for a name
    without the accuracy term; a weight that is not a positive number raises ValueError."""
    base, plus, term = name.rpartition("+")
    kind, colon, weight = term.partition(":")
    if not plus or kind != "accuracy":
        return name, None
    try:
        value = float(weight) if colon else ACCURACY_DEFAULT_WEIGHT
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"cost model {name!r}: the accuracy weight must be a positive number, got {weight!r}")
    return base, value


def cost_source(cost, backend: str = "numpy") -> str | None:
    """A digest of the file a named profiled model is read from (None for the others), so a cache keyed by
    the model's name also changes when its profile does."""
    if isinstance(cost, str) and _is_profiled(cost):
        from rewrites.latency.named import source_digest

        return source_digest(for_backend(cost, backend))
    return None
