"""Batching rules of reductions, cumulative reductions and window reductions (JAX's rules in
jax/_src/lax/lax.py `_reduce_op_batch_rule`/`defreducer`, `_reduce_batch_rule`, control_flow/loops.py
`_cumred_batch_rule` and windowed_reductions.py `_reduce_window_batch_rule`,
`_generic_reduce_window_batch_rule`, `_select_and_gather_add_batching_rule`,
`_select_and_scatter_add_batch_rule`).

With the batch axis first, a reduction is the same op with its axes shifted by one (the batch axis is
never reduced, and the fold order over the reduced axes is unchanged); a window op gets a window of 1,
stride 1, no padding and no dilation along the batch axis.

Variadic `reduce` / `reduce_window` (operands, then one scalar init value each) broadcast their unbatched
operands (JAX's `bdim_at_front`; `materialize` of the operands, not the init values) and have one rule for
any operand count while the init values are unbatched: they stay as they are. JAX refuses batched init
values; here a `reduce` of up to `MAX_BATCHED_INITS` operands takes them exactly (`first_seen`, one rule
per init pattern); `reduce_window`, whose padding holds the init value, raises UnsupportedPrimitive for
them, as does a reduce of more operands.
"""

from __future__ import annotations

import itertools
import math

from ir import dtypes, lax
from ir.core import ClosedJaxpr, ShapedArray
from ir.params import as_ints
from ir.primitives import primitives_with
from ir.tracing import bind_jaxpr, trace_flat
from rewrites.terms import Arr, T, args_list
from transforms.batching.rule import INTS, Site, Values, VmapBook, dtype, node, params, shifted, variadic_result

V = VmapBook("reduce")
MAX_BATCHED_INITS = 2  # reduce with up to this many operands when an init value is batched

# --- axis and cumulative reductions: the axes shifted past the batch axis ------------------------------

AXIS_REDUCTIONS = primitives_with("reduction") + primitives_with("arg_reduction")
CUMULATIVE = primitives_with("cumulative")

for _prim in AXIS_REDUCTIONS:
    V.batch(_prim, "b", lambda x, *, op: op(x),
            values=Values(lambda e: {"op": {**e.params, "axes": shifted(as_ints(e.params["axes"]))}}, op=node(_prim)),
            math="r(x)[b] = r(x[b]) over axes + 1: the batch axis is kept, each slice reduced as before "
                 "(argmax/argmin: the index along the same axis)")
for _prim in CUMULATIVE:
    V.batch(_prim, "b", lambda x, *, op: op(x),
            values=Values(lambda e: {"op": {**e.params, "axis": int(e.params["axis"]) + 1}}, op=node(_prim)),
            math="scan(x)[b] = scan(x[b]) along axis + 1, in the same direction")

# --- window reductions: a trivial window along the batch axis -------------------------------------------


def batched_window(p: dict) -> dict:
    """Window params with the batch axis in front: window 1, stride 1, padding (0, 0), dilation 1."""
    out = {**p, "window_dimensions": (1, *as_ints(p["window_dimensions"])),
           "window_strides": (1, *as_ints(p["window_strides"])),
           "padding": ((0, 0), *(tuple(as_ints(pair)) for pair in p["padding"]))}
    for k in ("base_dilation", "window_dilation"):
        if p.get(k) is not None:
            out[k] = (1, *as_ints(p[k]))
    return out


for _prim in ("reduce_window_sum", "reduce_window_max", "reduce_window_min"):
    V.batch(_prim, "b", lambda x, *, op: op(x),
            values=Values(lambda e: {"op": batched_window(e.params)}, op=node(_prim)),
            math="each window of x[b] is a window of x of extent 1 along the batch axis")

for _prim in ("select_and_gather_add", "select_and_scatter_add"):
    V.batch(_prim, None, lambda t, x, *, op: op(t, x), materialize=True,
            values=Values(lambda e: {"op": batched_window(e.params)}, op=node(_prim)),
            math="windows of extent 1 along the batch axis select within each slice; both operands "
                 "broadcast to the batch first, as JAX's rules do")

# --- variadic reduce and reduce_window ------------------------------------------------------------------


def _operands(count: int) -> int:
    """How many operands a variadic reduce of `count` operands and init values has: half."""
    return count // 2


def _reduce_params(e: Site) -> dict:
    return {"op": {**e.params, "dimensions": shifted(as_ints(e.params["dimensions"]))}}


