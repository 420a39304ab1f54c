"""More elementwise ir.numpy functions, built from the ones in `elementwise` and `lax` as JAX builds them."""

from __future__ import annotations

import numpy as np

from ir import dtypes as _dt
from ir import lax
from ir.numpy._base import _promote_args, bool_, int32, promote_dtypes_inexact
from ir.numpy.creation import full_like, zeros_like
from ir.numpy.elementwise import (
    abs,
    arctan2,
    equal,
    imag,
    invert,
    isinf,
    isnan,
    left_shift,
    less,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    nextafter,
    real,
    right_shift,
    sin,
    sqrt,
    true_divide,
    where,
)
from ir.tracing import aval_of, literal

__all__ = [
    'angle', 'bitwise_count', 'bitwise_invert', 'bitwise_left_shift', 'bitwise_right_shift', 'copysign',
    'deg2rad', 'degrees', 'rad2deg', 'radians', 'fabs', 'fmax', 'fmin', 'hypot', 'i0', 'isclose', 'allclose',
    'iscomplex', 'isreal', 'isneginf', 'isposinf', 'ldexp', 'frexp', 'logaddexp2', 'modf', 'nan_to_num',
    'reciprocal', 'rint', 'signbit', 'sinc', 'spacing', 'trunc', 'gcd', 'lcm',
]

bitwise_invert, bitwise_left_shift, bitwise_right_shift = invert, left_shift, right_shift


def _const(value, like):
    return literal(value, aval_of(like).dtype, False)


def angle(z, deg: bool = False):
    (z,) = promote_dtypes_inexact(z)
    out = arctan2(imag(z), real(z))
    return rad2deg(out) if deg else out


def bitwise_count(x):
    (x,) = _promote_args("bitwise_count", x)
    return lax.convert_element_type(lax.population_count(abs(x)), lax.to_dtype("uint8"))


def copysign(x1, x2):
    x1, x2 = _promote_args("copysign", x1, x2, kind="inexact")
    return where(signbit(x2), lax.neg(lax.abs(x1)), lax.abs(x1))


def deg2rad(x):
    (x,) = _promote_args("deg2rad", x, kind="inexact")
    return lax.mul(x, _const(np.pi / 180, x))


def rad2deg(x):
    (x,) = _promote_args("rad2deg", x, kind="inexact")
    return lax.mul(x, _const(180 / np.pi, x))


degrees, radians = rad2deg, deg2rad


def fabs(x):
    (x,) = _promote_args("fabs", x, kind="inexact")
    return lax.abs(x)


def fmax(x1, x2):
    """The maximum ignoring NaNs (NaN only where both are)."""
    return where(isnan(x1), x2, where(isnan(x2), x1, maximum(x1, x2)))


def fmin(x1, x2):
    return where(isnan(x1), x2, where(isnan(x2), x1, minimum(x1, x2)))


def hypot(x1, x2):
    x1, x2 = _promote_args("hypot", x1, x2, kind="inexact")
    x1, x2 = lax.abs(x1), lax.abs(x2)
    idx_inf = lax.bitwise_or(isinf(x1), isinf(x2))
    x1, x2 = maximum(x1, x2), minimum(x1, x2)
    x = where(x1 == 0, x1, x1 * sqrt(1 + lax.square(true_divide(x2, where(x1 == 0, _const(1, x1), x1)))))
    return where(idx_inf, _const(np.inf, x), x)


def i0(x):
    (x,) = _promote_args("i0", x, kind="inexact")
    return lax.mul(lax.bessel_i0e(x), lax.exp(lax.abs(x)))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
    a, b = _promote_args("isclose", a, b, kind="inexact")
    dt = aval_of(a).dtype
    real_dt = lax.to_dtype(_dt.finfo(dt).dtype)
    rtol_, atol_ = literal(rtol, real_dt, False), literal(atol, real_dt, False)
    out = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol_, lax.mul(rtol_, lax.abs(b))))
    both_inf = logical_and(isinf(a), isinf(b))
    out = where(both_inf, equal(a, b), logical_and(out, logical_not(logical_or(isinf(a), isinf(b)))))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(a), isnan(b)))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
    from ir.numpy.reductions import all as all_
    return all_(isclose(a, b, rtol, atol, equal_nan))


def iscomplex(x):
    i = imag(x)
    return lax.ne(i, _const(0, i))


def isreal(x):
    i = imag(x)
    return lax.eq(i, _const(0, i))


def isneginf(x):
    (x,) = _promote_args("isneginf", x)
    return lax.eq(x, _const(-np.inf, x)) if aval_of(x).dtype.is_float else full_like(x, False, dtype=bool_)


def isposinf(x):
    (x,) = _promote_args("isposinf", x)
    return lax.eq(x, _const(np.inf, x)) if aval_of(x).dtype.is_float else full_like(x, False, dtype=bool_)


