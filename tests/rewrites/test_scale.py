"""Any program size: thousands of outputs, deep chains, wide operand lists and nested loops go through
encode, saturate, extract and decode (and reverse and forward mode) with no recursion limit hit.

Not timed. Under the `ci` profile the programs run one iteration of the rules (the recursion-prone walks
are the same at any iteration count); `nightly` runs the default limits."""

import sys

import numpy as np
import pytest

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from eval.oracle import compare_lists
from ir import make_jaxpr
from ir.control import scan
from rewrites.engine import Limits, optimize
from rewrites.options import Options
from tests.profile import NIGHTLY
from transforms.ad.programs import grad_program, jvp_program

SIZE = 10_000
LIMITS = None if NIGHTLY else Limits(iterations=1)


def many_outputs(n: int):
    return make_jaxpr(lambda x: [x * float(i % 7 + 2) for i in range(n)])(np.ones(2))


def deep_chain(n: int):
    def f(x):
        for _ in range(n):
            x = jnp.sin(x)
        return jnp.sum(x)

    return make_jaxpr(f)(np.ones(2))


def wide_layer(n: int):
    return make_jaxpr(lambda x: jnp.concatenate([x * float(i + 1) for i in range(n)]))(np.ones(2))


def nested_scans(depth: int):
    def level(k):
        def body(c, _):
            return (level(k - 1)(c) if k > 1 else jnp.sin(c)), None
        return lambda c: scan(body, c, None, length=1)[0]

    return make_jaxpr(level(depth))(np.ones(2))


@pytest.fixture(autouse=True)
def _low_recursion_limit():
    """The default limit: a walk that recurses once per equation or output fails at these sizes."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(old)


def _same_values(a, b, args):
    compare_lists("optimized vs input", eval_jaxpr(b, *args), eval_jaxpr(a, *args), rtol=1e-12, atol=1e-12)


# Under `ci` the 10,000-output program is optimized through its forward mode only (which optimizes it with its
# tangents: `test_forward_mode_of_10000_outputs`), to keep the file within a minute of CPU.
@pytest.mark.parametrize("build", [many_outputs, deep_chain] if NIGHTLY else [deep_chain],
                         ids=["outputs", "chain"] if NIGHTLY else ["chain"])
def test_optimize_at_10000(build):
    closed = build(SIZE)
    optimized, report = optimize(closed, limits=LIMITS)
    assert report.cost_after <= report.cost_before
    assert len(optimized.jaxpr.outvars) == len(closed.jaxpr.outvars)
    _same_values(closed, optimized, [np.array([0.3, -1.2])])


def test_grad_of_a_10000_deep_chain():
    closed = deep_chain(SIZE)
    gradient, _ = grad_program(closed, [0], options=Options(limits=LIMITS))
    x = np.array([0.3, -1.2])
    want = np.ones(2)
    for _ in range(SIZE):  # d/dx of sin^n(x): the product of cos along the chain
        want, x = want * np.cos(x), np.sin(x)
    np.testing.assert_allclose(eval_jaxpr(gradient, np.array([0.3, -1.2]))[0], want, rtol=1e-9)


def test_forward_mode_of_10000_outputs():
    closed = many_outputs(SIZE)
    program, _ = jvp_program(closed, options=Options(limits=LIMITS))
    x, t = np.array([0.3, -1.2]), np.array([1.0, 2.0])
    outs = eval_jaxpr(program, x, t)
    assert len(outs) == 2 * SIZE
    np.testing.assert_allclose(outs[SIZE + 5], t * float(5 % 7 + 2))


def test_wide_layer_and_nested_scans():
    for closed in (wide_layer(2_000), nested_scans(40)):
        optimized, _ = optimize(closed, limits=LIMITS)
        _same_values(closed, optimized, [np.array([0.3, -1.2])])
