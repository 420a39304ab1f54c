"""Indexing primitives: slices, gather/scatter (XLA's general semantics), sort and top-k.

Out-of-bounds indices follow XLA on CPU as JAX lowers each mode:
- `slice` starts are static; `dynamic_slice` / `dynamic_update_slice` clamp every start into
  `[0, dim - size]`.
- gather: `CLIP` and `PROMISE_IN_BOUNDS` clamp each slice start into `[0, dim - slice_size]`;
  `FILL_OR_DROP` clamps too, then replaces every slice with any start out of range by
  `fill_value` (default: nan, the integer minimum, the unsigned maximum, True).
- scatter: `CLIP` clamps each window start into `[0, dim - window_size]`; `FILL_OR_DROP` and
  `PROMISE_IN_BOUNDS` drop an update window that is not entirely inside the operand.
Updates apply in the row-major order of the update index space, so duplicate indices of a plain
`scatter` keep the last update.

Sort order is JAX's: floats by IEEE total order after mapping -0.0 to 0.0 and every NaN to +NaN
(so `-inf < ... < -0.0 == 0.0 < ... < inf < nan`, ties kept stable), complex numbers by real then
imaginary part. `top_k` / `approx_top_k` rank by XLA's raw total order (+0.0 above -0.0) and break
ties by the lower index.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from eval.registry import impl
from ir.dtypes import from_numpy
from ir.params import as_ints

_MODES = ("CLIP", "FILL_OR_DROP", "PROMISE_IN_BOUNDS")


def _mode(primitive: str, mode) -> str:
    name = str(mode).rsplit(".", 1)[-1]
    if name not in _MODES:
        raise NotImplementedError(f"{primitive}: mode={mode} is not supported by the NumPy evaluator "
                                  f"(supported: {', '.join(_MODES)})")
    return name


def _int64(indices: np.ndarray) -> np.ndarray:
    """Indices as int64; uint64 values past the int64 range saturate, so they stay out of bounds."""
    indices = np.asarray(indices)
    if indices.dtype == np.uint64:
        indices = np.minimum(indices, np.uint64(np.iinfo(np.int64).max))
    return indices.astype(np.int64)


def _clamped_starts(primitive: str, starts, shape, sizes) -> list[int]:
    if len(starts) != len(shape):
        raise NotImplementedError(f"{primitive}: expected {len(shape)} start indices for an operand of shape "
                                  f"{tuple(shape)}, got {len(starts)} (dynamic shapes are not supported)")
    return [min(max(int(s), 0), dim - size) for s, dim, size in zip(starts, shape, sizes, strict=True)]


@impl("slice")
def slice_(operand, *, start_indices, limit_indices, strides=None, **_):
    steps = as_ints(strides) or (1,) * operand.ndim
    index = tuple(slice(s, e, st) for s, e, st in zip(as_ints(start_indices), as_ints(limit_indices), steps,
                                                      strict=True))
    return np.asarray(operand[index])


@impl("dynamic_slice")
def dynamic_slice(operand, *starts, slice_sizes, **_):
    sizes = as_ints(slice_sizes)
    begin = _clamped_starts("dynamic_slice", starts, operand.shape, sizes)
    return np.asarray(operand[tuple(slice(b, b + s) for b, s in zip(begin, sizes, strict=True))])


@impl("dynamic_update_slice")
def dynamic_update_slice(operand, update, *starts, **_):
    begin = _clamped_starts("dynamic_update_slice", starts, operand.shape, update.shape)
    out = operand.copy()
    out[tuple(slice(b, b + s) for b, s in zip(begin, update.shape, strict=True))] = update
    return out


def _slice_starts(starts, start_map, operand_batching_dims, indices_batching_dims, rank) -> np.ndarray:
    """The start of every slice in every operand dimension, shape `batch_shape + (rank,)`.

    `starts` holds the index vectors (last axis, in `start_map` order); an operand batching
    dimension starts at the position of its paired batch dimension of the indices.
    """
    batch_shape = starts.shape[:-1]
    full = np.zeros(batch_shape + (rank,), np.int64)
    full[..., list(start_map)] = starts
    for od, bd in zip(operand_batching_dims, indices_batching_dims, strict=True):
        full[..., od] = _along(np.arange(batch_shape[bd]), bd, len(batch_shape))
    return full


def _along(values: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A 1-D array reshaped to `ndim` dimensions, varying along `axis` only (for broadcasting)."""
    return values.reshape([-1 if i == axis else 1 for i in range(ndim)])


def _window_dims(rank, dropped) -> list[int]:
    """Operand dimensions that a gather slice / scatter window spans, in order."""
    return [d for d in range(rank) if d not in dropped]


def _default_fill(dtype: np.dtype):
    kind = from_numpy(dtype).kind
    if kind in "fc":
        return np.nan
    if kind == "i":
        return np.iinfo(dtype).min
    if kind == "u":
        return np.iinfo(dtype).max
    return True


