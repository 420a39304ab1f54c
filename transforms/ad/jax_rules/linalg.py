"""jnp.linalg's custom JVP rules (jax/_src/numpy/linalg.py), over the `lu`, `triangular_solve` and
`dot_general` primitives (ir.numpy has no linalg namespace yet)."""

from __future__ import annotations

from ir import lax
from ir import numpy as jnp
from ir.core import Eqn
from ir.errors import UnsupportedPrimitive
from ir.tracing import bind
from transforms.ad.jax_rules import body_eqns, call_again, jax_rule


def _mT(a):  # noqa: N802  (JAX's name)
    return jnp.swapaxes(a, -1, -2)


def _trace(a):
    n = a.shape[-1]
    return jnp.sum(a * jnp.eye(n, dtype=a.dtype), axis=(-2, -1))


def solve(a, b):
    """a^-1 b for square `a` (no batch dimensions): LU with partial pivoting, then two triangular solves."""
    if a.ndim != 2:
        raise UnsupportedPrimitive("custom_jvp_call", f"_slogdet_jvp on a batch of matrices {a.shape}",
                                   "transforms/ad/jax_rules/linalg.py")
    lu, _, perm = bind("lu", a)
    n = a.shape[-1]
    p = lax.convert_element_type(perm[:, None] == lax.iota(perm.dtype, n)[None, :], a.dtype)  # p[i, j] = [perm_i = j]
    pb = jnp.matmul(p, b)
    return _triangular_solve(lu, _triangular_solve(lu, pb, lower=True, unit_diagonal=True), lower=False)


def _real_sign_rule(ans_dot_of):
    def rule(eqn: Eqn, primals, tangents):
        (x,), (g,) = primals, tangents
        sign, ans = call_again(eqn, x)
        if x.dtype.kind == "c":
            raise UnsupportedPrimitive(eqn.primitive, f"{eqn.params.get('jvp')} of a complex matrix",
                                       "transforms/ad/jax_rules/linalg.py")
        return (sign, ans), (jnp.zeros_like(sign), ans_dot_of(x, g))
    return rule


# d log|det x| = tr(x^-1 dx); the sign's tangent is 0 (JAX's rule: sign is not differentiable at det = 0)
jax_rule("_slogdet_lu", "_slogdet_jvp")(_real_sign_rule(lambda x, g: _trace(solve(x, g))))
jax_rule("_slogdet_qr", "_slogdet_jvp")(_real_sign_rule(lambda x, g: _trace(solve(x, g))))


def _slogdet_small_ans_dot(x, g):
    if x.shape[-1] == 1:
        return g[..., 0, 0] / x[..., 0, 0]
    x00, x01, x10, x11 = x[..., 0, 0], x[..., 0, 1], x[..., 1, 0], x[..., 1, 1]
    det = x00 * x11 - x01 * x10
    return (g[..., 0, 0] * x11 - g[..., 0, 1] * x10 - g[..., 1, 0] * x01 + g[..., 1, 1] * x00) / det


jax_rule("_slogdet_small", "_slogdet_small_jvp")(_real_sign_rule(_slogdet_small_ans_dot))


@jax_rule("_pinv", "_pinv_jvp")
def _pinv_jvp(eqn: Eqn, primals, tangents):
    """Golub and Pereyra's derivative of the pseudo-inverse. `hermitian` (a nondiff argument) shows in the
    body as an `eigh`, which JAX's svd uses for hermitian matrices."""
    (a,), (a_dot,) = primals, tangents
    p = call_again(eqn, a)
    if a.dtype.kind == "c":
        raise UnsupportedPrimitive(eqn.primitive, "_pinv_jvp of a complex matrix", "transforms/ad/jax_rules/linalg.py")
    if any(e.primitive == "eigh" for e in body_eqns(eqn)):
        a, a_dot = (a + _mT(a)) / 2, (a_dot + _mT(a_dot)) / 2
    mm = jnp.matmul
    m, n = a.shape[-2:]
    if m >= n:
        s = mm(mm(p, _mT(p)), _mT(a_dot))
        t = mm(mm(_mT(a_dot), _mT(p)), p)
        p_dot = -mm(mm(p, a_dot), p) + s - mm(mm(s, a), p) + t - mm(mm(p, a), t)
    else:
        s = mm(p, mm(_mT(p), _mT(a_dot)))
        t = mm(_mT(a_dot), mm(_mT(p), p))
        p_dot = -mm(p, mm(a_dot, p)) + s - mm(s, mm(a, p)) + t - mm(p, mm(a, t))
    return p, p_dot


def _triangular_solve(a, b, *, lower: bool, unit_diagonal: bool = False):
    return bind("triangular_solve", a, b, left_side=True, lower=lower, transpose_a=False, conjugate_a=False,
                unit_diagonal=unit_diagonal)


def _cofactor_solve(a, b):
    """(det a, adj(a) b) for a square `a` that may be singular: JAX's `_cofactor_solve`. With a = P L U, the
    last pivot of U is replaced by 1 / (the product of the others), so the solve stays finite at rank n-1;
    below rank n-1 the adjugate is 0."""
    n = a.shape[-1]
    if a.ndim != 2:
        raise UnsupportedPrimitive("custom_jvp_call", f"_det_jvp on a batch of matrices {a.shape}",
                                   "transforms/ad/jax_rules/linalg.py")
    if n == 1:
        return a[0, 0], b
    lu, pivots, perm = bind("lu", a)
    eye = jnp.eye(n, dtype=a.dtype)
    diag = jnp.sum(lu * eye, axis=-1)
    parity = jnp.sum(lax.convert_element_type(pivots != lax.iota(pivots.dtype, n), a.dtype))
    sign = 1.0 - 2.0 * (parity - 2.0 * lax.floor(parity / 2.0))
    partial_det = jnp.cumprod(diag) * sign
    corner = lax.broadcasted_iota("int32", (n, n), 0) + lax.broadcasted_iota("int32", (n, n), 1) == 2 * n - 2
    lu = jnp.where(corner, 1.0 / partial_det[n - 2], lu)
    d = _triangular_solve(lu, jnp.ones((n, 1), dtype=a.dtype), lower=False)
    low_rank = jnp.any(jnp.isnan(d) | jnp.isinf(d))
    x = jnp.where(low_rank, 0.0, b)
    p = lax.convert_element_type(perm[:, None] == lax.iota(perm.dtype, n)[None, :], a.dtype)
    x = _triangular_solve(lu, jnp.matmul(p, x), lower=True, unit_diagonal=True)
    x = jnp.concatenate([x[:-1, :] * partial_det[n - 1], x[-1:, :]], axis=0)
    x = _triangular_solve(lu, x, lower=False)
    return partial_det[n - 1], jnp.where(low_rank, 0.0, x)


@jax_rule("_det", "_det_jvp")
def _det_jvp(eqn: Eqn, primals, tangents):
    """d det x = tr(adj(x) dx), by cofactors: finite where x is singular (0 below rank n - 1)."""
    (x,), (g,) = primals, tangents
    y, z = _cofactor_solve(x, g)
    return y, _trace(z)
