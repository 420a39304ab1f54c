"""JVP and VJP rules of the linear-algebra solves (jax/_src/lax/linalg.py): cholesky, triangular_solve,
tridiagonal_solve and lu; the decompositions (qr, svd, eigh, eig) are in `linalg_decomp`, on this kit.

JAX gives these primitives JVP rules and reaches reverse mode by transposing their linear part. Each VJP
here is that transpose written out: a matmul transposes into the matmul with the other factor transposed
(never conjugated: JAX's convention), a triangular solve into the solve with `transpose_a` flipped, a
triangle mask or a product with a primal array into itself, `real` into `complex(ct, 0)`, a gather into a
scatter-add. JAX's forms are kept (the decompositions its rules recompute, the association orders it picks
by shape, its `1 / (x + eye) - eye` guards) so that results agree with it to rounding.

Matrices may carry leading batch dimensions: a matmul is a dot_general batched over them, a transpose
swaps the two trailing axes, masks compare batched iotas (`Kit`); each equation's values give the
dimension numbers, permutations and node params for its shapes. Complex operands need conjugations that
real ones must not get, so such slots have a real and a complex rule; those and the shape cases (tall or
wide, left or right solves) are rules of one slot, each guarded by the case number its values compute
(`entry`). lu's pivots and permutation are integers: no tangent. householder_product, schur, hessenberg,
tridiagonal and cholesky_update have no entry: JAX does not differentiate them either.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

from egglog import Vec, eq, f64, i64

from ir import dtypes, lax
from rewrites.analyses.shapes import dimension_numbers
from rewrites.terms import Arr, T, args_list
from transforms.ad.rule import INT, INTS, STR, ADBook, Values, dtype, params, require
from transforms.ad.rules.indexing_params import PROMISE, gather_params, scatter_add_params, scatter_dn
from transforms.rulebook import ValueType

A = ADBook("linalg")
EMPTY = Vec[i64].empty()


# --- entries: one set of values per slot, one guarded rule per case ----------------------------------------------


def entry(book: ADBook, mode: str, prim: str, slot: str, kinds: dict[str, ValueType], values: Callable,
          builds: dict[str, Callable], *, arity: int, results: int | dict[str, int] = 1, whole: bool = False,
          math: str) -> None:
    """The rules of one slot. `values(params, in_avals, out_avals)` returns a dict: the case's name under
    "case", then a value per name of `kinds` (its type); `builds[case](seeds, operands, results, v)` builds
    that case's term, `v` holding the values by name. `results`: the result count (per case)."""
    names, cases = list(kinds), list(builds)

    def computed(params, ins, outs):
        got = values(params, ins, outs)
        return {"case": cases.index(got["case"]), **{name: got[name] for name in names}}

    read = Values(computed, case=INT, **kinds)
    for number, (case, f) in enumerate(builds.items()):
        n_outs = results[case] if isinstance(results, dict) else results
        n_seeds = (arity if mode == "jvp" else n_outs) if whole else 1

        def build(seeds, xs, outs, vals, f=f, number=number):
            require(eq(vals["case"]).to(i64(number)))
            return f(seeds, xs, outs, SimpleNamespace(**{name: vals[name] for name in names}))

        book.add(mode, prim, slot, "all" if whole else "one", read, f"{math} ({case})", arity, n_outs, n_seeds, build,
                 suffix=f"-{case}")


def per_result(f: Callable, j: int) -> Callable:
    """Result j of a build returning every result's tangent (one rule per result slot)."""
    return lambda seeds, xs, outs, v: f(seeds, xs, outs, v)[j]


# --- terms ---------------------------------------------------------------------------------------------


def select(pred: Arr, on_true: Arr, on_false: Arr) -> Arr:
    """lax.select(pred, on_true, on_false) = select_n(pred, on_false, on_true)."""
    return T.select_n(args_list([pred, on_false, on_true]))


