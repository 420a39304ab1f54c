"""The numerically stable forms (rewrites/rules/stability.py): each rule proves its equation under `accurate` (the
set that takes them: `default` does not), and alone; tests/rewrites/test_accuracy_cost.py checks that the
accuracy-aware cost picks these forms."""

import math

import pytest

import ir.numpy as jnp
from ir import lax
from rewrites.prove import prove_equal
from rewrites.rulesets import all_rules, rules_in_set
from tests.rewrites.helpers import F64
from tests.rewrites.rule_checks import F2, rule_named, table_tests

exp, log, logistic = jnp.exp, jnp.log, lax.logistic


def softplus(x):
    return jnp.maximum(x, 0.0) + jnp.log1p(exp(-jnp.abs(x)))


def logsumexp(x):
    m = jnp.max(x)
    shift = lax.select_n(lax.is_finite(m), 0.0, m)
    return shift + jnp.log1p(jnp.sum(exp(x - lax.broadcast_in_dim(shift, x.shape, ()))) - 1.0)


def logaddexp(x, y):
    return lax.select_n(lax.eq(x, y), jnp.maximum(x, y) + jnp.log1p(exp(-jnp.abs(x - y))), x + math.log(2.0))


# (rule, f, g, avals, rule set)
PROVES = [
    ("log-one-minus", lambda x: log(1.0 - x), lambda x: jnp.log1p(-x), (F64,), "accurate"),
    ("one-minus-exp", lambda x: 1.0 - exp(x), lambda x: -jnp.expm1(x), (F64,), "accurate"),
    ("one-minus-logistic", lambda x: 1.0 - logistic(x), lambda x: logistic(-x), (F64,), "accurate"),
    ("recip-one-plus-exp", lambda x: 1.0 / (1.0 + exp(x)), lambda x: logistic(-x), (F64,), "accurate"),
    ("softplus-stable", lambda x: jnp.log1p(exp(x)), softplus, (F64,), "accurate"),
    ("log-logistic", lambda x: log(logistic(x)), lambda x: -softplus(-x), (F64,), "accurate"),
    ("logaddexp", lambda x, y: log(exp(x) + exp(y)), logaddexp, F2, "accurate"),
    ("logsumexp", lambda x: log(jnp.sum(exp(x))), logsumexp, (F64,), "accurate"),
    ("log-exp-div", lambda x: log(exp(x) / jnp.sum(exp(x))), lambda x: x - log(jnp.sum(exp(x))), (F64,),
     "accurate"),
    ("one-minus-erf", lambda x: 1.0 - lax.erf(x), lax.erfc, (F64,), "accurate"),
    ("one-minus-erfc", lambda x: 1.0 - lax.erfc(x), lax.erf, (F64,), "accurate"),
]

# (what must not be proved, f, g, avals, rule set)
NOT_PROVES = [
    ("log(1+x) is not log1p(-x)", lambda x: log(1.0 + x), lambda x: jnp.log1p(-x), (F64,), "fast"),
    ("1-logistic(x) is not logistic(x)", lambda x: 1.0 - logistic(x), logistic, (F64,), "fast"),
    ("log(exp(x)/y) needs y >= 0", lambda x, y: log(exp(x) / y), lambda x, y: x - log(y), F2, "accurate"),
]

test_proves, test_not_proves = table_tests(PROVES, NOT_PROVES)


@pytest.mark.parametrize("name,f,g,avals,rules", PROVES, ids=[p[0] for p in PROVES])
def test_rule_alone_proves(name, f, g, avals, rules):
    assert prove_equal(f, g, *avals, rules=[rule_named(name)])


def test_every_rule_is_tested():
    assert {r.name for r in all_rules() if r.category == "stability"} == {p[0] for p in PROVES}


def test_only_accurate_and_fast_take_the_stable_forms():
    stability = {r.name for r in all_rules() if r.category == "stability"}
    for name, takes in (("strict", False), ("default", False), ("accurate", True), ("fast", True)):
        assert (stability <= {r.name for r in rules_in_set(name)}) is takes, name
    domain = {r.name for r in all_rules() if r.category == "domain"}  # the select-guarded forms, also opt-in
    assert {r.name for r in rules_in_set("accurate")} == {r.name for r in rules_in_set("default")} | stability | domain
