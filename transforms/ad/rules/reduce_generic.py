"""JVP and VJP rules of the generic reductions, `reduce` and `reduce_window`, differentiated through their reducer
(a jaxpr), for any number of operands.

As JAX's `reduce_window` JVP does, the tangents are one more reduction over (operands, tangents) whose reducer is
the JVP of the original one (built here by `reducer_jvp`). JAX's `reduce` JVP reduces the same pairs with a tree
rather than a fold: the same tangents up to rounding when the init values are the reducer's identities. Integer
operands carry zero tangents. The VJP of `reduce` runs that JVP once per reduced position, with a one-hot tangent;
JAX has no VJP of a generic reduce_window.

A reduction of n operands has 2n operands (then the n init values) and n results. One rule per slot serves every
n: the rules match the operands, results and seeds as lists and build the reduction's operand lists (and the VJP's
sum over results) with the list functions of `transforms.arglists` (`take`, `drop`, `concat`) and the five below,
which the prelude expands:

    flat_all(xs, perm, flat, spread, along)  each x in the flat layout, broadcast along the one-hot axis m
    seeded(xs, k, hot, spread)               the tangents: `hot` for x_k, a zero of x's dtype for the others
    zeros_of(xs)                             a rank-0 zero of each x's dtype (the init values' tangents)
    sum_from(acc, cts, j, ...)               ((acc + term(cts[0], j)) + term(cts[1], j + 1)) + ..
    term(ct, j, tup, n, i, flat, lead, dt)   ct * (result n + j of tup), converted to x_i's dtype where j != i

A reducer using primitives outside `_TANGENTS` is refused with UnsupportedPrimitive (as is the VJP of an init
value, or of a generic reduce_window).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from egglog import String, StringLike, Vec, eq, function, i64, i64Like, ne, rewrite, var

from ir import dtypes, lax
from ir.core import ClosedJaxpr, Literal
from ir.errors import UnsupportedPrimitive
from ir.tracing import aval_of, bind, literal, trace_flat
from rewrites.terms import Args, Arr, T, Tup, dtype_of, get
from transforms.ad.rule import INT, INTS, STR, ADBook, Leading, Values, params
from transforms.arglists import concat, drop, take

A = ADBook("reduce")
EMPTY = Vec[i64].empty()


def _add_tangents(a, b):
    return b if a is None else a if b is None else lax.add(a, b)


def _scaled(t, factor):
    return None if t is None else lax.mul(t, factor)


def _balanced_eq(x, z, y):
    """JAX's `_balanced_eq` (max/min JVP): 1 where x = z != y, 1/2 where both equal z, else 0."""
    dt = aval_of(z).dtype
    hit = lax.convert_element_type(lax.eq(x, z), dt)
    return lax.div(hit, lax.add(literal(1, dt, False), lax.convert_element_type(lax.eq(y, z), dt)))


def _select_tangent(ins, tans, out):
    if all(t is None for t in tans[1:]):
        return None
    zero = literal(0, aval_of(out).dtype, False)
    return lax.select_n(ins[0], *(zero if t is None else t for t in tans[1:]))


# The tangent of a scalar equation from its operands, their tangents (None: zero) and its result.
_TANGENTS = {
    "add": lambda ins, tans, out: _add_tangents(*tans),
    "add_any": lambda ins, tans, out: _add_tangents(*tans),
    "sub": lambda ins, tans, out: _add_tangents(tans[0], None if tans[1] is None else lax.neg(tans[1])),
    "neg": lambda ins, tans, out: None if tans[0] is None else lax.neg(tans[0]),
    "mul": lambda ins, tans, out: _add_tangents(_scaled(tans[0], ins[1]), _scaled(tans[1], ins[0])),
    "div": lambda ins, tans, out: _add_tangents(
        None if tans[0] is None else lax.div(tans[0], ins[1]),
        None if tans[1] is None else lax.mul(lax.mul(lax.neg(tans[1]), ins[0]), lax.integer_pow(ins[1], -2))),
    "max": lambda ins, tans, out: _add_tangents(_scaled(tans[0], _balanced_eq(ins[0], out, ins[1])),
                                                _scaled(tans[1], _balanced_eq(ins[1], out, ins[0]))),
    "select_n": _select_tangent,
    "convert_element_type": lambda ins, tans, out: None if tans[0] is None else lax.convert_element_type(
        tans[0], aval_of(out).dtype),
}
_TANGENTS["min"] = _TANGENTS["max"]
_NO_TANGENT = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "xor", "is_finite", "sign",
                         "floor", "ceil", "round", "stop_gradient"})


