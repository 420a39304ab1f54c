"""Elementwise ir.numpy functions: arithmetic, comparisons, bitwise and logical operations."""

from __future__ import annotations

import numpy as np

from ir import lax
from ir.numpy._base import (
    _check_arraylike,
    _promote_args,
    bool_,
    promote_dtypes,
    promote_dtypes_numeric,
    promote_shapes,
)
from ir.numpy.creation import full_like, zeros_like
from ir.numpy.manipulation import broadcast_arrays
from ir.tracing import aval_of, literal

__all__ = [
    'sin', 'cos', 'tan', 'arcsin', 'arccos', 'arctan', 'sinh', 'cosh', 'tanh', 'arcsinh', 'arccosh',
    'arctanh', 'exp', 'exp2', 'expm1', 'log', 'log1p', 'sqrt', 'cbrt', 'asin', 'acos', 'atan', 'asinh',
    'acosh', 'atanh', 'log2', 'log10', 'negative', 'positive', 'abs', 'absolute', 'sign', 'floor', 'ceil',
    'round', 'around', 'square', 'real', 'imag', 'conj', 'conjugate', 'isfinite', 'isnan', 'isinf', 'add',
    'subtract', 'multiply', 'maximum', 'minimum', 'equal', 'not_equal', 'less', 'less_equal', 'greater',
    'greater_equal', 'arctan2', 'atan2', 'nextafter', 'true_divide', 'divide', 'bitwise_and', 'bitwise_or',
    'bitwise_xor', 'left_shift', 'right_shift', 'invert', 'bitwise_not', 'logical_and', 'logical_or',
    'logical_xor', 'logical_not', 'power', 'pow', 'float_power', 'floor_divide', 'remainder', 'mod', 'fmod',
    'divmod', 'logaddexp', 'where', 'select', 'clip', 'heaviside',
]

def _unary_inexact(lax_fn, name):
    def fn(x):
        (x,) = _promote_args(name, x, kind="inexact")
        return lax_fn(x)
    fn.__name__ = name
    return fn


sin, cos, tan = (_unary_inexact(f, n) for f, n in ((lax.sin, "sin"), (lax.cos, "cos"), (lax.tan, "tan")))
arcsin, arccos, arctan = (_unary_inexact(f, n) for f, n in ((lax.asin, "arcsin"), (lax.acos, "arccos"),
                                                          (lax.atan, "arctan")))
sinh, cosh, tanh = (_unary_inexact(f, n) for f, n in ((lax.sinh, "sinh"), (lax.cosh, "cosh"),
                                                     (lax.tanh, "tanh")))
arcsinh, arccosh, arctanh = (_unary_inexact(f, n) for f, n in ((lax.asinh, "arcsinh"), (lax.acosh, "arccosh"),
                                                             (lax.atanh, "arctanh")))
exp, exp2, expm1 = (_unary_inexact(f, n) for f, n in ((lax.exp, "exp"), (lax.exp2, "exp2"),
                                                     (lax.expm1, "expm1")))
log, log1p = _unary_inexact(lax.log, "log"), _unary_inexact(lax.log1p, "log1p")
sqrt, cbrt = _unary_inexact(lax.sqrt, "sqrt"), _unary_inexact(lax.cbrt, "cbrt")
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


def _log_base(base: float, name: str):
    def fn(x):
        (x,) = _promote_args(name, x, kind="inexact")
        return lax.div(lax.log(x), literal(np.log(base), aval_of(x).dtype, False))
    fn.__name__ = name
    return fn


log2, log10 = _log_base(2.0, "log2"), _log_base(10.0, "log10")


def negative(x):
    (x,) = _promote_args("negative", x)
    if aval_of(x).dtype.is_bool:
        raise TypeError("negative does not accept dtype bool")
    return lax.neg(x)


def positive(x):
    (x,) = _promote_args("positive", x)
    return x


def abs(x):  # noqa: A001  (NumPy's name)
    (x,) = _promote_args("abs", x)
    dt = aval_of(x).dtype
    return x if dt.kind in ("u", "b") else lax.abs(x)


absolute = abs


def sign(x):
    (x,) = _promote_args("sign", x)
    return lax.sign(x)


def _round_like(lax_fn, name):
    def fn(x):
        (x,) = _promote_args(name, x, kind="numeric")
        return x if aval_of(x).dtype.is_integer else lax_fn(x)
    fn.__name__ = name
    return fn


floor, ceil = _round_like(lax.floor, "floor"), _round_like(lax.ceil, "ceil")


