"""`jax.scipy.stats` for traced code: each distribution is a namespace of functions (`stats.norm.logpdf`),
written as JAX writes them (log-densities first, densities as their exp)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

import ir.numpy as jnp
from ir import lax
from ir.scipy import special

__all__ = ['norm', 'expon', 'uniform', 'logistic', 'laplace', 'cauchy', 'gamma', 'beta', 'poisson', 'bernoulli',
           'multivariate_normal', 't']

_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


def _standardize(x, loc, scale):
    x, loc, scale = jnp.promote_dtypes_inexact(x, loc, scale)
    return (x - loc) / scale, scale


def _norm_logpdf(x, loc=0, scale=1):
    z, scale = _standardize(x, loc, scale)
    return -0.5 * z * z - _LOG_SQRT_2PI - jnp.log(scale)


def _norm_cdf(x, loc=0, scale=1):
    return special.ndtr(_standardize(x, loc, scale)[0])


def _norm_logcdf(x, loc=0, scale=1):
    return special.log_ndtr(_standardize(x, loc, scale)[0])


def _norm_ppf(q, loc=0, scale=1):
    q, loc, scale = jnp.promote_dtypes_inexact(q, loc, scale)
    return special.ndtri(q) * scale + loc


norm = SimpleNamespace(
    logpdf=_norm_logpdf, pdf=lambda x, loc=0, scale=1: jnp.exp(_norm_logpdf(x, loc, scale)),
    cdf=_norm_cdf, logcdf=_norm_logcdf, ppf=_norm_ppf,
    sf=lambda x, loc=0, scale=1: _norm_cdf(-jnp.asarray(x), -jnp.asarray(loc), scale),
    logsf=lambda x, loc=0, scale=1: _norm_logcdf(-jnp.asarray(x), -jnp.asarray(loc), scale),
    isf=lambda q, loc=0, scale=1: _norm_ppf(1 - jnp.asarray(q), loc, scale))


def _expon_logpdf(x, loc=0, scale=1):
    z, scale = _standardize(x, loc, scale)
    return jnp.where(z < 0, -np.inf, -z - jnp.log(scale))


def _expon_cdf(x, loc=0, scale=1):
    z, _ = _standardize(x, loc, scale)
    return jnp.where(z < 0, 0.0, -jnp.expm1(-z))


expon = SimpleNamespace(logpdf=_expon_logpdf, pdf=lambda x, loc=0, scale=1: jnp.exp(_expon_logpdf(x, loc, scale)),
                        cdf=_expon_cdf)


def _uniform_logpdf(x, loc=0, scale=1):
    x, loc, scale = jnp.promote_dtypes_inexact(x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.where(inside, -jnp.log(scale), -np.inf)


uniform = SimpleNamespace(logpdf=_uniform_logpdf,
                          pdf=lambda x, loc=0, scale=1: jnp.exp(_uniform_logpdf(x, loc, scale)))


def _logistic_logpdf(x, loc=0, scale=1):
    z, scale = _standardize(x, loc, scale)
    from ir.nn import softplus
    return -z - 2 * softplus(-z) - jnp.log(scale)


logistic = SimpleNamespace(
    logpdf=_logistic_logpdf, pdf=lambda x, loc=0, scale=1: jnp.exp(_logistic_logpdf(x, loc, scale)),
    cdf=lambda x, loc=0, scale=1: special.expit(_standardize(x, loc, scale)[0]),
    ppf=lambda q, loc=0, scale=1: special.logit(q) * scale + loc)


def _laplace_logpdf(x, loc=0, scale=1):
    z, scale = _standardize(x, loc, scale)
    return -jnp.abs(z) - np.log(2.0) - jnp.log(scale)


laplace = SimpleNamespace(logpdf=_laplace_logpdf,
                          pdf=lambda x, loc=0, scale=1: jnp.exp(_laplace_logpdf(x, loc, scale)),
                          cdf=lambda x, loc=0, scale=1: (lambda z: 0.5 - 0.5 * jnp.sign(z) * jnp.expm1(-jnp.abs(z)))(
                              _standardize(x, loc, scale)[0]))


def _cauchy_logpdf(x, loc=0, scale=1):
    z, scale = _standardize(x, loc, scale)
    return -np.log(np.pi) - jnp.log(scale) - jnp.log1p(z * z)


cauchy = SimpleNamespace(logpdf=_cauchy_logpdf, pdf=lambda x, loc=0, scale=1: jnp.exp(_cauchy_logpdf(x, loc, scale)),
                         cdf=lambda x, loc=0, scale=1: 0.5 + jnp.arctan(_standardize(x, loc, scale)[0]) / np.pi)


def _gamma_logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = jnp.promote_dtypes_inexact(x, a, loc, scale)
    y = (x - loc) / scale
    log_prob = special.xlogy(a - 1, y) - y - special.gammaln(a)
    return jnp.where(y < 0, -np.inf, log_prob - jnp.log(scale))


gamma = SimpleNamespace(
    logpdf=_gamma_logpdf, pdf=lambda x, a, loc=0, scale=1: jnp.exp(_gamma_logpdf(x, a, loc, scale)),
    cdf=lambda x, a, loc=0, scale=1: special.gammainc(
        a, jnp.clip((jnp.asarray(x) - loc) / jnp.asarray(scale, jnp.float64), 0, None)))


def _beta_logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = jnp.promote_dtypes_inexact(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_prob = special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y) - special.betaln(a, b)
    return jnp.where((y < 0) | (y > 1), -np.inf, log_prob - jnp.log(scale))


beta = SimpleNamespace(logpdf=_beta_logpdf,
                       pdf=lambda x, a, b, loc=0, scale=1: jnp.exp(_beta_logpdf(x, a, b, loc, scale)),
                       cdf=lambda x, a, b, loc=0, scale=1: special.betainc(
                           a, b, jnp.clip((jnp.asarray(x) - loc) / jnp.asarray(scale, jnp.float64), 0, 1)))


def _poisson_logpmf(k, mu, loc=0):
    k, mu, loc = jnp.promote_dtypes_inexact(k, mu, loc)
    x = k - loc
    log_probs = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.floor(x) != x), -np.inf, log_probs)


poisson = SimpleNamespace(logpmf=_poisson_logpmf, pmf=lambda k, mu, loc=0: jnp.exp(_poisson_logpmf(k, mu, loc)),
                          cdf=lambda k, mu, loc=0: special.gammaincc(
                              jnp.floor(jnp.asarray(k, jnp.float64) - loc) + 1, jnp.asarray(mu, jnp.float64)))


def _bernoulli_logpmf(k, p, loc=0):
    k, p, loc = jnp.promote_dtypes_inexact(k, p, loc)
    x = k - loc
    log_probs = special.xlogy(x, p) + special.xlog1py(1 - x, -p)
    return jnp.where((x < 0) | (x > 1), -np.inf, log_probs)


bernoulli = SimpleNamespace(logpmf=_bernoulli_logpmf,
                            pmf=lambda k, p, loc=0: jnp.exp(_bernoulli_logpmf(k, p, loc)))


def _mvn_logpdf(x, mean, cov, allow_singular=None):
    x, mean, cov = jnp.promote_dtypes_inexact(x, mean, cov)
    n = mean.shape[-1]
    if cov.ndim < 2:
        raise NotImplementedError("multivariate_normal: a full covariance matrix")
    lower = jnp.linalg.cholesky(cov)
    y = x - mean
    solved = lax.triangular_solve(lower, jnp.expand_dims(y, -1), left_side=True, lower=True)[..., 0] \
        if y.ndim == 1 else jnp.swapaxes(lax.triangular_solve(lower, jnp.swapaxes(y, -1, -2), left_side=True,
                                                              lower=True), -1, -2)
    log_det = jnp.sum(jnp.log(jnp.abs(jnp.diagonal(lower, 0, -2, -1))), axis=-1)
    return -0.5 * jnp.sum(solved * solved, axis=-1) - n * _LOG_SQRT_2PI - log_det


multivariate_normal = SimpleNamespace(logpdf=_mvn_logpdf,
                                      pdf=lambda x, mean, cov: jnp.exp(_mvn_logpdf(x, mean, cov)))


def _t_logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = jnp.promote_dtypes_inexact(x, df, loc, scale)
    z = (x - loc) / scale
    half = (df + 1) / 2
    return (special.gammaln(half) - special.gammaln(df / 2) - 0.5 * jnp.log(df * np.pi) - jnp.log(scale)
            - half * jnp.log1p(z * z / df))


t = SimpleNamespace(logpdf=_t_logpdf, pdf=lambda x, df, loc=0, scale=1: jnp.exp(_t_logpdf(x, df, loc, scale)))
