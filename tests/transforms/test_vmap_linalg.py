"""Batching rules of the linear-algebra primitives (transforms/batching/rules/linalg.py): vmap against a loop over
slices for every primitive JAX batches (real and complex, leading batch dimensions, every result, integer pivots
and permutations exactly) at every batch-axis position and on random configurations; the folds that keep an
unbatched matrix unbatched; cholesky_update refused as JAX refuses it; then the `linalg` oracle family against
jax.vmap."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pytest

from ir import make_jaxpr
from ir.errors import UnsupportedPrimitive
from ir.params import Symbol
from ir.tracing import bind
from rewrites.costs import CostModel, bytes_moved
from rewrites.options import Options
from tests.transforms.ad_helpers import Dom, Spec
from tests.transforms.vmap_helpers import Config, assert_oracle, batched_program, check_config, vmap_spec_tests


@dataclass(frozen=True)
class Matrix(Dom):
    """A (batch of) square matrices of one `kind`: general, spd (Hermitian positive definite, well conditioned),
    hermitian, or triangular (either triangle well conditioned: the diagonal shifted away from 0)."""

    kind: str = "general"

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        x = rng.uniform(self.low, self.high, size=self.shape)
        if np.dtype(self.dtype).kind == "c":
            x = x + 1j * rng.uniform(self.low, self.high, size=self.shape)
        n = self.shape[-1]
        h = np.swapaxes(x, -1, -2).conj()
        shaped = {"general": lambda: x, "spd": lambda: x @ h + n * np.eye(n), "hermitian": lambda: (x + h) / 2,
                  "triangular": lambda: x + 2 * n * np.eye(n)}
        return shaped[self.kind]().astype(self.dtype)


C128 = "complex128"
SVD = dict(full_matrices=False, compute_uv=True, subset_by_index=None, algorithm=None)
EIGH = dict(lower=True, sort_eigenvalues=True, subset_by_index=None, algorithm=None)
EIG = dict(compute_left_eigenvectors=False, compute_right_eigenvectors=False, enable_eigvec_derivs=False,
           implementation=None)
SCHUR = dict(compute_schur_vectors=True, select_callable=None, sort_eig_vals=False)


def op(prim: str, **params):
    return lambda *xs: bind(prim, *xs, **params)


def solve(**flags):
    params = dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False, unit_diagonal=False)
    return op("triangular_solve", **{**params, **flags})


def qr(**flags):
    return op("qr", **{"full_matrices": False, "pivoting": False, "use_magma": None, **flags})


DIAGONALS = [Dom((4,), -1, 1), Dom((4,), 3, 5), Dom((4,), -1, 1)]  # diagonally dominant
BATCHED_DIAGONALS = [Dom((2, 4), -1, 1), Dom((2, 4), 3, 5), Dom((2, 4), -1, 1)]
PIVOTS = dict(dtype="int32", values=(0, 1, 2, 3))

SPECS = [
    Spec("cholesky", op("cholesky"), [Matrix((3, 3), kind="spd")]),
    Spec("cholesky/batched-c128", op("cholesky"), [Matrix((2, 3, 3), dtype=C128, kind="spd")]),
    Spec("triangular_solve/left-lower", solve(), [Matrix((3, 3), kind="triangular"), Dom((3, 2))]),
    Spec("triangular_solve/right-upper-transpose", solve(left_side=False, lower=False, transpose_a=True),
         [Matrix((3, 3), kind="triangular"), Dom((2, 3))]),
    Spec("triangular_solve/left-adjoint-unit-c128", solve(transpose_a=True, conjugate_a=True, unit_diagonal=True),
         [Matrix((3, 3), dtype=C128, kind="triangular"), Matrix((3, 2), dtype=C128)]),
    Spec("triangular_solve/right-conjugate-c128", solve(left_side=False, conjugate_a=True),
         [Matrix((3, 3), dtype=C128, kind="triangular"), Matrix((4, 3), dtype=C128)]),
    Spec("triangular_solve/left-batched", solve(lower=False), [Matrix((2, 3, 3), kind="triangular"), Dom((2, 3, 2))]),
    Spec("triangular_solve/right-batched", solve(left_side=False), [Matrix((2, 3, 3), kind="triangular"),
                                                                    Dom((2, 4, 3))]),
    Spec("triangular_solve/f32", solve(), [Matrix((3, 3), dtype="float32", kind="triangular"),
                                           Dom((3, 1), dtype="float32")]),
    Spec("qr/reduced", qr(), [Matrix((4, 3))]),
    Spec("qr/full-wide", qr(full_matrices=True), [Matrix((3, 4))]),
    Spec("qr/pivoting", qr(pivoting=True), [Matrix((4, 3))]),
    Spec("qr/batched-c128", qr(), [Matrix((2, 3, 3), dtype=C128)]),
    Spec("svd/reduced", op("svd", **SVD), [Matrix((4, 3))]),
    Spec("svd/full-wide", op("svd", **{**SVD, "full_matrices": True}), [Matrix((3, 4))]),
    Spec("svd/values", op("svd", **{**SVD, "compute_uv": False}), [Matrix((2, 4, 3))]),
    Spec("svd/qr-algorithm-c128", op("svd", **{**SVD, "algorithm": Symbol("SvdAlgorithm.QR")}),
         [Matrix((3, 3), dtype=C128)]),
    Spec("eigh/lower", op("eigh", **EIGH), [Matrix((3, 3), kind="hermitian")]),
    Spec("eigh/upper-c128", op("eigh", **{**EIGH, "lower": False}), [Matrix((3, 3), dtype=C128, kind="hermitian")]),
    Spec("eigh/batched", op("eigh", **EIGH), [Matrix((2, 3, 3), kind="hermitian")]),
    Spec("lu", op("lu"), [Matrix((3, 3))]),
    Spec("lu/wide", op("lu"), [Matrix((3, 4))]),
    Spec("lu/tall-batched-c128", op("lu"), [Matrix((2, 4, 3), dtype=C128)]),
    Spec("lu_pivots_to_permutation", op("lu_pivots_to_permutation", permutation_size=4), [Dom((3,), **PIVOTS)]),
    Spec("lu_pivots_to_permutation/batched", op("lu_pivots_to_permutation", permutation_size=4),
         [Dom((2, 4), **PIVOTS)]),
    Spec("householder_product", op("householder_product"), [Matrix((4, 3)), Dom((2,))]),
    Spec("householder_product/batched-c128", op("householder_product"),
         [Matrix((2, 4, 3), dtype=C128), Matrix((2, 3), dtype=C128)]),
    Spec("eig/values", op("eig", **EIG), [Matrix((3, 3))]),
    Spec("eig/vectors", op("eig", **{**EIG, "compute_left_eigenvectors": True, "compute_right_eigenvectors": True}),
         [Matrix((3, 3))]),
    Spec("eig/right-c128", op("eig", **{**EIG, "compute_right_eigenvectors": True}), [Matrix((3, 3), dtype=C128)]),
    Spec("schur", op("schur", **SCHUR), [Matrix((3, 3))]),
    Spec("schur/no-vectors-batched", op("schur", **{**SCHUR, "compute_schur_vectors": False}),
         [Matrix((2, 3, 3))]),
    Spec("hessenberg", op("hessenberg"), [Matrix((4, 4))]),
    Spec("tridiagonal", op("tridiagonal", lower=True), [Matrix((4, 4), kind="hermitian")]),
    Spec("tridiagonal/upper-c128", op("tridiagonal", lower=False), [Matrix((3, 3), dtype=C128, kind="hermitian")]),
    Spec("tridiagonal_solve", op("tridiagonal_solve", perturb_singular=False), [*DIAGONALS, Dom((4, 2))]),
    Spec("tridiagonal_solve/batched", op("tridiagonal_solve", perturb_singular=False),
         [*BATCHED_DIAGONALS, Dom((2, 4, 3))]),
]

test_axes, test_random = vmap_spec_tests(SPECS)


# --- an unbatched matrix stays unbatched ---------------------------------------------------------------------

ROWS = {s.name: s for s in SPECS}
RAW = Options(rules="none")


def _broadcast_averse(prim, params, ins, outs):
    """Bytes moved, a broadcast priced out: extraction keeps a form that does not materialize where one exists."""
    return 10**9 if prim == "broadcast_in_dim" else bytes_moved.fn(prim, params, ins, outs)


NO_BROADCAST = Options(rules="none", cost=CostModel("broadcast-averse", _broadcast_averse))


def _checked(name: str, in_axes, options: Options):
    """The batched program of row `name` (batch size 3, output axis 0), checked against a loop over slices."""
    spec = ROWS[name]
    config = Config(tuple(in_axes), (0,) * len(_closed(spec).out_avals), 3)
    check_config(spec, config, options=options)
    return batched_program(_closed(spec), config, options)


def _closed(spec: Spec):
    return make_jaxpr(spec.fn)(*[d.draw(np.random.default_rng(0)) for d in spec.domains])


def _eqn(program, prim: str):
    [eqn] = [e for e in program.jaxpr.eqns if e.primitive == prim]
    return eqn


@pytest.mark.parametrize("name, b_shape", [
    ("triangular_solve/left-lower", (3, 6)),  # B into the columns
    ("triangular_solve/right-upper-transpose", (6, 3)),  # B into the rows: reshapes alone
    ("triangular_solve/left-batched", (2, 3, 6)),
    ("triangular_solve/right-batched", (2, 12, 3)),
])
def test_unbatched_triangular_matrix_is_not_broadcast(name, b_shape):
    """JAX's fold: one solve with B times the right-hand sides, `a` as it is (no broadcast_in_dim)."""
    program = _checked(name, (None, 0), RAW)
    eqn = _eqn(program, "triangular_solve")
    assert eqn.invars[0].aval.shape == ROWS[name].domains[0].shape
    assert eqn.invars[1].aval.shape == b_shape
    assert "broadcast_in_dim" not in {e.primitive for e in program.jaxpr.eqns}
    if b_shape == (6, 3):
        assert {e.primitive for e in program.jaxpr.eqns} == {"reshape", "triangular_solve"}


