"""AD rules of the linear-algebra primitives (transforms/ad/rules/linalg.py, linalg_decomp.py): JVP vs
central differences and the transpose identity ⟨v, J u⟩ = ⟨Jᵀ v, u⟩ for each primitive on inputs where it
is smooth (SPD matrices for cholesky, separated spectra for eigh, svd and eig, well-conditioned triangles
and tridiagonal systems), its shape cases (tall, wide, batched; left and right solves) and complex operands,
the cases JAX refuses, two conventions of JAX's rules, then the `linalg` oracle family against JAX."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from eval.interpreter import eval_jaxpr
from ir import lax
from ir.errors import UnsupportedPrimitive
from ir.tracing import bind
from tests.transforms.ad_helpers import Dom, Spec, assert_oracle, program_of, spec_test
from transforms.ad.programs import jvp_program, vjp_program

C128 = "complex128"


@dataclass(frozen=True)
class Made(Dom):
    """An argument drawn by `make(rng)`: a structured matrix rather than uniform entries."""

    make: Callable | None = None

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        return self.make(rng)


def _random(rng, shape, dtype="float64"):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if dtype == C128 else x


def _orthogonal(rng, batch, n, dtype):
    q, _ = np.linalg.qr(_random(rng, (*batch, n, n), dtype))
    return q


def with_spectrum(batch, m, n, dtype="float64", hermitian=False):
    """U diag(s) V^H with s spread over [1, 1 + 2k] (eigenvalues of either sign for `hermitian`)."""
    k = min(m, n)

    def make(rng):
        s = 1.0 + 2.0 * np.arange(k) + rng.uniform(0, 0.5, (*batch, k))
        u = _orthogonal(rng, batch, m, dtype)[..., :k]
        if hermitian:
            s = s * rng.choice([-1.0, 1.0], k)
            return (u * s[..., None, :]) @ np.conj(np.swapaxes(u, -1, -2))
        v = _orthogonal(rng, batch, n, dtype)[..., :k]
        return (u * s[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2))
    return Made((*batch, m, n), make=make)


def diagonalizable(batch, n, dtype="float64"):
    """V diag(w) V^-1 with w spread apart and V near the identity: each eigenvector's largest entry (where
    LAPACK makes it real) stays the same one under small perturbations."""
    def make(rng):
        w = 1.0 + 2.0 * np.arange(n) + (1j * rng.uniform(-1, 1, n) if dtype == C128 else 0)
        vec = np.eye(n) + 0.3 * _random(rng, (*batch, n, n), dtype)
        return (vec * w) @ np.linalg.inv(vec)
    return Made((*batch, n, n), make=make)


def spd(batch, n, dtype="float64"):
    def make(rng):
        x = _random(rng, (*batch, n, n), dtype)
        return x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)
    return Made((*batch, n, n), make=make)


def triangle(batch, n, dtype="float64"):
    """Both triangles random (the solve reads one), the diagonal away from 0."""
    def make(rng):
        return _random(rng, (*batch, n, n), dtype) * 0.3 + np.eye(n) * rng.choice([-2.5, 2.5], (*batch, 1, n))
    return Made((*batch, n, n), make=make)


def general(shape, dtype="float64"):
    return Made(shape, make=lambda rng: _random(rng, shape, dtype))


def diagonal(shape, low, high):
    return Dom(shape, low, high)


def hermitian(x):
    """(x + x^H) / 2, as jax.lax.linalg's `symmetrize` (the rules assume symmetric tangents)."""
    perm = (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2)
    xt = lax.transpose(x, perm)
    return lax.div(lax.add(x, lax.conj(xt) if x.dtype.is_complex else xt), 2.0)


def matmul(x, y):
    b = x.ndim - 2
    return lax.dot_general(x, y, (((b + 1,), (b,)), (tuple(range(b)), tuple(range(b)))))


def cholesky(x):
    """jax.lax.linalg.cholesky: the primitive leaves the input's upper triangle, which it does not differentiate."""
    factor = bind("cholesky", hermitian(x))
    rows, cols = (lax.broadcasted_iota("int32", x.shape, x.ndim + d) for d in (-2, -1))
    return lax.select(lax.ge(rows, cols), factor, lax.full_like(factor, 0))


def triangular_solve(left, lower, transpose=False, conjugate=False, unit=False):
    return lambda a, b: bind("triangular_solve", a, b, left_side=left, lower=lower, transpose_a=transpose,
                             conjugate_a=conjugate, unit_diagonal=unit)


