"""Associativity and commutativity rules, egg-style, and a check that they stay bounded on a long sum."""

import functools
import time

import numpy as np
import pytest

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir.core import ShapedArray
from ir.dtypes import bool_, float32, float64, int32
from ir.tracing import make_jaxpr
from rewrites.engine import optimize
from rewrites.prove import prove_equal
from rewrites.rulesets import all_rules
from tests.rewrites.helpers import F64, assert_proves
from tests.rewrites.rule_checks import assert_bitwise_equal, rule_named

I32 = ShapedArray((3,), int32)
B = ShapedArray((3,), bool_)
F64_0 = ShapedArray((), float64)

OPS = {"add": jnp.add, "mul": jnp.multiply, "max": jnp.maximum, "min": jnp.minimum, "and": jnp.bitwise_and,
       "or": jnp.bitwise_or, "xor": jnp.bitwise_xor, "eq": jnp.equal, "ne": jnp.not_equal}
AVAL = {"and": I32, "or": B, "xor": I32}


def comm(op):
    return lambda x, y: op(x, y), lambda x, y: op(y, x)


def assoc(op):
    return lambda x, y, z: op(op(x, y), z), lambda x, y, z: op(x, op(y, z))


# (rule, f, g, avals): the default set proves f = g, and so does the rule alone.
PROVES = [
    *((f"{n}-comm", *comm(op), (AVAL.get(n, F64),) * 2) for n, op in OPS.items()),
    *((f"{n}-assoc", *assoc(op), (AVAL.get(n, F64),) * 3) for n, op in OPS.items() if n not in ("eq", "ne")),
    ("add-comm", *comm(jnp.add), (F64_0, F64)),
    ("add-assoc", *assoc(jnp.add), (F64, F64_0, F64_0)),
    ("and-assoc", *assoc(jnp.bitwise_and), (B, B, B)),
    ("sub-sub-reassoc", lambda x, y, z: x - (y - z), lambda x, y, z: (x - y) + z, (F64,) * 3),
]

# egg's tests/math.rs rows on subtraction (f, g, avals, the weakest rule set that proves f = g)
EGG_SUBTRACTION = [
    (lambda x, y, z: x - (y - z), lambda x, y, z: (x - y) + z, (F64,) * 3, "default"),
    (lambda x, y: (x + y) - x, lambda x, y: y, (F64,) * 2, "fast"),
    (lambda s: (1.0 + s) - (1.0 - s), lambda s: 2.0 * s, (F64,), "default"),
    (lambda x: x - 14.0, lambda x: x + (-14.0), (F64,), "strict"),
]


@pytest.mark.parametrize("f,g,avals,rules", EGG_SUBTRACTION, ids=[f"egg-{i}" for i in range(len(EGG_SUBTRACTION))])
def test_egg_subtraction_rows(f, g, avals, rules):
    assert prove_equal(f, g, *avals, rules=rules)
IDS = [f"{p[0]}-{i}" for i, p in enumerate(PROVES)]


@pytest.mark.parametrize("name,f,g,avals", PROVES, ids=IDS)
def test_proves(name, f, g, avals):
    assert_proves(f, g, *avals, positive=False)


@pytest.mark.parametrize("name,f,g,avals", PROVES, ids=IDS)
def test_rule_alone_proves(name, f, g, avals):
    assert prove_equal(f, g, *avals, rules=[rule_named(name)])


def test_every_rule_is_tested_and_explosive():
    rules = [r for r in all_rules() if r.category == "assoc"]
    assert {r.name for r in rules} == {p[0] for p in PROVES}
    assert all(r.explosive for r in rules)


@pytest.mark.parametrize("name", ["max", "min", "eq", "ne"])
@pytest.mark.parametrize("dtype", [float64, float32], ids=str)
def test_float_comm_is_bitwise_exact(name, dtype):
    assert_bitwise_equal(*comm(OPS[name]), dtype, dtype)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dtype", [float64, float32], ids=str)
def test_max_min_assoc_is_bitwise_exact(name, dtype):
    assert_bitwise_equal(*assoc(OPS[name]), dtype, dtype, dtype)


@pytest.mark.parametrize("name", ["and", "or", "xor"])
@pytest.mark.parametrize("dtype", [int32, bool_], ids=str)
def test_bitwise_ops_are_exact(name, dtype):
    assert_bitwise_equal(*comm(OPS[name]), dtype, dtype)
    assert_bitwise_equal(*assoc(OPS[name]), dtype, dtype, dtype)


def test_float_add_assoc_is_only_real():
    """(x+y)+z and x+(y+z) differ by rounding and by overflow of the intermediate."""
    aval = ShapedArray((2,), float64)
    args = [np.array([0.1, 1e308]), np.array([0.2, 1e308]), np.array([0.3, -1e308])]
    (lhs,), (rhs,) = (eval_jaxpr(make_jaxpr(h)(aval, aval, aval), *args) for h in assoc(jnp.add))
    assert lhs[0] != rhs[0] and lhs[1] == np.inf and rhs[1] == 1e308


def test_sixty_term_sum_stays_bounded():
    n = 60
    closed = make_jaxpr(lambda *xs: functools.reduce(jnp.add, xs))(*[F64] * n)
    start = time.perf_counter()
    optimized, report = optimize(closed, rules="default")
    assert time.perf_counter() - start < 10, report.summary()
    assert report.stop_reason in ("saturated", "iterations", "nodes", "seconds")
    assert report.rule_matches["add-assoc"] > 0 and report.rule_matches["add-comm"] > 0
    assert report.eqns_after <= n - 1
    args = [np.random.default_rng(k).uniform(-1, 1, 3) for k in range(n)]
    np.testing.assert_allclose(eval_jaxpr(optimized, *args)[0], eval_jaxpr(closed, *args)[0], rtol=1e-12)
