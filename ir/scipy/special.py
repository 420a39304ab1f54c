"""`jax.scipy.special` for traced code, over eqjax's special-function primitives (lgamma, digamma, erf,
erf_inv, igamma, bessel_i0e/i1e, zeta, polygamma, regularized_incomplete_beta) as JAX writes them.

`xlogy`, `xlog1py`, `log_ndtr`, `logit` and the `_xlogx` inside `entr`/`rel_entr`/`kl_div` are `custom_jvp`s
with JAX's rules (`_xlogy_jvp`, `_xlog1py_jvp`, `_log_ndtr_jvp`, logit's, `_xlogx_jvp`), registered under
`_ir_*` names so they never collide with JAX's own rules read from text: their derivatives differ from the
body's at x = 0 (x-derivative log(y), log1p(y)) and far in the tail."""

from __future__ import annotations

import numpy as np

import ir.numpy as jnp
from ir import lax
from ir.custom_rules import custom_jvp

__all__ = [
    'logsumexp', 'erf', 'erfc', 'erfinv', 'gammaln', 'gamma', 'digamma', 'polygamma', 'zeta', 'xlogy', 'xlog1py',
    'entr', 'expit', 'logit', 'ndtr', 'ndtri', 'log_ndtr', 'betaln', 'beta', 'betainc', 'gammainc', 'gammaincc',
    'i0e', 'i1e', 'i0', 'i1', 'softmax', 'log_softmax', 'factorial', 'rel_entr', 'kl_div',
]


def _inexact(*xs):
    return jnp.promote_dtypes_inexact(*xs)


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False, where=None):
    if b is not None or return_sign or where is not None:
        raise NotImplementedError("logsumexp: b, return_sign and where")
    (a,) = _inexact(a)
    amax = jnp.max(a, axis, keepdims=True)
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, jnp.zeros_like(amax)))
    out = jnp.log(jnp.sum(jnp.exp(a - amax), axis, keepdims=keepdims))
    return out + (amax if keepdims else jnp.squeeze(amax, axis) if axis is not None else jnp.reshape(amax, ()))


def erf(x):
    (x,) = _inexact(x)
    return lax.erf(x)


def erfc(x):
    (x,) = _inexact(x)
    return lax.erfc(x)


def erfinv(x):
    (x,) = _inexact(x)
    return lax.erf_inv(x)


def gammaln(x):
    (x,) = _inexact(x)
    return lax.lgamma(x)


def gamma(x):
    (x,) = _inexact(x)
    sign = jnp.where((x > 0) | (x == jnp.floor(x)), 1.0, jnp.where(jnp.floor(x) % 2 == 0, 1.0, -1.0))
    return sign * jnp.exp(lax.lgamma(x))


def digamma(x):
    (x,) = _inexact(x)
    return lax.digamma(x)


def polygamma(n, x):
    n, x = _inexact(n, x)
    return lax.polygamma(n, x)


def zeta(x, q=None):
    if q is None:
        raise NotImplementedError("zeta: the Riemann zeta (q=None)")
    x, q = _inexact(x, q)
    return lax.zeta(x, q)


def xlogy(x, y):
    x, y = _inexact(x, y)
    return _xlogy(x, y)


@custom_jvp
def _xlogy(x, y):
    return jnp.where(x != 0, lax.mul(x, lax.log(y)), jnp.zeros_like(x))


@_xlogy.defjvp
def _ir_xlogy_jvp(primals, tangents):
    """JAX's `_xlogy_jvp`: d/dx is log(y) even at x = 0."""
    (x, y), (x_dot, y_dot) = primals, tangents
    return _xlogy(x, y), x_dot * lax.log(y) + y_dot * x / y


def xlog1py(x, y):
    x, y = _inexact(x, y)
    return _xlog1py(x, y)


