"""More ir.numpy array manipulation and construction: rolling, rotating, splitting, diagonals, grids."""

from __future__ import annotations

import builtins

import numpy as np

from ir import lax
from ir.lax import to_dtype
from ir.numpy._base import _canon_axis, float64, int64, ndim, shape
from ir.numpy.creation import asarray, astype, full_like, zeros
from ir.numpy.elementwise import power
from ir.numpy.manipulation import (
    _tracer_like,
    atleast_2d,
    broadcast_to,
    concatenate,
    expand_dims,
    flip,
    moveaxis,
    ravel,
    reshape,
    split,
    stack,
    swapaxes,
    transpose,
)

__all__ = [
    'roll', 'rot90', 'fliplr', 'flipud', 'rollaxis', 'permute_dims', 'matrix_transpose', 'atleast_3d',
    'column_stack', 'dstack', 'concat', 'append', 'array_split', 'hsplit', 'vsplit', 'dsplit', 'block', 'resize',
    'unstack', 'delete', 'insert', 'diag', 'diagflat', 'diagonal', 'copy', 'empty', 'empty_like', 'meshgrid',
    'indices', 'ix_', 'tril_indices', 'triu_indices', 'tril_indices_from', 'triu_indices_from', 'diag_indices',
    'diag_indices_from', 'mask_indices', 'geomspace', 'logspace', 'fromfunction', 'vander', 'fill_diagonal',
]


def roll(a, shift, axis=None):
    a = _tracer_like(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), shape(a))
    shifts = (shift,) if isinstance(shift, (int, np.integer)) else tuple(shift)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    for sh, ax in zip(shifts, axes, strict=True):
        ax = _canon_axis(ax, ndim(a))
        n = shape(a)[ax]
        if n == 0:
            continue
        sh = int(sh) % n
        if sh:
            a = concatenate([lax.slice_in_dim(a, n - sh, n, axis=ax), lax.slice_in_dim(a, 0, n - sh, axis=ax)], ax)
    return a


def rot90(m, k: int = 1, axes=(0, 1)):
    m = _tracer_like(m)
    ax1, ax2 = (_canon_axis(x, ndim(m)) for x in axes)
    k = k % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(ndim(m)))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    return transpose(flip(m, ax2), perm) if k == 1 else flip(transpose(m, perm), ax2)


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def rollaxis(a, axis: int, start: int = 0):
    nd = ndim(a)
    axis = _canon_axis(axis, nd)
    start = start + nd if start < 0 else start
    if start > axis:
        start -= 1
    return moveaxis(a, axis, start)


def permute_dims(a, axes):
    return transpose(a, axes)


def matrix_transpose(x):
    return swapaxes(x, -1, -2)


def atleast_3d(a):
    nd = ndim(a)
    if nd == 0:
        return reshape(a, (1, 1, 1))
    if nd == 1:
        return reshape(a, (1, shape(a)[0], 1))
    return expand_dims(a, 2) if nd == 2 else _tracer_like(a)


def column_stack(tup):
    return concatenate([reshape(a, (shape(a)[0], 1)) if ndim(a) == 1 else atleast_2d(a) for a in tup], 1)


def dstack(tup):
    return concatenate([atleast_3d(a) for a in tup], 2)


def concat(arrays, /, *, axis: int | None = 0):
    return concatenate(arrays, axis)


def append(arr, values, axis: int | None = None):
    if axis is None:
        return concatenate([ravel(_tracer_like(arr)), ravel(_tracer_like(values))], 0)
    return concatenate([arr, values], axis)


def array_split(ary, indices_or_sections, axis: int = 0):
    s = shape(ary)
    axis = _canon_axis(axis, len(s))
    if isinstance(indices_or_sections, (int, np.integer)):
        n = int(indices_or_sections)
        q, r = divmod(s[axis], n)
        bounds = np.cumsum([0] + [q + 1] * r + [q] * (n - r))
    else:
        bounds = [0, *(int(i) for i in indices_or_sections), s[axis]]
    a = _tracer_like(ary)
    return [lax.slice_in_dim(a, int(lo), builtins.max(int(lo), int(hi)), axis=axis)
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def hsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 1 if ndim(ary) > 1 else 0)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 2)


