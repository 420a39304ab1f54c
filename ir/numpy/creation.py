"""ir.numpy array constructors: asarray, full/zeros/ones, arange, eye, tri, linspace."""

from __future__ import annotations

import builtins

import numpy as np

from ir import lax
from ir.core import Literal
from ir.lax import to_dtype
from ir.numpy._base import _as_traced, _convert, _is_python_scalar, bool_, float64, int64, result_type, shape
from ir.tracing import Tracer, aval_of, const_tracer, literal

__all__ = [
    'asarray', 'array', 'astype', 'full', 'zeros', 'ones', 'full_like', 'zeros_like', 'ones_like', 'arange',
    'eye', 'identity', 'tri', 'tril', 'triu', 'linspace',
]

def asarray(a, dtype=None):
    """An array of the current trace: tracers pass through (converted if `dtype` differs);
    Python scalars become weak literals, NumPy data constants (as `jnp.asarray` under a trace)."""
    if isinstance(a, Tracer):
        return a if dtype is None else astype(a, dtype)
    if isinstance(a, (list, tuple)) and builtins.any(isinstance(x, Tracer) for x in a):
        from ir.numpy.manipulation import stack
        out = stack([asarray(x) for x in a])
        return out if dtype is None else astype(out, dtype)
    if isinstance(a, Literal) or _is_python_scalar(a) or isinstance(a, np.generic):
        lit = literal(a) if dtype is None else literal(a, to_dtype(dtype), False)
        return const_tracer(lit)
    arr = np.asarray(a)
    if dtype is not None:
        arr = arr.astype(to_dtype(dtype).numpy)
    return const_tracer(arr) if arr.ndim > 0 else const_tracer(literal(arr[()]))


array = asarray


def astype(x, dtype):
    dt = to_dtype(dtype)
    if isinstance(x, Tracer):
        return lax.convert_element_type(x, dt, False)
    return _as_traced(_convert(x, dt))


def full(shape, fill_value, dtype=None):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if dtype is None and not isinstance(fill_value, Tracer):
        dtype = aval_of(fill_value).dtype
    return _as_traced(lax.full(shape, fill_value, dtype))


def zeros(shape, dtype=None):
    return full(shape, 0, float64 if dtype is None else dtype)


def ones(shape, dtype=None):
    return full(shape, 1, float64 if dtype is None else dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    return _as_traced(lax.full_like(a, fill_value, dtype, shape))


def zeros_like(a, dtype=None, shape=None):
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return full_like(a, 1, dtype, shape)


def arange(start, stop=None, step=None, dtype=None):
    """`arange(n)` (and `arange(0, n)`) is an `iota`; other ranges are NumPy constants."""
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            raise TypeError("arange needs static (Python) bounds; the result shape would be traced")
    if dtype is None:
        dtype = result_type(*(v for v in (start, stop, step) if v is not None))
    dt = to_dtype(dtype)
    if step is None and (stop is None or start == 0):
        n = start if stop is None else stop
        return lax.iota(dt, int(np.ceil(n)))
    return const_tracer(np.arange(start, stop, step, dtype=dt.numpy))


def eye(N: int, M: int | None = None, k: int = 0, dtype=None):
    dt = float64 if dtype is None else to_dtype(dtype)
    shape_ = (N, N if M is None else M)
    rows, cols = lax.broadcasted_iota(int64, shape_, 0), lax.broadcasted_iota(int64, shape_, 1)
    mask = lax.eq(lax.add(rows, literal(k, int64, False)), cols)
    return lax.convert_element_type(mask, dt, False) if dt != bool_ else mask


def identity(n: int, dtype=None):
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype=None):
    shape_ = (N, N if M is None else M)
    rows = lax.add(lax.broadcasted_iota(int64, shape_, 0), literal(k, int64, False))
    mask = lax.ge(rows, lax.broadcasted_iota(int64, shape_, 1))
    dt = float64 if dtype is None else to_dtype(dtype)
    return mask if dt == bool_ else lax.convert_element_type(mask, dt, False)


def tril(m, k: int = 0):
    s = shape(m)
    mask = tri(s[-2], s[-1], k=k, dtype=bool_)
    return lax.select(lax.broadcast_in_dim(mask, s, (len(s) - 2, len(s) - 1)) if len(s) > 2 else mask,
                      m, zeros_like(m))


def triu(m, k: int = 0):
    s = shape(m)
    mask = tri(s[-2], s[-1], k=k - 1, dtype=bool_)
    return lax.select(lax.broadcast_in_dim(mask, s, (len(s) - 2, len(s) - 1)) if len(s) > 2 else mask,
                      zeros_like(m), m)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None):
    if isinstance(start, Tracer) or isinstance(stop, Tracer):
        raise NotImplementedError("linspace with traced bounds")
    dt = None if dtype is None else to_dtype(dtype).numpy
    return const_tracer(np.linspace(start, stop, num, endpoint=endpoint, dtype=dt))
