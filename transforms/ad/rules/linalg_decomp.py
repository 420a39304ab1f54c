"""JVP and VJP rules of the decompositions (jax/_src/lax/linalg.py): qr, svd, eigh and eig, on the kit of
`transforms.ad.rules.linalg` (see its docstring: batched matmuls, masks, guarded real/complex and shape
cases, each VJP the transpose of JAX's JVP written out).

JAX refuses some of these derivatives; their values raise UnsupportedPrimitive for them when the derivative is
built: svd with full_matrices and compute_uv, qr with m < n (or full_matrices with m != n) and qr with
pivoting on batched operands (JAX's rule indexes with the batched pivots and fails), eigh with a partial
subset_by_index, eig's eigenvectors without enable_eigvec_derivs.
"""

from __future__ import annotations

from egglog import Vec, i64

from ir import dtypes
from ir.errors import UnsupportedPrimitive
from rewrites.terms import Arr, T, args_list, get
from transforms.ad.rule import INTS, STR, ADBook, dtype, params
from transforms.ad.rules.linalg import (
    DIAGONAL,
    MATRICES,
    ROWS,
    SOLVE,
    Kit,
    columns,
    diagonal,
    entry,
    grid,
    grid_kinds,
    kind,
    matrices,
    per_result,
    real_dtype,
    rows,
    solve,
    split,
)

A = ADBook("linalg_decomp")
EMPTY = Vec[i64].empty()
WHERE = "transforms/ad/rules/linalg_decomp.py"
PARTS = ("real", "complex")


def _diag_transpose(k: Kit, ct, grid_name: str, rdt):
    """The transpose of re diag(M): the diagonal matrix of ct, as complex(., 0) for complex M."""
    d = k.undiag(ct, grid_name, rdt)
    return T.complex(d, Arr.scalar(0.0, rdt)) if k.cplx else d


# --- qr: JAX's `qr_jvp_rule` (j-towns.github.io/papers/qr-derivative.pdf) ----------------------------------
# With A = dx r^-1 and Qt = q^H A: do = tril(Qt, -1) - tril(Qt, -1)^H + I (Qt - re Qt), dq = q (do - Qt) + A,
# dr = (Qt - do) r. JAX's rule exists for m >= n (full_matrices only for m = n), where the reduced and the
# full decompositions agree; with pivoting, dx's columns are first permuted as the result p says.

QR = {**MATRICES, **grid_kinds("sq"), "solve": SOLVE, "solve_t": SOLVE, "real_dtype": STR, "x_shape": INTS,
      "cols_idx": INTS, "cols_read": params("gather"), "cols_write": params("scatter-add")}
_QR_RESULTS = {"real": 2, "complex": 2, "pivoting-real": 3, "pivoting-complex": 3}


def _qr_values(p, ins, outs):
    batch, m, n = split(ins[0])
    dt, pivoting = ins[0].dtype, bool(p.get("pivoting", False))
    if m < n or (p["full_matrices"] and m != n):
        raise UnsupportedPrimitive("qr", "JVP/VJP (m < n, or full_matrices with m != n: JAX's 'Unimplemented case "
                                   "of QR decomposition derivative')", WHERE)
    if pivoting and batch:
        raise UnsupportedPrimitive("qr", "JVP/VJP (pivoting with batch dimensions: JAX's rule indexes dx[..., p] "
                                   "with the batched p and fails)", WHERE)
    read, write = columns(m, n, dt)
    return {"case": ("pivoting-" if pivoting else "") + kind(dt), **matrices(batch, dt), **grid("sq", batch, n, n),
            "solve": solve(False, False), "solve_t": solve(False, False, transpose=True),
            "real_dtype": real_dtype(dt).name, "x_shape": ins[0].shape, "cols_idx": (n, 1), "cols_read": read,
            "cols_write": write}


def _qr_jvp(pivoting: bool, cplx: bool):
    def f(seeds, xs, outs, v):
        k, dt, (q, r), dx = Kit(v, cplx), dtype(xs[0]), outs[:2], seeds[0]
        if pivoting:
            dx = T.gather(dx, T.reshape(outs[2], v.cols_idx), **v.cols_read)
        a = k.ts(r, dx, v.solve)
        qt = k.mm(k.h(q), a)
        low = k.tril(qt, "sq", -1, dt)
        fix = T.sub(qt, T.convert_element_type(T.real(qt), dt)) if cplx else T.sub(qt, qt)
        do = T.add(T.sub(low, k.h(low)), T.mul(k.eye("sq", dt), fix))
        return T.add(k.mm(q, T.sub(do, qt)), a), k.mm(T.sub(qt, do), r)
    return f


