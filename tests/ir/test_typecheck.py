"""typecheck names the equation, primitive and avals; fingerprints are canonical and deterministic."""

import subprocess
import sys

import numpy as np
import pytest

import ir
from ir.core import ClosedJaxpr, Eqn, Jaxpr, ShapedArray, Var
from ir.dtypes import float32, float64
from ir.errors import JaxprTypeError, UnsupportedPrimitive
from ir.typecheck import fingerprint, typecheck

F3 = ShapedArray((3,), float64)


def test_wrong_result_type_names_equation_and_avals():
    a, b, c = Var(F3), Var(F3), Var(ShapedArray((3,), float32))
    j = Jaxpr([], [a], [c], [Eqn("sin", [a], [b], {}), Eqn("cos", [b], [c], {})])
    with pytest.raises(JaxprTypeError) as e:
        typecheck(j)
    assert e.value.eqn_index == 1 and e.value.primitive == "cos"
    assert "f64[3]" in str(e.value) and "f32[3]" in str(e.value)


def test_use_before_bind():
    a, b, c = Var(F3), Var(F3), Var(F3)
    j = Jaxpr([], [a], [c], [Eqn("sin", [b], [c], {}), Eqn("cos", [a], [b], {})])
    with pytest.raises(JaxprTypeError, match="equation 0 .*before it is bound"):
        typecheck(j)


def test_bound_twice():
    a, b = Var(F3), Var(F3)
    j = Jaxpr([], [a], [b], [Eqn("sin", [a], [b], {}), Eqn("cos", [a], [b], {})])
    with pytest.raises(JaxprTypeError, match="bound twice"):
        typecheck(j)


def test_malformed_params_are_type_errors():
    a, b = Var(ShapedArray((3, 4), float64)), Var(ShapedArray((4, 3), float64))
    j = Jaxpr([], [a], [b], [Eqn("transpose", [a], [b], {"permutation": (0, 7)})])
    with pytest.raises(JaxprTypeError, match="equation 0 \\(transpose\\)"):
        typecheck(j)


def test_primitive_without_shape_rule_is_refused():
    a, b, c = Var(F3), Var(F3), Var(ShapedArray((9,), float32))
    j = Jaxpr([], [a], [c], [Eqn("sin", [a], [b], {}), Eqn("my_custom_op", [b], [c], {})])
    with pytest.raises(UnsupportedPrimitive, match="'my_custom_op' has no shape/dtype rule.*ir/shapes"):
        typecheck(j)


def test_primitive_without_shape_rule_is_refused_inside_a_nested_jaxpr():
    x, y = Var(F3), Var(F3)
    body = ClosedJaxpr(Jaxpr([], [x], [y], [Eqn("my_custom_op", [x], [y], {})]))
    a, b = Var(F3), Var(F3)
    with pytest.raises(UnsupportedPrimitive, match="my_custom_op"):
        typecheck(Jaxpr([], [a], [b], [Eqn("jit", [a], [b], {"jaxpr": body, "name": "f"})]))


def test_consts_must_match_constvars():
    c, a, b = Var(F3), Var(F3), Var(F3)
    j = Jaxpr([c], [a], [b], [Eqn("add", [c, a], [b], {})])
    typecheck(ClosedJaxpr(j, [np.zeros(3)]))
    with pytest.raises(JaxprTypeError, match="constant"):
        typecheck(ClosedJaxpr(j, [np.zeros(4)]))


TEXT = "{ lambda ; a:f64[3]. let b:f64[3] = sin a c:f64[3] = mul b 2.0:f64[] in (c,) }"


def test_fingerprint_ignores_variable_identity_and_depends_on_constants():
    one, two = ir.parse_jaxpr(TEXT), ir.parse_jaxpr(TEXT)
    assert fingerprint(one) == fingerprint(two)
    other = ir.parse_jaxpr(TEXT.replace("2.0", "3.0"))
    assert fingerprint(one) != fingerprint(other)
    c, a, b = Var(F3), Var(F3), Var(F3)
    j = Jaxpr([c], [a], [b], [Eqn("add", [c, a], [b], {})])
    assert fingerprint(ClosedJaxpr(j, [np.zeros(3)])) != fingerprint(ClosedJaxpr(j, [np.ones(3)]))


def test_fingerprint_is_the_same_across_processes():
    code = f"import ir; from ir.typecheck import fingerprint; print(fingerprint(ir.parse_jaxpr({TEXT!r})))"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout for seed in (1, 2)}
    assert outs == {fingerprint(ir.parse_jaxpr(TEXT)) + "\n"}
