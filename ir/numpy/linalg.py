"""`jax.numpy.linalg` for traced code, over eqjax's linear-algebra primitives (lu, cholesky, qr, svd, eigh,
eig, triangular_solve), built as jax.numpy.linalg builds them (without its custom_jvp wrappers)."""

from __future__ import annotations

import numpy as np

from ir import lax
from ir.numpy._base import _promote_args, int64, ndim, promote_dtypes_inexact, shape
from ir.numpy.contractions import matmul
from ir.numpy.creation import asarray, eye
from ir.numpy.elementwise import abs, conj, divide, log, multiply, not_equal, sqrt, where
from ir.numpy.manipulation import _tracer_like, broadcast_to, reshape, swapaxes
from ir.numpy.reductions import max, prod, sum
from ir.tracing import literal

__all__ = [
    'inv', 'det', 'slogdet', 'solve', 'cholesky', 'qr', 'svd', 'svdvals', 'eigh', 'eigvalsh', 'eig', 'eigvals',
    'norm', 'vector_norm', 'matrix_norm', 'pinv', 'matrix_power', 'matrix_rank', 'lstsq', 'cond', 'multi_dot',
    'outer', 'cross', 'trace', 'diagonal', 'matmul', 'vecdot', 'matrix_transpose', 'tensordot', 'tensorsolve',
    'tensorinv',
]


def _inexact(a):
    (a,) = _promote_args("linalg", _tracer_like(a), kind="inexact")
    return a


def _h(a):
    """Conjugate transpose of the trailing two axes."""
    a = swapaxes(a, -1, -2)
    return conj(a) if a.dtype.is_complex else a


def _lu_solve(lu_, perm, b):
    """Solve with the lu primitive's outputs; `b` is [..., n, k]."""
    from ir.numpy.indexing import take_along_axis
    n = shape(lu_)[-1]
    perm_b = broadcast_to(reshape(perm, shape(perm) + (1,)), shape(b)[:-2] + (n, 1)) if ndim(b) > 2 else \
        reshape(perm, (n, 1))
    perm_b = broadcast_to(perm_b, shape(b)[:-1] + (1,))
    pb = take_along_axis(b, broadcast_to(perm_b, shape(b)), axis=-2, mode="clip")
    y = lax.triangular_solve(lu_, pb, left_side=True, lower=True, unit_diagonal=True)
    return lax.triangular_solve(lu_, y, left_side=True, lower=False)


def solve(a, b):
    a, b = (_tracer_like(x) for x in promote_dtypes_inexact(a, b))
    vector = ndim(b) == ndim(a) - 1
    if vector:
        b = b[..., None]
    lu_, _, perm = lax.lu(a)
    batch = shape(lu_)[:-2]
    b = broadcast_to(b, batch + shape(b)[-2:]) if shape(b)[:-2] != batch else b
    x = _lu_solve(lu_, perm, b)
    return x[..., 0] if vector else x


def inv(a):
    a = _inexact(a)
    n = shape(a)[-1]
    return solve(a, broadcast_to(eye(n, dtype=a.dtype), shape(a)))


def slogdet(a):
    """(sign, log|det|) from the LU factorization, as JAX's `_slogdet_lu`."""
    a = _inexact(a)
    lu_, pivots, _ = lax.lu(a)
    diag = _diag(lu_)
    n = shape(a)[-1]
    parity = sum(not_equal(pivots, lax.iota(pivots.dtype, n)), axis=-1)
    logabs = sum(log(abs(diag)), axis=-1)
    is_zero = lax.reduce_or(lax.eq(diag, literal(0, diag.dtype, False)), (ndim(diag) - 1,))
    if a.dtype.is_complex:
        sign = prod(divide(diag, abs(diag).astype(a.dtype)), axis=-1)
    else:
        sign = prod(lax.sign(diag), axis=-1)
    sign = multiply(sign, where(parity % 2 == 0, 1.0, -1.0).astype(sign.dtype))
    sign = where(is_zero, literal(0, sign.dtype, False), sign)
    logabs = where(is_zero, literal(-np.inf, logabs.dtype, False), logabs)
    return sign, logabs


def _diag(a):
    n = min(shape(a)[-2:])
    idx = np.arange(n)
    return a[..., idx, idx]


def det(a):
    sign, logabs = slogdet(a)
    return multiply(sign, lax.exp(logabs).astype(sign.dtype))


