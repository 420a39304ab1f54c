"""ir.numpy indexing: `x[idx]` as JAX's `rewriting_take`, and `x.at[idx]` updates.

Basic indices (ints, slices, None, Ellipsis, traced integer scalars) become slice / dynamic_slice
equations. With an integer-array index (a list, NumPy integer array or traced integer array; NumPy
boolean masks become their `nonzero`), the basic part is applied first and the rest is one `gather`
as JAX lowers it: every index normalized (`select_n(i < 0, i, i + n)`), broadcast together, given a
trailing axis and concatenated; the broadcast dimensions go where the first advanced index was if
the advanced indices are adjacent, else in front (NumPy's rule). `x.at[idx].set/add/mul/min/max`
is the matching `scatter` with mode FILL_OR_DROP (out-of-bounds updates are dropped, as in JAX).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import numpy as np

from ir import dtypes as _dt
from ir import lax
from ir.numpy._base import _convert, _python_abs, _python_max, _python_min, _python_sum, int32, shape
from ir.numpy.manipulation import _tracer_like
from ir.tracing import Tracer

__all__ = [
    'getitem', 'take', 'take_along_axis', 'put_along_axis', 'IndexUpdateHelper',
]


def _is_int_index(i) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _expand_ellipsis(idx: tuple, nd: int) -> tuple:
    consumed = _python_sum(1 for i in idx if i is not None and i is not Ellipsis)
    if consumed > nd:
        raise IndexError(f"too many indices: a {nd}-dimensional array indexed with {consumed}")
    n_ell = _python_sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    fill = (slice(None),) * (nd - consumed)
    if n_ell:
        k = next(k for k, i in enumerate(idx) if i is Ellipsis)
        return idx[:k] + fill + idx[k + 1:]
    return idx + fill


def getitem(arr, idx):
    """`arr[idx]` for ints, slices (any step), None and Ellipsis (static slice), and traced
    integer scalars (dynamic slice), as JAX's `rewriting_take`."""
    arr = _tracer_like(arr)
    idx = idx if isinstance(idx, tuple) else (idx,)
    if builtins.any(_is_array_index(i) for i in idx):
        return _advanced_getitem(arr, idx)
    for i in idx:
        if isinstance(i, (bool, np.bool_)):
            raise NotImplementedError("boolean scalar indexing is not supported")
        if isinstance(i, Tracer) and not i.dtype.is_integer:
            raise TypeError(f"indexer must be an integer, got a traced {i.aval}")
    s = shape(arr)
    idx = _expand_ellipsis(idx, len(s))
    if builtins.any(isinstance(i, Tracer) for i in idx):
        return _dynamic_getitem(arr, idx, s)
    starts, limits, strides, rev_axes, squeeze_axes, newaxis = [], [], [], [], [], []
    axis = 0
    for i in idx:
        if i is None:
            newaxis.append(len(starts) - len(squeeze_axes) + len(newaxis))
            continue
        size_ = s[axis]
        if _is_int_index(i):
            if not -size_ <= i < size_:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size_}")
            start = int(i) % size_
            starts.append(start)
            limits.append(start + 1)
            strides.append(1)
            squeeze_axes.append(axis)
        elif isinstance(i, slice):
            start, stop, step = i.indices(size_)
            if step < 0:
                new_start = _python_min(size_, stop + 1 + _python_abs(start - stop - 1) % -step)
                starts.append(new_start)
                limits.append(_python_max(new_start, start + 1))
                strides.append(-step)
                rev_axes.append(axis)
            else:
                starts.append(start)
                limits.append(_python_max(start, stop))
                strides.append(step)
        else:
            raise TypeError(f"unsupported index {i!r} of type {type(i).__name__}")
        axis += 1
    result = arr
    trivial = builtins.all(st == 1 for st in strides) and builtins.all(
        (a, b) == (0, d) for a, b, d in zip(starts, limits, s, strict=True))
    if not trivial:
        result = lax.slice(arr, starts, limits, None if builtins.all(st == 1 for st in strides) else strides)
    return _reverse_squeeze_expand(result, rev_axes, squeeze_axes, newaxis)


def _reverse_squeeze_expand(result, rev_axes, squeeze_axes, newaxis):
    """A sliced result with its negative-step axes reversed, its integer-indexed axes dropped and its `None`
    axes added, in that order (as JAX's `_rewriting_take` does)."""
    if rev_axes:
        result = lax.rev(result, rev_axes)
    if squeeze_axes:
        result = lax.squeeze(result, squeeze_axes)
    if newaxis:
        result = lax.expand_dims(result, newaxis)
    return result