def int32(k) -> Arr:
    """A rank-0 int32 literal: k a Python int or an i64 pattern variable."""
    return Arr.scalar(float(k) if isinstance(k, int) else f64.from_i64(k), "int32")


class Kit:
    """The terms a rule builds from its values `v`: batched matmuls and transposes (`mm`, `swap`),
    conjugation (`conj`, only for complex operands), masks over grids of iotas (`<grid>_r`, `<grid>_c`,
    `<grid>_shape`), triangular solves, the diagonal's gather and scatter-add (`diag_*`) and the row
    gather by a permutation (`rows_*`)."""

    def __init__(self, v: SimpleNamespace, cplx: bool = False):
        self.v, self.cplx = v, cplx

    def mm(self, x: Arr, y: Arr) -> Arr:
        return T.dot_general(x, y, self.v.mm)

    def t(self, x: Arr) -> Arr:
        return T.transpose(x, self.v.swap)

    def conj(self, x: Arr) -> Arr:
        return T.conj(x, **self.v.conj) if self.cplx else x

    def h(self, x: Arr) -> Arr:
        """JAX's `_H`: the conjugate transpose (the transpose for real operands)."""
        return self.conj(self.t(x))

    def real(self, x: Arr) -> Arr:
        return T.real(x) if self.cplx else x

    def ts(self, a: Arr, b: Arr, params) -> Arr:
        return T.triangular_solve(a, b, **params)

    def iota(self, grid: str, axis: int) -> Arr:
        return T.iota(**getattr(self.v, f"{grid}_{'rc'[axis]}"))

    def zeros(self, grid: str, dt) -> Arr:
        return T.broadcast_in_dim(Arr.scalar(0.0, dt), getattr(self.v, f"{grid}_shape"), EMPTY)

    def tri(self, grid: str, k) -> Arr:
        """JAX's `_tri`: row + k >= column."""
        return T.ge(T.add(self.iota(grid, 0), int32(k)), self.iota(grid, 1))

    def tril(self, x: Arr, grid: str, k, dt) -> Arr:
        return select(self.tri(grid, k), x, self.zeros(grid, dt))

    def triu(self, x: Arr, grid: str, k, dt) -> Arr:
        return select(self.tri(grid, k - 1), self.zeros(grid, dt), x)

    def eye(self, grid: str, dt) -> Arr:
        return T.convert_element_type(T.eq(self.iota(grid, 0), self.iota(grid, 1)), dt)

    def _diag_indices(self) -> Arr:
        return T.broadcast_in_dim(T.iota(**self.v.diag_iota), self.v.diag_idx_shape, self.v.diag_idx_dims)

    def diag(self, x: Arr) -> Arr:
        """JAX's `_extract_diagonal`: x[..., i, i]."""
        return T.gather(x, self._diag_indices(), **self.v.diag_read)

    def undiag(self, s: Arr, grid: str, dt) -> Arr:
        """The diagonal matrix of s (JAX's `_construct_diagonal`; the transpose of `diag`)."""
        return T.scatter_add(self.zeros(grid, dt), self._diag_indices(), s, **self.v.diag_write)

    def rows(self, x: Arr, perm: Arr) -> Arr:
        """x[..., perm, :] (JAX's `a[permutation]`)."""
        return T.gather(x, T.reshape(perm, self.v.perm_shape), **self.v.rows_read)

    def unrows(self, ct: Arr, perm: Arr, grid: str, dt) -> Arr:
        """The transpose of `rows`: ct's rows added into zeros at the rows perm names."""
        return T.scatter_add(self.zeros(grid, dt), T.reshape(perm, self.v.perm_shape), ct, **self.v.rows_write)


# --- the values the kit reads ------------------------------------------------------------------------

MATRICES = {"mm": STR, "swap": INTS, "conj": params("conj")}
DIAGONAL = {"diag_iota": params("iota"), "diag_idx_shape": INTS, "diag_idx_dims": INTS,
            "diag_read": params("gather"), "diag_write": params("scatter-add")}