def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    a = _inexact(a)
    if symmetrize_input:
        a = divide(a + _h(a), 2.0)
    low = lax.cholesky_p(a)
    n = shape(a)[-1]
    mask = lax.ge(lax.broadcasted_iota(int64, (n, n), 0), lax.broadcasted_iota(int64, (n, n), 1))
    low = where(mask, low, literal(0, low.dtype, False))
    return _h(low) if upper else low


def qr(a, mode: str = "reduced"):
    a = _inexact(a)
    if mode == "r":
        return lax.qr(a, full_matrices=False)[1]
    q, r = lax.qr(a, full_matrices=mode == "complete")
    return q, r


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    return lax.svd(_inexact(a), full_matrices, compute_uv)


def svdvals(x):
    return svd(x, compute_uv=False)


def eigh(a, UPLO: str | None = None, symmetrize_input: bool = True):  # noqa: N803  (NumPy's name)
    a = _inexact(a)
    if symmetrize_input:
        a = divide(a + _h(a), 2.0)
    v, w = lax.eigh(a, lower=UPLO != "U")
    return w, v


def eigvalsh(a, UPLO: str | None = "L"):  # noqa: N803
    return eigh(a, UPLO)[0]


def eig(a):
    w, vr = lax.eig(_inexact(a), compute_left_eigenvectors=False, compute_right_eigenvectors=True)
    return w, vr


