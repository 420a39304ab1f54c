"""Batching rules of the shape primitives (transforms/batching/rules/shape.py): vmap of each spec row at every
batch-axis position and on random configurations against a loop over slices, the user API on NumPy-style
code, 12 operands and results of the variadic rules, then the `shape` oracle family against JAX."""

from __future__ import annotations

import numpy as np
import pytest

import transforms
from eval.interpreter import eval_jaxpr
from ir import lax, make_jaxpr, parse_jaxpr
from ir import numpy as jnp
from ir.params import Symbol
from ir.tracing import bind
from tests.transforms import test_ad_shape
from tests.transforms.ad_helpers import Dom, Spec
from tests.transforms.vmap_helpers import (
    Config,
    assert_oracle,
    assert_same,
    batched_program,
    check_config,
    loop_reference,
    vmap_spec_tests,
)

I32 = dict(dtype="int32", values=(-3, 0, 1, 7))
BOOL = dict(dtype="bool", values=(False, True))


def device_put(*xs):
    """device_put of several operands at once (as `jax.device_put` of a tuple binds it)."""
    n = len(xs)
    return tuple(bind("device_put", *xs, copy_semantics=(Symbol("ArrayCopySemantics.REUSE_INPUT"),) * n,
                      devices=(None,) * n, srcs=(None,) * n))


# Rows of the AD table (param variants of every shape primitive) that take distinct paths through the batching
# rules, then integer/bool operands, batched padding values, rank-0 operands and several operands.
REUSED = ("reshape", "reshape/dimensions-3d", "transpose/3d", "transpose/complex", "broadcast/scalar",
          "broadcast/middle", "broadcast/stretch-and-add", "expand_dims", "squeeze/two", "rev/3d", "slice/strides",
          "slice/empty", "pad/interior-negative", "pad/value", "pad/value-only", "concatenate/three",
          "concatenate/one-active", "stack/last", "tile/3d", "split/three", "split/one-used", "device_put")
_AD_ROWS = {s.name: s for s in test_ad_shape.SPECS}
SPECS = [_AD_ROWS[name] for name in REUSED] + [
    Spec("reshape/int", lambda x: lax.reshape(x, (2, 6)), [Dom((3, 4), **I32)]),
    Spec("reshape/scalar", lambda x: lax.reshape(x, (1, 1)), [Dom(())]),
    Spec("broadcast/bool", lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)), [Dom((3,), **BOOL)]),
    Spec("slice/no-strides", lambda x: lax.slice(x, (1, 0), (3, 2)), [Dom((3, 4), **I32)]),
    Spec("pad/int-value", lambda x, v: lax.pad(x, v, ((1, -1, 1), (0, 2, 0))), [Dom((3, 4), **I32), Dom((), **I32)]),
    Spec("pad/bool-value", lambda x, v: lax.pad(x, v, ((2, 0, 1),)), [Dom((3,), **BOOL), Dom((), **BOOL)]),
    Spec("pad/scalar-operand", lambda x, v: lax.pad(x, v, ()), [Dom(()), Dom(())]),
    Spec("pad/all-removed", lambda x, v: lax.pad(x, v, ((-3, 1, 0), (0, 0, 0))), [Dom((3, 2)), Dom(())]),
    Spec("concatenate/bool", lambda x, y: lax.concatenate([x, y], 1), [Dom((2, 1), **BOOL), Dom((2, 3), **BOOL)]),
    Spec("stack/int-first", lambda x, y: lax.stack([x, y], 0), [Dom((3,), **I32), Dom((3,), **I32)]),
    Spec("tile/int", lambda x: lax.tile(x, (1, 3)), [Dom((2, 2), **I32)]),
    Spec("split/int-empty-piece", lambda x: tuple(lax.split(x, (0, 2, 1), 1)), [Dom((2, 3), **I32)]),
    Spec("device_put/three", device_put, [Dom((3,)), Dom((2, 2), **I32), Dom(())]),
]

test_axes, test_random = vmap_spec_tests(SPECS)


# --- the user API on NumPy-style code, against a Python loop -------------------------------------------------


def numpy_style(x, w):
    y = x.reshape(2, 3).T  # (3, 2)
    z = jnp.concatenate([y, w], axis=0)  # w unbatched: (5, 2)
    return jnp.flip(z, 0)[1:4], jnp.stack([x, x[::-1]], axis=1)