ROWS = {"perm_shape": INTS, "rows_read": params("gather"), "rows_write": params("scatter-add")}
SOLVE = params("triangular_solve")


def grid_kinds(*grids: str) -> dict[str, ValueType]:
    return {f"{g}_{part}": kind for g in grids for part, kind in (("r", params("iota")), ("c", params("iota")),
                                                                   ("shape", INTS))}


def iota(shape: tuple[int, ...], dimension: int) -> dict:
    return {"dimension": dimension, "dtype": dtypes.int32, "shape": tuple(shape), "sharding": None}


def matrices(batch: tuple[int, ...], dt) -> dict:
    b = len(batch)
    return {"mm": dimension_numbers([b + 1], [b], range(b), range(b)), "swap": (*range(b), b + 1, b),
            "conj": {"input_dtype": dt}}


def grid(name: str, batch: tuple[int, ...], n: int, m: int) -> dict:
    """Row and column iotas of a batch of n x m matrices, and their shape."""
    shape = (*batch, n, m)
    return {f"{name}_r": iota(shape, len(batch)), f"{name}_c": iota(shape, len(batch) + 1), f"{name}_shape": shape}


def diagonal(batch: tuple[int, ...], k: int, dt) -> dict:
    """x[..., i, i] for i < k as a gather with (k, 2) indices (i, i), and its transpose."""
    b = len(batch)
    dn = lax.GatherDimensionNumbers(offset_dims=tuple(range(b)), collapsed_slice_dims=(b, b + 1),
                                    start_index_map=(b, b + 1))
    return {"diag_iota": iota((k,), 0), "diag_idx_shape": (k, 2), "diag_idx_dims": (0,),
            "diag_read": gather_params(dn, (*batch, 1, 1)),
            "diag_write": scatter_add_params(scatter_dn(dn), dt, PROMISE)}


def rows(batch: tuple[int, ...], m: int, n: int, dt) -> dict:
    """x[..., perm, :] for a batch of m x n matrices and permutations of m, and its transpose."""
    b = len(batch)
    dn = lax.GatherDimensionNumbers(offset_dims=(b + 1,), collapsed_slice_dims=(b,), start_index_map=(b,),
                                    operand_batching_dims=tuple(range(b)), start_indices_batching_dims=tuple(range(b)))
    return {"perm_shape": (*batch, m, 1), "rows_read": gather_params(dn, (1,) * b + (1, n)),
            "rows_write": scatter_add_params(scatter_dn(dn), dt, PROMISE)}


def columns(m: int, n: int, dt) -> tuple[dict, dict]:
    """x[:, perm] for an m x n matrix (its gather and scatter-add params; indices of shape (n, 1))."""
    dn = lax.GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,))
    return gather_params(dn, (m, 1)), scatter_add_params(scatter_dn(dn), dt, PROMISE)


def solve(left: bool, lower: bool, transpose: bool = False, conjugate: bool = False, unit: bool = False) -> dict:
    return {"conjugate_a": conjugate, "left_side": left, "lower": lower, "transpose_a": transpose,
            "unit_diagonal": unit}


def real_dtype(dt):
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(dt, dt)


def kind(dt) -> str:
    return "complex" if dt.is_complex else "real"


def split(a) -> tuple[tuple[int, ...], int, int]:
    """A matrix aval's batch dimensions, rows and columns."""
    return a.shape[:-2], a.shape[-2], a.shape[-1]


# --- cholesky: Murray (2016), JAX's `_cholesky_jvp_rule` ----------------------------------------------------
# dL = L phi(L^-1 dA L^-H), phi the lower triangle with the diagonal halved, L the result's lower triangle.

CHOLESKY = {**MATRICES, **grid_kinds("sq"), "right": SOLVE, "left": SOLVE, "right_t": SOLVE, "left_t": SOLVE}


