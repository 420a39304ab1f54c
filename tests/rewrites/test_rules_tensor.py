"""Tensor rules, egg-style: one line per equation that must (or must not) be proved.

Each row of PROVES names the rules that must suffice for the proof: it is run with only those rules
(`none,+rule,...`; the shape analysis always runs), so a row tests its rule and not some other path,
and `assert_proves` also evaluates both sides on random inputs.
"""

import numpy as np
import pytest

import ir.lax as lax
import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir.core import ShapedArray
from ir.dtypes import bool_, float32, float64
from ir.tracing import make_jaxpr
from rewrites.engine import optimize
from rewrites.rules import tensor
from tests.rewrites.helpers import assert_not_proves, assert_proves


def f64(*shape):
    return ShapedArray(shape, float64)


M23, M32, M33, M234, V3, S = f64(2, 3), f64(3, 2), f64(3, 3), f64(2, 3, 4), f64(3), f64()
B23 = ShapedArray((2, 3), bool_)


def bcast(x, shape, dims):
    return lax.broadcast_in_dim(x, shape, dims)


def dot(a, b, contract):
    return lax.dot_general(a, b, (contract, ([], [])), preferred_element_type=float64)


T, R = jnp.transpose, jnp.reshape
PROVES = [
    # (the rules that must suffice, f, g, input avals)
    ("transpose-transpose transpose-identity", lambda x: T(T(x)), lambda x: x, [M23]),
    ("transpose-transpose transpose-identity", lambda x: T(T(x, (1, 2, 0)), (2, 0, 1)), lambda x: x, [M234]),
    ("transpose-transpose", lambda x: T(T(x, (1, 2, 0)), (1, 0, 2)), lambda x: T(x, (2, 1, 0)), [M234]),
    ("transpose-unary", lambda x: jnp.exp(x.T), lambda x: jnp.exp(x).T, [M23]),
    ("transpose-unary", lambda x: x.T.astype(jnp.float32), lambda x: x.astype(jnp.float32).T, [M23]),
    ("transpose-unary", lambda x: x.T ** 3, lambda x: (x ** 3).T, [M23]),
    ("transpose-binary", lambda x, y: x.T + y.T, lambda x, y: (x + y).T, [M23, M23]),
    ("transpose-binary-scalar", lambda x: 2.0 - x.T, lambda x: (2.0 - x).T, [M23]),
    ("transpose-binary-scalar", lambda x, c: x.T * c, lambda x, c: (x * c).T, [M23, S]),
    ("transpose-broadcast-scalar", lambda c: T(bcast(c, (2, 3), ())), lambda c: bcast(c, (3, 2), ()), [S]),
    ("reshape-reshape reshape-identity", lambda x: R(R(x, (6,)), (2, 3)), lambda x: x, [M23]),
    ("reshape-reshape", lambda x: R(R(x, (6,)), (3, 2)), lambda x: R(x, (3, 2)), [M23]),
    ("reshape-unary", lambda x: -R(x, (6,)), lambda x: R(-x, (6,)), [M23]),
    ("reshape-binary", lambda x, y: R(x, (6,)) * R(y, (6,)), lambda x, y: R(x * y, (6,)), [M23, M23]),
    ("reshape-broadcast-scalar", lambda c: R(bcast(c, (2, 3), ()), (6,)), lambda c: bcast(c, (6,), ()), [S]),
    ("broadcast-identity", lambda x: bcast(x, (2, 3), (0, 1)), lambda x: x, [M23]),
    ("broadcast-broadcast", lambda x: bcast(bcast(x, (4, 3), (1,)), (2, 4, 3), (1, 2)),
     lambda x: bcast(x, (2, 4, 3), (2,)), [V3]),
    ("broadcast-unary", lambda x: jnp.log(bcast(x, (4, 3), (1,))), lambda x: bcast(jnp.log(x), (4, 3), (1,)),
     [V3]),
    ("broadcast-binary", lambda x, y: bcast(x, (4, 3), (1,)) - bcast(y, (4, 3), (1,)),
     lambda x, y: bcast(x - y, (4, 3), (1,)), [V3, V3]),
    ("broadcast-binary-scalar", lambda x: bcast(x, (4, 3), (1,)) / 4.0,
     lambda x: bcast(x / 4.0, (4, 3), (1,)),
     [V3]),
    ("squeeze-broadcast", lambda x: jnp.squeeze(x[None], 0), lambda x: x, [M23]),
    ("squeeze-broadcast", lambda x: jnp.squeeze(jnp.expand_dims(x, (0, 2)), (0, 2)), lambda x: x, [M23]),
    ("reduce-sum-no-axes", lambda x: jnp.sum(x, axis=()), lambda x: x, [M23]),
    ("reduce-no-axes", lambda x: jnp.max(x, axis=()), lambda x: x, [M23]),
    ("reduce-reduce", lambda x: jnp.sum(jnp.sum(x, axis=0)), lambda x: jnp.sum(x), [M23]),
    ("reduce-reduce", lambda x: jnp.max(jnp.max(x, axis=1), axis=1),
     lambda x: jnp.max(x, axis=(1, 2)), [M234]),
    ("reduce-reduce", lambda x: jnp.prod(jnp.prod(x, axis=(0, 2)), axis=0), lambda x: jnp.prod(x), [M234]),
    ("reduce-reduce-bitwise", lambda b: jnp.all(jnp.all(b, axis=0)), lambda b: jnp.all(b), [B23]),
    ("reduce-transpose transpose-identity", lambda x: jnp.sum(x.T, axis=0),
     lambda x: jnp.sum(x, axis=1), [M23]),
    ("reduce-transpose transpose-identity", lambda x: jnp.sum(T(x, (2, 0, 1))), lambda x: jnp.sum(x), [M234]),
    ("reduce-transpose", lambda x: jnp.max(T(x, (2, 0, 1)), axis=1), lambda x: jnp.max(x, axis=0).T, [M234]),
    ("reduce-transpose-bitwise transpose-identity", lambda b: jnp.any(b.T, axis=0),
     lambda b: jnp.any(b, axis=1),
     [B23]),
    ("reduce-sum-broadcast", lambda x: jnp.sum(jnp.broadcast_to(x, (4, 2, 3)), axis=0),
     lambda x: x * 4.0, [M23]),
    ("reduce-sum-broadcast", lambda c: jnp.sum(bcast(c, (2, 3), ())), lambda c: c * 6.0, [S]),
    ("reduce-sum-scalar-mul", lambda x: jnp.sum(2.0 * x, axis=0), lambda x: 2.0 * jnp.sum(x, axis=0), [M23]),
    ("reduce-sum-scalar-mul", lambda x: jnp.sum(x * 3.0), lambda x: jnp.sum(x) * 3.0, [M23]),
    ("reduce-sum-neg", lambda x: jnp.sum(-x, axis=1), lambda x: -jnp.sum(x, axis=1), [M23]),
    ("reduce-max-neg", lambda x: jnp.max(-x, axis=0), lambda x: -jnp.min(x, axis=0), [M23]),
    ("reduce-max-scalar-mul", lambda x: jnp.min(x * 0.5), lambda x: jnp.min(x) * 0.5, [M23]),
    ("dot-scalar-mul", lambda a, b: (2.0 * a) @ b, lambda a, b: 2.0 * (a @ b), [M23, M32]),
    ("dot-scalar-mul", lambda a, v: a @ (v * 3.0), lambda a, v: (a @ v) * 3.0, [M23, V3]),
    ("dot-neg", lambda a, b: a @ -b, lambda a, b: -(a @ b), [M23, M32]),
    ("dot-transpose-operand", lambda a, b: a.T @ b, lambda a, b: dot(a, b, ([0], [0])), [M23, M23]),
    ("dot-transpose-operand", lambda a, b: a @ b.T, lambda a, b: dot(a, b, ([1], [1])), [M23, M23]),
    ("transpose-dot dot-transpose-operand", lambda a, b: (a @ b).T, lambda a, b: b.T @ a.T, [M23, M32]),
    ("dot-assoc", lambda a, b, c: (a @ b) @ c, lambda a, b, c: a @ (b @ c), [M23, M33, M32]),
    ("dot-assoc", lambda a, b, v: (a @ b) @ v, lambda a, b, v: a @ (b @ v), [M23, M33, V3]),
    ("dot-assoc-vecmat", lambda v, a, b: v @ (a @ b), lambda v, a, b: (v @ a) @ b, [f64(2), M23, M33]),
]


