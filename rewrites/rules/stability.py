"""Numerically stable forms (float dtypes): rewrites that are equal over the reals and put the accurate form of
a formula in the same e-class as the naive one, so that an accuracy-aware cost ("flops+accuracy",
rewrites/accuracy/local.py) can choose it; under a cost without accuracy they are ties or losses, which
extraction breaks as before.

The forms are PyTensor's and the textbook ones: log1p/expm1 for log(1 - x) and 1 - exp(x), logistic(-x) for
1 - logistic(x), softplus and log-sigmoid through max and log1p(exp(-|x|)), logaddexp through max, and the
erf/erfc complements, logsumexp over every axis. Every rule but one is `real`: its sides agree on ±inf and nan
inputs (each math comment says how), and they may differ by roundings: that difference is what the accuracy
cost measures. `log-exp-div` (log-softmax's log(exp(x)/sum)) is `guarded` by y ≥ 0.
"""

import math

from egglog import Vec, eq, i64, var

from rewrites.analyses.values import nonneg
from rewrites.rule import GUARDED, REAL, RuleBook
from rewrites.rules.common import T, d, dtype_of, is_float, lit, shape_of, sx, x, y
from rewrites.terms import args_list

R = RuleBook("stability")

FLOAT_X = (eq(dtype_of(x)).to(d), is_float())


axes = var("axes", Vec[i64])


def _softplus(t):
    """log(1 + exp t) without overflow or cancellation: max(t, 0) + log1p(exp(-|t|))."""
    return T.add(T.max(t, lit(0.0)), T.log1p(T.exp(T.neg(T.abs(t)))))


# --- log1p and expm1 ------------------------------------------------------------------------------------
R.rw("log-one-minus", REAL, T.log(T.sub(lit(1.0), x)), T.log1p(T.neg(x)), *FLOAT_X,
     math="log(1-x) -> log1p(-x) (x = 1: -inf on both sides; x > 1 or inf: nan; x = -inf: inf)")
R.rw("one-minus-exp", REAL, T.sub(lit(1.0), T.exp(x)), T.neg(T.expm1(x)), *FLOAT_X,
     math="1-exp(x) -> -expm1(x) (x = inf: -inf on both sides; x = -inf: 1)")

# --- logistic ---------------------------------------------------------------------------------------------
R.rw("one-minus-logistic", REAL, T.sub(lit(1.0), T.logistic(x)), T.logistic(T.neg(x)), *FLOAT_X,
     math="1-logistic(x) -> logistic(-x) (the converse of logistic-neg; x = inf: 0 on both sides, -inf: 1)")
R.rw("recip-one-plus-exp", REAL, T.div(lit(1.0), T.add(lit(1.0), T.exp(x))), T.logistic(T.neg(x)), *FLOAT_X,
     math="1/(1+exp(x)) -> logistic(-x) (x = inf: 1/inf = 0 = logistic(-inf); x = -inf: 1)")
R.rw("softplus-stable", REAL, T.log1p(T.exp(x)), _softplus(x), *FLOAT_X,
     math="log1p(exp x) -> max(x, 0) + log1p(exp(-|x|)) (x = inf: inf on both sides, no overflow to inf "
          "first; x = -inf: 0)")
R.rw("log-logistic", REAL, T.log(T.logistic(x)), T.neg(_softplus(T.neg(x))), *FLOAT_X,
     math="log(logistic x) -> -softplus(-x) (x = inf: 0 and -0; x = -inf: -inf on both sides)")

# --- logaddexp --------------------------------------------------------------------------------------------
R.rw("logaddexp", REAL, T.log(T.add(T.exp(x), T.exp(y))),
     T.select_n(args_list([T.eq(x, y),
                           T.add(T.max(x, y), T.log1p(T.exp(T.neg(T.abs(T.sub(x, y)))))),
                           T.add(x, lit(math.log(2.0)))])),
     *FLOAT_X, eq(dtype_of(y)).to(d),
     math="log(exp x + exp y) -> x == y ? x + log 2 : max(x, y) + log1p(exp(-|x-y|)) (x = y = ±inf: ±inf "
          "on both sides, where |x - y| would be nan; nan in x or y: nan, max propagating it)")

# --- logsumexp and log-softmax, over every axis ---------------------------------------------------------------
_M = T.reduce_max(x, axes)
_SHIFT = T.select_n(args_list([T.is_finite(_M), lit(0.0), _M]))  # 0 where the max is ±inf or nan
R.rw("logsumexp", REAL, T.log(T.reduce_sum(T.exp(x), axes)),
     T.add(_SHIFT, T.log1p(T.sub(T.reduce_sum(T.exp(T.sub(x, T.broadcast_in_dim(_SHIFT, sx, Vec[i64].empty()))), axes),
                                 lit(1.0)))),
     *FLOAT_X, eq(shape_of(x)).to(sx), eq(axes).to(sx.length().range()),
     math="log(sum(exp x)) -> m + log1p(sum(exp(x - m)) - 1), m = max x where finite, else 0 (the sum is >= 1, "
          "and log1p keeps the rule from matching its own result; all -inf: -inf on both sides; an inf: inf; a "
          "nan: nan; exp overflows nowhere when max x is finite)")
R.rw("log-exp-div", GUARDED, T.log(T.div(T.exp(x), y)), T.sub(x, T.log(y)), *FLOAT_X, nonneg(y),
     math="log(exp(x)/y) -> x - log y for y >= 0 (y = 0: inf on both sides, nan at x = -inf; y = inf: -inf, "
          "nan at x = inf; y < 0 would give log(-0) = -inf against nan at x = -inf)")

# --- erf and erfc -----------------------------------------------------------------------------------------
R.rw("one-minus-erf", REAL, T.sub(lit(1.0), T.erf(x)), T.erfc(x), *FLOAT_X,
     math="1-erf(x) -> erfc(x) (x = inf: 0 on both sides; x = -inf: 2)")
R.rw("one-minus-erfc", REAL, T.sub(lit(1.0), T.erfc(x)), T.erf(x), *FLOAT_X,
     math="1-erfc(x) -> erf(x) (x = inf: 1 on both sides; x = -inf: -1)")
