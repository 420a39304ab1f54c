"""JVP and VJP rules of the shape primitives: reshape, transpose, broadcast_in_dim, squeeze, rev, slice,
pad, concatenate, stack, unstack, tile, split, device_put, copy (and iota and empty2, which have no
derivative: no operands).

Every one is linear in its array operands, so its JVP is the op itself applied to the tangents and its
VJP is the transpose, following JAX's transpose rules (jax/_src/lax/lax.py, slicing.py): reshape
back (then undo `dimensions`), the inverse permutation, reduce_sum over the broadcast axes, pad the
cotangent of a slice with zeros, slice (with strides for interior padding) the cotangent of a pad,
slices of the cotangent of a concatenation, a concatenation of the cotangents of a split, a stack of
the cotangents of an unstack.

Variadic primitives (concatenate, stack, the results of split and unstack, device_put) get one rule per slot kind,
whatever their operand or result count: the rules match the operands, results and seeds they do not name as one
`Args` list, and the rule of "any operand" ("*") or "any result" ("out*") gets the slot's index and offsets as
values.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ir.params import as_ints
from rewrites.terms import SPECS, Arr, T, get
from transforms.ad.rule import INTS, STR, ADBook, Values, params

A = ADBook("shape")


def _params_of(prim: str) -> Values:
    """The equation's own params as `own`, for rules that build the same primitive."""
    return Values(lambda p, ins, outs, *slot: {"own": dict(p)}, own=params(prim))


# --- one operand, one result: the op itself on the tangent ------------------------------------------


def _plain(value):
    """A param with NumPy ints (`np.int64(1)`) as plain ints."""
    if isinstance(value, tuple | list):
        return type(value)(_plain(v) for v in value)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _same_op(prim: str) -> tuple[Callable, Values]:
    """`prim` on the tangent with the equation's params rebuilt from them as plain ints: the tangent of
    `broadcast_in_dim[broadcast_dimensions=(np.int64(1),)]` is printed `(1,)` (`jvp_linear` would carry the
    equation's NumPy spelling, held in its text fields)."""
    names = [name for name, _ in SPECS[prim].positional_fields]
    build = T.of(prim)

    def fn(p, ins, outs):
        return {**{n: as_ints(p[n]) for n in names}, "rest": {k: _plain(v) for k, v in p.items() if k not in names}}

    def rule(g, x, ans, *, rest, **fields):
        return build(g, *(fields[n] for n in names), **rest)

    return rule, Values(fn, **dict.fromkeys(names, INTS), rest=params(prim))


for _prim in ("reshape", "transpose", "broadcast_in_dim", "squeeze", "rev", "slice"):
    _f, _values = _same_op(_prim)
    A.jvp(_prim, 0, _f, values=_values, math=f"d {_prim}(x) = {_prim}(dx) (linear)")
A.jvp_linear("tile", [0], math="d tile(x) = tile(dx) (linear)")
A.linear("copy", 0, lambda g, x, ans: g, math="d copy(x) = dx")
A.linear("copy_p", 0, lambda g, x, ans: g, math="d copy(x) = dx")


def _reshape_back(p, ins, outs):
    shape, dims = ins[0].shape, p.get("dimensions")
    if dims is None:
        return {"sizes": shape, "perm": tuple(range(len(shape)))}
    dims = as_ints(dims)
    return {"sizes": tuple(shape[d] for d in dims), "perm": tuple(int(i) for i in np.argsort(dims))}


A.vjp("reshape", 0, lambda ct, x, ans, *, sizes, perm: T.transpose(T.reshape(ct, sizes), perm),
      values=Values(_reshape_back, sizes=INTS, perm=INTS),
      math="reshape(x, s, dims)^T ct = transpose(reshape(ct, x.shape[dims]), argsort(dims))")
A.vjp("transpose", 0, lambda ct, x, ans, *, inverse: T.transpose(ct, inverse),
      values=Values(lambda p, ins, outs: {"inverse": tuple(int(i) for i in np.argsort(as_ints(p["permutation"])))},
                    inverse=INTS),
      math="transpose(x, p)^T ct = transpose(ct, argsort(p))")


