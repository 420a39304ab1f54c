"""Batching rules of the indexing primitives: gather, the scatters, dynamic_slice, dynamic_update_slice,
sort, top_k and approx_top_k (argsort is a sort; searchsorted and interp are programs of these).

Forms follow JAX (jax/_src/lax/slicing.py `_gather_batching_rule`, `_scatter_batching_rule`,
`_dynamic_slice_batching_rule`, `_dynamic_update_slice_batching_rule`; lax.py `_sort_batch_rule`,
`_top_k_batch_rule`; ann.py `_approx_top_k_batch_rule`), with the batch axis always first:
- gather (one rule per operand pattern): a batched operand's batch axis becomes a leading offset
  (window) axis of full size B; batched indices' batch axis the leading index batch axis; both batched:
  the two batch axes are paired as batching dims, so batch element b reads its own operand.
- scatters: operand, indices and updates with paired batching dims; where the indices are a
  materialized unbatched value, JAX's form with the unbatched indices and the batch axis a leading
  update window axis. The operand and updates are materialized, as JAX's `bdim_at_front` does.
- dynamic_slice / dynamic_update_slice: the starts become a (B, rank) start matrix and the op a gather
  (PROMISE_IN_BOUNDS clamps as dynamic_slice does) or a scatter (CLIP clamps as dynamic_update_slice
  does) with batching dims; where every start is a materialized unbatched value, the op itself with a
  leading start 0 (and slice size B); where dynamic_slice's operand is, a gather from the unbatched operand.
- sort (unbatched operands materialized, as JAX does), top_k, approx_top_k: the op's axis shifted by one.

Scatters, dynamic_slice, dynamic_update_slice and sort use the `materialize` policy: one rule per
operand count, not one per operand pattern (dynamic_slice's starts are separate operands, so there
would be 2^(rank+1) - 1 patterns, and every rule costs each transform program matching time). The
cheaper forms above are variants of the same node that recognize a materialized operand (the
`materialize:u` broadcast along a new leading axis) and use the unbatched value it holds; the e-class
then holds both forms and extraction keeps the cheaper. dynamic_slice and dynamic_update_slice have
rules for operand ranks `RANKS` (others raise UnsupportedPrimitive when the batched program is built);
sort has one rule for any operand count and result, matching the operands as one list.
"""

from __future__ import annotations

from egglog import Vec, eq, i64, var

from ir import lax
from ir.params import as_ints
from rewrites.terms import Arr, T, args_list
from transforms.batching.rule import INTS, STR, Site, Values, VmapBook, node, params, require, variadic_result

V = VmapBook("indexing")
RANKS = range(1, 5)
SCATTERS = ("scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min", "scatter-max")
EMPTY = Vec[i64].empty()
GDN, SDN = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers


def _up(dims) -> tuple[int, ...]:
    """Axes numbered in the batched array (the batch axis first)."""
    return tuple(int(d) + 1 for d in as_ints(dims))


# --- gather -----------------------------------------------------------------------------------------


def _gather_params(e: Site) -> dict:
    p, dn = e.params, e.params["dimension_numbers"]
    sizes = as_ints(p["slice_sizes"])
    operand_batching, indices_batching = dn.get("operand_batching_dims", ()), dn.get("start_indices_batching_dims", ())
    if e.flags == "bu":
        dn = GDN(offset_dims=(0, *_up(dn.offset_dims)), collapsed_slice_dims=_up(dn.collapsed_slice_dims),
                 start_index_map=_up(dn.start_index_map), operand_batching_dims=_up(operand_batching),
                 start_indices_batching_dims=as_ints(indices_batching))
        return {"op": {**p, "dimension_numbers": dn, "slice_sizes": (e.size, *sizes)}}
    if e.flags == "ub":
        dn = GDN(offset_dims=_up(dn.offset_dims), collapsed_slice_dims=as_ints(dn.collapsed_slice_dims),
                 start_index_map=as_ints(dn.start_index_map), operand_batching_dims=as_ints(operand_batching),
                 start_indices_batching_dims=_up(indices_batching))
        return {"op": {**p, "dimension_numbers": dn, "unique_indices": False, "indices_are_sorted": False}}
    dn = GDN(offset_dims=_up(dn.offset_dims), collapsed_slice_dims=_up(dn.collapsed_slice_dims),
             start_index_map=_up(dn.start_index_map), operand_batching_dims=(0, *_up(operand_batching)),
             start_indices_batching_dims=(0, *_up(indices_batching)))
    return {"op": {**p, "dimension_numbers": dn, "slice_sizes": (min(e.size, 1), *sizes)}}


