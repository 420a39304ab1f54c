"""AD rules of unary elementwise primitives and dtype conversions (transforms/ad/rules/unary.py):
finite differences and the transpose identity per primitive, and the `unary` and `dtype` oracle
families (every case once per run: the JVP check on half of them, the VJP check on the other half;
`eqjax conformance --check jvp,vjp --family unary,dtype` runs both checks on every case)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import strategies as st

import ir.lax as lax
from eval.oracle import load_fixtures
from ir import make_jaxpr
from ir.primitives import NO_DERIVATIVE_IN_JAX, PRIMITIVES
from ir.tracing import bind
from tests.oracle_paths import ORACLE
from tests.transforms.ad_helpers import (
    Dom,
    Spec,
    assert_oracle,
    jvp_eval,
    program_of,
    spec_test,
    vjp_eval,
)
from transforms.ad.rule import JVP, VJP, ZERO_DERIVATIVE
from transforms.ad.rules import unary

SEED = st.integers(0, 2**31 - 1)
M34 = (3, 4)


@dataclass(frozen=True)
class CDom(Dom):
    """A complex domain: real and imaginary parts each uniform in [low, high)."""

    dtype: str = "complex128"

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        parts = rng.uniform(self.low, self.high, size=(2, *self.shape))
        return (parts[0] + 1j * parts[1]).astype(self.dtype)


def _unary(name: str, low: float = -2.0, high: float = 2.0, dom=Dom, **kw) -> Spec:
    return Spec(f"{name}-{'c128' if dom is CDom else 'f64'}", lambda x: bind(name, x), [dom(M34, low, high)], **kw)


HOLOMORPHIC = ("neg", "sin", "cos", "tan", "sinh", "cosh", "tanh", "atan", "asinh", "exp", "exp2", "expm1",
               "logistic", "square", "asin", "acos", "atanh", "acosh", "log", "log1p", "sqrt", "rsqrt")
AWAY_FROM_ZERO = (-1.7, -1.1, -0.6, 0.3, 0.8, 1.4)  # the derivative jumps at 0

SPECS = [
    *(_unary(name) for name in ("neg", "sin", "cos", "atan", "sinh", "cosh", "tanh", "asinh", "exp", "exp2",
                                "expm1", "logistic", "square", "erf", "erfc", "bessel_i1e")),
    _unary("tan", -1.2, 1.2),
    *(_unary(name, -0.9, 0.9) for name in ("asin", "acos", "atanh", "erf_inv")),
    _unary("acosh", 1.1, 3.0),
    _unary("log1p", -0.9, 2.0),
    *(_unary(name, 0.1, 3.0) for name in ("log", "sqrt", "rsqrt", "cbrt", "bessel_i0e")),
    *(_unary(name, 0.2, 4.0) for name in ("lgamma", "digamma")),
    Spec("cbrt-negative", lambda x: lax.cbrt(x), [Dom(M34, -3.0, -0.1)]),
    Spec("abs-f64", lambda x: lax.abs(x), [Dom(M34, values=AWAY_FROM_ZERO)]),
    # zero derivative: finite differences are 0 away from the jumps (drawn from a grid between them)
    *(Spec(f"{name}-f64", lambda x, name=name: bind(name, x), [Dom(M34, values=(-1.7, -0.6, 0.3, 1.4))])
      for name in ("sign", "floor", "ceil", "is_finite")),
    *(Spec(f"round-{m}", lambda x, m=m: lax.round(x, m), [Dom(M34, values=(-1.7, -0.6, 0.3, 1.4))]) for m in (0, 1)),
    *(Spec(f"integer_pow-{y}", lambda x, y=y: lax.integer_pow(x, y), [Dom(M34, 0.5, 2.0)])
      for y in (-2, -1, 0, 1, 2, 3)),
    Spec("integer_pow-3-c128", lambda x: lax.integer_pow(x, 3), [CDom(M34, -1.0, 1.0)]),
    # complex operands: the holomorphic ops in one program (their forms are the real ones, shared with
    # the rows above), then the parts, the modulus and conjugation, whose transposes are JAX's
    Spec("holomorphic-c128", lambda x: tuple(bind(name, x) for name in HOLOMORPHIC), [CDom(M34, 0.2, 0.8)]),
    *(_unary(name, -1.0, 1.0, CDom) for name in ("real", "imag", "conj", "abs")),
    Spec("conj-f64", lambda x: lax.conj(x), [Dom(M34)]),
    # dtype family: conversions between float widths and to/from complex; reduce_precision to f64's
    # own format is the identity (to a narrower one it is a staircase, which finite differences cannot see)
    # float32 values round the transpose pairing at ~1e-7
    Spec("convert-f64-f32", lambda x: lax.convert_element_type(x, "float32"), [Dom(M34)], rtol=1e-4, eps=1e-2,
         transpose_rtol=1e-6),
    Spec("convert-f32-f64", lambda x: lax.convert_element_type(x, "float64"), [Dom(M34, dtype="float32")],
         rtol=1e-4, eps=1e-2, transpose_rtol=1e-6),
    Spec("convert-f64-c128", lambda x: lax.convert_element_type(x, "complex128"), [Dom(M34)]),
    Spec("convert-c128-f64", lambda x: lax.convert_element_type(x, "float64"), [CDom(M34)]),
    Spec("convert-c128-c64", lambda x: lax.convert_element_type(x, "complex64"), [CDom(M34)], rtol=1e-4, eps=1e-2,
         transpose_rtol=1e-6),
    Spec("convert-i32-f64", lambda x: lax.convert_element_type(x, "float64"),
         [Dom(M34, dtype="int32", values=(-3, 0, 5))]),
    Spec("convert-f64-i32", lambda x: lax.convert_element_type(x, "int32"), [Dom(M34)]),
    Spec("convert-weak", lambda x: lax.convert_element_type(x, "float64", weak_type=True), [Dom(M34)]),
    Spec("reduce_precision-e11m52", lambda x: lax.reduce_precision(x, 11, 52), [Dom(M34)]),
    Spec("chain", lambda x: lax.logistic(lax.sqrt(lax.integer_pow(lax.sin(x), 2))), [Dom(M34, 0.2, 1.4)]),
]


test_spec = spec_test(SPECS)


@pytest.mark.parametrize("fn", [lax.stop_gradient, lax.sign, lax.floor, lambda x: lax.round(x, 1)])
def test_zero_derivative_gives_zero_tangents_and_cotangents(fn):
    """stop_gradient is the identity on values, so finite differences do not apply: its derivative
    is 0 by definition, as is that of the step functions (also at their jumps)."""
    x = np.array([-1.5, -0.5, 0.0, 0.5, 2.0])
    closed = make_jaxpr(fn)(x)
    u = np.linspace(-1.0, 1.0, 5)
    [jvp] = jvp_eval(closed, [x], [u])
    [vjp] = vjp_eval(closed, [x], [u])
    np.testing.assert_array_equal(jvp, np.zeros(5))
    np.testing.assert_array_equal(vjp, np.zeros(5))


def test_every_owned_primitive_has_a_spec_row():
    traced = {e.primitive for spec in SPECS for e in program_of(spec, spec.draw(0)).jaxpr.eqns}
    without_rows = {"not", "population_count", "clz", "stop_gradient"}  # integer-only; tested above
    assert OWNED | OWNED_ZERO - without_rows <= traced, sorted(OWNED | OWNED_ZERO - without_rows - traced)


# Primitives this module's rules cover; a skipped oracle case must name another primitive.
OWNED = {"neg", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
         "exp", "exp2", "expm1", "log", "log1p", "logistic", "sqrt", "rsqrt", "cbrt", "square", "abs", "lgamma",
         "digamma", "erf", "erfc", "erf_inv", "bessel_i0e", "bessel_i1e", "real", "imag", "conj", "integer_pow",
         "convert_element_type", "reduce_precision"}
OWNED_ZERO = {"sign", "floor", "ceil", "round", "is_finite", "stop_gradient", "not", "population_count", "clz"}


def test_owned_primitives_have_entries():
    assert all(p in JVP and "0" in VJP.get(p, {}) for p in OWNED), sorted(p for p in OWNED if p not in VJP)
    assert OWNED_ZERO <= ZERO_DERIVATIVE
    assert {e.primitive for e in unary.A.entries} == OWNED


def _halves(family: str) -> tuple[set, set]:
    ids = [c.id for c in load_fixtures([ORACLE], [family])]
    return set(ids[0::2]), set(ids[1::2])


@pytest.mark.parametrize("family", ["unary", "dtype"])
@pytest.mark.parametrize("check", ["jvp", "vjp"])
def test_oracle(family, check):
    first, second = _halves(family)
    chosen = first if check == "jvp" else second
    outcomes = assert_oracle(family, (check,), select=lambda case: case.id in chosen)
    assert any(o.status == "passed" for o in outcomes)
    for o in outcomes:
        if o.status == "skipped":
            named = re.search(r"primitive '([\w-]+)'", o.reason or "")
            assert named, f"{o.case}: skipped without naming a primitive: {o.reason}"
            prim = named.group(1)
            no_derivative = PRIMITIVES[prim].gaps.get("jvp") == NO_DERIVATIVE_IN_JAX
            assert prim not in OWNED or no_derivative, f"{o.case}: {o.reason}"