def _unbroadcast(p, ins, outs):
    """JAX's `_broadcast_in_dim_transpose_rule`: sum over the result axes no operand axis of size > 1
    maps to (added axes and stretched size-1 axes), then restore the operand's shape."""
    shape, dims = ins[0].shape, as_ints(p["broadcast_dimensions"])
    kept = {d for d, n in zip(dims, shape, strict=True) if n != 1}
    return {"axes": tuple(a for a in range(len(outs[0].shape)) if a not in kept), "shape": shape}


A.vjp("broadcast_in_dim", 0, lambda ct, x, ans, *, axes, shape: T.reshape(T.reduce_sum(ct, axes), shape),
      values=Values(_unbroadcast, axes=INTS, shape=INTS),
      math="broadcast_in_dim(x)^T ct = reshape(reduce_sum(ct, broadcast axes), x.shape)")
A.vjp("squeeze", 0, lambda ct, x, ans, *, shape: T.reshape(ct, shape),
      values=Values(lambda p, ins, outs: {"shape": ins[0].shape}, shape=INTS),
      math="squeeze(x)^T ct = reshape(ct, x.shape) (JAX's expand_dims)")
A.vjp("rev", 0, lambda ct, x, ans, *, dims: T.rev(ct, dims),
      values=Values(lambda p, ins, outs: {"dims": as_ints(p["dimensions"])}, dims=INTS),
      math="rev(x, d)^T ct = rev(ct, d)")


def _tile_back(p, ins, outs):
    reps, shape = as_ints(p["reps"]), ins[0].shape
    return {"split_shape": tuple(k for pair in zip(reps, shape, strict=True) for k in pair),
            "rep_axes": tuple(range(0, 2 * len(shape), 2))}


A.vjp("tile", 0, lambda ct, x, ans, *, split_shape, rep_axes: T.reduce_sum(T.reshape(ct, split_shape), rep_axes),
      values=Values(_tile_back, split_shape=INTS, rep_axes=INTS),
      math="tile(x, r)^T ct = reduce_sum(reshape(ct, (r0, d0, r1, d1, ..)), (0, 2, ..))")


# --- slice and pad ------------------------------------------------------------------------------------


def _slice_back(p, ins, outs):
    """JAX's `_slice_transpose_rule`: the padding config that puts the slice back in place."""
    starts, shape = as_ints(p["start_indices"]), ins[0].shape
    strides = as_ints(p.get("strides") or (1,) * len(shape))
    real_limits = [s + (0 if n == 0 else 1 + (n - 1) * k)
                   for s, n, k in zip(starts, outs[0].shape, strides, strict=True)]
    config = tuple((s, d - e, k - 1) for s, d, e, k in zip(starts, shape, real_limits, strides, strict=True))
    return {"dt": ins[0].dtype.name, "pad": {"padding_config": config}}


A.vjp("slice", 0, lambda ct, x, ans, *, dt, pad: T.pad(ct, Arr.scalar(0.0, dt), **pad),
      values=Values(_slice_back, dt=STR, pad=params("pad")),
      math="slice(x)^T ct = pad(ct, 0, (start, size - limit, stride - 1))")


def _unpad(p, ins, outs):
    """JAX's `_pad_transpose`: undo the edges with the negated padding, then take every (interior + 1)-th
    element; also every axis, for the padding value's total."""
    config = [as_ints(c) for c in p["padding_config"]]
    shape = ins[0].shape
    out = outs[0].shape
    unpadded = tuple(n - lo - hi for n, (lo, hi, _) in zip(out, config, strict=True))
    return {"dt": ins[0].dtype.name, "unpad": {"padding_config": tuple((-lo, -hi, 0) for lo, hi, _ in config)},
            "starts": (0,) * len(shape), "limits": unpadded, "strides": {"strides": tuple(i + 1 for _, _, i in config)},
            "every": tuple(range(len(shape)))}


def _pad_operand_ct(ct, *, dt, unpad, starts, limits, strides, every):
    return T.slice(T.pad(ct, Arr.scalar(0.0, dt), **unpad), starts, limits, **strides)


