"""NumPy evaluation of the linear-algebra primitives (jax/_src/lax/linalg.py) as JAX runs them on CPU.

JAX's CPU lowerings call LAPACK through jaxlib's kernels (jaxlib/cpu/lapack_kernels.cc), which take
their routines from SciPy's LAPACK. Calling the same routine through `scipy.linalg.lapack` with the same
arguments (including LAPACK's optimal workspace size) reproduces JAX's results: the signs of Householder
vectors, singular vectors and eigenvectors, and the order of `eig`'s eigenvalues. float32/complex64 use
the single-precision routines. Where JAX's lowering checks LAPACK's `info`, a failed problem comes back
filled with NaN. Leading batch dimensions are looped over; each routine sees one problem.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from scipy.linalg import lapack
from scipy.linalg.blas import get_blas_funcs
from scipy.linalg.lapack import get_lapack_funcs

from eval.interpreter import eval_jaxpr
from eval.registry import impl
from ir.core import ShapedArray
from ir.dtypes import from_numpy
from ir.inline import linear_solve_operands
from ir.primitives import abstract_eval

_LAPACK_DTYPES = frozenset(np.dtype(t) for t in ("float32", "float64", "complex64", "complex128"))


def check_lapack_dtype(prim: str, x: np.ndarray) -> None:
    if x.dtype not in _LAPACK_DTYPES:
        raise NotImplementedError(f"{prim}: dtype {x.dtype} is not supported (JAX's CPU LAPACK kernels take "
                                  "float32, float64, complex64 or complex128)")


def lapack_routine(prim: str, name: str, x: np.ndarray, complex_name: str | None = None) -> Callable:
    """The LAPACK routine `name` (`complex_name` for complex operands) in x's precision."""
    check_lapack_dtype(prim, x)
    return get_lapack_funcs(complex_name if complex_name and x.dtype.kind == "c" else name, dtype=x.dtype)


def optimal_lwork(routine: Callable, *args, **kwargs) -> int:
    """LAPACK's optimal workspace size from a query with lwork=-1, as jaxlib allocates it."""
    work = routine(*args, lwork=-1, **kwargs)[-2]
    return max(1, int(np.real(work[0])))


def queried_lwork(prim: str, name: str, x: np.ndarray, *args, complex_name: str | None = None, **kwargs) -> int:
    """The optimal workspace size from SciPy's `<name>_lwork` query wrapper."""
    routine = lapack_routine(prim, f"{name}_lwork", x, complex_name and f"{complex_name}_lwork")
    return lapack._compute_lwork(routine, *args, **kwargs)


