"""JVP and VJP rules of reductions, cumulative reductions and window reductions. Forms follow JAX's own
rules (jax/_src/lax/lax.py, control_flow/loops.py, windowed_reductions.py) where they are expressible as
terms; where JAX differentiates an algorithm (a multiplication tree for `reduce_prod`, the associative
scan behind `cumprod`/`cummax`/`cumlogsumexp`), the rule is a closed form of the same linear map.

Layouts the rules build, with the params computed by their `Values`:
    flat     a reduction's operand transposed (kept axes first) and reshaped to `kept + (n,)`
    pairs    a cumulative op's operand with its axis `a` doubled: shape[:a] + (n, n) + shape[a+1:], axis a
             the output index i, axis a+1 the input index j, and `prefix` the mask j <= i (j >= i reversed)

The generic `reduce` and `reduce_window`, differentiated through their reducer, are in `reduce_generic`.
A case a rule's `Values` rejects raises UnsupportedPrimitive (dilated max/min windows in reverse mode).
"""

from __future__ import annotations

import math

import numpy as np

from ir import dtypes
from ir.errors import UnsupportedPrimitive
from ir.params import Symbol
from rewrites.terms import Arr, T, args_list
from transforms.ad.rule import INT, INTS, ADBook, Values, dtype, params, zeros_like

A = ADBook("reduce")
EMPTY: tuple[int, ...] = ()


def _kept(axes, ndim: int) -> tuple[int, ...]:
    return tuple(d for d in range(ndim) if d not in set(axes))


def _select(pred: Arr, on_false: Arr, on_true: Arr) -> Arr:
    return T.select_n(args_list([pred, on_false, on_true]))


def _full(value: float, like: Arr, shape) -> Arr:
    return T.broadcast_in_dim(Arr.scalar(value, dtype(like)), shape, EMPTY)


# --- reduce_sum: linear; its transpose broadcasts over the reduced axes ----------------------------


def _sum_transpose(p, ins, outs):
    return {"shape": ins[0].shape, "kept": _kept(p["axes"], ins[0].ndim)}


A.jvp_linear("reduce_sum", [0], math="d sum(x) = sum(dx)")
A.vjp("reduce_sum", 0, lambda ct, x, ans, *, shape, kept: T.broadcast_in_dim(ct, shape, kept),
      values=Values(_sum_transpose, shape=INTS, kept=INTS), math="sum^T ct = broadcast ct over the reduced axes")

# --- reduce_max / reduce_min: JAX's `_reduce_chooser_jvp_rule` ---------------------------------------


def _chooser_params(p, ins, outs):
    return {"shape": ins[0].shape, "kept": _kept(p["axes"], ins[0].ndim), "axes": tuple(p["axes"])}


_CHOOSER = Values(_chooser_params, shape=INTS, kept=INTS, axes=INTS)


def _location(x: Arr, ans: Arr, seed: Arr, shape, kept) -> Arr:
    """1 where x equals its reduction, else 0, in the seed's dtype."""
    return T.convert_element_type(T.eq(x, T.broadcast_in_dim(ans, shape, kept)), dtype(seed))


def _chooser_jvp(g, x, ans, *, shape, kept, axes):
    loc = _location(x, ans, g, shape, kept)
    return T.div(T.reduce_sum(T.mul(g, loc), axes), T.reduce_sum(loc, axes))


def _chooser_vjp(ct, x, ans, *, shape, kept, axes):
    loc = _location(x, ans, ct, shape, kept)
    return T.mul(T.broadcast_in_dim(T.div(ct, T.reduce_sum(loc, axes)), shape, kept), loc)


for _prim in ("reduce_max", "reduce_min"):
    A.jvp(_prim, 0, _chooser_jvp, values=_CHOOSER,
          math="dy = sum(dx * [x = y]) / sum([x = y]): ties share the tangent equally")
    A.vjp(_prim, 0, _chooser_vjp, values=_CHOOSER,
          math="ct_x = broadcast(ct / sum([x = y])) * [x = y]")

# --- reduce_prod: JAX differentiates a multiplication tree; the closed form multiplies each tangent by
# the product of the other elements, exclusive prefix times exclusive suffix products (no division, so
# zeros give the tree's values).


def _prod_params(p, ins, outs):
    shape, axes = ins[0].shape, tuple(p["axes"])
    kept = _kept(axes, len(shape))
    perm, nk = kept + axes, len(kept)
    flat = tuple(shape[d] for d in kept) + (math.prod(shape[d] for d in axes),)

    def pad(lo, hi):
        return {"padding_config": ((0, 0, 0),) * nk + ((lo, hi, 0),)}

    return {"perm": perm, "flat": flat, "axis": nk, "before": pad(1, -1), "after": pad(-1, 1),
            "reverse": {"reverse": True}, "last": (nk,), "lead": tuple(range(nk)),
            "moved": tuple(shape[d] for d in perm), "inverse": tuple(int(i) for i in np.argsort(perm))}


