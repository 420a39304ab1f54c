"""NumPy evaluation of the linear-algebra primitives, against the JAX oracle and against the math.

The oracle fixes LAPACK's conventions (signs of Q's columns and of singular/eigen vectors, eig's order);
the property tests check what each result means (L L^H = A, Q R = A with Q unitary, U diag(s) V^H = A,
A V = V diag(w), P A = L U, ...) for every dtype, with leading batch dimensions, and that a batch equals
a loop over its problems.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg

from eval.interpreter import eval_jaxpr
from eval.oracle import decode_array, load_fixtures, mismatch, parse_case, run_conformance
from eval.registry import get_impl
from ir.params import Symbol
from tests.oracle_paths import ORACLE

MINE = ("cholesky", "triangular_solve", "qr", "svd", "eigh", "lu", "lu_pivots_to_permutation",
        "householder_product", "eig", "schur", "hessenberg", "tridiagonal", "tridiagonal_solve",
        "cholesky_update", "custom_linear_solve")
DTYPES = ("float32", "float64", "complex64", "complex128")
BATCHES = ((), (2,), (2, 3))
DTYPE_BATCHES = list(itertools.product(DTYPES, BATCHES))
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


def run(name, *operands, **params):
    return get_impl(name)(*operands, **params)


def rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def hermitian(x):
    return np.swapaxes(x, -1, -2).conj()


def spd(rng, batch, n, dtype):
    a = rand(rng, (*batch, n, n), dtype)
    return (a @ hermitian(a) + n * np.eye(n)).astype(dtype)


def close(got, want, dtype, scale=1.0):
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * scale)


def assert_unitary_columns(q, dtype):
    k = q.shape[-1]
    close(hermitian(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), dtype)


# --- the oracle -----------------------------------------------------------------------------------------

def linalg_cases():
    cases = load_fixtures([ORACLE], ["linalg", "programs"])
    return [c for c in cases if c.family == "linalg" or set(c.primitives) & set(MINE)]


def test_oracle_out_all_pass():
    """Every linalg case, and every program using a linalg primitive, evaluates to JAX's output."""
    cases = linalg_cases()
    outcomes = run_conformance(cases, ["out"])
    bad = [f"{o.status} {o.case}: {o.reason}" for o in outcomes if o.status != "passed"]
    assert not bad, "\n".join(bad)
    assert len(outcomes) == len(cases) > 0


@pytest.mark.parametrize("case", [c for c in linalg_cases() if "vmap" in c.raw], ids=lambda c: c.id)
def test_oracle_vmap_slices(case):
    """JAX's vmap results are per-problem LAPACK calls: each slice evaluates to its row of the vmap output."""
    closed = parse_case(case)
    vmap = case.raw["vmap"]
    args, outs = [decode_array(a) for a in vmap["args"]], [decode_array(a) for a in vmap["out"]]
    for i in range(outs[0].shape[0]):
        got = eval_jaxpr(closed, *(a[i] if axis == 0 else a for a, axis in zip(args, vmap["in_axes"], strict=True)),
                         check=True)
        for g, want in zip(got, outs, strict=True):
            assert mismatch(g, want[i], case.rtol, case.atol) is None, mismatch(g, want[i], case.rtol, case.atol)


# --- Cholesky, triangular solve -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,batch", DTYPE_BATCHES)
def test_cholesky_factors(dtype, batch):
    a = spd(np.random.default_rng(0), batch, 4, dtype)
    factor = run("cholesky", a)
    lower = np.tril(factor)
    assert factor.dtype == a.dtype and factor.shape == a.shape
    close(lower @ hermitian(lower), a, dtype, scale=10)
    np.testing.assert_array_equal(np.triu(factor, 1), np.triu(a, 1))  # untouched, as potrf leaves it
    assert np.all(np.diagonal(lower, axis1=-2, axis2=-1).real > 0)


def test_cholesky_of_indefinite_matrix_is_nan_per_problem():
    good = spd(np.random.default_rng(1), (), 3, "float64")
    out = run("cholesky", np.stack([good, -good]))
    assert not np.isnan(out[0]).any() and np.isnan(out[1]).all()