def _qr_vjp(pivoting: bool, cplx: bool):
    def f(seeds, xs, outs, v):
        k, dt, (q, r), (cq, cr) = Kit(v, cplx), dtype(xs[0]), outs[:2], seeds[:2]
        do_bar = T.sub(k.mm(k.t(q), cq), k.mm(cr, k.t(r)))
        e = T.mul(k.eye("sq", dt), do_bar)
        fix = (T.add(e, T.complex(T.convert_element_type(T.neg(e), v.real_dtype), Arr.scalar(0.0, v.real_dtype)))
               if cplx else T.sub(e, e))
        qt_bar = T.add(T.add(T.neg(do_bar), k.tril(T.sub(do_bar, k.h(do_bar)), "sq", -1, dt)), fix)
        dx_bar = k.ts(r, T.add(cq, k.mm(k.conj(q), qt_bar)), v.solve_t)
        if pivoting:
            zeros = T.broadcast_in_dim(Arr.scalar(0.0, dt), v.x_shape, EMPTY)
            dx_bar = T.scatter_add(zeros, T.reshape(outs[2], v.cols_idx), dx_bar, **v.cols_write)
        return dx_bar
    return f


def _qr_cases(make) -> dict:
    return {f"{pivot}{c}": make(bool(pivot), c == "complex") for pivot in ("", "pivoting-") for c in PARTS}


for _j in range(2):
    entry(A, "jvp", "qr", f"out{_j}", QR, _qr_values, {c: per_result(f, _j) for c, f in _qr_cases(_qr_jvp).items()},
          arity=1, results=_QR_RESULTS, whole=True, math=("dq = q (do - Qt) + dx r^-1", "dr = (Qt - do) r")[_j]
          + ", Qt = q^H dx r^-1, do = tril(Qt, -1) - tril(Qt, -1)^H + I (Qt - re Qt)")
entry(A, "vjp", "qr", "0", QR, _qr_values, _qr_cases(_qr_vjp), arity=1, results=_QR_RESULTS, whole=True,
      math="x_bar = (cq + conj(q) Qt_bar) r^-T, Qt_bar from do_bar = q^T cq - cr r^T (the JVP transposed)")


# --- svd: JAX's `_svd_jvp_rule` ------------------------------------------------------------------------------
# dS = U^H dA V, ds = re diag(dS); with F_ij = 1 / (s_j^2 - s_i^2) (0 on the diagonal): dU = U (F (dS s +
# (dS s)^H) + (dS - dS^H) / 2s), dV = V F (s dS + (s dS)^H), plus for tall A the part of dA V outside U's span
# over s (for wide A, of dA^H U outside V's span). Without compute_uv JAX recomputes the reduced U and V.

SVD = {**MATRICES, **grid_kinds("kk"), **DIAGONAL, "recompute": params("svd"), "row_dims": INTS,
       "col_dims": INTS, "s_mk": INTS, "s_nk": INTS}
_SHAPES = ("square", "tall", "wide")
_SVD_RESULTS = {f"{s}-{c}": 3 for s in _SHAPES for c in PARTS} | {f"values-{c}": 1 for c in PARTS}


def _svd_values(p, ins, outs):
    batch, m, n = split(ins[0])
    if p["compute_uv"] and p["full_matrices"]:
        raise UnsupportedPrimitive("svd", "JVP/VJP (full_matrices=True with compute_uv=True: JAX's 'Singular value "
                                   "decomposition JVP not implemented for full matrices')", WHERE)
    k, b, dt = min(m, n), len(batch), ins[0].dtype
    shape = "square" if m == n else "tall" if m > n else "wide"
    return {"case": f"{shape if p['compute_uv'] else 'values'}-{kind(dt)}", **matrices(batch, dt),
            **grid("kk", batch, k, k), **diagonal(batch, k, real_dtype(dt)),
            "recompute": {**p, "full_matrices": False, "compute_uv": True}, "row_dims": (*range(b), b + 1),
            "col_dims": (*range(b), b), "s_mk": (*batch, m, k), "s_nk": (*batch, n, k)}


