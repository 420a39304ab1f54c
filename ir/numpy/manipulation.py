"""ir.numpy shape manipulation: reshape, transpose, broadcasting, stacking, tiling, padding, splitting."""

from __future__ import annotations

import builtins
import math

import numpy as np

from ir import lax
from ir.numpy._base import _canon_axis, _check_arraylike, _convert, broadcast_shapes, ndim, promote_dtypes, shape, size
from ir.numpy.creation import asarray
from ir.tracing import Tracer, aval_of

__all__ = [
    'reshape', 'ravel', 'transpose', 'swapaxes', 'moveaxis', 'expand_dims', 'squeeze', 'broadcast_to',
    'broadcast_arrays', 'atleast_1d', 'atleast_2d', 'concatenate', 'stack', 'vstack', 'hstack', 'tile',
    'repeat', 'flip', 'pad', 'split',
]

def _tracer_like(x):
    _check_arraylike("array function", x)
    return x if isinstance(x, Tracer) else asarray(x)


def reshape(a, newshape, order: str = "C"):
    a = _tracer_like(a)
    newshape = (newshape,) if isinstance(newshape, int) else tuple(int(d) for d in newshape)
    total = size(a)
    if newshape.count(-1) > 1:
        raise ValueError("reshape: only one dimension may be -1")
    if -1 in newshape:
        known = math.prod(d for d in newshape if d != -1)
        if known == 0 or total % known:
            raise ValueError(f"cannot reshape {shape(a)} into {newshape}")
        newshape = tuple(total // known if d == -1 else d for d in newshape)
    if math.prod(newshape) != total:
        raise ValueError(f"cannot reshape array of shape {shape(a)} into {newshape}")
    if order == "C":
        return lax.reshape(a, newshape)
    if order == "F":
        dims = tuple(range(ndim(a) - 1, -1, -1))
        return transpose(lax.reshape(a, newshape[::-1], dims), tuple(range(len(newshape) - 1, -1, -1)))
    raise ValueError(f"reshape: unsupported order {order!r}")


def ravel(a):
    return reshape(a, (size(a),))


def transpose(a, axes=None):
    a = _tracer_like(a)
    nd = ndim(a)
    axes = tuple(range(nd - 1, -1, -1)) if axes is None else tuple(_canon_axis(int(x), nd) for x in axes)
    return lax.transpose(a, axes)


def swapaxes(a, axis1: int, axis2: int):
    nd = ndim(a)
    perm = list(range(nd))
    i, j = _canon_axis(axis1, nd), _canon_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(_tracer_like(a), perm)


def moveaxis(a, source, destination):
    """Axes `source` (an int or a sequence) moved to `destination`, the others keeping their order."""
    nd = ndim(a)
    src = [_canon_axis(int(x), nd) for x in ((source,) if isinstance(source, (int, np.integer)) else source)]
    dst = [_canon_axis(int(x), nd) for x in
           ((destination,) if isinstance(destination, (int, np.integer)) else destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of elements")
    rest = iter(i for i in range(nd) if i not in src)
    placed = dict(zip(dst, src, strict=True))
    perm = [placed[k] if k in placed else next(rest) for k in range(nd)]
    return lax.transpose(_tracer_like(a), perm)


def expand_dims(a, axis):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return lax.expand_dims(_tracer_like(a), axes)


def squeeze(a, axis=None):
    s = shape(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(s) if d == 1)
    else:
        axes = tuple(_canon_axis(x, len(s)) for x in ((axis,) if isinstance(axis, int) else axis))
        for x in axes:
            if s[x] != 1:
                raise ValueError(f"cannot squeeze axis {x} of size {s[x]}")
    return lax.squeeze(_tracer_like(a), axes)


def broadcast_to(a, shape_):
    a = _tracer_like(a)
    shape_ = (shape_,) if isinstance(shape_, int) else tuple(shape_)
    s = shape(a)
    if s == shape_:
        return a
    nlead = len(shape_) - len(s)
    if nlead < 0 or builtins.any(d not in (1, t) for d, t in zip(s, shape_[nlead:], strict=True)):
        raise ValueError(f"cannot broadcast shape {s} to {shape_}")
    return lax.broadcast_in_dim(a, shape_, tuple(range(nlead, len(shape_))))


def broadcast_arrays(*args):
    shapes = [shape(a) for a in args]
    if builtins.all(s == shapes[0] for s in shapes):
        return list(args)
    out = broadcast_shapes(*shapes)
    return [broadcast_to(a, out) for a in args]


def atleast_1d(a):
    return reshape(a, (1,)) if ndim(a) == 0 else a


def atleast_2d(a):
    nd = ndim(a)
    return a if nd >= 2 else expand_dims(a, tuple(range(2 - nd)))


def concatenate(arrays, axis: int = 0):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("concatenate needs at least one array")
    if axis is None:
        return concatenate([ravel(a) for a in arrays], 0)
    arrays = [_tracer_like(a) if ndim(a) else a for a in promote_dtypes(*arrays)]
    if builtins.any(ndim(a) == 0 for a in arrays):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    return lax.concatenate(arrays, _canon_axis(axis, ndim(arrays[0])))


def stack(arrays, axis: int = 0):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("stack needs at least one array")
    s = shape(arrays[0])
    if builtins.any(shape(a) != s for a in arrays):
        raise ValueError("stack: all input arrays must have the same shape")
    arrays = [_tracer_like(a) for a in promote_dtypes(*arrays)]
    return lax.stack(arrays, _canon_axis(axis, len(s) + 1))


def vstack(arrays):
    return concatenate([atleast_2d(a) for a in arrays], 0)


def hstack(arrays):
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, 0 if ndim(arrays[0]) == 1 else 1)


def tile(A, reps):
    A = _tracer_like(A)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    nd = ndim(A)
    if len(reps) > nd:
        A = reshape(A, (1,) * (len(reps) - nd) + shape(A))
    reps = (1,) * (ndim(A) - len(reps)) + reps
    return lax.tile(A, reps)


def repeat(a, repeats: int, axis: int | None = None):
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError("repeat: only a static integer number of repeats is supported")
    a = _tracer_like(a)
    if axis is None:
        a, axis = ravel(a), 0
    s = shape(a)
    axis = _canon_axis(axis, len(s))
    expanded = s[:axis + 1] + (int(repeats),) + s[axis + 1:]
    dims = tuple(range(axis + 1)) + tuple(range(axis + 2, len(s) + 1))
    b = lax.broadcast_in_dim(a, expanded, dims)
    return lax.reshape(b, s[:axis] + (s[axis] * int(repeats),) + s[axis + 1:])


def flip(m, axis=None):
    nd = ndim(m)
    axes = tuple(range(nd)) if axis is None else tuple(
        _canon_axis(x, nd) for x in ((axis,) if isinstance(axis, int) else axis))
    return lax.rev(_tracer_like(m), axes)


def pad(array, pad_width, mode: str = "constant", constant_values=0):
    if mode != "constant":
        raise NotImplementedError(f"pad: mode {mode!r} (only 'constant')")
    array = _tracer_like(array)
    nd = ndim(array)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (nd, 2))
    value = _convert(constant_values, aval_of(array).dtype)
    return lax.pad(array, value, [(int(lo), int(hi), 0) for lo, hi in pw])


def split(ary, indices_or_sections, axis: int = 0):
    s = shape(ary)
    axis = _canon_axis(axis, len(s))
    if isinstance(indices_or_sections, (int, np.integer)):
        n = int(indices_or_sections)
        if s[axis] % n:
            raise ValueError("array split does not result in an equal division")
        sizes = [s[axis] // n] * n
    else:
        bounds = [0, *(int(i) for i in indices_or_sections), s[axis]]
        sizes = [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return lax.split(_tracer_like(ary), sizes, axis)
