"""What generated programs call besides NumPy and the implementations: argument checks, the
floating-point error state, and the wrapping of NumPy scalars.

Generated code runs with NumPy's floating-point errors ignored, as every implementation does
(`np.errstate(all="ignore")`), but entering `np.errstate` costs about a microsecond: the state is set
once per call of a compiled program through the context variable NumPy's own `errstate` sets, when
this NumPy has it, and through `np.errstate` otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eval.interpreter import _coerce_arg
from ir.core import ShapedArray

try:  # NumPy >= 2: errstate is a context variable holding an extobj
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    _IGNORE = _make_extobj(all="ignore")

    def ignore_fp_errors():
        """Ignore floating-point errors until `restore_fp_errors(token)`; returns the token."""
        return _extobj_contextvar.set(_IGNORE)

    def restore_fp_errors(token) -> None:
        _extobj_contextvar.reset(token)

except ImportError:  # pragma: no cover - other NumPy versions
    def ignore_fp_errors():
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def restore_fp_errors(token) -> None:
        token.__exit__(None, None, None)


def coerce_arg(i: int, x: Any, aval: ShapedArray) -> np.ndarray:
    """An argument as the interpreter takes it (dtype and shape checked), in C order: generated code
    assumes C-contiguous inputs, so its results equal the interpreter's on C-contiguous arrays."""
    return np.asarray(_coerce_arg(i, x, aval), order="C")  # (ascontiguousarray makes 0-d arrays 1-d)


def as_array(x: Any) -> np.ndarray:
    """A 0-d result of an inlined NumPy expression (possibly a NumPy scalar) as a 0-d array."""
    return x if type(x) is np.ndarray else np.asarray(x)
