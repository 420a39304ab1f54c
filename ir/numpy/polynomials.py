"""ir.numpy products, convolutions, polynomials and window functions."""

from __future__ import annotations

import numpy as np

from ir import lax
from ir.numpy._base import _promote_args, float64, ndim, shape
from ir.numpy.contractions import matmul
from ir.numpy.creation import asarray, zeros
from ir.numpy.elementwise import multiply, subtract
from ir.numpy.manipulation import _tracer_like, concatenate, flip, moveaxis, ravel, reshape, stack
from ir.numpy.reductions import sum
from ir.numpy.ufuncs import i0
from ir.tracing import literal

__all__ = [
    'kron', 'cross', 'vecdot', 'matvec', 'vecmat', 'convolve', 'correlate', 'polyval', 'polyadd', 'polysub',
    'polymul', 'polyder', 'polyint', 'polyfit', 'poly', 'bartlett', 'blackman', 'hamming', 'hanning', 'kaiser',
]


def kron(a, b):
    a, b = _promote_args("kron", a, b)
    nd = max(ndim(a), ndim(b))
    a = reshape(a, (1,) * (nd - ndim(a)) + shape(a))
    b = reshape(b, (1,) * (nd - ndim(b)) + shape(b))
    a_ = reshape(a, tuple(d for n in shape(a) for d in (n, 1)))
    b_ = reshape(b, tuple(d for n in shape(b) for d in (1, n)))
    return reshape(multiply(a_, b_), tuple(m * n for m, n in zip(shape(a), shape(b), strict=True)))


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _promote_args("cross", moveaxis(_tracer_like(a), axisa, -1), moveaxis(_tracer_like(b), axisb, -1))
    if shape(a)[-1] == 2:
        a = concatenate([a, zeros(shape(a)[:-1] + (1,), a.dtype)], -1)
    if shape(b)[-1] == 2:
        b = concatenate([b, zeros(shape(b)[:-1] + (1,), b.dtype)], -1)
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    c = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)
    return moveaxis(c, -1, axisc)


def vecdot(x1, x2, /, *, axis: int = -1):
    x1, x2 = _promote_args("vecdot", x1, x2)
    x1 = lax.conj(x1) if x1.dtype.is_complex else x1
    return sum(multiply(x1, x2), axis=axis)


def matvec(x1, x2, /):
    return matmul(x1, _tracer_like(x2)[..., None])[..., 0]


def vecmat(x1, x2, /):
    x1 = _tracer_like(x1)
    x1 = lax.conj(x1) if x1.dtype.is_complex else x1
    return matmul(x1[..., None, :], x2)[..., 0, :]


def _correlate_full(a, v):
    """Full cross-correlation of 1-D arrays as a conv_general_dilated, as JAX."""
    n, m = shape(a)[0], shape(v)[0]
    lhs = reshape(a, (1, 1, n))
    rhs = reshape(v, (1, 1, m))
    out = lax.conv_general_dilated(lhs, rhs, (1,), [(m - 1, m - 1)])
    return reshape(out, (n + m - 1,))


def _trim(full, n: int, m: int, mode: str):
    if mode == "full":
        return full
    if mode == "same":
        size, start = max(n, m), (min(n, m) - 1) // 2
        return lax.slice_in_dim(full, start, start + size)
    if mode == "valid":
        size = max(n, m) - min(n, m) + 1
        start = min(n, m) - 1
        return lax.slice_in_dim(full, start, start + size)
    raise ValueError(f"unknown mode {mode!r}")


def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
    a, v = _promote_args("correlate", a, v, kind="inexact")
    if ndim(a) != 1 or ndim(v) != 1:
        raise ValueError("correlate: only 1-D inputs")
    n, m = shape(a)[0], shape(v)[0]
    v = lax.conj(v) if v.dtype.is_complex else v
    if n < m:
        full = flip(_correlate_full(v, a))
    else:
        full = _correlate_full(a, v)
    return _trim(full, n, m, mode)


def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    a, v = _promote_args("convolve", a, v, kind="inexact")
    if ndim(a) != 1 or ndim(v) != 1:
        raise ValueError("convolve: only 1-D inputs")
    n, m = shape(a)[0], shape(v)[0]
    if n < m:
        a, v = v, a
    full = _correlate_full(a, flip(v))
    return _trim(full, n, m, mode)


def polyval(p, x):
    p, x = _promote_args("polyval", p, x)
    y = lax.full_like(x, 0)
    for i in range(shape(p)[0]):
        y = y * x + p[i]
    return y


def _pad_front(p, n):
    return concatenate([zeros((n - shape(p)[0],), p.dtype), p]) if shape(p)[0] < n else p


def polyadd(a1, a2):
    a1, a2 = _promote_args("polyadd", ravel(_tracer_like(a1)), ravel(_tracer_like(a2)))
    n = max(shape(a1)[0], shape(a2)[0])
    return _pad_front(a1, n) + _pad_front(a2, n)


def polysub(a1, a2):
    a1, a2 = _promote_args("polysub", ravel(_tracer_like(a1)), ravel(_tracer_like(a2)))
    n = max(shape(a1)[0], shape(a2)[0])
    return subtract(_pad_front(a1, n), _pad_front(a2, n))


def polymul(a1, a2):
    return convolve(ravel(_tracer_like(a1)), ravel(_tracer_like(a2)))


def polyder(p, m: int = 1):
    p = _tracer_like(p)
    p = p if p.dtype.is_inexact else lax.convert_element_type(p, float64)
    for _ in range(m):
        n = shape(p)[0] - 1
        p = p[:-1] * asarray(np.arange(n, 0, -1), p.dtype)
    return p


def polyint(p, m: int = 1, k=None):
    p = _tracer_like(p)
    p = p if p.dtype.is_inexact else lax.convert_element_type(p, float64)
    ks = np.zeros(m) if k is None else np.broadcast_to(np.asarray(k, np.float64), (m,))
    for i in range(m):
        n = shape(p)[0]
        p = concatenate([p / asarray(np.arange(n, 0, -1), p.dtype), asarray(ks[i:i + 1], p.dtype)])
    return p


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov: bool = False):
    if full or w is not None or cov:
        raise NotImplementedError("polyfit: full, w and cov")
    from ir.numpy.layout import vander
    from ir.numpy.linalg import lstsq
    return lstsq(vander(_tracer_like(x), deg + 1), _tracer_like(y), rcond)[0]


def poly(seq_of_zeros):
    z = ravel(_tracer_like(seq_of_zeros)) if ndim(seq_of_zeros) == 1 else None
    if z is None:
        from ir.numpy.linalg import eigvals
        z = eigvals(seq_of_zeros)
    p = asarray(np.ones(1), z.dtype)
    for i in range(shape(z)[0]):
        p = convolve(p, stack([literal(1, z.dtype, False) + 0 * z[i], -z[i]]))
    return p


def _window(values):
    return asarray(np.asarray(values, np.float64))


def bartlett(M: int):
    return _window(np.bartlett(M))


def blackman(M: int):
    return _window(np.blackman(M))


def hamming(M: int):
    return _window(np.hamming(M))


def hanning(M: int):
    return _window(np.hanning(M))


def kaiser(M: int, beta):
    n = asarray(np.arange(M, dtype=np.float64))
    alpha = (M - 1) / 2.0
    ratio = (n - alpha) / alpha if M > 1 else n * 0
    return i0(beta * lax.sqrt(1 - ratio * ratio)) / i0(asarray(beta, float64))

