"""Custom derivative rules by name (ir/custom_rules.py, transforms/ad/custom.py): AD uses a registered
rule, not the body, in forward and reverse mode and at second order (JAX's semantics); the fixtures whose
rules are Python functions pass once those functions are registered; the decorators stage what JAX
stages."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

from eval.oracle import load_fixtures, run_conformance
from ir import custom_rules, make_jaxpr
from ir import numpy as jnp
from tests.oracle_paths import ORACLE
from tests.transforms.ad_helpers import check_transpose
from transforms.ad.api import grad, jvp

CUSTOM_RULES = Path(__file__).resolve().parents[1] / "oracle_custom_rules.py"


@pytest.fixture(autouse=True)
def _forget_rules():
    with custom_rules.scoped():
        yield


def test_the_fixtures_pass_with_their_rules_registered():
    from transforms.checks import register_checks

    register_checks()
    runpy.run_path(str(CUSTOM_RULES))
    ids = {"program/custom_vjp", "program/newton_sqrt_while", "custom_vjp/user_defined/f64[3,4]"}
    cases = [c for c in load_fixtures([ORACLE], ["control_flow", "programs"]) if c.id in ids]
    # the checks the text alone cannot pass (tests/transforms/test_known_gaps.py); the others run in the
    # family tests
    checks = ["vjp", "grad", "hessian", "vmap_grad", "grad_grad"]
    outcomes = run_conformance(cases, checks)
    assert {o.case for o in outcomes} == ids
    assert all(o.status == "passed" for o in outcomes), [o for o in outcomes if o.status != "passed"]
    assert len(outcomes) == 10


def _sin_with_rule(tangent):
    """sin with the JVP rule (x, t) -> tangent(x, t)."""
    @custom_rules.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), tangent(x, t)
    return f


def _odd_rule_function():
    """sin with a rule that is not its derivative: 2 cos(x) t. AD must follow the rule."""
    return _sin_with_rule(lambda x, t: 2.0 * jnp.cos(x) * t)


def test_forward_and_reverse_mode_follow_the_jvp_rule():
    f = _odd_rule_function()
    x = np.array([0.3, -1.2, 2.0])
    _, tangent = jvp(f, (x,), (np.ones(3),))
    np.testing.assert_allclose(tangent, 2 * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(grad(lambda v: jnp.sum(f(v)))(x), 2 * np.cos(x), rtol=1e-12)


def test_second_order_differentiates_the_rule():
    """JAX linearizes the rule and transposes it; the result is a program in x that differentiates again:
    d/dx [2 cos x] = -2 sin x (the body's second derivative would be -sin x)."""
    f = _odd_rule_function()
    x = np.array([0.3, -1.2, 2.0])
    second = grad(lambda v: jnp.sum(grad(lambda w: jnp.sum(f(w)))(v)))(x)
    np.testing.assert_allclose(second, -2 * np.sin(x), rtol=1e-12)


def test_the_transposed_rule_satisfies_the_transpose_identity():
    @custom_rules.custom_jvp
    def g(x, y):
        return x * jnp.sum(y)

    @g.defjvp
    def g_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return g(x, y), jnp.cos(x) * tx * jnp.sum(y) + x * jnp.sum(ty * y)

    args = [np.array([0.5, -1.0, 2.0]), np.array([1.0, 3.0])]
    closed = make_jaxpr(g)(*args)
    assert [e.primitive for e in closed.jaxpr.eqns] == ["custom_jvp_call"]
    check_transpose(closed, args)


def test_custom_vjp_uses_fwd_and_bwd_and_differentiates_them_again():
    @custom_rules.custom_vjp
    def h(x):
        return jnp.sin(x)

    def h_fwd(x):
        return jnp.sin(x), jnp.cos(x)

    def h_bwd(cos_x, g):
        return (10.0 * cos_x * g,)

    h.defvjp(h_fwd, h_bwd)
    x = np.array([0.1, 1.0, -2.5])
    first = grad(lambda v: jnp.sum(h(v)))
    np.testing.assert_allclose(first(x), 10 * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(grad(lambda v: jnp.sum(first(v)))(x), -10 * np.sin(x), rtol=1e-12)


def test_a_custom_vjp_without_rules_names_its_bwd():
    from ir.errors import UnsupportedPrimitive
    from ir.text import parse_jaxpr
    from transforms.ad.programs import grad_program

    [case] = [c for c in load_fixtures([ORACLE], ["programs"]) if c.id == "program/custom_vjp"]
    with pytest.raises(UnsupportedPrimitive, match="_clip_gradient_bwd"):
        grad_program(parse_jaxpr(case.jaxpr_text), [0])


def test_a_rule_of_the_wrong_shape_is_a_type_error():
    f = _sin_with_rule(lambda x, t: jnp.sum(t))
    with pytest.raises(TypeError, match="tangent output 0 is f64\\[\\], expected f64\\[3\\]"):
        jvp(f, (np.ones(3),), (np.ones(3),))


def test_the_registry_lists_what_is_registered():
    before = set(custom_rules.registered())  # modules imported earlier (ir.nn, ...) register their own rules
    runpy.run_path(str(CUSTOM_RULES))
    added = [rule for rule in custom_rules.registered() if rule not in before]
    assert added == [("jvp", "_newton_sqrt_jvp"), ("vjp", "_clip_gradient_fwd _clip_gradient_bwd")]
