"""The rest of ir.numpy: bit packing, polynomial division and roots, place, histograms in several
dimensions, and NumPy's printing and file functions (data read from files or buffers becomes a constant of
the trace, as `jnp.asarray(np.load(...))`)."""

from __future__ import annotations

import numpy as np
from numpy import get_printoptions, printoptions, save, savez, set_printoptions

from ir import lax
from ir.numpy._base import int64, promote_dtypes_inexact, shape, uint8
from ir.numpy.creation import asarray, zeros
from ir.numpy.manipulation import _tracer_like, ravel, reshape, stack
from ir.numpy.selection import histogram_bin_edges, nonzero, searchsorted
from ir.tracing import Tracer

__all__ = [
    'get_printoptions', 'printoptions', 'set_printoptions', 'save', 'savez', 'load', 'frombuffer', 'fromstring',
    'array_repr', 'array_str', 'packbits', 'unpackbits', 'polydiv', 'roots', 'place',
    'trim_zeros', 'histogramdd', 'histogram2d',
]


def load(file, *args, **kwargs):
    return asarray(np.load(file, *args, **kwargs))


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0):
    return asarray(np.frombuffer(buffer, dtype, count, offset))


def fromstring(string, dtype=float, count: int = -1, *, sep: str):
    return asarray(np.fromstring(string, dtype, count, sep=sep))


def _concrete(x, fn: str) -> np.ndarray:
    if isinstance(x, Tracer):
        return x._concrete(fn, np.asarray)
    return np.asarray(x)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None) -> str:
    return np.array_repr(_concrete(arr, "array_repr"), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None) -> str:
    return np.array_str(_concrete(a, "array_str"), max_line_width, precision, suppress_small)


def unpackbits(a, axis: int | None = None, count: int | None = None, bitorder: str = "big"):
    a = _tracer_like(a)
    if a.dtype != uint8:
        raise TypeError(f"unpackbits needs uint8 input, got {a.dtype}")
    shifts = asarray(np.arange(8, dtype=np.uint8)[::-1] if bitorder == "big" else np.arange(8, dtype=np.uint8))
    if axis is None:
        a, axis = ravel(a), 0
    axis = axis % a.ndim
    expanded = lax.expand_dims(a, (axis + 1,))
    shift_shape = [1] * (a.ndim + 1)
    shift_shape[axis + 1] = 8
    bits = lax.bitwise_and(lax.shift_right_logical(expanded, reshape(shifts, tuple(shift_shape))),
                           np.array(1, np.uint8))
    out_shape = list(shape(a))
    out_shape[axis] *= 8
    bits = reshape(bits, tuple(out_shape))
    if count is not None:
        bits = lax.slice_in_dim(bits, 0, count, axis=axis) if count <= out_shape[axis] else bits
    return bits


