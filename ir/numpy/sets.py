"""ir.numpy set routines under a trace: the result size is data-dependent, so `size=` is required, as under
`jax.jit`; missing entries are `fill_value` (default: the first result; 0 for setdiff1d), as in JAX."""

from __future__ import annotations

from typing import NamedTuple

from ir import lax
from ir.numpy._base import int64, shape
from ir.numpy.creation import zeros
from ir.numpy.elementwise import logical_and, logical_not, not_equal, where
from ir.numpy.manipulation import _tracer_like, concatenate, ravel, reshape
from ir.numpy.reductions import cumsum, sum
from ir.numpy.selection import _static_size, isin, nonzero
from ir.tracing import Tracer

__all__ = [
    'unique', 'unique_values', 'unique_counts', 'unique_inverse', 'unique_all', 'intersect1d', 'setdiff1d',
    'union1d', 'setxor1d',
]


class UniqueAllResult(NamedTuple):
    values: Tracer
    indices: Tracer
    inverse_indices: Tracer
    counts: Tracer


class UniqueCountsResult(NamedTuple):
    values: Tracer
    counts: Tracer


class UniqueInverseResult(NamedTuple):
    values: Tracer
    inverse_indices: Tracer


def _sorted(ar):
    """The flattened array sorted stably, the permutation, and the first-occurrence mask."""
    flat = ravel(_tracer_like(ar))
    n = shape(flat)[0]
    iota = lax.iota(int64, n)
    s, perm = lax.sort((flat, iota), 0, True, 1)
    first = concatenate([lax.full((1,), True, "bool"), not_equal(s[1:], s[:-1])]) if n > 1 else \
        lax.full((n,), True, "bool")
    return s, perm, first


def _pick(s, mask, size: int, fill_value):
    """The entries of `s` where `mask`, the first `size` of them, filled; and their positions and count."""
    (pos,) = nonzero(mask, size=size)
    count = sum(mask, dtype=int64)
    valid = lax.lt(lax.iota(int64, size), count)
    values = s[pos]
    fill = values[0] if fill_value is None else fill_value
    return where(valid, values, fill), pos, count, valid


def unique(ar, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis=None, *, equal_nan: bool = True, size=None, fill_value=None, sorted: bool = True):  # noqa: A002
    if axis is not None:
        raise NotImplementedError("unique: axis (only the flattened array)")
    size = _static_size(size, "unique")
    s, perm, first = _sorted(ar)
    n = shape(s)[0]
    values, pos, count, valid = _pick(s, first, size, fill_value)
    out = [values]
    if return_index:
        out.append(perm[pos])
    if return_inverse:
        rank = lax.sub(cumsum(first, dtype=int64), lax.full((), 1, int64))
        inverse = zeros((n,), int64).at[perm].set(rank)
        out.append(reshape(inverse, shape(ar)))
    if return_counts:
        k = lax.iota(int64, size)
        nxt = where(lax.lt(k + 1, count), concatenate([pos[1:], pos[:1]]), n)
        out.append(where(valid, nxt - pos, 0))
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x, *, size=None, fill_value=None):
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, *, size=None, fill_value=None):
    return UniqueCountsResult(*unique(x, return_counts=True, size=size, fill_value=fill_value))


def unique_inverse(x, *, size=None, fill_value=None):
    return UniqueInverseResult(*unique(x, return_inverse=True, size=size, fill_value=fill_value))


def unique_all(x, *, size=None, fill_value=None):
    return UniqueAllResult(*unique(x, True, True, True, size=size, fill_value=fill_value))


def union1d(ar1, ar2, *, size=None, fill_value=None):
    return unique(concatenate([ravel(_tracer_like(ar1)), ravel(_tracer_like(ar2))]), size=size,
                  fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    size = _static_size(size, "setdiff1d")
    s, _, first = _sorted(ar1)
    mask = logical_and(first, logical_not(isin(s, ar2)))
    return _pick(s, mask, size, 0 if fill_value is None else fill_value)[0]


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *, size=None,
                fill_value=None):
    if return_indices:
        raise NotImplementedError("intersect1d: return_indices")
    size = _static_size(size, "intersect1d")
    s, _, first = _sorted(ar1)
    return _pick(s, logical_and(first, isin(s, ar2)), size, fill_value)[0]


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    size = _static_size(size, "setxor1d")
    s, _, first = _sorted(concatenate([ravel(_tracer_like(ar1)), ravel(_tracer_like(ar2))]))
    in_one = not_equal(isin(s, ar1), isin(s, ar2))
    return _pick(s, logical_and(first, in_one), size, fill_value)[0]