def round(a, decimals: int = 0):  # noqa: A001
    """Round half to even, as NumPy (`round[rounding_method=1]`)."""
    (a,) = _promote_args("round", a, kind="numeric")
    dt = aval_of(a).dtype
    if dt.is_integer:
        if decimals < 0:
            raise NotImplementedError("round: negative decimals for integer arrays")
        return a
    if decimals == 0:
        return lax.round(a, 1)
    factor = literal(10.0 ** decimals, dt, False)
    return lax.div(lax.round(lax.mul(a, factor), 1), factor)


around = round


def square(x):
    (x,) = _promote_args("square", x, kind="numeric")
    return lax.square(x)


def real(x):
    (x,) = _promote_args("real", x)
    return lax.real(x) if aval_of(x).dtype.is_complex else x


def imag(x):
    (x,) = _promote_args("imag", x)
    return lax.imag(x) if aval_of(x).dtype.is_complex else zeros_like(x)


def conj(x):
    (x,) = _promote_args("conj", x)
    return lax.conj(x) if aval_of(x).dtype.is_complex else x


conjugate = conj


def isfinite(x):
    (x,) = _promote_args("isfinite", x)
    dt = aval_of(x).dtype
    if dt.is_float:
        return lax.is_finite(x)
    if dt.is_complex:
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return full_like(x, True, dtype=bool_)


def isnan(x):
    (x,) = _promote_args("isnan", x)
    return lax.ne(x, x) if aval_of(x).dtype.is_inexact else full_like(x, False, dtype=bool_)


def isinf(x):
    (x,) = _promote_args("isinf", x)
    dt = aval_of(x).dtype
    if not dt.is_float:
        return full_like(x, False, dtype=bool_)
    return lax.eq(lax.abs(x), literal(np.inf, dt, False))


def _binary(lax_fn, name: str, kind: str = ""):
    def fn(x1, x2):
        x1, x2 = _promote_args(name, x1, x2, kind=kind)
        return lax_fn(x1, x2)
    fn.__name__ = name
    return fn


add = _binary(lax.add, "add")
subtract = _binary(lax.sub, "subtract")
multiply = _binary(lax.mul, "multiply")
maximum = _binary(lax.max, "maximum")
minimum = _binary(lax.min, "minimum")
equal = _binary(lax.eq, "equal")
not_equal = _binary(lax.ne, "not_equal")
less = _binary(lax.lt, "less")
less_equal = _binary(lax.le, "less_equal")
greater = _binary(lax.gt, "greater")
greater_equal = _binary(lax.ge, "greater_equal")
arctan2 = _binary(lax.atan2, "arctan2", "inexact")
atan2 = arctan2
nextafter = _binary(lax.nextafter, "nextafter", "inexact")
true_divide = _binary(lax.div, "true_divide", "inexact")
divide = true_divide


