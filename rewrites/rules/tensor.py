"""Tensor rules: transpose, reshape, broadcast, reductions, dot_general.

Params computed from params (composed permutations, merged axes) are computed in the rule's query,
never in its action: per rank with egglog's Vec primitives (`transpose-transpose`), or looked up in
the axis tables the shape analysis fills (`merged_axes`, `axes_through`, `perm_after_removal`; see
`rewrites/analyses/shapes.py`). A rule that rebuilds a node of the primitive it matched keeps that
node's other params (its keyword fields, `T.params(prim, "s")`); nodes of other primitives get the defaults.

Elementwise ops move through shape ops for the primitives in `PUSHED_UNARY`/`PUSHED_BINARY` only:
that takes one egglog rule per primitive per shape op, each registered and matched in every pass.
The lists hold the ops programs use around reshapes and transposes; more can be added by name.

Summations in another order (`reduce-reduce`, `dot-transpose-operand`) are `real`. Reassociating a
matrix product (the `dot-assoc` pair) can turn an inf into a nan when inputs hold ±inf (inf*0 then
appears in one order only), as any reassociation of sums of products does: `unsafe`, with `guarded`
twins for operands known finite.
"""

from __future__ import annotations

import math

from egglog import RewriteOrRule, String, Vec, eq, f64, i64, rewrite, var, vars_

from rewrites.analyses.shapes import (
    EMPTY,
    MATMUL,
    MAX_RANK,
    VECMAT,
    axes_through,
    binary,
    dimension_numbers,
    exact_integers,
    float_dtype,
    ints,
    items,
    merged_axes,
    perm_after_removal,
    unary,
    vec,
)
from rewrites.analyses.values import finite
from rewrites.rule import EXACT, GUARDED, REAL, UNSAFE, RuleBook
from rewrites.rules.common import T, a, d, dtype_of, lit, shape_of, x, y, z
from rewrites.terms import Arr

R = RuleBook("tensor")

p, q, r, rest, sz, sz2, dims, dims2 = vars_("p q r rest sz sz2 dims dims2", Vec[i64])
n, cnt, dn = var("n", i64), var("cnt", f64), var("dn", String)
# the other params of matched nodes (their keyword fields), carried over to the nodes rules rebuild
bcast_s, bcast_s2, bcast_s3 = (T.params("broadcast_in_dim", k) for k in ("s", "s2", "s3"))
reshape_s, reshape_s2 = T.params("reshape", "s"), T.params("reshape", "s2")
sum_s = T.params("reduce_sum", "s")

PUSHED_UNARY = ("neg", "exp", "log", "sin", "cos", "tanh", "logistic", "sqrt", "rsqrt", "abs", "sign",
                "square", "expm1", "log1p", "integer_pow", "convert_element_type")
PUSHED_BINARY = ("add", "sub", "mul", "div", "max", "min", "pow")
ORDERED = ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min")  # float results depend on the order
BITWISE = ("reduce_and", "reduce_or", "reduce_xor")
IDENTITY_INIT = ("reduce_prod", "reduce_max", "reduce_min", *BITWISE)  # init value leaves every x as is
FINITE = (a < f64(math.inf), a > f64(-math.inf))


def rank_is(v, k: int):
    return eq(v.length()).to(i64(k))


def _per_unary(build_lhs, build_rhs, *when) -> list[RewriteOrRule]:
    return [rewrite(build_lhs(prim)).to(build_rhs(prim), *when) for prim in PUSHED_UNARY]


def _per_binary(build_lhs, build_rhs, *when) -> list[RewriteOrRule]:
    return [rewrite(build_lhs(prim)).to(build_rhs(prim), *when) for prim in PUSHED_BINARY]


def _scalar_sides(build_lhs, build_rhs) -> list[RewriteOrRule]:
    """`f(moved(x), c) -> moved(f(x, c))` and `f(c, moved(x)) -> moved(f(c, x))` for a rank-0 c."""
    scalar = eq(shape_of(y)).to(EMPTY)
    return (_per_binary(lambda f: binary(f, build_lhs(x), y), lambda f: build_rhs(binary(f, x, y)), scalar)
            + _per_binary(lambda f: binary(f, y, build_lhs(x)), lambda f: build_rhs(binary(f, y, x)),
                          scalar))


# --- transpose ----------------------------------------------------------------------------------------


def transposed(v, perm=p):
    return T.transpose(v, perm)


R.rw("transpose-identity", EXACT, T.transpose(x, p), x, eq(p).to(p.length().range()),
     math="transpose(x, iota) -> x")