def eigvals(a):
    (w,) = lax.eig(_inexact(a), compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return w


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):  # noqa: A002
    x = _inexact(x)
    if axis is None:
        from ir.numpy.manipulation import ravel
        out = vector_norm(ravel(x), axis=0, ord=ord)
        return reshape(out, (1,) * ndim(x)) if keepdims else out
    ax = abs(x)
    if ord == 2:
        return sqrt(sum(lax.real(x * conj(x)) if x.dtype.is_complex else x * x, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return max(ax, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        from ir.numpy.reductions import min as min_
        return min_(ax, axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum(lax.ne(x, literal(0, x.dtype, False)), axis=axis, dtype=ax.dtype, keepdims=keepdims)
    if ord == 1:
        return sum(ax, axis=axis, keepdims=keepdims)
    p = float(ord)
    return sum(ax ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):  # noqa: A002
    return norm(x, ord, axis=(-2, -1), keepdims=keepdims)


def norm(x, ord=None, axis=None, keepdims: bool = False):  # noqa: A002
    x = _inexact(x)
    if axis is None:
        if ord is None or (ord in ("fro", "f") and ndim(x) == 2) or (ord == 2 and ndim(x) == 1):
            return vector_norm(x, axis=None, keepdims=keepdims)
        axis = tuple(range(ndim(x)))
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axis) == 1:
        return vector_norm(x, axis=axis[0], keepdims=keepdims, ord=2 if ord is None else ord)
    row, col = (a % ndim(x) for a in axis)
    ax = abs(x)
    if ord in (None, "fro", "f"):
        return sqrt(sum(lax.real(x * conj(x)) if x.dtype.is_complex else x * x, axis=axis, keepdims=keepdims))
    from ir.numpy.reductions import min as min_
    if ord in (1, -1):
        colsum = sum(ax, axis=row, keepdims=True)
        out = (max if ord == 1 else min_)(colsum, axis=col, keepdims=True)
    elif ord in (np.inf, -np.inf):
        rowsum = sum(ax, axis=col, keepdims=True)
        out = (max if ord == np.inf else min_)(rowsum, axis=row, keepdims=True)
    elif ord in (2, -2, "nuc"):
        from ir.numpy.manipulation import moveaxis
        s = svd(moveaxis(x, (row, col), (-2, -1)), compute_uv=False)
        out = max(s, axis=-1) if ord == 2 else (min_(s, axis=-1) if ord == -2 else sum(s, axis=-1))
        return lax.expand_dims(out, tuple(sorted((row, col)))) if keepdims else out
    else:
        raise ValueError(f"norm: invalid ord {ord!r} for matrices")
    if keepdims:
        return out
    from ir.numpy.manipulation import squeeze
    return squeeze(out, (row, col))


def pinv(a, rtol=None, hermitian: bool = False):
    a = _inexact(a)
    m, n = shape(a)[-2:]
    u, s, vh = svd(a, full_matrices=False)
    rtol = 10 * _larger(m, n) * float(np.finfo(s.dtype.numpy).eps) if rtol is None else rtol
    cutoff = multiply(max(s, axis=-1, keepdims=True), rtol)
    s_inv = where(s > cutoff, divide(1.0, where(s > cutoff, s, 1.0)), 0.0).astype(s.dtype)
    return matmul(_h(vh) * s_inv[..., None, :].astype(a.dtype), _h(u))


def _larger(a: int, b: int) -> int:
    return a if a > b else b


def matrix_power(a, n: int):
    a = _tracer_like(a)
    if n == 0:
        return broadcast_to(eye(shape(a)[-1], dtype=a.dtype), shape(a))
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def matrix_rank(M, rtol=None, *, tol=None):  # noqa: N803
    M = _inexact(M)  # noqa: N806
    if ndim(M) < 2:
        return sum(abs(M) > 0, dtype=int64)
    s = svd(M, compute_uv=False)
    if tol is None:
        rtol = _larger(*shape(M)[-2:]) * float(np.finfo(s.dtype.numpy).eps) if rtol is None else rtol
        tol = multiply(max(s, axis=-1, keepdims=True), rtol)
    return sum(s > tol, axis=-1, dtype=int64)


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """(x, residuals, rank, singular values) from the SVD, as jax.numpy.linalg.lstsq."""
    a, b = (_tracer_like(x) for x in promote_dtypes_inexact(a, b))
    vector = ndim(b) == 1
    if vector:
        b = b[:, None]
    m, n = shape(a)
    u, s, vh = svd(a, full_matrices=False)
    rcond = float(np.finfo(s.dtype.numpy).eps) * _larger(m, n) if rcond is None else rcond
    mask = s >= multiply(max(s), rcond)
    safe_s = where(mask, s, 1.0).astype(s.dtype)
    s_inv = where(mask, divide(1.0, safe_s), 0.0).astype(a.dtype)[:, None]
    uTb = matmul(_h(u), b)  # noqa: N806
    x = matmul(_h(vh), s_inv * uTb)
    rank = sum(mask, dtype=int64)
    resid = sum(abs(matmul(a, x) - b) ** 2, axis=0) if m > n else asarray(np.zeros((0,)), s.dtype)
    return (x[:, 0] if vector else x), (resid[0] if vector and m > n else resid), rank, s


def cond(x, p=None):
    x = _inexact(x)
    if p is None or p == 2:
        s = svd(x, compute_uv=False)
        from ir.numpy.reductions import min as min_
        return divide(max(s, axis=-1), min_(s, axis=-1))
    return multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


def multi_dot(arrays):
    arrays = [_tracer_like(a) for a in arrays]
    out = arrays[0]
    for a in arrays[1:]:
        out = matmul(out, a)
    return out


def outer(x1, x2, /):
    from ir.numpy.contractions import outer as outer_
    return outer_(x1, x2)


def cross(x1, x2, /, *, axis: int = -1):
    from ir.numpy.polynomials import cross as cross_
    return cross_(x1, x2, axis=axis)


def trace(x, /, *, offset: int = 0, dtype=None):
    from ir.numpy.statistics import trace as trace_
    return trace_(x, offset, -2, -1, dtype)


def diagonal(x, /, *, offset: int = 0):
    from ir.numpy.layout import diagonal as diagonal_
    return diagonal_(x, offset, -2, -1)


def vecdot(x1, x2, /, *, axis: int = -1):
    from ir.numpy.polynomials import vecdot as vecdot_
    return vecdot_(x1, x2, axis=axis)


def matrix_transpose(x, /):
    return swapaxes(x, -1, -2)


def tensordot(x1, x2, /, *, axes=2):
    from ir.numpy.contractions import tensordot as tensordot_
    return tensordot_(x1, x2, axes)


def tensorsolve(a, b, axes=None):
    a = _inexact(a)
    b = _tracer_like(b)
    if axes is not None:
        raise NotImplementedError("tensorsolve: axes")
    out_shape = shape(a)[ndim(b):]
    n = int(np.prod(out_shape))
    x = solve(reshape(a, (-1, n)), reshape(b, (-1,)))
    return reshape(x, out_shape)


def tensorinv(a, ind: int = 2):
    a = _inexact(a)
    out_shape = shape(a)[ind:] + shape(a)[:ind]
    n = int(np.prod(shape(a)[:ind]))
    return reshape(inv(reshape(a, (n, -1))), out_shape)

