"""Arithmetic identities, egg-style: one line per equation that must (or must not) be proved.

Each PROVES row names the rule it is about; `check_rule` proves the equation with the row's rule set,
asserts that the rule fired, compares both programs on random inputs, and checks the rule's class on
special inputs (see `tests.rewrites.rule_checks`).
"""

import numpy as np
import pytest

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir import lax, make_jaxpr
from ir.core import ShapedArray
from ir.dtypes import from_numpy
from rewrites.engine import count_eqns, optimize
from tests.rewrites.helpers import F32, F64, assert_not_proves
from tests.rewrites.rule_checks import (
    F2,
    F3,
    I32,
    assert_bitwise_equal,
    check_rule,
    fin,
    pos,
    rows_cover,
    table_tests,
)

I2 = (I32, I32)
TWO = np.int32(2)

# (rule, f, g, avals, rule set)
PROVES = [
    ("neg-neg", lambda x: lax.neg(lax.neg(x)), lambda x: x, (F64,), "default"),
    ("mul-one", lambda x: x * 1.0, lambda x: x, (F64,), "default"),
    ("mul-one", lambda x: x * np.int32(1), lambda x: x, (I32,), "default"),
    ("mul-one-left", lambda x: 1.0 * x, lambda x: x, (F64,), "default"),
    ("div-one", lambda x: x / 1.0, lambda x: x, (F64,), "default"),
    ("add-zero", lambda x: x + 0.0, lambda x: x, (F64,), "default"),
    ("zero-add", lambda x: 0.0 + x, lambda x: x, (F64,), "default"),
    ("add-neg-zero", lambda x: x + lax.neg(np.float64(0.0)), lambda x: x, (F64,), "strict"),
    ("add-neg-zero", lambda x: x + lax.neg(np.float32(0.0)), lambda x: x, (F32,), "strict"),
    ("neg-zero-add", lambda x: lax.add(lax.neg(np.float64(0.0)), x), lambda x: x, (F64,), "strict"),
    ("sub-zero", lambda x: x - 0.0, lambda x: x, (F64,), "default"),
    ("zero-sub", lambda x: 0.0 - x, lambda x: -x, (F64,), "default"),
    ("mul-ones", lambda x: x * jnp.ones_like(x), lambda x: x, (F64,), "default"),
    ("add-zeros", lambda x: x + jnp.zeros_like(x), lambda x: x, (F64,), "default"),
    ("div-ones", lambda x: x / jnp.ones_like(x), lambda x: x, (F64,), "strict"),
    ("mul-zero", lambda x: x * 0.0, jnp.zeros_like, (F64,), "fast"),
    ("sub-self", lambda x: x - x, lambda x: x * 0.0, (F64,), "default"),
    ("mul-neg-one", lambda x: x * -1.0, lambda x: -x, (F64,), "default"),
    ("mul-neg-one", lambda x: x * np.int32(-1), lambda x: -x, (I32,), "default"),
    ("neg-one-mul", lambda x: -1.0 * x, lambda x: -x, (F64,), "default"),
    ("div-neg-one", lambda x: x / -1.0, lambda x: -x, (F64,), "default"),
    ("div-neg-one", lambda x: lax.div(x, np.int32(-1)), lambda x: -x, (I32,), "default"),
    ("neg-mul-neg", lambda x, y: (-x) * (-y), lambda x, y: x * y, F2, "default"),
    ("neg-mul", lambda x, y: (-x) * y, lambda x, y: -(x * y), F2, "default"),
    ("neg-mul", lambda x, y: (-x) * y, lambda x, y: -(x * y), I2, "default"),
    ("neg-div-neg", lambda x, y: (-x) / (-y), lambda x, y: x / y, F2, "strict"),
    ("neg-div", lambda x, y: (-x) / y, lambda x, y: -(x / y), F2, "default"),
    ("div-neg", lambda x, y: x / (-y), lambda x, y: -(x / y), F2, "default"),
    ("sub-neg", lambda x, y: x - (-y), lambda x, y: x + y, F2, "default"),
    ("add-neg", lambda x, y: x + (-y), lambda x, y: x - y, F2, "default"),
    ("neg-add", lambda x, y: (-x) + y, lambda x, y: y - x, F2, "default"),
    ("neg-sub", lambda x, y: -(x - y), lambda x, y: y - x, F2, "default"),
    ("abs-abs", lambda x: jnp.abs(jnp.abs(x)), jnp.abs, (F64,), "default"),
    ("abs-neg", lambda x: jnp.abs(-x), jnp.abs, (F64,), "default"),
    ("abs-neg", lambda x: jnp.abs(-x), jnp.abs, (I32,), "default"),
    ("abs-mul", lambda x, y: jnp.abs(x * y), lambda x, y: jnp.abs(x) * jnp.abs(y), F2, "default"),
    ("abs-div", lambda x, y: jnp.abs(x / y), lambda x, y: jnp.abs(x) / jnp.abs(y), F2, "default"),
    ("abs-mul-merge", lambda x, y: jnp.abs(x) * jnp.abs(y), lambda x, y: jnp.abs(x * y), F2, "strict"),
    ("abs-div-merge", lambda x, y: jnp.abs(x) / jnp.abs(y), lambda x, y: jnp.abs(x / y), F2, "strict"),
    ("abs-mul-self", lambda x: jnp.abs(x) * jnp.abs(x), lambda x: x * x, (F64,), "strict"),
    ("abs-square", lambda x: jnp.abs(x * x), lambda x: x * x, (F64,), "strict"),
    ("abs-of-nonneg", lambda x: jnp.abs(jnp.exp(x)), jnp.exp, (F64,), "default"),
    ("sign-sign", lambda x: jnp.sign(jnp.sign(x)), jnp.sign, (F64,), "default"),
    ("sign-sign", lambda x: jnp.sign(jnp.sign(x)), jnp.sign, (I32,), "default"),
    ("sign-neg", lambda x: jnp.sign(-x), lambda x: -jnp.sign(x), (F64,), "default"),
    ("abs-times-sign", lambda x: jnp.abs(x) * jnp.sign(x), lambda x: x, (F64,), "default"),
    ("div-self", lambda x: pos(x) / pos(x), jnp.ones_like, (F64,), "default"),
    ("div-self-any", lambda x: x / x, jnp.ones_like, (F64,), "fast"),
    ("div-abs", lambda x: x / jnp.abs(x), jnp.sign, (F64,), "fast"),
    ("div-abs-finite", lambda x: -pos(x) / jnp.abs(-pos(x)), lambda x: jnp.sign(-pos(x)), (F64,), "default"),
    ("zero-div", lambda x: 0.0 / pos(x), jnp.zeros_like, (F64,), "default"),
    ("mul-div-cancel", lambda x, y: (x * pos(y)) / pos(y), lambda x, y: x, F2, "default"),
    ("div-mul-cancel", lambda x, y: (x / pos(y)) * pos(y), lambda x, y: x, F2, "default"),
    ("add-sub-cancel", lambda x, y: (x + fin(y)) - fin(y), lambda x, y: x, F2, "default"),
    ("sub-add-cancel", lambda x, y: (x - fin(y)) + fin(y), lambda x, y: x, F2, "default"),
    ("add-sub-cancel-any", lambda x, y: (x + y) - y, lambda x, y: x, F2, "fast"),
    ("sub-add-cancel-any", lambda x, y: (x - y) + y, lambda x, y: x, F2, "fast"),
    ("mul-recip", lambda x, y: x * (1.0 / y), lambda x, y: x / y, F2, "default"),
    ("div-div-right", lambda x, y, z: x / (y / z), lambda x, y, z: (x * z) / y, F3, "default"),
    ("div-div", lambda x, y, z: (x / y) / z, lambda x, y, z: x / (y * z), F3, "default"),
    ("add-scaled-self", lambda x: x + 3.0 * x, lambda x: 4.0 * x, (F64,), "default"),
    ("add-scaled-self", lambda x: x * 3.0 + x, lambda x: 4.0 * x, (F32,), "default"),
    ("add-scaled-scaled", lambda x: 2.0 * x + 0.5 * x, lambda x: 2.5 * x, (F64,), "default"),
    ("add-scaled-scaled", lambda x: -2.0 * x + (-3.0) * x, lambda x: -5.0 * x, (F64,), "default"),
    ("div-scaled", lambda x, y: (2.0 * x) / (4.0 * y), lambda x, y: 0.5 * (x / y), F2, "default"),
    ("sub-literal-as-add", lambda x: x - 14.0, lambda x: x + (-14.0), (F64,), "strict"),
    ("add-literal-as-sub", lambda x: x + 14.0, lambda x: x - (-14.0), (F64,), "strict"),
]

