"""NumPy implementations of the shape primitives: reshape, transpose, broadcast, pad, split, iota, ..."""

from __future__ import annotations

import numpy as np

from eval.registry import impl
from ir.params import as_ints


def pad_array(x: np.ndarray, value, config) -> np.ndarray:
    """XLA's Pad: per dimension `(low, high, interior)`; interior first, then edges (negative edges crop)."""
    lo, hi, interior = zip(*(as_ints(c) for c in config), strict=True) if config else ((), (), ())
    dilated = [n + max(n - 1, 0) * r for n, r in zip(x.shape, interior, strict=True)]
    grown = [max(a, 0) + d + max(b, 0) for a, d, b in zip(lo, dilated, hi, strict=True)]
    out = np.full(grown, value, dtype=x.dtype)
    placed = zip(lo, dilated, interior, strict=True)
    out[tuple(slice(max(a, 0), max(a, 0) + d, r + 1) for a, d, r in placed)] = x
    crop = tuple(slice(max(-a, 0), g - max(-b, 0)) for a, b, g in zip(lo, hi, grown, strict=True))
    return out[crop] if crop else out


@impl("reshape")
def reshape(x, *dynamic_sizes, new_sizes, dimensions=None, sharding=None):
    if dynamic_sizes:
        raise NotImplementedError("reshape: dynamic shapes are not supported")
    if dimensions is not None:  # `dimensions` transposes the operand before the row-major reshape
        x = np.transpose(x, as_ints(dimensions))
    return np.reshape(x, as_ints(new_sizes))


@impl("transpose")
def transpose(x, *, permutation):
    return np.transpose(x, as_ints(permutation))


@impl("broadcast_in_dim")
def broadcast_in_dim(x, *dynamic_sizes, shape, broadcast_dimensions=(), sharding=None):
    if dynamic_sizes:
        raise NotImplementedError("broadcast_in_dim: dynamic shapes are not supported")
    shape = as_ints(shape)
    kept = [1] * len(shape)
    for d, n in zip(as_ints(broadcast_dimensions), x.shape, strict=True):
        kept[d] = n
    return broadcast_copy(x, tuple(kept), shape)


def broadcast_copy(x: np.ndarray, kept: tuple[int, ...], shape: tuple[int, ...]) -> np.ndarray:
    """A new C-contiguous array of `shape` holding `x` reshaped to `kept` and broadcast (an assignment:
    np.broadcast_to(...).copy() computes the same and costs five times as much on small arrays)."""
    out = np.empty(shape, x.dtype)
    out[...] = np.reshape(x, kept)
    return out


@impl("squeeze")
def squeeze(x, *, dimensions):
    return np.squeeze(x, axis=as_ints(dimensions))


@impl("concatenate")
def concatenate(*xs, dimension):
    return np.concatenate(xs, axis=int(dimension))


@impl("stack")
def stack(*xs, axis):
    return np.stack(xs, axis=int(axis))


@impl("tile")
def tile(x, *, reps):
    return np.tile(x, as_ints(reps))


@impl("pad")
def pad(x, padding_value, *, padding_config):
    return pad_array(x, padding_value, padding_config)


@impl("rev")
def rev(x, *, dimensions):
    return np.flip(x, axis=as_ints(dimensions))


@impl("split")
def split(x, *, sizes, axis):
    return tuple(np.split(x, np.cumsum(as_ints(sizes))[:-1], axis=int(axis)))


@impl("unstack")
def unstack(x, *, axis):
    moved = np.moveaxis(x, int(axis), 0)
    return tuple(np.array(piece) for piece in moved)  # np.array: a 0-d array, not a NumPy scalar


@impl("iota")
def iota(*dynamic_sizes, dtype, shape, dimension, sharding=None):
    if dynamic_sizes:
        raise NotImplementedError("iota: dynamic shapes are not supported")
    shape, dimension = as_ints(shape), int(dimension)
    line = np.arange(shape[dimension]).astype(dtype.numpy)
    along = [1] * len(shape)
    along[dimension] = shape[dimension]
    return broadcast_copy(line, tuple(along), shape)
