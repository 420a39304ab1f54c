"""JVP and VJP rules of the indexing primitives: gather, dynamic_slice, dynamic_update_slice, the scatters,
sort, top_k and approx_top_k (argsort and searchsorted are programs of these with integer results).

Forms follow JAX (jax/_src/lax/slicing.py, lax.py, ann.py) so that special values and out-of-bounds
indices give JAX's results:
- gather is linear in its operand (its tangent fills with 0); its transpose is a scatter-add into zeros
  with the mirrored dimension numbers and the same mode (`_gather_transpose_rule`).
- dynamic_slice / dynamic_update_slice transpose into each other (`_dynamic_slice_transpose_rule`, ...).
- scatter-add / scatter-sub: linear in operand and updates; the updates' cotangent gathers the windows back.
- scatter: with `unique_indices` the op itself on the tangents; otherwise JAX's scheme: scatter update
  ids, read them back, keep the operand where no update landed and each update that won, and scatter-add
  those (`_scatter_jvp`); the VJP is that linear map's transpose (JAX linearizes, then transposes).
- scatter-mul: linear in the operand; the updates' rule needs `unique_indices` as in JAX.
- scatter-min / scatter-max: JAX's `_scatter_extremal_jvp` (ties share the tangent evenly), and its
  transpose for the VJP.
- sort sorts an iota along and gathers the tangents with it (`_sort_jvp`); top_k and approx_top_k gather
  the tangent at the result indices (`_top_k_jvp`; JAX's approx_top_k uses take_along_axis, the same values
  for its in-range indices); their VJPs scatter-add the cotangents back (the gathers' transposes).

Primitives with variadic operands (dynamic_slice, dynamic_update_slice: one index per axis; sort) get one
rule per slot whatever their operand count: the patterns match the start indices, or sort's operands, as one
`Args` list (`Leading`), and sort's JVP sorts an iota appended to that list (`transforms.arglists.snoc`).
Entries that depend on a param value (scatter's `unique_indices`) are two rules on one slot, each requiring the
value it handles (`_require`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

from egglog import Vec, eq, i64

from ir import dtypes, lax
from ir.errors import UnsupportedPrimitive
from ir.params import as_ints
from rewrites.terms import Args, Arr, T, args_list, get
from transforms.ad.rule import INT, INTS, STR, ADBook, Leading, Values, params, require, zeros_like
from transforms.ad.rules.indexing_params import (
    FILL_OR_DROP,
    PROMISE,
    gather_dn,
    gather_params,
    scatter_add_params,
    scatter_dn,
)
from transforms.ad.terms import zero
from transforms.arglists import snoc

A = ADBook("indexing")
EMPTY = Vec[i64].empty()


# --- rule-writing helpers --------------------------------------------------------------------------


def _counted(mode: str, prim: str, slot: str, whole: bool, n_primals: int, n_outs: int, build: Callable,
             values: Values | None, math: str, suffix: str) -> None:
    """One entry of `prim` for a given operand/result count; `build(seeds, xs, outs, vals)` (`vals`: the values
    by name)."""
    n_seeds = (n_primals if mode == "jvp" else n_outs) if whole else 1
    A.add(mode, prim, slot, "all" if whole else "one", values, math, n_primals, n_outs, n_seeds, build, suffix=suffix)


def _own(prim: str, xs: list, ans: Arr) -> dict:
    """The primal equation's own params (its keyword fields), read by matching its result."""
    own = T.params(prim, "own")
    require(eq(ans).to(T.of(prim)(*xs, **own)))
    return own


def _select(pred: Arr, on_true: Arr, on_false: Arr) -> Arr:
    """lax.select(pred, on_true, on_false) = select_n(pred, on_false, on_true)."""
    return T.select_n(args_list([pred, on_false, on_true]))


def _full(value: float, dt, shape) -> Arr:
    return T.broadcast_in_dim(Arr.scalar(value, dt), shape, EMPTY)


# --- params of the nodes the rules build ------------------------------------------------------------


def _fill_zero(mode) -> int | None:
    """JAX's `gather(..., fill_value=0)`: the fill value is kept in FILL_OR_DROP mode only."""
    return 0 if mode == FILL_OR_DROP else None