def qr(full=False, pivoting=False):
    return lambda x: bind("qr", x, full_matrices=full, pivoting=pivoting, use_magma=None)


def svd(full=False, uv=True):
    return lambda x: bind("svd", x, full_matrices=full, compute_uv=uv, subset_by_index=None, algorithm=None)


def svd_invariants(x):
    """s and U Vt: free of the singular vectors' phases, which complex SVDs leave to LAPACK."""
    s, u, vt = svd()(x)
    return s, matmul(u, vt)


def eigh(lower=True):
    return lambda x: bind("eigh", hermitian(x), lower=lower, sort_eigenvalues=True, subset_by_index=None,
                          algorithm=None)


def eigh_invariants(x):
    """w and |v|^2, free of the eigenvectors' phases."""
    v, w = eigh()(x)
    return w, lax.real(lax.mul(v, lax.conj(v)))


def eig(left=False, right=False, derivs=False):
    return lambda x: bind("eig", x, compute_left_eigenvectors=left, compute_right_eigenvectors=right,
                          enable_eigvec_derivs=derivs, implementation=None)


def tridiagonal_solve(dl, d, du, b):
    return bind("tridiagonal_solve", dl, d, du, b, perturb_singular=False)


TRIDIAGONAL = [diagonal((4,), -1, 1), diagonal((4,), 3, 4), diagonal((4,), -1, 1), Dom((4, 2))]
# Decompositions amplify the rounding of x ± εu by their conditioning: a looser finite-difference tolerance.
LOOSE = dict(rtol=1e-5)

SPECS = [
    Spec("cholesky", cholesky, [spd((), 3)]),
    Spec("cholesky/batched", cholesky, [spd((2,), 3)]),
    Spec("cholesky/complex", cholesky, [spd((), 3, C128)]),
    Spec("triangular_solve/left-lower-tall", triangular_solve(True, True), [triangle((), 3), Dom((3, 2))]),
    Spec("triangular_solve/left-upper-transpose-unit", triangular_solve(True, False, transpose=True, unit=True),
         [triangle((), 3), Dom((3, 4))]),
    Spec("triangular_solve/right-lower-wide", triangular_solve(False, True), [triangle((), 3), Dom((2, 3))]),
    Spec("triangular_solve/right-upper-transpose", triangular_solve(False, False, transpose=True),
         [triangle((2,), 3), Dom((2, 4, 3))]),
    Spec("triangular_solve/complex-conjugate", triangular_solve(True, True, transpose=True, conjugate=True),
         [triangle((), 3, C128), general((3, 2), C128)]),
    Spec("tridiagonal_solve", tridiagonal_solve, TRIDIAGONAL),
    Spec("tridiagonal_solve/batched", tridiagonal_solve,
         [diagonal((2, 3), -1, 1), diagonal((2, 3), 3, 4), diagonal((2, 3), -1, 1), Dom((2, 3, 2))]),
    Spec("lu/square", lambda x: bind("lu", x)[0], [general((3, 3))]),
    Spec("lu/tall", lambda x: bind("lu", x)[0], [general((4, 3))]),
    Spec("lu/wide-batched", lambda x: bind("lu", x)[0], [general((2, 3, 4))]),
    Spec("lu/complex", lambda x: bind("lu", x)[0], [general((3, 3), C128)]),
    Spec("qr/reduced", qr(), [with_spectrum((), 4, 3)], **LOOSE),
    Spec("qr/full-square-batched", qr(full=True), [with_spectrum((2,), 3, 3)], **LOOSE),
    Spec("qr/complex", qr(), [general((4, 3), C128)], **LOOSE),
    Spec("qr/pivoting", lambda x: qr(pivoting=True)(x)[:2], [with_spectrum((), 4, 3)], **LOOSE),
    Spec("svd/tall", svd(), [with_spectrum((), 4, 3)], **LOOSE),
    Spec("svd/wide", svd(), [with_spectrum((), 3, 4)], **LOOSE),
    Spec("svd/square-batched", svd(), [with_spectrum((2,), 3, 3)], **LOOSE),
    Spec("svd/values-full-matrices", svd(full=True, uv=False), [with_spectrum((), 3, 4)], **LOOSE),
    Spec("svd/complex-tall", svd_invariants, [with_spectrum((), 4, 3, C128)], **LOOSE),
    Spec("svd/complex-wide", svd_invariants, [with_spectrum((), 3, 4, C128)], **LOOSE),
    Spec("eigh", eigh(), [with_spectrum((), 3, 3, hermitian=True)], **LOOSE),
    Spec("eigh/upper-batched", eigh(lower=False), [with_spectrum((2,), 3, 3, hermitian=True)], **LOOSE),
    Spec("eigh/complex", eigh_invariants, [with_spectrum((), 3, 3, C128, hermitian=True)], **LOOSE),
    Spec("eig/values", eig(), [general((3, 3))], **LOOSE),
    Spec("eig/values-complex-batched", eig(), [general((2, 3, 3), C128)], **LOOSE),
    Spec("eig/right-vectors", eig(right=True, derivs=True), [diagonalizable((), 3)], **LOOSE),
    Spec("eig/both-vectors", eig(left=True, right=True, derivs=True), [diagonalizable((), 3, C128)], **LOOSE),
]

