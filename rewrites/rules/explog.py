"""exp/log/pow laws (float dtypes: over the complex numbers log's branch cut breaks most of them).

Splitting a log needs positive factors (log(x*y) with x, y < 0 is finite, log x + log y nan); the
guarded forms check `positive` from the value analysis, which lets nan through: each such rule's math
says why a nan operand gives nan on both sides. Laws whose sides differ at an infinite or zero
exponent (pow(1, inf) = 1 but inf*log(1) = nan) also ask for a finite, nonzero exponent.
"""

from egglog import eq, f64, i64, ne, var

from rewrites.analyses.values import finite, floating, nonneg, nonzero, positive
from rewrites.rule import EXACT, GUARDED, REAL, UNSAFE, RuleBook
from rewrites.rules.common import T, d, dtype_of, lit, x, y, z

R = RuleBook("explog")

n = var("n", i64)  # an integer_pow exponent

FLOAT_X = floating(x)

# --- exp of sums and differences --------------------------------------------------------------------
R.birw("exp-add", REAL, T.exp(T.add(x, y)), T.mul(T.exp(x), T.exp(y)), *FLOAT_X,
       math="exp(x+y) <=> exp(x)*exp(y) (x = inf, y = -inf: nan = inf*0; either side may overflow)")
R.birw("exp-sub", REAL, T.exp(T.sub(x, y)), T.div(T.exp(x), T.exp(y)), *FLOAT_X,
       math="exp(x-y) <=> exp(x)/exp(y) (x = y = inf: nan = inf/inf)")
R.birw("exp-neg", REAL, T.exp(T.neg(x)), T.div(lit(1.0), T.exp(x)), *FLOAT_X,
       math="exp(-x) <=> 1/exp(x) (exp(inf) = inf = 1/exp(-inf))")
R.birw("exp2-add", REAL, T.exp2(T.add(x, y)), T.mul(T.exp2(x), T.exp2(y)), *FLOAT_X,
       math="2^(x+y) <=> 2^x*2^y (x = inf, y = -inf: nan = inf*0; either side may overflow)")
R.birw("exp2-sub", REAL, T.exp2(T.sub(x, y)), T.div(T.exp2(x), T.exp2(y)), *FLOAT_X,
       math="2^(x-y) <=> 2^x/2^y (x = y = inf: nan = inf/inf)")
R.rw("ipow-exp", REAL, T.integer_pow(T.exp(x), n), T.exp(T.mul(lit(f64.from_i64(n)), x)), *FLOAT_X,
     ne(n).to(i64(0)), n >= -1024, n <= 1024,
     math="exp(x)^n -> exp(n*x) for n != 0 (n = 0 would turn exp(inf*0) = nan into 1)")

# --- log of products and quotients ------------------------------------------------------------------
R.birw("log-mul", GUARDED, T.log(T.mul(x, y)), T.add(T.log(x), T.log(y)), *FLOAT_X, positive(x), positive(y),
       math="log(x*y) <=> log x + log y for x, y > 0 (nan in x or y gives nan on both sides)")
R.birw("log-div", GUARDED, T.log(T.div(x, y)), T.sub(T.log(x), T.log(y)), *FLOAT_X, positive(x), positive(y),
       math="log(x/y) <=> log x - log y for x, y > 0 (x = y = inf: log(nan) = inf - inf = nan)")
R.rw("log-add-merge", UNSAFE, T.add(T.log(x), T.log(y)), T.log(T.mul(x, y)), *FLOAT_X,
     math="log x + log y -> log(x*y) (x, y < 0: nan on the left, a number on the right)")
R.rw("log-recip", GUARDED, T.log(T.div(lit(1.0), x)), T.neg(T.log(x)), *FLOAT_X, positive(x),
     math="log(1/x) -> -log x for x > 0 (x = -0.0 would give log(-inf) = nan vs inf)")
R.rw("log-exp-mul", GUARDED, T.log(T.mul(T.exp(x), y)), T.add(x, T.log(y)), *FLOAT_X, nonneg(y),
     math="log(exp(x)*y) -> x + log y for y >= 0 (y < 0 and x = -inf: log(-0) = -inf vs nan; nan gives nan)")
R.rw("log-sqrt", REAL, T.log(T.sqrt(x)), T.mul(lit(0.5), T.log(x)), *FLOAT_X,
     math="log(sqrt x) -> 0.5*log x (x < 0: nan on both sides; log(sqrt(-0)) = -inf = 0.5*log(-0))")

# --- powers -----------------------------------------------------------------------------------------
R.rw("log-ipow", GUARDED, T.log(T.integer_pow(x, n)), T.mul(lit(f64.from_i64(n)), T.log(x)), *FLOAT_X,
     positive(x), ne(n).to(i64(0)), n >= -1024, n <= 1024,
     math="log(x^n) -> n*log x for x > 0, n != 0 (x = inf: ±inf on both sides; nan gives nan)")
R.rw("log-pow", GUARDED, T.log(T.pow(x, y)), T.mul(y, T.log(x)), *FLOAT_X, eq(dtype_of(y)).to(d),
     positive(x), finite(y), nonzero(y),
     math="log(pow(x, y)) -> y*log x for x > 0 and finite y != 0 (pow(1, inf) = 1 but inf*log 1 = nan; "
          "pow(nan, 0) = 1)")
R.rw("exp-log-mul", GUARDED, T.exp(T.mul(T.log(x), y)), T.pow(x, y), *FLOAT_X,
     positive(x), finite(y), nonzero(y),
     math="exp(log(x)*y) -> pow(x, y) for x > 0 and finite y != 0 (x = inf: exp(±inf) = pow(inf, y))")
R.rw("pow-mul-pow", GUARDED, T.mul(T.pow(x, y), T.pow(x, z)), T.pow(x, T.add(y, z)), *FLOAT_X,
     eq(dtype_of(y)).to(d), eq(dtype_of(z)).to(d), positive(x), finite(x),
     math="pow(x, y)*pow(x, z) -> pow(x, y+z) for finite x > 0 (x = inf, y = -z: nan vs 1; "
          "y = inf, z = -inf: nan on both sides unless x = 1, where both give 1)")
R.rw("pow-two-base", REAL, T.pow(lit(2.0), x), T.exp2(x), *FLOAT_X,
     math="pow(2, x) -> exp2(x) (±inf and nan agree)")

# --- special functions --------------------------------------------------------------------------------------
R.rw("polygamma-zero", EXACT, T.polygamma(lit(0.0), x), T.digamma(x), *FLOAT_X,
     math="polygamma(0, x) -> digamma(x) (XLA's polygamma computes digamma for m = 0)")

# --- the accurate forms -----------------------------------------------------------------------------
R.rw("log-one-plus", REAL, T.log(T.add(lit(1.0), x)), T.log1p(x), *FLOAT_X,
     math="log(1+x) -> log1p(x) (more accurate near 0; x = -1: -inf on both sides)")
R.rw("log-plus-one", REAL, T.log(T.add(x, lit(1.0))), T.log1p(x), *FLOAT_X, math="log(x+1) -> log1p(x)")
R.rw("exp-minus-one", REAL, T.sub(T.exp(x), lit(1.0)), T.expm1(x), *FLOAT_X,
     math="exp(x)-1 -> expm1(x) (more accurate near 0; x = -inf: -1 on both sides)")
R.rw("logistic-def", REAL, T.div(lit(1.0), T.add(lit(1.0), T.exp(T.neg(x)))), T.logistic(x), *FLOAT_X,
     math="1/(1+exp(-x)) -> logistic(x) (x = -inf: 1/inf = 0; x = inf: 1)")