def _window_sizes(dn, rank: int, updates_shape) -> tuple[int, ...]:
    """The slice sizes of that gather: 1 on inserted and batching axes, else the update window's size."""
    window = iter(as_ints(dn.update_window_dims))
    dropped = set(as_ints(dn.inserted_window_dims)) | set(as_ints(dn.get("operand_batching_dims", ())))
    return tuple(1 if i in dropped else updates_shape[next(window)] for i in range(rank))


def _read_updates(p, ins, fill=True) -> dict:
    """The gather reading each update window of a scatter back: `fill=True` for the scatter transposes
    (mode kept, fill 0), False for the reads in JAX's JVPs (gather's defaults)."""
    dn = p["dimension_numbers"]
    sizes = _window_sizes(dn, ins[0].ndim, ins[2].shape)
    if fill:
        return gather_params(gather_dn(dn), sizes, p["mode"], _fill_zero(p["mode"]))
    return gather_params(gather_dn(dn), sizes)


# --- gather -----------------------------------------------------------------------------------------


def _gather_transpose(p, ins, outs):
    return {"scatter": scatter_add_params(scatter_dn(p["dimension_numbers"]), ins[0].dtype, p["mode"],
                                          p["unique_indices"], p["indices_are_sorted"])}


A.jvp("gather", 0, lambda g, x, idx, ans, *, gather: T.gather(g, idx, **gather),
      values=Values(lambda p, ins, outs: {"gather": {**p, "fill_value": _fill_zero(p["mode"])}},
                    gather=params("gather")),
      math="d gather(x, i) = gather(dx, i) (linear; out-of-bounds slices fill with 0)")
A.vjp("gather", 0, lambda ct, x, idx, ans, *, scatter: T.scatter_add(zeros_like(x), idx, ct, **scatter),
      values=Values(_gather_transpose, scatter=params("scatter-add")),
      math="gather(x, i)^T ct = scatter_add(zeros, i, ct) (mirrored dimension numbers, same mode)")


# --- dynamic_slice, dynamic_update_slice ------------------------------------------------------------
# One rule per slot whatever the operand's rank: the pattern names the operand (and the update) and matches the
# start indices, one per axis, as the rest of the list.

_SLICE_OWN = Values(lambda p, ins, outs: {"own": dict(p)}, own=params("dynamic_slice"))
_UPDATE_SLICE = Values(lambda p, ins, outs: {"slice": {"slice_sizes": tuple(ins[1].shape)}},
                       slice=params("dynamic_slice"))
_ONE, _TWO = Leading(1), Leading(2)
A.add("jvp", "dynamic_slice", "0", "one", _SLICE_OWN, "d dynamic_slice(x, i..) = dynamic_slice(dx, i..) (linear)",
      _ONE, 1, 1, lambda seeds, xs, outs, vals: T.dynamic_slice(Args.cons(seeds[0], xs[1]), **vals["own"]))
A.add("vjp", "dynamic_slice", "0", "one", None, "dynamic_slice(x, i..)^T ct = dynamic_update_slice(zeros, ct, i..)",
      _ONE, 1, 1, lambda seeds, xs, outs, vals: T.dynamic_update_slice(
          Args.cons(zeros_like(xs[0]), Args.cons(seeds[0], xs[1]))))
A.add("jvp", "dynamic_update_slice", "out0", "all", None,
      "d dynamic_update_slice(x, u, i..) = dynamic_update_slice(dx, du, i..) (linear in x and u)", _TWO, 1, _TWO,
      lambda seeds, xs, outs, vals: T.dynamic_update_slice(Args.cons(seeds[0], Args.cons(seeds[1], xs[2]))))
A.add("vjp", "dynamic_update_slice", "0", "one", None,
      "dynamic_update_slice(x, u, i..)^T ct for x = dynamic_update_slice(ct, zeros like u, i..)", _TWO, 1, 1,
      lambda seeds, xs, outs, vals: T.dynamic_update_slice(Args.cons(seeds[0], Args.cons(zeros_like(xs[1]), xs[2]))))
A.add("vjp", "dynamic_update_slice", "1", "one", _UPDATE_SLICE,
      "dynamic_update_slice(x, u, i..)^T ct for u = dynamic_slice(ct, i.., u.shape)", _TWO, 1, 1,
      lambda seeds, xs, outs, vals: T.dynamic_slice(Args.cons(seeds[0], xs[2]), **vals["slice"]))