def _cholesky_values(p, ins, outs):
    batch, _, n = split(ins[0])
    cplx = ins[0].dtype.is_complex
    return {"case": "any", **matrices(batch, ins[0].dtype), **grid("sq", batch, n, n),
            "right": solve(False, True, transpose=True, conjugate=cplx), "left": solve(True, True),
            "right_t": solve(False, True, conjugate=cplx), "left_t": solve(True, True, transpose=True)}


def _cholesky_parts(x, ans, v):
    """The kit, the dtype, L and phi's divisor 1 + eye."""
    k, dt = Kit(v), dtype(x)
    return k, dt, k.tril(ans, "sq", 0, dt), T.add(Arr.scalar(1.0, dt), k.eye("sq", dt))


def _cholesky_jvp(seeds, xs, outs, v):
    k, dt, lower, halve = _cholesky_parts(xs[0], outs[0], v)
    x = k.ts(lower, k.ts(lower, seeds[0], v.right), v.left)
    return k.mm(lower, T.div(k.tril(x, "sq", 0, dt), halve))


def _cholesky_vjp(seeds, xs, outs, v):
    k, dt, lower, halve = _cholesky_parts(xs[0], outs[0], v)
    x_bar = k.tril(T.div(k.mm(k.t(lower), seeds[0]), halve), "sq", 0, dt)
    return k.ts(lower, k.ts(lower, x_bar, v.left_t), v.right_t)


entry(A, "jvp", "cholesky", "0", CHOLESKY, _cholesky_values, {"any": _cholesky_jvp}, arity=1,
      math="dL = L phi(L^-1 dA L^-H), phi = lower triangle with the diagonal halved")
entry(A, "vjp", "cholesky", "0", CHOLESKY, _cholesky_values, {"any": _cholesky_vjp}, arity=1,
      math="A_bar = L^-H (solves) phi(L^T ct) L^-1: the JVP transposed")


# --- triangular_solve: JAX's `_triangular_solve_jvp_rule_a` and transpose rule -------------------------------
# In a: g = -op(dA masked to the triangle read), then A^-1 (g X), (A^-1 g) X, (X g) A^-1 or X (g A^-1), the
# order JAX picks by the shape of b. Linear in b: the solve of db; its transpose flips transpose_a. op's
# transpose is an identity permutation when transpose_a is false; its conjugation a rule of its own.

TRIANGULAR = {**MATRICES, "keep_first": params("iota"), "keep_second": params("iota"), "keep_offset": INT,
              "a_shape": INTS, "maybe_t": INTS, "own": SOLVE, "own_t": SOLVE}
_SIDES = ("left-tall", "left", "right-wide", "right")


def _triangular_values(p, ins, outs):
    a, b = ins
    batch, _, size = split(a)
    m, n = b.shape[-2:]
    side = ("left-tall" if m > n else "left") if p["left_side"] else ("right-wide" if m < n else "right")
    g = grid("a", batch, size, size)
    first, second = (g["a_r"], g["a_c"]) if p["lower"] else (g["a_c"], g["a_r"])
    conj = a.dtype.is_complex and bool(p["conjugate_a"])
    geometry = matrices(batch, a.dtype)
    return {"case": f"{side}-{'conj' if conj else 'plain'}", **geometry, "keep_first": first, "keep_second": second,
            "keep_offset": -1 if p["unit_diagonal"] else 0, "a_shape": g["a_shape"],
            "maybe_t": geometry["swap"] if p["transpose_a"] else tuple(range(a.ndim)), "own": dict(p),
            "own_t": {**p, "transpose_a": not p["transpose_a"]}}


def _triangle(g, a, v):
    """dA on the triangle the solve reads: JAX's `_tril(g, -k)` (lower) or `_triu(g, k)`, k = unit_diagonal,
    as `first + offset >= second` over the (row, column) or (column, row) iotas."""
    keep = T.ge(T.add(T.iota(**v.keep_first), int32(v.keep_offset)), T.iota(**v.keep_second))
    return select(keep, g, T.broadcast_in_dim(Arr.scalar(0.0, dtype(a)), v.a_shape, EMPTY))


