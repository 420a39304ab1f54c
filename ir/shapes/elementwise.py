"""Shape/dtype rules of elementwise primitives: unary, n-ary (broadcasting), select, clamp, conversions.

At the jaxpr level there is no dtype promotion: the operands of an n-ary op share one dtype (tracing
inserts `convert_element_type`). Shapes follow JAX's `broadcasting_shape_rule`: rank-0 operands
broadcast, the others have equal rank and each dimension is equal or 1. A result is weak-typed iff
every operand is (JAX's standard weak-type rule); bool results are never weak.

The small checking helpers at the top are shared by the sibling rule modules of `ir/shapes/`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ir import dtypes as D
from ir.core import ShapedArray
from ir.dtypes import DType
from ir.primitives import shape_rule
from ir.shapes.common import (
    ANY,
    BOOL_OR_INT,
    COMPLEX,
    COMPLEX_PARTS,
    FLOAT,
    INT,
    NUM,
    ORDERED,
    SIGNED,
    broadcast_shapes,
    check_arity,
    check_dtype,
    dtype_param,
    fail,
    same_dtypes,
    weak,
)


def _same(dt: DType) -> DType:
    return dt


def _to_bool(dt: DType) -> DType:
    return D.bool_


def _real_part(dt: DType) -> DType:
    return {"c64": D.float32, "c128": D.float64}.get(dt.short, dt)


def _to_complex(dt: DType) -> DType:
    return {"f32": D.complex64, "f64": D.complex128}.get(dt.short, dt)


# --- unary ------------------------------------------------------------------------------------

_FLOAT_OR_COMPLEX = FLOAT | COMPLEX
UNARY: dict[str, tuple[frozenset[str] | None, Callable[[DType], DType]]] = {
    # name: (accepted dtypes or None for any dtype, result dtype)
    "neg": (NUM, _same), "sign": (NUM, _same), "square": (NUM, _same),
    "floor": (FLOAT, _same), "ceil": (FLOAT, _same), "is_finite": (FLOAT, _to_bool),
    "cbrt": (FLOAT, _same),
    **{name: (_FLOAT_OR_COMPLEX, _same) for name in (
        "exp", "exp2", "log", "expm1", "log1p", "tanh", "logistic", "sin", "cos", "tan", "asin",
        "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt", "rsqrt")},
    **{name: (FLOAT, _same) for name in (
        "lgamma", "digamma", "erf", "erfc", "erf_inv", "bessel_i0e", "bessel_i1e")},
    "real": (COMPLEX, _real_part), "imag": (COMPLEX, _real_part),
    "abs": (SIGNED | FLOAT | COMPLEX, _real_part),
    "conj": (COMPLEX_PARTS | COMPLEX, _to_complex),
    "not": (BOOL_OR_INT, _same), "population_count": (INT, _same), "clz": (INT, _same),
    # identities: stop_gradient prints as a primitive in the fixtures; copy_p is jnp.array's copy
    "copy": (None, _same), "copy_p": (None, _same), "stop_gradient": (None, _same),
}


def _unary(prim, accepted, result, x, **params):
    if accepted is not None:
        check_dtype(prim, x, accepted)
    dt = result(x.dtype)
    return [ShapedArray(x.shape, dt, weak(dt, x))]


for _name, (_accepted, _result) in UNARY.items():
    shape_rule(_name)(partial(_unary, _name, _accepted, _result))


@shape_rule("round")
def _round(x, *, rounding_method=0, **params):
    if isinstance(rounding_method, int) and int(rounding_method) not in (0, 1):
        fail("round", "rounding_method must be 0 (away from zero) or 1 (to nearest even)",
             expected="0 or 1", actual=rounding_method)
    return _unary("round", FLOAT, _same, x)


@shape_rule("integer_pow")
def _integer_pow(x, *, y, **params):
    check_dtype("integer_pow", x, NUM)
    if x.dtype.is_integer and int(y) < 0:
        fail("integer_pow", "integers cannot be raised to negative powers", expected="y >= 0", actual=y)
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]


@shape_rule("reduce_precision")
def _reduce_precision(x, *, exponent_bits, mantissa_bits, **params):
    check_dtype("reduce_precision", x, FLOAT)
    if int(exponent_bits) < 1 or int(mantissa_bits) < 0:
        fail("reduce_precision", "needs exponent_bits >= 1 and mantissa_bits >= 0",
             expected="exponent_bits >= 1, mantissa_bits >= 0", actual=(exponent_bits, mantissa_bits))
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]


# --- n-ary, broadcasting ----------------------------------------------------------------------

NARY: dict[str, tuple[tuple[frozenset[str], ...], Callable[[DType], DType]]] = {
    **{name: ((NUM, NUM), _same) for name in ("add", "sub", "mul", "div")},
    "rem": ((INT | FLOAT, INT | FLOAT), _same),
    "max": ((ANY, ANY), _same), "min": ((ANY, ANY), _same),
    "atan2": ((_FLOAT_OR_COMPLEX, _FLOAT_OR_COMPLEX), _same),
    "nextafter": ((FLOAT, FLOAT), _same),
    **{name: ((BOOL_OR_INT, BOOL_OR_INT), _same) for name in ("and", "or", "xor")},
    **{name: ((INT, INT), _same) for name in ("shift_left", "shift_right_arithmetic", "shift_right_logical")},
    **{name: ((ANY | {"key"}, ANY | {"key"}), _to_bool) for name in ("eq", "ne")},
    "eq_to": ((ANY, ANY), _to_bool),
    **{name: ((ORDERED, ORDERED), _to_bool) for name in ("lt", "le", "gt", "ge", "lt_to", "le_to")},
    "complex": ((COMPLEX_PARTS, COMPLEX_PARTS), _to_complex),
    **{name: ((FLOAT, FLOAT), _same) for name in (
        "igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "zeta", "polygamma")},
    "regularized_incomplete_beta": ((FLOAT, FLOAT, FLOAT), _same),
}


def _nary(prim, accepted, result, *avals, **params):
    check_arity(prim, avals, len(accepted))
    for i, (aval, acc) in enumerate(zip(avals, accepted, strict=True)):
        check_dtype(prim, aval, acc, i)
    dt = result(same_dtypes(prim, *avals))
    return [ShapedArray(broadcast_shapes(prim, *avals), dt, weak(dt, *avals))]


for _name, (_accepted, _result) in NARY.items():
    shape_rule(_name)(partial(_nary, _name, _accepted, _result))


@shape_rule("pow")
def _pow(x, y, **params):
    check_dtype("pow", x, _FLOAT_OR_COMPLEX, 0)
    check_dtype("pow", y, NUM, 1)
    if x.dtype != y.dtype and not y.dtype.is_integer:
        fail("pow", "an inexact exponent must have the dtype of the base",
             expected=f"exponent of dtype {x.dtype} or an integer dtype", actual=f"{x}, {y}")
    return [ShapedArray(broadcast_shapes("pow", x, y), x.dtype, weak(x.dtype, x, y))]


@shape_rule("add_any")
def _add_any(x, y, **params):
    """JAX's tangent addition (`add_jaxvals`): both operands have exactly the same type."""
    if not x.same_type(y):
        fail("add_any", "operands must have the same shape and dtype", expected=str(x), actual=str(y))
    return [ShapedArray(x.shape, x.dtype, weak(x.dtype, x, y))]


