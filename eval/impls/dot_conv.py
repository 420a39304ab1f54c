"""NumPy implementations of contractions: dot_general, ragged_dot_general, conv_general_dilated.

Accumulation follows XLA on CPU closely enough for the oracle tolerances: integers wrap (the sum is
computed in 64 bits and wrapped to the output width, which is exact modular arithmetic), float16 and
bfloat16 accumulate in float32, and `precision` is ignored.
"""

from __future__ import annotations

import functools
import math
import string

import numpy as np

from eval.impls.arrays import pad_array
from eval.registry import impl
from ir.params import as_ints

_NARROW_FLOATS = frozenset(np.dtype(t) for t in ("float16", "bfloat16"))


def _out_dtype(lhs, rhs, preferred_element_type) -> np.dtype:
    if preferred_element_type is not None:
        return np.dtype(preferred_element_type.numpy)
    return np.result_type(lhs.dtype, rhs.dtype)


def _work_dtype(out: np.dtype) -> np.dtype:
    if out in _NARROW_FLOATS:
        return np.dtype(np.float32)
    if out.kind == "u":
        return np.dtype(np.uint64)
    if out.kind in "ib":
        return np.dtype(np.int64)
    return out


def _finish(result: np.ndarray, out: np.dtype) -> np.ndarray:
    """Round (or wrap) the accumulated result to the output dtype; a bool dot is an OR of ANDs."""
    return np.asarray(result != 0) if out.kind == "b" else np.asarray(result).astype(out)


def _free_dims(ndim: int, contract, batch) -> list[int]:
    return [d for d in range(ndim) if d not in contract and d not in batch]


def _dimension_numbers(dimension_numbers) -> tuple[tuple[int, ...], ...]:
    (lc, rc), (lb, rb) = dimension_numbers
    return as_ints(lc), as_ints(rc), as_ints(lb), as_ints(rb)