class _Svd:
    """The primal arrays of JAX's rule: s along the rows and the columns of a k x k grid, F and diag(1/s)
    (0 where s = 0), converted by `c` to A's dtype where JAX multiplies them with complex tangents."""

    def __init__(self, k: Kit, a, s, v):
        self.k, self.dt, self.rdt, self.s, self.v = k, dtype(a), dtype(s), s, v
        self.s_row = T.broadcast_in_dim(s, v.kk_shape, v.row_dims)
        self.s_col = T.broadcast_in_dim(s, v.kk_shape, v.col_dims)
        eye, one = k.eye("kk", self.rdt), Arr.scalar(1.0, self.rdt)
        gaps = T.mul(T.add(self.s_row, self.s_col), T.sub(self.s_row, self.s_col))
        self.f = T.sub(T.div(one, T.add(gaps, eye)), eye)
        zeros = T.convert_element_type(T.eq(s, Arr.scalar(0.0, self.rdt)), self.rdt)
        self.s_inv = k.undiag(T.sub(T.div(one, T.add(s, zeros)), zeros), "kk", self.rdt)

    def c(self, x):
        return T.convert_element_type(x, self.dt) if self.k.cplx else x

    def over_s(self, x, shape):
        """x with each column j divided by s_j (JAX's `/ s_dim`)."""
        return T.div(x, self.c(T.broadcast_in_dim(self.s, shape, self.v.row_dims)))


def _svd_jvp(shape: str, cplx: bool):
    def f(seeds, xs, outs, v):
        k, (s, u, vt), da = Kit(v, cplx), outs, seeds[0]
        z = _Svd(k, xs[0], s, v)
        ut, vv = k.h(u), k.h(vt)
        ds_ = k.mm(k.mm(ut, da), vv)
        dss, sds = T.mul(z.c(z.s_row), ds_), T.mul(z.c(z.s_col), ds_)
        half = T.mul(T.mul(Arr.scalar(0.5, z.dt), T.sub(ds_, k.h(ds_))), z.c(z.s_inv))
        du = k.mm(u, T.add(T.mul(z.c(z.f), T.add(dss, k.h(dss))), half))
        dv = k.mm(vv, T.mul(z.c(z.f), T.add(sds, k.h(sds))))
        if shape == "tall":
            dav = k.mm(da, vv)
            du = T.add(du, z.over_s(T.sub(dav, k.mm(u, k.mm(ut, dav))), v.s_mk))
        if shape == "wide":
            dahu = k.mm(k.h(da), u)
            dv = T.add(dv, z.over_s(T.sub(dahu, k.mm(vv, k.mm(vt, dahu))), v.s_nk))
        return k.diag(k.real(ds_)), du, k.h(dv)
    return f


def _svd_vjp(shape: str, cplx: bool):
    def f(seeds, xs, outs, v):
        k, (s, u, vt), (cs, cu, cvt) = Kit(v, cplx), outs, seeds
        z = _Svd(k, xs[0], s, v)
        dv_bar, g1 = k.h(cvt), k.mm(k.t(u), cu)
        x1, x2 = T.mul(z.c(z.f), g1), T.mul(z.c(z.f), k.mm(k.conj(vt), dv_bar))
        half = T.mul(T.mul(g1, z.c(z.s_inv)), Arr.scalar(0.5, z.dt))
        ds_bar = T.add(T.add(T.mul(z.c(z.s_row), T.add(x1, k.h(x1))), T.mul(z.c(z.s_col), T.add(x2, k.h(x2)))),
                       T.add(T.sub(half, k.h(half)), _diag_transpose(k, cs, "kk", z.rdt)))
        da_bar = k.mm(k.conj(u), k.mm(ds_bar, k.conj(vt)))
        if shape == "tall":
            p_bar = z.over_s(cu, v.s_mk)
            da_bar = T.add(da_bar, k.mm(T.sub(p_bar, k.mm(k.conj(u), k.mm(k.t(u), p_bar))), k.conj(vt)))
        if shape == "wide":
            p_bar = z.over_s(dv_bar, v.s_nk)
            da_bar = T.add(da_bar, k.h(k.mm(T.sub(p_bar, k.mm(k.t(vt), k.mm(k.conj(vt), p_bar))), k.t(u))))
        return da_bar
    return f


def _svd_values_only(mode: str, cplx: bool):
    """compute_uv=False: ds = re diag(U^H dA V), U and V from JAX's recomputed reduced SVD."""
    def f(seeds, xs, outs, v):
        k = Kit(v, cplx)
        full = T.svd(args_list([xs[0]]), **v.recompute)
        u, vt = get(full, 1), get(full, 2)
        if mode == "jvp":
            return k.diag(k.real(k.mm(k.mm(k.h(u), seeds[0]), k.h(vt))))
        return k.mm(k.conj(u), k.mm(_diag_transpose(k, seeds[0], "kk", dtype(outs[0])), k.conj(vt)))
    return f