@pytest.mark.parametrize("rules,f,g,avals", PROVES,
                         ids=[f"{row[0].split()[0]}-{i}" for i, row in enumerate(PROVES)])
def test_proves(rules, f, g, avals):
    assert_proves(f, g, *avals, rules="none," + ",".join("+" + r for r in rules.split()))


# Guarded twins whose guard (finite matrices) no program input satisfies: tested by their guard below.
GUARD_ONLY = {"dot-assoc-finite", "dot-assoc-vecmat-finite"}


def test_every_rule_has_a_proof_row():
    tested = {name for rules, *_ in PROVES for name in rules.split()}
    assert {r.name for r in tensor.R.rules} <= tested | GUARD_ONLY


def test_reassociation_is_unsafe_so_default_keeps_the_order():
    """(A@B)@C and A@(B@C) differ in kind on ±inf entries, so only `fast` (or finite operands) reassociates."""
    assert_not_proves(lambda a, b, c: (a @ b) @ c, lambda a, b, c: a @ (b @ c), M23, M33, M32, rules="default")


def test_transpose_transpose_is_x_under_default():
    """The issue's test: transpose(transpose(x)) => x."""
    assert_proves(lambda x: jnp.transpose(jnp.transpose(x)), lambda x: x, M23)


def test_chain_under_default():
    """Several tensor rules in a row: unary and scalar ops pushed out of the transpose, the sum moved
    through it, the scalar pulled out of the sum, the negation out of the sum."""
    assert_proves(lambda x: jnp.sum(jnp.transpose(-x) * 2.0, axis=0), lambda x: -jnp.sum(x, axis=1) * 2.0,
                  M23)


