"""Select-guarded variants of guarded rules, egg-style: with no fact about x, f(g(x)) becomes a select on the
guard whose other case is nan, and the program computes the same values everywhere (negative inputs included:
`positive=False`). The category is opt-in (`accurate` and `fast` take it, `default` does not)."""

import ir.numpy as jnp
from ir import lax
from rewrites.rules import domain
from rewrites.rulesets import rules_in_set
from tests.rewrites.helpers import F32, F64
from tests.rewrites.rule_checks import check_rule, rows_cover, table_tests


def nan_like(x):
    """nan of x's dtype and shape, written as the rules build it: sqrt(-1) broadcast."""
    return lax.broadcast_in_dim(lax.sqrt(lax.full((), -1.0, x.dtype)), x.shape, ())


def where_at_least(floor, value):
    return lambda x: jnp.where(x >= floor, value(x), nan_like(x))


# (rule, f, g, avals, rule set)
PROVES = [
    ("exp-log-select", lambda x: jnp.exp(jnp.log(x)), where_at_least(0.0, lambda x: x), (F64,), "accurate"),
    ("exp-log-select", lambda x: jnp.exp(jnp.log(x)), where_at_least(0.0, lambda x: x), (F32,), "accurate"),
    ("expm1-log-select", lambda x: jnp.expm1(jnp.log(x)), where_at_least(0.0, lambda x: x - 1.0), (F64,),
     "accurate"),
    ("exp-log1p-select", lambda x: jnp.exp(jnp.log1p(x)), where_at_least(-1.0, lambda x: x + 1.0), (F64,),
     "accurate"),
    ("expm1-log1p-select", lambda x: jnp.expm1(jnp.log1p(x)), where_at_least(-1.0, lambda x: x), (F64,),
     "accurate"),
    ("logistic-logit-select", lambda x: lax.logistic(jnp.log(x / (1.0 - x))),
     lambda x: jnp.where((x >= 0.0) & (x <= 1.0), x, nan_like(x)), (F64,), "accurate"),
    ("sqrt-mul-self-select", lambda x: jnp.sqrt(x) * jnp.sqrt(x), where_at_least(0.0, lambda x: x), (F64,),
     "accurate"),
]
# (why, f, g, avals, rule set)
NOT_PROVES = [
    ("the guard's other case is nan, not x", lambda x: jnp.exp(jnp.log(x)), lambda x: x, (F64,), "accurate"),
    ("the guard is x >= 0, not x >= -1", lambda x: jnp.exp(jnp.log(x)), where_at_least(-1.0, lambda x: x), (F64,),
     "accurate"),
    ("default leaves them out (opt-in: rewrites.rulesets)", lambda x: jnp.exp(jnp.log(x)),
     where_at_least(0.0, lambda x: x), (F64,), "default"),
]

test_proves, test_not_proves = table_tests(PROVES, NOT_PROVES)


def test_negative_inputs_give_nan_on_both_sides():
    for name, f, g, avals, rules in PROVES:
        check_rule(name, f, g, avals, rules, positive=False)


def test_every_rule_has_a_row():
    assert not rows_cover(domain, PROVES)


def test_only_accurate_and_fast_take_them():
    names = {r.name for r in domain.R.rules}
    for rule_set, takes in (("strict", False), ("default", False), ("accurate", True), ("fast", True)):
        assert (names <= {r.name for r in rules_in_set(rule_set)}) is takes, rule_set
        assert takes or not names & {r.name for r in rules_in_set(rule_set)}, rule_set