_PROD = Values(_prod_params, perm=INTS, flat=INTS, axis=INT, before=params("pad"), after=params("pad"),
               reverse=params("cumprod"), last=INTS, lead=INTS, moved=INTS, inverse=INTS)


def _others(x: Arr, perm, flat, axis, before, after, reverse) -> Arr:
    """In the flat layout: each element's product of the other reduced elements."""
    xs = T.reshape(T.transpose(x, perm), flat)
    one = Arr.scalar(1.0, dtype(x))
    return T.mul(T.pad(T.cumprod(xs, axis), one, **before),
                 T.pad(T.cumprod(xs, axis, **reverse), one, **after))


def _prod_jvp(g, x, ans, *, perm, flat, axis, before, after, reverse, last, lead, moved, inverse):
    others = _others(x, perm, flat, axis, before, after, reverse)
    return T.reduce_sum(T.mul(T.reshape(T.transpose(g, perm), flat), others), last)


def _prod_vjp(ct, x, ans, *, perm, flat, axis, before, after, reverse, last, lead, moved, inverse):
    others = _others(x, perm, flat, axis, before, after, reverse)
    return T.transpose(T.reshape(T.mul(T.broadcast_in_dim(ct, flat, lead), others), moved), inverse)


A.jvp("reduce_prod", 0, _prod_jvp, values=_PROD, math="d prod(x) = sum_i dx_i prod_{j != i} x_j")
A.vjp("reduce_prod", 0, _prod_vjp, values=_PROD, math="ct_x_i = ct prod_{j != i} x_j")


# --- cumulative reductions --------------------------------------------------------------------------


def _cumsum_transpose(p, ins, outs):
    return {"axis": p["axis"], "flipped": {"reverse": not p["reverse"]}}


A.jvp_linear("cumsum", [0], math="d cumsum(x) = cumsum(dx)")
A.vjp("cumsum", 0, lambda ct, x, ans, *, axis, flipped: T.cumsum(ct, axis, **flipped),
      values=Values(_cumsum_transpose, axis=INT, flipped=params("cumsum")),
      math="cumsum^T = cumsum in the other direction")

# cumprod, cummax, cummin and cumlogsumexp: JAX differentiates their associative scan. The tangent is
# t_i = sum_{j in prefix(i)} w_ij dx_j with closed-form weights, built in the pairs layout (quadratic in
# the axis length). cummax/cummin share the tangent equally among tied maxima (JAX's scan gives halves
# to two-way ties, as here, but tree-dependent weights to three or more).


def _pairs_params(p, ins, outs):
    shape, a = ins[0].shape, int(p["axis"])
    n, rank = shape[a], len(shape)
    pairs = shape[:a] + (n, n) + shape[a + 1:]
    along_i = tuple(range(a + 1)) + tuple(range(a + 2, rank + 1))
    along_j = tuple(range(a)) + tuple(range(a + 1, rank + 1))
    first, second = (a + 1, a) if p["reverse"] else (a, a + 1)

    def iota(dim):
        return {"dtype": dtypes.int32, "shape": pairs, "dimension": dim, "sharding": None}

    return {"pairs": pairs, "along_i": along_i, "along_j": along_j, "axis_i": (a,), "axis_j": (a + 1,),
            "iota_1": iota(first), "iota_2": iota(second), "axis": a, "cumprod": {"reverse": p["reverse"]}}


_PAIRS = Values(_pairs_params, pairs=INTS, along_i=INTS, along_j=INTS, axis_i=INTS, axis_j=INTS,
                iota_1=params("iota"), iota_2=params("iota"), axis=INT, cumprod=params("cumprod"))


class _Pairs:
    """The pairs layout of one rule: broadcasts along i or j, the prefix mask, sums over i or j."""

    def __init__(self, pairs, along_i, along_j, axis_i, axis_j, iota_1, iota_2):
        self.pairs, self.along_i, self.along_j = pairs, along_i, along_j
        self.axis_i, self.axis_j = axis_i, axis_j
        self.iota_1, self.iota_2 = T.iota(**iota_1), T.iota(**iota_2)

    def at_i(self, v: Arr) -> Arr:
        return T.broadcast_in_dim(v, self.pairs, self.along_i)

    def at_j(self, v: Arr) -> Arr:
        return T.broadcast_in_dim(v, self.pairs, self.along_j)

    @property
    def prefix(self) -> Arr:
        return T.ge(self.iota_1, self.iota_2)

    def masked(self, w: Arr, like: Arr) -> Arr:
        return _select(self.prefix, _full(0.0, like, self.pairs), w)

    def sum_j(self, v: Arr) -> Arr:
        return T.reduce_sum(v, self.axis_j)

    def sum_i(self, v: Arr) -> Arr:
        return T.reduce_sum(v, self.axis_i)


