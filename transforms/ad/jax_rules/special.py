"""jax.scipy.special's custom JVP rules (jax/_src/scipy/special.py, jax/_src/third_party/scipy/special.py);
jax.scipy.stats uses these (norm.logcdf: log_ndtr; poisson, binom, beta...: xlogy, xlog1py)."""

from __future__ import annotations

import numpy as np

from ir import lax
from ir import numpy as jnp
from ir.core import Eqn
from transforms.ad.jax_rules import call_again, defjvps, jax_rule, unwritten
from transforms.ad.jax_rules.numpy import sinc


# xlogy / xlog1py: d(x log y) = log y dx + x / y dy, also at x = 0, where the body's derivative in x is 0
# (it selects the constant 0 there)
@jax_rule("xlogy", "_xlogy_jvp")
def _xlogy_jvp(eqn: Eqn, primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    return call_again(eqn, x, y), x_dot * lax.log(y) + y_dot * x / y


@jax_rule("xlog1py", "_xlog1py_jvp")
def _xlog1py_jvp(eqn: Eqn, primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    return call_again(eqn, x, y), x_dot * lax.log1p(y) + y_dot * x / (1 + y)


@jax_rule("_xlogx", "_xlogx_jvp")
def _xlogx_jvp(eqn: Eqn, primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return call_again(eqn, x), x_dot * (lax.log(x) + 1)


@jax_rule("log_ndtr", "_log_ndtr_jvp")
def _log_ndtr_jvp(eqn: Eqn, primals, tangents):
    """d log Phi(x) = exp(log phi(x) - log Phi(x)) dx: finite far in the lower tail, where the body's
    series derivative and phi / Phi both underflow. (series_order, a nondiff argument, does not enter.)"""
    (x,), (t,) = primals, tangents
    ans = call_again(eqn, x)
    norm_logpdf = -0.5 * x * x - np.log(np.sqrt(2 * np.pi))
    return ans, t * lax.exp(norm_logpdf - ans)


jax_rule("logit", "jvp")(defjvps(lambda g, ans, x: g / (x * (1 - x))))


@jax_rule("expi", "expi_jvp")
def expi_jvp(eqn: Eqn, primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return call_again(eqn, x), jnp.exp(x) / x * x_dot


@jax_rule("sici", "sici_jvp")
def sici_jvp(eqn: Eqn, primals, tangents):
    (p,), (t,) = primals, tangents
    return call_again(eqn, p), (sinc(p / np.pi) * t, jnp.cos(p) / p * t)


_CONSTS = ("its body closes over arrays (num_consts > 0) that the rule needs to call the function again, and "
           "a rule sees only the operands after them")
# The rules are one line each (erfcx: g (2 x ans - 2/sqrt(pi)); dawsn: g (1 - 2 x ans); wofz: g (-2 z ans +
# 2i/sqrt(pi))) but need ans, the function called again, whose body needs its consts (coefficient tables).
unwritten("_erfcx", "jvp", _CONSTS)
unwritten("_dawsn", "jvp", _CONSTS)
unwritten("_wofz", "jvp", _CONSTS)
unwritten("_owens_t_impl", "_owens_t_jvp", _CONSTS)
unwritten("fresnel", "_fresnel_jvp", _CONSTS)
unwritten("expn", "expn_jvp", "the order n is a nondiff argument (a const of the call, or folded into its body) "
          "and the rule calls expn(n - 1, x)")
unwritten("zeta", "jvp", "JAX's derivative in x is a 16-term Euler-Maclaurin series (_zeta_series_expansion) "
          "not written here")
unwritten("poch", "jvp", "its derivatives need digamma(z + m) and the m-derivative series, not written here")
unwritten("hyp1f1", "jvp", "its derivatives are further hypergeometric series, not written here")
unwritten("hyp2f1", "jvp", "its derivatives are further hypergeometric series, not written here")
