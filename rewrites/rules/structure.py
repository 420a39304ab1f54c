"""Structural rules: reversals, slices of slices and concatenations of adjacent slices, reductions of broadcasts
and stacks, sums of products as dots, a size-1 contraction as a product, a scalar factor out of a sum.

Written with the positional fields of the constructors (`T.slice(x, start, limit)`, `T.rev(x, dims)`, ...): the
keyword fields keep their defaults (a slice's `strides=None`), except concatenate's `dimension` and stack's
`axis`, which have no default and are matched as i64 variables.

Per rank (`MAX_RANK`), params computed from params are computed in the rule's query with egglog's Vec
primitives, as `rewrites.rules.tensor` does.
"""

from __future__ import annotations

from egglog import RewriteOrRule, Vec, eq, i64, rewrite, var, vars_

from rewrites.analyses.shapes import EMPTY, MATMUL, MAX_RANK, VECMAT, float_dtype, ints, items, vec
from rewrites.analyses.values import finite
from rewrites.rule import EXACT, GUARDED, REAL, UNSAFE, RuleBook
from rewrites.rules.common import T, d, dtype_of, shape_of, sx, x, y, z
from rewrites.terms import args_list

R = RuleBook("structure")

p, start, limit, start2, limit2, sz, dims, r, r2 = vars_("p start limit start2 limit2 sz dims r r2", Vec[i64])
axis = var("axis", i64)  # concatenate's dimension, stack's axis


def rank_is(v, k: int):
    return eq(v.length()).to(i64(k))


# --- reversal and slices -----------------------------------------------------------------------------------
R.rw("rev-rev", EXACT, T.rev(T.rev(x, p), p), x, math="rev(rev(x, dims), dims) -> x")
_whole = T.slice(x, start, limit)
R.rw("slice-whole", EXACT, _whole, x, eq(shape_of(x)).to(sx), eq(shape_of(_whole)).to(sx),
     math="x[start:limit] -> x when the slice has x's shape (then start is 0 and limit x's shape)")


def _slice_of_slice(k: int) -> RewriteOrRule:
    return rewrite(T.slice(T.slice(x, start, limit), start2, limit2)).to(
        T.slice(x, r, r2), rank_is(start, k),
        eq(r).to(vec([start[i] + start2[i] for i in range(k)])),
        eq(r2).to(vec([start[i] + limit2[i] for i in range(k)])))


R.family("slice-slice", EXACT, [_slice_of_slice(k) for k in range(1, MAX_RANK + 1)],
         math="x[s1:l1][s2:l2] -> x[s1+s2 : s1+l2] (unit strides)")
_adjacent = T.concatenate(args_list([T.slice(x, start, limit), T.slice(x, start2, limit2)]), dimension=axis)
R.rw("concat-adjacent-slices", EXACT, _adjacent, T.slice(x, start, limit2),
     eq(start2).to(start.set(axis, limit[axis])), eq(limit).to(limit2.set(axis, start2[axis])),
     math="concat([x[s:l], x[s2:l2]], d) -> x[s:l2] when the second slice starts where the first ends along d "
          "and both agree on every other axis (unit strides)")
R.rw("concat-one", EXACT, T.concatenate(args_list([x]), dimension=axis), x, math="concat([x], d) -> x")


# --- reductions ------------------------------------------------------------------------------------------------
def _reduce_of_broadcast(prim: str, k: int) -> RewriteOrRule:
    lhs = getattr(T, prim)(T.broadcast_in_dim(x, sz, dims), p)
    return rewrite(lhs).to(
        x, rank_is(p, k), *[dims.not_contains(axis) for axis in items(p, k)],
        *[sz[axis] >= i64(1) for axis in items(p, k)],
        eq(p.length() + dims.length()).to(sz.length()), eq(shape_of(x)).to(sx), eq(shape_of(lhs)).to(sx))


