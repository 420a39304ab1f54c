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
then holds both forms and extraction keeps the cheaper. dynamic_slice, dynamic_update_slice and sort have
one rule (and its variants) for any operand count, matching the operands as one list; the start matrix and the
unbatched starts are built from that list by list functions the prelude expands (see their section).
"""

from __future__ import annotations

from egglog import String, Vec, eq, function, i64, relation, rewrite, rule, union, var

from ir import lax
from ir.params import as_ints
from rewrites.terms import Args, Arr, T
from transforms.batching.rule import INTS, STR, Site, Values, VmapBook, node, params, require, variadic_result
from transforms.batching.terms import vmap_of
from transforms.rulebook import Vals

V = VmapBook("indexing")
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
# One rule and its variants for any rank: the rules match the operand (and the update) and the start indices as
# one list, and build from the starts with three list functions the prelude expands:
#     start_matrix(starts, column)   the (B, rank) matrix of the batched starts: one (B, 1) column each,
#                                    concatenated along axis 1 (a single column as it is)
#     start_columns(starts, column)  those columns
#     held_starts(starts)            the unbatched starts that materialized ones hold; `held_done` marks it
#                                    complete, only where every start is one (the variants require it)


@function(egg_fn="vmap_start_matrix", unextractable=True)
def start_matrix(starts: Args, column: Vec[i64]) -> Arr: ...


@function(egg_fn="vmap_start_columns", unextractable=True)
def start_columns(starts: Args, column: Vec[i64]) -> Args: ...


@function(egg_fn="vmap_held_starts", unextractable=True)
def held_starts(starts: Args) -> Args: ...


held_done = relation("vmap_held_starts_done", Args)

_i, _j, _s, _x, _u = (var(name, Arr) for name in ("i", "j", "s", "x", "u"))
_rest, _start_list, _tail, _held_list = (var(name, Args) for name in ("rest", "starts", "tail", "held"))
_column, _sh = var("column", Vec[i64]), var("sh", Vec[i64])
_FIRST = Vec[i64](i64(0))


def _column_of(i: Arr, column) -> Arr:
    return T.broadcast_in_dim(i, column, _FIRST)


V.expansion("vmap-start-matrix", "start_matrix([i]) = column(i); start_matrix(starts) = concatenate(columns, 1)",
            lambda: (rewrite(start_matrix(Args.cons(_i, Args.nil()), _column)).to(_column_of(_i, _column)),
                     rewrite(start_matrix(Args.cons(_i, Args.cons(_j, _rest)), _column)).to(
                         T.concatenate(start_columns(Args.cons(_i, Args.cons(_j, _rest)), _column), dimension=1))),
            trigger="vmap_start_matrix")
V.expansion("vmap-start-columns", "start_columns(i : starts) = column(i) : start_columns(starts)",
            lambda: (rewrite(start_columns(Args.nil(), _column)).to(Args.nil()),
                     rewrite(start_columns(Args.cons(_i, _rest), _column)).to(
                         Args.cons(_column_of(_i, _column), start_columns(_rest, _column)))),
            trigger="vmap_start_columns")


def _held_rules() -> tuple:
    """held_starts of every tail of a list it is asked of; complete (`held_done`) from the end of the list back,
    while each start is a broadcast of an unbatched one."""
    return (
        rule(eq(_held_list).to(held_starts(Args.cons(_i, _rest)))).then(held_starts(_rest)),
        rule(eq(_held_list).to(held_starts(Args.nil()))).then(union(_held_list).with_(Args.nil()),
                                                              held_done(_held_list)),
        rule(eq(_held_list).to(held_starts(Args.cons(_i, _rest))), eq(_i).to(T.broadcast_in_dim(_s, _sh, EMPTY)),
             eq(_tail).to(held_starts(_rest)), held_done(_tail)).then(
            union(_held_list).with_(Args.cons(_s, _tail)), held_done(_held_list)))


def _ask_held(prim: str, named: int):
    """held_starts of the starts of each batched `prim` node (after its `named` leading operands)."""
    def eggs() -> tuple:
        lead = Args.cons(_x, _start_list) if named == 1 else Args.cons(_x, Args.cons(_u, _start_list))
        batched = vmap_of(String(f"{prim}:b*"), var("vals", Vals), lead)
        return (rule(eq(var("node", Arr)).to(batched)).then(held_starts(_start_list)),)
    return eggs


V.expansion("vmap-held-starts", "held_starts(broadcast(s) : starts) = s : held_starts(starts), done when all are",
            _held_rules, trigger="vmap_held_starts")
for _prim, _named in (("dynamic_slice", 1), ("dynamic_update_slice", 2)):
    V.expansion(f"vmap-{_prim.replace('_', '-')}-held-starts", f"a batched {_prim} asks held_starts(its starts)",
                _ask_held(_prim, _named), trigger=f"vmap_of:{_prim}:b*")


def _operand_and_starts(xs: Args, named: int) -> tuple[list[Arr], Args]:
    """The `named` leading operands of a variadic rule's list (the operand, the update) and the start indices."""
    lead = [var(name, Arr) for name in ("x", "u")[:named]]
    starts = var("starts", Args)
    rest = starts
    for x in reversed(lead):
        rest = Args.cons(x, rest)
    require(eq(xs).to(rest))
    return lead, starts