def test_matrix_chain_extracted_right_to_left():
    """The issue's test: (A@B)@x => A@(B@x) when cheaper, decided by the FLOPs cost model (under `fast`:
    reassociation is unsafe on ±inf entries)."""
    m, v = f64(64, 64), f64(64)
    program = make_jaxpr(lambda a, b, x: (a @ b) @ x)(m, m, v)
    optimized, report = optimize(program, rules="fast", cost="flops")
    eqns = optimized.jaxpr.eqns
    a, b, x = optimized.jaxpr.invars
    assert [e.primitive for e in eqns] == ["dot_general", "dot_general"]
    assert eqns[0].invars == [b, x] and eqns[1].invars == [a, eqns[0].outvars[0]]
    assert report.cost_after == 2 * (2 * 64 * 64) < report.cost_before


def test_matrix_chain_kept_when_cheaper():
    """(A@B)@C with a thin A stays left to right: 2*2*64*64 + 2*2*64*64 < 2*64*64*64 + 2*2*64*64."""
    program = make_jaxpr(lambda a, b, c: (a @ b) @ c)(f64(2, 64), f64(64, 64), f64(64, 64))
    optimized, _ = optimize(program, rules="fast", cost="flops")
    first = optimized.jaxpr.eqns[0]
    assert first.invars == optimized.jaxpr.invars[:2]


NOT_PROVES = [
    # (rule set, f, g, avals): wrong equations, and equations only a rule outside the set would prove
    ("fast", lambda x: jnp.transpose(x), lambda x: jnp.reshape(x, (3, 2)), [M23]),
    ("fast", lambda x: jnp.sum(x, axis=0), lambda x: jnp.sum(x.T, axis=0), [M23]),
    ("fast", lambda x: jnp.max(-2.0 * x), lambda x: -2.0 * jnp.max(x), [M23]),
    ("fast", lambda a, b: a @ b, lambda a, b: b @ a, [M33, M33]),
    ("strict", lambda x: jnp.sum(jnp.sum(x, axis=0)), lambda x: jnp.sum(x), [M23]),
    ("strict", lambda a, b, v: (a @ b) @ v, lambda a, b, v: a @ (b @ v), [M33, M33, V3]),
]