@shape_rule("select_n")
def _select_n(which, *cases, **params):
    if not cases:
        fail("select_n", "needs at least one case", expected=">= 1 case", actual=0)
    check_dtype("select_n", which, BOOL_OR_INT, 0)
    if which.dtype.is_bool and len(cases) > 2:
        fail("select_n", "a bool predicate selects between at most 2 cases",
             expected="an integer predicate for more than 2 cases", actual=f"{which} with {len(cases)} cases")
    dt = same_dtypes("select_n", *cases, what="cases")
    if any(c.shape != cases[0].shape for c in cases):
        fail("select_n", "cases must have the same shape", expected="equal shapes",
             actual=", ".join(map(str, cases)))
    if which.shape and which.shape != cases[0].shape:
        fail("select_n", "the predicate must be a scalar or have the shape of the cases",
             expected=f"shape () or {cases[0].shape}", actual=str(which))
    return [ShapedArray(cases[0].shape, dt, weak(dt, *cases))]


@shape_rule("clamp")
def _clamp(lo, x, hi, **params):
    dt = same_dtypes("clamp", lo, x, hi)
    check_dtype("clamp", x, ANY)
    for bound, name in ((lo, "min"), (hi, "max")):
        if bound.shape and bound.shape != x.shape:
            fail("clamp", f"{name} must be a scalar or have the operand's shape",
                 expected=f"shape () or {x.shape}", actual=str(bound))
    return [ShapedArray(x.shape, dt, weak(dt, lo, x, hi))]


# --- conversions ------------------------------------------------------------------------------

_NOT_CONVERTIBLE = frozenset({"key", "float0"})


@shape_rule("convert_element_type")
def _convert_element_type(x, *, new_dtype, weak_type=False, **params):
    new = dtype_param("convert_element_type", "new_dtype", new_dtype)
    for dt in (x.dtype, new):
        if dt.kind in _NOT_CONVERTIBLE:
            fail("convert_element_type", f"cannot convert {x.dtype} to {new}",
                 expected="numeric or bool dtypes", actual=str(dt))
    return [ShapedArray(x.shape, new, bool(weak_type) and new.kind != "b")]


@shape_rule("bitcast_convert_type")
def _bitcast_convert_type(x, *, new_dtype, **params):
    prim, old = "bitcast_convert_type", x.dtype
    new = dtype_param(prim, "new_dtype", new_dtype)
    for dt in (old, new):
        if dt.kind in _NOT_CONVERTIBLE:
            fail(prim, "only numeric dtypes can be bitcast", expected="numeric dtypes", actual=str(dt))
    if (old.kind in "bc" or new.kind in "bc") and old != new:
        fail(prim, "bool and complex values bitcast only to their own dtype",
             expected=str(old), actual=str(new))
    if old.bits == new.bits:
        shape = x.shape
    elif old.bits > new.bits:
        shape = (*x.shape, old.bits // new.bits)
    else:
        last = x.shape[-1] if x.shape else 1
        if last * old.bits != new.bits:
            fail(prim, f"widening {old} to {new} needs a trailing dimension of size {new.bits // old.bits}",
                 expected=f"shape (..., {new.bits // old.bits})", actual=str(x))
        shape = x.shape[:-1]
    return [ShapedArray(shape, new)]

