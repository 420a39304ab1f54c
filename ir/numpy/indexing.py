"""ir.numpy indexing: `x[idx]` as JAX's `rewriting_take`."""

from __future__ import annotations

import builtins

import numpy as np

from ir import lax
from ir.numpy._base import _convert, _python_abs, _python_max, _python_min, _python_sum, int32, shape
from ir.numpy.manipulation import _tracer_like
from ir.tracing import Tracer

__all__ = [
    'getitem',
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
    for i in idx:
        if isinstance(i, (list, np.ndarray)) or (isinstance(i, Tracer) and i.ndim > 0):
            raise NotImplementedError("integer-array (advanced) and boolean-mask indexing are not supported; "
                                      "use lax.gather")
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
    if rev_axes:
        result = lax.rev(result, rev_axes)
    if squeeze_axes:
        result = lax.squeeze(result, squeeze_axes)
    if newaxis:
        result = lax.expand_dims(result, newaxis)
    return result