for _j in range(3):
    entry(A, "jvp", "svd", f"out{_j}", SVD, _svd_values,
          {f"{s}-{c}": per_result(_svd_jvp(s, c == "complex"), _j) for s in _SHAPES for c in PARTS}
          | ({f"values-{c}": _svd_values_only("jvp", c == "complex") for c in PARTS} if _j == 0 else {}),
          arity=1, results=_SVD_RESULTS, whole=True,
          math=("ds = re diag(U^H dA V)", "dU = U (F (dS s + (dS s)^H) + (dS - dS^H) / 2s) (+ the tall part)",
                "dVt = (V F (s dS + (s dS)^H) (+ the wide part))^H")[_j])
entry(A, "vjp", "svd", "0", SVD, _svd_values,
      {f"{s}-{c}": _svd_vjp(s, c == "complex") for s in _SHAPES for c in PARTS}
      | {f"values-{c}": _svd_values_only("vjp", c == "complex") for c in PARTS},
      arity=1, results=_SVD_RESULTS, whole=True,
      math="A_bar = conj(U) dS_bar conj(Vt) (+ the tall or wide part), dS_bar the JVP's maps transposed")


# --- eigh: JAX's `_eigh_jvp_rule` ----------------------------------------------------------------------------
# JAX recomputes (v, w) = eigh(symmetrize(a)); with M = v^H da v and F_ij = 1 / (w_j - w_i) (0 on the
# diagonal): dv = v (F * M), dw = re diag(M).

EIGH = {**MATRICES, **grid_kinds("sq"), **DIAGONAL, "own": params("eigh"), "row_dims": INTS, "col_dims": INTS}


def _eigh_values(p, ins, outs):
    batch, _, n = split(ins[0])
    subset, b, dt = p.get("subset_by_index"), len(batch), ins[0].dtype
    if subset is not None and tuple(int(i) for i in subset) != (0, n):
        raise UnsupportedPrimitive("eigh", "JVP/VJP (a partial subset_by_index: JAX has none either)", WHERE)
    return {"case": kind(dt), **matrices(batch, dt), **grid("sq", batch, n, n), **diagonal(batch, n, real_dtype(dt)),
            "own": dict(p), "row_dims": (*range(b), b + 1), "col_dims": (*range(b), b)}


def _eigh_parts(k: Kit, a, v):
    """JAX's recomputed eigenvectors, and F."""
    dt = dtype(a)
    e = T.eigh(args_list([T.div(T.add(a, k.h(a)), Arr.scalar(2.0, dt))]), **v.own)
    vec, w = get(e, 0), get(e, 1)
    w = T.convert_element_type(w, dt) if k.cplx else w
    eye = k.eye("sq", dt)
    gaps = T.sub(T.add(eye, T.broadcast_in_dim(w, v.sq_shape, v.row_dims)),
                 T.broadcast_in_dim(w, v.sq_shape, v.col_dims))
    return vec, T.sub(T.integer_pow(gaps, -1), eye)


def _eigh_jvp(cplx: bool):
    def f(seeds, xs, outs, v):
        k = Kit(v, cplx)
        vec, fmat = _eigh_parts(k, xs[0], v)
        m = k.mm(k.mm(k.h(vec), seeds[0]), vec)
        return k.mm(vec, T.mul(fmat, m)), k.diag(k.real(m))
    return f


def _eigh_vjp(cplx: bool):
    def f(seeds, xs, outs, v):
        k, (cv, cw) = Kit(v, cplx), seeds
        vec, fmat = _eigh_parts(k, xs[0], v)
        m_bar = T.add(T.mul(fmat, k.mm(k.t(vec), cv)), _diag_transpose(k, cw, "sq", dtype(outs[1])))
        return k.mm(k.conj(vec), k.mm(m_bar, k.t(vec)))
    return f


for _j in range(2):
    entry(A, "jvp", "eigh", f"out{_j}", EIGH, _eigh_values,
          {c: per_result(_eigh_jvp(c == "complex"), _j) for c in PARTS}, arity=1, results=2, whole=True,
          math=("dv = v (F * v^H da v)", "dw = re diag(v^H da v)")[_j])