R.family("transpose-transpose", EXACT,
       [rewrite(T.transpose(transposed(x), q)).to(T.transpose(x, r), rank_is(q, k),
                                                           eq(r).to(vec([p[i] for i in items(q, k)])))
        for k in range(1, MAX_RANK + 1)],
       math="transpose(transpose(x, p), q) -> transpose(x, p[q])")
R.family("transpose-unary", EXACT,
       _per_unary(lambda f: unary(f, transposed(x)), lambda f: transposed(unary(f, x))),
       math="f(transpose(x)) -> transpose(f(x)) for elementwise f")
R.family("transpose-binary", EXACT,
       _per_binary(lambda f: binary(f, transposed(x), transposed(y)), lambda f: transposed(binary(f, x, y))),
       math="f(transpose(x, p), transpose(y, p)) -> transpose(f(x, y), p)")
R.family("transpose-binary-scalar", EXACT, _scalar_sides(transposed, transposed),
       math="f(transpose(x), c) -> transpose(f(x, c)) for rank-0 c (either side)")
_filled = T.transpose(T.broadcast_in_dim(y, sz, EMPTY, **bcast_s3), p)
R.rw("transpose-broadcast-scalar", EXACT, _filled, T.broadcast_in_dim(y, sz2, EMPTY, **bcast_s3),
     eq(shape_of(_filled)).to(sz2),
     math="transpose(broadcast(c, shape)) -> broadcast(c, permuted shape) for rank-0 c")


# --- reshape ------------------------------------------------------------------------------------------


def reshaped(v):
    return T.reshape(v, sz, **reshape_s2)


R.rw("reshape-identity", EXACT, T.reshape(x, sz), x, eq(shape_of(x)).to(sz),
     math="reshape(x, x.shape) -> x")
R.rw("reshape-reshape", EXACT, T.reshape(T.reshape(x, sz2), sz),
     T.reshape(x, sz),
     math="reshape(reshape(x, s1), s2) -> reshape(x, s2) (row-major order is kept)")
R.family("reshape-unary", EXACT,
       _per_unary(lambda f: unary(f, reshaped(x)), lambda f: reshaped(unary(f, x))),
       math="f(reshape(x)) -> reshape(f(x)) for elementwise f")
R.family("reshape-binary", EXACT,
       _per_binary(lambda f: binary(f, reshaped(x), reshaped(y)), lambda f: reshaped(binary(f, x, y)),
                   eq(shape_of(x)).to(sz2), eq(shape_of(y)).to(sz2)),
       math="f(reshape(x, s), reshape(y, s)) -> reshape(f(x, y), s) where x and y have one shape")
R.rw("reshape-broadcast-scalar", EXACT, T.reshape(T.broadcast_in_dim(y, sz2, EMPTY, **bcast_s3), sz, **reshape_s),
     T.broadcast_in_dim(y, sz, EMPTY, **bcast_s3),
     math="reshape(broadcast(c, s1), s2) -> broadcast(c, s2) for rank-0 c")


# --- broadcast_in_dim -----------------------------------------------------------------------------------


def broadcast(v):
    return T.broadcast_in_dim(v, sz, dims, **bcast_s2)


R.rw("broadcast-identity", EXACT, T.broadcast_in_dim(x, sz, dims, **bcast_s), x, eq(shape_of(x)).to(sz),
     eq(dims).to(dims.length().range()), math="broadcast_in_dim(x, x.shape, iota) -> x")
R.family("broadcast-broadcast", EXACT,
       [rewrite(T.broadcast_in_dim(T.broadcast_in_dim(x, sz2, dims2, **bcast_s3), sz, dims, **bcast_s)).to(
           T.broadcast_in_dim(x, sz, r, **bcast_s), rank_is(dims2, k),
           eq(r).to(vec([dims[i] for i in items(dims2, k)])))
        for k in range(MAX_RANK + 1)],
       math="broadcast(broadcast(x, s1, d1), s2, d2) -> broadcast(x, s2, d2[d1])")
R.family("broadcast-unary", EXACT,
       _per_unary(lambda f: unary(f, broadcast(x)), lambda f: broadcast(unary(f, x))),
       math="f(broadcast(x)) -> broadcast(f(x)) for elementwise f (f runs on fewer elements)")
R.family("broadcast-binary", EXACT,
       _per_binary(lambda f: binary(f, broadcast(x), broadcast(y)), lambda f: broadcast(binary(f, x, y)),
                   eq(shape_of(x)).to(sz2), eq(shape_of(y)).to(sz2)),
       math="f(broadcast(x), broadcast(y)) -> broadcast(f(x, y)) where x and y have one shape")