def nan_unless(ok: bool, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays, or NaN-filled arrays like them (NaN+NaN·j for complex) when the routine failed."""
    if ok:
        return arrays
    return tuple(np.full(a.shape, np.nan * (1 + 1j) if a.dtype.kind == "c" else np.nan, a.dtype) for a in arrays)


def over_batch(prim: str, core: Callable, operands: Sequence[np.ndarray], params: dict,
               core_rank: int = 2) -> list[np.ndarray]:
    """Apply `core` (one problem's operands -> its results) to every problem in the leading batch
    dimensions (those of operands[0] before its `core_rank` trailing ones); results shaped as the shape rule says."""
    avals = abstract_eval(prim, [ShapedArray(x.shape, from_numpy(x.dtype)) for x in operands], params)
    outs = [np.empty(a.shape, a.dtype.numpy) for a in avals]
    for idx in np.ndindex(*operands[0].shape[:operands[0].ndim - core_rank]):
        for out, value in zip(outs, core(*(x[idx] for x in operands)), strict=True):
            out[idx] = value
    return outs


def enum_member(prim: str, param: str, value, supported: Sequence[str]) -> str | None:
    """The member name of an enum param printed as `SvdAlgorithm.QR` (None stays None); raises if unsupported."""
    name = None if value is None else str(value).rsplit(".", 1)[-1]
    if name is not None and name not in supported:
        raise NotImplementedError(f"{prim}: {param}={value} is not supported on CPU "
                                  f"(supported: None, {', '.join(supported)})")
    return name


def full_subset(prim: str, subset_by_index, size: int) -> None:
    """JAX's CPU lowerings compute every eigen/singular value: only None or (0, size) is accepted."""
    if subset_by_index is not None and tuple(int(i) for i in subset_by_index) != (0, size):
        raise NotImplementedError(f"{prim}: subset_by_index={tuple(subset_by_index)} is not supported on CPU "
                                  f"(JAX's CPU lowering accepts only None or (0, {size}))")


# --- Cholesky, triangular solve ---------------------------------------------------------------------------

def _cholesky(a):
    if a.size == 0:
        return (a,)
    # clean=0: the strict upper triangle keeps a's entries, as potrf (and so JAX's primitive) leaves it
    factor, info = lapack_routine("cholesky", "potrf", a)(a, lower=1, clean=0)
    return nan_unless(info == 0, factor)


@impl("cholesky")
def cholesky(a):
    [factor] = over_batch("cholesky", _cholesky, [a], {})
    return factor


@impl("triangular_solve")
def triangular_solve(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """Solves op(a) x = b (left_side) or x op(a) = b with BLAS trsm; only a's `lower`/upper triangle is read."""
    check_lapack_dtype("triangular_solve", a)
    trsm = get_blas_funcs("trsm", dtype=a.dtype)
    if conjugate_a and not transpose_a:
        a, conjugate_a = np.conj(a), False
    trans = (2 if conjugate_a else 1) if transpose_a else 0

    def solve(a1, b1):
        if b1.size == 0:
            return (b1,)
        return (trsm(1, a1, b1, side=0 if left_side else 1, lower=int(lower), trans_a=trans,
                     diag=int(unit_diagonal)),)

    [x] = over_batch("triangular_solve", solve, [a, b], dict(left_side=left_side))
    return x


# --- QR, Householder product ----------------------------------------------------------------------------

def householder(prim: str, a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """orgqr/ungqr: the first n columns of H(1)...H(k) for the reflectors stored below a's diagonal."""
    if taus.shape[0] == 0 or a.shape[1] == 0:
        return np.eye(*a.shape, dtype=a.dtype)
    orgqr = lapack_routine(prim, "orgqr", a, complex_name="ungqr")
    q, _, _ = orgqr(a, taus, lwork=optimal_lwork(orgqr, a, taus))
    return q


@impl("householder_product")
def householder_product(a, taus):
    def product(a1, taus1):
        return (householder("householder_product", a1, taus1),)

    [q] = over_batch("householder_product", product, [a, taus], {})
    return q


def _geqrf(a):
    """LAPACK's geqrf as JAX's `geqrf` primitive: R on and above the diagonal, the Householder reflectors
    below it, and their scales."""
    m, n = a.shape
    if m == 0 or n == 0:
        return a.copy(), np.zeros(min(m, n), a.dtype)
    geqrf = lapack_routine("geqrf", "geqrf", a)
    r, taus, _, _ = geqrf(a, lwork=queried_lwork("geqrf", "geqrf", a, m, n))
    return r, taus


@impl("geqrf")
def geqrf(a):
    return tuple(over_batch("geqrf", _geqrf, [a], {}))


def _qr(a, *, full_matrices, pivoting):
    """JAX's `_qr_lowering`: geqrf (geqp3 when pivoting), then orgqr on the reflectors, r = triu."""
    m, n = a.shape
    k = m if full_matrices else min(m, n)
    if m == 0 or n == 0:
        q, r = np.eye(m, k, dtype=a.dtype), np.zeros((k, n), a.dtype)
        return (q, r, np.zeros(n, np.int32)) if pivoting else (q, r)
    if pivoting:
        geqp3 = lapack_routine("qr", "geqp3", a)
        r, jpvt, taus, _, _ = geqp3(a, lwork=optimal_lwork(geqp3, a))
    else:
        geqrf = lapack_routine("qr", "geqrf", a)
        r, taus, _, _ = geqrf(a, lwork=queried_lwork("qr", "geqrf", a, m, n))
    if m < n:
        q = householder("qr", r[:, :m], taus)
    elif full_matrices:
        q = householder("qr", np.pad(r, ((0, 0), (0, m - n))), taus)
    else:
        q, r = householder("qr", r, taus), r[:n, :n]
    out = (q, np.triu(r))
    return (*out, jpvt.astype(np.int32) - 1) if pivoting else out  # geqp3's pivots are 1-based


@impl("qr")
def qr(a, *, full_matrices, pivoting=False, use_magma=None):
    """`use_magma` selects a GPU implementation; it has no effect on CPU."""
    core = partial(_qr, full_matrices=full_matrices, pivoting=pivoting)
    return tuple(over_batch("qr", core, [a], dict(full_matrices=full_matrices, pivoting=pivoting)))


# --- SVD, symmetric eigendecomposition ------------------------------------------------------------------

_SVD_ROUTINES = {None: "gesdd", "DEFAULT": "gesdd", "QR": "gesvd"}


def _svd(a, *, routine, full_matrices, compute_uv):
    m, n = a.shape
    if m == 0 or n == 0:  # JAX's `_empty_svd`
        s = np.zeros(0, a.real.dtype)
        u, vt = np.eye(m, m if full_matrices else 0, dtype=a.dtype), np.eye(n if full_matrices else 0, n, dtype=a.dtype)
        return (s, u, vt) if compute_uv else (s,)
    if not np.isfinite(a).all():
        # LAPACK's gesdd/gesvd can loop forever on ±inf (JAX's CPU svd hangs on the same matrices, e.g.
        # a 4x3 normal matrix with one inf); on nan input JAX returns all-nan results, on inf
        # input all-nan singular values. Non-finite input therefore gives all nan, without LAPACK.
        k = min(m, n)
        nan = np.full(k, np.nan, a.real.dtype)
        if not compute_uv:
            return (nan,)
        u = np.full((m, m if full_matrices else k), np.nan, a.dtype)
        vt = np.full((n if full_matrices else k, n), np.nan, a.dtype)
        return nan, u, vt
    flags = dict(compute_uv=int(compute_uv), full_matrices=int(full_matrices))
    lwork = queried_lwork("svd", routine, a, m, n, **flags)
    u, s, vt, info = lapack_routine("svd", routine, a)(a, lwork=lwork, **flags)
    return nan_unless(info == 0, *((s, u, vt) if compute_uv else (s,)))


@impl("svd")
def svd(a, *, full_matrices, compute_uv, subset_by_index=None, algorithm=None):
    """Results (s, u, vh), or (s,) without compute_uv; the default algorithm is gesdd, SvdAlgorithm.QR is gesvd."""
    full_subset("svd", subset_by_index, min(a.shape[-2:]))
    routine = _SVD_ROUTINES[enum_member("svd", "algorithm", algorithm, ("DEFAULT", "QR"))]
    core = partial(_svd, routine=routine, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(over_batch("svd", core, [a], dict(full_matrices=full_matrices, compute_uv=compute_uv)))


def _eigh(a, *, lower):
    if a.size == 0:
        return a, np.zeros(0, a.real.dtype)
    w, v, info = lapack_routine("eigh", "syevd", a, complex_name="heevd")(a, compute_v=1, lower=int(lower))
    return nan_unless(info == 0, v, w)


@impl("eigh")
def eigh(a, *, lower=True, sort_eigenvalues=True, subset_by_index=None, algorithm=None):
    """Results (v, w): eigenvectors in v's columns, eigenvalues ascending (syevd/heevd always sort, so
    `sort_eigenvalues` changes nothing on CPU). Only the `lower` (or upper) triangle of a is read."""
    full_subset("eigh", subset_by_index, a.shape[-1])
    enum_member("eigh", "algorithm", algorithm, ("QR",))
    return tuple(over_batch("eigh", partial(_eigh, lower=lower), [a], {}))


# --- LU -------------------------------------------------------------------------------------------------

def pivots_to_permutation(pivots: np.ndarray, size: int) -> np.ndarray:
    """Apply the row swaps i <-> pivots[i] in order to iota(size), as JAX's fori_loop does with jnp
    indexing: a negative pivot counts from the end, an out-of-range one is clamped on read, dropped on write."""
    perm = np.arange(size, dtype=np.int32)
    for i, j in enumerate(int(p) for p in pivots):
        j = j + size if j < 0 else j
        x, y = perm[i], perm[min(max(j, 0), size - 1)]
        perm[i] = y
        if 0 <= j < size:
            perm[j] = x
    return perm


@impl("lu_pivots_to_permutation")
def lu_pivots_to_permutation(pivots, *, permutation_size):
    size = int(permutation_size)
    [perm] = over_batch("lu_pivots_to_permutation", lambda p: (pivots_to_permutation(p, size),), [pivots],
                        dict(permutation_size=size), core_rank=1)
    return perm


def _lu(a):
    m, n = a.shape
    if m == 0 or n == 0:
        return a, np.zeros(0, np.int32), np.arange(m, dtype=np.int32)
    lu, pivots, _ = lapack_routine("lu", "getrf", a)(a)  # JAX keeps a singular factorization (info > 0)
    return lu, pivots, pivots_to_permutation(pivots, m)  # SciPy's getrf pivots are already 0-based


@impl("lu")
def lu(a):
    """Results (lu, pivots, permutation) with P a = L U: L (unit diagonal) below, U on and above the diagonal."""
    return tuple(over_batch("lu", _lu, [a], {}))


# --- CPU-only decompositions: eig, schur, hessenberg, tridiagonal; tridiagonal_solve --------------------

def _unpack_eigenvectors(wi: np.ndarray, packed: np.ndarray) -> np.ndarray:
    """Real geev stores a complex pair's vectors as columns (re, im): rebuild v_j = re + i·im, v_j+1 = conj."""
    vectors = packed.astype(np.result_type(packed.dtype, np.complex64))
    j = 0
    while j < len(wi):
        if wi[j] == 0 or np.isnan(wi[j]):
            j += 1
            continue
        vectors[:, j] = packed[:, j] + 1j * packed[:, j + 1]
        vectors[:, j + 1] = np.conj(vectors[:, j])
        j += 2
    return vectors


def _eig(a, *, left, right):
    """geev; like jaxlib, a non-finite matrix is not decomposed but reported as failed (NaN results)."""
    n = a.shape[0]
    if n == 0:
        cdtype = np.result_type(a.dtype, np.complex64)
        return (np.zeros(0, cdtype),) + (np.zeros((0, 0), cdtype),) * (left + right)
    geev = lapack_routine("eig", "geev", a)
    flags = dict(compute_vl=int(left), compute_vr=int(right))
    ok = bool(np.isfinite(a).all())
    out = geev(a if ok else np.zeros_like(a), lwork=queried_lwork("eig", "geev", a, n, **flags), **flags)
    if a.dtype.kind == "c":
        w, vl, vr, info = out
    else:
        wr, wi, vl, vr, info = out
        w, vl, vr = wr + 1j * wi, _unpack_eigenvectors(wi, vl), _unpack_eigenvectors(wi, vr)
    return nan_unless(ok and info == 0, w, *((vl,) if left else ()), *((vr,) if right else ()))


@impl("eig")
def eig(a, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True, enable_eigvec_derivs=False,
        implementation=None, use_magma=None):
    """Results (w, vl, vr), vl and vr only when asked for, all complex; vl holds LAPACK's left eigenvectors
    (u^H a = w u^H, not conjugated). `enable_eigvec_derivs` matters to AD only, `use_magma` to GPUs."""
    enum_member("eig", "implementation", implementation, ("LAPACK",))
    core = partial(_eig, left=bool(compute_left_eigenvectors), right=bool(compute_right_eigenvectors))
    return tuple(over_batch("eig", core, [a], dict(compute_left_eigenvectors=compute_left_eigenvectors,
                                                    compute_right_eigenvectors=compute_right_eigenvectors)))


def _schur(a, *, vectors):
    if a.size == 0:
        return (a,) * (1 + vectors)
    gees = lapack_routine("schur", "gees", a)
    out = gees(lambda *_: None, a, compute_v=int(vectors), sort_t=0,
               lwork=optimal_lwork(gees, lambda *_: None, a, compute_v=int(vectors), sort_t=0))
    t, vs, info = out[0], out[-3], out[-1]
    return nan_unless(info == 0, *((t, vs) if vectors else (t,)))


@impl("schur")
def schur(a, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """Results (t, z) with a = z t z^H (gees, real Schur form for real a), z only with compute_schur_vectors."""
    if sort_eig_vals:
        raise NotImplementedError("schur: sort_eig_vals=True is not supported (JAX's CPU kernel does not sort)")
    core = partial(_schur, vectors=bool(compute_schur_vectors))
    return tuple(over_batch("schur", core, [a], dict(compute_schur_vectors=compute_schur_vectors)))


def _hessenberg(a):
    n = a.shape[0]
    if n <= 1:
        return a, np.zeros(max(n - 1, 0), a.dtype)
    h, taus, info = lapack_routine("hessenberg", "gehrd", a)(a, lwork=queried_lwork("hessenberg", "gehrd", a, n))
    return nan_unless(info == 0, h, taus)


@impl("hessenberg")
def hessenberg(a):
    """Results (a', taus) as gehrd leaves them: H on and above the subdiagonal, reflectors below it."""
    return tuple(over_batch("hessenberg", _hessenberg, [a], {}))


def _tridiagonal(a, *, lower):
    sytrd = lapack_routine("tridiagonal", "sytrd", a, complex_name="hetrd")
    lwork = queried_lwork("tridiagonal", "sytrd", a, a.shape[0], complex_name="hetrd", lower=int(lower))
    out = sytrd(a, lower=int(lower), lwork=lwork)
    return nan_unless(out[-1] == 0, *out[:-1])


@impl("tridiagonal")
def tridiagonal(a, *, lower=True):
    """Results (a', d, e, taus) as sytrd/hetrd leave them: diagonal d, off-diagonal e, reflectors in a'."""
    return tuple(over_batch("tridiagonal", partial(_tridiagonal, lower=lower), [a], {}))


def _tridiagonal_solve(dl, d, du, b):
    if b.size == 0:
        return (b,)
    gtsv = lapack_routine("tridiagonal_solve", "gtsv", b)
    if d.shape[0] == 1:  # SciPy's wrapper refuses empty off-diagonals; gtsv itself only divides by d
        return nan_unless(d[0] != 0, b / d[0] if d[0] != 0 else b)
    *_, x, info = gtsv(dl[1:], d, du[:-1], b)
    return nan_unless(info == 0, x)


@impl("tridiagonal_solve")
def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """Solves the tridiagonal system (sub-, main and super-diagonal dl, d, du; dl[0] and du[-1] unused) with
    gtsv; a singular system gives NaN."""
    if perturb_singular:
        raise NotImplementedError("tridiagonal_solve: perturb_singular=True (JAX's own perturbed CPU kernel) "
                                  "is not supported")
    [x] = over_batch("tridiagonal_solve", _tridiagonal_solve, [dl, d, du, b], {}, core_rank=1)
    return x


# --- cholesky_update (lowered from JAX code on CPU) -----------------------------------------------------

def _givens(x, y):
    """JAX's `_drotg`: (c, s) rotating (x, y) onto the x axis, scaled to avoid overflow."""
    one, zero = x.dtype.type(1), x.dtype.type(0)
    if y == 0:
        return one, zero
    denominator = abs(x) if abs(x) > abs(y) else abs(y)
    x, y = x / denominator, y / denominator
    rh = one / np.sqrt(x * x + y * y)
    return x * rh, -y * rh


@impl("cholesky_update")
def cholesky_update(r, w):
    """The upper Cholesky factor of r^T r + w w^T, by JAX's `_cholesky_update_jax_fn` (Givens rotations)."""
    if r.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"cholesky_update: dtype {r.dtype} is not supported (float32 or float64 only)")
    r, z = r.copy(), w.copy()
    for k in range(z.shape[0]):
        c, s = _givens(r[k, k], z[k])
        r[k, :], z = c * r[k, :] - s * z, c * z + s * r[k, :]
    return r


# --- custom_linear_solve --------------------------------------------------------------------------------


def _custom_linear_solve(*args, const_lengths, jaxprs, check: bool = False):
    """As JAX's impl: run the `solve` jaxpr on its consts and b (the other jaxprs serve AD and batching)."""
    groups = linear_solve_operands(const_lengths, args)
    return tuple(eval_jaxpr(jaxprs.solve, *groups["solve"], *groups["b"], check=check))


_custom_linear_solve.takes_check = True
impl("custom_linear_solve")(_custom_linear_solve)