# --- scatter-add, scatter-sub -----------------------------------------------------------------------

for _prim in ("scatter-add", "scatter-sub"):
    A.jvp_whole(_prim, lambda ts, xs, outs, prim=_prim: [T.of(prim)(ts[0], xs[1], ts[2], **_own(prim, xs, outs[0]))],
                arity=3, math=f"d {_prim}(x, i, u) = {_prim}(dx, i, du) (linear in x and u)")
    A.vjp(_prim, 0, lambda ct, x, idx, u, ans: ct, math=f"{_prim}(x, i, u)^T ct for x = ct")
_READ_UPDATES = Values(lambda p, ins, outs: {"read": _read_updates(p, ins)}, read=params("gather"))
A.vjp("scatter-add", 2, lambda ct, x, idx, u, ans, *, read: T.gather(ct, idx, **read),
      values=_READ_UPDATES,
      math="scatter_add(x, i, u)^T ct for u = gather(ct, i) (the windows read back, fill 0)")
A.vjp("scatter-sub", 2, lambda ct, x, idx, u, ans, *, read: T.neg(T.gather(ct, idx, **read)),
      values=_READ_UPDATES,
      math="scatter_sub(x, i, u)^T ct for u = -gather(ct, i) (the windows read back, fill 0)")


# --- scatter ------------------------------------------------------------------------------------------


def _scatter_values(p, ins, outs):
    """For both of scatter's forms: whether indices are unique, then what JAX's id scheme needs: the ids'
    iota, their shape (update windows collapsed to 1), the updates' and operand's shapes, the id dtype,
    the gather reading ids back, the scatter-add of the kept tangents, the transpose's gather."""
    if p.get("update_jaxpr") is not None:
        raise UnsupportedPrimitive("scatter", "JVP/VJP with an update_jaxpr (JAX has none: scatter_apply)",
                                   "transforms/ad/rules/indexing.py")
    x, _, u = ins
    window = set(as_ints(p["dimension_numbers"].update_window_dims))
    ids_shape = tuple(1 if d in window else n for d, n in enumerate(u.shape))
    count = math.prod(ids_shape)
    id_dtype = dtypes.uint64 if count > 2 ** 32 - 1 else dtypes.uint32  # int_dtype_for_dim(signed=False)
    iota = {"dimension": 0, "dtype": id_dtype, "shape": (count,), "sharding": None}
    kept = scatter_add_params(p["dimension_numbers"], x.dtype, p["mode"], p["unique_indices"],
                              p["indices_are_sorted"])
    return {"unique": int(bool(p["unique_indices"])), "iota": iota, "ids_shape": ids_shape, "upd_shape": u.shape,
            "op_shape": x.shape, "id_dtype": id_dtype.name, "read_ids": _read_updates(p, ins, fill=False),
            "kept": kept, "read_ct": _read_updates(p, ins)}


_SCATTER = Values(_scatter_values, unique=INT, iota=params("iota"), ids_shape=INTS, upd_shape=INTS, op_shape=INTS,
                  id_dtype=STR, read_ids=params("gather"), kept=params("scatter-add"), read_ct=params("gather"))
_ID_MASK_VALUES = ("iota", "ids_shape", "upd_shape", "op_shape", "id_dtype", "read_ids")


def _unique(flag, value: int) -> None:
    require(eq(flag).to(i64(value)))


def _id_masks(x, idx, u, ans, iota, ids_shape, upd_shape, op_shape, id_dtype, read_ids):
    """JAX's `_scatter_jvp` steps a)-c): (operand positions no update landed on, updates that won)."""
    ids = T.add(T.reshape(T.iota(**iota), ids_shape), _full(1.0, id_dtype, upd_shape))
    no_ids = _full(0.0, id_dtype, op_shape)
    scattered = T.scatter(no_ids, idx, ids, **_own("scatter", [x, idx, u], ans))
    return T.eq(scattered, no_ids), T.eq(ids, T.gather(scattered, idx, **read_ids))