def _dynamic_getitem(arr, idx: tuple, s: tuple[int, ...]):
    starts, sizes, rev_axes, squeeze_axes, newaxis = [], [], [], [], []
    axis = 0
    for i in idx:
        if i is None:
            newaxis.append(len(starts) - len(squeeze_axes) + len(newaxis))
            continue
        if _is_int_index(i) or isinstance(i, Tracer):
            starts.append(i)
            sizes.append(1)
            squeeze_axes.append(axis)
        elif isinstance(i, slice):
            start, stop, step = i.indices(s[axis])
            if step not in (1, -1):
                raise NotImplementedError("a traced index combined with a strided slice (step not ±1)")
            if step < 0:
                new_start = stop + 1
                starts.append(new_start)
                sizes.append(_python_max(0, start + 1 - new_start))
                rev_axes.append(axis)
            else:
                starts.append(start)
                sizes.append(_python_max(0, stop - start))
        else:
            raise TypeError(f"unsupported index {i!r} of type {type(i).__name__}")
        axis += 1
    if len(starts) > 1:
        starts = [_convert(i, int32) if not isinstance(i, Tracer) else lax.convert_element_type(i, int32)
                  for i in starts]
    result = lax.dynamic_slice(arr, starts, sizes)
    return _reverse_squeeze_expand(result, rev_axes, squeeze_axes, newaxis)


# --- integer-array indices: gather and scatter ------------------------------------------------------

def _is_array_index(i) -> bool:
    return isinstance(i, (list, np.ndarray)) or (isinstance(i, Tracer) and i.ndim > 0)


def _array_index(i):
    """An advanced index as an integer array (a tracer, or NumPy for constants); masks become `nonzero`."""
    if isinstance(i, Tracer):
        if i.dtype.is_bool:
            raise NotImplementedError("indexing with a traced boolean mask has a data-dependent shape; "
                                      "use ir.numpy.where")
        if not i.dtype.is_integer:
            raise TypeError(f"indexer must be an integer array, got a traced {i.aval}")
        return i
    arr = np.asarray(i)
    if arr.dtype == np.bool_:
        raise NotImplementedError("boolean masks are expanded with nonzero by the caller")
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"indexer must be an integer array, got dtype {arr.dtype}")
    return arr


def _expand_masks(idx: tuple) -> tuple:
    out = []
    for i in idx:
        arr = np.asarray(i) if isinstance(i, (list, np.ndarray)) else None
        if arr is not None and arr.dtype == np.bool_:
            out.extend(np.nonzero(arr))
        else:
            out.append(i)
    return tuple(out)


def _normalize(i, size_: int):
    """A negative index counts from the end: `select_n(i < 0, i, i + n)`, as JAX's `_normalize_index`."""
    if not isinstance(i, Tracer):
        from ir.numpy.creation import asarray
        i = asarray(np.asarray(i))
    dt = i.dtype
    return lax.select(lax.lt(i, lax_literal(0, dt)), lax.add(i, lax_literal(size_, dt)), i)


def lax_literal(value, dtype):
    from ir.tracing import literal
    return literal(value, dtype, False)


def _advanced_getitem(arr, idx: tuple):
    idx = _expand_ellipsis(_expand_masks(idx), len(shape(arr)))
    # Ints join the advanced indices (NumPy's rule); the basic part (slices, None) is applied first, after
    # which every entry of `idx` stands for one axis.
    is_advanced = [i is not None and not isinstance(i, slice) for i in idx]
    basic = tuple(slice(None) if adv else i for i, adv in zip(idx, is_advanced, strict=True))
    if builtins.any(i != slice(None) for i in basic):
        arr = getitem(arr, basic)
    advanced = [(_array_index(i) if _is_array_index(i) else i) if adv else None
                for i, adv in zip(idx, is_advanced, strict=True)]
    positions = [k for k, adv in enumerate(is_advanced) if adv]
    return _gather(arr, advanced, positions, mode=None)


@dataclass(frozen=True)
class _Window:
    """A step-1 slice `start:start + size` of an `.at[]` index: a window of the scatter, as in JAX."""
    start: int
    size: int