def _differentiable(x) -> bool:
    return aval_of(x).dtype.kind in "fc"


def _jvp_of_body(closed: ClosedJaxpr, primals: list, tangents: list, prim: str) -> tuple[list, list]:
    """Replays `closed` on `primals` in the current trace; also returns the outputs' tangents."""
    env, tenv = {}, {}
    for v, x, t in zip(closed.jaxpr.invars, primals, tangents, strict=True):
        env[id(v)], tenv[id(v)] = x, t if _differentiable(x) else None

    def read(a, table):
        return (a if table is env else None) if isinstance(a, Literal) else table[id(a)]

    for eqn in closed.jaxpr.eqns:
        ins = [read(a, env) for a in eqn.invars]
        tans = [read(a, tenv) for a in eqn.invars]
        [v] = eqn.outvars
        out = bind(eqn.primitive, *ins, **eqn.params)
        rule = _TANGENTS.get(eqn.primitive)
        if eqn.primitive not in _NO_TANGENT and rule is None and any(t is not None for t in tans):
            raise UnsupportedPrimitive(prim, f"JVP of a reducer that uses {eqn.primitive}",
                                       "transforms/ad/rules/reduce.py (_TANGENTS)")
        env[id(v)] = out
        tenv[id(v)] = rule(ins, tans, out) if rule is not None and _differentiable(out) else None
    return [read(a, env) for a in closed.jaxpr.outvars], [read(a, tenv) for a in closed.jaxpr.outvars]


def reducer_jvp(closed: ClosedJaxpr, prim: str) -> ClosedJaxpr:
    """The reducer of a reduction over (operands, tangents): (accumulators, their tangents, elements,
    their tangents) -> (results, their tangents), from `closed`: (accumulators, elements) -> results."""
    if closed.consts or closed.jaxpr.constvars:
        raise UnsupportedPrimitive(prim, "JVP of a reducer with constants", "transforms/ad/rules/reduce.py")
    if any(len(e.outvars) != 1 for e in closed.jaxpr.eqns):
        raise UnsupportedPrimitive(prim, "JVP of a reducer with multi-result equations",
                                   "transforms/ad/rules/reduce.py")
    n = len(closed.jaxpr.outvars)
    avals = [v.aval for v in closed.jaxpr.invars[:n]]

    def jvp(*args):
        acc, acc_t, xs, xs_t = (args[k * n:(k + 1) * n] for k in range(4))
        outs, tans = _jvp_of_body(closed, [*acc, *xs], [*acc_t, *xs_t], prim)
        return [*outs, *(literal(0, a.dtype, False) if t is None else t for t, a in zip(tans, avals, strict=True))]

    return trace_flat(jvp, avals * 4)[0]


