"""JVP and VJP rules of binary and n-ary elementwise primitives (and select_n, clamp). An elementwise
op's linearization is diagonal, so one `linear` entry per operand gives both its JVP and its VJP.
Forms follow JAX's own rules (jax/_src/lax/lax.py, jax/_src/lax/special.py) so that special values
give JAX's results: `select(p, a, b)` there is `select_n(p, b, a)` here, `_replace_zero(x)` is
`select_n(x == 0, x, 1)`, and `_ones(x)`-style constants are broadcast literals.

Without entries, as in JAX: nextafter, zeta, igamma_grad_a and random_gamma_grad (no JVP rule), the
`m` operand of polygamma and the `a`, `b` operands of regularized_incomplete_beta (JAX's rules raise).
"""

from __future__ import annotations

from egglog import Vec, eq, i64, ne

from rewrites.terms import Args, Arr, T, args_list, dtype_of
from transforms.ad.rule import ADBook, Leading, dtype, shape, zeros_like
from transforms.arglists import onehot

A = ADBook("binary")
EMPTY = Vec[i64].empty()


# `like` operands must be terms of the matched node (operands, result, seed): their shape and dtype
# are read in the rule's query, which only sees terms already in the e-graph.


def _lit(value: float, like: Arr) -> Arr:
    """A rank-0 literal of `like`'s dtype (elementwise ops broadcast it)."""
    return Arr.scalar(value, dtype(like))


def _full(value: float, like: Arr, dtype_like: Arr | None = None) -> Arr:
    """JAX's `full_like(like, value)`: an array of `like`'s shape and dtype (or `dtype_like`'s)."""
    return T.broadcast_in_dim(_lit(value, like if dtype_like is None else dtype_like), shape(like), EMPTY)


_and = getattr(T, "and")


def _select(pred: Arr, *cases: Arr) -> Arr:
    return T.select_n(args_list([pred, *cases]))


def _replace_zero(x: Arr, like: Arr | None = None) -> Arr:
    """x with its zeros replaced by ones; `like`: a matched term of x's shape and dtype if x is built."""
    like = x if like is None else like
    return _select(T.eq(x, _lit(0.0, like)), x, _full(1.0, like))


def _balanced_eq(x: Arr, z: Arr, y: Arr) -> Arr:
    """1 where x attains the max/min z, halved where y ties with it, else 0."""
    return T.div(_select(T.eq(x, z), _full(0.0, z), _full(1.0, z)),
                 _select(T.eq(y, z), _full(1.0, z), _full(2.0, z)))


# --- arithmetic ---------------------------------------------------------------------------------

for _prim in ("add", "add_any"):
    A.linear(_prim, 0, lambda g, x, y, ans: g, math="d(x + y) = dx + dy")
    A.linear(_prim, 1, lambda g, x, y, ans: g, math="d(x + y) = dx + dy")
A.linear("sub", 0, lambda g, x, y, ans: g, math="d(x - y) = dx - dy")
A.linear("sub", 1, lambda g, x, y, ans: T.neg(g), math="d(x - y) = dx - dy")
A.linear("mul", 0, lambda g, x, y, ans: T.mul(g, y), math="d(x y) = dx y + x dy")
A.linear("mul", 1, lambda g, x, y, ans: T.mul(x, g), math="d(x y) = dx y + x dy")
A.linear("div", 0, lambda g, x, y, ans: T.div(g, y), math="d(x / y) = dx / y - x dy / y^2")
A.linear("div", 1, lambda g, x, y, ans: T.mul(T.mul(T.neg(g), x), T.integer_pow(y, -2)),
         math="d(x / y) = dx / y - x dy / y^2")
A.linear("rem", 0, lambda g, x, y, ans: g, math="d rem(x, y) = dx - trunc(x / y) dy")
A.linear("rem", 1, lambda g, x, y, ans: T.mul(T.neg(g), T.mul(T.sign(T.div(x, y)), T.floor(T.abs(T.div(x, y))))),
         math="d rem(x, y) = dx - sign(x / y) floor|x / y| dy")

# pow's base: JAX's form depends on whether the exponent is an integer array (told apart here by
# dtype: a float or complex exponent has the base's dtype, an integer one does not).
A.linear("pow", 0, lambda g, x, y, ans: T.mul(g, T.mul(y, T.pow(x, T.sub(y, _lit(1.0, y))))),
         variant="inexact", when=lambda x, y, ans: [eq(dtype_of(y)).to(dtype_of(x))],
         math="d x^y = y x^(y-1) dx (float exponent)")


def _pow_int_exponent(g, x, y, ans):
    yf = T.convert_element_type(y, dtype(x))
    one, zero = _lit(1.0, x), _lit(0.0, x)
    replaced = _select(T.eq(yf, zero), yf, _full(1.0, y, dtype_like=x))
    jac = T.mul(replaced, T.pow(x, T.sub(yf, one)))
    return T.mul(g, _select(T.eq(yf, zero), jac, zeros_like(ans)))


A.linear("pow", 0, _pow_int_exponent, variant="integer", when=lambda x, y, ans: [ne(dtype_of(y)).to(dtype_of(x))],
         math="d x^n = (n == 0 ? 0 : n x^(n-1)) dx (integer exponent)")