def _plan(arr_shape, advanced: list, positions: list[int]):
    """Indices array and dimension numbers for `advanced` (per operand axis: an index array, None for a
    full slice, or a `_Window`); `positions` are the places of the index arrays in the written index (for
    NumPy's adjacency rule)."""
    axes = [d for d, i in enumerate(advanced) if i is not None and not isinstance(i, _Window)]
    windows = [d for d, i in enumerate(advanced) if isinstance(i, _Window)]
    if not axes and not windows:
        return None
    from ir.numpy._base import promote_dtypes
    from ir.numpy.manipulation import broadcast_arrays
    normalized = [_normalize(advanced[d], arr_shape[d]) for d in axes]
    normalized = broadcast_arrays(*promote_dtypes(*normalized)) if len(normalized) > 1 else normalized
    batch = shape(normalized[0]) if normalized else ()
    index_dtype = normalized[0].dtype if normalized else _dt.int64
    starts = [lax.full(batch, advanced[d].start, index_dtype) for d in windows]
    columns = [lax.broadcast_in_dim(i, batch + (1,), tuple(range(len(batch)))) for i in normalized + starts]
    indices = columns[0] if len(columns) == 1 else lax.concatenate(columns, len(batch))
    window_axes = [d for d in range(len(arr_shape)) if d not in axes]
    adjacent = bool(positions) and positions == list(range(positions[0], positions[0] + len(positions)))
    first = _python_sum(1 for d in window_axes if d < axes[0]) if axes and adjacent else 0
    offset_dims = tuple(k if k < first else k + len(batch) for k in range(len(window_axes)))

    def size_of(d):
        entry = advanced[d]
        return 1 if d in axes else entry.size if isinstance(entry, _Window) else arr_shape[d]

    slice_sizes = tuple(size_of(d) for d in range(len(arr_shape)))
    out_shape = tuple(size_of(d) for d in window_axes)
    out_shape = out_shape[:first] + batch + out_shape[first:]
    return indices, axes + windows, offset_dims, slice_sizes, out_shape


def _collapsed(advanced: list) -> tuple[int, ...]:
    return tuple(d for d, i in enumerate(advanced) if i is not None and not isinstance(i, _Window))


def _gather(arr, advanced: list, positions: list[int], mode, fill_value=None):
    indices, axes, offset_dims, slice_sizes, _ = _plan(shape(arr), advanced, positions)
    dnums = lax.GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=_collapsed(advanced),
                                       start_index_map=tuple(axes))
    return lax.gather(arr, indices, dnums, slice_sizes,
                      mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode,
                      fill_value=fill_value)


def take(a, indices, axis: int | None = None, mode=None, fill_value=None):
    """`take` as JAX: out-of-bounds indices give NaN (mode 'fill') unless `mode='clip'`."""
    a = _tracer_like(a)
    if axis is None:
        from ir.numpy.manipulation import ravel
        a, axis = ravel(a), 0
    nd = len(shape(a))
    axis = axis % nd
    advanced = [None] * nd
    advanced[axis] = _array_index(indices) if _is_array_index(indices) else np.asarray(indices)
    mode = lax.GatherScatterMode.from_any("fill" if mode is None else mode)
    if fill_value is None and mode == lax.GatherScatterMode.FILL_OR_DROP:
        fill_value = np.nan if a.dtype.is_inexact else None
    return _gather(a, advanced, [axis], mode, fill_value)


def take_along_axis(arr, indices, axis: int | None, mode=None, fill_value=None):
    arr = _tracer_like(arr)
    if axis is None:
        from ir.numpy.manipulation import ravel
        arr, indices, axis = ravel(arr), ravel(_tracer_like(indices)), 0
    nd = len(shape(arr))
    axis = axis % nd
    indices = _tracer_like(indices)
    advanced = _along_axis_indices(shape(arr), indices, axis)
    mode = lax.GatherScatterMode.from_any("fill" if mode is None else mode)
    if fill_value is None and mode == lax.GatherScatterMode.FILL_OR_DROP:
        fill_value = np.nan if arr.dtype.is_inexact else None
    return _gather(arr, advanced, list(range(nd)), mode, fill_value)


def _along_axis_indices(arr_shape, indices, axis: int) -> list:
    """One index array per axis: `indices` on `axis`, iotas elsewhere, all of the broadcast shape."""
    from ir.numpy._base import broadcast_shapes
    from ir.numpy.manipulation import broadcast_to
    ishape = shape(indices)
    if len(ishape) != len(arr_shape):
        raise ValueError(f"indices of rank {len(ishape)} for an array of rank {len(arr_shape)}")
    out = broadcast_shapes(tuple(1 if d == axis else n for d, n in enumerate(arr_shape)), ishape)
    return [broadcast_to(indices, out) if d == axis else lax.broadcasted_iota(indices.dtype, out, d)
            for d in range(len(arr_shape))]


def put_along_axis(arr, indices, values, axis: int | None, inplace: bool = True, mode=None):
    if inplace:
        raise ValueError("ir.numpy arrays are immutable: call put_along_axis(..., inplace=False)")
    arr = _tracer_like(arr)
    nd = len(shape(arr))
    axis = axis % nd
    advanced = _along_axis_indices(shape(arr), _tracer_like(indices), axis)
    return _scatter("set", arr, advanced, list(range(nd)), values, mode)