def _pairs_rule(body):
    """A rule taking the pairs values, calling `body(seed, x, ans, pairs, axis, cumprod)`."""
    def rule(seed, x, ans, *, pairs, along_i, along_j, axis_i, axis_j, iota_1, iota_2, axis, cumprod):
        return body(seed, x, ans, _Pairs(pairs, along_i, along_j, axis_i, axis_j, iota_1, iota_2), axis, cumprod)
    return rule


def _weights(prim: str, x: Arr, ans: Arr, pairs: _Pairs, axis, cumprod) -> Arr:
    """w_ij for j in prefix(i), 0 elsewhere."""
    if prim == "cumlogsumexp":
        # exp of the masked difference: outside the prefix x_j - y_i may overflow, and the algebra's
        # exp(a - b) = exp(a)/exp(b) would turn an in-prefix weight into 0/0 where both underflow.
        return pairs.masked(T.exp(pairs.masked(T.sub(pairs.at_j(x), pairs.at_i(ans)), x)), x)
    # cumprod: w_ij = prod_{k in prefix(i), k != j} x_k, a cumulative product down the i axis of x_k
    # with x_j replaced by 1.
    others = _select(T.eq(pairs.iota_1, pairs.iota_2), pairs.at_i(x), _full(1.0, x, pairs.pairs))
    return pairs.masked(T.cumprod(others, axis, **cumprod), x)


def _chosen(x: Arr, ans: Arr, pairs: _Pairs) -> Arr:
    """[j in prefix(i) and x_j = y_i] in x's dtype."""
    both = getattr(T, "and")(pairs.prefix, T.eq(pairs.at_j(x), pairs.at_i(ans)))
    return T.convert_element_type(both, dtype(x))


def _weighted_jvp(prim):
    return _pairs_rule(lambda g, x, ans, pairs, *scan: pairs.sum_j(
        T.mul(_weights(prim, x, ans, pairs, *scan), pairs.at_j(g))))


def _weighted_vjp(prim):
    return _pairs_rule(lambda ct, x, ans, pairs, *scan: pairs.sum_i(
        T.mul(_weights(prim, x, ans, pairs, *scan), pairs.at_i(ct))))


@_pairs_rule
def _cumchooser_jvp(g, x, ans, pairs, axis, cumprod):
    chosen = _chosen(x, ans, pairs)
    return T.div(pairs.sum_j(T.mul(pairs.at_j(g), chosen)), pairs.sum_j(chosen))


@_pairs_rule
def _cumchooser_vjp(ct, x, ans, pairs, axis, cumprod):
    chosen = _chosen(x, ans, pairs)
    return pairs.sum_i(T.mul(pairs.at_i(T.div(ct, pairs.sum_j(chosen))), chosen))


for _prim in ("cumprod", "cumlogsumexp"):
    A.jvp(_prim, 0, _weighted_jvp(_prim), values=_PAIRS,
          math="dy_i = sum_{j in prefix(i)} w_ij dx_j: w_ij = prod_{k in prefix(i), k != j} x_k (cumprod), "
               "exp(x_j - y_i) (cumlogsumexp)")
    A.vjp(_prim, 0, _weighted_vjp(_prim), values=_PAIRS, math="ct_x_j = sum_{i: j in prefix(i)} w_ij ct_i")
for _prim in ("cummax", "cummin"):
    A.jvp(_prim, 0, _cumchooser_jvp, values=_PAIRS,
          math="dy_i = mean of dx_j over j in prefix(i) with x_j = y_i")
    A.vjp(_prim, 0, _cumchooser_vjp, values=_PAIRS, math="the transpose of that mean")

# --- window reductions ------------------------------------------------------------------------------

_WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")


def _window(p) -> dict:
    n = len(p["window_dimensions"])
    params = {"base_dilation": (1,) * n, "window_dilation": (1,) * n, **{k: p[k] for k in _WINDOW_PARAMS if k in p}}
    params["padding"] = tuple(tuple(int(v) for v in pair) for pair in params["padding"])
    return {k: tuple(params[k]) for k in _WINDOW_PARAMS}


def _dilate(shape, dilation) -> tuple[int, ...]:
    return tuple(0 if d == 0 else 1 + k * (d - 1) for d, k in zip(shape, dilation, strict=True))


