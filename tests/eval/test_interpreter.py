"""The interpreter: argument checking, typed errors, dropped results, the checked mode, nesting."""

import numpy as np
import pytest

import ir
from eval.interpreter import eval_jaxpr
from eval.registry import IMPLS
from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, ShapedArray, Var
from ir.dtypes import float64, int32
from ir.errors import JaxprTypeError, UnsupportedPrimitive

SIN_COS = """{ lambda ; a:f64[3]. let
    b:f64[3] = sin a
    _:f64[3] = cos a
  in (b, 2.0:f64[]) }"""


def test_runs_and_returns_arrays_for_literal_outputs():
    closed = ir.parse_jaxpr(SIN_COS)
    x = np.array([0.0, 1.0, 2.0])
    b, two = eval_jaxpr(closed, x)
    np.testing.assert_array_equal(b, np.sin(x))
    assert isinstance(two, np.ndarray) and two.dtype == np.float64 and two.shape == () and two == 2.0


def test_dropped_result_does_not_clobber_other_values():
    closed = ir.parse_jaxpr(SIN_COS)
    x = np.array([0.5, 1.5, 2.5])
    b, _ = eval_jaxpr(closed, x)
    np.testing.assert_array_equal(b, np.sin(x))


@pytest.mark.parametrize("arg,why", [
    (np.zeros(3, np.float32), "dtype"),
    (np.zeros(4), "shape"),
])
def test_wrong_argument_is_a_type_error(arg, why):
    closed = ir.parse_jaxpr(SIN_COS)
    with pytest.raises(JaxprTypeError, match=why):
        eval_jaxpr(closed, arg)


def test_wrong_argument_count():
    with pytest.raises(JaxprTypeError, match="takes 1 arguments"):
        eval_jaxpr(ir.parse_jaxpr(SIN_COS))


def test_python_scalars_are_accepted_for_scalar_inputs():
    closed = ir.parse_jaxpr("{ lambda ; a:f64[] b:i32[]. let c:f64[] = mul a a in (c, b) }")
    c, b = eval_jaxpr(closed, 3.0, 7)
    assert c == 9.0 and b.dtype == np.int32


def test_unknown_primitive_names_itself_and_the_missing_rule():
    a = Var(ShapedArray((), float64))
    b = Var(ShapedArray((), float64))
    closed = ClosedJaxpr(Jaxpr([], [a], [b], [Eqn("frobnicate", [a], [b], {})]))
    with pytest.raises(UnsupportedPrimitive, match="'frobnicate'.*NumPy evaluation"):
        eval_jaxpr(closed, 1.0)


def test_checked_mode_catches_an_implementation_with_the_wrong_dtype(monkeypatch):
    closed = ir.parse_jaxpr("{ lambda ; a:f64[2]. let b:f64[2] = neg a in (b,) }")
    monkeypatch.setitem(IMPLS, "neg", lambda x: (-x).astype(np.float32))
    from eval.interpreter import _PLANS
    _PLANS.clear()
    try:
        with pytest.raises(AssertionError, match="neg.*expected f64"):
            eval_jaxpr(closed, np.ones(2), check=True)
    finally:
        _PLANS.clear()


def test_nested_control_flow_runs_checked():
    text = """{ lambda ; a:f64[3,4]. let
    b:i64[] c:f64[3,4] = while[
      body_jaxpr={ lambda ; d:i64[] e:f64[3,4]. let
          f:i64[] = add d 1:i64[]
          g:f64[3,4] = mul e 1.1:f64[]
        in (f, g) }
      body_nconsts=0
      cond_jaxpr={ lambda ; i:i64[] j:f64[3,4]. let
          k:bool[] = lt i 5:i64[]
        in (k,) }
      cond_nconsts=0
    ] 0:i64[] a
  in (b, c) }"""
    n, c = eval_jaxpr(ir.parse_jaxpr(text), np.ones((3, 4)), check=True)
    assert n == 5 and n.dtype == np.int64
    np.testing.assert_allclose(c, np.full((3, 4), 1.1 ** 5))


def test_drop_var_binder_object():
    a = Var(ShapedArray((2,), int32))
    b, d = Var(ShapedArray((2,), int32)), DropVar(ShapedArray((2,), int32))
    jaxpr = Jaxpr([], [a], [b], [Eqn("neg", [a], [d], {}), Eqn("abs", [a], [b], {})])
    [out] = eval_jaxpr(ClosedJaxpr(jaxpr), np.array([-1, 2], np.int32))
    np.testing.assert_array_equal(out, [1, 2])


def test_one_literal_object_read_twice():
    """A decoded program may share one Literal object between operands and outputs."""
    a, b = Var(ShapedArray((), float64)), Var(ShapedArray((), float64))
    zero = ir.Literal(np.float64(0.0), ShapedArray((), float64))
    jaxpr = Jaxpr([], [a], [b, zero, zero], [Eqn("add", [a, zero], [b], {})])
    out = eval_jaxpr(ClosedJaxpr(jaxpr), 1.5)
    assert [float(o) for o in out] == [1.5, 0.0, 0.0]