def _scatter_jvp(unique: bool):
    def build(ts, xs, outs, vals):
        [x, idx, u], [ans] = xs, outs
        _unique(vals["unique"], int(unique))
        if unique:
            return T.scatter(ts[0], idx, ts[2], **_own("scatter", xs, ans))
        kept, won = _id_masks(x, idx, u, ans, *(vals[k] for k in _ID_MASK_VALUES))
        return T.scatter_add(_select(kept, ts[0], zeros_like(x)), idx, _select(won, ts[2], zeros_like(u)),
                             **vals["kept"])
    return build


def _scatter_vjp(i: int, unique: bool):
    def build(seeds, xs, outs, vals):
        [ct], [x, idx, u], [ans] = seeds, xs, outs
        _unique(vals["unique"], int(unique))
        if unique and i == 0:  # JAX's `_scatter_transpose_rule`
            return T.scatter(ct, idx, zeros_like(u), **_own("scatter", xs, ans))
        read_ct = T.gather(ct, idx, **vals["read_ct"])
        if unique:
            return read_ct
        kept, won = _id_masks(x, idx, u, ans, *(vals[k] for k in _ID_MASK_VALUES))
        return _select(kept, ct, zeros_like(x)) if i == 0 else _select(won, read_ct, zeros_like(u))
    return build


_counted("jvp", "scatter", "out0", True, 3, 1, _scatter_jvp(True), _SCATTER,
         "d scatter(x, i, u) = scatter(dx, i, du) (unique indices)", "-unique")
_counted("jvp", "scatter", "out0", True, 3, 1, _scatter_jvp(False), _SCATTER,
         "d scatter(x, i, u) = scatter_add(dx where no update landed, i, du where the update won)", "-ids")
for _i, _name in ((0, "x"), (2, "u")):
    _counted("vjp", "scatter", str(_i), False, 3, 1, _scatter_vjp(_i, True), _SCATTER,
             f"scatter(x, i, u)^T ct for {_name}: " + ("scatter(ct, i, 0)" if _i == 0 else "gather(ct, i)")
             + " (unique indices)", "-unique")
    _counted("vjp", "scatter", str(_i), False, 3, 1, _scatter_vjp(_i, False), _SCATTER,
             f"scatter(x, i, u)^T ct for {_name}: ct masked to " +
             ("positions no update landed on" if _i == 0 else "the windows of updates that won"), "-ids")


# --- scatter-mul ----------------------------------------------------------------------------------------


def _scatter_mul_updates(p, ins, outs):
    """The scatter-add placing the updates' tangents, and the gather reading cotangents back."""
    if not p["unique_indices"]:
        raise UnsupportedPrimitive("scatter-mul", "derivative for the updates without unique_indices=True "
                                   "(JAX has none)", "transforms/ad/rules/indexing.py")
    return {"place": scatter_add_params(p["dimension_numbers"], ins[0].dtype, p["mode"], p["unique_indices"],
                                        p["indices_are_sorted"]), "read": _read_updates(p, ins)}


_MUL_UPDATES = Values(_scatter_mul_updates, place=params("scatter-add"), read=params("gather"))
A.jvp("scatter-mul", 0,
      lambda g, x, idx, u, ans: T.scatter_mul(g, idx, u, **_own("scatter-mul", [x, idx, u], ans)),
      math="d scatter_mul(x, i, u) for x = scatter_mul(dx, i, u) (linear in x)")
A.jvp("scatter-mul", 2, lambda g, x, idx, u, ans, *, place, read:
      T.mul(x, T.scatter_add(zeros_like(x), idx, g, **place)), values=_MUL_UPDATES,
      math="d scatter_mul(x, i, u) for u = x * scatter_add(zeros, i, du) (unique indices)")
A.vjp("scatter-mul", 0,
      lambda ct, x, idx, u, ans: T.scatter_mul(ct, idx, u, **_own("scatter-mul", [x, idx, u], ans)),
      math="scatter_mul(x, i, u)^T ct for x = scatter_mul(ct, i, u)")
A.vjp("scatter-mul", 2, lambda ct, x, idx, u, ans, *, place, read:
      T.gather(T.mul(x, ct), idx, **read), values=_MUL_UPDATES,
      math="scatter_mul(x, i, u)^T ct for u = gather(x * ct, i) (unique indices)")


# --- scatter-min, scatter-max ---------------------------------------------------------------------------


