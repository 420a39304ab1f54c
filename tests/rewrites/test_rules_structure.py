"""Structural rules (`rewrites.rules.structure`), egg-style: one line per equation that must (or must not) be
proved, each with only the rules it names (`none,+rule,...`; the shape analysis always runs)."""

import pytest

import ir.lax as lax
import ir.numpy as jnp
from ir.core import ShapedArray
from ir.dtypes import float64, int32
from rewrites.rules import structure
from tests.rewrites.helpers import assert_not_proves, assert_proves
from tests.rewrites.rule_checks import fin


def f64(*shape):
    return ShapedArray(shape, float64)


V4, V5, M23, M234 = f64(4), f64(5), f64(2, 3), f64(2, 3, 4)

PROVES = [
    # (the rules that must suffice, f, g, input avals)
    ("rev-rev", lambda x: jnp.flip(jnp.flip(x)), lambda x: x, [V4]),
    ("rev-rev", lambda x: lax.rev(lax.rev(x, (0, 2)), (0, 2)), lambda x: x, [M234]),
    ("slice-whole", lambda x: lax.slice(x, (0,), (4,)), lambda x: x, [V4]),
    ("slice-whole", lambda x: lax.slice(x, (0, 0), (2, 3)), lambda x: x, [M23]),
    ("slice-slice", lambda x: x[1:][1:], lambda x: x[2:], [V4]),
    ("slice-slice", lambda x: x[1:, :3][:, 1:2], lambda x: x[1:, 1:2], [f64(3, 4)]),
    ("slice-slice slice-whole", lambda x: x[0:][:], lambda x: x, [V4]),
    ("concat-adjacent-slices slice-whole", lambda x: jnp.concatenate([x[:2], x[2:]]), lambda x: x, [V4]),
    ("concat-adjacent-slices", lambda x: jnp.concatenate([x[:, :1], x[:, 1:2]], axis=1), lambda x: x[:, :2],
     [M23]),
    ("concat-adjacent-slices", lambda x: jnp.concatenate([x[1:, 1:, :2], x[1:, 1:, 2:3]], axis=2),
     lambda x: x[1:, 1:, :3], [M234]),
    ("concat-one", lambda x: lax.concatenate([x], 0), lambda x: x, [M23]),
    ("sum-of-stack", lambda x, y: jnp.sum(jnp.stack([x, y]), axis=0), lambda x, y: x + y, [V4, V4]),
    ("sum-of-stack", lambda x, y, z: jnp.sum(jnp.stack([x, y, z], axis=1), axis=1), lambda x, y, z: x + y + z,
     [M23, M23, M23]),
    ("max-of-stack", lambda x, y: jnp.max(jnp.stack([x, y]), axis=0), jnp.maximum, [V4, V4]),
    ("max-of-stack", lambda x, y, z: jnp.min(jnp.stack([x, y, z], axis=2), axis=2),
     lambda x, y, z: jnp.minimum(jnp.minimum(x, y), z), [M23, M23, M23]),
    ("reduce-max-broadcast", lambda x: jnp.max(jnp.broadcast_to(jnp.max(x), (5,))), jnp.max, [V4]),
    ("reduce-max-broadcast", lambda x: jnp.min(jnp.broadcast_to(x, (4, 2, 3)), axis=0), lambda x: x, [M23]),
    ("reduce-max-broadcast", lambda x: jnp.max(lax.broadcast_in_dim(x, (2, 5, 3), (0, 2)), axis=1), lambda x: x,
     [M23]),
    ("sum-of-products-dot", lambda x, y: jnp.sum(x * y), jnp.dot, [V4, V4]),
    ("dot-outer-as-mul", lambda c, r: c @ r, lambda c, r: jnp.broadcast_to(c, (3, 4)) * jnp.broadcast_to(r, (3, 4)),
     [f64(3, 1), f64(1, 4)]),
    ("sum-scalar-factor", lambda s, v: jnp.sum(s * v), lambda s, v: s * jnp.sum(v), [f64(), V4]),
    ("sum-scalar-factor", lambda s, v: jnp.sum(v * s, axis=0), lambda s, v: jnp.sum(v, axis=0) * s, [f64(), M23]),
    ("sum-scalar-factor-finite", lambda s, v: jnp.sum(fin(s) * v), lambda s, v: fin(s) * jnp.sum(v), [f64(), V4]),
]


@pytest.mark.parametrize("rules,f,g,avals", PROVES, ids=[f"{p[0]}-{i}" for i, p in enumerate(PROVES)])
def test_proves(rules, f, g, avals):
    assert_proves(f, g, *avals, rules="none," + ",".join("+" + r for r in rules.split()))


def test_every_rule_has_a_proof_row():
    tested = {name for rules, *_ in PROVES for name in rules.split()}
    assert {r.name for r in structure.R.rules} <= tested


# (why, f, g, avals, the rule set that must not prove f = g)
NOT_PROVES = [
    ("rev over other dims", lambda x: lax.rev(lax.rev(x, (0,)), (1,)), lambda x: x, [M23], "fast"),
    ("a slice of part of x", lambda x: lax.slice(x, (1,), (4,)), lambda x: x[1:], [V5], "fast"),
    ("slices in the other order", lambda x: jnp.concatenate([x[2:], x[:2]]), lambda x: x, [V4], "fast"),
    ("slices with a gap", lambda x: jnp.concatenate([x[:1], x[2:]]), lambda x: x[1:], [V4], "fast"),
    ("slices that differ on another axis", lambda x: jnp.concatenate([x[:1, :2], x[1:, 1:]]),
     lambda x: x[:, :2], [M23], "fast"),
    ("a sum over another axis than the stack's", lambda x, y: jnp.sum(jnp.stack([x, y]), axis=1),
     lambda x, y: x + y, [M23, M23], "fast"),
    ("max over a dim the broadcast did not add", lambda x: jnp.max(jnp.broadcast_to(x, (4, 2, 3)), axis=1),
     lambda x: jnp.broadcast_to(jnp.max(x, axis=0), (4, 3)), [M23], "fast"),
    ("max over an empty broadcast dim is -inf", lambda x: lax.reduce_max(jnp.broadcast_to(x, (0, 2, 3)), (0,)),
     lambda x: x, [M23], "fast"),
    ("a contraction over two elements", lambda c, r: c @ r,
     lambda c, r: jnp.broadcast_to(c[:, :1], (3, 4)) * jnp.broadcast_to(r[:1], (3, 4)), [f64(3, 2), f64(2, 4)],
     "fast"),
    ("a max over another axis than the stack's", lambda x, y: jnp.max(jnp.stack([x, y]), axis=1),
     lambda x, y: jnp.maximum(x, y), [M23, M23], "fast"),
    ("sum of products of matrices", lambda x, y: jnp.sum(x * y), lambda x, y: jnp.sum(x * y, axis=(1, 0)),
     [M23, M23], "fast"),
    ("sum(s*v) needs a finite s under default", lambda s, v: jnp.sum(s * v), lambda s, v: s * jnp.sum(v),
     [f64(), V4], "default"),
    ("integer sum of products", lambda x, y: jnp.sum(x * y), jnp.dot, [ShapedArray((4,), int32)] * 2, "fast"),
]


@pytest.mark.parametrize("why,f,g,avals,rules", NOT_PROVES, ids=[p[0] for p in NOT_PROVES])
def test_not_proves(why, f, g, avals, rules):
    assert_not_proves(f, g, *avals, rules=rules)