def _window_params(e: Site) -> dict:
    return {"op": batched_window(e.params)}


for _prim, _params in (("reduce", _reduce_params), ("reduce_window", _window_params)):
    V.batch(_prim, "b*u*", lambda xs, *, op, index: variadic_result(op, index, xs), materialize=_operands,
            variadic=True, each_result=True, values=Values(_params, op=node(_prim)),
            math="the reducer folds each slice's elements as before (dimensions + 1 / a window of 1 along the "
                 "batch axis); unbatched operands are broadcast, the inits stay scalars")

# A batched init value of `reduce`: reduce's fold is acc = f(acc, x) from acc = init. Each row of the
# reduced elements (flattened, in fold order) gets its own init prepended, and the reducer is wrapped to
# take a `seen` flag with each value: the first element seen replaces the accumulator, later ones are
# folded by f. From an accumulator that is not seen, the fold gives f(...f(init_b, x_0)..., x_last)
# exactly, whatever f is.


def first_seen(closed: ClosedJaxpr, kinds: list) -> ClosedJaxpr:
    """(accs, seen, xs, x_seen) -> (seen ? f(accs, xs) : xs, seen | x_seen), from f = `closed`."""
    n = len(kinds)
    avals = [ShapedArray((), d) for d in kinds] + [ShapedArray((), dtypes.bool_)]

    def wrapped(*args):
        acc, seen, xs, x_seen = args[:n], args[n], args[n + 1:2 * n + 1], args[2 * n + 1]
        folded = bind_jaxpr(closed, *acc, *xs)
        return [*(lax.select_n(seen, x, y) for x, y in zip(xs, folded, strict=True)), lax.bitwise_or(seen, x_seen)]

    return trace_flat(wrapped, avals * 2)[0]


def _init_params(e: Site) -> dict:
    """The reduce of the rows, then the rows layout: the permutation taking the batched operand to (B, kept...,
    reduced...), its flat shape (B, kept..., R), the inits' column (B, kept..., 1), the rows with their init
    (B, kept..., R + 1) and the concatenation axis."""
    shape, dims = e.in_avals[0].shape, tuple(as_ints(e.params["dimensions"]))
    kept = tuple(d for d in range(len(shape)) if d not in dims)
    axis = len(kept) + 1
    perm = (0, *shifted(kept), *shifted(dims))
    lead = (e.size, *(shape[d] for d in kept))
    reduced = math.prod(shape[d] for d in dims)
    body = first_seen(e.params["jaxpr"], [a.dtype for a in e.in_avals[:len(e.in_avals) // 2]])
    return {"op": {**e.params, "jaxpr": body, "dimensions": (axis,)}, "perm": perm,
            "flat": (*lead, reduced), "column": (*lead, 1), "widened": (*lead, reduced + 1),
            "joined": {"dimension": axis}}


def _batched_init_rule(inits: str):
    """The rule of init pattern `inits` (the operands are broadcast already)."""
    n = len(inits)

    def rule(*xs, op, index, perm, flat, column, widened, joined):
        rows = [T.reshape(T.transpose(x, perm), flat) for x in xs[:n]]
        firsts = [T.broadcast_in_dim(i, column, (0,) if b == "b" else ()) for i, b in zip(xs[n:], inits, strict=True)]
        values = [T.concatenate(args_list([i, r]), **joined) for i, r in zip(firsts, rows, strict=True)]
        seen = T.broadcast_in_dim(Arr.scalar(1.0, "bool"), widened, ())
        zeros = [Arr.scalar(0.0, dtype(x)) for x in xs[:n]]
        return op.result(index, *values, seen, *zeros, Arr.scalar(0.0, "bool"))
    return rule


for _n in range(1, MAX_BATCHED_INITS + 1):
    for _inits in ("".join(p) for p in itertools.product("bu", repeat=_n)):
        if "b" in _inits:
            V.batch("reduce", "b" * _n + _inits, _batched_init_rule(_inits), materialize=_operands, each_result=True,
                    values=Values(_init_params, op=node("reduce"), perm=INTS, flat=INTS, column=INTS,
                                  widened=INTS, joined=params("concatenate")),
                    math="reduce over [init_b, row of x[b]] with a `seen` flag: the fold from an unseen "
                         "accumulator is f(...f(init_b, x_0)...), the unbatched fold of each slice")