entry(A, "vjp", "eigh", "0", EIGH, _eigh_values, {c: _eigh_vjp(c == "complex") for c in PARTS}, arity=1,
      results=2, whole=True, math="a_bar = conj(v) (F * v^T cv + diag(cw)) v^T")


# --- eig: JAX's `eig_jvp_rule` and `_eig_vec_jvp` ------------------------------------------------------------
# JAX recomputes eig with the right eigenvectors vr. Eigenvalues only: dw = sum(vr^-1 da * vr^T, -1) (eqn 4.60
# of arxiv.org/abs/1701.00392). With eigenvectors (enable_eigvec_derivs=True): P = vr^-1 da vr, dw = diag P,
# U = vr (F * P), dv = U + v c, c fixing LAPACK's normalization (unit norm, largest entry real); the left
# eigenvectors the same with conj(w), vl and da^H. Solves go through lu(vr), as JAX's `_solve`. Everything
# is complex: a real da is converted first (and its cotangent converted back: the real part).

EIG = {**MATRICES, **grid_kinds("sq"), **DIAGONAL, **ROWS, "again": params("eig"), "lu": params("lu"),
       "solve_l": SOLVE, "solve_u": SOLVE, "solve_l_t": SOLVE, "solve_u_t": SOLVE, "complex_dtype": STR,
       "real_dtype": STR, "row_dims": INTS, "col_dims": INTS, "sum_rows": INTS, "sum_cols": INTS,
       "argmax": params("argmax")}
_EIG_RESULTS = {"values": 1, "right": 2, "left": 2, "both": 3}


def _eig_values(p, ins, outs):
    left, right = bool(p["compute_left_eigenvectors"]), bool(p["compute_right_eigenvectors"])
    if (left or right) and not p.get("enable_eigvec_derivs", False):
        raise UnsupportedPrimitive("eig", "JVP/VJP (eigenvectors without enable_eigvec_derivs=True: JAX refuses "
                                   "them too, as valid only under assumptions it cannot check)", WHERE)
    batch, _, n = split(ins[0])
    b, cdt = len(batch), outs[0].dtype
    return {"case": ("both" if left else "right") if right else ("left" if left else "values"),
            **matrices(batch, cdt), **grid("sq", batch, n, n), **diagonal(batch, n, cdt), **rows(batch, n, n, cdt),
            "again": {**p, "compute_right_eigenvectors": True}, "lu": {}, "solve_l": solve(True, True, unit=True),
            "solve_u": solve(True, False), "solve_l_t": solve(True, True, transpose=True, unit=True),
            "solve_u_t": solve(True, False, transpose=True), "complex_dtype": cdt.name,
            "real_dtype": real_dtype(cdt).name, "row_dims": (*range(b), b + 1), "col_dims": (*range(b), b),
            "sum_rows": (b,), "sum_cols": (b + 1,), "argmax": {"index_dtype": dtypes.int32}}


def _lu_solve(k: Kit, m, x, v, transposed: bool = False):
    """m^-1 x (m^-T x if `transposed`) through lu(m) = (lu, _, perm), as JAX's lu_solve."""
    factors = T.lu(args_list([m]), **v.lu)
    packed, perm = get(factors, 0), get(factors, 2)
    if transposed:
        return k.unrows(k.ts(packed, k.ts(packed, x, v.solve_u_t), v.solve_l_t), perm, "sq", v.complex_dtype)
    return k.ts(packed, k.ts(packed, k.rows(x, perm), v.solve_l), v.solve_u)


