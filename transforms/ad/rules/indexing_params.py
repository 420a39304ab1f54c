"""Params of the gather and scatter-add nodes that AD rules build (the indexing rules' transposes, the linalg
rules' diagonal, row and column reads): `lax.gather`'s and `lax.scatter_add`'s params with their defaults,
and the dimension numbers that mirror a gather into the scatter writing back what it reads (and back).

Not a rule family: it holds no `ADBook`.
"""

from __future__ import annotations

from functools import cache

from ir import lax
from ir.core import ShapedArray
from ir.params import as_ints
from ir.tracing import trace_flat

PROMISE = lax.GatherScatterMode.PROMISE_IN_BOUNDS
FILL_OR_DROP = lax.GatherScatterMode.FILL_OR_DROP


def gather_params(dn, slice_sizes, mode=PROMISE, fill_value=None, unique=False, is_sorted=False) -> dict:
    """`lax.gather`'s params (its defaults: mode PROMISE_IN_BOUNDS, not unique, not sorted)."""
    return {"dimension_numbers": dn, "fill_value": fill_value, "indices_are_sorted": bool(is_sorted),
            "mode": mode, "slice_sizes": tuple(int(s) for s in slice_sizes), "unique_indices": bool(unique)}


@cache
def _add_jaxpr(dt):
    return trace_flat(lax.add, [ShapedArray((), dt)] * 2)[0]


def scatter_add_params(dn, dt, mode=FILL_OR_DROP, unique=False, is_sorted=False) -> dict:
    """`lax.scatter_add`'s params for updates of dtype `dt` (its defaults: mode FILL_OR_DROP, not unique,
    not sorted)."""
    return {"dimension_numbers": dn, "indices_are_sorted": bool(is_sorted), "mode": mode,
            "unique_indices": bool(unique), "update_consts": (), "update_jaxpr": _add_jaxpr(dt)}


def scatter_dn(dn):
    """The scatter that writes back what a gather with `dn` reads (`_gather_transpose_rule`)."""
    return lax.ScatterDimensionNumbers(
        update_window_dims=as_ints(dn.offset_dims), inserted_window_dims=as_ints(dn.collapsed_slice_dims),
        scatter_dims_to_operand_dims=as_ints(dn.start_index_map),
        operand_batching_dims=as_ints(dn.get("operand_batching_dims", ())),
        scatter_indices_batching_dims=as_ints(dn.get("start_indices_batching_dims", ())))


def gather_dn(dn):
    """The gather that reads back what a scatter with `dn` writes (the scatter transposes)."""
    return lax.GatherDimensionNumbers(
        offset_dims=as_ints(dn.update_window_dims), collapsed_slice_dims=as_ints(dn.inserted_window_dims),
        start_index_map=as_ints(dn.scatter_dims_to_operand_dims),
        operand_batching_dims=as_ints(dn.get("operand_batching_dims", ())),
        start_indices_batching_dims=as_ints(dn.get("scatter_indices_batching_dims", ())))
