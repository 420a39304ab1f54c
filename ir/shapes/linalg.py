"""Shape/dtype rules of the linear-algebra primitives (jax/_src/lax/linalg.py).

As in JAX's `linalg_primitive`, each operand has a fixed number of trailing core dimensions
(2 for a matrix, 1 for a vector) after shared leading batch dimensions; the per-primitive rule
sees only the core shapes and the batch dimensions are put back in front of every result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from ir.core import ShapedArray
from ir.dtypes import DType, complex64, complex128, float32, float64, int32
from ir.errors import JaxprTypeError
from ir.primitives import shape_rule

Shape = tuple[int, ...]
_REAL_OF = {complex64: float32, complex128: float64}


def _real(dtype: DType) -> DType:
    return _REAL_OF.get(dtype, dtype)


def _complex(dtype: DType) -> DType:
    if dtype.is_complex:
        return dtype
    return complex128 if dtype.bits > 32 else complex64


def _square(prim: str, shape: Shape) -> int:
    if shape[0] != shape[1]:
        raise JaxprTypeError("operand must be a (batch of) square matrices", primitive=prim,
                             expected="[..., n, n]", actual=f"[..., {shape[0]}, {shape[1]}]")
    return shape[0]


def _batched(prim: str, ranks: Sequence[int], avals: Sequence[ShapedArray], *, batching: bool = True,
             kinds: Sequence[str] | None = None, same_dtype: bool = True) -> tuple[Shape, list[Shape]]:
    """Split each operand into (batch dims, core dims), checking ranks, batch agreement and dtypes."""
    if len(avals) != len(ranks):
        raise JaxprTypeError(f"takes {len(ranks)} operands", primitive=prim, expected=len(ranks),
                             actual=len(avals))
    kinds = kinds or ["fc"] * len(ranks)
    batches, cores = [], []
    for i, (rank, aval, allowed) in enumerate(zip(ranks, avals, kinds, strict=True)):
        if aval.ndim < rank or (not batching and aval.ndim != rank):
            need = f"rank {'exactly' if not batching else 'at least'} {rank}"
            raise JaxprTypeError(f"operand {i} has the wrong rank", primitive=prim, expected=need,
                                 actual=str(aval))
        if aval.dtype.kind not in allowed:
            names = {"f": "float", "c": "complex", "i": "signed int"}
            raise JaxprTypeError(f"operand {i} has an unsupported dtype", primitive=prim,
                                 expected=" or ".join(names[k] for k in allowed), actual=str(aval))
        split = aval.ndim - rank
        batches.append(aval.shape[:split])
        cores.append(aval.shape[split:])
    if any(b != batches[0] for b in batches[1:]):
        raise JaxprTypeError("operands must share their batch dimensions", primitive=prim,
                             expected=str(batches[0]), actual=", ".join(map(str, batches)))
    if same_dtype and any(a.dtype != avals[0].dtype for a in avals[1:]):
        raise JaxprTypeError("operands must have the same dtype", primitive=prim,
                             expected=str(avals[0].dtype), actual=", ".join(str(a.dtype) for a in avals))
    return batches[0], cores


def _results(batch: Shape, shapes_dtypes: Sequence[tuple[Shape, DType]]) -> list[ShapedArray]:
    return [ShapedArray(batch + tuple(shape), dtype) for shape, dtype in shapes_dtypes]


def _linalg_rule(prim: str, ranks: Sequence[int], core_rule: Callable, *avals: ShapedArray,
                 **params) -> list[ShapedArray]:
    batch, cores = _batched(prim, ranks, avals)
    return _results(batch, core_rule(prim, avals[0].dtype, *cores, **params))


def _register(prim: str, ranks: Sequence[int]):
    def register(core_rule: Callable) -> Callable:
        shape_rule(prim)(partial(_linalg_rule, prim, ranks, core_rule))
        return core_rule
    return register


@_register("cholesky", (2,))
def cholesky_core(prim, dtype, a, **_):
    _square(prim, a)
    return [(a, dtype)]


@_register("triangular_solve", (2, 2))
def triangular_solve_core(prim, dtype, a, b, *, left_side=False, **_):
    m = _square(prim, a)
    common = b[0] if left_side else b[1]
    if common != m:
        side = "[..., m, n] (left_side=True)" if left_side else "[..., n, m] (left_side=False)"
        raise JaxprTypeError(f"b must be {side} for a of shape [..., {m}, {m}]", primitive=prim,
                             expected=f"m={m}", actual=f"b core shape {b}")
    return [(b, dtype)]


@_register("qr", (2,))
def qr_core(prim, dtype, a, *, full_matrices, pivoting=False, **_):
    m, n = a
    k = m if full_matrices else min(m, n)
    outs = [((m, k), dtype), ((k, n), dtype)]
    return outs + [((n,), int32)] if pivoting else outs


@_register("geqrf", (2,))
def geqrf_core(prim, dtype, a, **_):
    m, n = a
    return [((m, n), dtype), ((min(m, n),), dtype)]  # R above the diagonal, the reflectors below; their taus


@_register("svd", (2,))
def svd_core(prim, dtype, a, *, full_matrices, compute_uv, subset_by_index=None, **_):
    m, n = a
    rank = min(m, n)
    if subset_by_index is not None:
        start, end = (int(i) for i in subset_by_index)
        if full_matrices and (start, end) != (0, rank):
            raise JaxprTypeError("full_matrices and subset_by_index cannot both be set", primitive=prim,
                                 expected=f"subset_by_index=None or (0, {rank})", actual=(start, end))
        rank = min(rank, end - start)
    s = ((rank,), _real(dtype))
    if not compute_uv:
        return [s]
    return [s, ((m, m if full_matrices else rank), dtype), ((n if full_matrices else rank, n), dtype)]


@_register("eigh", (2,))
def eigh_core(prim, dtype, a, *, subset_by_index=None, **_):
    n = _square(prim, a)
    d = n if subset_by_index is None else int(subset_by_index[1]) - int(subset_by_index[0])
    return [((n, d), dtype), ((d,), _real(dtype))]


@_register("lu", (2,))
def lu_core(prim, dtype, a, **_):
    m, n = a
    return [(a, dtype), ((min(m, n),), int32), ((m,), int32)]


@shape_rule("lu_pivots_to_permutation")
def lu_pivots_to_permutation_rule(pivots: ShapedArray, *, permutation_size, **_) -> list[ShapedArray]:
    prim = "lu_pivots_to_permutation"
    batch, [(k,)] = _batched(prim, (1,), [pivots], kinds=["i"])
    if pivots.dtype != int32:
        raise JaxprTypeError("pivots must be int32", primitive=prim, expected="i32[..., k]",
                             actual=str(pivots))
    if int(permutation_size) < k:
        raise JaxprTypeError("permutation_size must be at least the number of pivots", primitive=prim,
                             expected=f">= {k}", actual=int(permutation_size))
    return _results(batch, [((int(permutation_size),), int32)])


@_register("householder_product", (2, 1))
def householder_product_core(prim, dtype, a, taus, **_):
    m, n = a
    if m < n:
        raise JaxprTypeError("a must have at least as many rows as columns", primitive=prim,
                             expected="[..., m, n] with m >= n", actual=f"core shape {a}")
    if taus[0] > min(m, n):
        raise JaxprTypeError("taus must not be longer than min(m, n)", primitive=prim,
                             expected=f"[..., k] with k <= {min(m, n)}", actual=f"core shape {taus}")
    return [(a, dtype)]


@_register("eig", (2,))
def eig_core(prim, dtype, a, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True, **_):
    n = _square(prim, a)
    count = int(bool(compute_left_eigenvectors)) + int(bool(compute_right_eigenvectors))
    return [((n,), _complex(dtype))] + [((n, n), _complex(dtype))] * count


@_register("schur", (2,))
def schur_core(prim, dtype, a, *, compute_schur_vectors=True, **_):
    _square(prim, a)
    return [(a, dtype)] * (2 if compute_schur_vectors else 1)


@_register("hessenberg", (2,))
def hessenberg_core(prim, dtype, a, **_):
    n = _square(prim, a)
    return [(a, dtype), ((n - 1,), dtype)]


@_register("tridiagonal", (2,))
def tridiagonal_core(prim, dtype, a, **_):
    n = _square(prim, a)
    if n == 0:
        raise JaxprTypeError("operand must be a non-empty square matrix", primitive=prim,
                             expected="[..., n, n] with n > 0", actual=f"core shape {a}")
    return [(a, dtype), ((n,), _real(dtype)), ((n - 1,), _real(dtype)), ((n - 1,), dtype)]


@_register("tridiagonal_solve", (1, 1, 1, 2))
def tridiagonal_solve_core(prim, dtype, dl, d, du, b, **_):
    if not dl == d == du:
        raise JaxprTypeError("the three diagonals must have the same shape", primitive=prim,
                             expected="dl, d, du of shape [..., m]", actual=f"{dl}, {d}, {du}")
    if dl[0] != b[0]:
        raise JaxprTypeError("b must have as many rows as the diagonals", primitive=prim,
                             expected=f"[..., {dl[0]}, n]", actual=f"core shape {b}")
    return [(b, dtype)]


@shape_rule("cholesky_update")
def cholesky_update_rule(r: ShapedArray, w: ShapedArray, **_) -> list[ShapedArray]:
    prim = "cholesky_update"
    _, [r_core, w_core] = _batched(prim, (2, 1), [r, w], batching=False, kinds=["f", "f"])
    n = _square(prim, r_core)
    if w_core[0] != n:
        raise JaxprTypeError("w must be a vector as long as r is wide", primitive=prim,
                             expected=f"[{n}]", actual=str(w))
    return [ShapedArray(r.shape, r.dtype)]
