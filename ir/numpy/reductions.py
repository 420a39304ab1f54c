"""ir.numpy reductions: sums, extrema, statistics, arg-reductions, cumulative ops, sorting."""

from __future__ import annotations

import math

import numpy as np

from ir import dtypes as _dt
from ir import lax
from ir.lax import to_dtype
from ir.numpy._base import (
    _canon_axis,
    _convert,
    _to_inexact,
    bfloat16,
    float16,
    float32,
    int64,
    ndim,
    shape,
    uint64,
)
from ir.numpy.creation import astype
from ir.numpy.elementwise import not_equal, sqrt
from ir.numpy.manipulation import _tracer_like, ravel, reshape
from ir.tracing import Tracer, aval_of, literal

__all__ = [
    'sum', 'prod', 'max', 'min', 'amax', 'amin', 'all', 'any', 'mean', 'var', 'std', 'argmax', 'argmin',
    'cumsum', 'cumprod', 'sort', 'argsort',
]

def _reduction_axes(a, axis) -> tuple[int, ...]:
    nd = ndim(a)
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(_canon_axis(int(x), nd) for x in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate axis in reduction: {axis}")
    return out


def _upcast_f16(dt: _dt.DType) -> _dt.DType:
    return float32 if dt in (float16, bfloat16) else dt


def _promote_integer(dt: _dt.DType) -> _dt.DType:
    if dt.is_bool:
        return int64
    if dt.kind == "u" and dt.bits < 64:
        return uint64
    if dt.kind == "i" and dt.bits < 64:
        return int64
    return dt


def _keepdims(result, axes, keepdims: bool):
    return lax.expand_dims(result, axes) if keepdims and axes else result


def _sum_like(lax_reduce, bool_reduce, a, axis, dtype, keepdims):
    a = _tracer_like(a)
    axes = _reduction_axes(a, axis)
    in_dt = aval_of(a).dtype
    result_dt = _promote_integer(in_dt) if dtype is None else to_dtype(dtype)
    comp_dt = _upcast_f16(result_dt) if result_dt.is_inexact else result_dt
    a = lax.convert_element_type(a, comp_dt) if isinstance(a, Tracer) else _convert(a, comp_dt)
    out = (bool_reduce if comp_dt.is_bool else lax_reduce)(a, axes)
    out = _keepdims(out, axes, keepdims)
    return lax.convert_element_type(out, result_dt)


def sum(a, axis=None, dtype=None, keepdims: bool = False):  # noqa: A001
    return _sum_like(lax.reduce_sum, lax.reduce_or, a, axis, dtype, keepdims)


def prod(a, axis=None, dtype=None, keepdims: bool = False):
    return _sum_like(lax.reduce_prod, lax.reduce_and, a, axis, dtype, keepdims)


def _max_like(lax_reduce, bool_reduce, a, axis, keepdims):
    a = _tracer_like(a)
    axes = _reduction_axes(a, axis)
    if 0 in [shape(a)[i] for i in axes]:
        raise ValueError("zero-size array to reduction operation which has no identity")
    out = (bool_reduce if aval_of(a).dtype.is_bool else lax_reduce)(a, axes)
    return _keepdims(out, axes, keepdims)


def max(a, axis=None, keepdims: bool = False):  # noqa: A001
    return _max_like(lax.reduce_max, lax.reduce_or, a, axis, keepdims)


def min(a, axis=None, keepdims: bool = False):  # noqa: A001
    return _max_like(lax.reduce_min, lax.reduce_and, a, axis, keepdims)


amax, amin = max, min


def all(a, axis=None, keepdims: bool = False):  # noqa: A001
    a = _tracer_like(a)
    a = a if aval_of(a).dtype.is_bool else not_equal(a, 0)
    axes = _reduction_axes(a, axis)
    return _keepdims(lax.reduce_and(a, axes), axes, keepdims)


def any(a, axis=None, keepdims: bool = False):  # noqa: A001
    a = _tracer_like(a)
    a = a if aval_of(a).dtype.is_bool else not_equal(a, 0)
    axes = _reduction_axes(a, axis)
    return _keepdims(lax.reduce_or(a, axes), axes, keepdims)


def mean(a, axis=None, dtype=None, keepdims: bool = False):
    """`reduce_sum` then `div` by the element count as a literal, as in JAX."""
    a = _tracer_like(a)
    axes = _reduction_axes(a, axis)
    result_dt = _to_inexact(aval_of(a).dtype) if dtype is None else to_dtype(dtype)
    comp_dt = _upcast_f16(result_dt) if result_dt.is_inexact else result_dt
    count = math.prod(shape(a)[i] for i in axes)
    total = sum(a, axis, dtype=comp_dt, keepdims=keepdims)
    return astype(lax.div(total, literal(count, comp_dt, False)), result_dt)


def var(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False):
    a = _tracer_like(a)
    axes = _reduction_axes(a, axis)
    dt = _to_inexact(aval_of(a).dtype) if dtype is None else to_dtype(dtype)
    a = astype(a, dt)
    centered = lax.sub(a, mean(a, axis, keepdims=True))
    if dt.is_complex:
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        centered = lax.square(centered)
    count = math.prod(shape(a)[i] for i in axes) - ddof
    out_dt = aval_of(centered).dtype
    return lax.div(sum(centered, axis, keepdims=keepdims), literal(float(count) if count > 0 else np.nan,
                                                                   out_dt, False))


def std(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False):
    return sqrt(var(a, axis, dtype, ddof, keepdims))


def _arg_reduce(lax_fn, a, axis, keepdims):
    a = _tracer_like(a)
    if axis is None:
        out = lax_fn(ravel(a), 0, int64)
        return reshape(out, (1,) * ndim(a)) if keepdims else out
    axis = _canon_axis(int(axis), ndim(a))
    if shape(a)[axis] == 0:
        raise ValueError("attempt to get argmax/argmin of an empty sequence")
    out = lax_fn(a, axis, int64)
    return _keepdims(out, (axis,), keepdims)


def argmax(a, axis=None, keepdims: bool = False):
    return _arg_reduce(lax.argmax, a, axis, keepdims)


def argmin(a, axis=None, keepdims: bool = False):
    return _arg_reduce(lax.argmin, a, axis, keepdims)


def _cumulative(lax_fn, promote: bool, a, axis, dtype):
    a = _tracer_like(a)
    if axis is None or ndim(a) == 0:
        a, axis = ravel(a), 0
    axis = _canon_axis(int(axis), ndim(a))
    dt = aval_of(a).dtype
    target = to_dtype(dtype) if dtype is not None else (_promote_integer(dt) if promote else dt)
    a = astype(a, target)
    return lax_fn(a, axis)


def cumsum(a, axis=None, dtype=None):
    return _cumulative(lax.cumsum, True, a, axis, dtype)


def cumprod(a, axis=None, dtype=None):
    return _cumulative(lax.cumprod, True, a, axis, dtype)


def sort(a, axis: int | None = -1):
    a = _tracer_like(a)
    if axis is None:
        a, axis = ravel(a), 0
    return lax.sort(a, _canon_axis(axis, ndim(a)))


def argsort(a, axis: int | None = -1):
    a = _tracer_like(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _canon_axis(axis, ndim(a))
    iota = lax.broadcasted_iota(int64, shape(a), axis)
    return lax.sort((a, iota), axis, True, 1)[1]
