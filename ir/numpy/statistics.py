"""ir.numpy statistics: NaN-ignoring reductions, quantiles, averages, differences, covariance."""

from __future__ import annotations

import math

import numpy as np

from ir import lax
from ir.numpy._base import _canon_axis, _to_inexact, int64, ndim, shape
from ir.numpy.creation import asarray, astype, full_like
from ir.numpy.elementwise import (
    conj,
    divide,
    isnan,
    logical_not,
    multiply,
    not_equal,
    sqrt,
    subtract,
    where,
)
from ir.numpy.manipulation import _tracer_like, broadcast_to, concatenate, moveaxis, ravel, reshape
from ir.numpy.reductions import (
    _reduction_axes,
    all,
    argmax,
    argmin,
    cumprod,
    cumsum,
    max,
    mean,
    min,
    prod,
    sort,
    sum,
)
from ir.tracing import aval_of, literal

__all__ = [
    'average', 'count_nonzero', 'cumulative_sum', 'cumulative_prod', 'diff', 'ediff1d', 'median', 'nanargmax',
    'nanargmin', 'nancumprod', 'nancumsum', 'nanmax', 'nanmean', 'nanmin', 'nanprod', 'nanstd', 'nansum',
    'nanvar', 'percentile', 'quantile', 'nanpercentile', 'nanquantile', 'nanmedian', 'ptp', 'trace', 'trapezoid',
    'cov', 'corrcoef', 'array_equal', 'array_equiv',
]


def _fill_nan(a, value):
    a = _tracer_like(a)
    if not aval_of(a).dtype.is_inexact:
        return a
    return where(isnan(a), literal(value, aval_of(a).dtype, False), a)


def nansum(a, axis=None, dtype=None, keepdims: bool = False):
    return sum(_fill_nan(a, 0), axis, dtype, keepdims)


def nanprod(a, axis=None, dtype=None, keepdims: bool = False):
    return prod(_fill_nan(a, 1), axis, dtype, keepdims)


def nanmax(a, axis=None, keepdims: bool = False):
    a = _tracer_like(a)
    out = max(_fill_nan(a, -np.inf), axis, keepdims)
    return where(all(isnan(a), axis, keepdims), literal(np.nan, aval_of(out).dtype, False), out) \
        if aval_of(a).dtype.is_inexact else out


def nanmin(a, axis=None, keepdims: bool = False):
    a = _tracer_like(a)
    out = min(_fill_nan(a, np.inf), axis, keepdims)
    return where(all(isnan(a), axis, keepdims), literal(np.nan, aval_of(out).dtype, False), out) \
        if aval_of(a).dtype.is_inexact else out


def nanargmax(a, axis=None, keepdims: bool = False):
    return argmax(_fill_nan(a, -np.inf), axis, keepdims)


def nanargmin(a, axis=None, keepdims: bool = False):
    return argmin(_fill_nan(a, np.inf), axis, keepdims)


def nancumsum(a, axis=None, dtype=None):
    return cumsum(_fill_nan(a, 0), axis, dtype)


def nancumprod(a, axis=None, dtype=None):
    return cumprod(_fill_nan(a, 1), axis, dtype)


def count_nonzero(a, axis=None, keepdims: bool = False):
    return sum(not_equal(a, 0), axis, dtype=int64, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, keepdims: bool = False):
    a = _tracer_like(a)
    if not aval_of(a).dtype.is_inexact:
        return mean(a, axis, dtype, keepdims)
    count = sum(logical_not(isnan(a)), axis, dtype=aval_of(a).dtype, keepdims=keepdims)
    return divide(nansum(a, axis, dtype, keepdims), count)


def nanvar(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False):
    a = _tracer_like(a)
    a = astype(a, _to_inexact(aval_of(a).dtype))
    centered = subtract(a, nanmean(a, axis, keepdims=True))
    squared = lax.real(lax.mul(centered, lax.conj(centered))) if aval_of(a).dtype.is_complex else lax.square(centered)
    count = sum(logical_not(isnan(a)), axis, dtype=aval_of(squared).dtype, keepdims=keepdims)
    return divide(nansum(squared, axis, keepdims=keepdims), lax.max(lax.sub(count, literal(
        ddof, aval_of(count).dtype, False)), literal(0, aval_of(count).dtype, False)))


def nanstd(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False):
    return sqrt(nanvar(a, axis, dtype, ddof, keepdims))


def cumulative_sum(x, axis=None, dtype=None, include_initial: bool = False):
    return _cumulative(cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, axis=None, dtype=None, include_initial: bool = False):
    return _cumulative(cumprod, 1, x, axis, dtype, include_initial)


