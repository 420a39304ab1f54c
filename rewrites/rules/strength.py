"""Strength reduction: integer powers as products, pow with literal exponents, x+x, division by constants.

`integer_pow(x, n)` is computed as JAX lowers it (`lax._integer_pow`): by repeated squaring, with
x^-n = 1/x^n and x^0 = 1 for every x (nan and inf included). Products that reproduce that order are
`exact`; other groupings of the same factors round differently (`real`). `pow` is C's pow: pow(x, ±0)
= 1 and pow(x, 1) = x for every float x, while other literal exponents round differently from products.
"""

from egglog import String, Vec, eq, f64, i64, ne, var

from rewrites.analyses.values import INF, exact_reciprocal, floating, nonneg, not_complex, positive
from rewrites.rule import EXACT, GUARDED, REAL, UNSAFE, RuleBook
from rewrites.rules.common import T, a, b, d, dtype_of, lit, shape_of, sx, x

R = RuleBook("strength")

n, m = var("n", i64), var("m", i64)  # integer_pow exponents
dx = var("dx", String)  # the base's dtype where the exponent's may differ
F64 = "float64"


def ones_like(dtype=d):
    """An array of x's shape (`sx`) filled with 1 of `dtype`."""
    return T.broadcast_in_dim(lit(1.0, dtype), sx, Vec[i64].empty())


def square(t):
    return T.mul(t, t)


# --- integer_pow ------------------------------------------------------------------------------------
R.rw("ipow-zero", EXACT, T.integer_pow(x, 0), ones_like(), eq(shape_of(x)).to(sx), eq(dtype_of(x)).to(d),
     math="x^0 -> 1 (JAX: full_like(x, 1), also for nan and inf)")
R.rw("ipow-one", EXACT, T.integer_pow(x, 1), x, math="x^1 -> x")
R.rw("ipow-neg-one", EXACT, T.integer_pow(x, -1), T.div(lit(1.0), x), eq(dtype_of(x)).to(d),
     math="x^-1 -> 1/x (JAX: div(1, x))")
R.rw("ipow-even", EXACT, T.integer_pow(x, n), T.integer_pow(square(x), n / 2), eq(n % 2).to(i64(0)),
     ne(n).to(i64(0)), math="x^2k -> (x*x)^k (repeated squaring squares first when the low bit is 0)")
R.rw("ipow-odd", REAL, T.integer_pow(x, n), T.mul(x, T.integer_pow(square(x), (n - 1) / 2)),
     eq(n % 2).to(i64(1)), n >= 3,
     math="x^(2k+1) -> x*(x*x)^k (exact for k <= 2; repeated squaring groups larger k differently)")
R.rw("mul-self-ipow", EXACT, square(x), T.integer_pow(x, 2), math="x*x -> x^2 (JAX computes x^2 as x*x)")
R.birw("square-mul", EXACT, T.square(x), square(x), math="square(x) <=> x*x (XLA multiplies)")
R.rw("ipow-ipow", REAL, T.integer_pow(T.integer_pow(x, n), m), T.integer_pow(x, n * m),
     n <= 1024, n >= -1024, m <= 1024, m >= -1024,
     math="(x^n)^m -> x^(n*m) (wrapping integers agree: both are products mod 2^bits)")
R.rw("mul-ipow", REAL, T.mul(x, T.integer_pow(x, n)), T.integer_pow(x, n + 1), n >= 1, n <= 1024,
     math="x*x^n -> x^(n+1) for n >= 1 (n = -1 would turn 0*inf = nan into 1)")

# --- x+x, division by constants ---------------------------------------------------------------------
R.birw("add-self", EXACT, T.add(x, x), T.mul(x, lit(2.0)), eq(dtype_of(x)).to(d), *not_complex(),
       math="x+x <=> x*2 (exact, overflow alike; not complex: (a+bi)*2 computes 0*b, nan for b = inf)")
R.rw("div-pow2", EXACT, T.div(x, lit(a)), T.mul(x, lit(b)), eq(exact_reciprocal(a)).to(b), *floating(x),
     math="x/c -> x*(1/c) for c = ±2^k, |k| <= 14: both round the same exact value x*2^-k")
R.rw("div-const", REAL, T.div(x, lit(a, F64)), T.mul(x, lit(1.0 / a, F64)), abs(a) < INF,
     abs(1.0 / a) < INF, math="x/c -> x*(1/c) for float64 literals c with a finite 1/c (1/c is rounded)")

# --- pow with literal exponents ---------------------------------------------------------------------
R.rw("pow-zero", EXACT, T.pow(x, lit(0.0)), ones_like(dx), eq(shape_of(x)).to(sx), *floating(x, dx),
     math="pow(x, 0) -> 1 (C: for every float x, nan included)")
R.rw("pow-one", EXACT, T.pow(x, lit(1.0)), x, *floating(x, dx), math="pow(x, 1) -> x (C, float x)")
R.rw("pow-int", REAL, T.pow(x, lit(a)), T.integer_pow(x, a.to_i64()), *floating(x, dx),
     eq(f64.from_i64(a.to_i64())).to(a), a >= -64.0, a <= 64.0,
     math="pow(x, n) -> x^n for an integer literal n (products round differently; pow(-0, -1) = -inf = 1/-0)")
R.rw("pow-half", UNSAFE, T.pow(x, lit(0.5)), T.sqrt(x), *floating(x),
     math="pow(x, 0.5) -> sqrt(x) (pow(-inf, 0.5) = inf but sqrt(-inf) = nan)")
R.rw("pow-half-nonneg", GUARDED, T.pow(x, lit(0.5)), T.sqrt(x), *floating(x), nonneg(x),
     math="pow(x, 0.5) -> sqrt(x) for x >= 0 (x = -0.0: +0 vs -0; nan stays nan)")
R.rw("pow-neg-half", GUARDED, T.pow(x, lit(-0.5)), T.rsqrt(x), *floating(x), positive(x),
     math="pow(x, -0.5) -> rsqrt(x) for x > 0 (x = -0.0 would give +inf vs -inf; "
          "pow(inf, -0.5) = 0 = rsqrt(inf))")
R.birw("rsqrt-recip-sqrt", REAL, T.rsqrt(x), T.div(lit(1.0), T.sqrt(x)), *floating(x),
       math="rsqrt(x) <=> 1/sqrt(x) (XLA's rsqrt rounds differently; rsqrt(-0) = -inf = 1/-0)")
