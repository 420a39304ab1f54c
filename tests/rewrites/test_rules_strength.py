"""Strength reduction, egg-style: integer powers as products, pow with literal exponents, x+x,
division by constants. Exact rows are also checked bit for bit on special values (JAX's repeated
squaring order for integer_pow)."""

import numpy as np

import ir.numpy as jnp
from ir import lax
from rewrites.rules import strength
from tests.rewrites.helpers import F32, F64
from tests.rewrites.rule_checks import I32, pos, rows_cover, table_tests


def ipow(x, n):
    return lax.integer_pow(x, n)


def sq(x):
    return x * x


# (rule, f, g, avals, rule set)
PROVES = [
    ("ipow-zero", lambda x: ipow(x, 0), jnp.ones_like, (F64,), "strict"),
    ("ipow-zero", lambda x: ipow(x, 0), jnp.ones_like, (I32,), "strict"),
    ("ipow-one", lambda x: ipow(x, 1), lambda x: x, (F64,), "strict"),
    ("ipow-neg-one", lambda x: ipow(x, -1), lambda x: 1.0 / x, (F64,), "strict"),
    ("ipow-even", lambda x: ipow(x, 4), lambda x: sq(sq(x)), (F64,), "strict"),
    ("ipow-even", lambda x: ipow(x, -2), lambda x: 1.0 / sq(x), (F64,), "strict"),
    ("ipow-even", lambda x: ipow(x, 6), lambda x: ipow(sq(x), 3), (I32,), "strict"),
    ("ipow-odd", lambda x: ipow(x, 3), lambda x: x * sq(x), (F64,), "default"),
    ("ipow-odd", lambda x: ipow(x, 7), lambda x: x * (sq(x) * sq(sq(x))), (F64,), "default"),
    ("mul-self-ipow", lambda x: x * x, lambda x: ipow(x, 2), (F64,), "strict"),
    ("square-mul", lax.square, sq, (F64,), "strict"),
    ("square-mul", sq, lax.square, (I32,), "strict"),
    ("ipow-ipow", lambda x: ipow(ipow(x, 2), 3), lambda x: ipow(x, 6), (F64,), "default"),
    ("ipow-ipow", lambda x: ipow(ipow(x, -1), -1), lambda x: ipow(x, 1), (F64,), "default"),
    ("mul-ipow", lambda x: x * ipow(x, 3), lambda x: ipow(x, 4), (F64,), "default"),
    ("add-self", lambda x: x + x, lambda x: x * 2.0, (F64,), "strict"),
    ("add-self", lambda x: x * np.int32(2), lambda x: x + x, (I32,), "strict"),
    ("div-pow2", lambda x: x / 4.0, lambda x: x * 0.25, (F64,), "strict"),
    ("div-pow2", lambda x: x / -0.5, lambda x: x * -2.0, (F32,), "strict"),
    ("div-const", lambda x: x / 3.0, lambda x: x * (1.0 / 3.0), (F64,), "default"),
    ("pow-zero", lambda x: lax.pow(x, 0.0), jnp.ones_like, (F64,), "strict"),
    ("pow-zero", lambda x: lax.pow(x, np.int32(0)), jnp.ones_like, (F32,), "strict"),
    ("pow-one", lambda x: lax.pow(x, 1.0), lambda x: x, (F64,), "strict"),
    ("pow-int", lambda x: lax.pow(x, 3.0), lambda x: ipow(x, 3), (F64,), "default"),
    ("pow-int", lambda x: lax.pow(x, np.int32(-2)), lambda x: 1.0 / sq(x), (F64,), "default"),
    ("pow-half", lambda x: lax.pow(x, 0.5), jnp.sqrt, (F64,), "fast"),
    ("pow-half-nonneg", lambda x: lax.pow(jnp.exp(x), 0.5), lambda x: jnp.sqrt(jnp.exp(x)), (F64,),
     "default"),
    ("pow-neg-half", lambda x: lax.pow(pos(x), -0.5), lambda x: lax.rsqrt(pos(x)), (F64,), "default"),
    ("rsqrt-recip-sqrt", lax.rsqrt, lambda x: 1.0 / jnp.sqrt(x), (F64,), "default"),
    ("rsqrt-recip-sqrt", lambda x: 1.0 / jnp.sqrt(x), lax.rsqrt, (F32,), "default"),
]

# (what must not be proved, f, g, avals, rule set)
NOT_PROVES = [
    ("x^3 regrouped is not exact", lambda x: ipow(x, 3), lambda x: sq(x) * x, (F64,), "strict"),
    ("x/3 -> x*(1/3) rounds", lambda x: x / 3.0, lambda x: x * (1.0 / 3.0), (F64,), "strict"),
    ("1/3 is not an f32 literal", lambda x: x / np.float32(3.0), lambda x: x * np.float32(1.0 / 3.0), (F32,),
     "fast"),
    ("x*-1 -> x*x^-1 nonsense", lambda x: x * ipow(x, -1), jnp.ones_like, (F64,), "default"),
    ("pow(x, 0.5) is unsafe", lambda x: lax.pow(x, 0.5), jnp.sqrt, (F64,), "default"),
    ("pow(x, -0.5) needs x > 0", lambda x: lax.pow(jnp.abs(x), -0.5), lambda x: lax.rsqrt(jnp.abs(x)), (F64,),
     "fast"),
    ("pow(x, 2.5) is no integer power", lambda x: lax.pow(x, 2.5), lambda x: sq(x) * jnp.sqrt(x), (F64,),
     "fast"),
]


test_proves, test_not_proves = table_tests(PROVES, NOT_PROVES)


def test_every_rule_has_a_row():
    assert not rows_cover(strength, PROVES)
