"""Comparison, select, clamp and max/min rules, egg-style: one line per equation that must (or must not)
be proved, each also by its rule alone. Exact rules are also checked bit for bit on special values."""


import numpy as np
import pytest

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir import lax
from ir.core import ShapedArray
from ir.dtypes import bool_, float32, float64, int32, uint8
from ir.tracing import make_jaxpr
from rewrites.prove import prove_equal
from rewrites.rulesets import all_rules
from tests.rewrites.helpers import F32, F64, assert_not_proves, assert_proves
from tests.rewrites.rule_checks import I32, B, assert_bitwise_equal, fin, matches, rule_named

U8 = ShapedArray((3,), uint8)
I2 = (I32, I32)
F64_0 = ShapedArray((), float64)

def where(c, x, y):
    return jnp.where(c, x, y)


def clamp(x, lo, hi):
    return lax.clamp(lo, x, hi)


def minmax(x, lo, hi):
    return jnp.minimum(jnp.maximum(x, lo), hi)


# (rule, f, g, avals, rule set): the rule set proves f = g, and so does the rule alone.
PROVES = [
    ("select-same", lambda p, x: where(p, x, x), lambda p, x: x, (B, F64), "default"),
    ("select-not", lambda p, x, y: where(jnp.logical_not(p), x, y), lambda p, x, y: where(p, y, x),
     (B, F64, F64), "default"),
    ("select-lit-first", lambda x, y: where(False, x, y), lambda x, y: y, (F64, F64), "default"),
    ("select-lit-second", lambda x, y: where(True, x, y), lambda x, y: x, (F64, F64), "default"),
    ("select-lit-first", lambda x, y: lax.select_n(np.int32(0), x, y), lambda x, y: x, (F64, F64), "default"),
    ("abs-as-select", lambda x: where(x < 0, -x, x), jnp.abs, (F64,), "default"),
    ("abs-as-select", lambda x: where(x < 0, -x, x), jnp.abs, (I32,), "default"),
    ("max-as-select", lambda x, y: where(x < y, y, x), jnp.maximum, (F64, F64), "fast"),
    ("min-as-select", lambda x, y: where(x < y, x, y), jnp.minimum, (F64, F64), "fast"),
    ("max-as-select-int", lambda x, y: where(x < y, y, x), jnp.maximum, (I32, I32), "default"),
    ("min-as-select-int", lambda x, y: where(x < y, x, y), jnp.minimum, (I32, I32), "default"),
    ("max-self", lambda x: jnp.maximum(x, x), lambda x: x, (F64,), "default"),
    ("min-self", lambda x: jnp.minimum(x, x), lambda x: x, (F64,), "default"),
    ("max-min-absorb", lambda x, y: jnp.maximum(x, jnp.minimum(x, y)), lambda x, y: x, (F64, F64), "fast"),
    ("min-max-absorb", lambda x, y: jnp.minimum(x, jnp.maximum(x, y)), lambda x, y: x, (F64, F64), "fast"),
    ("max-min-absorb-int", lambda x, y: jnp.maximum(x, jnp.minimum(x, y)), lambda x, y: x, I2, "default"),
    ("min-max-absorb-int", lambda x, y: jnp.minimum(x, jnp.maximum(x, y)), lambda x, y: x, I2, "default"),
    ("neg-max", lambda x, y: -jnp.maximum(x, y), lambda x, y: jnp.minimum(-x, -y), (F64, F64), "default"),
    ("neg-min", lambda x, y: -jnp.minimum(x, y), lambda x, y: jnp.maximum(-x, -y), (F64, F64), "default"),
    ("clamp-as-minmax", clamp, minmax, (F64, F64, F64), "default"),
    ("minmax-as-clamp", minmax, clamp, (F64, F64_0, F64_0), "default,-clamp-as-minmax"),
    ("clamp-clamp", lambda x, lo, hi: clamp(clamp(x, lo, hi), lo, hi), clamp, (F64, F64_0, F64_0), "default"),
    ("lt-self", lambda x: x < x, lambda x: jnp.zeros_like(x, dtype=bool_), (F64,), "default"),
    ("le-self", lambda x: x <= x, lambda x: jnp.ones_like(x, dtype=bool_), (F64,), "fast"),
    ("eq-self", lambda x: x == x, lambda x: jnp.ones_like(x, dtype=bool_), (F64,), "fast"),
    ("ne-self", lambda x: x != x, lambda x: jnp.zeros_like(x, dtype=bool_), (F64,), "fast"),
    ("le-self-int", lambda x: x <= x, lambda x: jnp.ones_like(x, dtype=bool_), (I32,), "default"),
    ("eq-self-int", lambda x: x == x, lambda x: jnp.ones_like(x, dtype=bool_), (B,), "default"),
    ("ne-self-int", lambda x: x != x, lambda x: jnp.zeros_like(x, dtype=bool_), (U8,), "default"),
    ("gt-flip", lambda x, y: x > y, lambda x, y: y < x, (F64, F64), "default"),
    ("ge-flip", lambda x, y: x >= y, lambda x, y: y <= x, (F64, F64), "default"),
    ("not-eq", lambda x, y: jnp.logical_not(x == y), lambda x, y: x != y, (F64, F64), "default"),
    ("not-ne", lambda x, y: jnp.logical_not(x != y), lambda x, y: x == y, (F64, F64), "default"),
    ("not-lt", lambda x, y: jnp.logical_not(x < y), lambda x, y: x >= y, (F64, F64), "fast"),
    ("not-le", lambda x, y: jnp.logical_not(x <= y), lambda x, y: x > y, (F64, F64), "fast"),
    ("not-lt-int", lambda x, y: jnp.logical_not(x < y), lambda x, y: x >= y, (I32, I32), "default"),
    ("not-le-int", lambda x, y: jnp.logical_not(x <= y), lambda x, y: x > y, (I32, I32), "default"),
    ("select-zero-mul", lambda p, x, y: where(p, 0.0, x) * y, lambda p, x, y: where(p, 0.0, x * y), (B, F64, F64),
     "fast"),
    ("select-zero-mul", lambda p, x, y: where(p, x, 0.0) * y, lambda p, x, y: where(p, x * y, 0.0), (B, F64, F64),
     "fast"),
    ("select-zero-mul-finite", lambda p, x, y: where(p, 0.0, x) * fin(y), lambda p, x, y: where(p, 0.0, x * fin(y)),
     (B, F64, F64), "default"),
]
IDS = [f"{p[0]}-{i}" for i, p in enumerate(PROVES)]