@cache
def _with_reducer_jvp(prim) -> Values:
    """The reduction over (operands, tangents) by the reducer's JVP, and the operand count n (half the operands:
    then the n init values)."""
    def fn(p, ins, outs, j):
        return {"params": {**p, "jaxpr": reducer_jvp(p["jaxpr"], prim)}, "count": len(ins) // 2}
    return Values(fn, params=params(prim), count=INT)


def _reduction_jvp(prim):
    """Result j's tangent: result n + j of the reduction of (x.., dx.., init.., d init..)."""
    def jvp(tangents, primals, outs, v):
        n = v["count"]
        both = concat(take(primals, n), concat(take(tangents, n), concat(drop(primals, n), drop(tangents, n))))
        return get(T.of(prim)(both, **v["params"]), n + v["index"])
    return jvp


for _prim in ("reduce", "reduce_window"):
    A.add("jvp", _prim, "out*", "all", _with_reducer_jvp(_prim),
          "tangents = the reduction of (x, dx) by the reducer's JVP, from (init, d init)", None, None, None,
          _reduction_jvp(_prim))


def _onehot_params(p, ins, outs, i):
    """The flat layout (kept axes first, the reduced ones as one axis), its spread with one more axis m for the
    differentiated position, the one-hot iotas, the reducer's JVP reducing that axis, the way back, operand i's
    dtype and the operand count n."""
    n = len(ins) // 2
    if i >= n:
        raise UnsupportedPrimitive("reduce", f"VJP (operand {i}: an init value)", "transforms/ad/rules")
    shape, axes = ins[0].shape, tuple(p["dimensions"])
    kept = tuple(d for d in range(len(shape)) if d not in set(axes))
    perm, nk = kept + axes, len(kept)
    flat = tuple(shape[d] for d in kept) + (math.prod(shape[d] for d in axes),)
    spread = flat + flat[-1:]

    def iota(dim):
        return {"dtype": dtypes.int32, "shape": spread, "dimension": dim, "sharding": None}

    jvp = {**p, "jaxpr": reducer_jvp(p["jaxpr"], "reduce"), "dimensions": (nk + 1,)}
    return {"perm": perm, "flat": flat, "spread": spread, "along": tuple(range(nk)) + (nk + 1,), "iota_m": iota(nk),
            "iota_r": iota(nk + 1), "params": jvp, "lead": tuple(range(nk)), "moved": tuple(shape[d] for d in perm),
            "inverse": tuple(int(k) for k in np.argsort(perm)), "dt": ins[i].dtype.name, "count": n}


@function(egg_fn="reduce_vjp_flat_all", unextractable=True)
def flat_all(xs: Args, perm: Vec[i64], flat: Vec[i64], spread: Vec[i64], along: Vec[i64]) -> Args: ...


@function(egg_fn="reduce_vjp_seeded", unextractable=True)
def seeded(xs: Args, k: i64Like, hot: Arr, spread: Vec[i64]) -> Args: ...


@function(egg_fn="reduce_vjp_zeros_of", unextractable=True)
def zeros_of(xs: Args) -> Args: ...


@function(egg_fn="reduce_vjp_term", unextractable=True)
def term(ct: Arr, j: i64Like, tup: Tup, n: i64Like, i: i64Like, flat: Vec[i64], lead: Vec[i64],
         dt: StringLike) -> Arr: ...


@function(egg_fn="reduce_vjp_sum_from", unextractable=True)
def sum_from(acc: Arr, cts: Args, j: i64Like, tup: Tup, n: i64Like, i: i64Like, flat: Vec[i64], lead: Vec[i64],
             dt: StringLike) -> Arr: ...


x, h, c, acc = (var(name, Arr) for name in ("x", "h", "c", "acc"))
rest, tup = var("rest", Args), var("tup", Tup)
k, j, n, i = (var(name, i64) for name in ("k", "j", "n", "i"))
perm, flat, spread, along, lead = (var(name, Vec[i64]) for name in ("perm", "flat", "spread", "along", "lead"))
dt, d = var("dt", String), var("d", String)
A.expansion("reduce-vjp-flat-all", "flat_all(x : xs) = widen(x) : flat_all(xs), widen(x) = x transposed, reshaped "
            "to the flat layout, broadcast along m", lambda: (
                rewrite(flat_all(Args.nil(), perm, flat, spread, along)).to(Args.nil()),
                rewrite(flat_all(Args.cons(x, rest), perm, flat, spread, along)).to(Args.cons(
                    T.broadcast_in_dim(T.reshape(T.transpose(x, perm), flat), spread, along),
                    flat_all(rest, perm, flat, spread, along)))), trigger="reduce_vjp_flat_all")
A.expansion("reduce-vjp-seeded", "seeded(xs, k, hot) = [hot at k, zeros of each other x's dtype]", lambda: (
    rewrite(seeded(Args.nil(), k, h, spread)).to(Args.nil()),
    rewrite(seeded(Args.cons(x, rest), i64(0), h, spread)).to(Args.cons(h, seeded(rest, i64(-1), h, spread))),
    rewrite(seeded(Args.cons(x, rest), k, h, spread)).to(
        Args.cons(T.broadcast_in_dim(Arr.scalar(0.0, d), spread, EMPTY), seeded(rest, k - 1, h, spread)),
        ne(k).to(i64(0)), eq(d).to(dtype_of(x)))), trigger="reduce_vjp_seeded")
A.expansion("reduce-vjp-zeros-of", "zeros_of(x : xs) = 0 of x's dtype : zeros_of(xs)", lambda: (
    rewrite(zeros_of(Args.nil())).to(Args.nil()),
    rewrite(zeros_of(Args.cons(x, rest))).to(Args.cons(Arr.scalar(0.0, d), zeros_of(rest)),
                                             eq(d).to(dtype_of(x)))), trigger="reduce_vjp_zeros_of")
A.expansion("reduce-vjp-term", "term(ct, j) = ct_j * d result_j / d x_i, in x_i's dtype", lambda: (
    rewrite(term(c, i, tup, n, i, flat, lead, dt)).to(T.mul(T.broadcast_in_dim(c, flat, lead), get(tup, n + i))),
    rewrite(term(c, j, tup, n, i, flat, lead, dt)).to(
        T.convert_element_type(T.mul(T.broadcast_in_dim(c, flat, lead), get(tup, n + j)), dt), ne(j).to(i))),
            trigger="reduce_vjp_term")
A.expansion("reduce-vjp-sum-from", "sum_from(acc, ct : cts, j) = sum_from(acc + term(ct, j), cts, j + 1)", lambda: (
    rewrite(sum_from(acc, Args.nil(), j, tup, n, i, flat, lead, dt)).to(acc),
    rewrite(sum_from(acc, Args.cons(c, rest), j, tup, n, i, flat, lead, dt)).to(
        sum_from(T.add(acc, term(c, j, tup, n, i, flat, lead, dt)), rest, j + 1, tup, n, i, flat, lead, dt))),
            trigger="reduce_vjp_sum_from")


def _reduce_vjp(cts, xs, outs, v):
    """Operand i's cotangent: in the flat layout with one more axis m for the differentiated position, the
    reducer's JVP reduces (x, [m = position]) to d result_j / d x_i[m], weighted by ct_j and summed over j."""
    i, n, flat, lead, dt = v["index"], v["count"], v["flat"], v["lead"], v["dt"]
    hot = T.convert_element_type(T.eq(T.iota(**v["iota_m"]), T.iota(**v["iota_r"])), dt)
    operands, inits = take(xs, n), drop(xs, n)
    both = concat(flat_all(operands, v["perm"], flat, v["spread"], v["along"]),
                  concat(seeded(operands, i, hot, v["spread"]), concat(inits, zeros_of(inits))))
    tup = T.reduce(both, **v["params"])
    total = sum_from(term(cts[0], i64(0), tup, n, i, flat, lead, dt), cts[1], i64(1), tup, n, i, flat, lead, dt)
    return T.transpose(T.reshape(total, v["moved"]), v["inverse"])


A.add("vjp", "reduce", "*", "all", Values(
    _onehot_params, perm=INTS, flat=INTS, spread=INTS, along=INTS, iota_m=params("iota"), iota_r=params("iota"),
    params=params("reduce"), lead=INTS, moved=INTS, inverse=INTS, dt=STR, count=INT),
      "ct_x_i[m] = sum_j ct_j * (reduction of (x, one-hot at m) by the reducer's JVP)_j", None, None, Leading(1),
      _reduce_vjp)
