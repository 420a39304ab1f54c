"""JVP and VJP rules of the shape primitives: reshape, transpose, broadcast_in_dim, squeeze, rev, slice,
pad, concatenate, stack, unstack, tile, split, device_put, copy (and iota and empty2, which have no
derivative: no operands).

Every one is linear in its array operands, so its JVP is the op itself applied to the tangents and its
VJP is the transpose, following JAX's transpose rules (jax/_src/lax/lax.py, slicing.py): reshape
back (then undo `dimensions`), the inverse permutation, reduce_sum over the broadcast axes, pad the
cotangent of a slice with zeros, slice (with strides for interior padding) the cotangent of a pad,
slices of the cotangent of a concatenation, a concatenation of the cotangents of a split, a stack of
the cotangents of an unstack.

Variadic primitives (concatenate, stack, the results of split and unstack, device_put) get one rule per operand or
result count in `COUNTS` (`arities=`; `_counted` for the multi-result entries, which the book gives one
count only). More operands or results than `COUNTS` holds fail at build time with UnsupportedPrimitive.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ir.errors import UnsupportedPrimitive
from ir.params import as_ints
from rewrites.terms import CONSTRUCTORS, SPECS, Arr, T, apply, args_list, call, get
from transforms.ad.rule import ADBook, Aux

A = ADBook("shape")
COUNTS = range(1, 9)  # operand counts of concatenate/stack/device_put, result counts of split/unstack


def _supported(prim: str, count: int) -> None:
    if count not in COUNTS:
        raise UnsupportedPrimitive(prim, f"AD rule for {count} operands/results (rules cover {COUNTS.stop - 1})",
                                   "transforms/ad/rules/shape.py COUNTS")


def _params_of(prim: str, counted: bool = False) -> Aux:
    """The equation's own params, for rules that build the same primitive (held as apply/call, or pad);
    `counted`: a variadic primitive, whose operand/result count must be in COUNTS."""

    def fn(p, ins, outs):
        if counted:
            _supported(prim, max(len(ins), len(outs)))
        return (dict(p),)

    return Aux(f"extra:{prim}", fn)


# --- one operand, one result: the op itself on the tangent ------------------------------------------


def _plain(value):
    """A param with NumPy ints (`np.int64(1)`) as plain ints."""
    if isinstance(value, tuple | list):
        return type(value)(_plain(v) for v in value)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _same_op(prim: str) -> tuple[Callable, Aux]:
    """`prim` on the tangent with the equation's params, rebuilt from them: an equation whose params hold
    NumPy ints is encoded as `apply`, which `jvp_linear` (matching the typed node) would miss."""
    names = [name for name, _ in SPECS[prim].fields]
    ctor = CONSTRUCTORS[prim]

    def fn(p, ins, outs):
        return (*(as_ints(p[n]) for n in names), {k: _plain(v) for k, v in p.items() if k not in names})

    aux = Aux(" ".join(["ints"] * len(names) + [f"extra:{prim}"]), fn)
    if len(names) == 1:
        return (lambda g, x, ans, field, rest: ctor(g, field, rest)), aux
    return (lambda g, x, ans, field0, field1, rest: ctor(g, field0, field1, rest)), aux


for _prim in ("reshape", "transpose", "broadcast_in_dim", "squeeze", "rev", "slice"):
    _f, _aux = _same_op(_prim)
    A.jvp(_prim, 0, _f, aux=_aux, math=f"d {_prim}(x) = {_prim}(dx) (linear)")
A.jvp_linear("tile", [0], arity=1, math="d tile(x) = tile(dx) (linear)")
A.linear("copy", 0, lambda g, x, ans: g, math="d copy(x) = dx")
A.linear("copy_p", 0, lambda g, x, ans: g, math="d copy(x) = dx")
A.zero_derivative("iota", "empty2")


def _reshape_back(p, ins, outs):
    shape, dims = ins[0].shape, p.get("dimensions")
    if dims is None:
        return shape, tuple(range(len(shape)))
    dims = as_ints(dims)
    return tuple(shape[d] for d in dims), tuple(int(i) for i in np.argsort(dims))


A.vjp("reshape", 0, lambda ct, x, ans, sizes, perm: T.transpose(T.reshape(ct, sizes), perm),
      aux=Aux("ints ints", _reshape_back),
      math="reshape(x, s, dims)^T ct = transpose(reshape(ct, x.shape[dims]), argsort(dims))")
A.vjp("transpose", 0, lambda ct, x, ans, inverse: T.transpose(ct, inverse),
      aux=Aux("ints", lambda p, ins, outs: (tuple(int(i) for i in np.argsort(as_ints(p["permutation"]))),)),
      math="transpose(x, p)^T ct = transpose(ct, argsort(p))")


def _unbroadcast(p, ins, outs):
    """JAX's `_broadcast_in_dim_transpose_rule`: sum over the result axes no operand axis of size > 1
    maps to (added axes and stretched size-1 axes), then restore the operand's shape."""
    shape, dims = ins[0].shape, as_ints(p["broadcast_dimensions"])
    kept = {d for d, n in zip(dims, shape, strict=True) if n != 1}
    return tuple(a for a in range(len(outs[0].shape)) if a not in kept), shape