@impl("gather")
def gather(operand, indices, *, dimension_numbers, slice_sizes, mode, fill_value=None, **_):
    dn = dimension_numbers
    offset_dims, collapsed = as_ints(dn.offset_dims), as_ints(dn.collapsed_slice_dims)
    start_map = as_ints(dn.start_index_map)
    operand_batching = as_ints(dn.get("operand_batching_dims", ()))
    indices_batching = as_ints(dn.get("start_indices_batching_dims", ()))
    sizes, rank, mode = as_ints(slice_sizes), operand.ndim, _mode("gather", mode)

    starts = _int64(indices)
    upper = np.array([operand.shape[d] - sizes[d] for d in start_map], np.int64)
    full = _slice_starts(np.clip(starts, 0, upper), start_map, operand_batching, indices_batching, rank)
    window = _window_dims(rank, set(collapsed) | set(operand_batching))
    out_rank = starts.ndim - 1 + len(offset_dims)
    batch_shape = iter(starts.shape[:-1])
    out_shape = tuple(sizes[window[offset_dims.index(i)]] if i in offset_dims else next(batch_shape)
                      for i in range(out_rank))

    index = []
    for d in range(rank):
        position = np.expand_dims(full[..., d], offset_dims)
        if d in window:
            axis = offset_dims[window.index(d)]
            position = position + _along(np.arange(sizes[d]), axis, out_rank)
        index.append(position)
    out = np.asarray(operand[tuple(index)])
    if out.shape != out_shape:  # a rank-0 operand: every slice is the operand itself
        out = np.broadcast_to(out, out_shape).copy()

    if mode == "FILL_OR_DROP":
        in_bounds = np.all((starts >= 0) & (starts <= upper), axis=-1)
        fill = _default_fill(operand.dtype) if fill_value is None else fill_value
        out = np.where(np.expand_dims(in_bounds, offset_dims), out, np.asarray(fill, operand.dtype))
    return out


def _assign(flat, positions, values):
    flat[positions] = values


def _apply_jaxpr(jaxpr, consts, flat, positions, values):
    """A combiner given as a jaxpr (`scatter_apply`): applied update by update, in order."""
    from eval.interpreter import eval_jaxpr

    for p, v in zip(positions.tolist(), values, strict=True):
        flat[p] = eval_jaxpr(jaxpr, flat[p], v, consts=list(consts) if consts else None)[0]


def _scatter(primitive, combine, operand, indices, updates, *, dimension_numbers, mode,
             update_jaxpr=None, update_consts=(), **_):
    dn = dimension_numbers
    update_window_dims, inserted = as_ints(dn.update_window_dims), as_ints(dn.inserted_window_dims)
    start_map = as_ints(dn.scatter_dims_to_operand_dims)
    operand_batching = as_ints(dn.get("operand_batching_dims", ()))
    indices_batching = as_ints(dn.get("scatter_indices_batching_dims", ()))
    rank, mode = operand.ndim, _mode(primitive, mode)
    if primitive == "scatter" and update_jaxpr is not None:
        combine = partial(_apply_jaxpr, update_jaxpr, update_consts)

    window = _window_dims(rank, set(inserted) | set(operand_batching))
    window_sizes = np.ones(rank, np.int64)
    window_sizes[window] = [updates.shape[u] for u in update_window_dims]
    upper = operand.shape - window_sizes
    starts = _int64(indices)
    if mode == "CLIP":
        starts = np.clip(starts, 0, upper[list(start_map)])
    full = _slice_starts(starts, start_map, operand_batching, indices_batching, rank)

    # Updates as (scatter index..., window...), keeping only windows entirely inside the operand.
    scatter_dims = [d for d in range(updates.ndim) if d not in update_window_dims]
    values = np.transpose(updates, scatter_dims + list(update_window_dims))
    in_bounds = np.all((full >= 0) & (full <= upper), axis=-1)
    full, values = full[in_bounds], values[in_bounds]
    positions = []
    for d in range(rank):
        position = full[:, d].reshape((-1,) + (1,) * len(window))
        if d in window:
            position = position + _along(np.arange(window_sizes[d]), window.index(d) + 1, len(window) + 1)
        positions.append(np.broadcast_to(position, values.shape))

    out = operand.copy()
    if values.size:
        flat = np.ravel_multi_index(positions, operand.shape) if rank else np.zeros(values.shape, np.intp)
        combine(out.reshape(-1), flat.reshape(-1), values.reshape(-1).astype(operand.dtype))
    return out


_SCATTER_COMBINERS = {
    "scatter": _assign,
    "scatter-add": np.add.at,
    "scatter-sub": np.subtract.at,
    "scatter-mul": np.multiply.at,
    "scatter-min": np.minimum.at,
    "scatter-max": np.maximum.at,
}
for _name, _combine in _SCATTER_COMBINERS.items():
    impl(_name)(partial(_scatter, _name, _combine))