class _Eig:
    """JAX's recomputed eigendecomposition (w, vl, vr), and `_eig_vec_jvp` and its transpose."""

    def __init__(self, k: Kit, a, v, case: str):
        self.k, self.v = k, v
        again = T.eig(args_list([a]), **v.again)
        left = case in ("left", "both")
        self.w, self.vr, self.vl = get(again, 0), get(again, 1 + left), get(again, 1) if left else None

    def _parts(self, w, vec):
        """F (1 / (w_j - w_i), 0 on the diagonal), the mask of each column's largest entry, and the real
        part of the masked column sums (the normalization's denominator)."""
        k, v = self.k, self.v
        eye = k.eye("sq", v.complex_dtype)
        gaps = T.sub(T.add(eye, T.broadcast_in_dim(w, v.sq_shape, v.row_dims)),
                     T.broadcast_in_dim(w, v.sq_shape, v.col_dims))
        top = T.broadcast_in_dim(T.argmax(T.abs(vec), v.sum_rows, **v.argmax), v.sq_shape, v.row_dims)
        mask = T.convert_element_type(T.eq(k.iota("sq", 0), top), v.complex_dtype)
        return T.sub(T.integer_pow(gaps, -1), eye), mask, T.real(T.reduce_sum(T.mul(mask, vec), v.sum_rows))

    def _columns(self, x):
        """A vector spread over the rows (x_j in column j)."""
        return T.broadcast_in_dim(x, self.v.sq_shape, self.v.row_dims)

    def vec_jvp(self, w, vec, da):
        """JAX's `_eig_vec_jvp`: (dw, dv)."""
        k, v = self.k, self.v
        fmat, mask, den = self._parts(w, vec)
        p = k.mm(_lu_solve(k, vec, da, v), vec)
        u = k.mm(vec, T.mul(fmat, p))
        c = T.complex(T.neg(T.real(T.reduce_sum(T.mul(k.conj(vec), u), v.sum_rows))),
                      T.div(T.neg(T.imag(T.reduce_sum(T.mul(mask, u), v.sum_rows))), den))
        return k.diag(p), T.add(u, T.mul(vec, self._columns(c)))

    def vec_vjp(self, w, vec, cw, cv):
        """The transpose of `vec_jvp` (cw None: dw unused; cv None: dv unused)."""
        k, v = self.k, self.v
        fmat, mask, den = self._parts(w, vec)
        p_bar = k.undiag(cw, "sq", v.complex_dtype) if cw is not None else None
        if cv is not None:
            c_bar, zero = T.reduce_sum(T.mul(vec, cv), v.sum_rows), Arr.scalar(0.0, v.real_dtype)
            re_bar = T.complex(T.neg(T.real(c_bar)), zero)
            im_bar = T.complex(zero, T.div(T.imag(T.neg(c_bar)), den))
            u_bar = T.add(T.add(cv, T.mul(k.conj(vec), self._columns(re_bar))), T.mul(mask, self._columns(im_bar)))
            from_u = T.mul(fmat, k.mm(k.t(vec), u_bar))
            p_bar = from_u if p_bar is None else T.add(from_u, p_bar)
        return _lu_solve(k, vec, k.mm(p_bar, k.t(vec)), v, transposed=True)


def _eig_jvp(case: str):
    def f(seeds, xs, outs, v):
        k = Kit(v, True)
        z, da = _Eig(k, xs[0], v, case), T.convert_element_type(seeds[0], v.complex_dtype)
        if case == "values":
            return [T.reduce_sum(T.mul(_lu_solve(k, z.vr, da, v), k.t(z.vr)), v.sum_cols)]
        dw, dvr = z.vec_jvp(z.w, z.vr, da)
        dvl = [z.vec_jvp(k.conj(z.w), z.vl, k.h(da))[1]] if z.vl is not None else []
        return [dw, *dvl, *([dvr] if case in ("right", "both") else [])]
    return f


def _eig_vjp(case: str):
    def f(seeds, xs, outs, v):
        k = Kit(v, True)
        z, cw = _Eig(k, xs[0], v, case), seeds[0]
        if case == "values":
            da_bar = _lu_solve(k, z.vr, T.mul(T.broadcast_in_dim(cw, v.sq_shape, v.col_dims), k.t(z.vr)), v,
                               transposed=True)
        else:
            da_bar = z.vec_vjp(z.w, z.vr, cw, seeds[-1] if case in ("right", "both") else None)
            if z.vl is not None:
                da_bar = T.add(da_bar, k.h(z.vec_vjp(k.conj(z.w), z.vl, None, seeds[1])))
        return T.convert_element_type(da_bar, dtype(xs[0]))
    return f


for _j in range(3):
    entry(A, "jvp", "eig", f"out{_j}", EIG, _eig_values,
          {c: per_result(_eig_jvp(c), _j) for c, n in _EIG_RESULTS.items() if n > _j}, arity=1,
          results=_EIG_RESULTS, whole=True,
          math=("dw = sum(vr^-1 da * vr^T, -1), or diag(vr^-1 da vr) with eigenvectors",
                "dv = U + v c, U = v (F * v^-1 da v) (the left ones with conj w, vl, da^H)", "dvr = U + vr c")[_j])
entry(A, "vjp", "eig", "0", EIG, _eig_values, {c: _eig_vjp(c) for c in _EIG_RESULTS}, arity=1,
      results=_EIG_RESULTS, whole=True, math="a_bar: the JVP's maps transposed, solves through lu(vr)^T")