R.family("broadcast-binary-scalar", EXACT, _scalar_sides(broadcast, broadcast),
       math="f(broadcast(x), c) -> broadcast(f(x, c)) for rank-0 c (either side)")
R.family("squeeze-broadcast", EXACT,
       [rewrite(T.squeeze(broadcast(x), p)).to(
           x, rank_is(p, k), *[dims.not_contains(axis) for axis in items(p, k)],
           eq(p.length() + dims.length()).to(sz.length()), eq(shape_of(x)).to(sz2),
           eq(shape_of(T.squeeze(broadcast(x), p))).to(sz2))
        for k in range(1, MAX_RANK + 1)],
       math="squeeze(broadcast(x), the added dims) -> x (x's dims are not expanded)")


# --- reductions ------------------------------------------------------------------------------------------


def reduce(prim: str, v, axes, params: str = "s"):
    """`prim(v, axes)` whose other params are the pattern variables named `params` ("": the defaults)."""
    return getattr(T, prim)(v, axes, **(T.params(prim, params) if params else {}))


def _reduce_rules(prims: tuple[str, ...], soundness: str, suffix: str, why: str) -> None:
    R.family("reduce-reduce" + suffix, soundness,
           [rewrite(reduce(f, reduce(f, x, p, "s2"), q)).to(reduce(f, x, r), eq(r).to(merged_axes(p, q)))
            for f in prims],
           math=f"reduce(reduce(x, a1), a2) -> reduce(x, a1 + a2 mapped to x's axes) ({why})")
    R.family("reduce-transpose" + suffix, soundness,
           [rewrite(reduce(f, transposed(x), q)).to(
               transposed(reduce(f, x, r), rest), eq(r).to(axes_through(p, q)),
               eq(rest).to(perm_after_removal(p, q)))
            for f in prims],
           math=f"reduce(transpose(x, p), A) -> transpose(reduce(x, p[A]), rest of p) ({why})")


R.family("reduce-no-axes", EXACT, [rewrite(reduce(f, x, EMPTY)).to(x) for f in IDENTITY_INIT],
       math="reduce(x, ()) -> x for prod/max/min/and/or/xor (init op x is x, even for nan and -0.0)")
R.rw("reduce-sum-no-axes", REAL, T.reduce_sum(x, EMPTY, **sum_s), x,
     math="reduce_sum(x, ()) -> x (real: XLA adds the init 0 to x, which turns -0.0 into +0.0)")
_reduce_rules(ORDERED, REAL, "", "summation order changes; max/min may pick the other signed zero")
_reduce_rules(BITWISE, EXACT, "-bitwise", "and/or/xor are associative and commutative bit by bit")


def _sum_of_broadcast(k: int) -> RewriteOrRule:
    lhs = T.reduce_sum(broadcast(x), p, **sum_s)
    count = i64(1)
    for axis in items(p, k):
        count = count * sz[axis]
    return rewrite(lhs).to(
        T.mul(x, Arr.scalar(cnt, d)), rank_is(p, k), *[dims.not_contains(axis) for axis in items(p, k)],
        eq(p.length() + dims.length()).to(sz.length()), eq(shape_of(x)).to(sz2),
        eq(shape_of(lhs)).to(sz2), eq(dtype_of(x)).to(d), eq(n).to(count), n <= exact_integers(d),
        eq(cnt).to(f64.from_i64(n)))


R.family("reduce-sum-broadcast", REAL, [_sum_of_broadcast(k) for k in range(1, MAX_RANK + 1)],
       math="sum over the dims broadcast added -> x * their size (real: n additions round differently)")
_total = T.reduce_sum(x, p, **sum_s)
R.family("reduce-sum-scalar-mul", REAL,
       [rewrite(T.reduce_sum(T.mul(lit(a), x), p, **sum_s)).to(T.mul(lit(a), _total), *FINITE),
        rewrite(T.reduce_sum(T.mul(x, lit(a)), p, **sum_s)).to(T.mul(_total, lit(a)), *FINITE)],
       math="sum(c*x) -> c*sum(x) for a finite literal c (c=inf would turn nan into inf)")
R.rw("reduce-sum-neg", REAL, T.reduce_sum(T.neg(x), p, **sum_s), T.neg(_total),
     math="sum(-x) -> -sum(x) (real: sum(-[0, -0]) is +0, -sum([0, -0]) is -0)")
R.family("reduce-max-neg", REAL,
       [rewrite(reduce(f, T.neg(x), p)).to(T.neg(reduce(g, x, p)), eq(dtype_of(x)).to(d), float_dtype(d))
        for f, g in (("reduce_max", "reduce_min"), ("reduce_min", "reduce_max"))],
       math="max(-x) -> -min(x), min(-x) -> -max(x) (real: signed zeros; floats: -INT_MIN wraps, and "
            "unsigned negation reverses no order)")
