"""jax.scipy.special's custom JVP rules (jax/_src/scipy/special.py, jax/_src/third_party/scipy/special.py);
jax.scipy.stats uses these (norm.logcdf: log_ndtr; poisson, binom, beta...: xlogy, xlog1py)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ir import lax
from ir import numpy as jnp
from ir.core import ClosedJaxpr, Eqn, ShapedArray
from ir.errors import UnsupportedPrimitive
from ir.tracing import aval_of, bind_jaxpr, make_jaxpr
from transforms.ad.jax_rules import call_again, defjvps, jax_rule
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


# poch(z, m) = gamma(z + m) / gamma(z), 1 where m = 0 (there the body's derivative in m is 0, the rule's
# digamma(z))
jax_rule("poch", "jvp")(defjvps(lambda z_dot, ans, z, m: (lax.digamma(z + m) - lax.digamma(z)) * ans * z_dot,
                                lambda m_dot, ans, z, m: lax.digamma(z + m) * ans * m_dot))


@jax_rule("expi", "expi_jvp")
def expi_jvp(eqn: Eqn, primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return call_again(eqn, x), jnp.exp(x) / x * x_dot


@jax_rule("sici", "sici_jvp")
def sici_jvp(eqn: Eqn, primals, tangents):
    (p,), (t,) = primals, tangents
    return call_again(eqn, p), (sinc(p / np.pi) * t, jnp.cos(p) / p * t)


# --- zeta: JAX differentiates an Euler-Maclaurin expansion of the Hurwitz zeta function instead -------------

_BERNOULLI_COEFS = np.array([
    12, -720, 30240, -1209600, 47900160, -1307674368000 / 691, 74724249600, -10670622842880000 / 3617,
    5109094217170944000 / 43867, -802857662698291200000 / 174611, 14101100039391805440000 / 77683,
    -1693824136731743669452800000 / 236364091, 186134520519971831808000000 / 657931,
    -37893265687455865519472640000000 / 3392780147, 759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217,
])


def _zeta_series_expansion(s, a):
    """zeta(s, a) by Johansson (2015), formula (5), with JAX's N = M = 16 (8 in float32)."""
    dtype = np.dtype(str(a.dtype))
    n = 8 if dtype == np.float32 else 16
    s_, a_ = jnp.expand_dims(s, -1), jnp.expand_dims(a, -1)
    lead = (1,) * a.ndim
    k = np.arange(n, dtype=dtype).reshape(*lead, n)
    head = jnp.sum((a_ + k) ** -s_, -1)
    integral = (a + n) ** (1 - s) / (s - 1)
    t0 = (a + n) ** -s
    m = np.arange(2 * n, dtype=dtype).reshape(*lead, 2 * n)
    t1 = jnp.cumprod((s_ + m) / (a_ + n), -1)[..., ::2]
    t1 = jnp.clip(t1, max=np.finfo(dtype).max)
    t1 = t1 / np.asarray(_BERNOULLI_COEFS[:n], dtype=dtype).reshape(*lead, n)
    return head + integral + t0 * (0.5 + jnp.sum(t1, -1))


@lru_cache(maxsize=32)
def _zeta_series_jvp(avals: tuple[ShapedArray, ...]) -> ClosedJaxpr:
    """The forward mode of the expansion, (s, a, ds, da) -> (value, tangent), once per signature."""
    from rewrites.options import Options
    from transforms.ad.programs import jvp_program

    program, _ = jvp_program(make_jaxpr(_zeta_series_expansion)(*avals), [0, 1], Options(rules="none"))
    return program


@jax_rule("zeta", "jvp")
def _zeta_jvp(eqn: Eqn, primals, tangents):
    """JAX's rule is `partial(jax.jvp, _zeta_series_expansion)`: forward mode of the expansion, whose
    primal output is the expansion's value. Without the algebraic rules: the program differentiating
    this one simplifies it."""
    value, tangent = bind_jaxpr(_zeta_series_jvp(tuple(aval_of(x) for x in primals)), *primals, *tangents)
    return value, tangent


