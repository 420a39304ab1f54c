"""AD rules of the contractions (transforms/ad/rules/dot_conv.py): JVP vs central differences and the
transpose identity ⟨v, J u⟩ = ⟨Jᵀ v, u⟩ on a table of dimension-number and convolution variants and on
random configurations, the branches JAX's transposes take (groups, dtype conversions, empty cotangents),
then the `dot_conv` oracle family against JAX."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ir import lax
from ir.errors import UnsupportedPrimitive
from ir.params import Record
from ir.tracing import bind
from tests.transforms.ad_helpers import (
    CONFIG_EXAMPLES,
    Dom,
    Spec,
    assert_oracle,
    check_fd,
    check_spec,
    check_transpose,
    jvp_eval,
    program_of,
    spec_test,
    vjp_eval,
)
from transforms.ad.programs import vjp_program

C128 = "complex128"


def dot(dims, **kw):
    """dot_general with dimension numbers written ((lc, rc), (lb, rb))."""
    return lambda x, y: lax.dot_general(x, y, dims, **kw)


def conv(strides, padding, specs=None, **kw):
    return lambda x, w: lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=specs, **kw)


def ragged_dot_general(lhs, rhs, group_sizes, dims, lhs_ragged, rhs_group):
    rdn = Record("RaggedDotDimensionNumbers", (("dot_dimension_numbers", dims),
                                               ("lhs_ragged_dimensions", lhs_ragged),
                                               ("rhs_group_dimensions", rhs_group)))
    return bind("ragged_dot_general", lhs, rhs, group_sizes, group_offset=None, out_sharding=None,
                precision=None, preferred_element_type=None, ragged_dot_dimension_numbers=rdn)


GROUP_SIZES = Dom((3,), dtype="int32", values=(0, 1, 2))  # 3 groups over at most 6 rows

SPECS = [
    # dot_general: ((lhs contracting, rhs contracting), (lhs batch, rhs batch))
    Spec("dot/matmul", dot((((1,), (0,)), ((), ()))), [Dom((3, 4)), Dom((4, 5))]),
    Spec("dot/matmul-both-transposed", dot((((0,), (1,)), ((), ()))), [Dom((4, 3)), Dom((5, 4))]),
    Spec("dot/lhs-contract-dim0", dot((((0,), (0,)), ((), ()))), [Dom((3, 4)), Dom((3, 2))]),
    Spec("dot/vector", dot((((0,), (0,)), ((), ()))), [Dom((6,)), Dom((6,))]),
    Spec("dot/matvec", dot((((1,), (0,)), ((), ()))), [Dom((3, 4)), Dom((4,))]),
    Spec("dot/vecmat", dot((((0,), (0,)), ((), ()))), [Dom((3,)), Dom((3, 4))]),
    Spec("dot/outer", dot((((), ()), ((), ()))), [Dom((3,)), Dom((4,))]),
    Spec("dot/contract-two", dot((((1, 2), (0, 1)), ((), ()))), [Dom((2, 3, 4)), Dom((3, 4, 2))]),
    Spec("dot/contract-two-crossed", dot((((1, 2), (2, 0)), ((), ()))), [Dom((2, 3, 4)), Dom((4, 5, 3))]),
    Spec("dot/full-contraction", dot((((0, 1), (1, 0)), ((), ()))), [Dom((3, 4)), Dom((4, 3))]),
    Spec("dot/batched", dot((((2,), (1,)), ((0,), (0,)))), [Dom((2, 3, 4)), Dom((2, 4, 2))]),
    Spec("dot/batch-not-leading", dot((((0,), (1,)), ((2,), (0,)))), [Dom((3, 2, 4)), Dom((4, 3, 5))]),
    Spec("dot/two-batch-dims-crossed", dot((((1,), (3,)), ((0, 3), (2, 0)))),
         [Dom((2, 3, 4, 5)), Dom((5, 1, 2, 3))]),
    Spec("dot/batch-only", dot((((), ()), ((0,), (1,)))), [Dom((3, 2)), Dom((4, 3))]),
    Spec("dot/complex", dot((((1,), (0,)), ((), ()))), [Dom((3, 4), dtype=C128), Dom((4, 2), dtype=C128)]),
    Spec("dot/complex-batched", dot((((0,), (2,)), ((1,), (0,)))),
         [Dom((3, 2, 4), dtype=C128), Dom((2, 5, 3), dtype=C128)]),
    Spec("dot/precision", dot((((1,), (0,)), ((), ())), precision="highest"), [Dom((3, 4)), Dom((4, 2))]),
    Spec("dot/same-operand", lambda x: lax.dot_general(x, x, (((1,), (1,)), ((), ()))), [Dom((3, 4))]),
    Spec("dot/int-operand", lambda x, n: lax.dot_general(x, lax.convert_element_type(n, "float64"),
                                                          (((1,), (0,)), ((), ()))),
         [Dom((3, 4)), Dom((4, 2), dtype="int32", values=(-2, 1, 3))]),
    # conv_general_dilated: (strides, padding, layouts) and dilations, groups
    Spec("conv/1d", conv((1,), "VALID"), [Dom((2, 3, 7)), Dom((4, 3, 3))]),
    Spec("conv/1d-nwc-stride2", conv((2,), "VALID", ("NWC", "WIO", "NWC")), [Dom((2, 9, 3)), Dom((3, 3, 4))]),
    Spec("conv/1d-stride-uneven", conv((3,), ((1, 0),)), [Dom((1, 2, 8)), Dom((2, 2, 2))]),
    Spec("conv/1d-rhs-dilation-same", conv((1,), "SAME", rhs_dilation=(2,)), [Dom((1, 2, 8)), Dom((3, 2, 3))]),
    Spec("conv/1d-lhs-dilation", conv((1,), ((2, 1),), ("NWC", "WIO", "NWC"), lhs_dilation=(2,)),
         [Dom((1, 4, 2)), Dom((3, 2, 2))]),
    Spec("conv/1d-negative-padding", conv((1,), ((-1, 2),)), [Dom((1, 2, 6)), Dom((2, 2, 3))]),
    Spec("conv/1d-everything", conv((2,), ((2, -1),), ("NCW", "WOI", "WNC"), lhs_dilation=(2,),
                                    rhs_dilation=(3,)), [Dom((2, 3, 5)), Dom((2, 4, 3))]),
    Spec("conv/2d-nchw-same", conv((1, 1), "SAME"), [Dom((1, 2, 5, 5)), Dom((3, 2, 3, 3))]),
    Spec("conv/2d-nhwc-stride2-pad", conv((2, 2), ((1, 0), (0, 1)), ("NHWC", "HWIO", "NHWC")),
         [Dom((1, 5, 6, 2)), Dom((2, 2, 2, 3))]),
    Spec("conv/2d-mixed-layouts", conv((1, 2), ((0, 1), (1, 1)), ("NHCW", "OHWI", "HCNW"), rhs_dilation=(1, 2)),
         [Dom((2, 4, 3, 5)), Dom((2, 2, 2, 3))]),
    Spec("conv/2d-lhs-rhs-dilation", conv((1, 1), ((1, 1), (2, 0)), lhs_dilation=(2, 1), rhs_dilation=(1, 2)),
         [Dom((1, 1, 3, 4)), Dom((2, 1, 3, 2))]),
    Spec("conv/2d-feature-groups", conv((1, 1), "VALID", feature_group_count=2),
         [Dom((1, 4, 4, 4)), Dom((6, 2, 3, 3))]),
    Spec("conv/2d-depthwise-strided", conv((2, 1), ((1, 1), (0, 0)), ("NHWC", "HWIO", "NHWC"),
                                           feature_group_count=3, rhs_dilation=(1, 2)),
         [Dom((2, 5, 5, 3)), Dom((2, 2, 1, 6))]),
    Spec("conv/2d-batch-groups", conv((1, 1), "VALID", batch_group_count=2),
         [Dom((4, 2, 4, 4)), Dom((4, 2, 2, 2))]),
    Spec("conv/1d-batch-groups-strided", conv((2,), ((1, 2),), ("NWC", "OWI", "CWN"), batch_group_count=3,
                                              lhs_dilation=(2,)), [Dom((3, 4, 2)), Dom((6, 2, 2))]),
    Spec("conv/3d", conv((1, 2, 1), ((0, 0), (1, 0), (0, 1))), [Dom((1, 2, 3, 4, 3)), Dom((2, 2, 2, 2, 2))]),
    Spec("conv/complex", conv((1, 1), ((1, 0), (0, 1)), feature_group_count=2),
         [Dom((1, 2, 3, 3), dtype=C128), Dom((2, 1, 2, 2), dtype=C128)]),
    Spec("conv/empty-batch", conv((1,), "VALID"), [Dom((0, 2, 5)), Dom((3, 2, 2))]),
    Spec("conv/empty-window", conv((1,), "VALID"), [Dom((2, 2, 5)), Dom((3, 2, 0))]),
    # ragged_dot_general with a ragged lhs non-contracting dimension (the form JAX transposes)
    Spec("ragged/default", lambda x, y, gs: lax.ragged_dot(x, y, gs), [Dom((6, 4)), Dom((3, 4, 2)), GROUP_SIZES]),
    Spec("ragged/batched", lambda x, y, gs: ragged_dot_general(x, y, gs, (((2,), (1,)), ((0,), (0,))), (1,), (2,)),
         [Dom((2, 6, 3)), Dom((2, 3, 3, 4)), GROUP_SIZES]),
    Spec("ragged/transposed-operands", lambda x, y, gs: ragged_dot_general(x, y, gs, (((0,), (2,)), ((), ())),
                                                                           (1,), (1,)),
         [Dom((4, 6)), Dom((2, 3, 4)), GROUP_SIZES]),
]

# A row's derivative programs are built once (ad_helpers caches them by fingerprint), so its examples
# only cost NumPy; random configurations each build new programs.


test_spec = spec_test(SPECS)


# --- the branches of JAX's transposes ----------------------------------------------------------------

F32 = "float32"
# f32 operands: the transposes round (or convert) to float32, so both identities hold to f32 precision.
# The ops are bilinear, so central differences with ε = 1 are exact up to rounding.
LOW_PRECISION = [
    Spec("dot/f32", dot((((1,), (0,)), ((), ()))), [Dom((3, 4), dtype=F32), Dom((4, 5), dtype=F32)]),
    Spec("dot/f32-preferred-f64", dot((((1,), (0,)), ((), ())), preferred_element_type="float64"),
         [Dom((3, 4), dtype=F32), Dom((4, 2), dtype=F32)]),
    Spec("dot/mixed-f64-f32", dot((((0,), (1,)), ((1,), (0,)))), [Dom((3, 2, 4)), Dom((2, 3), dtype=F32)]),
    Spec("conv/f32-preferred-f64", conv((1, 2), ((1, 0), (1, 1)), preferred_element_type="float64"),
         [Dom((1, 2, 4, 5), dtype=F32), Dom((3, 2, 2, 2), dtype=F32)]),
    Spec("conv/f32-preferred-f64-batch-groups", conv((1,), "VALID", batch_group_count=2,
                                                     preferred_element_type="float64"),
         [Dom((4, 2, 5), dtype=F32), Dom((4, 2, 2), dtype=F32)]),
]


@pytest.mark.parametrize("spec", LOW_PRECISION, ids=lambda s: s.name)
def test_low_precision_and_dtype_conversions(spec):
    args = spec.draw(0)
    closed = program_of(spec, args)
    check_fd(closed, args, rtol=1e-5, eps=1.0)
    check_transpose(closed, args, rtol=1e-5)
    ct = [np.ones(v.aval.shape, v.aval.dtype.numpy) for v in closed.jaxpr.outvars]
    for got, x in zip(vjp_eval(closed, args, ct), args, strict=True):
        assert got.dtype == x.dtype and got.shape == x.shape


def _vjp_primitives(spec: Spec) -> set[str]:
    closed = program_of(spec, spec.draw(0))
    program, _ = vjp_program(closed, [0, 1])
    return {e.primitive for e in program.jaxpr.eqns}


ROW = {s.name: s for s in SPECS + LOW_PRECISION}


@pytest.mark.parametrize("name, allowed", [
    ("dot/matmul", {"dot_general"}),
    ("dot/batch-not-leading", {"dot_general", "transpose"}),
    ("dot/f32-preferred-f64", {"dot_general", "transpose", "convert_element_type"}),
    ("conv/2d-nchw-same", {"conv_general_dilated", "rev"}),
    ("conv/2d-feature-groups", {"conv_general_dilated", "rev", "reshape", "transpose"}),
])
def test_each_branch_builds_only_what_it_needs(name, allowed):
    """A branch adds conversions or regroupings only when JAX's transpose does (no identity ops)."""
    assert _vjp_primitives(ROW[name]) <= allowed