def _cumulative(fn, identity, x, axis, dtype, include_initial):
    x = _tracer_like(x)
    if axis is None:
        if ndim(x) > 1:
            raise ValueError("cumulative_sum/prod need an axis for arrays of rank > 1")
        axis = 0
    out = fn(x, axis, dtype)
    if not include_initial:
        return out
    axis = _canon_axis(axis, ndim(out))
    s = list(shape(out))
    s[axis] = 1
    return concatenate([full_like(out, identity, shape=tuple(s)), out], axis)


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    a = _tracer_like(a)
    axis = _canon_axis(axis, ndim(a))
    parts = []
    for extra in (prepend, a, append):
        if extra is None:
            continue
        extra = asarray(extra)
        if ndim(extra) == 0:
            s = list(shape(a))
            s[axis] = 1
            extra = broadcast_to(extra, tuple(s))
        parts.append(extra)
    a = concatenate(parts, axis) if len(parts) > 1 else a
    bool_input = aval_of(a).dtype.is_bool
    for _ in range(n):
        size = shape(a)[axis]
        hi = lax.slice_in_dim(a, 1, size, axis=axis)
        lo = lax.slice_in_dim(a, 0, size - 1, axis=axis)
        a = not_equal(hi, lo) if bool_input else subtract(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    out = diff(ravel(_tracer_like(ary)))
    parts = [ravel(asarray(to_begin))] if to_begin is not None else []
    parts.append(out)
    if to_end is not None:
        parts.append(ravel(asarray(to_end)))
    return concatenate(parts) if len(parts) > 1 else out


def ptp(a, axis=None, keepdims: bool = False):
    return subtract(max(a, axis, keepdims), min(a, axis, keepdims))


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None):
    from ir.numpy.layout import diagonal
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
    a = _tracer_like(a)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        count = math.prod(shape(a)[i] for i in _reduction_axes(a, axis))
        scale = full_like(avg, count)
    else:
        weights = _tracer_like(weights)
        if shape(weights) != shape(a):
            if axis is None or ndim(weights) != 1:
                raise ValueError("average: 1-D weights need an axis; otherwise weights must match a's shape")
            axis_ = _canon_axis(axis, ndim(a))
            weights = lax.broadcast_in_dim(weights, shape(a), (axis_,))
        scale = sum(weights, axis, keepdims=keepdims)
        avg = divide(sum(multiply(a, weights), axis, keepdims=keepdims), scale)
    return (avg, astype(scale, aval_of(avg).dtype)) if returned else avg


def _quantile(a, q, axis, method: str, keepdims: bool, ignore_nan: bool):
    a = _tracer_like(a)
    dt = _to_inexact(aval_of(a).dtype)
    a = astype(a, dt)
    q = astype(asarray(q), dt)
    all_axes_kept = (1,) * ndim(a) if axis is None else None
    if axis is None:
        a, axis = ravel(a), 0
    axis = _canon_axis(axis, ndim(a))
    n = shape(a)[axis]
    a = moveaxis(a, axis, -1)
    if ignore_nan:
        counts = sum(logical_not(isnan(a)), axis=-1, dtype=dt, keepdims=True)
        a = sort(where(isnan(a), literal(np.inf, dt, False), a), axis=-1)
    else:
        counts = full_like(a, n, shape=shape(a)[:-1] + (1,))
        a = sort(a, axis=-1)
    qs = reshape(q, shape(q) + (1,) * ndim(a))  # q's axes lead, as NumPy's output
    pos = multiply(qs, lax.sub(counts, literal(1, dt, False)))
    lo = lax.floor(pos)
    hi = lax.ceil(pos)
    batch = shape(a)[:-1]

    def pick(index):
        index = lax.clamp(literal(0, int64, False), lax.convert_element_type(index, int64),
                          literal(n - 1, int64, False))
        from ir.numpy.indexing import take_along_axis
        index = broadcast_to(index, shape(q) + batch + (1,))
        arr = broadcast_to(a, shape(q) + shape(a))
        return take_along_axis(arr, index, axis=-1)[..., 0]

    if method == "linear":
        frac = broadcast_to(lax.sub(pos, lo), shape(q) + batch + (1,))[..., 0]
        low, high = pick(lo), pick(hi)
        out = lax.add(low, lax.mul(lax.sub(high, low), frac))
    elif method in ("lower", "higher", "nearest", "midpoint"):
        if method == "nearest":
            out = pick(lax.round(pos, 1))
        elif method == "midpoint":
            out = lax.mul(lax.add(pick(lo), pick(hi)), literal(0.5, dt, False))
        else:
            out = pick(lo if method == "lower" else hi)
    else:
        raise ValueError(f"quantile: unknown method {method!r}")
    if ignore_nan:
        out = where(broadcast_to(lax.eq(counts, literal(0, dt, False)), shape(q) + batch + (1,))[..., 0],
                    literal(np.nan, dt, False), out)
    else:
        has_nan = broadcast_to(reshape(isnan(a)[..., -1], batch), shape(q) + batch)
        out = where(has_nan, literal(np.nan, dt, False), out)
    if keepdims:
        out = reshape(out, shape(q) + all_axes_kept) if all_axes_kept is not None else \
            lax.expand_dims(out, (ndim(q) + axis,))
    return out