def _all_held(starts: Args) -> Args:
    """The unbatched starts, where every start is a materialized one (the rule fires only there)."""
    held = var("held", Args)
    require(eq(held).to(held_starts(starts)))
    require(held_done(held))
    return held


def _starts(e: Site, first: int) -> dict:
    """A start column's shape and the starts' dtype."""
    return {"column": (e.size, 1), "dtype": e.in_avals[first].dtype.name}


def _slice_params(e: Site) -> dict:
    """The gathers of the start matrix from the batched operand (paired batching dims) and from the unbatched
    one (which the batched operand materializes along `operand_dims`), and the dynamic_slice with unbatched
    starts (size B on the batch axis)."""
    rank, sizes = e.in_avals[0].ndim, as_ints(e.params["slice_sizes"])
    window = tuple(range(1, rank + 1))
    common = {"fill_value": None, "indices_are_sorted": True, "mode": lax.GatherScatterMode.PROMISE_IN_BOUNDS,
              "unique_indices": True}
    paired = {**common, "dimension_numbers": GDN(offset_dims=window, start_index_map=window, operand_batching_dims=(0,),
                                                 start_indices_batching_dims=(0,)),
              "slice_sizes": (min(e.size, 1), *sizes)}
    plain = {**common, "dimension_numbers": GDN(offset_dims=window, start_index_map=tuple(range(rank))),
             "slice_sizes": sizes}
    return {"paired": paired, "plain": plain, "same": {**e.params, "slice_sizes": (e.size, *sizes)},
            "operand_dims": window, **_starts(e, 1)}


def _update_params(e: Site) -> dict:
    """The scatter of the start matrix with paired batching dims (CLIP clamps as dynamic_update_slice)."""
    window = tuple(range(1, e.in_avals[0].ndim + 1))
    dn = SDN(update_window_dims=window, scatter_dims_to_operand_dims=window, operand_batching_dims=(0,),
             scatter_indices_batching_dims=(0,))
    scatter = {"dimension_numbers": dn, "indices_are_sorted": True, "mode": lax.GatherScatterMode.CLIP,
               "unique_indices": True, "update_consts": (), "update_jaxpr": None}
    return {"scatter": scatter, **_starts(e, 2)}


_SLICE = Values(_slice_params, paired=node("gather"), plain=node("gather"), same=params("dynamic_slice"),
                operand_dims=INTS, column=INTS, dtype=STR)
_UPDATE = Values(_update_params, scatter=node("scatter"), column=INTS, dtype=STR)


def _slice_paired(xs, *, paired, plain, same, operand_dims, column, dtype):
    [x], starts = _operand_and_starts(xs, 1)
    return paired(x, start_matrix(starts, column))


def _slice_operand_unbatched(xs, *, paired, plain, same, operand_dims, column, dtype):
    [x], starts = _operand_and_starts(xs, 1)
    return plain(_held(x, operand_dims, "operand"), start_matrix(starts, column))


def _slice_starts_unbatched(xs, *, paired, plain, same, operand_dims, column, dtype):
    [x], starts = _operand_and_starts(xs, 1)
    return T.dynamic_slice(Args.cons(x, Args.cons(Arr.scalar(0.0, dtype), _all_held(starts))), **same)


def _update_paired(xs, *, scatter, column, dtype):
    [x, u], starts = _operand_and_starts(xs, 2)
    return scatter(x, start_matrix(starts, column), u)


def _update_starts_unbatched(xs, *, scatter, column, dtype):
    [x, u], starts = _operand_and_starts(xs, 2)
    return T.dynamic_update_slice(Args.cons(x, Args.cons(u, Args.cons(Arr.scalar(0.0, dtype), _all_held(starts)))))


V.batch("dynamic_slice", None, _slice_paired, materialize=True, variadic=True, values=_SLICE,
        math="dynamic_slice per batch element = gather of the (B, rank) start matrix with the operand's and the "
             "matrix's batch axes paired, clamped as dynamic_slice (PROMISE_IN_BOUNDS)")
V.variant("dynamic_slice", "b*", _slice_operand_unbatched, name="operand-unbatched",
          math="dynamic_slice of a materialized operand = gather of the start matrix from the unbatched operand")
V.variant("dynamic_slice", "b*", _slice_starts_unbatched, name="starts-unbatched",
          math="dynamic_slice with materialized starts = the same op with start 0 and size B on the batch axis")
V.batch("dynamic_update_slice", None, _update_paired, materialize=True, variadic=True, values=_UPDATE,
        math="dynamic_update_slice per batch element = scatter of the (B, rank) start matrix with the operand's "
             "and the matrix's batch axes paired, clamped as dynamic_update_slice (CLIP)")
V.variant("dynamic_update_slice", "b*", _update_starts_unbatched, name="starts-unbatched",
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