def test_empty_cotangent_gives_a_zero_kernel_cotangent():
    spec = Spec("conv/empty-batch", conv((1,), "VALID"), [Dom((0, 2, 5)), Dom((3, 2, 2))])
    args = spec.draw(0)
    closed = program_of(spec, args)
    dx, dw = vjp_eval(closed, args, [np.ones((0, 3, 4))])
    assert dx.shape == (0, 2, 5)
    np.testing.assert_array_equal(dw, np.zeros((3, 2, 2)))


def test_ragged_contracting_has_a_jvp_but_no_vjp():
    """JAX transposes ragged_dot_general only for a ragged non-contracting lhs dimension."""
    spec = Spec("ragged/contracting",
                lambda x, y, gs: ragged_dot_general(x, y, gs, (((1,), (0,)), ((), ())), (1,), ()),
                [Dom((2, 6)), Dom((6, 3)), GROUP_SIZES])
    args = spec.draw(0)
    closed = program_of(spec, args)
    check_fd(closed, args)
    with pytest.raises(UnsupportedPrimitive, match="ragged_dot_general"):
        vjp_eval(closed, args, [np.ones((3, 2, 3))])


# --- random configurations ------------------------------------------------------------------------------

sizes = st.integers(1, 3)


@st.composite
def dot_specs(draw):
    """Random dimension numbers: batch, contracting and free axes of each operand in random order."""
    n_batch, n_contract, n_lfree, n_rfree = (draw(st.integers(0, 2)) for _ in range(4))
    batch = [draw(sizes) for _ in range(n_batch)]
    contract = [draw(sizes) for _ in range(n_contract)]
    roles_l = [("b", k) for k in range(n_batch)] + [("c", k) for k in range(n_contract)] + [("f", k) for k in
                                                                                          range(n_lfree)]
    roles_r = [("b", k) for k in range(n_batch)] + [("c", k) for k in range(n_contract)] + [("f", k) for k in
                                                                                          range(n_rfree)]
    roles_l, roles_r = draw(st.permutations(roles_l)), draw(st.permutations(roles_r))

    def layout(roles):
        shape = tuple(batch[k] if r == "b" else contract[k] if r == "c" else draw(sizes) for r, k in roles)
        axes = {r: [a for k in range(len(roles)) for a, role in enumerate(roles) if role == (r, k)] for r in "bc"}
        return shape, axes

    (lshape, laxes), (rshape, raxes) = layout(roles_l), layout(roles_r)
    dims = ((tuple(laxes["c"]), tuple(raxes["c"])), (tuple(laxes["b"]), tuple(raxes["b"])))
    dtype = draw(st.sampled_from(["float64", C128]))
    return Spec(f"dot{dims}", dot(dims), [Dom(lshape, dtype=dtype), Dom(rshape, dtype=dtype)])


