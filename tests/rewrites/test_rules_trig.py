"""Trigonometric and hyperbolic rules, egg-style: one line per equation that must (or must not) be proved,
each also by its rule alone. Exact rules are also checked bit for bit on special values."""

import numpy as np
import pytest

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir import lax
from ir.core import ShapedArray
from ir.dtypes import bfloat16, complex128, float16, float32, float64
from ir.tracing import make_jaxpr
from rewrites.prove import prove_equal
from rewrites.rulesets import all_rules
from tests.rewrites.helpers import F32, F64, assert_not_proves, assert_proves
from tests.rewrites.rule_checks import assert_bitwise_equal, matches, rule_named

ODD = {"sin": jnp.sin, "tan": jnp.tan, "sinh": jnp.sinh, "tanh": jnp.tanh, "asin": jnp.arcsin,
       "atan": jnp.arctan, "asinh": jnp.arcsinh, "atanh": jnp.arctanh}
EVEN = {"cos": jnp.cos, "cosh": jnp.cosh}


def ones(x):
    return jnp.ones_like(x)


def finite(x):
    """x with its infinities and nans replaced by 0: the values analysis knows the result is finite."""
    return jnp.where(jnp.isfinite(x), x, 0.0)


# (rule, f, g, avals, rule set): the rule set proves f = g, and so does the rule alone.
PROVES = [
    *((f"{n}-neg", lambda x, fn=fn: fn(-x), lambda x, fn=fn: -fn(x), (F64,), "default")
      for n, fn in ODD.items()),
    *((f"{n}-neg", lambda x, fn=fn: fn(-x), fn, (F32,), "default") for n, fn in EVEN.items()),
    ("atan2-neg", lambda y, x: jnp.arctan2(-y, x), lambda y, x: -jnp.arctan2(y, x), (F64, F64), "default"),
    ("logistic-neg", lambda x: lax.logistic(-x), lambda x: 1.0 - lax.logistic(x), (F64,), "default"),
    ("sin-sq-cos-sq", lambda x: jnp.sin(x) ** 2 + jnp.cos(x) ** 2, ones, (F64,), "fast"),
    ("sin-sq-cos-sq", lambda x: jnp.sin(x) ** 2 + jnp.cos(x) ** 2, ones, (F32,), "fast"),
    ("sin-sq-cos-sq-finite", lambda x: jnp.sin(finite(x)) ** 2 + jnp.cos(finite(x)) ** 2, ones, (F64,),
     "default"),
    ("cosh-sq-sinh-sq", lambda x: jnp.cosh(x) ** 2 - jnp.sinh(x) ** 2, ones, (F64,), "fast"),
    ("cosh-sq-sinh-sq-finite", lambda x: jnp.cosh(finite(x)) ** 2 - jnp.sinh(finite(x)) ** 2, ones, (F64,),
     "default"),
    ("tan-quotient", lambda x: jnp.sin(x) / jnp.cos(x), jnp.tan, (F64,), "default"),
    ("tanh-quotient", lambda x: jnp.sinh(x) / jnp.cosh(x), jnp.tanh, (F64,), "fast"),
    ("tanh-quotient-finite", lambda x: jnp.sinh(finite(x)) / jnp.cosh(finite(x)),
     lambda x: jnp.tanh(finite(x)), (F64,), "default"),
    ("sinh-exp", jnp.sinh, lambda x: (jnp.exp(x) - jnp.exp(-x)) / 2, (F64,), "default"),
    ("cosh-exp", lambda x: (jnp.exp(x) + jnp.exp(-x)) / 2, jnp.cosh, (F64,), "default"),
    ("tanh-logistic", jnp.tanh, lambda x: 2 * lax.logistic(2 * x) - 1, (F64,), "default"),
    ("sin-double", lambda x: jnp.sin(2 * x), lambda x: 2 * jnp.sin(x) * jnp.cos(x), (F64,), "default"),
    ("sin-double", lambda x: 2 * jnp.sin(x) * jnp.cos(x), lambda x: jnp.sin(2 * x), (F32,), "default"),
    ("cos-double", lambda x: jnp.cos(2 * x), lambda x: jnp.cos(x) ** 2 - jnp.sin(x) ** 2, (F64,), "default"),
]
IDS = [f"{p[0]}-{i}" for i, p in enumerate(PROVES)]


@pytest.mark.parametrize("name,f,g,avals,rules", PROVES, ids=IDS)
def test_proves(name, f, g, avals, rules):
    assert_proves(f, g, *avals, rules=rules, positive=False, rtol=1e-5 if avals[0] == F32 else 1e-9)


@pytest.mark.parametrize("name,f,g,avals,rules", PROVES, ids=IDS)
def test_rule_alone_proves(name, f, g, avals, rules):
    assert prove_equal(f, g, *avals, rules=[rule_named(name)])


def test_every_rule_is_tested():
    assert {r.name for r in all_rules() if r.category == "trig"} == {p[0] for p in PROVES}


def test_headline_sin_sq_plus_cos_sq_is_one():
    """`unsafe` for any x (fast set); `guarded` where x is known finite (default set)."""
    assert_proves(lambda x: jnp.sin(x) ** 2 + jnp.cos(x) ** 2, ones, F64, rules="fast", positive=False)
    assert_proves(lambda x: jnp.cos(x) ** 2 + jnp.sin(x) ** 2, ones, F64, rules="fast", positive=False)
    assert_not_proves(lambda x: jnp.sin(x) ** 2 + jnp.cos(x) ** 2, ones, F64, rules="default")
    assert_proves(lambda x: jnp.cos(finite(x)) ** 2 + jnp.sin(finite(x)) ** 2, ones, F32, positive=False,
                  rtol=1e-6)


@pytest.mark.parametrize("f,g", [
    (lambda x: jnp.sin(x) ** 2 + jnp.cos(x) ** 2, ones),
    (lambda x: jnp.cosh(x) ** 2 - jnp.sinh(x) ** 2, ones),
    (lambda x: jnp.sinh(x) / jnp.cosh(x), jnp.tanh),
])
def test_unsafe_not_in_default_and_differ_at_inf(f, g):
    assert_not_proves(f, g, F64, rules="default")
    aval = ShapedArray((1,), float64)
    (lhs,), (rhs,) = (eval_jaxpr(make_jaxpr(h)(aval), np.array([np.inf])) for h in (f, g))
    assert np.isnan(lhs[0]) and not np.isnan(rhs[0])


def test_complex_is_left_alone():
    c128 = ShapedArray((3,), complex128)
    assert matches("sin-neg", lambda x: jnp.sin(-x), c128) == 0
    assert matches("tan-quotient", lambda x: jnp.sin(x) / jnp.cos(x), c128) == 0


@pytest.mark.parametrize("dtype", [float64, float32, float16, bfloat16], ids=str)
@pytest.mark.parametrize("name", [*ODD, *EVEN])
def test_symmetry_is_bitwise_exact(name, dtype):
    fn = {**ODD, **EVEN}[name]
    assert_bitwise_equal(lambda x: fn(-x), (lambda x: -fn(x)) if name in ODD else fn, dtype)


@pytest.mark.parametrize("dtype", [float64, float32, float16, bfloat16], ids=str)
def test_atan2_symmetry_is_bitwise_exact(dtype):
    assert_bitwise_equal(lambda y, x: jnp.arctan2(-y, x), lambda y, x: -jnp.arctan2(y, x), dtype, dtype)
