"""dtype names, shape queries, and JAX's dtype and rank promotion for ir.numpy."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from ir import dtypes as _dt
from ir import lax
from ir.core import Literal
from ir.tracing import Tracer, aval_of, const_tracer, literal

bool_ = _dt.bool_
int8, int16, int32, int64 = _dt.int8, _dt.int16, _dt.int32, _dt.int64
uint8, uint16, uint32, uint64 = _dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64
bfloat16, float16, float32, float64 = _dt.bfloat16, _dt.float16, _dt.float32, _dt.float64
complex64, complex128 = _dt.complex64, _dt.complex128
float_, int_, complex_ = float64, int64, complex128
inf, nan, pi, e = np.inf, np.nan, np.pi, np.e
newaxis = None

# This module defines sum/max/min/abs/all/any/round like NumPy; helpers use these for Python's.
_python_max, _python_min, _python_abs, _python_sum = builtins.max, builtins.min, builtins.abs, builtins.sum


def _is_python_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def _check_arraylike(name: str, *xs: Any) -> None:
    for i, x in enumerate(xs):
        if not isinstance(x, (Tracer, Literal, np.ndarray, np.generic, bool, int, float, complex)):
            raise TypeError(f"{name} requires arrays or scalars, got {type(x).__name__} at position {i}")


def shape(x) -> tuple[int, ...]:
    return aval_of(x).shape


def ndim(x) -> int:
    return aval_of(x).ndim


def size(x) -> int:
    return aval_of(x).size


def result_type(*xs) -> _dt.DType:
    return _dt.promote(*((a.dtype, a.weak_type) for a in map(aval_of, xs)))[0]


def _as_traced(x: Any) -> Any:
    """A value for the caller: constants (Literals, NumPy arrays) become tracers of the trace."""
    return x if isinstance(x, Tracer) else const_tracer(x)


def _convert(x: Any, dtype: _dt.DType, weak_type: bool = False) -> Any:
    """JAX's `_convert_element_type`: traced values get an equation, constants are converted now."""
    if isinstance(x, Tracer):
        return lax.convert_element_type(x, dtype, weak_type)
    if isinstance(x, np.ndarray) and x.ndim > 0:
        return x if x.dtype == dtype.numpy else x.astype(dtype.numpy)
    return literal(x, dtype, weak_type)


def promote_dtypes(*xs: Any) -> list[Any]:
    if len(xs) < 2:
        return list(xs)
    dtype, weak = _dt.promote(*((a.dtype, a.weak_type) for a in map(aval_of, xs)))
    return [_convert(x, dtype, weak) for x in xs]


def _to_inexact(dt: _dt.DType) -> _dt.DType:
    return dt if dt.is_inexact else float64


def _to_numeric(dt: _dt.DType) -> _dt.DType:
    return int64 if dt.is_bool else dt


def promote_dtypes_inexact(*xs: Any) -> list[Any]:
    dtype, weak = _dt.promote(*((a.dtype, a.weak_type) for a in map(aval_of, xs)))
    return [_convert(x, _to_inexact(dtype), weak) for x in xs]


def promote_dtypes_numeric(*xs: Any) -> list[Any]:
    dtype, weak = _dt.promote(*((a.dtype, a.weak_type) for a in map(aval_of, xs)))
    return [_convert(x, _to_numeric(dtype), weak) for x in xs]


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    rank = _python_max((len(s) for s in shapes), default=0)
    out = []
    for dims in zip(*((1,) * (rank - len(s)) + tuple(s) for s in shapes), strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {[tuple(s) for s in shapes]} cannot be broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def promote_shapes(name: str, *xs: Any) -> list[Any]:
    """Rank promotion as JAX's `promote_shapes`: leading 1s unless ranks agree or only scalars differ."""
    if len(xs) < 2:
        return list(xs)
    shapes = [aval_of(x).shape for x in xs]
    if builtins.all(len(s) == len(shapes[0]) for s in shapes[1:]):
        return list(xs)
    if len({len(s) for s in shapes if s}) < 2:
        return list(xs)
    rank = len(broadcast_shapes(*shapes))
    return [lax.broadcast_to_rank(x, rank) for x in xs]


def _promote_args(name: str, *xs: Any, kind: str = "") -> list[Any]:
    _check_arraylike(name, *xs)
    promote = {"": promote_dtypes, "inexact": promote_dtypes_inexact, "numeric": promote_dtypes_numeric}[kind]
    return promote_shapes(name, *promote(*xs))


def _canon_axis(axis: int, nd: int) -> int:
    if not -nd <= axis < _python_max(nd, 1):
        raise ValueError(f"axis {axis} is out of bounds for an array of rank {nd}")
    return axis % nd if nd else 0
