"""Batching rules of the linear-algebra primitives (jax/_src/lax/linalg.py), the batch axis first.

Every linalg primitive acts on its operands' trailing core axes (two for a matrix, one for a vector) and
maps over leading batch dimensions (JAX's `linalg_primitive`, batched by `expand_dims_batcher`), so a batch
axis at 0 is one more leading batch dimension:
- the one-operand primitives (cholesky, qr, svd, eigh, lu, eig, schur, hessenberg, tridiagonal,
  lu_pivots_to_permutation) are the op itself with the same params (one rule serves every result);
- householder_product takes both operands batched: an unbatched one is broadcast to the batch size, as
  `expand_dims_batcher` does (`materialize`);
- triangular_solve (`_triangular_solve_batching_rule`): with `a` unbatched, the batch axis is folded into b's
  columns (left_side) or rows (right side), so `a` is never broadcast: the systems of one `a` are one solve
  with more right-hand sides; with `a` batched, an unbatched b is broadcast;
- tridiagonal_solve (`_tridiagonal_solve_batching_rule`): every operand batched (unbatched ones broadcast);
  where the three diagonals are materialized unbatched values, the batch axis is folded into b's columns
  instead and the diagonals stay unbatched (a variant of the same node; extraction picks).

A fold is transpose -> reshape, the solve, then reshape -> transpose back; a transpose that would be the
identity is left out (a case of its own). cholesky_update has no rule: JAX does not batch it
(`supports_batching=False`) and its operands take no batch dimensions.
"""

from __future__ import annotations

from egglog import Vec, eq, i64, var

from rewrites.terms import Arr, T
from transforms.batching.rule import INTS, Site, Values, VmapBook, moveaxis_perm, node, require

V = VmapBook("linalg")


# --- one operand: the op on a leading batch dimension --------------------------------------------------

SINGLE_RESULT = ("cholesky", "lu_pivots_to_permutation")
MULTI_RESULT = ("qr", "geqrf", "svd", "eigh", "lu", "eig", "schur", "hessenberg", "tridiagonal")

for _prim in SINGLE_RESULT:
    V.batch(_prim, "b", lambda x, *, op: op(x), values=Values(lambda e: {"op": e.params}, op=node(_prim)),
            math=f"{_prim}(x)[b] = {_prim}(x[b]): the op maps over leading batch dimensions")
for _prim in MULTI_RESULT:
    V.batch(_prim, "b", lambda x, *, op, index: op.result(index, x), each_result=True,
            values=Values(lambda e: {"op": e.params}, op=node(_prim)),
            math=f"{_prim}(x)[b] = {_prim}(x[b]), each result: the op maps over leading batch dimensions")


# --- folding the batch axis into a core axis ---------------------------------------------------------------


def _fold(e: Site, i: int, at: int) -> dict:
    """Operand i (batched, shape (B, *s)) with the batch axis moved to position `at` of s and merged with the
    axis after it: the case ("flat" when no transpose is needed, else "moved"), the transpose into place,
    the merged shape, the unmerged shape and the transpose back (batch axis first)."""
    shape = e.in_avals[i].shape
    rank = len(shape) + 1
    moved = (*shape[:at], e.size, *shape[at:])
    merged = (*shape[:at], e.size * shape[at], *shape[at + 1:])
    there, back = moveaxis_perm(rank, 0, at), moveaxis_perm(rank, at, 0)
    return {"case": "flat" if at == 0 else "moved", "there": there, "merged": merged, "moved": moved, "back": back}


def _folded(x: Arr, there, merged) -> Arr:
    return T.reshape(T.transpose(x, there), merged)


def _unfolded(y: Arr, moved, back) -> Arr:
    return T.transpose(T.reshape(y, moved), back)


# --- triangular_solve ------------------------------------------------------------------------------------


def _solve_broadcast(e: Site) -> dict:
    """The same solve, and b broadcast to the batch size."""
    b = e.in_avals[1]
    return {"op": e.params, "shape": (e.size, *b.shape), "dims": tuple(range(1, b.ndim + 1))}


