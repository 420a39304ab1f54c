"""ir.numpy searching, counting and selecting: searchsorted, nonzero with a static size, bincount, isin."""

from __future__ import annotations

import numpy as np

from ir import lax
from ir.numpy._base import _canon_axis, _promote_args, int64, ndim, shape
from ir.numpy.creation import asarray, full, zeros
from ir.numpy.elementwise import equal, logical_not, where
from ir.numpy.manipulation import _tracer_like, ravel, reshape, stack
from ir.numpy.reductions import any, cumsum, sort, sum
from ir.tracing import literal

__all__ = [
    'searchsorted', 'digitize', 'interp', 'isin', 'nonzero', 'argwhere', 'flatnonzero', 'bincount', 'lexsort',
    'partition', 'argpartition', 'piecewise', 'apply_along_axis', 'apply_over_axes', 'ravel_multi_index',
    'unravel_index', 'choose', 'compress', 'extract', 'histogram', 'histogram_bin_edges', 'gradient', 'unwrap',
    'sort_complex', 'put', 'vectorize',
]


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "compare_all"):
    """Counts of `a` elements below (or at, for 'right') each `v`: a compare-all sum, as JAX's method."""
    a, v = _promote_args("searchsorted", a, v)
    if sorter is not None:
        from ir.numpy.indexing import take
        a = take(a, sorter)
    from ir.numpy.elementwise import less, less_equal
    op = less if side == "left" else less_equal
    vv = reshape(v, shape(v) + (1,))
    return sum(op(a, vv), axis=-1, dtype=int64)


def digitize(x, bins, right: bool = False):
    bins = _tracer_like(bins)
    side = "left" if right else "right"
    if ndim(bins) != 1:
        raise ValueError("digitize: bins must be 1-D")
    increasing = lax.le(bins[0], bins[-1]) if shape(bins)[0] > 1 else asarray(True)
    from ir.numpy.manipulation import flip
    up = searchsorted(bins, x, side)
    down = shape(bins)[0] - searchsorted(flip(bins), x, "left" if side == "right" else "right")
    return where(increasing, up, down)


def interp(x, xp, fp, left=None, right=None, period=None):
    if period is not None:
        raise NotImplementedError("interp: period")
    x, xp, fp = _promote_args("interp", x, xp, fp, kind="inexact")
    n = shape(xp)[0]
    i = lax.clamp(literal(1, int64, False), searchsorted(xp, x, "right"), literal(n - 1, int64, False))
    from ir.numpy.indexing import take
    x0, x1 = take(xp, i - 1, mode="clip"), take(xp, i, mode="clip")
    f0, f1 = take(fp, i - 1, mode="clip"), take(fp, i, mode="clip")
    dx = x1 - x0
    delta = where(dx == 0, 0.0 * x, (x - x0) / where(dx == 0, 1.0 + 0 * dx, dx))
    f = f0 + delta * (f1 - f0)
    f = where(x < xp[0], fp[0] if left is None else left, f)
    return where(x > xp[-1], fp[-1] if right is None else right, f)


def isin(element, test_elements, invert: bool = False):
    element = _tracer_like(element)
    test = ravel(_tracer_like(test_elements))
    out = any(equal(reshape(element, shape(element) + (1,)), test), axis=-1)
    return logical_not(out) if invert else out


def _static_size(size, fn: str) -> int:
    if size is None:
        raise NotImplementedError(f"{fn} has a data-dependent shape under a trace: pass size= (as in JAX)")
    return int(size)


def nonzero(a, *, size=None, fill_value=None):
    a = _tracer_like(a)
    size = _static_size(size, "nonzero")
    flat = ravel(a)
    mask = flat != 0
    n = shape(flat)[0]
    # The k-th nonzero's flat position: the number of positions whose running count is <= k.
    counts = cumsum(mask, dtype=int64)
    ks = lax.iota(int64, size)
    pos = sum(lax.le(reshape(counts, (1, n)), reshape(ks, (size, 1))), axis=1, dtype=int64)
    valid = lax.lt(ks, counts[-1] if n else literal(0, int64, False))
    out = []
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * ndim(a)
    for d, idx in enumerate(unravel_index(lax.min(pos, literal(max(n - 1, 0), int64, False)), shape(a))):
        out.append(where(valid, idx, 0 if fills[d] is None else fills[d]))
    return tuple(out)