def quantile(a, q, axis=None, method: str = "linear", keepdims: bool = False):
    return _quantile(a, q, axis, method, keepdims, ignore_nan=False)


def nanquantile(a, q, axis=None, method: str = "linear", keepdims: bool = False):
    return _quantile(a, q, axis, method, keepdims, ignore_nan=True)


def percentile(a, q, axis=None, method: str = "linear", keepdims: bool = False):
    return quantile(a, divide(q, 100.0), axis, method, keepdims)


def nanpercentile(a, q, axis=None, method: str = "linear", keepdims: bool = False):
    return nanquantile(a, divide(q, 100.0), axis, method, keepdims)


def median(a, axis=None, keepdims: bool = False):
    return quantile(a, 0.5, axis, "midpoint", keepdims)


def nanmedian(a, axis=None, keepdims: bool = False):
    return nanquantile(a, 0.5, axis, "midpoint", keepdims)


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    y = _tracer_like(y)
    axis = _canon_axis(axis, ndim(y))
    n = shape(y)[axis]
    y_lo, y_hi = lax.slice_in_dim(y, 0, n - 1, axis=axis), lax.slice_in_dim(y, 1, n, axis=axis)
    mid = multiply(lax.add(y_lo, y_hi), 0.5)
    if x is None:
        return multiply(sum(mid, axis), dx)
    x = _tracer_like(x)
    dxs = diff(x, axis=-1 if ndim(x) == 1 else axis)
    if ndim(x) == 1 and ndim(y) > 1:
        dxs = lax.broadcast_in_dim(dxs, shape(mid), (axis,))
    return sum(multiply(mid, dxs), axis)


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None, aweights=None):
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights")
    from ir.numpy.manipulation import atleast_2d
    m = atleast_2d(_tracer_like(m))
    if not rowvar and shape(m)[0] != 1:
        m = lax.transpose(m, (1, 0))
    if y is not None:
        y = atleast_2d(_tracer_like(y))
        if not rowvar and shape(y)[0] != 1:
            y = lax.transpose(y, (1, 0))
        m = concatenate([m, y], 0)
    m = astype(m, _to_inexact(aval_of(m).dtype))
    ddof = (0 if bias else 1) if ddof is None else ddof
    n = shape(m)[1]
    centered = subtract(m, mean(m, axis=1, keepdims=True))
    from ir.numpy.contractions import matmul
    c = divide(matmul(centered, conj(lax.transpose(centered, (1, 0)))), float(n - ddof))
    from ir.numpy.manipulation import squeeze
    return squeeze(c)


def corrcoef(x, y=None, rowvar: bool = True):
    c = cov(x, y, rowvar)
    if ndim(c) == 0:
        return divide(c, c)
    from ir.numpy.layout import diagonal
    d = diagonal(c)
    stddev = sqrt(lax.real(d) if aval_of(d).dtype.is_complex else d)
    c = divide(c, stddev[:, None])
    return divide(c, stddev[None, :])


def array_equal(a1, a2, equal_nan: bool = False):
    if shape(a1) != shape(a2):
        return asarray(False)
    eq = lax.eq(*_promoted(a1, a2))
    if equal_nan:
        eq = eq | (isnan(a1) & isnan(a2))
    return all(eq)


def _promoted(a, b):
    from ir.numpy._base import promote_dtypes
    return [_tracer_like(x) for x in promote_dtypes(a, b)]


def array_equiv(a1, a2):
    from ir.numpy._base import broadcast_shapes
    try:
        broadcast_shapes(shape(a1), shape(a2))
    except ValueError:
        return asarray(False)
    from ir.numpy.elementwise import equal
    return all(equal(a1, a2))