def ldexp(x1, x2):
    (x1,) = _promote_args("ldexp", x1, kind="inexact")
    return multiply(x1, lax.exp2(lax.convert_element_type(x2, aval_of(x1).dtype)))


def frexp(x):
    """Mantissa in [0.5, 1) and integer exponent with x = m * 2**e (0 for 0, inf and NaN)."""
    (x,) = _promote_args("frexp", x, kind="inexact")
    finite_nonzero = logical_and(lax.is_finite(x), lax.ne(x, _const(0, x)))
    safe = where(finite_nonzero, lax.abs(x), _const(1, x))
    e = lax.add(lax.floor(lax.div(lax.log(safe), _const(np.log(2), x))), _const(1, x))
    m = lax.div(safe, lax.exp2(e))
    # log rounding can be off by one at powers of two
    e = where(lax.ge(m, _const(1, x)), lax.add(e, _const(1, x)), where(lax.lt(m, _const(0.5, x)),
                                                                       lax.sub(e, _const(1, x)), e))
    m = lax.mul(lax.div(safe, lax.exp2(e)), lax.sign(x))
    return where(finite_nonzero, m, x), where(finite_nonzero, lax.convert_element_type(e, int32),
                                              zeros_like(x, dtype=int32))


def logaddexp2(x1, x2):
    x1, x2 = _promote_args("logaddexp2", x1, x2, kind="inexact")
    ln2 = _const(np.log(2), x1)
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    stable = lax.add(amax, lax.div(lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))), ln2))
    return where(isnan(delta), lax.add(x1, x2), stable)


def modf(x):
    (x,) = _promote_args("modf", x, kind="inexact")
    whole = trunc(x)
    return lax.sub(x, whole), whole


def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None):
    (x,) = _promote_args("nan_to_num", x)
    dt = aval_of(x).dtype
    if not dt.is_inexact:
        return x
    if dt.is_complex:
        return lax.complex(nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = _dt.finfo(dt)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    x = where(isnan(x), _const(nan, x), x)
    x = where(isposinf(x), _const(posinf, x), x)
    return where(isneginf(x), _const(neginf, x), x)


def reciprocal(x):
    (x,) = _promote_args("reciprocal", x, kind="inexact")
    return lax.integer_pow(x, -1)


def rint(x):
    (x,) = _promote_args("rint", x, kind="inexact")
    return lax.round(x, 1)


def signbit(x):
    (x,) = _promote_args("signbit", x)
    dt = aval_of(x).dtype
    if dt.is_integer:
        return lax.lt(x, _const(0, x))
    if dt.is_bool:
        return full_like(x, False, dtype=bool_)
    if not dt.is_float:
        raise TypeError(f"signbit needs a real operand, got {dt}")
    int_dt = {16: "int16", 32: "int32", 64: "int64"}[dt.bits]
    bits = lax.bitcast_convert_type(x, lax.to_dtype(int_dt))
    return lax.lt(bits, literal(0, lax.to_dtype(int_dt), False))


def sinc(x):
    (x,) = _promote_args("sinc", x, kind="inexact")
    eq_zero = lax.eq(x, _const(0, x))
    pi_x = lax.mul(_const(np.pi, x), where(eq_zero, _const(1, x), x))
    return where(eq_zero, _const(1, x), lax.div(sin(pi_x), pi_x))


def spacing(x):
    (x,) = _promote_args("spacing", x, kind="inexact")
    toward = where(signbit(x), _const(-np.inf, x), _const(np.inf, x))
    return lax.sub(nextafter(x, toward), x)


def trunc(x):
    (x,) = _promote_args("trunc", x, kind="numeric")
    if aval_of(x).dtype.is_integer:
        return x
    return where(less(x, _const(0, x)), lax.ceil(x), lax.floor(x))


def gcd(x1, x2):
    """Euclid's algorithm as a `while` loop, as JAX."""
    from ir.control import while_loop
    x1, x2 = _promote_args("gcd", x1, x2)
    if not aval_of(x1).dtype.is_integer:
        raise ValueError("gcd needs integer arguments")
    from ir.numpy.manipulation import broadcast_arrays
    x1, x2 = broadcast_arrays(lax.abs(x1), lax.abs(x2))

    def cond(carry):
        _, b = carry
        from ir.numpy.reductions import any as any_
        return any_(lax.ne(b, _const(0, b)))

    def body(carry):
        a, b = carry
        nonzero = lax.ne(b, _const(0, b))
        safe_b = where(nonzero, b, _const(1, b))
        return where(nonzero, b, a), where(nonzero, lax.rem(a, safe_b), b)

    return while_loop(cond, body, (x1, x2))[0]


def lcm(x1, x2):
    x1, x2 = _promote_args("lcm", x1, x2)
    d = gcd(x1, x2)
    safe = where(lax.eq(d, _const(0, d)), _const(1, d), d)
    return where(lax.eq(d, _const(0, d)), _const(0, d), lax.abs(multiply(x1, lax.div(x2, safe))))