@pytest.mark.parametrize("name,f,g,avals,rules", PROVES, ids=IDS)
def test_proves(name, f, g, avals, rules):
    assert_proves(f, g, *avals, rules=rules, positive=False)


@pytest.mark.parametrize("name,f,g,avals,rules", PROVES, ids=IDS)
def test_rule_alone_proves(name, f, g, avals, rules):
    assert prove_equal(f, g, *avals, rules=[rule_named(name)])


# Equations that need several rules (flips, commutativity) of the default set.
COMBINED = [
    (lambda x: jnp.clip(x, 0.5, 1.5), lambda x: lax.clamp(0.5, x, 1.5), (F64,)),
    (lambda x: x > x, lambda x: jnp.zeros_like(x, dtype=bool_), (F64,)),
    (lambda x: x >= x, lambda x: jnp.ones_like(x, dtype=bool_), (I32,)),
    (lambda x, y: jnp.logical_not(x > y), lambda x, y: x <= y, (I32, I32)),
    (lambda x, y: jnp.maximum(jnp.minimum(y, x), x), lambda x, y: x, (I32, I32)),
]


@pytest.mark.parametrize("f,g,avals", COMBINED)
def test_combined(f, g, avals):
    assert_proves(f, g, *avals, positive=False)


def test_every_rule_is_tested():
    assert {r.name for r in all_rules() if r.category == "compare"} == {p[0] for p in PROVES}


# Unsafe rules stay out of the default set; the float versions of the integer-only rules do not fire.
NOT_IN_DEFAULT = [
    (lambda x, y: where(x < y, y, x), jnp.maximum, (F64, F64)),
    (lambda x, y: jnp.maximum(x, jnp.minimum(x, y)), lambda x, y: x, (F64, F64)),
    (lambda x, y: jnp.minimum(x, jnp.maximum(x, y)), lambda x, y: x, (F32, F32)),
    (lambda x: x <= x, lambda x: jnp.ones_like(x, dtype=bool_), (F64,)),
    (lambda x: x == x, lambda x: jnp.ones_like(x, dtype=bool_), (F32,)),
    (lambda x: x != x, lambda x: jnp.zeros_like(x, dtype=bool_), (F64,)),
    (lambda x, y: jnp.logical_not(x < y), lambda x, y: x >= y, (F64, F64)),
    (lambda x, y: jnp.logical_not(x <= y), lambda x, y: x > y, (F64, F64)),
    (lambda p, x, y: where(p, 0.0, x) * y, lambda p, x, y: where(p, 0.0, x * y), (B, F64, F64)),
]