def block(arrays):
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) else 0

    def assemble(x, level, total):
        if not isinstance(x, list):
            x = _tracer_like(x)
            return reshape(x, (1,) * (total - ndim(x)) + shape(x)) if ndim(x) < total else x
        parts = [assemble(y, level + 1, total) for y in x]
        return concatenate(parts, -(total - level))

    d = depth(arrays)
    leaves_rank = builtins.max(d, *(ndim(a) for a in _leaves(arrays)))
    return assemble(arrays, 0, leaves_rank) if d else _tracer_like(arrays)


def _leaves(x):
    return [y for item in x for y in _leaves(item)] if isinstance(x, list) else [x]


def resize(a, new_shape):
    new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    flat = ravel(_tracer_like(a))
    total = int(np.prod(new_shape))
    n = shape(flat)[0]
    reps = -(-total // n) if n else 0
    return reshape(lax.slice_in_dim(concatenate([flat] * reps, 0), 0, total), new_shape)


def unstack(x, /, *, axis: int = 0):
    x = _tracer_like(x)
    axis = _canon_axis(axis, ndim(x))
    return tuple(lax.squeeze(lax.slice_in_dim(x, i, i + 1, axis=axis), (axis,)) for i in range(shape(x)[axis]))


def delete(arr, obj, axis: int | None = None):
    arr = _tracer_like(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = _canon_axis(axis, ndim(arr))
    n = shape(arr)[axis]
    drop = np.arange(n)[obj] if isinstance(obj, slice) else np.asarray(obj)
    keep = np.setdiff1d(np.arange(n), np.where(drop < 0, drop + n, drop))
    from ir.numpy.indexing import take
    return take(arr, keep.astype(np.int64), axis=axis, mode="clip")


def insert(arr, obj, values, axis: int | None = None):
    arr = _tracer_like(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = _canon_axis(axis, ndim(arr))
    if not isinstance(obj, (int, np.integer)):
        raise NotImplementedError("insert: only a single static integer position")
    n = shape(arr)[axis]
    pos = int(obj) + n if obj < 0 else int(obj)
    # NumPy's rule for a scalar position: values get leading 1s up to arr's rank, then axis 0 moves to `axis`
    values = asarray(values, dtype=arr.dtype)
    values = moveaxis(reshape(values, (1,) * (ndim(arr) - ndim(values)) + shape(values)), 0, axis)
    s = list(shape(arr))
    s[axis] = shape(values)[axis]
    values = broadcast_to(values, tuple(s))
    return concatenate([lax.slice_in_dim(arr, 0, pos, axis=axis), values, lax.slice_in_dim(arr, pos, n, axis=axis)],
                       axis)


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    a = _tracer_like(a)
    nd = ndim(a)
    a = _diag_last(a, _canon_axis(axis1, nd), _canon_axis(axis2, nd))
    rows, cols = shape(a)[-2:]
    i = np.arange(builtins.max(0, builtins.min(rows + builtins.min(offset, 0), cols - builtins.max(offset, 0))))
    r, c = i - builtins.min(offset, 0), i + builtins.max(offset, 0)
    return a[..., r, c]


def _diag_last(a, axis1: int, axis2: int):
    rest = [d for d in range(ndim(a)) if d not in (axis1, axis2)]
    return transpose(a, rest + [axis1, axis2])


def diag(v, k: int = 0):
    v = _tracer_like(v)
    if ndim(v) == 2:
        return diagonal(v, k)
    if ndim(v) != 1:
        raise ValueError("diag: input must be 1-D or 2-D")
    n = shape(v)[0] + builtins.abs(k)
    from ir.numpy.creation import eye
    mask = eye(n, k=k, dtype=bool)
    vals = lax.pad(v, lax_zero(v), [(builtins.abs(k), 0, 0)])
    along = lax.broadcast_in_dim(vals, (n, n), (1,) if k >= 0 else (0,))
    from ir.numpy.elementwise import where
    return where(mask, along, full_like(along, 0))


def lax_zero(v):
    from ir.tracing import literal
    return literal(0, v.dtype, False)


def diagflat(v, k: int = 0):
    return diag(ravel(_tracer_like(v)), k)


def copy(a, order=None):
    return _tracer_like(a)


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def empty_like(prototype, dtype=None, shape=None):
    return full_like(prototype, 0, dtype, shape)


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    xs = [ravel(_tracer_like(x)) for x in xi]
    n = len(xs)
    out_shape = [shape(x)[0] for x in xs]
    if indexing == "xy" and n >= 2:
        out_shape[0], out_shape[1] = out_shape[1], out_shape[0]
    out = []
    for i, x in enumerate(xs):
        dim = (1 - i if i < 2 else i) if indexing == "xy" and n >= 2 else i
        if sparse:
            s = [1] * n
            s[dim] = shape(x)[0]
            out.append(reshape(x, tuple(s)))
        else:
            out.append(lax.broadcast_in_dim(x, tuple(out_shape), (dim,)))
    return out


def indices(dimensions, dtype=None, sparse: bool = False):
    dt = int64 if dtype is None else to_dtype(dtype)
    dimensions = tuple(dimensions)
    grids = []
    for i, n in enumerate(dimensions):
        if sparse:
            s = [1] * len(dimensions)
            s[i] = n
            grids.append(reshape(lax.iota(dt, n), tuple(s)))
        else:
            grids.append(lax.broadcasted_iota(dt, dimensions, i))
    return tuple(grids) if sparse else stack(grids) if grids else zeros((0,), dt)


def ix_(*args):
    n = len(args)
    return tuple(reshape(_tracer_like(a), tuple(shape(a)[0] if j == i else 1 for j in range(n)))
                 for i, a in enumerate(args))


def tril_indices(n: int, k: int = 0, m: int | None = None):
    return tuple(asarray(i) for i in np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None):
    return tuple(asarray(i) for i in np.triu_indices(n, k, m))


def tril_indices_from(arr, k: int = 0):
    return tril_indices(shape(arr)[-2], k, shape(arr)[-1])


def triu_indices_from(arr, k: int = 0):
    return triu_indices(shape(arr)[-2], k, shape(arr)[-1])


def diag_indices(n: int, ndim: int = 2):
    return (asarray(np.arange(n)),) * ndim


def diag_indices_from(arr):
    s = shape(arr)
    if len(set(s)) != 1:
        raise ValueError("diag_indices_from: all dimensions must be equal")
    return diag_indices(s[0], len(s))


def mask_indices(n: int, mask_func, k: int = 0):
    """`mask_func` (NumPy's triu/tril or alike) runs on a NumPy array: the indices are static."""
    return tuple(asarray(i) for i in np.nonzero(np.asarray(mask_func(np.ones((n, n), np.int64), k))))


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    return asarray(np.geomspace(start, stop, num, endpoint, dtype=None if dtype is None else to_dtype(dtype).numpy,
                                axis=axis))


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None, axis: int = 0):
    return asarray(np.logspace(start, stop, num, endpoint, base, dtype=None if dtype is None else
                               to_dtype(dtype).numpy, axis=axis))


def fromfunction(function, shape, *, dtype=float64, **kwargs):
    return function(*indices(shape, dtype=dtype, sparse=False), **kwargs)


def vander(x, N: int | None = None, increasing: bool = False):
    x = _tracer_like(x)
    n = shape(x)[0] if N is None else N
    powers = lax.iota(int64, n)
    if not increasing:
        powers = flip(powers)
    return power(lax.broadcast_in_dim(x, (shape(x)[0], n), (0,)), astype(powers, x.dtype)
                 if x.dtype.is_inexact else powers)


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
    if inplace:
        raise ValueError("ir.numpy arrays are immutable: call fill_diagonal(..., inplace=False)")
    a = _tracer_like(a)
    n = builtins.min(shape(a))
    idx = np.arange(n)
    vals = ravel(asarray(val, dtype=a.dtype))
    vals = resize(vals, (n,)) if shape(vals)[0] != n else vals
    return a.at[(idx,) * ndim(a)].set(vals)

