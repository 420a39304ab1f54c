"""Distributivity and factoring rules, egg-style: one line per equation that must (or must not) be proved,
each also by its rule alone. Exact rules are also checked bit for bit on special values."""

import numpy as np
import pytest

from eval.interpreter import eval_jaxpr
from ir import lax
from ir.core import ShapedArray
from ir.dtypes import float32, float64, int32, uint8
from ir.tracing import make_jaxpr
from rewrites.prove import prove_equal
from rewrites.rulesets import all_rules
from tests.rewrites.helpers import F64, assert_not_proves, assert_proves
from tests.rewrites.rule_checks import assert_bitwise_equal, matches, rule_named

I32 = ShapedArray((3,), int32)
F64_0 = ShapedArray((), float64)
M23, M34 = ShapedArray((2, 3), float64), ShapedArray((3, 4), float64)
F3, I3 = (F64, F64, F64), (I32, I32, I32)

# (rule, f, g, avals, rule set): the rule set proves f = g, and so does the rule alone. Factoring with an
# arbitrary factor is `unsafe` (proved under fast); with a factor known finite (here a literal) it is
# `guarded` and the default set proves it.
PROVES = [
    ("mul-add-factor-left", lambda a, b, c: a * b + a * c, lambda a, b, c: a * (b + c), F3, "fast"),
    ("mul-add-factor-left", lambda a, b, c: a * (b + c), lambda a, b, c: a * b + a * c, I3, "fast"),
    ("mul-add-factor-left", lambda a, b, c: a * b + a * c, lambda a, b, c: a * (b + c), (F64_0, F64, F64_0), "fast"),
    ("mul-add-factor-left-finite", lambda b, c: 3.0 * b + 3.0 * c, lambda b, c: 3.0 * (b + c), (F64, F64), "default"),
    ("mul-add-factor-right", lambda a, b, c: b * a + c * a, lambda a, b, c: (b + c) * a, F3, "fast"),
    ("mul-add-factor-right-finite", lambda b, c: b * 3.0 + c * 3.0, lambda b, c: (b + c) * 3.0, (F64, F64),
     "default"),
    ("mul-sub-factor-left", lambda a, b, c: a * b - a * c, lambda a, b, c: a * (b - c), F3, "fast"),
    ("mul-sub-factor-left-finite", lambda b, c: 3.0 * b - 3.0 * c, lambda b, c: 3.0 * (b - c), (F64, F64), "default"),
    ("mul-sub-factor-right", lambda a, b, c: b * a - c * a, lambda a, b, c: (b - c) * a, F3, "fast"),
    ("mul-sub-factor-right-finite", lambda b, c: b * 3.0 - c * 3.0, lambda b, c: (b - c) * 3.0, (F64, F64),
     "default"),
    ("mul-add-self-factor", lambda x, y: x * y + x, lambda x, y: x * (y + 1.0), (F64, F64), "fast"),
    ("mul-add-self-factor", lambda x, y: x * y + x, lambda x, y: x * (y + 1), (I32, I32), "fast"),
    ("mul-add-self-factor-finite", lambda y: 3.0 * y + 3.0, lambda y: 3.0 * (y + 1.0), (F64,), "default"),
    ("div-add-common", lambda x, y, z: x / z + y / z, lambda x, y, z: (x + y) / z, F3, "fast"),
    ("div-add-common-finite", lambda x, y: x / 3.0 + y / 3.0, lambda x, y: (x + y) / 3.0, (F64, F64), "default"),
    ("div-sub-common", lambda x, y, z: (x - y) / z, lambda x, y, z: x / z - y / z, F3, "fast"),
    ("div-sub-common-finite", lambda x, y: (x - y) / 3.0, lambda x, y: x / 3.0 - y / 3.0, (F64, F64), "default"),
    ("dot-add-factor-left", lambda a, b, c: a @ b + a @ c, lambda a, b, c: a @ (b + c), (M23, M34, M34), "fast"),
    ("dot-add-factor-right", lambda a, b, c: a @ c + b @ c, lambda a, b, c: (a + b) @ c, (M23, M23, M34), "fast"),
    ("neg-of-add", lambda x, y: -(x + y), lambda x, y: -x - y, (F64, F64), "default"),
    ("neg-of-mul", lambda x, y: -(x * y), lambda x, y: (-x) * y, (F64, F64), "default"),
    ("neg-of-mul", lambda x, y: (-x) * y, lambda x, y: -(x * y), (I32, I32), "default"),
    ("neg-of-div", lambda x, y: -(x / y), lambda x, y: (-x) / y, (F64, F64), "default"),
]
IDS = [f"{p[0]}-{i}" for i, p in enumerate(PROVES)]
# The guarded dot_general twins need finite matrices, which no program input is known to be: tested for
# their guard only (see test_guarded_dot_factoring_needs_finite_operands).
UNPROVABLE_HERE = {"dot-add-factor-left-finite", "dot-add-factor-right-finite"}