def packbits(a, axis: int | None = None, bitorder: str = "big"):
    a = _tracer_like(a)
    if not (a.dtype.is_integer or a.dtype.is_bool):
        raise TypeError(f"packbits needs an integer or bool array, got {a.dtype}")
    bits = lax.convert_element_type(lax.ne(a, np.array(0, a.dtype.numpy)) if not a.dtype.is_bool else a, uint8)
    if axis is None:
        bits, axis = ravel(bits), 0
    axis = axis % bits.ndim
    n = shape(bits)[axis]
    pad = -n % 8
    if pad:
        config = [(0, 0, 0)] * bits.ndim
        config[axis] = (0, pad, 0)
        bits = lax.pad(bits, np.array(0, np.uint8), config)
    s = list(shape(bits))
    grouped = reshape(bits, tuple(s[:axis] + [s[axis] // 8, 8] + s[axis + 1:]))
    shifts = np.arange(8, dtype=np.uint8)[::-1] if bitorder == "big" else np.arange(8, dtype=np.uint8)
    shift_shape = [1] * grouped.ndim
    shift_shape[axis + 1] = 8
    weighted = lax.shift_left(grouped, reshape(asarray(shifts), tuple(shift_shape)))
    return lax.convert_element_type(lax.reduce_sum(weighted, (axis + 1,)), uint8)


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """Long division over the static degrees, as jax.numpy.polydiv."""
    u, v = (_tracer_like(x) for x in promote_dtypes_inexact(u, v))
    m, n = shape(u)[0] - 1, shape(v)[0] - 1
    scale = 1.0 / v[0]
    q = zeros((max(m - n + 1, 1),), u.dtype)
    for k in range(m - n + 1):
        d = scale * u[k]
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        raise NotImplementedError("polydiv: trim_leading_zeros has a data-dependent shape")
    return q, u


def roots(p, *, strip_zeros: bool = True):
    """Eigenvalues of the companion matrix; stripping leading zeros needs a concrete `p`."""
    if strip_zeros:
        p_np = np.trim_zeros(_concrete(p, "roots(strip_zeros=True)"), "f")
        p = asarray(p_np)
    p = _tracer_like(p)
    (p,) = promote_dtypes_inexact(p)
    n = shape(p)[0] - 1
    if n < 1:
        return zeros((0,), "complex128")
    from ir.numpy.linalg import eigvals
    first_row = -p[1:] / p[0]
    if n == 1:
        return lax.convert_element_type(first_row, "complex128" if p.dtype.bits == 64 else "complex64")
    sub_diagonal = asarray(np.eye(n, k=-1), p.dtype)[1:]
    companion = lax.concatenate([reshape(first_row, (1, n)), sub_diagonal], 0)
    return eigvals(companion)


def place(arr, mask, vals, *, inplace: bool = True):
    if inplace:
        raise ValueError("ir.numpy arrays are immutable: call place(..., inplace=False)")
    arr = _tracer_like(arr)
    flat_mask = ravel(_tracer_like(mask))
    n = shape(flat_mask)[0]
    (indices,) = nonzero(flat_mask, size=n, fill_value=n)
    vals = ravel(_tracer_like(vals))
    cycled = vals[np.arange(n) % shape(vals)[0]]
    return reshape(ravel(arr).at[indices].set(cycled, mode="drop"), shape(arr))


def trim_zeros(filt, trim: str = "fb"):
    """Needs a concrete array: the result's length depends on the values."""
    return asarray(np.trim_zeros(_concrete(filt, "trim_zeros"), trim))


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    sample = _tracer_like(sample)
    n, d = shape(sample)
    bins = [bins] * d if isinstance(bins, (int, np.integer)) else list(bins)
    ranges = [None] * d if range is None else list(range)
    edges = [histogram_bin_edges(sample[:, i], bins[i], ranges[i]) for i in np.arange(d)]
    counts_shape = tuple(shape(e)[0] - 1 for e in edges)
    flat_index = None
    for i, e in enumerate(edges):
        column = sample[:, i]
        idx = searchsorted(e, column, "right") - 1
        idx = lax.select(lax.eq(column, lax.broadcast_in_dim(e[-1], (n,), ())),
                         lax.full((n,), counts_shape[i] - 1, int64), idx)
        inside = lax.bitwise_and(lax.ge(idx, lax.full((n,), 0, int64)),
                                 lax.lt(idx, lax.full((n,), counts_shape[i], int64)))
        idx = lax.select(inside, idx, lax.full((n,), int(np.prod(counts_shape)), int64))
        stride = int(np.prod(counts_shape[i + 1:]))
        flat_index = idx * stride if flat_index is None else flat_index + idx * stride
    w = lax.full((n,), 1.0, "float64") if weights is None else ravel(_tracer_like(weights))
    counts = zeros((int(np.prod(counts_shape)),), w.dtype).at[flat_index].add(w, mode="drop")
    counts = reshape(counts, counts_shape)
    if density:
        from ir.numpy.statistics import diff
        volume = None
        for i, e in enumerate(edges):
            widths = reshape(diff(e), tuple(-1 if j == i else 1 for j in np.arange(d)))
            volume = widths if volume is None else volume * widths
        counts = counts / (volume * counts.sum())
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    counts, edges = histogramdd(stack([_tracer_like(x), _tracer_like(y)], 1), bins, range, weights, density)
    return counts, edges[0], edges[1]