# The functions below close over coefficient tables (their calls have num_consts > 0): `call_again` stages
# the call with them (`ir.custom_rules.call_consts`).
jax_rule("_erfcx", "jvp")(defjvps(lambda g, ans, x: g * (2 * x * ans - 2 / np.sqrt(np.pi))))
jax_rule("_dawsn", "jvp")(defjvps(lambda g, ans, x: g * (1 - 2 * x * ans)))
jax_rule("_wofz", "jvp")(defjvps(lambda g, ans, z: g * (-2 * z * ans + lax.complex(
    jnp.zeros_like(lax.real(z)), jnp.full_like(lax.real(z), 2 / np.sqrt(np.pi))))))


@jax_rule("_owens_t_impl", "_owens_t_jvp")
def _owens_t_jvp(eqn: Eqn, primals, tangents):
    """dT/dh = -exp(-h^2/2) erf(a h / sqrt 2) / (2 sqrt(2 pi)); dT/da = exp(-(a^2 + 1) h^2 / 2) / (2 pi (a^2 + 1))."""
    (h, a), (dh, da) = primals, tangents
    result = call_again(eqn, h, a)
    dout_dh = -lax.exp(-0.5 * lax.square(h)) * lax.erf(a * h / np.sqrt(2)) / (2.0 * np.sqrt(2.0 * np.pi))
    dout_da = lax.exp(-0.5 * (lax.square(a) + 1.0) * lax.square(h)) / (2.0 * np.pi * (lax.square(a) + 1.0))
    return result, dout_dh * dh + dout_da * da


@jax_rule("fresnel", "_fresnel_jvp")
def _fresnel_jvp(eqn: Eqn, primals, tangents):
    """(S, C)' = (sin, cos)(pi x^2 / 2), evaluated as JAX's `sincospisquaredhalf` does (exactly at large x)."""
    (x,), (x_dot,) = primals, tangents
    result = call_again(eqn, x)
    sinpi, cospi = _sincospisquaredhalf(x)
    return result, (sinpi * x_dot, cospi * x_dot)


def _sincospisquaredhalf(x):
    x = jnp.abs(x)
    s = jnp.fmod(x, 2.0)
    r = jnp.fmod(s * (x - s / 2), 2.0)
    sinpi = jnp.where(r < 0.5, jnp.sin(np.pi * r),
                      jnp.where(r > 1.5, jnp.sin(np.pi * (r - 2.0)), -jnp.sin(np.pi * (r - 1.0))))
    cospi = jnp.where(r == 0.5, 0.0, jnp.where(r < 1.0, -jnp.sin(np.pi * (r - 0.5)), jnp.sin(np.pi * (r - 1.5))))
    return sinpi, cospi


# --- expn: the order n is a nondiff argument; the rule is -E_{n-1}(x) dx -------------------------------------


@jax_rule("expn", "expn_jvp")
def expn_jvp(eqn: Eqn, primals, tangents):
    """JAX's rule calls `expn(n - 1, x)`, the same call on order n - 1; its rule is this one again."""
    (x,), (x_dot,) = primals, tangents
    return call_again(eqn, x), -x_dot * _expn_order_minus_one(eqn, x)


def _expn_order_minus_one(eqn: Eqn, x):
    """The call on order n - 1. A traced n is the call's one const; a Python int n is folded into the body,
    where it is the first operand of the first equation (JAX's `jit(expn)`, or once AD has inlined that
    jit, expn's conversion of n to floating point): the body is replayed with that literal minus 1."""
    from ir.core import Literal
    from ir.custom_rules import call_consts
    from ir.tracing import bind, hoist_consts, trace_flat

    consts, body = call_consts(), eqn.params["call_jaxpr"]
    if len(consts) == 1:
        return bind(eqn.primitive, consts[0] - 1, x, **eqn.params)[0]
    first = body.jaxpr.eqns[0] if body.jaxpr.eqns else None
    order = first.invars[0] if first is not None and first.invars else None
    if consts or not (isinstance(order, Literal) and np.issubdtype(np.asarray(order.value).dtype, np.integer)):
        raise UnsupportedPrimitive(eqn.primitive, "JAX's custom JVP rule expn_jvp (of expn): the order n is "
                                   "neither the call's one const nor an integer folded into its body",
                                   "transforms/ad/jax_rules")
    minus_one = np.asarray(order.value - 1, dtype=np.asarray(order.value).dtype)

    def decremented(x):
        return _replay(body, (x,), {id(first): lambda _: minus_one})

    closed, _ = trace_flat(decremented, [aval_of(x)])
    new_body, extra = hoist_consts(closed)
    return bind(eqn.primitive, *extra, x, **{**eqn.params, "call_jaxpr": new_body, "num_consts": len(extra)})[0]