def _bitwise(lax_fn, name: str):
    def fn(x1, x2):
        x1, x2 = _promote_args(name, x1, x2)
        dt = aval_of(x1).dtype
        if not (dt.is_integer or dt.is_bool):
            raise TypeError(f"{name} needs integer or bool operands, got {dt}")
        return lax_fn(x1, x2)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise(lax.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(lax.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(lax.bitwise_xor, "bitwise_xor")
left_shift = _bitwise(lax.shift_left, "left_shift")


def right_shift(x1, x2):
    x1, x2 = _promote_args("right_shift", x1, x2)
    dt = aval_of(x1).dtype
    if not dt.is_integer:
        raise TypeError(f"right_shift needs integer operands, got {dt}")
    return (lax.shift_right_logical if dt.kind == "u" else lax.shift_right_arithmetic)(x1, x2)


def invert(x):
    (x,) = _promote_args("invert", x)
    dt = aval_of(x).dtype
    if not (dt.is_integer or dt.is_bool):
        raise TypeError(f"invert needs an integer or bool operand, got {dt}")
    return lax.bitwise_not(x)


bitwise_not = invert


def _logical(lax_fn, name: str):
    def fn(*xs):
        xs = [x if aval_of(x).dtype.is_bool else not_equal(x, 0) for x in xs]
        return lax_fn(*promote_shapes(name, *xs))
    fn.__name__ = name
    return fn


logical_and = _logical(lax.bitwise_and, "logical_and")
logical_or = _logical(lax.bitwise_or, "logical_or")
logical_xor = _logical(lax.bitwise_xor, "logical_xor")
logical_not = _logical(lax.bitwise_not, "logical_not")


def power(x1, x2):
    """`x ** 2` with a static integer exponent is `integer_pow[y=2]`, as in JAX."""
    _check_arraylike("power", x1, x2)
    if isinstance(x2, (int, np.integer)) and not isinstance(x2, (bool, np.bool_)):
        (x1,) = promote_dtypes_numeric(x1)
        return lax.integer_pow(x1, int(x2))
    x1, x2 = promote_shapes("power", x1, x2)
    a1, a2 = aval_of(x1), aval_of(x2)
    if a1.dtype.is_inexact and a2.dtype.is_integer:
        return lax.pow(x1, x2)
    x1, x2 = promote_dtypes_numeric(x1, x2)
    if not aval_of(x1).dtype.is_inexact:
        raise NotImplementedError("power: integer base with a traced integer exponent is not supported "
                                  "(use a static Python int exponent)")
    return lax.pow(x1, x2)


pow = power  # noqa: A001


def float_power(x1, x2):
    x1, x2 = _promote_args("float_power", x1, x2, kind="inexact")
    return lax.pow(x1, x2)


def floor_divide(x1, x2):
    x1, x2 = _promote_args("floor_divide", x1, x2, kind="numeric")
    dt = aval_of(x1).dtype
    if dt.kind == "u":
        return lax.div(x1, x2)
    if dt.is_integer:
        quotient = lax.div(x1, x2)
        select = logical_and(not_equal(lax.sign(x1), lax.sign(x2)), not_equal(lax.rem(x1, x2), 0))
        return where(select, subtract(quotient, 1), quotient)
    if dt.is_complex:
        raise NotImplementedError("floor_divide of complex values")
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1, x2):
    mod = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, mod), x2)
    ind = lax.bitwise_and(not_equal(mod, 0), not_equal(lax.sign(x2), lax.sign(mod)))
    mod = lax.select(ind, add(mod, x2), mod)
    div = lax.select(ind, subtract(div, 1), div)
    return lax.round(div, 0), mod


def remainder(x1, x2):
    """Python's `%`: the result has the sign of the divisor."""
    x1, x2 = _promote_args("remainder", x1, x2, kind="numeric")
    dt = aval_of(x1).dtype
    zero = literal(0, dt, False)
    if aval_of(x2).dtype.is_integer:
        x2 = where(equal(x2, 0), literal(1, dt, False), x2)
    trunc_mod = lax.rem(x1, x2)
    trunc_mod_not_zero = lax.ne(trunc_mod, zero)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)), trunc_mod_not_zero)
    return lax.select(do_plus, lax.add(trunc_mod, x2), trunc_mod)


mod = remainder


def fmod(x1, x2):
    x1, x2 = _promote_args("fmod", x1, x2, kind="numeric")
    return lax.rem(x1, x2)


def divmod(x1, x2):  # noqa: A001
    return floor_divide(x1, x2), remainder(x1, x2)


def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)), stably; JAX's custom_jvp body, inlined."""
    x1, x2 = _promote_args("logaddexp", x1, x2, kind="inexact")
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    stable = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
    return lax.select(isnan(delta), lax.add(x1, x2), stable)


def where(condition, x=None, y=None):
    """`x` where `condition` else `y` (select_n(condition, y, x) after broadcasting)."""
    if x is None or y is None:
        raise NotImplementedError("where(condition) with one argument (nonzero) has a data-dependent shape")
    _check_arraylike("where", condition, x, y)
    if not aval_of(condition).dtype.is_bool:
        condition = not_equal(condition, 0)
    x, y = promote_dtypes(x, y)
    if aval_of(condition).ndim == 0:
        x, y = broadcast_arrays(x, y)
    else:
        condition, x, y = broadcast_arrays(condition, x, y)
    return lax.select(condition, x, y)


def select(condlist, choicelist, default=0):
    out = default
    for cond, choice in reversed(list(zip(condlist, choicelist, strict=True))):
        out = where(cond, choice, out)
    return out


def clip(a, min=None, max=None):  # noqa: A002
    if min is not None:
        a = maximum(min, a)
    if max is not None:
        a = minimum(max, a)
    return a


def heaviside(x1, x2):
    x1, x2 = _promote_args("heaviside", x1, x2, kind="inexact")
    zero = literal(0, aval_of(x1).dtype, False)
    return where(lax.lt(x1, zero), zero, where(lax.gt(x1, zero), literal(1, aval_of(x1).dtype, False), x2))
