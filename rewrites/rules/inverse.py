"""Inverse pairs: f(g(x)) -> x (neg∘neg is in `arith`).

f(g(x)) = x over the reals where g's range lies in f's domain; where it does not (exp(log x) for
x < 0), the rule is guarded by a value fact. A rounded or overflowing intermediate (tanh(20) = 1.0,
so atanh(tanh 20) = inf; exp(1000) = inf) is the rounding `real` rules allow. Float dtypes only
where complex branch cuts differ (log(exp z) = z only for |Im z| < pi).
"""

from egglog import String, eq, var

from rewrites.analyses.values import (
    above_minus_one,
    complex_dtype,
    floating,
    holds_all,
    nonneg,
    within_one,
)
from rewrites.rule import EXACT, GUARDED, REAL, UNSAFE, RuleBook
from rewrites.rules.common import T, d, dtype_of, lit, shape_of, sx, x, y, z

R = RuleBook("inverse")

wide = var("wide", String)
conj, conj2 = T.params("conj", "c"), T.params("conj", "c2")  # the other params of matched nodes
convert, convert2 = T.params("convert_element_type", "c"), T.params("convert_element_type", "c2")

# --- exp and log ------------------------------------------------------------------------------------
R.rw("exp-log", GUARDED, T.exp(T.log(x)), x, nonneg(x),
     math="exp(log x) -> x for x >= 0 (exp(log 0) = exp(-inf) = 0; x = -0.0 gives +0; nan stays nan)")
R.rw("exp-log-any", UNSAFE, T.exp(T.log(x)), x, *floating(x),
     math="exp(log x) -> x (x < 0: nan on the left)")
R.rw("log-exp", REAL, T.log(T.exp(x)), x, *floating(x),
     math="log(exp x) -> x (±inf and nan come back; exp overflows past 709)")
R.rw("expm1-log1p", GUARDED, T.expm1(T.log1p(x)), x, above_minus_one(x),
     math="expm1(log1p x) -> x for x >= -1 (log1p(-1) = -inf, expm1(-inf) = -1)")
R.rw("log1p-expm1", REAL, T.log1p(T.expm1(x)), x, *floating(x),
     math="log1p(expm1 x) -> x (expm1(-inf) = -1, log1p(-1) = -inf)")

# --- square roots and reciprocals -------------------------------------------------------------------
R.rw("sqrt-mul-self", GUARDED, T.mul(T.sqrt(x), T.sqrt(x)), x, nonneg(x),
     math="sqrt(x)*sqrt(x) -> x for x >= 0 (x = -0.0 gives +0; inf and nan come back)")
R.rw("sqrt-mul-self-any", UNSAFE, T.mul(T.sqrt(x), T.sqrt(x)), x, *floating(x),
     math="sqrt(x)*sqrt(x) -> x (x < 0: nan on the left)")
R.rw("sqrt-square", REAL, T.sqrt(T.mul(x, x)), T.abs(x), *floating(x),
     math="sqrt(x*x) -> |x| (x*x may overflow or underflow)")
R.rw("recip-recip", REAL, T.div(lit(1.0), T.div(lit(1.0), x)), x, *floating(x),
     math="1/(1/x) -> x (floats; 1/(1/±0) = ±0, 1/(1/inf) = inf; 1/x overflows for subnormal x)")

# --- hyperbolic and trigonometric inverses ---------------------------------------------------------
R.rw("tanh-atanh", GUARDED, T.tanh(T.atanh(x)), x, within_one(x),
     math="tanh(atanh x) -> x for |x| <= 1 (atanh(±1) = ±inf, tanh(±inf) = ±1)")
R.rw("atanh-tanh", REAL, T.atanh(T.tanh(x)), x, *floating(x),
     math="atanh(tanh x) -> x (tanh(±inf) = ±1 gives ±inf back; tanh rounds to ±1 past |x| = 19)")
R.rw("sinh-asinh", REAL, T.sinh(T.asinh(x)), x, *floating(x), math="sinh(asinh x) -> x (±inf, nan come back)")
R.rw("asinh-sinh", REAL, T.asinh(T.sinh(x)), x, *floating(x),
     math="asinh(sinh x) -> x (sinh overflows past |x| = 710)")
R.rw("sin-asin", GUARDED, T.sin(T.asin(x)), x, within_one(x), *floating(x),
     math="sin(asin x) -> x for |x| <= 1 (nan stays nan)")
R.rw("cos-acos", GUARDED, T.cos(T.acos(x)), x, within_one(x), *floating(x),
     math="cos(acos x) -> x for |x| <= 1 (nan stays nan)")

# --- bits, complex parts, conversions ---------------------------------------------------------------
R.rw("not-not", EXACT, getattr(T, "not")(getattr(T, "not")(x)), x, math="not(not x) -> x (bool and bitwise)")
R.rw("conj-conj", EXACT, T.conj(T.conj(x, **conj), **conj2), x,
     eq(dtype_of(x)).to(d), *complex_dtype(),
     math="conj(conj z) -> z (complex z: conj of a real x is complex)")
R.rw("real-complex", EXACT, T.real(T.complex(x, y)), x, eq(shape_of(x)).to(sx), eq(shape_of(y)).to(sx),
     math="real(complex(x, y)) -> x (x, y of one shape)")
R.rw("imag-complex", EXACT, T.imag(T.complex(x, y)), y, eq(shape_of(x)).to(sx), eq(shape_of(y)).to(sx),
     math="imag(complex(x, y)) -> y (x, y of one shape)")
R.rw("complex-parts", EXACT, T.complex(T.real(z), T.imag(z)), z, math="complex(real z, imag z) -> z")
R.rw("convert-same", EXACT, T.convert_element_type(x, d, **convert), x, eq(dtype_of(x)).to(d),
     math="converting x to its own dtype -> x")
R.rw("convert-round-trip", EXACT,
     T.convert_element_type(T.convert_element_type(x, wide, **convert), d, **convert2), x,
     eq(dtype_of(x)).to(d), holds_all(d, wide),
     math="converting x to a dtype that holds all its values and back -> x (f32 -> f64 -> f32)")