A.vjp("broadcast_in_dim", 0, lambda ct, x, ans, axes, shape: T.reshape(T.reduce_sum(ct, axes), shape),
      aux=Aux("ints ints", _unbroadcast),
      math="broadcast_in_dim(x)^T ct = reshape(reduce_sum(ct, broadcast axes), x.shape)")
A.vjp("squeeze", 0, lambda ct, x, ans, shape: T.reshape(ct, shape),
      aux=Aux("ints", lambda p, ins, outs: (ins[0].shape,)),
      math="squeeze(x)^T ct = reshape(ct, x.shape) (JAX's expand_dims)")
A.vjp("rev", 0, lambda ct, x, ans, dims: T.rev(ct, dims),
      aux=Aux("ints", lambda p, ins, outs: (as_ints(p["dimensions"]),)),
      math="rev(x, d)^T ct = rev(ct, d)")


def _tile_back(p, ins, outs):
    reps, shape = as_ints(p["reps"]), ins[0].shape
    return tuple(k for pair in zip(reps, shape, strict=True) for k in pair), tuple(range(0, 2 * len(shape), 2))


A.vjp("tile", 0, lambda ct, x, ans, split_shape, rep_axes: T.reduce_sum(T.reshape(ct, split_shape), rep_axes),
      aux=Aux("ints ints", _tile_back),
      math="tile(x, r)^T ct = reduce_sum(reshape(ct, (r0, d0, r1, d1, ..)), (0, 2, ..))")


# --- slice and pad ------------------------------------------------------------------------------------


def _slice_back(p, ins, outs):
    """JAX's `_slice_transpose_rule`: the padding config that puts the slice back in place."""
    starts, shape = as_ints(p["start_indices"]), ins[0].shape
    strides = as_ints(p.get("strides") or (1,) * len(shape))
    real_limits = [s + (0 if n == 0 else 1 + (n - 1) * k)
                   for s, n, k in zip(starts, outs[0].shape, strides, strict=True)]
    config = tuple((s, d - e, k - 1) for s, d, e, k in zip(starts, shape, real_limits, strides, strict=True))
    return ins[0].dtype.name, {"padding_config": config}


A.vjp("slice", 0, lambda ct, x, ans, dt, pad: T.pad(ct, Arr.scalar(0.0, dt), extra=pad),
      aux=Aux("str extra:pad", _slice_back),
      math="slice(x)^T ct = pad(ct, 0, (start, size - limit, stride - 1))")


def _unpad(p, ins, outs):
    """JAX's `_pad_transpose`: undo the edges with the negated padding, then take every (interior + 1)-th
    element; also every axis, for the padding value's total."""
    config = [as_ints(c) for c in p["padding_config"]]
    shape = ins[0].shape
    out = outs[0].shape
    unpadded = tuple(n - lo - hi for n, (lo, hi, _) in zip(out, config, strict=True))
    return (ins[0].dtype.name, {"padding_config": tuple((-lo, -hi, 0) for lo, hi, _ in config)},
            (0,) * len(shape), unpadded, {"strides": tuple(i + 1 for _, _, i in config)},
            tuple(range(len(shape))))


def _pad_operand_ct(ct, dt, unpad, starts, limits, strides):
    return T.slice(T.pad(ct, Arr.scalar(0.0, dt), extra=unpad), starts, limits, extra=strides)


_UNPAD = Aux("str extra:pad ints ints extra:slice ints", _unpad)
A.jvp_whole("pad", lambda ts, xs, outs, params: [T.pad(ts[0], ts[1], extra=params)], arity=2,
            aux=_params_of("pad"), math="d pad(x, v) = pad(dx, dv) (linear in both)")
A.vjp("pad", 0, lambda ct, x, v, ans, dt, unpad, starts, limits, strides, every:
      _pad_operand_ct(ct, dt, unpad, starts, limits, strides), aux=_UNPAD,
      math="pad(x, v)^T ct = slice(pad(ct, 0, -lo, -hi), 0, .., stride interior + 1)")
A.vjp("pad", 1, lambda ct, x, v, ans, dt, unpad, starts, limits, strides, every:
      T.sub(T.reduce_sum(ct, every), T.reduce_sum(_pad_operand_ct(ct, dt, unpad, starts, limits, strides), every)),
      aux=_UNPAD, math="pad(x, v)^T ct for v = sum(ct) - sum(ct's operand part)")