def _triangular_jvp(side: str, conj: bool):
    def f(seeds, xs, outs, v):
        (a, _), x, k = xs, outs[0], Kit(v, conj)
        g = k.conj(T.transpose(T.neg(_triangle(seeds[0], a, v)), v.maybe_t))
        return {"left-tall": lambda: k.ts(a, k.mm(g, x), v.own), "left": lambda: k.mm(k.ts(a, g, v.own), x),
                "right-wide": lambda: k.ts(a, k.mm(x, g), v.own), "right": lambda: k.mm(x, k.ts(a, g, v.own))}[side]()
    return f


def _triangular_vjp(side: str, conj: bool):
    def f(seeds, xs, outs, v):
        (a, _), x, ct, k = xs, outs[0], seeds[0], Kit(v, conj)
        g_bar = {"left-tall": lambda: k.mm(k.ts(a, ct, v.own_t), k.t(x)),
                 "left": lambda: k.ts(a, k.mm(ct, k.t(x)), v.own_t),
                 "right-wide": lambda: k.mm(k.t(x), k.ts(a, ct, v.own_t)),
                 "right": lambda: k.ts(a, k.mm(k.t(x), ct), v.own_t)}[side]()
        return _triangle(T.neg(T.transpose(k.conj(g_bar), v.maybe_t)), a, v)
    return f


for _mode, _make, _math in (
        ("jvp", _triangular_jvp, "d_a X = -op(A)^-1 op(dA) X (left side) or -X op(dA) op(A)^-1, dA on A's triangle"),
        ("vjp", _triangular_vjp, "A_bar = mask(-op^T(op(A)^-T ct X^T)) (left) or mask(-op^T(X^T ct op(A)^-T))")):
    entry(A, _mode, "triangular_solve", "0", TRIANGULAR, _triangular_values,
          {f"{s}-{c}": _make(s, c == "conj") for s in _SIDES for c in ("plain", "conj")}, arity=2, math=_math)
A.jvp_linear("triangular_solve", [1], math="d_b X = op(A)^-1 db (linear in b)")
A.vjp("triangular_solve", 1, lambda ct, a, b, ans, *, flipped: T.triangular_solve(a, ct, **flipped),
      values=Values(lambda p, ins, outs: {"flipped": {**p, "transpose_a": not p["transpose_a"]}}, flipped=SOLVE),
      math="B_bar = op(A)^-T ct: the solve with transpose_a flipped (JAX's _triangular_solve_transpose_rule)")


# --- tridiagonal_solve: JAX's `_tridiagonal_solve_jvp_rule` and transpose rule -----------------------------
# dX = solve(db - P(ddl, dd, ddu, X)), P the tridiagonal product (`_tridiagonal_product`: the off-diagonal
# bands added into rows 1: and :-1, here as pads). The solve's transpose solves with the off-diagonals
# shifted into each other's places; P's transpose in a diagonal sums ct * X over the right-hand sides.

TRIDIAGONAL = {"own": params("tridiagonal_solve"), "x_shape": INTS, "band_shape": INTS, "vec_dims": INTS,
               "origin": INTS, "band_limit": INTS, "band_start": INTS, "vec_origin": INTS,
               "vec_head": INTS, "vec_start": INTS, "vec_limit": INTS, "rows_front": params("pad"),
               "rows_back": params("pad"), "vec_front": params("pad"), "vec_back": params("pad"), "sum_axes": INTS}