# (what must not be proved, f, g, avals, rule set)
NOT_PROVES = [
    ("mul-zero is unsafe", lambda x: x * 0.0, jnp.zeros_like, (F64,), "default"),
    ("x-x = 0 needs the unsafe mul-zero", lambda x: x - x, jnp.zeros_like, (F64,), "default"),
    ("add-zero is not exact", lambda x: x + 0.0, lambda x: x, (F64,), "strict"),
    ("x/x needs x finite and nonzero", lambda x: x / x, jnp.ones_like, (F64,), "default"),
    ("x/x needs x finite", lambda x: (x * x + 1.0) / (x * x + 1.0), jnp.ones_like, (F64,), "default"),
    ("x/|x| needs x finite and nonzero", lambda x: x / jnp.abs(x), jnp.sign, (F64,), "default"),
    ("x - (-0.0) is not x", lambda x: x - (-0.0), lambda x: x, (F64,), "strict"),
    ("x + a*x needs a > 0", lambda x: x + (-3.0) * x, lambda x: -2.0 * x, (F64,), "default"),
    ("a*x + b*x needs one sign", lambda x: 2.0 * x + (-3.0) * x, lambda x: -x, (F64,), "default"),
    ("0/x needs x nonzero", lambda x: 0.0 / fin(x), jnp.zeros_like, (F64,), "fast"),
    ("(x*y)/y needs y finite", lambda x, y: (x * y) / y, lambda x, y: x, F2, "fast"),
    ("(x+y)-y needs y finite", lambda x, y: (x + y) - y, lambda x, y: x, F2, "default"),
    ("|x| -> x needs x >= 0", jnp.abs, lambda x: x, (F64,), "fast"),
    ("integer division by -y wraps", lambda x, y: lax.div(x, -y), lambda x, y: -lax.div(x, y), I2, "fast"),
    ("integer |x*y| wraps", lambda x, y: jnp.abs(x * y), lambda x, y: jnp.abs(x) * jnp.abs(y), I2, "fast"),
    ("-(x-y) is not exact", lambda x, y: -(x - y), lambda x, y: y - x, F2, "strict"),
    ("integer (x/2)*2 truncates", lambda x: lax.div(x, TWO) * TWO, lambda x: x, (I32,), "fast"),
    ("integer (x*2)/2 wraps", lambda x: lax.div(x * TWO, TWO), lambda x: x, (I32,), "fast"),
]