R.family("reduce-max-broadcast", EXACT,
         [_reduce_of_broadcast(prim, k) for prim in ("reduce_max", "reduce_min") for k in range(1, MAX_RANK + 1)],
         math="max (min) over the dims a broadcast added -> x, when each has size >= 1 and x's dims are not "
              "expanded (the max of copies of v is v: nan and -0.0 included)")


def _reduce_of_stack(reduce: str, combine: str) -> list[RewriteOrRule]:
    """reduce(stack([x, y], a), [a]) -> combine(x, y), and of three operands combine(combine(x, y), z)."""
    f = getattr(T, combine)
    return [rewrite(getattr(T, reduce)(T.stack(args_list(xs), axis=axis), p)).to(
        folded, rank_is(p, 1), eq(p[0]).to(axis)) for xs, folded in (([x, y], f(x, y)), ([x, y, z], f(f(x, y), z)))]


R.family("sum-of-stack", REAL, _reduce_of_stack("reduce_sum", "add"),
         math="sum(stack([x, y, ...], a), [a]) -> x + y + ... (real: the sum may associate otherwise; the kinds of "
              "inf and nan results do not depend on the order)")
R.family("max-of-stack", REAL, _reduce_of_stack("reduce_max", "max") + _reduce_of_stack("reduce_min", "min"),
         math="max(stack([x, y, ...], a), [a]) -> max(max(x, y), ...), min likewise (nan propagates on both sides; "
              "real: which of -0.0 and +0.0 comes out may depend on the order)")
R.rw("sum-of-products-dot", REAL, T.reduce_sum(T.mul(x, y), ints(0)), T.dot_general(x, y, VECMAT),
     rank_is(shape_of(x), 1), eq(shape_of(y)).to(shape_of(x)), eq(dtype_of(x)).to(d), eq(dtype_of(y)).to(d),
     float_dtype(d),
     math="sum(x*y) over the one axis of vectors x, y -> dot(x, y) (real: the dot may sum in another order)")


_outer = T.dot_general(x, y, MATMUL, **T.params("dot_general", "s"))
R.rw("dot-outer-as-mul", REAL, _outer,
     T.mul(T.broadcast_in_dim(x, r, ints(0, 1)), T.broadcast_in_dim(y, r, ints(0, 1))),
     eq(shape_of(x)).to(sx), rank_is(sx, 2), eq(sx[1]).to(i64(1)), eq(shape_of(y)).to(sz), rank_is(sz, 2),
     eq(sz[0]).to(i64(1)), eq(r).to(vec([sx[0], sz[1]])),
     eq(dtype_of(_outer)).to(d), eq(dtype_of(x)).to(d), eq(dtype_of(y)).to(d),
     math="A@B -> A*B broadcast, for A of shape (m, 1) and B of shape (1, n): a contraction over one element is "
          "an outer product (real: a dot may add its one product to a zero, turning -0.0 into +0.0)")


def _sum_scalar_factor(*guard) -> list[RewriteOrRule]:
    """sum(s*v) -> s*sum(v) and sum(v*s) -> sum(v)*s for a rank-0 s."""
    scalar = eq(shape_of(y)).to(EMPTY)
    return [rewrite(T.reduce_sum(T.mul(y, x), p)).to(T.mul(y, T.reduce_sum(x, p)), scalar, *guard),
            rewrite(T.reduce_sum(T.mul(x, y), p)).to(T.mul(T.reduce_sum(x, p), y), scalar, *guard)]


R.family("sum-scalar-factor", UNSAFE, _sum_scalar_factor(),
         math="sum(s*v) -> s*sum(v) for a rank-0 s (s = inf, v of both signs: nan on the left, ±inf or nan right)")
R.family("sum-scalar-factor-finite", GUARDED, _sum_scalar_factor(finite(y)),
         math="sum(s*v) -> s*sum(v) for a finite rank-0 s (real: the sum rounds differently)")