def _extremal_values(p, ins, outs):
    """JAX's `_scatter_extremal_jvp`: the gather reading windows (its defaults), the counting scatter-add
    (scatter_add's defaults), the tangent's scatter-add (the op's mode), the updates' shape and dtype;
    for the transpose: the cotangent's gather (mode kept, fill 0) and the reading gather's transpose."""
    dn, x = p["dimension_numbers"], ins[0]
    return {"read": _read_updates(p, ins, fill=False), "count": scatter_add_params(dn, x.dtype),
            "tangent": scatter_add_params(dn, x.dtype, p["mode"], p["unique_indices"], p["indices_are_sorted"]),
            "upd_shape": ins[2].shape, "dt": x.dtype.name, "read_ct": _read_updates(p, ins),
            "back": scatter_add_params(dn, x.dtype, PROMISE)}


_EXTREMAL = Values(_extremal_values, read=params("gather"), count=params("scatter-add"),
                   tangent=params("scatter-add"), upd_shape=INTS, dt=STR, read_ct=params("gather"),
                   back=params("scatter-add"))


def _extremal_coefficients(x, idx, u, ans, read, count, upd_shape, dt) -> tuple[Arr, Arr]:
    """The weights of the operand's and the updates' tangents in each window (JAX's operand_coef and
    updates_coef): an update that lands gets 1/n of the n equal candidates, the operand keeps its share."""
    def gather(a):
        return T.gather(a, idx, **read)

    ones, zeros_u, zeros_x, one = _full(1.0, dt, upd_shape), zeros_like(u), zeros_like(x), Arr.scalar(1.0, dt)
    target = gather(ans)
    landed, retained = T.eq(u, target), T.eq(gather(x), target)
    num_updates = gather(T.scatter_add(zeros_x, idx, _select(landed, ones, zeros_u), **count))
    num_refs = gather(T.scatter_add(zeros_x, idx, ones, **count))
    shared = T.div(one, T.add(num_updates, one))
    updates_coef = _select(landed, _select(retained, shared, T.div(one, num_updates)), zeros_u)
    operand_coef = T.div(T.add(Arr.scalar(-1.0, dt), _select(retained, shared, zeros_u)), num_refs)
    return operand_coef, updates_coef


def _extremal_jvp(ts, xs, outs, *, read, count, tangent, upd_shape, dt, read_ct, back):
    [x, idx, u], [ans] = xs, outs
    operand_coef, updates_coef = _extremal_coefficients(x, idx, u, ans, read, count, upd_shape, dt)
    target_tangents = T.gather(ts[0], idx, **read)
    tangent_updates = T.add(T.mul(target_tangents, operand_coef), T.mul(ts[2], updates_coef))
    return [T.scatter_add(ts[0], idx, tangent_updates, **tangent)]


def _extremal_vjp(i: int):
    def build(ct, x, idx, u, ans, *, read, count, tangent, upd_shape, dt, read_ct, back):
        operand_coef, updates_coef = _extremal_coefficients(x, idx, u, ans, read, count, upd_shape, dt)
        windows = T.gather(ct, idx, **read_ct)
        if i == 2:
            return T.mul(windows, updates_coef)
        return T.add(ct, T.scatter_add(zeros_like(x), idx, T.mul(windows, operand_coef), **back))
    return build


for _prim in ("scatter-min", "scatter-max"):
    A.jvp_whole(_prim, _extremal_jvp, arity=3, values=_EXTREMAL,
                math=f"d {_prim}(x, i, u) = scatter_add(dx, i, gather(dx) * operand_coef + du * updates_coef)")
    A.vjp(_prim, 0, _extremal_vjp(0), values=_EXTREMAL,
          math=f"{_prim}(x, i, u)^T ct for x = ct + scatter_add(zeros, i, gather(ct) * operand_coef)")
    A.vjp(_prim, 2, _extremal_vjp(2), values=_EXTREMAL,
          math=f"{_prim}(x, i, u)^T ct for u = gather(ct) * updates_coef")


# --- sort, top_k, approx_top_k ------------------------------------------------------------------------


def _along_axis(shape, axis: int, dt) -> tuple:
    """The gather picking, along `axis`, the element each index names (`_sort_jvp`, `_top_k_jvp`), with
    the indices' shape once a trailing index axis is added, and the scatter-add that is its transpose."""
    rank = len(shape)
    batch = tuple(d for d in range(rank) if d != axis)
    dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
                                    operand_batching_dims=batch, start_indices_batching_dims=batch)
    return (gather_params(dn, (1,) * rank), tuple(shape) + (1,),
            scatter_add_params(scatter_dn(dn), dt, PROMISE))


