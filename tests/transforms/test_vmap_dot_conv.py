"""Batching rules of the contractions (transforms/batching/rules/dot_conv.py): vmap of dot_general and
conv_general_dilated against a loop over slices, at every batch-axis position of each operand and on random
configurations; which nodes each case builds (no broadcast of an unbatched operand, no identity ops); JAX's
own vmap(vmap(vdot)) test; then the `dot_conv` oracle family against jax.vmap."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ir.numpy as jnp
from ir import lax, make_jaxpr
from ir.errors import UnsupportedPrimitive
from tests.transforms.ad_helpers import Dom, Spec
from tests.transforms.test_ad_dot_conv import GROUP_SIZES, LOW_PRECISION, conv, conv_specs, dot, dot_specs
from tests.transforms.test_ad_dot_conv import SPECS as AD_SPECS
from tests.transforms.vmap_helpers import (
    RANDOM_EXAMPLES,
    Config,
    assert_oracle,
    batched_program,
    check_config,
    configs,
    vmap_spec_tests,
)
from transforms import vmap

AD_ROWS = {s.name: s for s in AD_SPECS + LOW_PRECISION}

SPECS = [
    *(AD_ROWS[name] for name in (
        "dot/matmul", "dot/vecmat", "dot/outer", "dot/contract-two-crossed", "dot/batch-not-leading",
        "dot/complex-batched", "dot/same-operand", "dot/mixed-f64-f32",
        "conv/1d", "conv/1d-nwc-stride2", "conv/1d-everything", "conv/2d-mixed-layouts", "conv/2d-feature-groups",
        "conv/1d-batch-groups-strided", "conv/empty-batch")),
    Spec("dot/int8-preferred-int32", dot((((0,), (0,)), ((), ())), preferred_element_type="int32"),
         [Dom((4, 3), dtype="int8", values=(-100, 3, 90)), Dom((4, 2), dtype="int8", values=(-7, 100))]),
    Spec("dot/bool", dot((((1,), (0,)), ((), ()))), [Dom((2, 3), dtype="bool", values=(True, False)),
                                                     Dom((3, 2), dtype="bool", values=(True, False))]),
    Spec("conv/int32-groups", conv((1,), ((1, 0),), ("NWC", "OIW", "CNW"), feature_group_count=2),
         [Dom((1, 3, 4), dtype="int32", values=(-2, 1, 3)), Dom((2, 2, 2), dtype="int32", values=(-1, 4))]),
    Spec("conv/1d-batch-groups-layouts", conv((1,), "VALID", ("WCN", "WOI", "CWN"), batch_group_count=2),
         [Dom((3, 1, 4)), Dom((2, 4, 1))]),
]

test_axes, test_random = vmap_spec_tests(SPECS)


@pytest.mark.parametrize("specs", [dot_specs(), conv_specs()], ids=["dot_general", "conv_general_dilated"])
@RANDOM_EXAMPLES
@given(data=st.data())
def test_random_contractions(specs, data):
    """Random dimension numbers, layouts, strides, padding, dilations and groups (the AD tests' strategies),
    batched in a random configuration."""
    spec = data.draw(specs)
    check_config(spec, data.draw(configs(spec)), data.draw(st.integers(0, 2**31 - 1)))


# --- what each case builds --------------------------------------------------------------------------------


def _primitives(spec: Spec, in_axes, size: int = 3) -> list[str]:
    example = [d.draw(np.random.default_rng(0)) for d in spec.domains]
    closed = make_jaxpr(spec.fn)(*example)
    program = batched_program(closed, Config(tuple(in_axes), (0,) * len(closed.out_avals), size))
    return [e.primitive for e in program.jaxpr.eqns]


ROW = {**AD_ROWS, **{s.name: s for s in SPECS}}


@pytest.mark.parametrize("name, in_axes, built", [
    ("dot/matmul", (0, 0), ["dot_general"]),
    ("dot/matmul", (0, None), ["dot_general"]),  # the batch axis is the first lhs free dim: at 0 already
    ("dot/vecmat", (None, 0), ["dot_general"]),  # the lhs is fully contracted: rhs free dims come first
    ("dot/matmul", (None, 0), ["dot_general", "transpose"]),
    ("dot/batched", (0, None), ["dot_general", "transpose"]),
    # lhs batched, NCW: the batch axis merges into N where it lies (no transpose), and out of it
    ("conv/1d", (0, None), ["reshape", "conv_general_dilated", "reshape"]),
    ("conv/1d", (None, 0), ["reshape", "conv_general_dilated", "reshape", "transpose"]),
    ("conv/1d", (0, 0), ["transpose", "reshape", "reshape", "conv_general_dilated", "reshape", "transpose"]),
    ("conv/1d-nwc-stride2", (None, 0), ["transpose", "reshape", "conv_general_dilated", "reshape", "transpose"]),
    ("conv/2d-feature-groups", (None, 0), ["reshape", "transpose", "reshape", "conv_general_dilated", "reshape",
                                           "transpose", "reshape"]),
    ("conv/2d-feature-groups", (0, 0), ["transpose", "reshape", "reshape", "conv_general_dilated", "reshape",
                                        "transpose"]),
])
def test_each_case_builds_only_what_it_needs(name, in_axes, built):
    """The unbatched operand is used as it is (never broadcast), and no step is an identity."""
    assert sorted(_primitives(ROW[name], in_axes)) == sorted(built)


def test_empty_batch_of_a_grouped_convolution_is_zeros():
    """B = 0 with both operands batched would make the group count 0: JAX returns zeros instead."""
    assert _primitives(ROW["conv/2d-feature-groups"], (0, 0), size=0) == ["broadcast_in_dim"]
    check_config(ROW["conv/2d-feature-groups"], Config((0, 0), (0,), 0))


def test_ragged_dot_has_no_batching_rule():
    """JAX cannot vmap ragged_dot either."""
    spec = Spec("ragged/default", lambda x, y, gs: lax.ragged_dot(x, y, gs), [Dom((6, 4)), Dom((3, 4, 2)),
                                                                             GROUP_SIZES])
    with pytest.raises(UnsupportedPrimitive, match="ragged_dot_general"):
        check_config(spec, Config((0, None, None), (0,), 2))


# --- JAX's tests ------------------------------------------------------------------------------------------


def test_vmap_of_vmap_of_vdot_is_one_dot_general():
    """JAX's testNestedBatchingMatMat-style check: vmap(vmap(vdot)) over (2, 3, 5) arrays is one dot_general
    with two batch dimensions, and right."""
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 3, 5))
    nested = vmap(vmap(jnp.vdot))
    np.testing.assert_allclose(nested(x, y), np.einsum("abk,abk->ab", x, y), rtol=1e-13)
    program = make_jaxpr(nested)(x, y)
    assert [e.primitive for e in program.jaxpr.eqns] == ["dot_general"]


@pytest.mark.parametrize("in_axes, shapes, expect", [
    ((0, None), ((4, 3, 5), (5, 2)), lambda x, w: np.einsum("bij,jk->bik", x, w)),
    ((None, 1), ((3, 5), (5, 4, 2)), lambda x, w: np.einsum("ij,jbk->bik", x, w)),
])
def test_matmul_with_one_side_unbatched_does_not_broadcast_it(in_axes, shapes, expect):
    rng = np.random.default_rng(2)
    x, w = (rng.standard_normal(s) for s in shapes)
    batched = vmap(jnp.matmul, in_axes=in_axes)
    np.testing.assert_allclose(batched(x, w), expect(x, w), rtol=1e-13)
    built = [e.primitive for e in make_jaxpr(batched)(x, w).jaxpr.eqns]
    assert built.count("dot_general") == 1 and "broadcast_in_dim" not in built, built


# --- oracle -----------------------------------------------------------------------------------------------

# Primitives of the dot_conv fixtures whose batching rules live in other families' modules (einsum/trace).
OTHER_FAMILIES = {"iota", "eq", "broadcast_in_dim", "select_n", "reduce_sum"}


def test_oracle():
    outcomes = assert_oracle("dot_conv", ("vmap",))
    skipped = {re.search(r"primitive '([^']+)'", o.reason).group(1) for o in outcomes if o.status == "skipped"}
    assert skipped <= OTHER_FAMILIES, f"skipped for dot_conv primitives: {skipped - OTHER_FAMILIES}"
    assert sum(o.status == "passed" for o in outcomes) >= len(outcomes) - 1