@pytest.mark.parametrize("name", ["tridiagonal_solve", "tridiagonal_solve/batched"])
def test_unbatched_diagonals_are_not_broadcast(name):
    """With only b batched, the variant folds B into b's columns and the diagonals stay unbatched (JAX's form);
    with a batched diagonal every operand is batched (the unbatched ones broadcast)."""
    shapes = [d.shape for d in ROWS[name].domains]
    eqn = _eqn(_checked(name, (None, None, None, 0), NO_BROADCAST), "tridiagonal_solve")
    assert [x.aval.shape for x in eqn.invars] == [*shapes[:3], (*shapes[3][:-1], 3 * shapes[3][-1])]
    eqn = _eqn(_checked(name, (None, 0, None, 0), NO_BROADCAST), "tridiagonal_solve")
    assert [x.aval.shape for x in eqn.invars] == [(3, *s) for s in shapes]


def test_cholesky_update_is_not_batched():
    """JAX does not batch cholesky_update (its operands take no batch dimensions): a clear error naming it."""
    closed = make_jaxpr(op("cholesky_update"))(np.eye(3), np.ones(3))
    with pytest.raises(UnsupportedPrimitive, match="cholesky_update"):
        batched_program(closed, Config((0, None), (0,), 2))


# --- oracle ----------------------------------------------------------------------------------------------------

# Primitives of the family's programs that other batching modules own: the lead's control flow.
OTHERS = {"custom_linear_solve", "cond", "while", "scan"}


def test_oracle():
    """Every case of the `linalg` family: no failure; a skip only for another module's primitive (jnp.linalg.solve,
    inv, det and slogdet go through custom_linear_solve and cond)."""
    outcomes = assert_oracle("linalg", ("vmap",), stride=1)
    skipped = {re.search(r"primitive '([^']+)'", o.reason).group(1) for o in outcomes if o.status == "skipped"}
    assert skipped <= OTHERS, f"skipped for linalg primitives: {skipped - OTHERS}"
    assert sum(o.status == "passed" for o in outcomes) >= 32