def argwhere(a, *, size=None, fill_value=None):
    a = _tracer_like(a)
    if ndim(a) == 0:
        a = reshape(a, (1,))
    return stack(nonzero(a, size=size, fill_value=fill_value), -1)


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(ravel(_tracer_like(a)), size=size, fill_value=fill_value)[0]


def extract(condition, arr, *, size=None, fill_value=0):
    from ir.numpy.indexing import take
    (idx,) = nonzero(ravel(_tracer_like(condition)), size=_static_size(size, "extract"))
    count = sum(ravel(_tracer_like(condition)) != 0, dtype=int64)
    vals = take(ravel(_tracer_like(arr)), idx, mode="clip")
    return where(lax.lt(lax.iota(int64, shape(idx)[0]), count), vals, fill_value)


def compress(condition, a, axis: int | None = None, *, size=None, fill_value=0):
    condition = np.asarray(condition) if not hasattr(condition, "aval") else None
    if condition is None:
        raise NotImplementedError("compress with a traced condition has a data-dependent shape")
    from ir.numpy.indexing import take
    a = _tracer_like(a)
    if axis is None:
        a, axis = ravel(a), 0
    return take(a, np.nonzero(condition)[0], axis=axis, mode="clip")


def bincount(x, weights=None, minlength: int = 0, *, length=None):
    x = _tracer_like(x)
    length = max(_static_size(length, "bincount"), minlength)
    w = asarray(1, int64) if weights is None else _tracer_like(weights)
    from ir.numpy.manipulation import broadcast_to
    out = zeros((length,), w.dtype if weights is not None else int64)
    return out.at[x].add(broadcast_to(w, shape(x)), mode="drop")


def lexsort(keys, axis: int = -1):
    keys = list(keys)[::-1]
    keys = [_tracer_like(k) for k in keys]
    axis = _canon_axis(axis, ndim(keys[0]))
    iota = lax.broadcasted_iota(int64, shape(keys[0]), axis)
    return lax.sort([*keys, iota], axis, True, len(keys))[-1]


def partition(a, kth: int, axis: int = -1):
    """The `kth + 1` smallest (ascending) then the rest (descending), from two `top_k`s, as JAX."""
    a = _tracer_like(a)
    axis = _canon_axis(axis, ndim(a))
    n = shape(a)[axis]
    kth = _canon_axis(kth, n)
    from ir.numpy.elementwise import negative
    from ir.numpy.manipulation import swapaxes
    arr = swapaxes(a, axis, -1)
    bottom = negative(lax.top_k(negative(arr), kth + 1)[0])
    top = lax.top_k(arr, n - kth - 1)[0]
    return swapaxes(lax.concatenate([bottom, top], arr.ndim - 1), -1, axis)


def argpartition(a, kth: int, axis: int = -1):
    """Indices of the `kth + 1` smallest, then of the others in index order (JAX's proxy `top_k`)."""
    a = _tracer_like(a)
    axis = _canon_axis(axis, ndim(a))
    n = shape(a)[axis]
    kth = _canon_axis(kth, n)
    from ir.numpy.elementwise import negative
    from ir.numpy.indexing import put_along_axis
    from ir.numpy.manipulation import swapaxes
    arr = swapaxes(a, axis, -1)
    bottom = lax.top_k(negative(arr), kth + 1)[1]
    proxy = put_along_axis(lax.full(shape(arr), 1.0, "float64"), bottom, 0.0, axis=-1, inplace=False)
    top = lax.top_k(proxy, n - kth - 1)[1]
    return swapaxes(lax.concatenate([bottom, top], arr.ndim - 1), -1, axis)