V.batch("gather", ("bu", "ub", "bb"), lambda x, idx, *, op: op(x, idx),
        values=Values(_gather_params, op=node("gather")),
        math="gather per batch element: the operand's batch axis as a leading full-size window axis (bu), the "
             "indices' as the leading index batch axis (ub), or both paired as batching dims (bb)")


# --- materialized operands and their variants ---------------------------------------------------


def _held(xb: Arr, dims, name: str) -> Arr:
    """The unbatched x that the batched operand `xb` materializes (`xb` = x broadcast along a new leading
    axis, `dims` = 1..rank): the rule fires only where `xb` is one."""
    x = var(name, Arr)
    require(eq(xb).to(T.broadcast_in_dim(x, var(f"{name}_shape", Vec[i64]), dims)))
    return x


def _ranks(n: int):
    """The broadcast dimensions materializing a rank-n value: 1..n."""
    return Vec[i64](*(i64(d) for d in range(1, n + 1)))


# --- scatter, scatter-add, scatter-sub, scatter-mul, scatter-min, scatter-max -------------------------


def _scatter_params(e: Site) -> dict:
    """The scatter with batched indices (paired batching dims), the one with the indices unbatched (a leading
    update window axis), and the broadcast dimensions materializing the indices."""
    p, dn = e.params, e.params["dimension_numbers"]
    operand_batching = dn.get("operand_batching_dims", ())
    indices_batching = dn.get("scatter_indices_batching_dims", ())
    paired = SDN(update_window_dims=_up(dn.update_window_dims), inserted_window_dims=_up(dn.inserted_window_dims),
                 scatter_dims_to_operand_dims=_up(dn.scatter_dims_to_operand_dims),
                 operand_batching_dims=(0, *_up(operand_batching)),
                 scatter_indices_batching_dims=(0, *_up(indices_batching)))
    window = SDN(update_window_dims=(0, *_up(dn.update_window_dims)), inserted_window_dims=_up(dn.inserted_window_dims),
                 scatter_dims_to_operand_dims=_up(dn.scatter_dims_to_operand_dims),
                 operand_batching_dims=_up(operand_batching), scatter_indices_batching_dims=as_ints(indices_batching))
    dims = tuple(range(1, e.in_avals[1].ndim + 1))
    return {"paired": {**p, "dimension_numbers": paired}, "window": {**p, "dimension_numbers": window}, "dims": dims}


for _prim in SCATTERS:
    _values = Values(_scatter_params, paired=node(_prim), window=node(_prim), dims=INTS)
    V.batch(_prim, None, lambda x, idx, u, *, paired, window, dims: paired(x, idx, u), materialize=True, values=_values,
            math=f"{_prim} per batch element: operand, indices and updates batch axes paired as batching dims")
    V.variant(_prim, "bbb", lambda x, idx, u, *, paired, window, dims: window(x, _held(idx, dims, "idx"), u),
              math=f"{_prim} with materialized indices: unbatched indices, the batch axis a leading update window "
                   "axis of the operand and the updates (JAX's form)", name="indices-unbatched")


# --- dynamic_slice, dynamic_update_slice ---------------------------------------------------------------


def _start_matrix(starts, concat, column) -> Arr:
    """The (B, rank) matrix of batched start indices, one column each."""
    columns = [T.broadcast_in_dim(i, column, Vec[i64](i64(0))) for i in starts]
    return columns[0] if len(columns) == 1 else concat(*columns)


def _held_starts(starts) -> list[Arr]:
    return [_held(i, EMPTY, f"start{k}") for k, i in enumerate(starts)]


def _starts(e: Site, first: int) -> dict:
    """The concatenate of the start columns, a column's shape, and the starts' dtype."""
    return {"concat": {"dimension": 1}, "column": (e.size, 1), "dtype": e.in_avals[first].dtype.name}


def _slice_params(e: Site) -> dict:
    """The gathers of the start matrix from the batched operand (paired batching dims) and from the unbatched
    one, and the dynamic_slice with unbatched starts (size B on the batch axis)."""
    rank, sizes = e.in_avals[0].ndim, as_ints(e.params["slice_sizes"])
    window = tuple(range(1, rank + 1))
    common = {"fill_value": None, "indices_are_sorted": True, "mode": lax.GatherScatterMode.PROMISE_IN_BOUNDS,
              "unique_indices": True}
    paired = {**common, "dimension_numbers": GDN(offset_dims=window, start_index_map=window, operand_batching_dims=(0,),
                                                 start_indices_batching_dims=(0,)),
              "slice_sizes": (min(e.size, 1), *sizes)}
    plain = {**common, "dimension_numbers": GDN(offset_dims=window, start_index_map=tuple(range(rank))),
             "slice_sizes": sizes}
    return {"paired": paired, "plain": plain, "same": {**e.params, "slice_sizes": (e.size, *sizes)}, **_starts(e, 1)}