@st.composite
def conv_specs(draw):
    """Random 1-D/2-D convolutions: layouts, strides, padding, dilations, feature or batch groups."""
    n = draw(st.integers(1, 2))
    groups = draw(st.integers(1, 3))
    feature_groups, batch_groups = (groups, 1) if draw(st.booleans()) else (1, groups)
    batch = batch_groups * draw(st.integers(1, 2))
    in_features = feature_groups * draw(sizes)
    out_features = groups * draw(sizes)
    window = [draw(sizes) for _ in range(n)]
    rhs_dil = [draw(st.integers(1, 2)) for _ in range(n)]
    lhs_dil = [draw(st.integers(1, 2)) for _ in range(n)]
    strides = [draw(st.integers(1, 3)) for _ in range(n)]
    padding = [(draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(n)]
    spatial = [max(1, (k - 1) * r + 2 - lo - hi) + draw(st.integers(0, 3))
               for k, r, (lo, hi) in zip(window, rhs_dil, padding, strict=True)]
    lhs_spec, rhs_spec, out_spec = (tuple(draw(st.permutations(range(n + 2)))) for _ in range(3))
    lhs_shape = [0] * (n + 2)
    for axis, size in zip(lhs_spec, (batch, in_features, *spatial), strict=True):
        lhs_shape[axis] = size
    rhs_shape = [0] * (n + 2)
    for axis, size in zip(rhs_spec, (out_features, in_features // feature_groups, *window), strict=True):
        rhs_shape[axis] = size
    specs = lax.ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec)
    fn = conv(strides, padding, specs, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
              feature_group_count=feature_groups, batch_group_count=batch_groups)
    name = f"conv{strides, padding, lhs_dil, rhs_dil, feature_groups, batch_groups, lhs_spec, rhs_spec, out_spec}"
    return Spec(name, fn, [Dom(tuple(lhs_shape)), Dom(tuple(rhs_shape))])


@pytest.mark.parametrize("specs", [dot_specs(), conv_specs()], ids=["dot_general", "conv_general_dilated"])
@CONFIG_EXAMPLES
@given(data=st.data())
def test_random_configs(specs, data):
    spec = data.draw(specs)
    check_spec(spec, data.draw(st.integers(0, 2**31 - 1)))


# --- oracle -----------------------------------------------------------------------------------------------

# Primitives of the dot_conv fixtures whose rules live in other families' modules (einsum/trace).
OTHER_FAMILIES = {"iota", "eq", "broadcast_in_dim", "select_n", "reduce_sum"}


def test_oracle():
    outcomes = assert_oracle("dot_conv", ("jvp", "vjp"))
    skipped = {re.search(r"primitive '([^']+)'", o.reason).group(1) for o in outcomes if o.status == "skipped"}
    assert skipped <= OTHER_FAMILIES, f"skipped for dot_conv primitives: {skipped - OTHER_FAMILIES}"
    assert sum(o.status == "passed" for o in outcomes) >= 15


def test_jvp_of_a_dot_is_the_product_rule():
    """Against the math directly: d(x y) = dx y + x dy."""
    spec = ROW["dot/matmul"]
    x, y = spec.draw(3)
    dx, dy = spec.draw(4)
    [got] = jvp_eval(program_of(spec, [x, y]), [x, y], [dx, dy])
    np.testing.assert_allclose(got, dx @ y + x @ dy, rtol=1e-13)