@cache
def _sort_values(mode: str) -> Values:
    """The iota sorted along (JAX's unsigned index dtype), the operand count, the gather by the sorted iota for
    the JVP (`mode` "jvp", the same for every result) or, for operand i's VJP, its transpose and operand i's
    shape and dtype (its zero cotangent); the indices' shape with a trailing axis; its axes."""
    def values(p, ins, outs, i):
        shape, axis = ins[0].shape, int(p["dimension"])
        index_dtype = dtypes.uint64 if max(shape, default=0) > 2 ** 32 - 1 else dtypes.uint32
        iota = {"dimension": axis, "dtype": index_dtype, "shape": tuple(shape), "sharding": None}
        x = ins[0 if mode == "jvp" else i]
        read, idx_shape, back = _along_axis(shape, axis, x.dtype)
        found = {"iota": iota, "count": len(ins), "by": read if mode == "jvp" else back, "idx_shape": idx_shape,
                 "dims": tuple(range(len(shape)))}
        return found if mode == "jvp" else {**found, "shape": x.shape, "dt": x.dtype.name}
    by = params("gather" if mode == "jvp" else "scatter-add")
    common = {"iota": params("iota"), "count": INT, "by": by, "idx_shape": INTS, "dims": INTS}
    return Values(values, **common) if mode == "jvp" else Values(values, **common, shape=INTS, dt=STR)


def _sort_indices(xs, outs, vals) -> Arr:
    """JAX's `_sort_jvp`: sort an iota along with the operands (the same params: `num_keys` keeps it out of the
    keys); its result with a trailing index axis."""
    s = T.params("sort", "own")
    require(eq(outs[0]).to(get(T.sort(xs, **s), 0)))
    perm = get(T.sort(snoc(xs, T.iota(**vals["iota"])), **s), vals["count"])
    return T.broadcast_in_dim(perm, vals["idx_shape"], vals["dims"])


# One rule per slot whatever the operand count: result j's tangent is read from operand j's tangent alone ("own"),
# and operand j's cotangent from result j's.
A.add("jvp", "sort", "out*", "own", _sort_values("jvp"), "d sort(xs)_j = gather(dx_j, the permutation sorting an "
      "iota along)", None, Leading(1), 1,
      lambda ts, xs, outs, vals: T.gather(ts[0], _sort_indices(xs, outs, vals), **vals["by"]))
A.add("vjp", "sort", "*", "own", _sort_values("vjp"), "sort(xs)^T cts for x_j = scatter_add(zeros, the permutation, "
      "ct_j)", None, Leading(1), 1,
      lambda cts, xs, outs, vals: T.scatter_add(zero(vals["shape"], vals["dt"]), _sort_indices(xs, outs, vals),
                                                cts[0], **vals["by"]))


def _top_values(axis_param: str, default: int) -> Values:
    def fn(p, ins, outs):
        rank = ins[0].ndim
        axis = int(p.get(axis_param, default))
        read, idx_shape, back = _along_axis(outs[1].shape, axis + rank if axis < 0 else axis, ins[0].dtype)
        return {"read": read, "idx_shape": idx_shape, "back": back}
    return Values(fn, read=params("gather"), idx_shape=INTS, back=params("scatter-add"))


for _prim, _axis in (("top_k", "axis"), ("approx_top_k", "reduction_dimension")):
    _values = _top_values(_axis, -1)
    _counted("jvp", _prim, "out0", True, 1, 2,
             lambda ts, xs, outs, vals: T.gather(ts[0], T.reshape(outs[1], vals["idx_shape"]), **vals["read"]),
             _values, f"d {_prim}(x)_values = gather(dx, the result indices) along the axis", "")
    _counted("vjp", _prim, "0", True, 1, 2,
             lambda cts, xs, outs, vals: T.scatter_add(
                 zeros_like(xs[0]), T.reshape(outs[1], vals["idx_shape"]), cts[0], **vals["back"]),
             _values, f"{_prim}(x)^T (ct_values, _) = scatter_add(zeros, the result indices, ct_values)", "")