A.linear("pow", 1, lambda g, x, y, ans: T.mul(g, T.mul(T.log(_replace_zero(x)), ans)),
         math="d x^y = log(x) x^y dy (log 1 where x = 0)")

for _prim in ("max", "min"):
    A.linear(_prim, 0, lambda g, x, y, ans: T.mul(g, _balanced_eq(x, ans, y)),
             math="d max(x, y) = [x wins] dx + [y wins] dy, halves at ties")
    A.linear(_prim, 1, lambda g, x, y, ans: T.mul(g, _balanced_eq(y, ans, x)),
             math="d max(x, y) = [x wins] dx + [y wins] dy, halves at ties")


def _sum_squares(x, y):
    return T.add(T.square(x), T.square(y))


A.linear("atan2", 0, lambda g, x, y, ans: T.mul(g, T.div(y, _sum_squares(x, y))),
         math="d atan2(x, y) = (y dx - x dy) / (x^2 + y^2)")
A.linear("atan2", 1, lambda g, x, y, ans: T.mul(g, T.div(T.neg(x), _sum_squares(x, y))),
         math="d atan2(x, y) = (y dx - x dy) / (x^2 + y^2)")

# complex(x, y) is linear; its transpose takes real(ct) to x and -imag(ct) to y (JAX's convention).
A.jvp("complex", 0, lambda g, x, y, ans: T.complex(g, _lit(0.0, g)), math="d complex(x, y) = dx + i dy")
A.jvp("complex", 1, lambda g, x, y, ans: T.complex(_lit(0.0, g), g), math="d complex(x, y) = dx + i dy")
A.vjp("complex", 0, lambda ct, x, y, ans: T.real(ct), math="transpose of dx -> dx + 0i: real(ct)")
A.vjp("complex", 1, lambda ct, x, y, ans: T.imag(T.neg(ct)), math="transpose of dy -> i dy: imag(-ct)")

# --- special functions ------------------------------------------------------------------------------


def _igamma_dx(g, a, x):
    return T.mul(g, T.exp(T.sub(T.add(T.neg(x), T.mul(T.sub(a, _lit(1.0, a)), T.log(x))), T.lgamma(a))))


A.linear("igamma", 0, lambda g, a, x, ans: T.mul(g, T.igamma_grad_a(a, x)), math="d P(a, x)/da = igamma_grad_a")
A.linear("igamma", 1, lambda g, a, x, ans: _igamma_dx(g, a, x), math="d P(a, x)/dx = exp(-x) x^(a-1) / Gamma(a)")
A.linear("igammac", 0, lambda g, a, x, ans: T.neg(T.mul(g, T.igamma_grad_a(a, x))), math="Q = 1 - P")
A.linear("igammac", 1, lambda g, a, x, ans: T.neg(_igamma_dx(g, a, x)), math="Q = 1 - P")
A.linear("polygamma", 1, lambda g, m, x, ans: T.mul(g, T.polygamma(T.add(m, _lit(1.0, m)), x)),
         math="d psi^(m)(x) = psi^(m+1)(x) dx")


def _betainc_dx(g, a, b, x, ans):
    lbeta = T.sub(T.add(T.lgamma(a), T.lgamma(b)), T.lgamma(T.add(a, b)))
    log_density = T.add(T.mul(T.sub(b, _lit(1.0, b)), T.log1p(T.neg(x))), T.mul(T.sub(a, _lit(1.0, a)), T.log(x)))
    return T.mul(T.exp(T.sub(log_density, lbeta)), g)


A.linear("regularized_incomplete_beta", 2, _betainc_dx, math="d I_x(a, b)/dx = x^(a-1) (1-x)^(b-1) / B(a, b)")

# --- selection ----------------------------------------------------------------------------------------

# Any number of cases, one rule per slot: the patterns match the predicate and the cases as one list; case k's
# cotangent is built from that list (`onehot`: as many entries as cases).
_CASES = Leading(1)
A.add("jvp", "select_n", "out0", "all", None, "d select_n(p, x...) = select_n(p, dx...)", _CASES, 1, _CASES,
      lambda ts, xs, outs, vals: T.select_n(Args.cons(xs[0], ts[1])))
A.add("vjp", "select_n", "*", "one", None, "transpose of select_n(p, dx...): select_n(p, 0.., ct, ..0)", _CASES, 1, 1,
      lambda cts, xs, outs, v: T.select_n(Args.cons(xs[0], onehot(xs[1], v["index"] - 1, cts[0], zeros_like(cts[0])))))

# clamp(lo, x, hi): the derivative follows whichever operand the result is (none at ties).
A.linear("clamp", 0, lambda g, lo, x, hi, ans: _select(_and(T.gt(lo, x), T.lt(lo, hi)),
                                                        zeros_like(g), g),
         math="d clamp = dlo where lo > x and lo < hi")
A.linear("clamp", 1, lambda g, lo, x, hi, ans: _select(_and(T.gt(x, lo), T.lt(x, hi)),
                                                        zeros_like(g), g),
         math="d clamp = dx where lo < x < hi")
A.linear("clamp", 2, lambda g, lo, x, hi, ans: _select(T.lt(hi, x), zeros_like(g), g),
         math="d clamp = dhi where hi < x")

# --- zero derivative ----------------------------------------------------------------------------------