def _total_order_bits(x: np.ndarray) -> np.ndarray:
    """Unsigned integers in the IEEE total order of floats: -nan < -inf < ... < -0 < 0 < ... < inf < nan."""
    x = np.array(x, order="C")
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    bits = x.view(unsigned)
    sign = unsigned.type(1 << (8 * x.dtype.itemsize - 1))
    return np.where(bits & sign, ~bits, bits | sign)


def _sort_keys(x: np.ndarray) -> list[np.ndarray]:
    """JAX's sort keys of one operand: floats with ±0 merged and NaNs made +NaN; complex as (re, im)."""
    kind = from_numpy(x.dtype).kind
    if kind == "c":
        return _sort_keys(x.real) + _sort_keys(x.imag)
    if kind == "f":
        wide = x.astype(np.float64)
        x = np.where(wide == 0, np.zeros((), x.dtype), x)
        x = np.where(np.isnan(wide), np.asarray(np.nan, x.dtype), x)
        return [_total_order_bits(x)]
    if kind == "b":
        return [x.astype(np.uint8)]
    return [x]


@impl("sort")
def sort(*operands, dimension, num_keys=1, is_stable=True, **_):
    # An unstable sort may order ties any way; the stable order is one valid answer.
    moved = [np.moveaxis(x, int(dimension), -1) for x in operands]
    keys = [k for x in moved[:int(num_keys)] for k in _sort_keys(x)]
    order = np.lexsort(keys[::-1], axis=-1)
    return tuple(np.ascontiguousarray(np.moveaxis(np.take_along_axis(x, order, -1), -1, int(dimension)))
                 for x in moved)


def _rank_key(primitive: str, x: np.ndarray) -> np.ndarray:
    """Keys ascending in XLA's raw total order (no ±0 / NaN canonicalization)."""
    kind = from_numpy(x.dtype).kind
    if kind == "f":
        return _total_order_bits(x)
    if kind == "b":
        return x.astype(np.uint8)
    if kind in "iu":
        return x
    raise NotImplementedError(f"{primitive}: operands of dtype {x.dtype} are not supported")


def _top(primitive: str, operand, count: int, axis: int, largest: bool):
    """The first `count` entries along `axis` by value (descending if `largest`), ties by lower index."""
    moved = np.moveaxis(operand, axis, -1)
    key = _rank_key(primitive, moved)
    order = np.argsort(np.invert(key) if largest else key, axis=-1, kind="stable")[..., :count]
    values = np.take_along_axis(moved, order, -1)
    return (np.ascontiguousarray(np.moveaxis(values, -1, axis)),
            np.ascontiguousarray(np.moveaxis(order.astype(np.int32), -1, axis)))


@impl("top_k")
def top_k(operand, *, k, axis=-1, **_):
    return _top("top_k", operand, int(k), int(axis), largest=True)


def _approx_top_k_size(n: int, rank: int, k: int, recall_target: float, aggregate_to_topk: bool,
                       size_override: int) -> int:
    """XLA's ApproxTopKReductionOutputSize: how many results approx_top_k returns along its dimension."""
    if aggregate_to_topk:
        return k
    tiling = 1024 if rank == 1 else 128
    if n <= tiling:
        return n
    if 0 <= size_override < n:
        raise ValueError(f"approx_top_k: reduction_input_size_override={size_override} is smaller than the "
                         f"reduction dimension ({n})")
    logical_size = size_override if size_override >= 0 else n
    if k == 1:
        return tiling
    recall = float(np.float32(recall_target))
    if recall == 1.0:
        return n
    if not 0.0 < recall < 1.0:
        raise ValueError(f"approx_top_k: recall_target={recall_target} is not in (0, 1]")
    windows = min(max(int((1.0 - k) / math.log(recall)), tiling), n)
    log2_reduction = max((logical_size // windows).bit_length() - 1, 0)
    if log2_reduction == 0:
        return n
    log2_reduction = min(log2_reduction, max(n // tiling - 1, 0).bit_length())
    return _ceil_div(_ceil_div(n, tiling), 1 << log2_reduction) * tiling


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@impl("approx_top_k")
def approx_top_k(operand, *, k, reduction_dimension=-1, recall_target=0.95, is_max_k=True,
                 reduction_input_size_override=-1, aggregate_to_topk=True, **_):
    # On CPU XLA falls back to an exact sort, cut to the size the TPU algorithm would return.
    axis = int(reduction_dimension) % operand.ndim
    count = _approx_top_k_size(operand.shape[axis], operand.ndim, int(k), float(recall_target),
                               bool(aggregate_to_topk), int(reduction_input_size_override))
    return _top("approx_top_k", operand, count, axis, largest=bool(is_max_k))