def _tridiagonal_values(p, ins, outs):
    *batch, m, n = outs[0].shape
    b, none = len(batch), ((0, 0, 0),) * len(batch)
    return {"case": "any", "own": dict(p), "x_shape": outs[0].shape, "band_shape": (*batch, m - 1, n),
            "vec_dims": tuple(range(b + 1)), "origin": (0,) * (b + 2), "band_limit": (*batch, m - 1, n),
            "band_start": (*(0,) * b, 1, 0), "vec_origin": (0,) * (b + 1), "vec_head": (*batch, m - 1),
            "vec_start": (*(0,) * b, 1), "vec_limit": (*batch, m),
            "rows_front": {"padding_config": (*none, (1, 0, 0), (0, 0, 0))},
            "rows_back": {"padding_config": (*none, (0, 1, 0), (0, 0, 0))},
            "vec_front": {"padding_config": (*none, (1, 0, 0))}, "vec_back": {"padding_config": (*none, (0, 1, 0))},
            "sum_axes": (b + 1,)}


def _bands(x, v):
    """X without its last row (what the sub-diagonal multiplies) and without its first (the super-diagonal)."""
    return T.slice(x, v.origin, v.band_limit), T.slice(x, v.band_start, v.x_shape)


def _tridiagonal_jvp(seeds, xs, outs, v):
    ddl, dd, ddu, db = seeds
    x = outs[0]
    zero, (above, below) = Arr.scalar(0.0, dtype(x)), _bands(x, v)
    sub_band = T.mul(T.broadcast_in_dim(T.slice(ddl, v.vec_start, v.vec_limit), v.band_shape, v.vec_dims), above)
    super_band = T.mul(T.broadcast_in_dim(T.slice(ddu, v.vec_origin, v.vec_head), v.band_shape, v.vec_dims), below)
    product = T.add(T.add(T.mul(T.broadcast_in_dim(dd, v.x_shape, v.vec_dims), x),
                          T.pad(sub_band, zero, **v.rows_front)), T.pad(super_band, zero, **v.rows_back))
    return T.tridiagonal_solve(*xs[:3], T.sub(db, product), **v.own)


def _tridiagonal_vjp(i: int):
    """Operand i's cotangent from u = solve^T ct (the solve with dl' = (0, du[:-1]), du' = (dl[1:], 0))."""
    def f(seeds, xs, outs, v):
        (dl, d, du, _), x, ct = xs, outs[0], seeds[0]
        zero = Arr.scalar(0.0, dtype(ct))
        u = T.tridiagonal_solve(T.pad(T.slice(du, v.vec_origin, v.vec_head), zero, **v.vec_front), d,
                                T.pad(T.slice(dl, v.vec_start, v.vec_limit), zero, **v.vec_back), ct, **v.own)
        if i == 3:
            return u
        y_bar, (above, below) = T.neg(u), _bands(x, v)
        if i == 1:
            return T.reduce_sum(T.mul(y_bar, x), v.sum_axes)
        if i == 0:
            band = T.mul(T.slice(y_bar, v.band_start, v.x_shape), above)
            return T.pad(T.reduce_sum(band, v.sum_axes), zero, **v.vec_front)
        band = T.mul(T.slice(y_bar, v.origin, v.band_limit), below)
        return T.pad(T.reduce_sum(band, v.sum_axes), zero, **v.vec_back)
    return f


entry(A, "jvp", "tridiagonal_solve", "out0", TRIDIAGONAL, _tridiagonal_values, {"any": _tridiagonal_jvp}, arity=4,
      whole=True, math="dX = solve(db - (ddl, dd, ddu) X)")
for _i, _name in enumerate(("dl", "d", "du", "b")):
    entry(A, "vjp", "tridiagonal_solve", str(_i), TRIDIAGONAL, _tridiagonal_values, {"any": _tridiagonal_vjp(_i)},
          arity=4, math=f"{_name}_bar from u = solve^T ct: " + (
              "u" if _i == 3 else "-u X summed over the right-hand sides, on the diagonal's rows"))


# --- lu: JAX's `_lu_jvp_rule` (De Hoog, Anderssen and Lukas) ------------------------------------------------
# With X = L^-1 P dA U^-1: d lu = L tril(X, -1) + triu(X) U, L (m x m, unit diagonal) and U (n x n) padded
# from the packed factors as JAX pads them.