def _replay(closed: ClosedJaxpr, args, first_operand_of: dict):
    """`bind_jaxpr(closed, *args)`, with the first operand of the equations in `first_operand_of` (by id)
    mapped through the function given there."""
    from ir.core import Literal, Var
    from ir.primitives import get_primitive
    from ir.tracing import bind

    jaxpr = closed.jaxpr
    env = {id(v): c for v, c in zip(jaxpr.constvars, closed.consts, strict=True)}
    env.update({id(v): a for v, a in zip(jaxpr.invars, args, strict=True)})

    def read(a):
        return a if isinstance(a, Literal) else env[id(a)]

    for e in jaxpr.eqns:
        ins = [read(a) for a in e.invars]
        if id(e) in first_operand_of:
            ins[0] = first_operand_of[id(e)](ins[0])
        outs = bind(e.primitive, *ins, **e.params)
        outs = outs if get_primitive(e.primitive).multiple_results else [outs]
        env.update({id(v): o for v, o in zip(e.outvars, outs, strict=True) if isinstance(v, Var)})
    return [read(a) for a in jaxpr.outvars]


# --- hyp1f1 / hyp2f1: JAX's derivatives in a, b, c are series (while loops); in x, the function again ----


def _series(x, first_term, term_ratio, weight):
    """sum_{k >= 1} term_k weight(k), term_1 = first_term, term_{k+1} = term_k term_ratio(k), stopped as JAX's
    loops are (k < 250 and |term| / |sum| > eps), each element on its own: JAX's loops run under
    `jnp.vectorize`, so an element stops when its own condition fails (here: the loop runs while any does,
    and leaves the finished elements as they are)."""
    eps = float(np.finfo(np.dtype(str(x.dtype))).eps)

    def going(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > eps)

    def body(state):
        serie, k, term = state
        keep = going(state)
        new = (serie + term * weight(k), k + 1, term * term_ratio(k))
        return tuple(jnp.where(keep, n, o) for n, o in zip(new, state, strict=True))

    init = (jnp.zeros_like(x), jnp.ones_like(x), first_term)
    return lax.while_loop(lambda state: jnp.any(going(state)), body, init)[0]


def _hyp1f1_series(a, b, x, weight):
    return _series(x, a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1), weight)


@jax_rule("hyp1f1", "jvp")
def _hyp1f1_jvp(eqn: Eqn, primals, tangents):
    """JAX's `defjvps`: d/da and d/db are series; d/dx = a / b 1F1(a + 1, b + 1, x), the call again."""
    (a, b, x), (a_dot, b_dot, x_dot) = primals, tangents
    d_a = _hyp1f1_series(a, b, x, lambda k: lax.digamma(a + k) - lax.digamma(a))
    d_b = _hyp1f1_series(a, b, x, lambda k: lax.digamma(b) - lax.digamma(b + k))
    d_x = a / b * call_again(eqn, a + 1, b + 1, x)
    return call_again(eqn, a, b, x), d_a * a_dot + d_b * b_dot + d_x * x_dot


def _hyp2f1_series(a, b, c, x, weight):
    return _series(x, a * b / c * x, lambda k: (a + k) * (b + k) / (c + k) / (k + 1) * x, weight)


@jax_rule("hyp2f1", "jvp")
def _hyp2f1_jvp(eqn: Eqn, primals, tangents):
    """d/da, d/db, d/dc are series; d/dx = a b / c 2F1(a + 1, b + 1, c + 1, x), the call again."""
    (a, b, c, x), (a_dot, b_dot, c_dot, x_dot) = primals, tangents
    d_a = _hyp2f1_series(a, b, c, x, lambda k: lax.digamma(a + k) - lax.digamma(a))
    d_b = _hyp2f1_series(a, b, c, x, lambda k: lax.digamma(b + k) - lax.digamma(b))
    d_c = _hyp2f1_series(a, b, c, x, lambda k: lax.digamma(c) - lax.digamma(c + k))
    d_x = a * b / c * call_again(eqn, a + 1, b + 1, c + 1, x)
    return call_again(eqn, a, b, c, x), d_a * a_dot + d_b * b_dot + d_c * c_dot + d_x * x_dot
