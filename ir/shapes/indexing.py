"""Shape/dtype rules of indexing primitives: slices, gather, scatter, sort and top-k.

Gather and scatter follow XLA's shape inference as ported in jax/_src/lax/slicing.py
(`_gather_shape_rule`, `_scatter_shape_rule`): in JAX the index vector is always the last axis of
the indices.
"""

from __future__ import annotations

from functools import partial

from ir import dtypes as D
from ir.core import ShapedArray
from ir.errors import UnsupportedPrimitive
from ir.params import as_ints
from ir.primitives import shape_rule
from ir.shapes.common import ANY, FLOAT, INT, check_axis, check_dtype, fail, same_dtypes

# --- slices -----------------------------------------------------------------------------------


@shape_rule("slice")
def _slice(x, *, start_indices, limit_indices, strides=None, **params):
    starts, limits = as_ints(start_indices), as_ints(limit_indices)
    steps = as_ints(strides) if strides is not None else (1,) * x.ndim
    if not len(starts) == len(limits) == len(steps) == x.ndim:
        fail("slice", "start_indices, limit_indices and strides need one entry per operand axis",
             expected=x.ndim, actual=(starts, limits, strides))
    if any(not 0 <= s <= e <= d for s, e, d in zip(starts, limits, x.shape, strict=True)):
        fail("slice", "indices must satisfy 0 <= start <= limit <= size", expected=f"bounds within {x.shape}",
             actual=f"start_indices {starts}, limit_indices {limits}")
    if any(s < 1 for s in steps):
        fail("slice", "strides must be positive", expected="strides >= 1", actual=steps)
    shape = tuple(0 if e == s else 1 + (e - s - 1) // k
                  for s, e, k in zip(starts, limits, steps, strict=True))
    return [ShapedArray(shape, x.dtype, x.weak_type)]


def _check_start_indices(prim: str, x: ShapedArray, starts) -> None:
    if len(starts) != x.ndim:
        fail(prim, "needs one start index per operand axis", expected=x.ndim, actual=len(starts))
    for i in starts:
        check_dtype(prim, i, INT)
        if i.shape:
            fail(prim, "start indices must be scalars", expected="shape ()", actual=str(i))
    same_dtypes(prim, *starts, what="start indices")


@shape_rule("dynamic_slice")
def _dynamic_slice(x, *starts, slice_sizes, **params):
    _check_start_indices("dynamic_slice", x, starts)
    sizes = as_ints(slice_sizes)
    if len(sizes) != x.ndim or any(not 0 <= s <= d for s, d in zip(sizes, x.shape, strict=True)):
        fail("dynamic_slice", "slice_sizes needs one size per axis, each within the operand",
             expected=f"0 <= size <= {x.shape}", actual=sizes)
    return [ShapedArray(sizes, x.dtype, x.weak_type)]


@shape_rule("dynamic_update_slice")
def _dynamic_update_slice(x, update, *starts, **params):
    prim = "dynamic_update_slice"
    dt = same_dtypes(prim, x, update, what="operand and update")
    if update.ndim != x.ndim or any(u > d for u, d in zip(update.shape, x.shape, strict=True)):
        fail(prim, "the update must have the operand's rank and fit inside it", expected=f"at most {x.shape}",
             actual=str(update))
    _check_start_indices(prim, x, starts)
    return [ShapedArray(x.shape, dt, x.weak_type and update.weak_type)]


# --- gather and scatter -----------------------------------------------------------------------

def _check_dims(prim: str, dims: tuple[int, ...], bound: int, name: str, *, ordered: bool = True) -> None:
    """Dimension numbers: distinct, in [0, bound), and (for most fields) sorted."""
    if len(set(dims)) != len(dims) or any(not 0 <= d < bound for d in dims) or \
            (ordered and list(dims) != sorted(dims)):
        order = "sorted, " if ordered else ""
        fail(prim, f"{name} must be {order}distinct axes in [0, {bound})", expected=f"axes < {bound}",
             actual=dims)


