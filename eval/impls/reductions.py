"""NumPy implementations of reductions: monoid reductions, argmax/argmin, variadic `reduce`, cumulative
ops, window reductions and the max-pooling gradient helpers `select_and_{scatter,gather}_add`.

Reductions with a reducer jaxpr (`reduce`, `reduce_window`) fold the reducer left to right over the
reduced elements, accumulator first, as XLA on CPU does: `acc = reducer(acc, x)`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from eval.impls.arrays import pad_array
from eval.registry import impl
from ir.params import as_ints

_NARROW_FLOATS = frozenset(np.dtype(t) for t in ("float16", "bfloat16"))


def _work_dtype(dtype: np.dtype) -> np.dtype:
    """float16/bfloat16 are computed in float32 and rounded back once at the end."""
    return np.dtype(np.float32) if dtype in _NARROW_FLOATS else dtype


def _max_identity(dtype: np.dtype):
    """The identity of max: -inf for floats, the smallest integer, False."""
    if dtype.kind == "f" or dtype in _NARROW_FLOATS:
        return np.array(-np.inf, dtype)
    if dtype.kind == "b":
        return np.array(False)
    return np.array(np.iinfo(dtype).min, dtype)


def _min_identity(dtype: np.dtype):
    if dtype.kind == "f" or dtype in _NARROW_FLOATS:
        return np.array(np.inf, dtype)
    if dtype.kind == "b":
        return np.array(True)
    return np.array(np.iinfo(dtype).max, dtype)


def _identity(name: str, dtype: np.dtype):
    if name in ("max", "min"):
        return (_max_identity if name == "max" else _min_identity)(dtype)
    if name == "and":
        return np.invert(np.zeros((), dtype))
    return np.array(1 if name == "prod" else 0, dtype)


_MONOIDS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
            "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _check_monoid_dtype(primitive: str, name: str, dtype: np.dtype) -> None:
    if name in ("max", "min") and dtype.kind == "c":
        raise NotImplementedError(f"{primitive}: complex operands are not supported")
    if name in ("and", "or", "xor") and dtype.kind not in "biu":
        raise TypeError(f"{primitive}: needs a bool or integer operand, got {dtype}")


def _reduce_monoid(name: str, x, *, axes, out_sharding=None):
    _check_monoid_dtype(f"reduce_{name}", name, x.dtype)
    work = _work_dtype(x.dtype)
    result = _MONOIDS[name].reduce(x.astype(work, copy=False), axis=as_ints(axes), dtype=work,
                                   initial=_identity(name, work))
    return np.asarray(result).astype(x.dtype, copy=False)


for _name in _MONOIDS:
    impl(f"reduce_{_name}")(functools.partial(_reduce_monoid, _name))


def _arg_reduce(choose, x, *, axes, index_dtype):
    """First index of the max (min); a NaN counts as the max (min), the first NaN wins, like XLA."""
    if x.dtype.kind == "c":
        raise NotImplementedError(f"{choose.__name__}: complex operands are not supported")
    (axis,) = as_ints(axes)
    if x.shape[axis] == 0:
        return np.zeros(x.shape[:axis] + x.shape[axis + 1:], index_dtype.numpy)
    return np.asarray(choose(x.astype(_work_dtype(x.dtype), copy=False), axis=axis)).astype(index_dtype.numpy)


impl("argmax")(functools.partial(_arg_reduce, np.argmax))
impl("argmin")(functools.partial(_arg_reduce, np.argmin))


def _scalars(arrays, index):
    return [np.asarray(a[index]) for a in arrays]


def _fold(reducer, consts, inits, columns):
    """Fold `reducer` along the last axis of `columns` (each of shape (n, k)); n results per column."""
    from eval.interpreter import eval_jaxpr

    n = columns[0].shape[0]
    outs = [np.empty(n, init.dtype) for init in inits]
    for i in range(n):
        acc = list(inits)
        for j in range(columns[0].shape[1]):
            acc = eval_jaxpr(reducer, *acc, *_scalars(columns, (i, j)), consts=consts)
        for out, value in zip(outs, acc, strict=True):
            out[i] = value
    return outs


@impl("reduce")
def reduce(*args, jaxpr, dimensions, computation=None):
    """Variadic reduce: operands then one scalar init value per operand; the reducer is `jaxpr`."""
    operands, inits = args[:len(args) // 2], args[len(args) // 2:]
    dims = as_ints(dimensions)
    kept = [d for d in range(operands[0].ndim) if d not in dims]
    out_shape = tuple(operands[0].shape[d] for d in kept)
    reduced = math.prod(operands[0].shape[d] for d in dims)
    columns = [np.transpose(x, kept + list(dims)).reshape(math.prod(out_shape), reduced) for x in operands]
    outs = _fold(jaxpr, None, inits, columns)
    return tuple(o.reshape(out_shape) for o in outs)


_ACCUMULATORS = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum, "cummin": np.minimum,
                 "cumlogsumexp": np.logaddexp}


def _cumulative(name: str, x, *, axis, reverse):
    if name == "cumlogsumexp" and not (x.dtype.kind == "f" or x.dtype in _NARROW_FLOATS):
        raise TypeError(f"cumlogsumexp: needs a real floating operand, got {x.dtype}")
    if name in ("cummax", "cummin") and x.dtype.kind == "c":
        raise NotImplementedError(f"{name}: complex operands are not supported")
    axis, work = int(axis), _work_dtype(x.dtype)
    y = np.flip(x, axis) if reverse else x
    y = _ACCUMULATORS[name].accumulate(y.astype(work, copy=False), axis=axis, dtype=work)
    return (np.flip(y, axis) if reverse else y).astype(x.dtype)


for _name in _ACCUMULATORS:
    impl(_name)(functools.partial(_cumulative, _name))


def windows(x, fill, *, window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None):
    """Every window of `x` as an array of shape `out_shape + (window size,)`, window elements in
    row-major order. Base dilation holes and padding hold `fill`, as in XLA's ReduceWindow."""
    dims, strides = as_ints(window_dimensions), as_ints(window_strides)
    base = as_ints(base_dilation) or (1,) * x.ndim
    wdil = as_ints(window_dilation) or (1,) * x.ndim
    padded = pad_array(x, fill, [(lo, hi, b - 1) for (lo, hi), b in zip(padding, base, strict=True)])
    spans = [(w - 1) * d + 1 for w, d in zip(dims, wdil, strict=True)]
    if any(n < s for n, s in zip(padded.shape, spans, strict=True)):
        out_shape = tuple((n - s) // st + 1 if n >= s else 0
                          for n, s, st in zip(padded.shape, spans, strides, strict=True))
        return np.empty(out_shape + (math.prod(dims),), x.dtype)
    view = np.lib.stride_tricks.sliding_window_view(padded, spans)
    view = view[tuple(slice(None, None, st) for st in strides) + tuple(slice(None, None, d) for d in wdil)]
    return view.reshape(view.shape[:x.ndim] + (math.prod(dims),))