_UNPAD = Values(_unpad, dt=STR, unpad=params("pad"), starts=INTS, limits=INTS, strides=params("slice"), every=INTS)
A.jvp_whole("pad", lambda ts, xs, outs, *, own: [T.pad(ts[0], ts[1], **own)], arity=2,
            values=_params_of("pad"), math="d pad(x, v) = pad(dx, dv) (linear in both)")
A.vjp("pad", 0, lambda ct, x, v, ans, **unpad: _pad_operand_ct(ct, **unpad), values=_UNPAD,
      math="pad(x, v)^T ct = slice(pad(ct, 0, -lo, -hi), 0, .., stride interior + 1)")
A.vjp("pad", 1, lambda ct, x, v, ans, **unpad:
      T.sub(T.reduce_sum(ct, unpad["every"]), T.reduce_sum(_pad_operand_ct(ct, **unpad), unpad["every"])),
      values=_UNPAD, math="pad(x, v)^T ct for v = sum(ct) - sum(ct's operand part)")


# --- variadic: concatenate, stack, split, unstack, device_put ------------------------------------------


def _piece(prim: str) -> Values:
    """Operand i's block of the result: slice bounds, and operand i's shape (stack drops the axis)."""

    def fn(p, ins, outs, i):
        axis = int(p["dimension"] if prim == "concatenate" else p["axis"])
        sizes = [x.shape[axis] if prim == "concatenate" else 1 for x in ins]
        start = sum(sizes[:i])
        shape = outs[0].shape
        starts = tuple(start if a == axis else 0 for a in range(len(shape)))
        limits = tuple(start + sizes[i] if a == axis else n for a, n in enumerate(shape))
        return {"starts": starts, "limits": limits, "shape": ins[i].shape}

    return Values(fn, starts=INTS, limits=INTS, shape=INTS)


for _prim in ("concatenate", "stack"):
    A.add("jvp", _prim, "out0", "all", _params_of(_prim), f"d {_prim}(xs) = {_prim}(dxs) (linear)", None, None, None,
          lambda ts, xs, outs, v, prim=_prim: T.of(prim)(ts, **v["own"]))
A.add("vjp", "concatenate", "*", "one", _piece("concatenate"), "concatenate(xs)^T ct = the slice of ct where x_i sits",
      None, None, 1, lambda cts, xs, outs, v: T.slice(cts[0], v["starts"], v["limits"]))
A.add("vjp", "stack", "*", "one", _piece("stack"),
      "stack(xs)^T ct = the slice of ct at index i, the stacking axis removed", None, None, 1,
      lambda cts, xs, outs, v: T.reshape(T.slice(cts[0], v["starts"], v["limits"]), v["shape"]))


def _result_of(prim: str) -> Values:
    """The equation's own params (the index of the result a rule gives is the node's `index`)."""
    return Values(lambda p, ins, outs, j: {"own": dict(p)}, own=params(prim))


def _along(prim: str, axis_name: str, built: str) -> Values:
    """The params of the `built` node joining the cotangents of a `prim`'s results along its axis."""
    return Values(lambda p, ins, outs: {"along": {axis_name: int(p["axis"])}}, along=params(built))


for _prim, _built, _axis, _why in (("split", "concatenate", "dimension", ""),
                                   ("unstack", "stack", "axis", " (JAX's _unstack_transpose_rule)")):
    A.add("jvp", _prim, "out*", "all", _result_of(_prim), f"d {_prim}(x)_j = {_prim}(dx)_j (linear)", None, None,
          None, lambda ts, xs, outs, v, prim=_prim: get(T.of(prim)(ts, **v["own"]), v["index"]))
    A.add("vjp", _prim, "0", "all", _along(_prim, _axis, _built),
          f"{_prim}(x)^T cts = {_built}(cts along the axis){_why} (unused results' cts are zeros)", None, None, None,
          lambda cts, xs, outs, v, built=_built: T.of(built)(cts, **v["along"]))
A.add("jvp", "device_put", "out*", "own", None, "d device_put(xs)_j = dx_j (a transfer: the identity here)",
      None, None, 1, lambda ts, xs, outs, v: ts[0])
A.add("vjp", "device_put", "*", "own", None, "device_put(xs)^T cts = cts (the identity)", None, None, 1,
      lambda cts, xs, outs, v: cts[0])