test_spec = spec_test(SPECS)


# --- what JAX refuses --------------------------------------------------------------------------------------

REFUSED = [
    ("svd", svd(full=True), (3, 4)),
    ("qr", qr(), (3, 4)),
    ("qr", qr(full=True), (4, 3)),
    ("qr", qr(pivoting=True), (2, 4, 3)),
    ("eig", eig(right=True), (3, 3)),
    ("eigh", lambda x: bind("eigh", x, lower=True, sort_eigenvalues=True, subset_by_index=(0, 2), algorithm=None),
     (3, 3)),
]


@pytest.mark.parametrize("prim, fn, shape", REFUSED, ids=[f"{p}-{s}" for p, _, s in REFUSED])
@pytest.mark.parametrize("mode", ["jvp", "vjp"])
def test_cases_jax_refuses_raise_naming_the_primitive(prim, fn, shape, mode):
    closed = program_of(Spec(prim, fn, [Dom(shape)]), [np.ones(shape)])
    outs = [i for i, v in enumerate(closed.jaxpr.outvars) if v.aval.dtype.kind in "fc"]
    with pytest.raises(UnsupportedPrimitive, match=rf"'{prim}' has no JVP/VJP \(.*JAX"):
        if mode == "jvp":
            jvp_program(closed, [0])
        else:
            vjp_program(closed, [0], seed="inputs", cotangent_outputs=outs)


# --- JAX's conventions the finite differences do not see -------------------------------------------------


def test_b_cotangent_is_the_solve_with_transpose_a_flipped():
    spec = next(s for s in SPECS if s.name == "triangular_solve/left-lower-tall")
    args = spec.draw(0)
    program, _ = vjp_program(program_of(spec, args), [1], seed="inputs", cotangent_outputs=[0])
    solves = [e.params for e in program.jaxpr.eqns if e.primitive == "triangular_solve"]
    assert [(p["left_side"], p["lower"], p["transpose_a"]) for p in solves] == [(True, True, True)]


def test_eigh_tangent_is_taken_at_the_symmetrized_input():
    """JAX's rule recomputes eigh(symmetrize(a)): at a non-symmetric a (whose upper triangle the primitive
    ignores) the tangent is the one at (a + a^T) / 2, for the same da."""
    raw = Spec("eigh-raw", lambda x: bind("eigh", x, lower=True, sort_eigenvalues=True, subset_by_index=None,
                                          algorithm=None), [Dom((3, 3))])
    rng = np.random.default_rng(0)
    a, da = with_spectrum((), 3, 3, hermitian=True).draw(rng), rng.standard_normal((3, 3))
    skewed = a + np.triu(rng.standard_normal((3, 3)), 1)
    closed = program_of(raw, [a])
    program, _ = jvp_program(closed, [0])
    at_skewed = eval_jaxpr(program, skewed, da)[2:]
    at_symmetric = eval_jaxpr(program, (skewed + skewed.T) / 2, da)[2:]
    for got, want in zip(at_skewed, at_symmetric, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# --- the oracle --------------------------------------------------------------------------------------------

# What the family holds that is not this module's: `custom_linear_solve` (jnp.linalg.solve, inv) and `cond`
# (det and slogdet through JAX's platform-dependent diagonal) have their rules with the control-flow ones.
ELSEWHERE = ("custom_linear_solve", "cond")


def test_oracle():
    outcomes = assert_oracle("linalg", ("jvp", "vjp"))
    skipped = [o for o in outcomes if o.status == "skipped"]
    assert all(any(f"'{p}'" in o.reason for p in ELSEWHERE) for o in skipped), [o.reason for o in skipped]
    assert len(outcomes) - len(skipped) >= 12