LU = {**MATRICES, **grid_kinds("l_part", "u_part", "l_full", "u_full", "prod"), **ROWS, "origin": INTS,
      "l_limit": INTS, "u_limit": INTS, "l_pad": params("pad"), "u_pad": params("pad"), "k": INT,
      "solve_l": SOLVE, "solve_u": SOLVE, "solve_l_t": SOLVE, "solve_u_t": SOLVE}


def _lu_values(p, ins, outs):
    batch, m, n = split(ins[0])
    k, none, dt = min(m, n), ((0, 0, 0),) * len(batch), ins[0].dtype
    return {"case": "any", **matrices(batch, dt), **grid("l_part", batch, m, k), **grid("u_part", batch, k, n),
            **grid("l_full", batch, m, m), **grid("u_full", batch, n, n), **grid("prod", batch, m, n),
            **rows(batch, m, n, dt), "origin": (0,) * (len(batch) + 2), "l_limit": (*batch, m, k),
            "u_limit": (*batch, k, n), "l_pad": {"padding_config": (*none, (0, 0, 0), (0, m - k, 0))},
            "u_pad": {"padding_config": (*none, (0, n - k, 0), (0, 0, 0))}, "k": k,
            "solve_l": solve(True, True, unit=True), "solve_u": solve(False, False),
            "solve_l_t": solve(True, True, transpose=True, unit=True), "solve_u_t": solve(False, False, transpose=True)}


def _lu_factors(k: Kit, packed, dt, v):
    """JAX's L = pad(tril(lu[:, :k], -1)) + eye(m) and U = pad(triu(lu[:k])) + eye(n - k) at (k, k)."""
    zero = Arr.scalar(0.0, dt)
    lower = T.add(T.pad(k.tril(T.slice(packed, v.origin, v.l_limit), "l_part", -1, dt), zero, **v.l_pad),
                  k.eye("l_full", dt))
    r, c = k.iota("u_full", 0), k.iota("u_full", 1)
    corner = T.convert_element_type(getattr(T, "and")(T.eq(r, c), T.ge(r, int32(v.k))), dt)
    upper = T.add(T.pad(k.triu(T.slice(packed, v.origin, v.u_limit), "u_part", 0, dt), zero, **v.u_pad), corner)
    return lower, upper


def _lu_jvp(seeds, xs, outs, v):
    k, dt = Kit(v), dtype(xs[0])
    lower, upper = _lu_factors(k, outs[0], dt, v)
    x = k.ts(upper, k.ts(lower, k.rows(seeds[0], outs[2]), v.solve_l), v.solve_u)
    return T.add(k.mm(lower, k.tril(x, "prod", -1, dt)), k.mm(k.triu(x, "prod", 0, dt), upper))


def _lu_vjp(seeds, xs, outs, v):
    k, dt, ct = Kit(v), dtype(xs[0]), seeds[0]
    lower, upper = _lu_factors(k, outs[0], dt, v)
    x_bar = T.add(k.tril(k.mm(k.t(lower), ct), "prod", -1, dt), k.triu(k.mm(ct, k.t(upper)), "prod", 0, dt))
    return k.unrows(k.ts(lower, k.ts(upper, x_bar, v.solve_u_t), v.solve_l_t), outs[2], "prod", dt)


entry(A, "jvp", "lu", "out0", LU, _lu_values, {"any": _lu_jvp}, arity=1, results=3, whole=True,
      math="d lu = L tril(X, -1) + triu(X) U, X = L^-1 P dA U^-1")
entry(A, "vjp", "lu", "0", LU, _lu_values, {"any": _lu_vjp}, arity=1, results=3, whole=True,
      math="A_bar = P^T L^-T (tril(L^T ct, -1) + triu(ct U^T)) U^-T")