# --- x.at[idx] ---------------------------------------------------------------------------------------

_SCATTERS = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul, "min": lax.scatter_min,
             "max": lax.scatter_max}


def _at_plan(arr, idx):
    """The advanced entries (one per axis) and their index positions for an `.at[idx]` index: ints, traced
    integer scalars, integer arrays and step-1 slices."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    idx = _expand_ellipsis(_expand_masks(idx), len(shape(arr)))
    advanced, positions = [], []
    for k, i in enumerate(idx):
        if i is None:
            raise NotImplementedError("None (newaxis) in an .at[] index")
        if isinstance(i, slice):
            start, stop, step = i.indices(shape(arr)[len(advanced)])
            if step != 1:
                raise NotImplementedError(f".at[] with a strided slice {i}; index with an integer array "
                                          "(ir.numpy.arange) instead")
            full = (start, stop) == (0, shape(arr)[len(advanced)])
            advanced.append(None if full else _Window(start, _python_max(0, stop - start)))
        elif _is_array_index(i):
            advanced.append(_array_index(i))
            positions.append(k)
        elif _is_int_index(i) or (isinstance(i, Tracer) and i.ndim == 0):
            if isinstance(i, Tracer) and not i.dtype.is_integer:
                raise TypeError(f"indexer must be an integer, got a traced {i.aval}")
            advanced.append(np.asarray(i, np.int64) if not isinstance(i, Tracer) else i)
            positions.append(k)
        else:
            raise TypeError(f"unsupported .at[] index {i!r} of type {type(i).__name__}")
    return advanced, positions


def _scatter(kind: str, arr, advanced, positions, values, mode):
    from ir.numpy._base import _convert
    from ir.numpy.manipulation import broadcast_to
    plan = _plan(shape(arr), advanced, positions)
    values = _tracer_like(_convert(values, arr.dtype)) if not isinstance(values, Tracer) else values
    if values.dtype != arr.dtype:
        values = lax.convert_element_type(values, arr.dtype)
    if plan is None:  # every axis a full slice: the update applies to the whole array
        values = broadcast_to(values, shape(arr))
        return values if kind == "set" else {"add": lax.add, "mul": lax.mul, "min": lax.min,
                                              "max": lax.max}[kind](arr, values)
    indices, axes, offset_dims, _, out_shape = plan
    dnums = lax.ScatterDimensionNumbers(update_window_dims=offset_dims, inserted_window_dims=_collapsed(advanced),
                                        scatter_dims_to_operand_dims=tuple(axes))
    return _SCATTERS[kind](arr, indices, broadcast_to(values, out_shape), dnums,
                           mode=lax.GatherScatterMode.from_any("fill" if mode is None else mode))


class _IndexedUpdate:
    def __init__(self, arr, idx):
        self.arr, self.idx = arr, idx

    def get(self, mode=None, fill_value=None):
        if mode is None and fill_value is None:
            return getitem(self.arr, self.idx)
        advanced, positions = _at_plan(self.arr, self.idx)
        return _gather(self.arr, advanced, positions, lax.GatherScatterMode.from_any(mode), fill_value)

    def _update(self, kind, values, mode):
        advanced, positions = _at_plan(self.arr, self.idx)
        return _scatter(kind, self.arr, advanced, positions, values, mode)

    def set(self, values, mode=None):  # noqa: A003
        return self._update("set", values, mode)

    def add(self, values, mode=None):
        return self._update("add", values, mode)

    def subtract(self, values, mode=None):
        from ir.numpy.elementwise import negative
        return self._update("add", negative(values), mode)

    def multiply(self, values, mode=None):
        return self._update("mul", values, mode)

    mul = multiply

    def divide(self, values, mode=None):
        from ir.numpy.elementwise import reciprocal
        return self._update("mul", reciprocal(values), mode)

    def power(self, values, mode=None):
        from ir.numpy.elementwise import power
        return self.set(power(self.get(), values), mode)

    def min(self, values, mode=None):  # noqa: A003
        return self._update("min", values, mode)

    def max(self, values, mode=None):  # noqa: A003
        return self._update("max", values, mode)


class IndexUpdateHelper:
    """`x.at`: `x.at[idx].set(v)` and friends return updated copies, as `jax.Array.at`."""

    def __init__(self, arr):
        self.arr = arr

    def __getitem__(self, idx):
        return _IndexedUpdate(self.arr, idx)
