"""jax.numpy's custom JVP rules (jax/_src/lax/other.py, jax/_src/numpy/ufuncs.py, lax_numpy.py)."""

from __future__ import annotations

import numpy as np

from ir import lax
from ir import numpy as jnp
from ir.core import Eqn, Literal
from ir.errors import UnsupportedPrimitive
from transforms.ad.jax_rules import body_eqns, call_again, jax_rule, stage_call


def _replace_inf(x):
    """0 where x = +inf: keeps exp(x - out) finite when an operand and the result are both +inf."""
    return lax.select(x == np.inf, lax.full_like(x, 0), x)


def _logaddexp_like(exp):
    def rule(eqn: Eqn, primals, tangents):
        (x1, x2), (t1, t2) = primals, tangents
        out = call_again(eqn, x1, x2)
        return out, t1 * exp(_replace_inf(x1) - _replace_inf(out)) + t2 * exp(_replace_inf(x2) - _replace_inf(out))
    return rule


# Where the rule and the body's derivative differ: at a tie x1 = x2 the rule gives 1/2 to each (eqjax's body,
# through max, 1 to one of them); at x1 = x2 = -inf it gives nan; with x1 = +inf it gives exp(x2) to x2
# (_replace_inf maps the +inf output to 0), the body 0.
jax_rule("logaddexp", "_logaddexp_jvp")(_logaddexp_like(lax.exp))
jax_rule("logaddexp2", "_logaddexp2_jvp")(_logaddexp_like(lax.exp2))


@jax_rule("_i0", "_i0_jvp")
def _i0_jvp(eqn: Eqn, primals, tangents):
    """d i0(x) = sign(x) e^|x| i1e(|x|) dx, 0 at x = 0 (where |x| has no derivative)."""
    (x,), (t,) = primals, tangents
    a = lax.abs(x)
    return call_again(eqn, x), jnp.where(x == 0, 0.0, lax.sign(x) * lax.exp(a) * lax.bessel_i1e(a) * t)


@jax_rule("_frexp", "_frexp_jvp")
def _frexp_jvp(eqn: Eqn, primals, tangents):
    (x,), (t,) = primals, tangents
    m, e = call_again(eqn, x)
    return (m, e), (t * lax.exp2(-lax.convert_element_type(e, t.dtype)), lax.full_like(e, 0))


# --- sinc: _sinc_maclaurin(k, x), the k-th derivative of sin(x)/x at 0, with k a nondiff argument -------


def _maclaurin_value(k: int) -> float:
    return 0.0 if k % 2 else (-1) ** (k // 2) / (k + 1)


def _maclaurin_order(eqn: Eqn) -> int:
    """k, read from the body: JAX's `x * 0 + c_k` for even k (c_k = (-1)^(k/2) / (k+1)); the odd orders
    this module stages (`_sinc_maclaurin`) are `x * 0 * c_(k+1)`. JAX's own odd body, `x * 0`, does not say
    which odd k it is."""
    last = list(body_eqns(eqn))[-1]
    c = next((float(a.value) for a in last.invars if isinstance(a, Literal)), None)
    if last.primitive == "add" and c:
        return round(1 / abs(c)) - 1
    if last.primitive == "mul" and c:
        return round(1 / abs(c)) - 2
    raise UnsupportedPrimitive(eqn.primitive, "_sinc_maclaurin_jvp: the derivative order k of this call's body "
                               "(x * 0, an odd k) is not in the text", "transforms/ad/jax_rules/numpy.py")


def sinc_maclaurin(k: int, x):
    """JAX's `_sinc_maclaurin(k, x)`, staged as its custom_jvp_call (odd k in the form that keeps k)."""
    if k % 2:
        return stage_call("_sinc_maclaurin", "_sinc_maclaurin_jvp", lambda v: v * 0 * _maclaurin_value(k + 1), x)
    return stage_call("_sinc_maclaurin", "_sinc_maclaurin_jvp", lambda v: v * 0 + _maclaurin_value(k), x)


@jax_rule("_sinc_maclaurin", "_sinc_maclaurin_jvp")
def _sinc_maclaurin_jvp(eqn: Eqn, primals, tangents):
    (x,), (t,) = primals, tangents
    return call_again(eqn, x), sinc_maclaurin(_maclaurin_order(eqn) + 1, x) * t


def sinc(x):
    """jnp.sinc as JAX writes it: sin(pi x) / (pi x), its Maclaurin series at 0."""
    eq_zero = x == 0
    pi_x = np.pi * x
    safe_pi_x = jnp.where(eq_zero, 1.0, pi_x)
    return jnp.where(eq_zero, sinc_maclaurin(0, pi_x), lax.sin(safe_pi_x) / safe_pi_x)
