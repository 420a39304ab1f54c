"""Distributivity and factoring.

Factoring is true over the reals (and exact on integers, whose arithmetic wraps: a ring) but not
`real` in the project's sense: for a=inf and b, c of opposite signs, a*b + a*c is inf - inf = nan
while a*(b+c) is ±inf, so an inf input changes the kind of result. Each law therefore comes twice:
`unsafe` as is, and `guarded` when the common factor is known finite (then both sides agree on every
special input: a nan or inf in b or c reaches both sides the same way).
"""

from egglog import String, eq, vars_

from rewrites.analyses.values import finite, nonzero, not_complex
from rewrites.rule import EXACT, GUARDED, REAL, UNSAFE, RuleBook
from rewrites.rules.common import T, d, dtype_of, is_float, lit, shape_of, sx, x, y, z

dn, ex = vars_("dn ex", String)  # dot_general's dimension numbers and its other params

R = RuleBook("distrib")

# --- factoring a common factor ------------------------------------------------------------------
def _factoring(name: str, lhs, rhs, *when, math: str, guard) -> None:
    R.birw(name, UNSAFE, lhs, rhs, *when, math=f"{math} (an inf factor can turn ±inf into nan)")
    R.birw(f"{name}-finite", GUARDED, lhs, rhs, *when, guard, math=f"{math} where the factor is finite")


_factoring("mul-add-factor-left", T.add(T.mul(x, y), T.mul(x, z)), T.mul(x, T.add(y, z)), guard=finite(x),
           math="x*y + x*z <=> x*(y+z)")
_factoring("mul-add-factor-right", T.add(T.mul(y, x), T.mul(z, x)), T.mul(T.add(y, z), x), guard=finite(x),
           math="y*x + z*x <=> (y+z)*x")
_factoring("mul-sub-factor-left", T.sub(T.mul(x, y), T.mul(x, z)), T.mul(x, T.sub(y, z)), guard=finite(x),
           math="x*y - x*z <=> x*(y-z)")
_factoring("mul-sub-factor-right", T.sub(T.mul(y, x), T.mul(z, x)), T.mul(T.sub(y, z), x), guard=finite(x),
           math="y*x - z*x <=> (y-z)*x")
R.rw("mul-add-self-factor", UNSAFE, T.add(T.mul(x, y), x), T.mul(x, T.add(y, lit(1.0))), eq(dtype_of(x)).to(d),
     math="x*y + x -> x*(y+1) (x=inf, y=-2: nan on the left, -inf on the right)")
R.rw("mul-add-self-factor-finite", GUARDED, T.add(T.mul(x, y), x), T.mul(x, T.add(y, lit(1.0))),
     eq(dtype_of(x)).to(d), finite(x), math="x*y + x -> x*(y+1) where x is finite")
_factoring("div-add-common", T.add(T.div(x, z), T.div(y, z)), T.div(T.add(x, y), z), eq(dtype_of(z)).to(d),
           is_float(), guard=nonzero(z), math="x/z + y/z <=> (x+y)/z (floats: integer division truncates)")
_factoring("div-sub-common", T.sub(T.div(x, z), T.div(y, z)), T.div(T.sub(x, y), z), eq(dtype_of(z)).to(d),
           is_float(), guard=nonzero(z), math="x/z - y/z <=> (x-y)/z (floats: integer division truncates)")


# --- dot_general is bilinear (operands of one shape, so the sum needs no broadcasting) --------------
def _dot(lhs, rhs):
    return T.dot_general(lhs, rhs, dn, **T.params("dot_general", "ex"))


_factoring("dot-add-factor-left", T.add(_dot(x, y), _dot(x, z)), _dot(x, T.add(y, z)),
           eq(shape_of(y)).to(sx), eq(shape_of(z)).to(sx), eq(dtype_of(y)).to(dtype_of(z)), guard=finite(x),
           math="dot(x, y) + dot(x, z) <=> dot(x, y+z)")
_factoring("dot-add-factor-right", T.add(_dot(x, z), _dot(y, z)), _dot(T.add(x, y), z),
           eq(shape_of(x)).to(sx), eq(shape_of(y)).to(sx), eq(dtype_of(x)).to(dtype_of(y)), guard=finite(z),
           math="dot(x, z) + dot(y, z) <=> dot(x+y, z)")

# --- negation distributes ----------------------------------------------------------------------------
R.rw("neg-of-add", REAL, T.neg(T.add(x, y)), T.sub(T.neg(x), y),
     math="-(x+y) -> -x - y (x=0.0, y=-0.0: -0.0 on the left, +0.0 on the right)")
# (arith's neg-mul and neg-div are the other direction of the next two)
R.rw("neg-of-mul", EXACT, T.neg(T.mul(x, y)), T.mul(T.neg(x), y), eq(dtype_of(x)).to(d), *not_complex(),
     math="-(x*y) -> (-x)*y (rounding is sign-symmetric; integers wrap; not complex: a zero part's sign "
          "differs, as for arith's neg-mul)")
R.rw("neg-of-div", EXACT, T.neg(T.div(x, y)), T.div(T.neg(x), y), eq(dtype_of(x)).to(d), is_float(),
     math="-(x/y) -> (-x)/y (floats: integer x/0 is -1 for every x)")
