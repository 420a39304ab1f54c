"""Comparison, select, clamp and max/min absorption.

Many of these laws hold bit for bit on integers and bools but not on floats, where nan compares
false with everything (`x <= x` is False for nan) and max/min propagate nan. Those come in two
rules: an `unsafe` one for any dtype and an `exact` one restricted to dtypes without nan.
"""

from egglog import String, Vec, eq, i64, rewrite, var, vars_

from rewrites.analyses.values import finite
from rewrites.rule import EXACT, GUARDED, REAL, UNSAFE, RuleBook
from rewrites.rules.common import T, d, dtype_of, filled, is_float, lit, shape_of, sx, x, y
from rewrites.terms import Arr, args_list

p, lo, hi = vars_("p lo hi", Arr)
sel = var("sel", String)  # select_n's params text (it has none; matched, not assumed)

R = RuleBook("compare")


# Dtype classes as conditions on a dtype name. egglog cannot negate the `float_dtype` relation, so
# "not a float" is a test on the name (`replace` leaves it unchanged when it has no such part).
def has_no_nan(dtype=d):
    """Integers, bools and keys: neither a float nor a complex name."""
    return [eq(dtype.replace("float", "")).to(dtype), eq(dtype.replace("complex", "")).to(dtype)]


def is_not_unsigned(dtype=d):
    return eq(dtype.replace("uint", "")).to(dtype)


def select_n(pred: Arr, *cases: Arr) -> Arr:
    return T.select_n(args_list([pred, *cases]), **T.params("select_n", "sel"))


not_ = getattr(T, "not")
TRUE, FALSE = 1.0, 0.0
BOOL = String("bool")

# --- select_n -----------------------------------------------------------------------------------
R.rw("select-same", EXACT, select_n(p, x, x), x, math="select_n(p, x, x) -> x")
R.rw("select-not", EXACT, select_n(not_(p), x, y), select_n(p, y, x), eq(dtype_of(p)).to(BOOL),
     math="select_n(not p, x, y) -> select_n(p, y, x) (p bool; not of an int index is no swap)")
R.rw("select-lit-first", EXACT, select_n(lit(0.0), x, y), x, math="select_n(False or 0, x, y) -> x")
R.rw("select-lit-second", EXACT, select_n(lit(1.0), x, y), y, math="select_n(True or 1, x, y) -> y")
R.rw("abs-as-select", REAL, select_n(T.lt(x, lit(0.0)), x, T.neg(x)), T.abs(x), is_not_unsigned(),
     math="where(x < 0, -x, x) -> abs(x) (x=-0.0 gives -0.0 on the left, +0.0 on the right)")
R.rw("max-as-select", UNSAFE, select_n(T.lt(x, y), x, y), T.max(x, y),
     math="where(x < y, y, x) -> max(x, y) (y=nan gives x on the left, nan on the right)")
R.rw("min-as-select", UNSAFE, select_n(T.lt(x, y), y, x), T.min(x, y),
     math="where(x < y, x, y) -> min(x, y) (x=nan gives y on the left, nan on the right)")
R.rw("max-as-select-int", EXACT, select_n(T.lt(x, y), x, y), T.max(x, y), eq(dtype_of(x)).to(d),
     *has_no_nan(), math="where(x < y, y, x) -> max(x, y) for integers and bools")
R.rw("min-as-select-int", EXACT, select_n(T.lt(x, y), y, x), T.min(x, y), eq(dtype_of(x)).to(d),
     *has_no_nan(), math="where(x < y, x, y) -> min(x, y) for integers and bools")

# --- max/min ------------------------------------------------------------------------------------
R.rw("max-self", EXACT, T.max(x, x), x, math="max(x, x) -> x")
R.rw("min-self", EXACT, T.min(x, x), x, math="min(x, x) -> x")
for _outer, _inner in (("max", "min"), ("min", "max")):
    _absorbing = getattr(T, _outer)(x, getattr(T, _inner)(x, y))
    _keeps_shape = eq(shape_of(_absorbing)).to(shape_of(x))  # x is not broadcast against y
    _math = f"{_outer}(x, {_inner}(x, y)) -> x"
    R.rw(f"{_outer}-{_inner}-absorb", UNSAFE, _absorbing, x, _keeps_shape,
         math=f"{_math} (y=nan gives nan on the left)")
    R.rw(f"{_outer}-{_inner}-absorb-int", EXACT, _absorbing, x, _keeps_shape, eq(dtype_of(x)).to(d),
         *has_no_nan(), math=f"{_math} for integers and bools")
R.birw("neg-max", EXACT, T.neg(T.max(x, y)), T.min(T.neg(x), T.neg(y)), eq(dtype_of(x)).to(d), is_float(),
       math="-max(x, y) <=> min(-x, -y) (floats: -INT_MIN wraps)")
R.birw("neg-min", EXACT, T.neg(T.min(x, y)), T.max(T.neg(x), T.neg(y)), eq(dtype_of(x)).to(d), is_float(),
       math="-min(x, y) <=> max(-x, -y) (floats: -INT_MIN wraps)")