@pytest.mark.parametrize("in_axes", [(0, None), (1, None), (0, 0)])
def test_api_against_loop(in_axes):
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal((4, 6)), rng.standard_normal((4, 2, 2))
    x_in = np.moveaxis(xs, 0, in_axes[0])
    w_in = ws[0] if in_axes[1] is None else ws
    got = transforms.vmap(numpy_style, in_axes=in_axes)(x_in, w_in)
    unbatched = make_jaxpr(numpy_style)(xs[0], ws[0])
    per_slice = [eval_jaxpr(unbatched, xs[b], ws[0] if in_axes[1] is None else ws[b]) for b in range(4)]
    for j, out in enumerate(got):
        assert_same(out, np.stack([r[j] for r in per_slice]), f"output {j}")


MANY = 12  # operands or results, beyond any per-count rule table
MIXED = (0, None, 1, None, None, 0, 1, None, 0, None, 1, 0)  # batched at either axis, or unbatched
MANY_OPERANDS = [
    Spec("concatenate/twelve", lambda *xs: lax.concatenate(xs, 1), [Dom((2, k % 3 + 1)) for k in range(MANY)]),
    Spec("stack/twelve", lambda *xs: lax.stack(xs, 1), [Dom((2, 3))] * MANY),
    Spec("device_put/twelve", device_put, [Dom((2, 3)) if k % 2 else Dom((2, 2), **I32) for k in range(MANY)]),
]


@pytest.mark.parametrize("spec", MANY_OPERANDS, ids=lambda s: s.name)
@pytest.mark.parametrize("in_axes", [(0,) * MANY, MIXED], ids=["batched", "mixed"])
def test_many_operands(spec, in_axes):
    """One rule serves any operand count: 12 operands, all batched or mixed with unbatched ones."""
    out_axes = (1,) * len(make_jaxpr(spec.fn)(*[d.draw(np.random.default_rng(0)) for d in spec.domains]).out_avals)
    check_config(spec, Config(in_axes, out_axes, 3))


MANY_RESULTS = [
    Spec("split/twelve", lambda x: tuple(lax.split(x, (k % 3 for k in range(MANY)), 1)), [Dom((2, MANY))]),
    Spec("unstack/twelve", lambda x: tuple(bind("unstack", x, axis=1)), [Dom((2, MANY))]),
]


@pytest.mark.parametrize("spec", MANY_RESULTS, ids=lambda s: s.name)
@pytest.mark.parametrize("in_axis", [0, 2])
def test_many_results(spec, in_axis):
    """One rule serves any result: 12 results, the batch axis placed before or after the split axis."""
    check_config(spec, Config((in_axis,), (0,) * MANY, 3))


def test_unbatched_operands_stay_unbatched():
    """pad with an unbatched operand and a batched value pads the operand once, unbatched (no broadcast
    of it before the pad), as the rule's `math` says."""
    closed = make_jaxpr(lambda x, v: lax.pad(x, v, ((1, 1, 0),)))(np.ones(3), np.float64(0))
    program = batched_program(closed, Config((None, 0), (0,), 4))
    pads = [e for e in program.jaxpr.eqns if e.primitive == "pad"]
    assert pads and all(e.outvars[0].aval.shape == (5,) for e in pads)
    got = eval_jaxpr(program, np.arange(3.0), np.arange(4.0))[0]
    want = np.stack([np.pad(np.arange(3.0), 1, constant_values=v) for v in np.arange(4.0)])
    assert_same(got, want, "pad")


@pytest.mark.parametrize("config", [Config((0, None), (0,), 3), Config((None, 0), (1,), 2)], ids=str)
def test_numpy_int_params(config):
    """Params printed as NumPy ints (`np.int64(1)`), as in parsed fixtures: the rules read them as ints."""
    closed = parse_jaxpr(test_ad_shape.NP_INT_PARAMS)
    rng = np.random.default_rng(0)
    args = [rng.uniform(-2, 2, (3, 4)), np.float64(0.5)]
    args = [np.stack([x + k for k in range(config.size)], axis) if axis is not None else x
            for x, axis in zip(args, config.in_axes, strict=True)]
    got = eval_jaxpr(batched_program(closed, config), *args, check=True)
    assert_same(got[0], loop_reference(closed, args, config)[0], f"{config}")


# --- oracle -------------------------------------------------------------------------------------------------

def test_oracle():
    """Every shape case, those returning their inputs or literals as they are included, with no skip."""
    outcomes = assert_oracle("shape", ("vmap",))
    assert outcomes and all(o.status == "passed" for o in outcomes), [o for o in outcomes if o.status != "passed"]
