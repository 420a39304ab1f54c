"""ir.numpy's dtype names and queries: aliases, NumPy's abstract scalar classes, finfo, promote_types."""

from __future__ import annotations

from typing import Any

import numpy as np

from ir import dtypes as _dt
from ir.lax import to_dtype
from ir.numpy._base import complex64, complex128, float32, float64, uint64
from ir.tracing import Tracer, aval_of

__all__ = [
    'bool', 'double', 'single', 'cdouble', 'csingle', 'uint', 'dtype', 'generic', 'number', 'integer',
    'signedinteger', 'unsignedinteger', 'inexact', 'floating', 'complexfloating', 'character', 'flexible',
    'object_', 'ndarray', 'ComplexWarning', 'finfo', 'iinfo', 'promote_types', 'can_cast', 'issubdtype',
    'isdtype', 'isscalar', 'iterable', 'iscomplexobj', 'isrealobj',
]

bool = _dt.bool_  # noqa: A001  (jax.numpy's name)
double, single, cdouble, csingle, uint = float64, float32, complex128, complex64, uint64
# NumPy's abstract scalar classes, which jax.numpy re-exports for `issubdtype`.
generic, number, integer, signedinteger = np.generic, np.number, np.integer, np.signedinteger
unsignedinteger, inexact, floating, complexfloating = np.unsignedinteger, np.inexact, np.floating, np.complexfloating
character, flexible, object_ = np.character, np.flexible, np.object_
ndarray = Tracer  # what ir.numpy functions return inside a trace


class ComplexWarning(RuntimeWarning):
    """Casting complex values to a real dtype discards the imaginary part."""


def _numpy_dtype(x: Any) -> np.dtype:
    if isinstance(x, _dt.DType):
        return x.numpy
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    try:
        return np.dtype(x)
    except TypeError:
        return aval_of(x).dtype.numpy


def dtype(x: Any) -> _dt.DType:
    """The ir DType of a dtype name, NumPy dtype, DType or array."""
    if isinstance(x, (Tracer, np.ndarray)):
        return aval_of(x).dtype
    return to_dtype(x)


def finfo(x: Any):
    return _dt.finfo(dtype(x))


def iinfo(x: Any):
    return _dt.iinfo(dtype(x))


def promote_types(a: Any, b: Any) -> _dt.DType:
    return _dt.result_type(dtype(a), dtype(b))


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    return np.can_cast(_numpy_dtype(from_), _numpy_dtype(to), casting)


def issubdtype(arg1: Any, arg2: Any) -> bool:
    return np.issubdtype(_numpy_dtype(arg1), _numpy_dtype(arg2))


_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}


def isdtype(dtype_: Any, kind: Any) -> bool:
    """The array API's `isdtype`: `kind` a dtype, a kind name, or a tuple of those."""
    dt = dtype(dtype_)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return any(_KINDS[k].__contains__(dt.kind) if isinstance(k, str) else dt == dtype(k) for k in kinds)


def isscalar(element: Any) -> bool:
    if isinstance(element, Tracer):
        return element.ndim == 0
    return np.isscalar(element) or (isinstance(element, np.ndarray) and element.ndim == 0)


def iterable(y: Any) -> bool:
    try:
        iter(y)
    except TypeError:
        return False
    return True


def iscomplexobj(x: Any) -> bool:
    return aval_of(x).dtype.is_complex if not isinstance(x, (list, tuple)) else np.iscomplexobj(x)


def isrealobj(x: Any) -> bool:
    return not iscomplexobj(x)