def _check_batching(prim, operand, indices, operand_dims, indices_dims, names) -> None:
    _check_dims(prim, indices_dims, indices.ndim - 1, names[1], ordered=False)
    if len(operand_dims) != len(indices_dims) or \
            [operand.shape[i] for i in operand_dims] != [indices.shape[i] for i in indices_dims]:
        fail(prim, f"{names[0]} and {names[1]} must pair axes of equal size",
             expected=f"operand sizes {[operand.shape[i] for i in operand_dims]}",
             actual=f"indices sizes {[indices.shape[i] for i in indices_dims]}")


@shape_rule("gather")
def _gather(operand, indices, *, dimension_numbers, slice_sizes, **params):
    prim, dn = "gather", dimension_numbers
    check_dtype(prim, indices, INT, 1)
    offset, collapsed = as_ints(dn.offset_dims), as_ints(dn.collapsed_slice_dims)
    start_map = as_ints(dn.start_index_map)
    op_batch, idx_batch = as_ints(dn.operand_batching_dims), as_ints(dn.start_indices_batching_dims)
    sizes = as_ints(slice_sizes)
    if indices.ndim < 1:
        fail(prim, "indices need a trailing index-vector axis", expected="rank >= 1", actual=str(indices))
    out_rank = len(offset) + indices.ndim - 1
    _check_dims(prim, offset, out_rank, "offset_dims")
    if len(start_map) != indices.shape[-1]:
        fail(prim, "start_index_map needs one operand axis per index-vector entry",
             expected=indices.shape[-1], actual=start_map)
    _check_dims(prim, start_map, operand.ndim, "start_index_map", ordered=False)
    _check_dims(prim, collapsed, operand.ndim, "collapsed_slice_dims")
    _check_dims(prim, op_batch, operand.ndim, "operand_batching_dims")
    if set(op_batch) & (set(collapsed) | set(start_map)):
        fail(prim, "operand_batching_dims must be disjoint from collapsed_slice_dims and start_index_map",
             expected="disjoint axes", actual=f"{op_batch}, {collapsed}, {start_map}")
    _check_batching(prim, operand, indices, op_batch, idx_batch,
                    ("operand_batching_dims", "start_indices_batching_dims"))
    if len(sizes) != operand.ndim or len(sizes) != len(offset) + len(collapsed) + len(op_batch):
        fail(prim, "slice_sizes needs one size per operand axis, and each axis is an offset, collapsed "
             "or batching axis", expected=operand.ndim, actual=sizes)
    if any(not 0 <= s <= d for s, d in zip(sizes, operand.shape, strict=True)):
        fail(prim, "slice sizes must fit in the operand", expected=f"at most {operand.shape}", actual=sizes)
    if any(sizes[d] != 1 for d in collapsed) or any(sizes[d] > 1 for d in op_batch):
        fail(prim, "collapsed axes need slice size 1 and batching axes at most 1", expected="size 1",
             actual=sizes)
    window = iter(s for i, s in enumerate(sizes) if i not in collapsed and i not in op_batch)
    batch = iter(indices.shape[:-1])
    shape = tuple(next(window) if i in offset else next(batch) for i in range(out_rank))
    return [ShapedArray(shape, operand.dtype, operand.weak_type)]