@pytest.mark.parametrize("rules,f,g,avals", NOT_PROVES, ids=[str(i) for i in range(len(NOT_PROVES))])
def test_does_not_prove(rules, f, g, avals):
    assert_not_proves(f, g, *avals, rules=rules)


def test_sum_of_scalar_multiple_needs_a_finite_literal():
    inf = float("inf")
    # under default: fast has structure's unsafe sum-scalar-factor, which takes out any rank-0 factor
    assert_not_proves(lambda x: jnp.sum(x * inf), lambda x: jnp.sum(x) * inf, M23, rules="default")


@pytest.mark.parametrize("dtype,count,fires", [(jnp.float16, 2048, True), (jnp.float16, 2049, False),
                                                (jnp.int8, 127, True), (jnp.int8, 128, False)])
def test_sum_of_broadcast_needs_an_exact_count(dtype, count, fires):
    """The count becomes a literal of x's dtype: only counts the dtype holds exactly."""
    x = ShapedArray((1,), dtype)
    program = make_jaxpr(lambda x: lax.reduce_sum(jnp.broadcast_to(x, (count, 1)), (0,)))(x)
    _, report = optimize(program, rules="none,+reduce-sum-broadcast", cost="ops")
    assert (report.rule_matches["reduce-sum-broadcast"] > 0) == fires


def test_float32_push_through():
    x32 = ShapedArray((2, 3), float32)
    assert_proves(lambda x: jnp.sqrt(x.T), lambda x: jnp.sqrt(x).T, x32, rules="none,+transpose-unary",
                  rtol=1e-6)


SPECIALS = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 1.5, -2.0])
PROGRAMS = [
    (lambda x, y: jnp.exp(x.T) + jnp.transpose(y) * 2.0, [M23, M23]),
    (lambda x, y: jnp.reshape(jnp.reshape(-x, (6,)), (3, 2)) - jnp.reshape(y, (3, 2)), [M23, M23]),
    (lambda x, v: jnp.sqrt(jnp.broadcast_to(v, (2, 3))) * jnp.broadcast_to(v, (2, 3)) + x, [M23, V3]),
    (lambda x: jnp.squeeze(jnp.expand_dims(jnp.abs(x), 0), 0).T.T, [M23]),
    (lambda x: jnp.max(jnp.max(x, axis=(0,)), axis=()) + jnp.prod(x, axis=()), [M23]),
    (lambda x: jnp.sum(jnp.sum(x.T * 2.0, axis=0)) + jnp.max(-x, axis=1), [M23]),
    (lambda a, b, v: ((a @ b) @ v) * -1.0 + (-(a.T)).T @ v + (a @ b).T @ v, [M33, M33, V3]),
]


def _same_bits(a, b) -> bool:
    """Equal values and signs of zero; any nan matches any nan (nan signs are not meaningful)."""
    a, b = np.asarray(a), np.asarray(b)
    return np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a[~np.isnan(a)]),
                                                                  np.signbit(b[~np.isnan(b)]))


@pytest.mark.parametrize("f,avals", PROGRAMS, ids=[str(i) for i in range(len(PROGRAMS))])
def test_optimized_programs_agree(f, avals):
    """strict: bit-identical on -0.0, ±inf, nan; default: equal up to rounding on ordinary inputs."""
    program = make_jaxpr(f)(*avals)
    strict, _ = optimize(program, rules="strict")
    default, _ = optimize(program, rules="default")
    rng = np.random.default_rng(0)
    with np.errstate(all="ignore"):
        for _ in range(10):
            args = [rng.choice(SPECIALS, size=a.shape) for a in avals]
            for want, got in zip(eval_jaxpr(program, *args), eval_jaxpr(strict, *args), strict=True):
                assert _same_bits(want, got), (args, want, got)
            args = [rng.normal(size=a.shape) for a in avals]
            for want, got in zip(eval_jaxpr(program, *args), eval_jaxpr(default, *args), strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
