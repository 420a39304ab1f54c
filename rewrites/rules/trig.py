"""Trigonometric and hyperbolic identities (float dtypes only: complex special values differ).

The symmetry rules are `exact`: the functions are computed as odd or even functions (C99 specifies
sin, tan, sinh, tanh, asin, atan, asinh, atanh and atan2 in y as odd, cos and cosh as even; XLA's
polynomial approximations are odd/even by construction); checked bit for bit on ±0, ±inf, subnormals
and random values for every float dtype (a nan's sign bit is not compared).
Pythagorean identities turn the nan of an infinite x into 1: `unsafe`, and `guarded` by `finite(x)`
(rewrites.analyses.values), under which the sides differ only by rounding and overflow.
"""

from egglog import eq

from rewrites.analyses.values import finite
from rewrites.rule import EXACT, GUARDED, REAL, UNSAFE, RuleBook
from rewrites.rules.common import T, d, dtype_of, filled, is_float, lit, shape_of, sx, x, y

R = RuleBook("trig")

FLOAT_X = (eq(dtype_of(x)).to(d), is_float())


def _square(t):
    return T.integer_pow(t, 2)


# --- symmetry ---------------------------------------------------------------------------------------
for _name in ("sin", "tan", "sinh", "tanh", "asin", "atan", "asinh", "atanh"):
    _fn = getattr(T, _name)
    R.rw(f"{_name}-neg", EXACT, _fn(T.neg(x)), T.neg(_fn(x)), *FLOAT_X, math=f"{_name}(-x) -> -{_name}(x)")
for _name in ("cos", "cosh"):
    _fn = getattr(T, _name)
    R.rw(f"{_name}-neg", EXACT, _fn(T.neg(x)), _fn(x), *FLOAT_X, math=f"{_name}(-x) -> {_name}(x)")
R.rw("atan2-neg", EXACT, T.atan2(T.neg(y), x), T.neg(T.atan2(y, x)), *FLOAT_X,
     math="atan2(-y, x) -> -atan2(y, x)")
R.rw("logistic-neg", REAL, T.logistic(T.neg(x)), T.sub(lit(1.0), T.logistic(x)), *FLOAT_X,
     math="logistic(-x) -> 1 - logistic(x) (tiny logistic(-x) rounds to 0 on the right)")

# --- Pythagorean identities -------------------------------------------------------------------------
_SIN_COS = T.add(_square(T.sin(x)), _square(T.cos(x)))
_COSH_SINH = T.sub(_square(T.cosh(x)), _square(T.sinh(x)))
_ONES = (filled(1.0, d), eq(shape_of(x)).to(sx), *FLOAT_X)  # ones shaped like x, and their conditions
R.rw("sin-sq-cos-sq", UNSAFE, _SIN_COS, *_ONES,
     math="sin(x)^2 + cos(x)^2 -> 1 (x=±inf gives nan on the left)")
R.rw("sin-sq-cos-sq-finite", GUARDED, _SIN_COS, *_ONES, finite(x),
     math="sin(x)^2 + cos(x)^2 -> 1 for finite x")
R.rw("cosh-sq-sinh-sq", UNSAFE, _COSH_SINH, *_ONES,
     math="cosh(x)^2 - sinh(x)^2 -> 1 (x=±inf gives nan on the left)")
R.rw("cosh-sq-sinh-sq-finite", GUARDED, _COSH_SINH, *_ONES, finite(x),
     math="cosh(x)^2 - sinh(x)^2 -> 1 for finite x (the left side cancels for |x|>19, overflows past 355)")

# --- quotients and exponential forms ---------------------------------------------------------------
R.birw("tan-quotient", REAL, T.div(T.sin(x), T.cos(x)), T.tan(x), *FLOAT_X,
       math="sin(x)/cos(x) <=> tan(x) (x=±inf gives nan on both sides)")
R.rw("tanh-quotient", UNSAFE, T.div(T.sinh(x), T.cosh(x)), T.tanh(x), *FLOAT_X,
     math="sinh(x)/cosh(x) -> tanh(x) (x=±inf gives inf/inf = nan on the left)")
R.rw("tanh-quotient-finite", GUARDED, T.div(T.sinh(x), T.cosh(x)), T.tanh(x), *FLOAT_X, finite(x),
     math="sinh(x)/cosh(x) -> tanh(x) for finite x (sinh and cosh overflow for |x|>710)")
R.birw("sinh-exp", REAL, T.sinh(x), T.div(T.sub(T.exp(x), T.exp(T.neg(x))), lit(2.0)), *FLOAT_X,
       math="sinh(x) <=> (exp(x) - exp(-x))/2 (exp overflows for 709<|x|<710 where sinh does not)")
R.birw("cosh-exp", REAL, T.cosh(x), T.div(T.add(T.exp(x), T.exp(T.neg(x))), lit(2.0)), *FLOAT_X,
       math="cosh(x) <=> (exp(x) + exp(-x))/2 (exp overflows for 709<|x|<710 where cosh does not)")
R.birw("tanh-logistic", REAL, T.tanh(x), T.sub(T.mul(lit(2.0), T.logistic(T.mul(lit(2.0), x))), lit(1.0)),
       *FLOAT_X, math="tanh(x) <=> 2*logistic(2x) - 1 (cancels near 0; ±inf give ±1 on both sides)")

# --- multiple angles ---------------------------------------------------------------------------------
R.birw("sin-double", REAL, T.sin(T.mul(lit(2.0), x)), T.mul(T.mul(lit(2.0), T.sin(x)), T.cos(x)), *FLOAT_X,
       math="sin(2x) <=> 2*sin(x)*cos(x) (2x overflows for |x|>max/2)")
R.birw("cos-double", REAL, T.cos(T.mul(lit(2.0), x)), T.sub(_square(T.cos(x)), _square(T.sin(x))), *FLOAT_X,
       math="cos(2x) <=> cos(x)^2 - sin(x)^2 (2x overflows for |x|>max/2)")