# --- clamp: XLA defines clamp(lo, x, hi) as min(max(x, lo), hi), nan propagating ------------------
R.rw("clamp-as-minmax", EXACT, T.clamp(lo, x, hi), T.min(T.max(x, lo), hi),
     math="clamp(lo, x, hi) -> min(max(x, lo), hi)")
R.rw("minmax-as-clamp", EXACT, T.min(T.max(x, lo), hi), T.clamp(lo, x, hi),
     eq(shape_of(lo)).to(Vec[i64].empty()), eq(shape_of(hi)).to(Vec[i64].empty()),
     math="min(max(x, lo), hi) -> clamp(lo, x, hi) (scalar bounds: clamp does not broadcast x)")
R.rw("clamp-clamp", EXACT, T.clamp(lo, T.clamp(lo, x, hi), hi), T.clamp(lo, x, hi),
     math="clamp(lo, clamp(lo, x, hi), hi) -> clamp(lo, x, hi)")

# --- comparisons ----------------------------------------------------------------------------------
R.rw("lt-self", EXACT, T.lt(x, x), filled(FALSE, BOOL), eq(shape_of(x)).to(sx),
     math="x < x -> False (also for nan)")
R.rw("le-self", UNSAFE, T.le(x, x), filled(TRUE, BOOL), eq(shape_of(x)).to(sx),
     math="x <= x -> True (nan <= nan is False)")
R.rw("eq-self", UNSAFE, T.eq(x, x), filled(TRUE, BOOL), eq(shape_of(x)).to(sx),
     math="x == x -> True (nan == nan is False)")
R.rw("ne-self", UNSAFE, T.ne(x, x), filled(FALSE, BOOL), eq(shape_of(x)).to(sx),
     math="x != x -> False (nan != nan is True)")
R.rw("le-self-int", EXACT, T.le(x, x), filled(TRUE, BOOL), eq(shape_of(x)).to(sx), eq(dtype_of(x)).to(d),
     *has_no_nan(), math="x <= x -> True for integers and bools")
R.rw("eq-self-int", EXACT, T.eq(x, x), filled(TRUE, BOOL), eq(shape_of(x)).to(sx), eq(dtype_of(x)).to(d),
     *has_no_nan(), math="x == x -> True for integers, bools and keys")
R.rw("ne-self-int", EXACT, T.ne(x, x), filled(FALSE, BOOL), eq(shape_of(x)).to(sx), eq(dtype_of(x)).to(d),
     *has_no_nan(), math="x != x -> False for integers, bools and keys")
R.rw("gt-flip", EXACT, T.gt(x, y), T.lt(y, x), math="x > y -> y < x")
R.rw("ge-flip", EXACT, T.ge(x, y), T.le(y, x), math="x >= y -> y <= x")
R.rw("not-eq", EXACT, not_(T.eq(x, y)), T.ne(x, y), math="not(x == y) -> x != y (also for nan)")
R.rw("not-ne", EXACT, not_(T.ne(x, y)), T.eq(x, y), math="not(x != y) -> x == y (also for nan)")
R.rw("not-lt", UNSAFE, not_(T.lt(x, y)), T.ge(x, y), math="not(x < y) -> x >= y (nan: True on the left)")
R.rw("not-le", UNSAFE, not_(T.le(x, y)), T.gt(x, y), math="not(x <= y) -> x > y (nan: True on the left)")
R.rw("not-lt-int", EXACT, not_(T.lt(x, y)), T.ge(x, y), eq(dtype_of(x)).to(d), *has_no_nan(),
     math="not(x < y) -> x >= y for integers and bools")
R.rw("not-le-int", EXACT, not_(T.le(x, y)), T.gt(x, y), eq(dtype_of(x)).to(d), *has_no_nan(),
     math="not(x <= y) -> x > y for integers and bools")


# --- select sinking: a product with a select of zeros ---------------------------------------------------
def _select_zero_mul(*guard) -> list:
    """select(c, 0, x)*y -> select(c, 0, x*y), either case the zeros (x, y of one shape)."""
    zeros, shaped = filled(0.0), (eq(shape_of(x)).to(sx), eq(shape_of(y)).to(sx), eq(dtype_of(x)).to(d))
    sides = [(T.select_n(args_list([p, zeros, x])), T.select_n(args_list([p, zeros, T.mul(x, y)]))),
             (T.select_n(args_list([p, x, zeros])), T.select_n(args_list([p, T.mul(x, y), zeros])))]
    return [rewrite(T.mul(picked, y)).to(sunk, *shaped, *guard) for picked, sunk in sides]


R.family("select-zero-mul", UNSAFE, _select_zero_mul(),
         math="select(c, 0, x)*y -> select(c, 0, x*y) (where 0 is picked, 0*inf and 0*nan are nan)")
R.family("select-zero-mul-finite", GUARDED, _select_zero_mul(finite(y)),
         math="select(c, 0, x)*y -> select(c, 0, x*y) for finite y (0*y is -0.0 for y < 0)")