@pytest.mark.parametrize("name,f,g,avals,rules", PROVES, ids=IDS)
def test_proves(name, f, g, avals, rules):
    assert_proves(f, g, *avals, rules=rules, positive=False)


@pytest.mark.parametrize("name,f,g,avals,rules", PROVES, ids=IDS)
def test_rule_alone_proves(name, f, g, avals, rules):
    assert prove_equal(f, g, *avals, rules=[rule_named(name)])


def test_every_rule_is_tested():
    names = {r.name for r in all_rules() if r.category == "distrib"}
    assert names == {p[0] for p in PROVES} | UNPROVABLE_HERE


def test_guarded_dot_factoring_needs_finite_operands():
    f = lambda a, b, c: a @ b + a @ c  # noqa: E731
    assert matches("dot-add-factor-left-finite", f, M23, M34, M34) == 0
    assert_not_proves(f, lambda a, b, c: a @ (b + c), M23, M34, M34, rules="default")


def test_headline_factoring():
    """`a*b + a*c ⇒ a*(b+c)`: under fast for any a; under default only for a known finite."""
    assert_proves(lambda a, b, c: a * b + a * c, lambda a, b, c: a * (b + c), F64, F64, F64, rules="fast",
                  positive=False)
    assert_not_proves(lambda a, b, c: a * b + a * c, lambda a, b, c: a * (b + c), F64, F64, F64, rules="default")
    assert_proves(lambda b, c: 2.5 * b + 2.5 * c, lambda b, c: 2.5 * (b + c), F64, F64, positive=False)


def test_restrictions():
    # Integer division truncates: x/z + y/z is not (x+y)/z, and -(x/y) is not (-x)/y at y=0.
    assert matches("div-add-common", lambda x, y, z: lax.div(x, z) + lax.div(y, z), I32, I32, I32) == 0
    assert_not_proves(lambda x, y, z: lax.div(x, z) + lax.div(y, z), lambda x, y, z: lax.div(x + y, z),
                      I32, I32, I32)
    assert matches("neg-of-div", lambda x, y: -lax.div(x, y), I32, I32) == 0
    # dot_general does not broadcast: operands of different shapes are not summed.
    v3, m31 = ShapedArray((3,), float64), ShapedArray((3, 1), float64)
    assert matches("dot-add-factor-left", lambda a, b, c: a @ b + (a @ c)[:, 0], M23, v3, m31) == 0


def test_factoring_changes_inf_into_nan_so_it_is_unsafe():
    """a=inf, b=2, c=-1: a*b + a*c is nan, a*(b+c) is inf: why unguarded factoring is `unsafe`."""
    aval = ShapedArray((1,), float64)
    args = [np.array([np.inf]), np.array([2.0]), np.array([-1.0])]
    (lhs,), (rhs,) = (eval_jaxpr(make_jaxpr(h)(aval, aval, aval), *args)
                      for h in (lambda a, b, c: a * b + a * c, lambda a, b, c: a * (b + c)))
    assert np.isnan(lhs[0]) and rhs[0] == np.inf


@pytest.mark.parametrize("dtype", [float64, float32, int32, uint8], ids=str)
def test_neg_of_mul_is_bitwise_exact(dtype):
    assert_bitwise_equal(lambda x, y: -(x * y), lambda x, y: (-x) * y, dtype, dtype)


@pytest.mark.parametrize("dtype", [float64, float32], ids=str)
def test_neg_of_div_is_bitwise_exact(dtype):
    assert_bitwise_equal(lambda x, y: -(x / y), lambda x, y: (-x) / y, dtype, dtype)


def test_neg_of_add_is_not_exact():
    aval = ShapedArray((1,), float64)
    args = [np.array([0.0]), np.array([-0.0])]
    (lhs,), (rhs,) = (eval_jaxpr(make_jaxpr(h)(aval, aval), *args) for h in (lambda x, y: -(x + y),
                                                                              lambda x, y: -x - y))
    assert lhs[0] == rhs[0] == 0 and np.signbit(lhs[0]) != np.signbit(rhs[0])