def piecewise(x, condlist, funclist, *args, **kw):
    x = _tracer_like(x)
    condlist = [condlist] if not isinstance(condlist, (list, tuple)) else list(condlist)
    funclist = list(funclist)
    if len(funclist) == len(condlist) + 1:
        otherwise = funclist.pop()
        from ir.numpy.reductions import any as any_
        rest = logical_not(any_(stack([_tracer_like(c) for c in condlist]), axis=0)) if condlist else None
        condlist.append(rest)
        funclist.append(otherwise)
    out = zeros(shape(x), x.dtype)
    for cond, fn in zip(condlist, funclist, strict=True):
        value = fn(x, *args, **kw) if callable(fn) else fn
        out = where(cond, value, out)
    return out


def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    arr = _tracer_like(arr)
    axis = _canon_axis(axis, ndim(arr))
    from ir.numpy.manipulation import moveaxis
    moved = moveaxis(arr, axis, -1)
    batch = shape(moved)[:-1]
    flat = reshape(moved, (-1, shape(moved)[-1]))
    outs = stack([_tracer_like(func1d(flat[i], *args, **kwargs)) for i in range(shape(flat)[0])])
    out = reshape(outs, batch + shape(outs)[1:])
    tail = ndim(out) - len(batch)
    # the function's result axes go where `axis` was
    perm = list(range(axis)) + list(range(len(batch), ndim(out))) + list(range(axis, len(batch)))
    return lax.transpose(out, perm) if tail else out


def apply_over_axes(func, a, axes):
    a = _tracer_like(a)
    for axis in axes:
        b = func(a, axis)
        a = b if ndim(b) == ndim(a) else lax.expand_dims(b, (_canon_axis(axis, ndim(a)),))
    return a


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C"):
    if order != "C":
        raise NotImplementedError("ravel_multi_index: order='F'")
    strides = np.cumprod((1,) + tuple(dims[::-1]))[:-1][::-1]
    out = None
    for idx, n, stride in zip(multi_index, dims, strides, strict=True):
        idx = _tracer_like(idx)
        if mode == "clip":
            idx = lax.clamp(literal(0, idx.dtype, False), idx, literal(n - 1, idx.dtype, False))
        elif mode == "wrap":
            from ir.numpy.elementwise import remainder
            idx = remainder(idx, n)
        term = idx * int(stride)
        out = term if out is None else out + term
    return out


def unravel_index(indices, shape_):
    indices = _tracer_like(indices)
    from ir.numpy.elementwise import floor_divide, remainder
    out = []
    total = int(np.prod(shape_))
    clamped = lax.clamp(literal(-total, indices.dtype, False), indices, literal(total - 1, indices.dtype, False))
    clamped = where(clamped < 0, clamped + total, clamped)
    for n in reversed(shape_):
        out.append(remainder(clamped, n))
        clamped = floor_divide(clamped, n)
    return tuple(reversed(out))


def choose(a, choices, out=None, mode: str = "raise"):
    a = _tracer_like(a)
    from ir.numpy.manipulation import broadcast_arrays
    choices = broadcast_arrays(a, *[_tracer_like(c) for c in choices])[1:]
    result = choices[0]
    for k in range(1, len(choices)):
        result = where(a == k, choices[k], result)
    return result


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    a = _tracer_like(a)
    if not isinstance(bins, (int, np.integer)):
        return asarray(bins)
    from ir.numpy.reductions import max as max_
    from ir.numpy.reductions import min as min_
    lo, hi = (min_(a), max_(a)) if range is None else (asarray(float(range[0])), asarray(float(range[1])))
    lo = lax.convert_element_type(lo, lax.to_dtype("float64"))
    hi = lax.convert_element_type(hi, lax.to_dtype("float64"))
    hi = where(hi == lo, hi + 0.5, hi)
    lo = where(hi - 0.5 == lo, lo - 0.5, lo)
    steps = asarray(np.linspace(0.0, 1.0, int(bins) + 1))
    return lo + (hi - lo) * steps


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    edges = histogram_bin_edges(a, bins, range)
    flat = ravel(_tracer_like(a))
    n = shape(edges)[0] - 1
    idx = searchsorted(edges, flat, "right") - 1
    idx = where(flat == edges[-1], n - 1, idx)
    w = asarray(1.0) * (flat * 0 + 1) if weights is None else ravel(_tracer_like(weights))
    counts = zeros((n,), w.dtype).at[idx].add(w, mode="drop")
    if density:
        from ir.numpy.statistics import diff
        counts = counts / (diff(edges) * sum(counts))
    return counts, edges