def _reduce_window_monoid(name: str, x, **window):
    _check_monoid_dtype(f"reduce_window_{name}", name, x.dtype)
    work = _work_dtype(x.dtype)
    patches = windows(x.astype(work, copy=False), _identity(name, work), **window)
    return np.asarray(_MONOIDS[name].reduce(patches, axis=-1, dtype=work)).astype(x.dtype, copy=False)


for _name in ("sum", "max", "min"):
    impl(f"reduce_window_{_name}")(functools.partial(_reduce_window_monoid, _name))


@impl("reduce_window")
def reduce_window(*args, jaxpr, consts=(), **window):
    """Generic reduce_window: operands then one scalar init value per operand; padding holds the init."""
    operands, inits = args[:len(args) // 2], args[len(args) // 2:]
    patches = [windows(x, init, **window) for x, init in zip(operands, inits, strict=True)]
    out_shape = patches[0].shape[:-1]
    columns = [p.reshape(math.prod(out_shape), p.shape[-1]) for p in patches]
    outs = _fold(jaxpr, list(consts) or None, inits, columns)
    return tuple(o.reshape(out_shape) for o in outs)


_SELECTORS = {"ge": np.greater_equal, "le": np.less_equal}


def _selector(primitive: str, select_prim):
    name = str(select_prim).removesuffix("_p")
    if name not in _SELECTORS:
        raise NotImplementedError(f"{primitive}: select_prim must be ge or le, got {select_prim}")
    return name, _SELECTORS[name]


@impl("select_and_gather_add")
def select_and_gather_add(tangents, operand, *, select_prim, window_dimensions, window_strides, padding,
                          base_dilation=None, window_dilation=None):
    """The tangent at the max (ge) or min (le) of each window of `operand`; the first one on ties."""
    name, select = _selector("select_and_gather_add", select_prim)
    window = dict(window_dimensions=window_dimensions, window_strides=window_strides, padding=padding,
                  base_dilation=base_dilation, window_dilation=window_dilation)
    keys = windows(operand, (_max_identity if name == "ge" else _min_identity)(operand.dtype), **window)
    values = windows(tangents, np.zeros((), tangents.dtype), **window)
    best_key = np.full(keys.shape[:-1], (_max_identity if name == "ge" else _min_identity)(operand.dtype))
    best = np.zeros(keys.shape[:-1], tangents.dtype)
    for j in range(keys.shape[-1]):
        keep = select(best_key, keys[..., j])
        best_key = np.where(keep, best_key, keys[..., j])
        best = np.where(keep, best, values[..., j])
    return best


@impl("select_and_scatter_add")
def select_and_scatter_add(source, operand, *, select_prim, window_dimensions, window_strides, padding):
    """Adds each `source` element at the position its window of `operand` selects (XLA SelectAndScatter:
    the first element is selected, and a later one replaces it unless select(selected, later))."""
    name, select = _selector("select_and_scatter_add", select_prim)
    pads = [tuple(as_ints(p)) for p in padding]
    if any(p < 0 for lo_hi in pads for p in lo_hi):
        raise NotImplementedError(f"select_and_scatter_add: negative padding {pads} is not supported")
    filler = (_max_identity if name == "ge" else _min_identity)(operand.dtype)
    window = dict(window_dimensions=window_dimensions, window_strides=window_strides, padding=pads)
    keys = windows(operand, filler, **window)
    padded_shape = pad_array(operand, filler, [(lo, hi, 0) for lo, hi in pads]).shape
    positions = windows(np.arange(math.prod(padded_shape)).reshape(padded_shape), -1,
                        window_dimensions=window_dimensions, window_strides=window_strides,
                        padding=[(0, 0)] * operand.ndim)
    chosen_key, chosen = keys[..., 0], positions[..., 0]
    for j in range(1, keys.shape[-1]):
        keep = select(chosen_key, keys[..., j])
        chosen_key = np.where(keep, chosen_key, keys[..., j])
        chosen = np.where(keep, chosen, positions[..., j])
    out = np.zeros(math.prod(padded_shape), source.dtype)
    (np.logical_or if source.dtype.kind == "b" else np.add).at(out, chosen.ravel(), source.ravel())
    crop = tuple(slice(lo, lo + n) for (lo, _), n in zip(pads, operand.shape, strict=True))
    return np.ascontiguousarray(out.reshape(padded_shape)[crop])
