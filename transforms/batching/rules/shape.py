"""Batching rules of the shape primitives: broadcast_in_dim, reshape, transpose, squeeze, rev, tile, slice,
pad, concatenate, stack, split, unstack, device_put (iota and empty2 have no operands, so it is never batched; copy and
copy_p are elementwise).

Each one moves elements without computing with them, so the batched op is the op itself with the batch
axis added in front of its params, as JAX's batching rules do once the batch dimension is at 0
(jax/_src/lax/lax.py, slicing.py): the batch axis is kept whole (sizes (B, ...), start 0, stride 1,
no padding, one repetition) and every axis param is shifted by one. A batched padding value turns pad
into a select between the padded operand and the broadcast padding values (JAX's `_pad_batch_rule`).
Variadic primitives broadcast their unbatched operands first (`materialize`, as JAX's
`_concatenate_batch_rule` does) and have one rule whatever their operand count (concatenate and stack
match the operands as one list, device_put builds each result from its own operand); split and unstack
have one rule for any result, its index a value.
"""

from __future__ import annotations

from ir.errors import UnsupportedPrimitive
from ir.params import as_ints
from rewrites.terms import Arr, T, args_list
from transforms.batching.rule import INTS, STR, Site, Values, VmapBook, node, params, shifted, variadic_op

V = VmapBook("shape")


# --- one operand: the op with the batch axis prepended to its params -------------------------------------


def _reshape(e: Site) -> dict:
    dims = e.params.get("dimensions")
    return {**e.params, "new_sizes": (e.size, *as_ints(e.params["new_sizes"])),
            "dimensions": None if dims is None else (0, *shifted(as_ints(dims)))}


def _broadcast_in_dim(e: Site) -> dict:
    return {**e.params, "shape": (e.size, *as_ints(e.params["shape"])),
            "broadcast_dimensions": (0, *shifted(as_ints(e.params["broadcast_dimensions"])))}


def _slice(e: Site) -> dict:
    strides = e.params.get("strides")
    return {**e.params, "start_indices": (0, *as_ints(e.params["start_indices"])),
            "limit_indices": (e.size, *as_ints(e.params["limit_indices"])),
            "strides": None if strides is None else (1, *as_ints(strides))}


ONE_OPERAND = {
    "reshape": (_reshape, "reshape(x, (B, *sizes), (0, *dims + 1)): row-major order keeps each batch "
                          "element's block contiguous"),
    "broadcast_in_dim": (_broadcast_in_dim, "broadcast into (B, *shape) with axis 0 kept in place"),
    "transpose": (lambda e: {**e.params, "permutation": (0, *shifted(as_ints(e.params["permutation"])))},
                  "transpose by (0, *perm + 1): the batch axis stays first"),
    "squeeze": (lambda e: {**e.params, "dimensions": shifted(as_ints(e.params["dimensions"]))},
                "squeeze the axes + 1"),
    "rev": (lambda e: {**e.params, "dimensions": shifted(as_ints(e.params["dimensions"]))},
            "reverse the axes + 1"),
    "tile": (lambda e: {**e.params, "reps": (1, *as_ints(e.params["reps"]))},
             "tile with one repetition of the batch axis"),
    "slice": (_slice, "slice the whole batch axis (start 0, limit B, stride 1)"),
}

for _prim, (_params, _math) in ONE_OPERAND.items():
    V.batch(_prim, "b", lambda x, *, op: op(x), values=Values(lambda e, f=_params: {"op": f(e)}, op=node(_prim)),
            math=_math)


# --- variadic: any operand or result count ---------------------------------------------------------------


def _split(e: Site) -> dict:
    return {**e.params, "sizes": as_ints(e.params["sizes"]), "axis": int(e.params["axis"]) + 1}


def _unstack(e: Site) -> dict:
    return {**e.params, "axis": int(e.params["axis"]) + 1}


for _prim, _params, _math in (("split", _split, "split(x)_j along axis + 1: the batch axis is not cut"),
                              ("unstack", _unstack, "unstack(x)_j along axis + 1 (JAX's _unstack_batch_rule)")):
    V.batch(_prim, "b", lambda x, *, op, index: op.result(index, x), each_result=True, math=_math,
            values=Values(lambda e, f=_params: {"op": f(e)}, op=node(_prim)))

for _prim, _name in (("concatenate", "dimension"), ("stack", "axis")):
    V.batch(_prim, None, lambda xs, *, op: variadic_op(op, xs), materialize=True, variadic=True,
            values=Values(lambda e, name=_name: {"op": {**e.params, name: int(e.params[name]) + 1}}, op=node(_prim)),
            math=f"{_prim} along {_name} + 1 of the operands, each broadcast to the batch size")

V.batch("device_put", None, lambda x: x, materialize=True, own=True,
        math="device_put(xs)_j = x_j (a transfer: the identity here), x_j broadcast if unbatched")


# --- pad ----------------------------------------------------------------------------------------------------


def _config(e: Site) -> tuple[tuple[int, int, int], ...]:
    return tuple(as_ints(c) for c in e.params["padding_config"])


V.batch("pad", "bu", lambda x, v, *, op: op(x, v),
        values=Values(lambda e: {"op": {**e.params, "padding_config": ((0, 0, 0), *_config(e))}}, op=node("pad")),
        math="pad with no padding of the batch axis")


def _pad_select(e: Site):
    """A batched padding value (JAX's `_pad_batch_rule`): the operand padded with zeros, the mask of the
    operand's positions (True padded with False), the batched result shape and the axes after the first."""
    x = e.in_avals[0]
    if x.dtype.kind not in "biufc":
        raise UnsupportedPrimitive("pad", f"batching with a batched padding value of dtype {x.dtype.name}",
                                   "transforms/batching/rules/shape.py")
    config = _config(e)
    out = e.out_avals[0].shape
    return {"dt": x.dtype.name, "pad_u": {"padding_config": config}, "pad_b": {"padding_config": ((0, 0, 0), *config)},
            "in_shape": x.shape, "out_b": (e.size, *out), "rest": tuple(range(1, len(out) + 1))}


def _select_padding(padded: Arr, v: Arr, *, dt, pad_u, pad_b, in_shape, out_b, rest) -> Arr:
    """select_n(mask, v, padded) at each position of the batched result: v where the mask is False."""
    true = T.broadcast_in_dim(Arr.scalar(1.0, "bool"), in_shape, ())
    mask = T.pad(true, Arr.scalar(0.0, "bool"), **pad_u)
    return T.select_n(args_list([T.broadcast_in_dim(mask, out_b, rest),
                                            T.broadcast_in_dim(v, out_b, (0,)), padded]))


_PAD_SELECT = Values(_pad_select, dt=STR, pad_u=params("pad"), pad_b=params("pad"), in_shape=INTS, out_b=INTS,
                     rest=INTS)
V.batch("pad", "ub", lambda x, v, **s: _select_padding(
    T.broadcast_in_dim(T.pad(x, Arr.scalar(0.0, s["dt"]), **s["pad_u"]), s["out_b"], s["rest"]), v, **s),
    values=_PAD_SELECT,
    math="pad(x, v)[b] = where(mask, pad(x, 0), v[b]); pad(x, 0) and the mask are unbatched, then broadcast")
V.batch("pad", "bb", lambda x, v, **s: _select_padding(T.pad(x, Arr.scalar(0.0, s["dt"]), **s["pad_b"]), v, **s),
        values=_PAD_SELECT,
    math="pad(x, v)[b] = where(mask, pad(x[b], 0), v[b]), the mask unbatched then broadcast")