@pytest.mark.parametrize("f,g,avals", NOT_IN_DEFAULT)
def test_unsafe_not_in_default(f, g, avals):
    assert_not_proves(f, g, *avals, rules="default")


def test_restrictions():
    # -max(x, y) = min(-x, -y) fails for integers (-INT_MIN wraps): floats only.
    assert matches("neg-max", lambda x, y: -jnp.maximum(x, y), I32, I32) == 0
    # not of an int index is not a swap of the cases.
    int_pred = lambda p, x, y: lax.select_n(lax.bitwise_not(p), x, y)
    assert matches("select-not", int_pred, I32, F64, F64) == 0
    # min(max(x, lo), hi) with an array bound broadcasts x: clamp would not.
    assert matches("minmax-as-clamp", lambda x, lo: jnp.minimum(jnp.maximum(x, lo), 1.0),
                   ShapedArray((1,), float64), F64) == 0
    # max(x, min(x, y)) has y's shape when x is a scalar.
    i32_0 = ShapedArray((), int32)
    assert matches("max-min-absorb-int", lambda x, y: jnp.maximum(x, jnp.minimum(x, y)), i32_0, I32) == 0
    # abs does not take unsigned integers.
    assert matches("abs-as-select", lambda x: where(x < 0, -x, x), U8) == 0


EXACT_EVIDENCE = [
    (lambda p, x, y: where(jnp.logical_not(p), x, y), lambda p, x, y: where(p, y, x),
     (bool_, float64, float64)),
    (lambda x, y: -jnp.maximum(x, y), lambda x, y: jnp.minimum(-x, -y), (float64, float64)),
    (lambda x, y: -jnp.minimum(x, y), lambda x, y: jnp.maximum(-x, -y), (float32, float32)),
    (clamp, minmax, (float64,) * 3),
    (lambda x, lo, hi: clamp(clamp(x, lo, hi), lo, hi), clamp, (float64,) * 3),
    (lambda x: x < x, lambda x: jnp.zeros_like(x, dtype=bool_), (float64,)),
    (lambda x, y: x > y, lambda x, y: y < x, (float64, float64)),
    (lambda x, y: x >= y, lambda x, y: y <= x, (float64, float64)),
    (lambda x, y: jnp.logical_not(x == y), lambda x, y: x != y, (float64, float64)),
    (lambda x, y: jnp.logical_not(x != y), lambda x, y: x == y, (float64, float64)),
    (lambda x, y: where(x < y, y, x), jnp.maximum, (int32, int32)),
    (lambda x, y: where(x < y, x, y), jnp.minimum, (int32, int32)),
    (lambda x, y: jnp.maximum(x, jnp.minimum(x, y)), lambda x, y: x, (int32, int32)),
    (lambda x, y: jnp.minimum(x, jnp.maximum(x, y)), lambda x, y: x, (bool_, bool_)),
    (lambda x, y: jnp.logical_not(x < y), lambda x, y: x >= y, (int32, int32)),
    (lambda x, y: jnp.logical_not(x <= y), lambda x, y: x > y, (bool_, bool_)),
    (lambda x: x <= x, lambda x: jnp.ones_like(x, dtype=bool_), (int32,)),
]


@pytest.mark.parametrize("f,g,dtypes", EXACT_EVIDENCE)
def test_exact_rules_bitwise_on_specials(f, g, dtypes):
    assert_bitwise_equal(f, g, *dtypes)


def test_unsafe_rules_really_differ_on_specials():
    nan, one = np.array([np.nan]), np.array([1.0])
    f64_1 = ShapedArray((1,), float64)
    for f, g, args in [
        (lambda x, y: where(x < y, y, x), jnp.maximum, (one, nan)),
        (lambda x, y: jnp.maximum(x, jnp.minimum(x, y)), lambda x, y: x, (one, nan)),
        (lambda x, y: x <= x, lambda x, y: jnp.ones_like(x, dtype=bool_), (nan, nan)),
        (lambda x, y: jnp.logical_not(x < y), lambda x, y: x >= y, (nan, one)),
    ]:
        (lhs,), (rhs,) = (eval_jaxpr(make_jaxpr(h)(f64_1, f64_1), *args) for h in (f, g))
        assert not np.array_equal(lhs, rhs, equal_nan=True)
