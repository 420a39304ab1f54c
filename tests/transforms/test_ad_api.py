"""The AD API: grad, value_and_grad, jvp, vjp, jacfwd, jacrev, hessian; composition with each other,
with jit and with make_jaxpr; symbolic zeros; errors."""

import numpy as np
import pytest

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir import make_jaxpr
from ir.errors import UnsupportedPrimitive
from ir.typecheck import typecheck
from transforms import grad, hessian, jacfwd, jacrev, jit, jvp, value_and_grad, vjp
from transforms.ad.programs import GradTypeError, jvp_program


def f_scalar(x):
    return jnp.sin(x) * x


def df_scalar(x):
    return np.cos(x) * x + np.sin(x)


def d2f_scalar(x):
    return -np.sin(x) * x + 2 * np.cos(x)


def test_grad_of_a_scalar_function_matches_the_derivative():
    for x in (0.3, -1.7, 2.5):
        assert grad(f_scalar)(x) == pytest.approx(df_scalar(x), rel=1e-14)


def test_grad_grad_is_the_second_derivative():
    assert grad(grad(f_scalar))(0.7) == pytest.approx(d2f_scalar(0.7), rel=1e-13)
    third = grad(grad(grad(f_scalar)))(0.7)
    assert third == pytest.approx(-np.cos(0.7) * 0.7 - 3 * np.sin(0.7), rel=1e-12)


def test_value_and_grad_argnums_and_pytrees():
    def loss(params, x):
        return jnp.sum(jnp.sin(params["w"] * x) + params["b"] * params["b"])

    params = {"w": np.array([0.5, -1.0, 2.0]), "b": np.array(1.5)}
    x = np.array([1.0, 2.0, 3.0])
    value, g = value_and_grad(loss)(params, x)
    # the scalar b is broadcast over the 3 elements: 3 b^2, derivative 6 b
    assert value == pytest.approx(np.sum(np.sin(params["w"] * x)) + 3 * 2.25)
    np.testing.assert_allclose(g["w"], np.cos(params["w"] * x) * x, rtol=1e-14)
    np.testing.assert_allclose(g["b"], 6 * params["b"], rtol=1e-14)
    gw, gx = grad(loss, argnums=(0, 1))(params, x)
    np.testing.assert_allclose(gx, np.cos(params["w"] * x) * params["w"], rtol=1e-14)
    np.testing.assert_allclose(gw["w"], g["w"])


def test_has_aux_returns_the_aux_untouched():
    g, aux = grad(lambda x: (jnp.sin(x) * x, jnp.cos(x)), has_aux=True)(0.4)
    assert g == pytest.approx(df_scalar(0.4))
    assert aux == pytest.approx(np.cos(0.4))


def test_jvp_and_vjp_agree_by_transposition():
    def f(x, y):
        return jnp.sin(x) * y, x * x

    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, -2.0, 0.5])
    u = (np.array([1.0, 0.5, -1.0]), np.array([0.3, 0.1, 0.2]))
    out, tangents = jvp(f, (x, y), u)
    np.testing.assert_allclose(out[0], np.sin(x) * y)
    value, pullback = vjp(f, x, y)
    v = (np.array([0.2, -0.4, 1.0]), np.array([1.5, 0.0, 2.0]))
    cts = pullback(v)
    lhs = sum(np.vdot(a, b) for a, b in zip(v, tangents, strict=True))
    rhs = sum(np.vdot(a, b) for a, b in zip(cts, u, strict=True))
    assert lhs == pytest.approx(rhs, rel=1e-13)


def test_jit_of_grad_and_make_jaxpr_of_grad():
    x = 1.3
    assert jit(grad(f_scalar))(x) == pytest.approx(df_scalar(x), rel=1e-14)
    closed = make_jaxpr(grad(f_scalar))(x)
    typecheck(closed)
    assert {e.primitive for e in closed.jaxpr.eqns} <= {"sin", "cos", "mul", "add"}
    [got] = eval_jaxpr(closed, np.float64(x))
    assert got == pytest.approx(df_scalar(x), rel=1e-14)


def test_grad_of_a_function_closing_over_an_outer_tracer():
    # d/dx [ d/dy (x * sin(y)) at y=x ] = d/dx [x cos x] = cos x - x sin x
    outer = grad(lambda x: grad(lambda y: x * jnp.sin(y))(x))
    assert outer(0.9) == pytest.approx(np.cos(0.9) - 0.9 * np.sin(0.9), rel=1e-13)


def test_jacobians_and_hessian():
    def f(x):
        return jnp.sin(x) * x

    x = np.array([0.5, -1.0, 2.0])
    expected = np.diag(df_scalar(x))
    np.testing.assert_allclose(jacfwd(f)(x), expected, rtol=1e-14)
    np.testing.assert_allclose(jacrev(f)(x), expected, rtol=1e-14)
    h = hessian(lambda x: jnp.sum(jnp.sin(x) * x))(x)
    np.testing.assert_allclose(h, np.diag(d2f_scalar(x)), rtol=1e-13, atol=1e-15)


def test_symbolic_zero_tangent_is_not_nan_through_inf():
    # y's tangent is a symbolic zero: d/dx (x + y * inf) = 1, not 0 * inf = nan.
    closed = make_jaxpr(lambda x, y: x + y * np.inf)(np.float64(1.0), np.float64(2.0))
    program, _ = jvp_program(closed, [0])
    _, tangent = eval_jaxpr(program, np.float64(1.0), np.float64(2.0), np.float64(1.0))
    assert tangent == 1.0


def test_errors_name_the_problem():
    with pytest.raises(GradTypeError, match="scalar"):
        grad(lambda x: jnp.sin(x))(np.ones(3))
    with pytest.raises(GradTypeError, match="int"):
        grad(lambda x: x * x)(np.int32(3))
    with pytest.raises(UnsupportedPrimitive, match="nextafter"):
        grad(lambda x: jnp.nextafter(x, 2.0))(1.0)


def test_gradient_program_is_byte_identical_across_processes(tmp_path):
    import subprocess
    import sys

    from eval.oracle import load_fixtures
    from tests.oracle_paths import ORACLE

    [case] = [c for c in load_fixtures([ORACLE], ["programs"]) if c.id == "program/layernorm"]
    src = tmp_path / "p.jaxpr"
    src.write_text(case.jaxpr_text)
    texts = {subprocess.run([sys.executable, "-m", "transforms.cli", "grad", str(src)], capture_output=True,
                            text=True, check=True, env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout
             for seed in ("1", "2")}
    assert len(texts) == 1 and "reduce_sum" in texts.pop()