V.batch("triangular_solve", "bb", lambda a, b, *, op: op(a, b),
        values=Values(lambda e: {"op": e.params}, op=node("triangular_solve")),
        math="solve(a, b)[b] = solve(a[b], b[b]): both operands have the batch axis as a leading batch dimension")
V.batch("triangular_solve", "bu", lambda a, b, *, op, shape, dims: op(a, T.broadcast_in_dim(b, shape, dims)),
        values=Values(_solve_broadcast, op=node("triangular_solve"), shape=INTS, dims=INTS),
        math="solve(a[b], b) for each b: b is broadcast to the batch size, as JAX's bdim_at_front does")


def _solve_fold(e: Site) -> dict:
    """b's batch axis merged into its columns (left_side: after a's rows) or rows (right side: before them)."""
    batch_dims = e.in_avals[0].ndim - 2
    return {**_fold(e, 1, batch_dims + 1 if e.params["left_side"] else batch_dims), "op": e.params}


V.cases("triangular_solve", "ub", {
    "flat": lambda a, b, *, there, merged, moved, back, op: T.reshape(op(a, T.reshape(b, merged)), moved),
    "moved": lambda a, b, *, there, merged, moved, back, op: _unfolded(op(a, _folded(b, there, merged)), moved, back),
}, fn=_solve_fold, there=INTS, merged=INTS, moved=INTS, back=INTS, op=node("triangular_solve"),
    math="the systems of one unbatched a are one solve with B times the right-hand sides: b's batch axis is "
         "merged into its columns (a x = b) or rows (x a = b), then split out of the result (JAX's rule)")


# --- householder_product, tridiagonal_solve: every operand batched -------------------------------------------

V.batch("householder_product", None, lambda a, taus, *, op: op(a, taus), materialize=True,
        values=Values(lambda e: {"op": e.params}, op=node("householder_product")),
        math="householder_product(a, taus)[b] = householder_product(a[b], taus[b]); an unbatched operand is "
             "broadcast, as JAX's expand_dims_batcher does")


def _tridiagonal_params(e: Site) -> dict:
    """The same solve; for the variant, the broadcast dimensions of a materialized diagonal and b's batch axis
    merged into its columns (after the diagonals' length)."""
    batch_dims = e.in_avals[0].ndim - 1
    fold = _fold(e, 3, batch_dims + 1)
    del fold["case"]
    return {"op": e.params, "dims": tuple(range(1, batch_dims + 2)), **fold}


_TRIDIAGONAL = Values(_tridiagonal_params, op=node("tridiagonal_solve"), dims=INTS, there=INTS, merged=INTS, moved=INTS,
                      back=INTS)


def _held(xb: Arr, dims, name: str) -> Arr:
    """The unbatched x that the batched operand `xb` materializes (x broadcast along a new leading axis, `dims`
    = 1..rank): the rule fires only where `xb` is one."""
    x = var(name, Arr)
    require(eq(xb).to(T.broadcast_in_dim(x, var(f"{name}_shape", Vec[i64]), dims)))
    return x


def _tridiagonal_fold(dl, d, du, b, *, op, dims, there, merged, moved, back):
    diagonals = [_held(x, dims, name) for x, name in ((dl, "dl"), (d, "d"), (du, "du"))]
    return _unfolded(op(*diagonals, _folded(b, there, merged)), moved, back)


V.batch("tridiagonal_solve", None, lambda dl, d, du, b, *, op, **fold: op(dl, d, du, b), materialize=True,
        values=_TRIDIAGONAL, arity=4,
        math="tridiagonal_solve(dl, d, du, b)[b] = tridiagonal_solve(dl[b], d[b], du[b], b[b]); unbatched operands "
             "are broadcast, as JAX's bdim_at_front does")
V.variant("tridiagonal_solve", "bbbb", _tridiagonal_fold, name="diagonals-unbatched",
          math="with materialized (unbatched) diagonals, the B systems of one matrix are one solve with B times "
               "the columns: b's batch axis merged into its columns, then split out of the result (JAX's rule)")