test_proves, test_not_proves = table_tests(PROVES, NOT_PROVES)


def test_mul_zero_only_in_fast():
    check_rule("mul-zero", lambda x: x * 0.0, jnp.zeros_like, (F32,), "fast")


@pytest.mark.parametrize("minus_zero", [np.float64(-0.0), np.float32(-0.0)], ids=str)
def test_a_negative_zero_literal_is_neg_zero_to_the_rules(minus_zero):
    # the encoder holds a -0.0 literal as a constant; `rewrites.analyses.signed_zero` unions it with neg(0.0)
    aval = ShapedArray((3,), from_numpy(minus_zero.dtype))
    program = make_jaxpr(lambda x: x + minus_zero)(aval)
    optimized, _ = optimize(program, rules="strict")
    assert count_eqns(optimized) == 0, optimized
    x = np.array([-0.0, np.inf, np.nan], dtype=minus_zero.dtype)
    assert_bitwise_equal(lambda x: x + minus_zero, lambda x: x, aval.dtype)
    assert np.array_equal(eval_jaxpr(optimized, x)[0], x, equal_nan=True)


def test_add_is_not_div():
    assert_not_proves(lambda x, y: x + y, lambda x, y: x / y, F64, F64)


def test_every_rule_has_a_row():
    from rewrites.rules import arith

    assert not rows_cover(arith, PROVES)