# --- variadic: concatenate, stack, split, device_put ---------------------------------------------------

for _prim in ("concatenate", "stack"):
    A.jvp_whole(_prim, lambda ts, xs, outs, params, prim=_prim: [apply(prim, params, args_list(ts))], arity=1,
                arities=COUNTS, aux=_params_of(_prim, counted=True), math=f"d {_prim}(xs) = {_prim}(dxs) (linear)")


def _piece(prim: str, i: int) -> Aux:
    """Operand i's block of the result: slice bounds, and operand i's shape (stack drops the axis)."""

    def fn(p, ins, outs):
        _supported(prim, len(ins))
        axis = int(p["dimension"] if prim == "concatenate" else p["axis"])
        sizes = [x.shape[axis] if prim == "concatenate" else 1 for x in ins]
        start = sum(sizes[:i])
        shape = outs[0].shape
        starts = tuple(start if a == axis else 0 for a in range(len(shape)))
        limits = tuple(start + sizes[i] if a == axis else n for a, n in enumerate(shape))
        return starts, limits, ins[i].shape

    return Aux("ints ints ints", fn)


def _concatenate_ct(ct, *operands_ans_aux):
    starts, limits, _ = operands_ans_aux[-3:]
    return T.slice(ct, starts, limits)


def _stack_ct(ct, *operands_ans_aux):
    starts, limits, shape = operands_ans_aux[-3:]
    return T.reshape(T.slice(ct, starts, limits), shape)


for _i in range(COUNTS.stop - 1):
    _arities = range(_i + 1, COUNTS.stop)
    A.vjp("concatenate", _i, _concatenate_ct, aux=_piece("concatenate", _i), arities=_arities,
          math="concatenate(xs)^T ct = the slice of ct where x_i sits")
    A.vjp("stack", _i, _stack_ct, aux=_piece("stack", _i), arities=_arities,
          math="stack(xs)^T ct = the slice of ct at index i, the stacking axis removed")


# Multi-result entries for each result count (`jvp_whole`/`vjp_whole` take one count).


def _counted(mode: str, prim: str, slot: str, n_primals: int, n_outs: int, build: Callable, aux: Aux,
             math: str) -> None:
    n_seeds = n_primals if mode == "jvp" else n_outs
    A.add(mode, prim, slot, True, aux, math, n_primals, n_outs, n_seeds, build, suffix=f"-{n_outs}")


def _count(prim: str) -> Aux:
    def fn(p, ins, outs):
        _supported(prim, len(outs))
        return (len(outs),)

    return Aux("int", fn)


def _concatenate_along_split_axis(p, ins, outs):
    _supported("split", len(outs))
    return ({"dimension": int(p["axis"])},)


for _k in COUNTS:
    for _j in range(_k):
        _counted("jvp", "split", f"out{_j}", 1, _k,
                 lambda seeds, xs, outs, vals, j=_j: get(call("split", vals[0], args_list(seeds)), j),
                 _params_of("split", counted=True), "d split(x)_j = split(dx)_j (linear)")
        _counted("jvp", "device_put", f"out{_j}", _k, _k, lambda seeds, xs, outs, vals, j=_j: seeds[j],
                 _count("device_put"), "d device_put(xs)_j = dx_j (a transfer: the identity here)")
        _counted("vjp", "device_put", str(_j), _k, _k, lambda seeds, xs, outs, vals, j=_j: seeds[j],
                 _count("device_put"), "device_put(xs)^T cts = cts (the identity)")
    _counted("vjp", "split", "0", 1, _k, lambda seeds, xs, outs, vals: apply("concatenate", vals[0], args_list(seeds)),
             Aux("extra:concatenate", _concatenate_along_split_axis),
             "split(x)^T cts = concatenate(cts along the axis) (unused results' cts are zeros)")


def _stack_along_unstack_axis(p, ins, outs):
    _supported("unstack", len(outs))
    return ({"axis": int(p["axis"])},)


for _k in COUNTS:
    for _j in range(_k):
        _counted("jvp", "unstack", f"out{_j}", 1, _k,
                 lambda seeds, xs, outs, vals, j=_j: get(call("unstack", vals[0], args_list(seeds)), j),
                 _params_of("unstack", counted=True), "d unstack(x)_j = unstack(dx)_j (linear)")
    _counted("vjp", "unstack", "0", 1, _k, lambda seeds, xs, outs, vals: apply("stack", vals[0], args_list(seeds)),
             Aux("extra:stack", _stack_along_unstack_axis),
             "unstack(x)^T cts = stack(cts along the axis) (JAX's _unstack_transpose_rule; unused results' cts "
             "are zeros)")
