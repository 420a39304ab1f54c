"""Select-guarded variants of guarded rules (PyTensor's `exp(log x) -> switch(x >= 0, x, nan)`): where no value
fact is known, the inner function's real domain moves into the program as a `select_n` guard, so the rewrite is
`real` without any fact.

    f(g(x)) -> select_n(x >= c, nan, h(x))     (select_n(p, a, b) is a where p is false, b where it is true)

Where the guard fails both sides are nan: the left side's inner function is outside its real domain there (log
of a negative, sqrt of a negative: nan under JAX's x64 semantics), and a nan input fails every comparison. The
nan is computed as `sqrt(-1)` on a rank-0 literal and broadcast: the e-graph holds no nan literal (the encoder
never makes one, `rewrites.rules.fold`), and a rank-0 sqrt is one operation per program, not per element.
Every rule is `real`: at x = -0.0 the left side gives +0.0 (exp(log -0) = exp(-inf)) where the select gives x
itself, and the sides round differently. The category is opt-in (`rewrites.rulesets.OPT_IN_CATEGORIES`).
"""

from egglog import Vec, eq, i64

from rewrites.analyses.values import floating
from rewrites.rule import REAL, RuleBook
from rewrites.rules.common import T, lit, shape_of, sx, x
from rewrites.terms import args_list

R = RuleBook("domain")

FLOAT_X = (*floating(x), eq(shape_of(x)).to(sx))


def _nan_like() -> object:
    """nan of x's dtype (`d`) and shape (`sx`)."""
    return T.broadcast_in_dim(T.sqrt(lit(-1.0)), sx, Vec[i64].empty())


def guarded(floor: float, value) -> object:
    """`value` where x >= floor, else nan (also for a nan x, which fails the comparison)."""
    return T.select_n(args_list([T.ge(x, lit(floor)), _nan_like(), value]))


# --- exp and log (PyTensor's local_exp_log) ---------------------------------------------------------
R.rw("exp-log-select", REAL, T.exp(T.log(x)), guarded(0.0, x), *FLOAT_X,
     math="exp(log x) -> x >= 0 ? x : nan (x < 0: log x is nan; x = -0.0 gives +0 on the left, -0 on the right)")
R.rw("expm1-log-select", REAL, T.expm1(T.log(x)), guarded(0.0, T.sub(x, lit(1.0))), *FLOAT_X,
     math="expm1(log x) -> x >= 0 ? x - 1 : nan (x = 0: expm1(-inf) = -1 = 0 - 1; inf and nan come back)")
R.rw("exp-log1p-select", REAL, T.exp(T.log1p(x)), guarded(-1.0, T.add(x, lit(1.0))), *FLOAT_X,
     math="exp(log1p x) -> x >= -1 ? x + 1 : nan (x = -1: exp(-inf) = 0 = -1 + 1)")
R.rw("expm1-log1p-select", REAL, T.expm1(T.log1p(x)), guarded(-1.0, x), *FLOAT_X,
     math="expm1(log1p x) -> x >= -1 ? x : nan (x = -1: expm1(-inf) = -1)")

# --- square roots -----------------------------------------------------------------------------------------
R.rw("sqrt-mul-self-select", REAL, T.mul(T.sqrt(x), T.sqrt(x)), guarded(0.0, x), *FLOAT_X,
     math="sqrt(x)*sqrt(x) -> x >= 0 ? x : nan (x < 0: sqrt x is nan; x = -0.0 gives +0 on the left)")

# --- the logistic of a logit ------------------------------------------------------------------------------
_in_unit = getattr(T, "and")(T.ge(x, lit(0.0)), T.le(x, lit(1.0)))
R.rw("logistic-logit-select", REAL, T.logistic(T.log(T.div(x, T.sub(lit(1.0), x)))),
     T.select_n(args_list([_in_unit, _nan_like(), x])), *FLOAT_X,
     math="logistic(log(x/(1-x))) -> 0 <= x <= 1 ? x : nan (x = 1: logistic(log inf) = 1; x = 0: 0; outside [0, 1] "
          "the quotient is negative or nan; x = -0.0 gives +0 on the left)")