def _update_params(e: Site) -> dict:
    """The scatter of the start matrix with paired batching dims (CLIP clamps as dynamic_update_slice)."""
    window = tuple(range(1, e.in_avals[0].ndim + 1))
    dn = SDN(update_window_dims=window, scatter_dims_to_operand_dims=window, operand_batching_dims=(0,),
             scatter_indices_batching_dims=(0,))
    scatter = {"dimension_numbers": dn, "indices_are_sorted": True, "mode": lax.GatherScatterMode.CLIP,
               "unique_indices": True, "update_consts": (), "update_jaxpr": None}
    return {"scatter": scatter, **_starts(e, 2)}


_SLICE = Values(_slice_params, paired=node("gather"), plain=node("gather"), same=params("dynamic_slice"),
                concat=node("concatenate"), column=INTS, dtype=STR)
_UPDATE = Values(_update_params, scatter=node("scatter"), concat=node("concatenate"), column=INTS, dtype=STR)


def _slice_paired(x, *starts, paired, plain, same, concat, column, dtype):
    return paired(x, _start_matrix(starts, concat, column))


def _slice_operand_unbatched(x, *starts, paired, plain, same, concat, column, dtype):
    return plain(_held(x, _ranks(len(starts)), "operand"), _start_matrix(starts, concat, column))


def _slice_starts_unbatched(x, *starts, paired, plain, same, concat, column, dtype):
    return T.dynamic_slice(args_list([x, Arr.scalar(0.0, dtype), *_held_starts(starts)]), **same)


def _update_paired(x, u, *starts, scatter, concat, column, dtype):
    return scatter(x, _start_matrix(starts, concat, column), u)


def _update_starts_unbatched(x, u, *starts, scatter, concat, column, dtype):
    return T.dynamic_update_slice(args_list([x, u, Arr.scalar(0.0, dtype), *_held_starts(starts)]))


for _rank in RANKS:
    V.batch("dynamic_slice", None, _slice_paired, materialize=True, arity=1 + _rank, values=_SLICE,
            math="dynamic_slice per batch element = gather of the (B, rank) start matrix with the operand's and the "
                 "matrix's batch axes paired, clamped as dynamic_slice (PROMISE_IN_BOUNDS)")
    V.variant("dynamic_slice", "b" * (1 + _rank), _slice_operand_unbatched, name="operand-unbatched",
              math="dynamic_slice of a materialized operand = gather of the start matrix from the unbatched operand")
    V.variant("dynamic_slice", "b" * (1 + _rank), _slice_starts_unbatched, name="starts-unbatched",
              math="dynamic_slice with materialized starts = the same op with start 0 and size B on the batch axis")
    V.batch("dynamic_update_slice", None, _update_paired, materialize=True, arity=2 + _rank, values=_UPDATE,
            math="dynamic_update_slice per batch element = scatter of the (B, rank) start matrix with the operand's "
                 "and the matrix's batch axes paired, clamped as dynamic_update_slice (CLIP)")
    V.variant("dynamic_update_slice", "b" * (2 + _rank), _update_starts_unbatched, name="starts-unbatched",
              math="dynamic_update_slice with materialized starts = the same op with start 0 on the batch axis")


# --- sort, top_k, approx_top_k -----------------------------------------------------------------------------


def _sort_params(e: Site) -> dict:
    return {"op": {**e.params, "dimension": int(e.params["dimension"]) + 1}}


V.batch("sort", None, lambda xs, *, op, index: variadic_result(op, index, xs), materialize=True,
        variadic=True, each_result=True, values=Values(_sort_params, op=node("sort")),
        math="sort per batch element = sort along the shifted dimension, every operand batched")


def _reduced_axis(name: str):
    def fn(e: Site) -> dict:
        axis = int(e.params.get(name, -1))
        return {"op": {**e.params, name: axis % e.in_avals[0].ndim + 1}}
    return fn


for _prim, _axis in (("top_k", "axis"), ("approx_top_k", "reduction_dimension")):
    V.batch(_prim, "b", lambda x, *, op, index: op.result(index, x), each_result=True,
            values=Values(_reduced_axis(_axis), op=node(_prim)),
            math=f"{_prim} per batch element = {_prim} along the shifted axis")