def gradient(f, *varargs, axis=None, edge_order: int = 1):
    f = _tracer_like(f)
    axes = tuple(range(ndim(f))) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    spacing = list(varargs) if varargs else [1.0] * len(axes)
    if len(spacing) == 1 and len(axes) > 1:
        spacing = spacing * len(axes)
    out = []
    for ax, h in zip(axes, spacing, strict=True):
        ax = _canon_axis(ax, ndim(f))
        n = shape(f)[ax]
        if ndim(h) != 0:
            raise NotImplementedError("gradient: coordinate arrays (only scalar spacings)")
        sl = lax.slice_in_dim
        interior = (sl(f, 2, n, axis=ax) - sl(f, 0, n - 2, axis=ax)) / (2.0 * h)
        first = (sl(f, 1, 2, axis=ax) - sl(f, 0, 1, axis=ax)) / h
        last = (sl(f, n - 1, n, axis=ax) - sl(f, n - 2, n - 1, axis=ax)) / h
        from ir.numpy.manipulation import concatenate
        out.append(concatenate([first, interior, last], ax))
    return out[0] if len(out) == 1 else out


def unwrap(p, discont=None, axis: int = -1, period=2 * np.pi):
    p = _tracer_like(p)
    from ir.numpy.elementwise import abs as abs_
    from ir.numpy.elementwise import remainder
    from ir.numpy.manipulation import concatenate
    from ir.numpy.statistics import diff
    dd = diff(p, axis=axis)
    discont = period / 2 if discont is None else discont
    interval_high = period / 2
    ddmod = remainder(dd + interval_high, period) - interval_high
    ddmod = where((ddmod == -interval_high) & (dd > 0), interval_high, ddmod)
    correction = where(abs_(dd) < discont, 0.0, ddmod - dd)
    axis = _canon_axis(axis, ndim(p))
    first = lax.slice_in_dim(p, 0, 1, axis=axis)
    return concatenate([first, lax.slice_in_dim(p, 1, shape(p)[axis], axis=axis) + cumsum(correction, axis)], axis)


def sort_complex(a):
    a = _tracer_like(a)
    a = a if a.dtype.is_complex else lax.convert_element_type(a, lax.to_dtype("complex128"))
    return sort(a)


def put(a, ind, v, mode=None, *, inplace: bool = True):
    if inplace:
        raise ValueError("ir.numpy arrays are immutable: call put(..., inplace=False)")
    a = _tracer_like(a)
    flat = ravel(a)
    ind = ravel(_tracer_like(ind))
    from ir.numpy.manipulation import broadcast_to
    v = ravel(_tracer_like(v))
    v = broadcast_to(v, shape(ind)) if shape(v) != shape(ind) else v
    return reshape(flat.at[ind].set(v, mode=mode), shape(a))


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """Elementwise over broadcast arguments by looping over the elements (traced once per element)."""
    if signature is not None:
        raise NotImplementedError("vectorize: signature")

    def wrapped(*args):
        from ir.numpy.manipulation import broadcast_arrays
        arrays = broadcast_arrays(*[_tracer_like(x) for i, x in enumerate(args) if i not in excluded])
        s = shape(arrays[0])
        flat = [ravel(x) for x in arrays]
        outs = []
        for k in range(int(np.prod(s))):
            it = iter(flat)
            call = [x if i in excluded else next(it)[k] for i, x in enumerate(args)]
            outs.append(_tracer_like(pyfunc(*call)))
        return reshape(stack(outs), s) if outs else full(s, 0)

    return wrapped