def _scatter(prim, operand, indices, updates, *, dimension_numbers, **params):
    dn = dimension_numbers
    check_dtype(prim, indices, INT, 1)
    dt = same_dtypes(prim, operand, updates, what="operand and updates")
    window, inserted = as_ints(dn.update_window_dims), as_ints(dn.inserted_window_dims)
    to_operand = as_ints(dn.scatter_dims_to_operand_dims)
    op_batch, idx_batch = as_ints(dn.operand_batching_dims), as_ints(dn.scatter_indices_batching_dims)
    if indices.ndim < 1:
        fail(prim, "indices need a trailing index-vector axis", expected="rank >= 1", actual=str(indices))
    if updates.ndim != indices.ndim - 1 + len(window):
        fail(prim, "updates have one axis per index batch axis plus the window axes",
             expected=f"rank {indices.ndim - 1 + len(window)}", actual=str(updates))
    _check_dims(prim, window, updates.ndim, "update_window_dims")
    _check_dims(prim, inserted, operand.ndim, "inserted_window_dims")
    _check_dims(prim, op_batch, operand.ndim, "operand_batching_dims")
    if set(op_batch) & (set(inserted) | set(to_operand)):
        fail(prim, "operand_batching_dims must be disjoint from inserted_window_dims and "
             "scatter_dims_to_operand_dims", expected="disjoint axes",
             actual=f"{op_batch}, {inserted}, {to_operand}")
    _check_batching(prim, operand, indices, op_batch, idx_batch,
                    ("operand_batching_dims", "scatter_indices_batching_dims"))
    if operand.ndim != len(window) + len(inserted) + len(op_batch):
        fail(prim, "each operand axis is a window, inserted or batching axis",
             expected=f"{operand.ndim} axes", actual=f"{window}, {inserted}, {op_batch}")
    if len(to_operand) != indices.shape[-1]:
        fail(prim, "scatter_dims_to_operand_dims needs one operand axis per index-vector entry",
             expected=indices.shape[-1], actual=to_operand)
    _check_dims(prim, to_operand, operand.ndim, "scatter_dims_to_operand_dims", ordered=False)
    bounds = [d for i, d in enumerate(operand.shape) if i not in inserted and i not in op_batch]
    if any(updates.shape[w] > b for w, b in zip(window, bounds, strict=True)):
        fail(prim, "update windows must fit in the operand", expected=f"window sizes at most {bounds}",
             actual=str(updates))
    scatter_shape = tuple(d for i, d in enumerate(updates.shape) if i not in window)
    if scatter_shape != indices.shape[:-1]:
        fail(prim, "the update scatter axes must match the index batch axes",
             expected=f"sizes {indices.shape[:-1]}", actual=str(updates))
    return [ShapedArray(operand.shape, dt, operand.weak_type and updates.weak_type)]


for _name in ("scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min", "scatter-max"):
    shape_rule(_name)(partial(_scatter, _name))


# --- sort and top-k ---------------------------------------------------------------------------

@shape_rule("sort")
def _sort(*xs, dimension, num_keys=1, **params):
    if not xs:
        fail("sort", "needs at least one operand", expected=">= 1 operand", actual=0)
    if any(x.shape != xs[0].shape for x in xs):
        fail("sort", "operands must have the same shape", expected="equal shapes",
             actual=", ".join(map(str, xs)))
    check_axis("sort", dimension, xs[0].ndim, "dimension")
    if not 1 <= int(num_keys) <= len(xs):
        fail("sort", "num_keys must be between 1 and the number of operands",
             expected=f"1 <= num_keys <= {len(xs)}", actual=num_keys)
    return [ShapedArray(x.shape, x.dtype, x.weak_type) for x in xs]


def _k_largest(prim: str, x: ShapedArray, k: int, axis: int) -> list[ShapedArray]:
    if x.ndim == 0:
        fail(prim, "the operand must have at least one axis", expected="rank >= 1", actual=str(x))
    axis = check_axis(prim, axis + x.ndim if axis < 0 else axis, x.ndim)
    if not 0 <= k <= x.shape[axis]:
        fail(prim, f"k must be at most the size of axis {axis}", expected=f"0 <= k <= {x.shape[axis]}",
             actual=k)
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, D.int32)]


@shape_rule("top_k")
def _top_k(x, *, k, axis=-1, **params):
    check_dtype("top_k", x, ANY - {"c"})
    return _k_largest("top_k", x, int(k), int(axis))


@shape_rule("approx_top_k")
def _approx_top_k(x, *, k, reduction_dimension=-1, aggregate_to_topk=True, **params):
    check_dtype("approx_top_k", x, FLOAT)
    if not aggregate_to_topk:
        # The result size then comes from XLA's ApproxTopKReductionOutputSize.
        raise UnsupportedPrimitive("approx_top_k", "shape/dtype (aggregate_to_topk=False)",
                                   "ir/shapes/indexing.py")
    if int(k) <= 0:
        fail("approx_top_k", "k must be positive", expected="k > 0", actual=k)
    return _k_largest("approx_top_k", x, int(k), int(reduction_dimension))
