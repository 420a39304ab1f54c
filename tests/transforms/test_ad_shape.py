"""AD rules of the shape primitives (transforms/ad/rules/shape.py): JVP vs central differences and the
transpose identity ⟨v, J u⟩ = ⟨Jᵀ v, u⟩ on a table of param variants and on random configurations,
then the `shape` oracle family against JAX."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ir import lax, parse_jaxpr
from tests.transforms.ad_helpers import (
    CONFIG_EXAMPLES,
    Dom,
    Spec,
    assert_oracle,
    check_fd,
    check_spec,
    check_transpose,
    program_of,
    spec_test,
)

C128 = "complex128"
SPECS = [
    Spec("reshape", lambda x: lax.reshape(x, (4, 3)), [Dom((3, 4))]),
    Spec("reshape/3d", lambda x: lax.reshape(x, (4, 6)), [Dom((2, 3, 4))]),
    Spec("reshape/dimensions", lambda x: lax.reshape(x, (12,), dimensions=(1, 0)), [Dom((3, 4))]),
    Spec("reshape/dimensions-3d", lambda x: lax.reshape(x, (6, 4), dimensions=(2, 0, 1)), [Dom((2, 3, 4))]),
    Spec("transpose", lambda x: lax.transpose(x, (1, 0)), [Dom((3, 4))]),
    Spec("transpose/3d", lambda x: lax.transpose(x, (2, 0, 1)), [Dom((2, 3, 4))]),
    Spec("transpose/3d-cycle", lambda x: lax.transpose(x, (1, 2, 0)), [Dom((2, 3, 4))]),
    Spec("transpose/complex", lambda x: lax.transpose(x, (1, 0)), [Dom((3, 4), dtype=C128)]),
    Spec("broadcast/scalar", lambda x: lax.broadcast_in_dim(x, (3, 4), ()), [Dom(())]),
    Spec("broadcast/leading", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), [Dom((3, 4))]),
    Spec("broadcast/middle", lambda x: lax.broadcast_in_dim(x, (3, 2, 4), (0, 2)), [Dom((3, 4))]),
    Spec("broadcast/stretch", lambda x: lax.broadcast_in_dim(x, (3, 4), (0, 1)), [Dom((3, 1))]),
    Spec("broadcast/stretch-and-add", lambda x: lax.broadcast_in_dim(x, (2, 3, 5, 4), (1, 2, 3)),
         [Dom((1, 1, 4))]),
    Spec("broadcast/keep-size-1", lambda x: lax.broadcast_in_dim(x, (2, 1, 4), (1, 2)), [Dom((1, 4))]),
    Spec("expand_dims", lambda x: lax.expand_dims(x, (0, 2)), [Dom((3, 4))]),
    Spec("squeeze", lambda x: lax.squeeze(x, (1,)), [Dom((3, 1, 4))]),
    Spec("squeeze/two", lambda x: lax.squeeze(x, (0, 2)), [Dom((1, 4, 1))]),
    Spec("rev", lambda x: lax.rev(x, (0,)), [Dom((3, 4))]),
    Spec("rev/3d", lambda x: lax.rev(x, (0, 2)), [Dom((2, 3, 4))]),
    Spec("slice", lambda x: lax.slice(x, (1, 0), (3, 3)), [Dom((3, 4))]),
    Spec("slice/strides", lambda x: lax.slice(x, (0, 1), (5, 7), (2, 3)), [Dom((5, 7))]),
    Spec("slice/strides-3d", lambda x: lax.slice(x, (1, 0, 2), (2, 4, 6), (1, 2, 4)), [Dom((2, 4, 7))]),
    Spec("slice/empty", lambda x: lax.slice(x, (1, 2), (3, 2)), [Dom((3, 4))]),
    Spec("slice/complex", lambda x: lax.slice(x, (0, 1), (3, 4), (2, 2)), [Dom((3, 4), dtype=C128)]),
    Spec("pad/edges", lambda x: lax.pad(x, 0.0, ((1, 2, 0), (0, 1, 0))), [Dom((3, 4))]),
    Spec("pad/negative", lambda x: lax.pad(x, 0.0, ((-1, 0, 0), (1, -2, 0))), [Dom((3, 4))]),
    Spec("pad/interior", lambda x: lax.pad(x, 0.0, ((0, 0, 1), (1, 1, 2))), [Dom((3, 4))]),
    Spec("pad/interior-negative", lambda x: lax.pad(x, 0.0, ((1, -1, 1), (-2, 2, 2))), [Dom((3, 4))]),
    Spec("pad/value", lambda x, v: lax.pad(x, v, ((1, 1, 1), (2, -1, 0))), [Dom((3, 4)), Dom(())]),
    Spec("pad/value-only", lambda v: lax.pad(np.ones((2, 3)), v, ((1, 0, 1), (0, 2, 0))), [Dom(())]),
    Spec("pad/complex", lambda x: lax.pad(x, 0j, ((1, -1, 1), (0, 2, 0))), [Dom((3, 4), dtype=C128)]),
    Spec("concatenate", lambda x, y: lax.concatenate([x, y], 0), [Dom((3, 4)), Dom((2, 4))]),
    Spec("concatenate/three", lambda x, y, z: lax.concatenate([x, y, z], 1),
         [Dom((3, 4)), Dom((3, 1)), Dom((3, 2))]),
    Spec("concatenate/reused", lambda x: lax.concatenate([x, lax.rev(x, (0,)), x], 0), [Dom((2, 3))]),
    Spec("concatenate/one-active", lambda x: lax.concatenate([np.ones((2, 3)), x], 1), [Dom((2, 2))]),
    Spec("stack", lambda x, y: lax.stack([x, y], 1), [Dom((3, 4)), Dom((3, 4))]),
    Spec("stack/last", lambda x, y, z: lax.stack([x, y, z], 2), [Dom((2, 3))] * 3),
    Spec("tile", lambda x: lax.tile(x, (2, 1)), [Dom((3, 4))]),
    Spec("tile/3d", lambda x: lax.tile(x, (2, 3, 1)), [Dom((2, 1, 3))]),
    Spec("split", lambda x: tuple(lax.split(x, (1, 3), 1)), [Dom((3, 4))]),
    Spec("split/three", lambda x: tuple(lax.split(x, (2, 0, 3), 0)), [Dom((5, 2))]),
    Spec("split/one-used", lambda x: lax.split(x, (1, 2, 1), 1)[1], [Dom((3, 4))]),
    Spec("device_put", lambda x: lax.device_put(x), [Dom((3, 4))]),
    Spec("copy", lambda x: lax.copy(x), [Dom((3, 4))]),
    Spec("pad-reflect-like", lambda x: lax.concatenate([lax.rev(lax.slice(x, (1, 0), (2, 4)), (0,)), x], 0),
         [Dom((3, 4))]),
]

# The maps are linear, so argument values hardly matter: a row needs few examples (its derivative programs
# are cached across them), and each random configuration is a new program to differentiate (0.2-1 s).


test_spec = spec_test(SPECS)


# --- random configurations --------------------------------------------------------------------------

sizes = st.integers(1, 4)


@st.composite
def pad_specs(draw):
    shape = tuple(draw(st.lists(sizes, min_size=1, max_size=3)))
    config = []
    for n in shape:
        interior = draw(st.integers(0, 2))
        dilated = n + (n - 1) * interior
        lo = draw(st.integers(-dilated, 3))
        hi = draw(st.integers(-(dilated + min(lo, 0)), 3))
        config.append((lo, hi, interior))
    if draw(st.booleans()):
        return Spec(f"pad{config}", lambda x, v: lax.pad(x, v, config), [Dom(shape), Dom(())])
    return Spec(f"pad{config}", lambda x: lax.pad(x, 0.5, config), [Dom(shape)])


@st.composite
def slice_specs(draw):
    shape = tuple(draw(st.lists(sizes, min_size=1, max_size=3)))
    starts = [draw(st.integers(0, n)) for n in shape]
    limits = [draw(st.integers(s, n)) for s, n in zip(starts, shape, strict=True)]
    strides = [draw(st.integers(1, 3)) for _ in shape]
    return Spec(f"slice{starts, limits, strides}", lambda x: lax.slice(x, starts, limits, strides), [Dom(shape)])


@st.composite
def broadcast_specs(draw):
    operand = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
    rank = len(operand) + draw(st.integers(0, 2))
    dims = sorted(draw(st.permutations(range(rank)))[:len(operand)])
    out = [draw(st.integers(1, 3)) for _ in range(rank)]
    for n, d in zip(operand, dims, strict=True):
        out[d] = n if n != 1 else draw(st.integers(1, 3))
    return Spec(f"broadcast{operand, out, dims}", lambda x: lax.broadcast_in_dim(x, out, dims), [Dom(operand)])


@st.composite
def reshape_specs(draw):
    shape = tuple(draw(st.lists(sizes, min_size=1, max_size=4)))
    dims = draw(st.none() | st.permutations(range(len(shape))))
    new_sizes = draw(st.permutations(shape))
    return Spec(f"reshape{shape, new_sizes, dims}", lambda x: lax.reshape(x, new_sizes, dims), [Dom(shape)])


@st.composite
def transpose_specs(draw):
    shape = tuple(draw(st.lists(sizes, min_size=1, max_size=4)))
    perm = draw(st.permutations(range(len(shape))))
    return Spec(f"transpose{shape, perm}", lambda x: lax.transpose(x, perm), [Dom(shape)])


@st.composite
def concatenate_specs(draw):
    rank = draw(st.integers(1, 3))
    axis = draw(st.integers(0, rank - 1))
    base = [draw(sizes) for _ in range(rank)]
    shapes = [tuple(draw(st.integers(0, 3)) if a == axis else n for a, n in enumerate(base))
              for _ in range(draw(st.integers(2, 5)))]
    return Spec(f"concatenate{shapes, axis}", lambda *xs: lax.concatenate(xs, axis), [Dom(s) for s in shapes])


@pytest.mark.parametrize("specs", [pad_specs(), slice_specs(), broadcast_specs(), reshape_specs(),
                                   transpose_specs(), concatenate_specs()],
                         ids=["pad", "slice", "broadcast", "reshape", "transpose", "concatenate"])
@CONFIG_EXAMPLES
@given(data=st.data())
def test_random_configs(specs, data):
    spec = data.draw(specs)
    check_spec(spec, data.draw(st.integers(0, 2**31 - 1)))


# --- params printed as NumPy ints (`np.int64(1)`): typed fields hold their values, text fields their spelling

NP_INT_PARAMS = """{ lambda ; a:f64[3,4] v:f64[]. let
    b:f64[4,3] = reshape[dimensions=(np.int64(1), np.int64(0)) new_sizes=(np.int64(4), np.int64(3)) sharding=None] a
    c:f64[3,4] = transpose[permutation=(np.int64(1), np.int64(0))] b
    d:f64[3,2] = slice[limit_indices=(np.int64(3), np.int64(4)) start_indices=(np.int64(0), np.int64(1))
                       strides=(np.int64(1), np.int64(2))] c
    e:f64[1,3,2] = broadcast_in_dim[broadcast_dimensions=(np.int64(1), np.int64(2))
                                    shape=(np.int64(1), np.int64(3), np.int64(2)) sharding=None] d
    f:f64[3,2] = squeeze[dimensions=(np.int64(0),)] e
    g:f64[3,2] = rev[dimensions=(np.int64(0),)] f
    h:f64[4,4] = pad[padding_config=((np.int64(1), np.int64(0), np.int64(0)),
                                     (np.int64(0), np.int64(1), np.int64(1)))] g v
    i:f64[4,1] j:f64[4,3] = split[axis=1 sizes=(np.int64(1), np.int64(3))] h
  in (j,) }"""


@CONFIG_EXAMPLES
@given(st.integers(0, 2**31 - 1))
def test_numpy_int_params(seed):
    closed = parse_jaxpr(NP_INT_PARAMS)
    rng = np.random.default_rng(seed)
    args = [rng.uniform(-2, 2, (3, 4)), np.float64(rng.uniform(-2, 2))]
    check_fd(closed, args, seed)
    check_transpose(closed, args, seed)


# --- limits -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [
    Spec("concatenate/12", lambda *xs: lax.concatenate(xs, 0), [Dom((1,))] * 12),
    Spec("stack/12", lambda *xs: lax.stack(xs, 0), [Dom((2,))] * 12),
    Spec("split/12", lambda x: tuple(lax.split(x, (1,) * 12, 0)), [Dom((12, 2))]),
], ids=lambda s: s.name)
def test_variadic_rules_take_any_operand_or_result_count(spec):
    """Variadic rules match the operands and seeds they do not name as one list: 12 is past any fixed count."""
    args = spec.draw(0)
    closed = program_of(spec, args)
    check_fd(closed, args, 0)
    check_transpose(closed, args, 0)


# --- oracle -------------------------------------------------------------------------------------------

# Primitives of the shape fixtures whose rules live in other families' modules.
OTHER_FAMILIES = {"add", "mul", "eq", "ge", "select_n", "dot_general", "convert_element_type"}


def test_oracle():
    outcomes = assert_oracle("shape", ("jvp", "vjp"))
    skipped = {re.search(r"primitive '([^']+)'", o.reason).group(1) for o in outcomes if o.status == "skipped"}
    assert skipped <= OTHER_FAMILIES, f"skipped for shape primitives: {skipped - OTHER_FAMILIES}"
    assert any(o.status == "passed" for o in outcomes)