_positive = (a > f64(0.0), *FINITE, float_dtype(d))
R.family("reduce-max-scalar-mul", REAL,
       [rewrite(reduce(f, T.mul(lit(a), x), p)).to(T.mul(lit(a), reduce(f, x, p)), *_positive)
        for f in ("reduce_max", "reduce_min")]
       + [rewrite(reduce(f, T.mul(x, lit(a)), p)).to(T.mul(reduce(f, x, p), lit(a)), *_positive)
          for f in ("reduce_max", "reduce_min")],
       math="max(c*x) -> c*max(x) for a finite float literal c > 0 (rounding is monotone; signed zeros)")


# --- dot_general ---------------------------------------------------------------------------------------


def dot(lhs, rhs, numbers=dn, params: str = "s"):
    """A dot whose other params are the pattern variables named `params` ("": the defaults)."""
    return T.dot_general(lhs, rhs, numbers, **(T.params("dot_general", params) if params else {}))


def _dot_scalar_mul() -> list[RewriteOrRule]:
    c = lit(a)
    cases = [(dot(T.mul(c, x), y), T.mul(c, dot(x, y))), (dot(T.mul(x, c), y), T.mul(dot(x, y), c)),
             (dot(x, T.mul(c, y)), T.mul(c, dot(x, y))), (dot(x, T.mul(y, c)), T.mul(dot(x, y), c))]
    return [rewrite(lhs).to(rhs, *FINITE, eq(dtype_of(lhs)).to(d)) for lhs, rhs in cases]


R.family("dot-scalar-mul", REAL, _dot_scalar_mul(),
       math="dot(c*x, y) -> c*dot(x, y) (either operand, either side) for a finite literal c")
R.family("dot-neg", REAL,
       [rewrite(dot(T.neg(x), y)).to(T.neg(dot(x, y))), rewrite(dot(x, T.neg(y))).to(T.neg(dot(x, y)))],
       math="dot(-x, y) -> -dot(x, y) (real: signed zeros of the sum)")
_SWAP = ints(1, 0)
R.family("dot-transpose-operand", REAL,
       [rewrite(dot(transposed(x, _SWAP), y, dimension_numbers([lc], [rc]))).to(
           dot(x, y, dimension_numbers([1 - lc], [rc]))) for lc in (0, 1) for rc in (0, 1)]
       + [rewrite(dot(x, transposed(y, _SWAP), dimension_numbers([lc], [rc]))).to(
           dot(x, y, dimension_numbers([lc], [1 - rc]))) for lc in (0, 1) for rc in (0, 1)],
       math="dot(A^T, B) contracts A's other axis (either operand; real: the summation order may change)")
R.family("transpose-dot", REAL,
       [rewrite(T.transpose(dot(x, y, dimension_numbers([lc], [rc])), _SWAP)).to(
           dot(y, x, dimension_numbers([rc], [lc])), rank_is(shape_of(x), 2), rank_is(shape_of(y), 2),
           eq(dtype_of(x)).to(dtype_of(y)))
        for lc in (0, 1) for rc in (0, 1)],
       math="transpose(A@B) -> B^T@A^T, as one dot_general with swapped operands (real)")
_same_dtypes = (eq(dtype_of(x)).to(d), eq(dtype_of(y)).to(d), eq(dtype_of(z)).to(d))
_finite_operands = (finite(x), finite(y), finite(z))
for _suffix, _soundness, _guards, _note in (("", UNSAFE, (), "±inf entries may give inf on one side, nan on the "
                                             "other"), ("-finite", GUARDED, _finite_operands, "finite operands")):
    R.birw(f"dot-assoc{_suffix}", _soundness, dot(dot(x, y, MATMUL, ""), z, MATMUL, ""),
           dot(x, dot(y, z, MATMUL, ""), MATMUL, ""), rank_is(shape_of(x), 2), rank_is(shape_of(y), 2),
           *_same_dtypes, *_guards,
           math=f"(A@B)@C <=> A@(B@C) for matrices A, B and a matrix or vector C ({_note})", explosive=True)
    R.birw(f"dot-assoc-vecmat{_suffix}", _soundness, dot(x, dot(y, z, MATMUL, ""), VECMAT, ""),
           dot(dot(x, y, VECMAT, ""), z, VECMAT, ""), rank_is(shape_of(x), 1), rank_is(shape_of(y), 2),
           *_same_dtypes, *_guards, math=f"v@(A@C) <=> (v@A)@C for a vector v and a matrix A ({_note})",
           explosive=True)