def _window_sum_transpose(p, ins, outs):
    """JAX's `_reduce_window_sum_transpose_rule`: pad the cotangent (`_conv_general_vjp_lhs_padding`,
    strides as interior padding), then a window sum with the base dilation as strides."""
    w = _window(p)
    n = len(w["window_dimensions"])
    lhs = _dilate(ins[0].shape, w["base_dilation"])
    rhs = _dilate(w["window_dimensions"], w["window_dilation"])
    out = _dilate(outs[0].shape, w["window_strides"])
    before = [r - lo - 1 for r, (lo, _) in zip(rhs, w["padding"], strict=True)]
    after = [a + r - 1 - o - b for a, r, o, b in zip(lhs, rhs, out, before, strict=True)]
    config = tuple((b, a, s - 1) for b, a, s in zip(before, after, w["window_strides"], strict=True))
    window = {"window_dimensions": w["window_dimensions"], "window_strides": w["base_dilation"],
              "padding": ((0, 0),) * n, "base_dilation": (1,) * n, "window_dilation": w["window_dilation"]}
    return {"pad": {"padding_config": config}, "window": window}


A.jvp_linear("reduce_window_sum", [0], math="d window_sum(x) = window_sum(dx)")
A.vjp("reduce_window_sum", 0, lambda ct, x, ans, *, pad, window: T.reduce_window_sum(
          T.pad(ct, Arr.scalar(0.0, dtype(ct)), **pad), **window),
      values=Values(_window_sum_transpose, pad=params("pad"), window=params("reduce_window_sum")),
      math="window_sum^T ct = window_sum(pad(ct)) with strides and base dilation swapped")

# reduce_window_max/min: JAX's `_reduce_window_chooser_jvp_rule` gathers the tangent at each window's
# selected element (select_and_gather_add); its transpose scatters the cotangent there.


def _gather_params(select=None):
    """select_and_gather_add's params: `select` (ge for max, le for min), or the node's own."""
    def fn(p, ins, outs):
        return {"params": {"select_prim": Symbol(select or p["select_prim"]), **_window(p)}}
    return Values(fn, params=params("select_and_gather_add"))


def _scatter_params(prim, select=None):
    """select_and_scatter_add's params, the transpose of select_and_gather_add (no dilations)."""
    def fn(p, ins, outs):
        w = _window(p)
        if any(d != 1 for d in w["window_dilation"] + w["base_dilation"]):
            raise UnsupportedPrimitive(prim, "VJP with base or window dilation (select_and_scatter_add takes "
                                             "neither)", "transforms/ad/rules/reduce.py")
        return {"params": {"select_prim": Symbol(select or p["select_prim"]),
                           "window_dimensions": w["window_dimensions"], "window_strides": w["window_strides"],
                           "padding": w["padding"]}}
    return Values(fn, params=params("select_and_scatter_add"))


def _gather(t: Arr, x: Arr, params) -> Arr:
    return T.select_and_gather_add(t, x, **params)


def _scatter(ct: Arr, x: Arr, params) -> Arr:
    return T.select_and_scatter_add(ct, x, **params)


for _prim, _select_prim in (("reduce_window_max", "ge"), ("reduce_window_min", "le")):
    A.jvp(_prim, 0, lambda g, x, ans, *, params: _gather(g, x, params), values=_gather_params(_select_prim),
          math="the tangent at each window's selected element (the first on ties)")
    A.vjp(_prim, 0, lambda ct, x, ans, *, params: _scatter(ct, x, params),
          values=_scatter_params(_prim, _select_prim),
          math="each window's cotangent added at its selected element")

# The two helpers are linear in their first operand (the selection by the second has zero derivative):
# JAX's `_select_and_gather_add_transpose` and `_select_and_scatter_add_transpose`.
A.jvp_linear("select_and_gather_add", [0], math="linear in the tangents it gathers")
A.vjp("select_and_gather_add", 0, lambda ct, t, x, ans, *, params: _scatter(ct, x, params),
      values=_scatter_params("select_and_gather_add"),
      math="gather^T = scatter-add at the selected elements")
A.jvp_linear("select_and_scatter_add", [0], math="linear in the source it scatters")
A.vjp("select_and_scatter_add", 0, lambda ct, source, x, ans, *, params: _gather(ct, x, params),
      values=_gather_params(),
      math="scatter-add^T = gather at the selected elements")
for _prim in ("select_and_gather_add", "select_and_scatter_add"):
    A.jvp(_prim, 1, lambda g, t, x, ans: zeros_like(ans), math="the selection is piecewise constant in x")
    A.vjp(_prim, 1, lambda ct, t, x, ans: zeros_like(x), math="the selection is piecewise constant in x")