TRIANGULAR_FLAGS = list(itertools.product([True, False], repeat=5))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left_side,lower,transpose_a,conjugate_a,unit_diagonal", TRIANGULAR_FLAGS)
def test_triangular_solve_solves(dtype, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    rng = np.random.default_rng(2)
    a = rand(rng, (2, 4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
    b = rand(rng, (2, 4, 3) if left_side else (2, 3, 4), dtype)
    tri = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        tri = tri - np.diagonal(tri, axis1=-2, axis2=-1)[..., None] * np.eye(4) + np.eye(4)
    op = np.swapaxes(tri, -1, -2) if transpose_a else tri
    op = op.conj() if conjugate_a else op
    garbage = np.triu(np.full_like(a, np.nan), 1) if lower else np.tril(np.full_like(a, np.nan), -1)
    a_read = np.where(np.isnan(garbage), garbage, a)  # the other triangle must not be read
    x = run("triangular_solve", a_read, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
            conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    assert x.dtype == b.dtype and x.shape == b.shape
    close(op @ x if left_side else x @ op, b, dtype, scale=10)


# --- QR, Householder product ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,batch", DTYPE_BATCHES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
@pytest.mark.parametrize("full_matrices,pivoting", [(f, p) for f in (True, False) for p in (True, False)])
def test_qr_factors(dtype, batch, shape, full_matrices, pivoting):
    a = rand(np.random.default_rng(3), batch + shape, dtype)
    m, n = shape
    k = m if full_matrices else min(m, n)
    q, r, *p = run("qr", a, full_matrices=full_matrices, pivoting=pivoting, use_magma=None)
    assert q.shape == batch + (m, k) and r.shape == batch + (k, n) and q.dtype == r.dtype == a.dtype
    assert_unitary_columns(q, dtype)
    np.testing.assert_array_equal(r, np.triu(r))
    if pivoting:
        [p] = p
        assert p.dtype == np.int32 and p.shape == batch + (n,)
        assert (np.sort(p, axis=-1) == np.arange(n)).all()
        a = np.take_along_axis(a, p[..., None, :], axis=-1)
        diag = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
        assert np.all(diag[..., :-1] >= diag[..., 1:] * (1 - 1e-4))  # rank-revealing order
    close(q @ r, a, dtype, scale=10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [0, 1, 3])
def test_householder_product_matches_scipy_qr(dtype, k):
    a = rand(np.random.default_rng(4), (5, 3), dtype)
    (reflectors, taus), _ = scipy.linalg.qr(a, mode="raw")
    q = run("householder_product", reflectors, taus[:k].astype(dtype))
    assert q.dtype == a.dtype and q.shape == (5, 3)
    if k == 3:
        close(q, scipy.linalg.qr(a, mode="economic")[0], dtype)
    if k == 0:
        np.testing.assert_array_equal(q, np.eye(5, 3))
    assert_unitary_columns(q, dtype)


def test_qr_of_empty_matrix_is_identity_and_zeros():
    q, r = run("qr", np.zeros((3, 0)), full_matrices=True, pivoting=False)
    np.testing.assert_array_equal(q, np.eye(3))
    assert r.shape == (3, 0)


# --- SVD, eigh ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,batch", DTYPE_BATCHES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
@pytest.mark.parametrize("full_matrices", [True, False])
@pytest.mark.parametrize("algorithm", [None, Symbol("SvdAlgorithm.DEFAULT"), Symbol("SvdAlgorithm.QR")])
def test_svd_factors(dtype, batch, shape, full_matrices, algorithm):
    a = rand(np.random.default_rng(5), batch + shape, dtype)
    m, n = shape
    k = min(m, n)
    s, u, vh = run("svd", a, full_matrices=full_matrices, compute_uv=True, subset_by_index=None,
                   algorithm=algorithm)
    real = np.zeros((), dtype).real.dtype
    assert s.dtype == real and u.dtype == vh.dtype == a.dtype
    assert u.shape == batch + (m, m if full_matrices else k) and vh.shape == batch + (n if full_matrices else k, n)
    assert np.all(s >= 0) and np.all(s[..., :-1] >= s[..., 1:])
    assert_unitary_columns(u, dtype)
    assert_unitary_columns(hermitian(vh), dtype)
    close((u[..., :, :k] * s[..., None, :].astype(dtype)) @ vh[..., :k, :], a, dtype, scale=10)
    [values] = run("svd", a, full_matrices=full_matrices, compute_uv=False, subset_by_index=None,
                   algorithm=algorithm)
    close(values, s, dtype, scale=10)


@pytest.mark.parametrize("dtype,batch", DTYPE_BATCHES)
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_decomposes_the_triangle_it_reads(dtype, batch, lower):
    h = spd(np.random.default_rng(6), batch, 4, dtype) - 4 * np.eye(4, dtype=dtype)
    garbage = np.full_like(h, 7.0)
    a = np.where(np.tri(4, dtype=bool), h, garbage) if lower else np.where(np.tri(4, k=-1, dtype=bool), garbage, h)
    v, w = run("eigh", a, lower=lower, sort_eigenvalues=True, subset_by_index=None, algorithm=None)
    assert v.dtype == a.dtype and w.dtype == np.zeros((), dtype).real.dtype
    assert np.all(w[..., :-1] <= w[..., 1:])
    assert_unitary_columns(v, dtype)
    close(h @ v, v * w[..., None, :].astype(dtype), dtype, scale=30)


# --- LU -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,batch", DTYPE_BATCHES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_lu_factors(dtype, batch, shape):
    a = rand(np.random.default_rng(7), batch + shape, dtype)
    m, n = shape
    k = min(m, n)
    lu, pivots, perm = run("lu", a)
    assert lu.dtype == a.dtype and pivots.dtype == perm.dtype == np.int32
    assert pivots.shape == batch + (k,) and perm.shape == batch + (m,)
    lower = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    upper = np.triu(lu)[..., :k, :]
    close(np.take_along_axis(a, perm[..., :, None], axis=-2), lower @ upper, dtype, scale=10)
    np.testing.assert_array_equal(perm, run("lu_pivots_to_permutation", pivots, permutation_size=m))


@pytest.mark.parametrize("seed", range(5))
def test_lu_permutation_matches_scipy(seed):
    a = rand(np.random.default_rng(seed), (5, 5), "float64")
    _, _, perm = run("lu", a)
    p, _, _ = scipy.linalg.lu(a)  # a = p l u, so p^T a = l u
    np.testing.assert_array_equal(a[perm], p.T @ a)


def test_lu_of_singular_matrix_keeps_the_factorization():
    lu, _, _ = run("lu", np.zeros((3, 3)))
    np.testing.assert_array_equal(lu, np.zeros((3, 3)))


@pytest.mark.parametrize("pivots,size", [([2, 2, 2], 3), ([1, 1], 4), ([0, 3, 2], 5)])
def test_lu_pivots_to_permutation_applies_the_swaps(pivots, size):
    perm = run("lu_pivots_to_permutation", np.array([pivots, pivots], np.int32), permutation_size=size)
    rows = np.arange(size)
    for i, j in enumerate(pivots):  # the swaps applied to a matrix's rows, one after another
        rows[[i, j]] = rows[[j, i]]
    np.testing.assert_array_equal(perm, np.stack([rows, rows]))


# --- eig, schur, hessenberg, tridiagonal ----------------------------------------------------------------

@pytest.mark.parametrize("dtype,batch", DTYPE_BATCHES)
def test_eig_left_and_right_eigenvectors(dtype, batch):
    a = rand(np.random.default_rng(8), batch + (4, 4), dtype)
    w, vl, vr = run("eig", a, compute_left_eigenvectors=True, compute_right_eigenvectors=True)
    cdtype = np.result_type(dtype, np.complex64)
    assert w.dtype == vl.dtype == vr.dtype == cdtype
    close(a @ vr, vr * w[..., None, :], dtype, scale=10)
    close(hermitian(vl) @ a, w[..., :, None] * hermitian(vl), dtype, scale=10)
    close(np.linalg.norm(vr, axis=-2), np.ones(batch + (4,)), dtype)
    [values] = run("eig", a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    close(values, w, dtype, scale=10)
    if np.dtype(dtype).kind == "f":  # complex eigenvalues of a real matrix come in adjacent conjugate pairs
        close(np.sort_complex(w.reshape(-1, 4)), np.sort_complex(w.conj().reshape(-1, 4)), dtype, scale=10)


def test_eig_of_non_finite_matrix_is_nan():
    w, vr = run("eig", np.array([[1.0, np.inf], [0.0, 1.0]]), compute_left_eigenvectors=False,
                compute_right_eigenvectors=True)
    assert np.isnan(w.real).all() and np.isnan(w.imag).all() and np.isnan(vr.real).all()


@pytest.mark.parametrize("dtype,batch", DTYPE_BATCHES)
def test_schur_decomposes(dtype, batch):
    a = rand(np.random.default_rng(9), batch + (4, 4), dtype)
    t, z = run("schur", a, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None)
    assert t.dtype == z.dtype == a.dtype
    assert_unitary_columns(z, dtype)
    close(z @ t @ hermitian(z), a, dtype, scale=10)
    below = -2 if np.dtype(dtype).kind == "f" else -1  # a real Schur form has 2x2 blocks on the diagonal
    np.testing.assert_array_equal(np.tril(t, below), 0)
    [t_only] = run("schur", a, compute_schur_vectors=False, sort_eig_vals=False, select_callable=None)
    close(np.sort_complex(np.linalg.eigvals(t_only).reshape(-1, 4)), np.sort_complex(
        np.linalg.eigvals(a).reshape(-1, 4)), dtype, scale=10)


def reflector_product(packed, taus, first_row, column_offset=0):
    """Q = H(0) H(1) ... with H(i) = I - tau_i v v^H, v = e_(i+first_row) + packed[i+first_row+1:, i]."""
    n = packed.shape[0]
    q = np.eye(n, dtype=packed.dtype)
    for i, tau in enumerate(taus):
        v = np.zeros(n, packed.dtype)
        v[i + first_row] = 1
        v[i + first_row + 1:] = packed[i + first_row + 1:, i + column_offset]
        q = q @ (np.eye(n) - tau * np.outer(v, v.conj()))
    return q


@pytest.mark.parametrize("dtype,batch", DTYPE_BATCHES)
def test_hessenberg_reduces(dtype, batch):
    a = rand(np.random.default_rng(10), batch + (5, 5), dtype)
    packed, taus = run("hessenberg", a)
    assert packed.dtype == taus.dtype == a.dtype and taus.shape == batch + (4,)
    for idx in np.ndindex(*batch):
        h = np.triu(packed[idx], -1)
        q = reflector_product(packed[idx], taus[idx], first_row=1)
        close(q @ h @ hermitian(q), a[idx], dtype, scale=10)
        close(h, scipy.linalg.hessenberg(a[idx]), dtype, scale=10)


@pytest.mark.parametrize("dtype,batch", DTYPE_BATCHES)
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_reduces(dtype, batch, lower):
    a = spd(np.random.default_rng(11), batch, 5, dtype)
    packed, d, e, taus = run("tridiagonal", a, lower=lower)
    real = np.zeros((), dtype).real.dtype
    assert d.dtype == e.dtype == real and packed.dtype == taus.dtype == a.dtype
    for idx in np.ndindex(*batch):
        t = np.diag(d[idx]) + np.diag(e[idx], 1) + np.diag(e[idx], -1)
        close(np.linalg.eigvalsh(t), np.linalg.eigvalsh(a[idx]), dtype, scale=30)
        if lower:
            q = reflector_product(packed[idx], taus[idx], first_row=1)
            close(hermitian(q) @ a[idx] @ q, t, dtype, scale=30)


@pytest.mark.parametrize("dtype,batch", DTYPE_BATCHES)
def test_tridiagonal_solve_solves_and_ignores_the_corners(dtype, batch):
    rng = np.random.default_rng(12)
    dl, du = rand(rng, batch + (5,), dtype), rand(rng, batch + (5,), dtype)
    d = rand(rng, batch + (5,), dtype) + 6
    b = rand(rng, batch + (5, 2), dtype)
    dl[..., 0], du[..., -1] = np.nan, np.nan
    x = run("tridiagonal_solve", dl, d, du, b, perturb_singular=False)
    assert x.dtype == b.dtype and x.shape == b.shape
    for idx in np.ndindex(*batch):
        matrix = np.diag(d[idx]) + np.diag(du[idx][:-1], 1) + np.diag(dl[idx][1:], -1)
        close(matrix @ x[idx], b[idx], dtype, scale=10)


def test_tridiagonal_solve_of_singular_system_is_nan():
    x = run("tridiagonal_solve", np.zeros(3), np.zeros(3), np.zeros(3), np.ones((3, 1)), perturb_singular=False)
    assert np.isnan(x).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cholesky_update_is_a_rank_one_update(dtype):
    rng = np.random.default_rng(13)
    r = np.linalg.cholesky(spd(rng, (), 5, dtype)).T.astype(dtype)
    w = rand(rng, (5,), dtype)
    updated = run("cholesky_update", r, w)
    assert updated.dtype == r.dtype
    close(np.triu(updated).T @ np.triu(updated), r.T @ r + np.outer(w, w), dtype, scale=30)
    close(np.tril(updated, -1), np.zeros((5, 5)), dtype)


# --- batches, unsupported inputs ------------------------------------------------------------------------

BATCHED = [  # primitive, params, operand makers (rng, batch, dtype) -> array
    ("cholesky", {}, [lambda g, b, t: spd(g, b, 3, t)]),
    ("triangular_solve", dict(left_side=True, lower=True, transpose_a=True, conjugate_a=True, unit_diagonal=False),
     [lambda g, b, t: spd(g, b, 3, t), lambda g, b, t: rand(g, b + (3, 2), t)]),
    ("qr", dict(full_matrices=True, pivoting=True), [lambda g, b, t: rand(g, b + (4, 3), t)]),
    ("svd", dict(full_matrices=False, compute_uv=True), [lambda g, b, t: rand(g, b + (3, 4), t)]),
    ("eigh", dict(lower=True), [lambda g, b, t: spd(g, b, 3, t)]),
    ("lu", {}, [lambda g, b, t: rand(g, b + (3, 4), t)]),
    ("householder_product", {}, [lambda g, b, t: rand(g, b + (4, 3), t), lambda g, b, t: rand(g, b + (2,), t) / 3]),
    ("eig", dict(compute_left_eigenvectors=True), [lambda g, b, t: rand(g, b + (3, 3), t)]),
    ("schur", {}, [lambda g, b, t: rand(g, b + (3, 3), t)]),
    ("hessenberg", {}, [lambda g, b, t: rand(g, b + (4, 4), t)]),
    ("tridiagonal", dict(lower=False), [lambda g, b, t: spd(g, b, 4, t)]),
    ("tridiagonal_solve", {}, [lambda g, b, t: rand(g, b + (4,), t), lambda g, b, t: rand(g, b + (4,), t) + 5,
                               lambda g, b, t: rand(g, b + (4,), t), lambda g, b, t: rand(g, b + (4, 2), t)]),
]


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
@pytest.mark.parametrize("name,params,makers", BATCHED, ids=[row[0] for row in BATCHED])
def test_batch_equals_loop_over_problems(name, params, makers, dtype):
    rng = np.random.default_rng(14)
    operands = [make(rng, (2, 3), dtype) for make in makers]
    batched = run(name, *operands, **params)
    batched = batched if isinstance(batched, tuple) else (batched,)
    for idx in np.ndindex(2, 3):
        single = run(name, *(x[idx] for x in operands), **params)
        for whole, one in zip(batched, single if isinstance(single, tuple) else (single,), strict=True):
            np.testing.assert_array_equal(whole[idx], one)


def test_lu_pivots_to_permutation_batches():
    pivots = np.array([[[2, 2, 2], [0, 1, 2]], [[1, 2, 2], [2, 1, 2]]], np.int32)
    perm = run("lu_pivots_to_permutation", pivots, permutation_size=4)
    assert perm.shape == (2, 2, 4) and perm.dtype == np.int32
    for idx in np.ndindex(2, 2):
        np.testing.assert_array_equal(perm[idx], run("lu_pivots_to_permutation", pivots[idx], permutation_size=4))


@pytest.mark.parametrize("name,operands,params,message", [
    ("cholesky", [np.eye(2, dtype=np.float16)], {}, "float16"),
    ("triangular_solve", [np.eye(2, dtype=np.float16), np.eye(2, dtype=np.float16)],
     dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False, unit_diagonal=False), "float16"),
    ("svd", [np.eye(3)], dict(full_matrices=False, compute_uv=True, subset_by_index=(0, 2)), "subset_by_index"),
    ("svd", [np.eye(3)], dict(full_matrices=False, compute_uv=True, algorithm=Symbol("SvdAlgorithm.JACOBI")),
     "algorithm"),
    ("eigh", [np.eye(3)], dict(subset_by_index=(1, 3)), "subset_by_index"),
    ("eigh", [np.eye(3)], dict(algorithm=Symbol("EighImplementation.QDWH")), "algorithm"),
    ("eig", [np.eye(3)], dict(implementation=Symbol("EigImplementation.CUSOLVER")), "implementation"),
    ("schur", [np.eye(3)], dict(sort_eig_vals=True), "sort_eig_vals"),
    ("tridiagonal_solve", [np.ones(3), np.ones(3), np.ones(3), np.ones((3, 1))], dict(perturb_singular=True),
     "perturb_singular"),
    ("cholesky_update", [np.eye(2, dtype=np.complex128), np.ones(2, np.complex128)], {}, "complex128"),
])
def test_unsupported_inputs_raise_naming_primitive_and_param(name, operands, params, message):
    with pytest.raises(NotImplementedError, match=rf"^{name}: .*{message}"):
        run(name, *operands, **params)
