"""What generated programs call besides NumPy and the implementations: argument checks, the
floating-point error state, the wrapping of NumPy scalars, and elementwise work split over threads.

Generated code runs with NumPy's floating-point errors ignored, as every implementation does
(`np.errstate(all="ignore")`), but entering `np.errstate` costs about a microsecond: the state is set
once per call of a compiled program through the context variable NumPy's own `errstate` sets, when
this NumPy has it, and through `np.errstate` otherwise.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
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


def dense(x: np.ndarray) -> bool:
    """C or Fortran order: a copy in order "K" has the same strides (the test inline products need)."""
    flags = x.flags
    return flags.c_contiguous or flags.f_contiguous


def power(x, y, shape: tuple[int, ...]) -> np.ndarray:
    """`pow` of float64 or complex128 as `eval/impls/elementwise._pow` computes it (np.power on full,
    contiguous operands: NumPy turns a stride-0 exponent of 0.5 into sqrt), without its copies of
    operands that are already full and contiguous."""
    x, y = (v if type(v) is np.ndarray and v.shape == shape and v.flags.c_contiguous
            else np.ascontiguousarray(np.broadcast_to(v, shape)) for v in (x, y))
    return np.power(x.reshape(-1), y.reshape(-1)).reshape(shape)  # 1-d: a 0-d exponent is a "scalar" too


def as_array(x: Any) -> np.ndarray:
    """A 0-d result of an inlined NumPy expression (possibly a NumPy scalar) as a 0-d array."""
    return x if type(x) is np.ndarray else np.asarray(x)


# --- elementwise work on several threads --------------------------------------------------------------------

PARALLEL_MIN = 1 << 17  # elements: below this, handing work to a thread costs more than it saves
_threads = None
_pool: ThreadPoolExecutor | None = None


def num_threads() -> int:
    """Threads that large elementwise operations are split over: `set_num_threads(n)`, else
    $EQJAX_NUM_THREADS, else the cores this process may use."""
    if _threads is not None:
        return _threads
    if os.environ.get("EQJAX_NUM_THREADS"):
        return max(1, int(os.environ["EQJAX_NUM_THREADS"]))
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def set_num_threads(n: int | None) -> None:
    """Split large elementwise operations over `n` threads (1: never; None: the default)."""
    global _threads, _pool
    _threads = None if n is None else max(1, int(n))
    if _pool is not None:
        _pool.shutdown(wait=False)
        _pool = None


def _blocks(rows: int, work) -> None:
    """`work(lo, hi)` for row blocks covering `rows`, the first on this thread, the others on the pool."""
    global _pool
    n = num_threads()
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(n - 1, 1), thread_name_prefix="eqjax-numpy")
    step = -(-rows // n)
    futures = [_pool.submit(_in_worker, work, lo, min(lo + step, rows)) for lo in range(step, rows, step)]
    work(0, min(step, rows))
    for f in futures:
        f.result()


def _in_worker(work, lo: int, hi: int) -> None:
    token = ignore_fp_errors()  # worker threads do not inherit the caller's error state
    try:
        work(lo, hi)
    finally:
        restore_fp_errors(token)


def _split(x, out: np.ndarray) -> bool:
    return type(x) is np.ndarray and x.ndim == out.ndim and x.shape[0] == out.shape[0]


def parallel(ufunc, out: np.ndarray | None, shape: tuple, dtype: np.dtype, *operands) -> np.ndarray:
    """`ufunc(*operands)` (into `out`, else a new C-contiguous array) computed in row blocks on
    `num_threads()` threads. Elementwise, so bit for bit what one call gives; NumPy releases the GIL
    inside the loops."""
    if out is None:
        out = np.empty(shape, dtype)
    if num_threads() == 1:
        return ufunc(*operands, out=out)

    def work(lo: int, hi: int) -> None:
        ufunc(*(x[lo:hi] if _split(x, out) else x for x in operands), out=out[lo:hi])

    _blocks(shape[0], work)
    return out


def parallel_reduce(ufunc, x: np.ndarray, axes: tuple, dtype: np.dtype, initial, shape: tuple) -> np.ndarray:
    """`ufunc.reduce(x, axes, ...)` with axis 0 kept, in blocks of rows on `num_threads()` threads: each
    row is reduced exactly as in one call."""
    out = np.empty(shape, dtype)
    if num_threads() == 1:
        return ufunc.reduce(x, axis=axes, dtype=dtype, initial=initial, out=out)
    _blocks(x.shape[0], lambda lo, hi: ufunc.reduce(x[lo:hi], axis=axes, dtype=dtype, initial=initial,
                                                    out=out[lo:hi]))
    return out