@custom_jvp
def _xlog1py(x, y):
    return jnp.where(x != 0, lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


@_xlog1py.defjvp
def _ir_xlog1py_jvp(primals, tangents):
    """JAX's `_xlog1py_jvp`: d/dx is log1p(y) even at x = 0."""
    (x, y), (x_dot, y_dot) = primals, tangents
    return _xlog1py(x, y), x_dot * lax.log1p(y) + y_dot * x / (1 + y)


@custom_jvp
def _xlogx(x):
    return _xlogy(x, x)


@_xlogx.defjvp
def _ir_xlogx_jvp(primals, tangents):
    """JAX's `_xlogx_jvp`: (log x + 1) dx."""
    (x,), (t,) = primals, tangents
    return _xlogx(x), t * (lax.log(x) + 1)


def entr(x):
    (x,) = _inexact(x)
    return lax.select(lax.lt(x, jnp.zeros_like(x)), jnp.full_like(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p, q):
    p, q = _inexact(p, q)
    both_gt_zero = (p > 0) & (q > 0)
    one_zero = (p == 0) & (q >= 0)
    safe_p = jnp.where(both_gt_zero, p, 1)
    safe_q = jnp.where(both_gt_zero, q, 1)
    log_val = _xlogx(safe_p) - _xlogy(safe_p, safe_q)
    return jnp.where(both_gt_zero, log_val, jnp.where(one_zero, jnp.zeros_like(p), np.inf))


def kl_div(p, q):
    p, q = _inexact(p, q)
    return rel_entr(p, q) - p + q


def expit(x):
    (x,) = _inexact(x)
    return lax.logistic(x)


def logit(x):
    (x,) = _inexact(x)
    return _logit(x)


@custom_jvp
def _logit(x):
    return lax.log(lax.div(x, lax.sub(jnp.ones_like(x), x)))


@_logit.defjvp
def _ir_logit_jvp(primals, tangents):
    """JAX's rule dx / (x (1 - x))."""
    (x,), (t,) = primals, tangents
    return _logit(x), lax.div(t, lax.mul(x, lax.sub(jnp.ones_like(x), x)))


def ndtr(x):
    (x,) = _inexact(x)
    half_sqrt_2 = 0.5 * np.sqrt(2.0)
    w = x * half_sqrt_2
    z = jnp.abs(w)
    y = jnp.where(z < half_sqrt_2, 1.0 + lax.erf(w), jnp.where(w > 0.0, 2.0 - lax.erfc(z), lax.erfc(z)))
    return 0.5 * y


def ndtri(p):
    (p,) = _inexact(p)
    return np.sqrt(2.0) * lax.erf_inv(2 * p - 1)


def log_ndtr(x):
    """log of the normal CDF: `log(erfc(-x/sqrt2)/2)`, and `-ndtr(-x)` (log1p of a tiny value) above 6;
    accurate in float64 for x > -37. The derivative is JAX's `_log_ndtr_jvp`, finite far into the tail."""
    (x,) = _inexact(x)
    return _log_ndtr(x)


@custom_jvp
def _log_ndtr(x):
    return jnp.where(x > 6.0, -ndtr(-x), jnp.log(lax.erfc(-x / np.sqrt(2.0)) / 2))


@_log_ndtr.defjvp
def _ir_log_ndtr_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x)
    norm_logpdf = -0.5 * x * x - 0.5 * np.log(2 * np.pi)
    return ans, t * jnp.exp(norm_logpdf - ans)


def betaln(a, b):
    a, b = _inexact(a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def beta(a, b):
    return jnp.exp(betaln(a, b))


def betainc(a, b, x):
    a, b, x = _inexact(a, b, x)
    return lax.betainc(a, b, x)


def gammainc(a, x):
    a, x = _inexact(a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    a, x = _inexact(a, x)
    return lax.igammac(a, x)


def i0e(x):
    (x,) = _inexact(x)
    return lax.bessel_i0e(x)


def i1e(x):
    (x,) = _inexact(x)
    return lax.bessel_i1e(x)


def i0(x):
    (x,) = _inexact(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i0e(x)


def i1(x):
    (x,) = _inexact(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


def factorial(n, exact: bool = False):
    if exact:
        raise NotImplementedError("factorial(exact=True)")
    (n,) = _inexact(n)
    return jnp.where(n < 0, 0.0, jnp.exp(lax.lgamma(n + 1)))


def softmax(x, axis=-1):
    from ir.nn import softmax as softmax_
    return softmax_(x, axis)


def log_softmax(x, axis=-1):
    from ir.nn import log_softmax as log_softmax_
    return log_softmax_(x, axis)
