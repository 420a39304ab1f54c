"""`jax.scipy.special` for traced code, over eqjax's special-function primitives (lgamma, digamma, erf,
erf_inv, igamma, bessel_i0e/i1e, zeta, polygamma, regularized_incomplete_beta) as JAX writes them."""

from __future__ import annotations

import numpy as np

import ir.numpy as jnp
from ir import lax

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
    safe_y = jnp.where(x == 0, jnp.ones_like(y), y)
    return jnp.where(x == 0, jnp.zeros_like(x), x * jnp.log(safe_y))


def xlog1py(x, y):
    x, y = _inexact(x, y)
    safe_y = jnp.where(x == 0, jnp.zeros_like(y), y)
    return jnp.where(x == 0, jnp.zeros_like(x), x * jnp.log1p(safe_y))


def entr(x):
    (x,) = _inexact(x)
    return jnp.where(x > 0, -xlogy(x, x), jnp.where(x == 0, 0.0, -np.inf))


def rel_entr(p, q):
    p, q = _inexact(p, q)
    both_gt_zero = (p > 0) & (q > 0)
    one_zero = (p == 0) & (q >= 0)
    safe_p = jnp.where(both_gt_zero, p, 1.0)
    safe_q = jnp.where(both_gt_zero, q, 1.0)
    return jnp.where(both_gt_zero, safe_p * jnp.log(safe_p / safe_q), jnp.where(one_zero, 0.0, np.inf))


def kl_div(p, q):
    p, q = _inexact(p, q)
    return rel_entr(p, q) - p + q


def expit(x):
    (x,) = _inexact(x)
    return lax.logistic(x)


def logit(x):
    (x,) = _inexact(x)
    return jnp.log(x / (1 - x))


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
    """log of the normal CDF: log(ndtr) in the middle, log(erfc) with the asymptotic series below -20 avoided
    by `log(erfc(-x/sqrt2)/2)` (accurate to double precision for x > -37)."""
    (x,) = _inexact(x)
    return jnp.where(x > 6.0, -ndtr(-x), jnp.log(lax.erfc(-x / np.sqrt(2.0)) / 2))


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