@impl("dot_general")
def dot_general(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    """Output layout: batch dims, then lhs free dims, then rhs free dims (each in operand order)."""
    lc, rc, lb, rb = _dimension_numbers(dimension_numbers)
    out = _out_dtype(lhs, rhs, preferred_element_type)
    work = _work_dtype(out)
    lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
    batch = tuple(lhs.shape[d] for d in lb)
    lf_shape, rf_shape = tuple(lhs.shape[d] for d in lf), tuple(rhs.shape[d] for d in rf)
    k = math.prod(lhs.shape[d] for d in lc)
    a = np.transpose(lhs, (*lb, *lf, *lc)).astype(work).reshape(batch + (math.prod(lf_shape), k))
    b = np.transpose(rhs, (*rb, *rc, *rf)).astype(work).reshape(batch + (k, math.prod(rf_shape)))
    return _finish(np.matmul(a, b).reshape(batch + lf_shape + rf_shape), out)


def _ragged_mode(ragged_dim: int, lc, lb) -> str:
    if ragged_dim in lc:
        return "contracting"
    if ragged_dim in lb:
        return "batch"
    return "noncontracting"


def _prefix_dims(mode: str, ndim: int, ragged_dim: int, contract, batch) -> list[int]:
    """The dims of an operand that index `group_sizes` ahead of its group axis (JAX's rule)."""
    if mode == "noncontracting":
        free = _free_dims(ndim, contract, batch)
        return [*batch, *free[:free.index(ragged_dim)]]
    if mode == "contracting":
        return [*batch, *contract[:list(contract).index(ragged_dim)]]
    return list(batch[:list(batch).index(ragged_dim)])


def _ragged_to_dense(x, ragged_dim: int, group_sizes, prefix: list[int]):
    """`x` with a new leading group axis: slot g keeps only the elements of group g along `ragged_dim`
    (groups are consecutive runs of `group_sizes[..., g]` elements) and zeros elsewhere."""
    ends = np.cumsum(group_sizes, axis=-1, dtype=group_sizes.dtype)
    starts = ends - group_sizes
    order = [0] + [1 + i for i in np.argsort(prefix)]
    shape = (group_sizes.shape[-1],) + tuple(x.shape[d] if d in prefix else 1 for d in range(x.ndim))
    starts, ends = (np.transpose(np.moveaxis(a, -1, 0), order).reshape(shape) for a in (starts, ends))
    others = [0] + [1 + d for d in range(x.ndim) if d != ragged_dim]
    index = np.expand_dims(np.arange(x.shape[ragged_dim]), others)
    return np.where((starts <= index) & (index < ends), x[None], np.zeros((), x.dtype))


@impl("ragged_dot_general")
def ragged_dot_general(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """JAX's reference semantics: expand the ragged dim into a dense group axis, then dot_general."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported")
    dn = ragged_dot_dimension_numbers
    lc, rc, lb, rb = _dimension_numbers(dn.dot_dimension_numbers)
    (ragged,) = as_ints(dn.lhs_ragged_dimensions)
    mode = _ragged_mode(ragged, lc, lb)
    l_prefix = _prefix_dims(mode, lhs.ndim, ragged, lc, lb)
    if group_sizes.ndim == 1:
        group_sizes = np.broadcast_to(group_sizes, tuple(lhs.shape[d] for d in l_prefix) + group_sizes.shape)
    dot = dict(precision=precision, preferred_element_type=preferred_element_type)

    def shift(dims):  # dim d of an operand is dim d+1 once the group axis leads
        return [d + 1 for d in dims]

    if mode == "noncontracting":
        (group_dim,) = as_ints(dn.rhs_group_dimensions)
        dims = ((shift(lc) + [0], [*rc, group_dim]), (shift(lb), list(rb)))
        return dot_general(_ragged_to_dense(lhs, ragged, group_sizes, l_prefix), rhs,
                           dimension_numbers=dims, **dot)
    if mode == "contracting":
        rhs_ragged = rc[lc.index(ragged)]
        r_prefix = _prefix_dims(mode, rhs.ndim, rhs_ragged, rc, rb)
        dims = ((shift(lc), shift(rc)), ([0, *shift(lb)], [0, *shift(rb)]))
        return dot_general(_ragged_to_dense(lhs, ragged, group_sizes, l_prefix),
                           _ragged_to_dense(rhs, rhs_ragged, group_sizes, r_prefix),
                           dimension_numbers=dims, **dot)
    return dot_general(lhs, rhs, dimension_numbers=dn.dot_dimension_numbers, **dot)


def _conv_specs(dimension_numbers, ndim: int) -> tuple[tuple[int, ...], ...]:
    if dimension_numbers is None:  # lax's default: NC(spatial) / OI(spatial) / NC(spatial)
        return (tuple(range(ndim)),) * 3
    return tuple(as_ints(getattr(dimension_numbers, f)) for f in ("lhs_spec", "rhs_spec", "out_spec"))


@functools.lru_cache(maxsize=256)
def _einsum_path(subscripts: str, *shapes: tuple[int, ...]) -> list:
    """The contraction order `optimize=True` picks, found once per shape (finding it costs ~100 µs)."""
    return np.einsum_path(subscripts, *(np.empty(s) for s in shapes), optimize="greedy")[0]


@impl("conv_general_dilated")
def conv_general_dilated(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                         feature_group_count, batch_group_count, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """XLA's convolution (a cross-correlation): dilate and pad the input, dilate the kernel, then contract
    every strided window. Feature groups split input channels and output features into G major blocks;
    batch groups split the input batch and the output features into B major blocks."""
    lhs_spec, rhs_spec, out_spec = _conv_specs(dimension_numbers, lhs.ndim)
    out = _out_dtype(lhs, rhs, preferred_element_type)
    work = _work_dtype(out)
    groups, batch_groups = int(feature_group_count), int(batch_group_count)
    x = np.transpose(lhs, lhs_spec).astype(work)  # N, C, spatial...
    w = np.transpose(rhs, rhs_spec).astype(work)  # O, I, spatial...
    spatial = lhs.ndim - 2
    no_pad = [(0, 0, 0)] * 2
    x = pad_array(x, np.zeros((), work), no_pad + [(*as_ints(p), d - 1) for p, d in
                                                   zip(padding, as_ints(lhs_dilation), strict=True)])
    w = pad_array(w, np.zeros((), work), no_pad + [(0, 0, d - 1) for d in as_ints(rhs_dilation)])
    strides = as_ints(window_strides)
    n, c = x.shape[:2]
    o = w.shape[0]
    out_spatial = tuple((size - k) // s + 1 if size >= k else 0
                        for size, k, s in zip(x.shape[2:], w.shape[2:], strides, strict=True))
    if 0 in out_spatial or 0 in w.shape[2:]:
        result = np.zeros((n // batch_groups, o) + out_spatial, work)
    else:
        patches = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=tuple(range(2, 2 + spatial)))
        patches = patches[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides)]
        patches = patches.reshape((batch_groups, n // batch_groups, groups, c // groups) + patches.shape[2:])
        w = w.reshape((batch_groups, groups, o // (batch_groups * groups)) + w.shape[1:])
        outs, ks = string.ascii_lowercase[:spatial], string.ascii_lowercase[spatial:2 * spatial]
        # B batch group, N batch, G feature group, C input channel, P output feature within its group
        subscripts = f"BNGC{outs}{ks},BGPC{ks}->NBGP{outs}"
        result = np.einsum(subscripts, patches, w, optimize=_einsum_path(subscripts, patches.shape, w.shape))
        result = result.reshape((n // batch_groups, o) + out_spatial)
    return _finish(np.transpose(result, np.argsort(out_spec)), out)
