"""AD rules of binary/n-ary elementwise primitives, select_n and clamp (transforms/ad/rules/binary.py):
finite differences and the transpose identity per primitive, broadcasting operands, JAX's conventions
at ties and zeros, and the `binary` and `compare_bitwise` oracle families."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import strategies as st

import ir.lax as lax
from eval.interpreter import eval_jaxpr
from ir import make_jaxpr
from ir.tracing import bind
from tests.transforms.ad_helpers import (
    Dom,
    Spec,
    assert_oracle,
    check_fd,
    check_transpose,
    jvp_eval,
    spec_test,
    vjp_eval,
)
from transforms.ad.build import float_positions

SEED = st.integers(0, 2**31 - 1)
M34 = (3, 4)

# Grids with no common value, so that max/min/clamp never tie (their derivative jumps at ties).
GRID_A = (-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5)
GRID_B = (-1.75, -1.25, -0.75, -0.25, 0.25, 0.75, 1.25, 1.75)
LOWER = (-1.25, -0.75)
UPPER = (0.25, 0.75, 1.25)

SPECS = [
    Spec("add", lambda x, y: lax.add(x, y), [Dom(M34), Dom(M34)]),
    Spec("add_any", lambda x, y: bind("add_any", x, y), [Dom(M34), Dom(M34)]),
    Spec("sub", lambda x, y: lax.sub(x, y), [Dom(M34), Dom(M34)]),
    Spec("mul", lambda x, y: lax.mul(x, y), [Dom(M34), Dom(M34)]),
    Spec("div", lambda x, y: lax.div(x, y), [Dom(M34), Dom(M34, 0.5, 2.0)]),
    Spec("div-negative", lambda x, y: lax.div(x, y), [Dom(M34), Dom(M34, -2.0, -0.5)]),
    # x / y stays inside (0, 1) and (2, 3), away from the jumps of trunc(x / y)
    Spec("rem", lambda x, y: lax.rem(x, y), [Dom(M34, 0.2, 0.9), Dom(M34, 1.0, 2.0)]),
    Spec("rem-wrapped", lambda x, y: lax.rem(x, y), [Dom(M34, -2.8, -2.2), Dom(M34, 1.0, 1.05)]),
    Spec("pow", lambda x, y: lax.pow(x, y), [Dom(M34, 0.5, 2.0), Dom(M34, -2.0, 2.0)]),
    Spec("pow-int-exponent", lambda x, y: lax.pow(x, y),
         [Dom(M34, -2.0, 2.0), Dom(M34, dtype="int32", values=(-2, -1, 0, 1, 2, 3))]),
    Spec("pow-complex", lambda x, y: lax.pow(x, y),
         [Dom(M34, 0.5, 2.0, "complex128"), Dom(M34, -1.0, 1.0, "complex128")]),
    Spec("max", lambda x, y: lax.max(x, y), [Dom(M34, values=GRID_A), Dom(M34, values=GRID_B)]),
    Spec("min", lambda x, y: lax.min(x, y), [Dom(M34, values=GRID_A), Dom(M34, values=GRID_B)]),
    # atan2(x, y) jumps where x crosses 0 with y < 0
    Spec("atan2", lambda x, y: lax.atan2(x, y), [Dom(M34, 0.2, 2.0), Dom(M34, -2.0, 2.0)]),
    # special functions on 3 elements: igamma_grad_a evaluates through mpmath
    Spec("igamma", lambda a, x: lax.igamma(a, x), [Dom((3,), 0.5, 3.0), Dom((3,), 0.5, 3.0)], rtol=1e-5),
    Spec("igammac", lambda a, x: lax.igammac(a, x), [Dom((3,), 0.5, 3.0), Dom((3,), 0.5, 3.0)], rtol=1e-5),
    Spec("polygamma", lambda x: lax.polygamma(1.0, x), [Dom((3,), 0.5, 3.0)]),
    Spec("betainc", lambda x: lax.betainc(2.0, 3.5, x), [Dom((3,), 0.1, 0.9)], rtol=1e-5),
    Spec("select_n", lambda p, x, y: lax.select_n(p, x, y),
         [Dom(M34, dtype="bool", values=(False, True)), Dom(M34), Dom(M34)]),
    Spec("select_n-3way", lambda p, x, y, z: lax.select_n(p, x, y, z),
         [Dom(M34, dtype="int32", values=(0, 1, 2)), Dom(M34), Dom(M34), Dom(M34)]),
    Spec("select_n-4way", lambda p, x, y, z, w: lax.select_n(p, x, y, z, w),
         [Dom(M34, dtype="int32", values=(0, 1, 2, 3)), Dom(M34), Dom(M34), Dom(M34), Dom(M34)]),
    Spec("select_n-7way", lambda p, *cases: lax.select_n(p, *cases),  # past the old limit of 4 cases
         [Dom(M34, dtype="int32", values=tuple(range(7))), *[Dom(M34)] * 7]),
    Spec("select_n-1way", lambda p, x: lax.select_n(p, x), [Dom(M34, dtype="bool", values=(False,)), Dom(M34)]),
    Spec("select_n-scalar-predicate", lambda p, x, y: lax.select_n(p, x, y),
         [Dom((), dtype="bool", values=(False, True)), Dom(M34), Dom(M34)]),
    Spec("clamp", lambda lo, x, hi: lax.clamp(lo, x, hi),
         [Dom(M34, values=LOWER), Dom(M34, values=GRID_A), Dom(M34, values=UPPER)]),
    Spec("clamp-scalar-bounds", lambda lo, x, hi: lax.clamp(lo, x, hi),
         [Dom((), values=LOWER), Dom(M34, values=GRID_A), Dom((), values=UPPER)]),
]


test_rule_matches_finite_differences_and_transposes = spec_test(SPECS)


def test_complex_from_parts():
    """complex(x, y) maps R^2 to C: its VJP (real(ct), -imag(ct)) is the transpose for the real inner
    product, so ⟨v, J u⟩ and ⟨Jᵀ v, u⟩ agree in their real parts."""
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-2, 2, M34), rng.uniform(-2, 2, M34)
    closed = make_jaxpr(lambda a, b: lax.mul(lax.complex(a, b), lax.complex(b, a)))(x, y)
    check_fd(closed, [x, y])
    u = [rng.standard_normal(M34), rng.standard_normal(M34)]
    v = rng.standard_normal(M34) + 1j * rng.standard_normal(M34)
    [ju] = jvp_eval(closed, [x, y], u)
    jtv = vjp_eval(closed, [x, y], [v])
    assert all(c.dtype == np.float64 for c in jtv)
    lhs = np.real(np.sum(v * ju))
    rhs = sum(np.sum(c * ui) for c, ui in zip(jtv, u, strict=True))
    assert lhs == pytest.approx(rhs, rel=1e-12)


# --- broadcasting operands ---------------------------------------------------------------------------


def _vjp_vs_fd(closed, args, seed=0, eps=1e-6, rtol=1e-6):
    """⟨Jᵀ v, u⟩ from the VJP program equals ⟨v, (f(x + εu) - f(x - εu)) / 2ε⟩."""
    rng = np.random.default_rng(seed)
    ins = float_positions(closed.jaxpr.invars)
    u = {i: rng.standard_normal(args[i].shape) for i in ins}
    at = [eval_jaxpr(closed, *[a + s * eps * u[i] if i in u else a for i, a in enumerate(args)])[0] for s in (1, -1)]
    fd = (at[0] - at[1]) / (2 * eps)
    v = rng.standard_normal(fd.shape)
    jtv = vjp_eval(closed, args, [v])
    for i, c in zip(ins, jtv, strict=True):
        assert c.shape == args[i].shape
    got = sum(float(np.sum(c * u[i])) for i, c in zip(ins, jtv, strict=True))
    assert got == pytest.approx(float(np.sum(v * fd)), rel=rtol, abs=rtol)


BROADCAST_OPS = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "pow": lax.pow, "atan2": lax.atan2,
    "max": lax.max, "min": lax.min, "rem": lax.rem,
}
SHAPES = {"scalar-rhs": (M34, ()), "scalar-lhs": ((), M34), "column": (M34, (3, 1)), "row": ((1, 4), M34)}
BROADCASTS = [("add", "scalar-rhs"), ("add", "row"), ("sub", "column"), ("sub", "scalar-lhs"), ("mul", "scalar-rhs"),
              ("div", "scalar-lhs"), ("div", "column"), ("pow", "scalar-rhs"), ("pow", "column"), ("atan2", "row"),
              ("max", "scalar-rhs"), ("max", "column"), ("min", "scalar-lhs"), ("rem", "column")]


@pytest.mark.parametrize("op, shapes", BROADCASTS, ids=[f"{op}-{shapes}" for op, shapes in BROADCASTS])
def test_broadcast_operand_gets_its_own_shape(op, shapes):
    rng = np.random.default_rng(len(op))
    x = rng.uniform(0.5, 2.0, SHAPES[shapes][0])
    y = rng.uniform(2.25, 3.0, SHAPES[shapes][1])  # never ties with x; keeps rem's x / y in (0, 1)
    closed = make_jaxpr(BROADCAST_OPS[op])(x, y)
    assert closed.jaxpr.eqns[0].primitive == op and closed.jaxpr.outvars[0].aval.shape == M34
    check_fd(closed, [x, y])
    check_transpose(closed, [x, y])
    _vjp_vs_fd(closed, [x, y])


def test_float32():
    rng = np.random.default_rng(1)
    x, y = rng.uniform(0.5, 2.0, (2, 3)).astype(np.float32), rng.uniform(0.5, 2.0, (2, 3)).astype(np.float32)
    closed = make_jaxpr(lambda a, b: lax.atan2(lax.pow(a, b), lax.max(lax.div(b, a), lax.sub(a, b))))(x, y)
    assert closed.jaxpr.outvars[0].aval.dtype.name == "float32"
    check_fd(closed, [x, y], rtol=2e-2, eps=1e-2)
    check_transpose(closed, [x, y], rtol=1e-5)


# --- JAX's conventions where the derivative is not classical -------------------------------------------


def _jvp_vjp(fn, args, tangents, cotangent):
    closed = make_jaxpr(fn)(*args)
    return jvp_eval(closed, args, tangents)[0], vjp_eval(closed, args, [cotangent])


@pytest.mark.parametrize("op, reference", [(lax.max, np.maximum), (lax.min, np.minimum)], ids=["max", "min"])
def test_ties_split_the_derivative_evenly(op, reference):
    x = np.array([1.0, 2.0, -3.0])
    y = np.array([1.0, 0.0, 5.0])
    dx, dy = np.array([1.0, 10.0, 100.0]), np.array([3.0, 30.0, 300.0])
    x_share = np.where(x == y, 0.5, reference(x, y) == x)
    jvp, (gx, gy) = _jvp_vjp(op, [x, y], [dx, dy], np.ones(3))
    np.testing.assert_array_equal(jvp, x_share * dx + (1 - x_share) * dy)
    np.testing.assert_array_equal(gx, x_share)
    np.testing.assert_array_equal(gy, 1 - x_share)


def test_clamp_passes_no_derivative_at_its_bounds():
    lo, hi = np.array([-1.0, -1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0, 1.0])
    x = np.array([-1.0, 1.0, 0.0, 3.0])
    jvp, (glo, gx, ghi) = _jvp_vjp(lax.clamp, [lo, x, hi], [np.ones(4) * 10, np.ones(4), np.ones(4) * 100],
                                   np.ones(4))
    np.testing.assert_array_equal(jvp, [0.0, 0.0, 1.0, 100.0])
    np.testing.assert_array_equal(gx, [0.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(glo, [0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ghi, [0.0, 0.0, 0.0, 1.0])


def test_pow_at_zero_base_and_zero_exponent():
    """JAX takes log(x) as 0 where x = 0 (so 0^y has no y-derivative) and n x^(n-1) as 0 for n = 0."""
    x = np.array([0.0, 0.0, 2.0])
    y = np.array([2.0, 0.5, 3.0])
    _, (gx, gy) = _jvp_vjp(lax.pow, [x, y], [np.ones(3), np.ones(3)], np.ones(3))
    np.testing.assert_allclose(gy, [0.0, 0.0, np.log(2.0) * 8.0], rtol=1e-15)
    np.testing.assert_allclose(gx, [0.0, np.inf, 12.0], rtol=1e-15)
    n = np.array([0, 0, 1, 2], np.int32)
    base = np.array([0.0, 3.0, 0.0, 0.0])
    [gbase] = vjp_eval(make_jaxpr(lax.pow)(base, n), [base, n], [np.ones(4)])
    np.testing.assert_array_equal(gbase, [0.0, 0.0, 1.0, 0.0])


def test_comparisons_and_bitwise_ops_have_no_derivative():
    def f(x, y):
        keep = lax.bitwise_and(lax.lt(x, y), lax.bitwise_not(lax.eq(x, y)))
        return lax.select_n(keep, x, lax.mul(x, y))

    x, y = np.array([1.0, 3.0]), np.array([2.0, 0.5])
    jvp, (gx, gy) = _jvp_vjp(f, [x, y], [np.ones(2), np.zeros(2)], np.ones(2))
    np.testing.assert_array_equal(jvp, [2.0, 1.0])
    np.testing.assert_array_equal(gx, [2.0, 1.0])
    np.testing.assert_array_equal(gy, [1.0, 0.0])


# --- oracle ------------------------------------------------------------------------------------------

OWN = {"add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "complex", "igamma", "igammac",
       "polygamma", "regularized_incomplete_beta", "add_any", "select_n", "clamp"}


def _skipped_primitive(reason: str) -> str:
    found = re.search(r"primitive '([^']+)'", reason)
    assert found, reason
    return found.group(1)


@pytest.mark.parametrize("family", ["binary", "compare_bitwise"])
def test_oracle(family):
    outcomes = assert_oracle(family, ("jvp", "vjp"))
    skipped = {_skipped_primitive(o.reason) for o in outcomes if o.status == "skipped"}
    assert not skipped & OWN, f"skipped for a primitive of this family: {skipped & OWN}"
    assert any(o.status == "passed" for o in outcomes)
