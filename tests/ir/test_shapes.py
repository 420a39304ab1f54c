"""Shape/dtype rules of elementwise, array, reduction, indexing and dot/conv primitives.

Three kinds of evidence:
- the oracle: every equation of every case of the eight foundation families and programs.json
  (nested jaxprs and the grad/grad_grad texts included) re-derives its printed result types;
- NumPy: rules applied to generated shapes agree with what the NumPy counterpart produces;
- ill-typed applications raise `JaxprTypeError` naming the primitive and what was expected.
"""

from __future__ import annotations

import json
import math
from functools import cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ir import dtypes as D
from ir.core import ShapedArray, subjaxprs
from ir.errors import JaxprTypeError
from ir.params import Record
from ir.primitives import SHAPE_RULES, abstract_eval
from tests.oracle_paths import FOUNDATION_FAMILIES, ORACLE

MODULES = {f"ir.shapes.{m}" for m in ("elementwise", "arrays", "reductions", "indexing", "dot_conv")}
FAMILIES = (*FOUNDATION_FAMILIES, "programs")


def A(text: str, weak: bool = False) -> ShapedArray:
    """`A("f64[3,4]")`: an aval from its printed form."""
    short, dims = text.rstrip("]").split("[")
    return ShapedArray(tuple(int(d) for d in dims.split(",") if d), D.from_short(short), weak)


def out(prim: str, *avals: ShapedArray, **params) -> list[ShapedArray]:
    return abstract_eval(prim, list(avals), params)


def one(prim: str, *avals: ShapedArray, **params) -> ShapedArray:
    (result,) = out(prim, *avals, **params)
    return result


def _rule_module(prim: str) -> str | None:
    rule = SHAPE_RULES.get(prim)
    return getattr(rule, "func", rule).__module__ if rule is not None else None


# --- the oracle ---------------------------------------------------------------------------------

@cache
def _family(name: str) -> list[dict]:
    return json.loads((ORACLE / f"{name}.json").read_text())["cases"]


def _texts(case: dict) -> list[str]:
    return [case["jaxpr"]] + [case[k]["jaxpr"] for k in ("grad", "grad_grad") if k in case]


def _equations(jaxpr, seen: set[int]):
    if id(jaxpr) in seen:
        return
    seen.add(id(jaxpr))
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in subjaxprs(eqn):
            yield from _equations(sub.jaxpr, seen)


ORACLE_CASES = [pytest.param(case, id=case["id"]) for fam in FAMILIES for case in _family(fam)]


@pytest.mark.parametrize("case", ORACLE_CASES)
def test_rules_rederive_oracle_types(case):
    from ir.text import parse_jaxpr

    for text in _texts(case):
        for eqn in _equations(parse_jaxpr(text).jaxpr, set()):
            if _rule_module(eqn.primitive) not in MODULES:
                continue
            got = abstract_eval(eqn.primitive, [x.aval for x in eqn.invars], eqn.params)
            want = [v.aval for v in eqn.outvars]
            assert [str(a) for a in got] == [str(a) for a in want], (eqn.primitive, eqn.params)


def test_typecheck_names_the_ill_typed_equation():
    from ir.text import parse_jaxpr

    text = "{ lambda ; a:f64[3] b:f64[4]. let c:f64[3] = sin a; d:f64[3] = add c b in (d,) }"
    with pytest.raises(JaxprTypeError, match=r"equation 1 \(add\).*compatible shapes") as info:
        parse_jaxpr(text)
    assert (info.value.eqn_index, info.value.primitive) == (1, "add")


def test_every_family_primitive_has_a_shape_rule():
    tagged = {t.removeprefix("primitive:") for fam in FAMILIES for case in _family(fam)
              for t in case["tags"] if t.startswith("primitive:")}
    import ir.shapes  # noqa: F401  (registers every rule)
    assert sorted(tagged - set(SHAPE_RULES)) == []


# --- elementwise --------------------------------------------------------------------------------

NUMPY_UNARY = {  # primitive: NumPy counterpart with the same result dtype
    "neg": np.negative, "sign": np.sign, "floor": np.floor, "ceil": np.ceil, "is_finite": np.isfinite,
    "exp": np.exp, "log": np.log, "expm1": np.expm1, "log1p": np.log1p, "tanh": np.tanh, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "sqrt": np.sqrt, "cbrt": np.cbrt, "square": np.square, "abs": np.abs,
    "real": np.real, "imag": np.imag, "not": np.invert, "exp2": np.exp2,
}
DTYPES = [D.bool_, D.int8, D.int32, D.int64, D.uint8, D.uint32, D.float16, D.float32, D.float64,
          D.complex64, D.complex128]


def _accepted(prim: str, dt: D.DType) -> bool:
    try:
        out(prim, ShapedArray((2,), dt))
    except JaxprTypeError:
        return False
    return True


@pytest.mark.parametrize("prim", list(NUMPY_UNARY))
def test_unary_result_dtype_matches_numpy(prim):
    accepted = [dt for dt in DTYPES if _accepted(prim, dt)]
    assert accepted, prim
    for dt in accepted:
        want = NUMPY_UNARY[prim](np.ones((2, 3), dt.numpy))
        got = one(prim, ShapedArray((2, 3), dt))
        assert (got.shape, got.dtype.numpy) == (want.shape, want.dtype), (prim, dt)


@pytest.mark.parametrize("prim, kinds", [
    ("sin", "fc"), ("floor", "f"), ("is_finite", "f"), ("abs", "ifc"), ("sign", "iufc"), ("not", "biu"),
    ("population_count", "iu"), ("real", "c"), ("conj", "fc"), ("lgamma", "f"), ("cbrt", "f"),
])
def test_unary_accepts_exactly_jax_dtype_classes(prim, kinds):
    # conj accepts float32/float64 (giving complex) and complex; the rest accept whole kinds.
    assert {dt.kind for dt in DTYPES if _accepted(prim, dt)} == set(kinds)


def test_conj_and_complex_build_complex_dtypes():
    assert one("conj", A("f32[3]"), input_dtype=D.float32).dtype == D.complex64
    assert one("complex", A("f64[3]"), A("f64[3]")).dtype.numpy == np.result_type(np.float64, np.complex64)
    assert one("complex", A("f32[3]"), A("f32[]")).dtype.numpy == np.result_type(np.float32, np.complex64)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@st.composite
def broadcastable(draw):
    """Operand shapes of equal rank whose dimensions agree or are 1, plus optional scalars."""
    target = draw(shapes)
    n = draw(st.integers(1, 3))
    result = [tuple(d if draw(st.booleans()) else 1 for d in target) for _ in range(n)]
    return [(() if draw(st.integers(0, 4)) == 0 else s) for s in result]


@given(broadcastable(), st.sampled_from(["add", "mul", "max", "atan2", "nextafter", "eq", "lt"]))
def test_nary_broadcasting_matches_numpy(operand_shapes, prim):
    operand_shapes = (operand_shapes + [()])[:2]
    avals = [ShapedArray(s, D.float64) for s in operand_shapes]
    want = np.broadcast_shapes(*operand_shapes)
    got = one(prim, *avals)
    assert got.shape == want
    assert got.dtype == (D.bool_ if prim in ("eq", "lt") else D.float64)


@pytest.mark.parametrize("dts, want", [
    ((D.float64, D.int32), D.float64), ((D.complex64, D.complex64), D.complex64),
    ((D.float32, D.int8), D.float32), ((D.float32, D.float32), D.float32),
])
def test_pow_keeps_the_base_dtype(dts, want):
    # JAX: an inexact base with an integer exponent keeps the base dtype; inexact pairs must match.
    assert one("pow", ShapedArray((3,), dts[0]), ShapedArray((3,), dts[1])).dtype == want


def test_weak_types_follow_jax():
    weak, strong = A("f64[3]", weak=True), A("f64[3]")
    assert one("add", weak, weak).weak_type
    assert not one("add", weak, strong).weak_type
    assert not one("lt", weak, weak).weak_type  # bool results are never weak
    assert one("convert_element_type", strong, new_dtype=D.float64, weak_type=True).weak_type
    assert not one("reduce_or", A("bool[3]"), axes=(0,)).weak_type
    assert one("select_n", A("bool[3]"), weak, weak).weak_type


def test_select_n_and_clamp():
    assert one("select_n", A("i32[3,4]"), A("f64[3,4]"), A("f64[3,4]"), A("f64[3,4]")) == A("f64[3,4]")
    assert one("select_n", A("bool[]"), A("i32[3]"), A("i32[3]")) == A("i32[3]")
    assert one("clamp", A("f64[]"), A("f64[3,4]"), A("f64[3,4]")) == A("f64[3,4]")


@pytest.mark.parametrize("src, new, make", [
    ("f32[6]", D.uint8, lambda x: x[..., None].view(np.uint8)),
    ("u8[3,4]", D.float32, lambda x: x.view(np.float32)[..., 0]),
    ("f64[6]", D.uint32, lambda x: x[..., None].view(np.uint32)),
    ("i64[3,4]", D.float64, lambda x: x.view(np.float64)),
    ("u16[5,2]", D.int32, lambda x: x.view(np.int32)[..., 0]),
])
def test_bitcast_shapes_match_numpy_views(src, new, make):
    x = A(src)
    want = make(np.zeros(x.shape, x.dtype.numpy))
    got = one("bitcast_convert_type", x, new_dtype=new)
    assert (got.shape, got.dtype.numpy) == (want.shape, want.dtype)


# --- arrays ---------------------------------------------------------------------------------------

@given(shapes, st.randoms(use_true_random=False))
def test_shape_ops_match_numpy(shape, rnd):
    x, z = ShapedArray(shape, D.float64), np.zeros(shape)
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    assert one("transpose", x, permutation=tuple(perm)).shape == np.transpose(z, perm).shape
    new = (math.prod(shape),) if shape else ()
    assert one("reshape", x, new_sizes=new, dimensions=None).shape == z.reshape(new).shape
    dims = tuple(i for i in range(len(shape)) if rnd.random() < 0.5)
    assert one("rev", x, dimensions=dims).shape == shape
    ones = tuple(i for i, d in enumerate(shape) if d == 1)
    assert one("squeeze", x, dimensions=ones).shape == np.squeeze(z, ones).shape
    reps = tuple(rnd.randint(0, 3) for _ in shape)
    assert one("tile", x, reps=reps).shape == np.tile(z, reps).shape
    axis = rnd.randint(0, len(shape))
    assert one("stack", x, x, x, axis=axis).shape == np.stack([z, z, z], axis).shape
    if shape:
        axis = rnd.randrange(len(shape))
        other = tuple(rnd.randint(0, 3) if i == axis else d for i, d in enumerate(shape))
        got = one("concatenate", x, ShapedArray(other, D.float64), dimension=axis).shape
        assert got == np.concatenate([z, np.zeros(other)], axis).shape
        cut = rnd.randint(0, shape[axis])
        parts = out("split", x, sizes=(cut, shape[axis] - cut), axis=axis)
        assert [p.shape for p in parts] == [p.shape for p in np.split(z, [cut], axis)]


@given(shapes, st.randoms(use_true_random=False))
def test_broadcast_in_dim_matches_numpy(shape, rnd):
    target, dims = [], []
    for d in shape:
        target += [rnd.randint(1, 3) for _ in range(rnd.randint(0, 1))]
        dims.append(len(target))
        target.append(d if d != 1 or rnd.random() < 0.5 else rnd.randint(1, 3))
    expanded = np.zeros(shape).reshape([shape[dims.index(i)] if i in dims else 1 for i in range(len(target))])
    got = one("broadcast_in_dim", ShapedArray(shape, D.float64), shape=tuple(target),
              broadcast_dimensions=tuple(dims), sharding=None)
    assert got.shape == np.broadcast_to(expanded, target).shape


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)),
                max_size=3))
def test_pad_matches_numpy_construction(axes):
    shape = tuple(a[0] for a in axes)
    config = tuple((lo, hi, interior) for _, lo, hi, interior in axes)
    z = np.zeros(shape)
    for axis, (lo, hi, interior) in enumerate(config):  # interior: holes between elements, then edges
        if z.shape[axis]:
            z = np.insert(z, np.repeat(np.arange(1, z.shape[axis]), interior), 0.0, axis=axis)
        z = np.pad(z, [(lo, hi) if i == axis else (0, 0) for i in range(z.ndim)])
    assert one("pad", ShapedArray(shape, D.float64), A("f64[]"), padding_config=config).shape == z.shape


def test_negative_padding_trims():
    want = np.pad(np.zeros((3, 4))[1:, :-2], ((0, 0), (1, 0))).shape
    assert one("pad", A("f64[3,4]"), A("f64[]"), padding_config=((-1, 0, 0), (1, -2, 0))).shape == want


def test_iota_and_device_put():
    assert one("iota", dtype=D.int32, shape=(3, 4), dimension=1, sharding=None) == A("i32[3,4]")
    assert out("device_put", A("f64[3]"), A("i32[]"), devices=(None, None)) == [A("f64[3]"), A("i32[]")]


# --- reductions -----------------------------------------------------------------------------------

@given(shapes, st.randoms(use_true_random=False))
def test_reductions_match_numpy(shape, rnd):
    x, z = ShapedArray(shape, D.float32), np.zeros(shape, np.float32)
    axes = tuple(i for i in range(len(shape)) if rnd.random() < 0.5)
    for prim, fn in (("reduce_sum", np.sum), ("reduce_max", np.maximum.reduce), ("reduce_prod", np.prod)):
        got = one(prim, x, axes=axes, out_sharding=None)
        assert got.shape == fn(z, axis=axes, initial=0).shape and got.dtype == D.float32
    if shape and all(shape):
        axis = rnd.randrange(len(shape))
        got = one("argmax", x, axes=(axis,), index_dtype=D.int32)
        assert (got.shape, got.dtype) == (np.argmax(z, axis).shape, D.int32)
        assert one("cumsum", x, axis=axis, reverse=True) == x


@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 3), st.integers(1, 2), st.integers(0, 1)),
                min_size=1, max_size=3))
def test_reduce_window_matches_sliding_windows(axes):
    shape = tuple(a[0] + a[3] for a in axes)
    windows = tuple(min(a[1], d) for a, d in zip(axes, shape, strict=True))
    strides = tuple(a[2] for a in axes)
    pads = tuple((a[3], 0) for a in axes)
    padded = np.pad(np.zeros(shape), pads)
    views = np.lib.stride_tricks.sliding_window_view(padded, windows)
    want = views[tuple(slice(None, None, s) for s in strides)].shape[:len(shape)]
    got = one("reduce_window_sum", ShapedArray(shape, D.float64), window_dimensions=windows,
              window_strides=strides, padding=pads, base_dilation=(1,) * len(shape),
              window_dilation=(1,) * len(shape))
    assert got.shape == want


def test_window_dilation_spreads_the_window():
    # A window of 2 with dilation 3 spans 4 elements: 7 - 4 + 1 = 4 positions.
    got = one("reduce_window_max", A("f64[7]"), window_dimensions=(2,), window_strides=(1,),
              padding=((0, 0),), base_dilation=(1,), window_dilation=(3,))
    assert got.shape == np.lib.stride_tricks.sliding_window_view(np.zeros(7), 4).shape[:1]


def test_select_and_scatter_add_returns_the_operand_shape():
    got = one("select_and_scatter_add", A("f64[1,2,2,2]"), A("f64[1,4,4,2]"), select_prim="ge",
              window_dimensions=(1, 2, 2, 1), window_strides=(1, 2, 2, 1), padding=((0, 0),) * 4)
    assert got == A("f64[1,4,4,2]")


# --- indexing -------------------------------------------------------------------------------------

@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6), st.integers(1, 3)),
                max_size=3))
def test_slice_matches_numpy(axes):
    shape = tuple(max(a[:3]) for a in axes)
    starts = tuple(min(a[:2]) for a in axes)
    limits = tuple(max(a[:2]) for a in axes)
    strides = tuple(a[3] for a in axes)
    index = tuple(slice(s, e, k) for s, e, k in zip(starts, limits, strides, strict=True))
    got = one("slice", ShapedArray(shape, D.float64), start_indices=starts, limit_indices=limits,
              strides=strides)
    want = np.zeros(shape)[index].shape
    assert got.shape == want


def _gdn(offset, collapsed, start_map, op_batch=(), idx_batch=()):
    return Record("GatherDimensionNumbers", dict(offset_dims=offset, collapsed_slice_dims=collapsed,
                                                 start_index_map=start_map, operand_batching_dims=op_batch,
                                                 start_indices_batching_dims=idx_batch))


X = np.zeros((3, 4))
IDX = np.zeros(5, np.int32)


@pytest.mark.parametrize("indices, dn, sizes, want", [
    ("i32[5,1]", _gdn((1,), (0,), (0,)), (1, 4), X[IDX].shape),            # rows
    ("i32[5,1]", _gdn((0,), (1,), (1,)), (3, 1), X[:, IDX].shape),         # columns
    ("i32[5,2]", _gdn((), (0, 1), (0, 1)), (1, 1), X[IDX, IDX].shape),     # points
    ("i32[2,5,1]", _gdn((2,), (0,), (0,)), (1, 4), X[np.zeros((2, 5), int)].shape),
    ("i32[3,2,1]", _gdn((), (1,), (1,), (0,), (0,)), (1, 1),               # take_along_axis
     np.take_along_axis(X, np.zeros((3, 2), int), 1).shape),
])
def test_gather_matches_numpy_indexing(indices, dn, sizes, want):
    got = one("gather", A("f64[3,4]"), A(indices), dimension_numbers=dn, slice_sizes=sizes, fill_value=None,
              indices_are_sorted=False, mode="GatherScatterMode.CLIP", unique_indices=False)
    assert got.shape == want


def _sdn(window, inserted, to_operand):
    return Record("ScatterDimensionNumbers", dict(
        update_window_dims=window, inserted_window_dims=inserted, scatter_dims_to_operand_dims=to_operand,
        operand_batching_dims=(), scatter_indices_batching_dims=()))


@pytest.mark.parametrize("prim", ["scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max"])
def test_scatter_keeps_the_operand_type(prim):
    # updates for x.at[idx].add(u) have the shape of x[idx]
    updates = ShapedArray(X[IDX].shape, D.float64)
    got = one(prim, A("f64[3,4]"), A("i32[5,1]"), updates, dimension_numbers=_sdn((1,), (0,), (0,)),
              indices_are_sorted=False, unique_indices=False, mode="GatherScatterMode.FILL_OR_DROP",
              update_jaxpr=None, update_consts=())
    assert got == A("f64[3,4]")


def test_sort_top_k_dynamic_slices():
    assert out("sort", A("f64[3,4]"), A("i64[3,4]"), dimension=1, is_stable=True, num_keys=1) == \
        [A("f64[3,4]"), A("i64[3,4]")]
    assert out("top_k", A("f64[3,4]"), k=2, axis=1) == [A("f64[3,2]"), A("i32[3,2]")]
    assert out("top_k", A("i32[6]"), k=3) == [A("i32[3]"), A("i32[3]")]
    assert one("dynamic_slice", A("f64[3,4]"), A("i64[]"), A("i64[]"), slice_sizes=(3, 2)) == A("f64[3,2]")
    assert one("dynamic_update_slice", A("f64[3,4]"), A("f64[2,2]"), A("i32[]"), A("i32[]")) == A("f64[3,4]")


# --- dot / conv -----------------------------------------------------------------------------------

@pytest.mark.parametrize("lhs, rhs, dn, spec", [
    ((3, 4), (4, 5), (([1], [0]), ([], [])), "ij,jk->ik"),
    ((2, 3, 4), (2, 4, 5), (([2], [1]), ([0], [0])), "bij,bjk->bik"),
    ((4,), (4,), (([0], [0]), ([], [])), "i,i->"),
    ((3, 4), (5,), (([], []), ([], [])), "ij,k->ijk"),
    ((2, 3, 4), (3, 4, 2), (([1, 2], [0, 1]), ([], [])), "aij,ijb->ab"),
    ((3, 4, 2), (2, 3, 5), (([0], [1]), ([2], [0])), "ijb,bik->bjk"),
])
def test_dot_general_shapes_match_einsum(lhs, rhs, dn, spec):
    want = np.einsum(spec, np.zeros(lhs), np.zeros(rhs)).shape
    assert one("dot_general", ShapedArray(lhs, D.float64), ShapedArray(rhs, D.float64), dimension_numbers=dn,
               precision=None, preferred_element_type=None).shape == want


@pytest.mark.parametrize("lhs, rhs, preferred, want", [
    (D.float32, D.float32, D.float64, D.float64),
    (D.int32, D.int32, D.float64, D.float64),     # integer inputs may accumulate in a float
    (D.int8, D.int8, D.int32, D.int32),
    (D.bfloat16, D.float32, None, D.float32),     # mixed inputs: the more precise one
    (D.float64, D.float64, None, D.float64),
])
def test_dot_general_result_dtype(lhs, rhs, preferred, want):
    got = one("dot_general", ShapedArray((2, 3), lhs), ShapedArray((3,), rhs),
              dimension_numbers=(([1], [0]), ([], [])), preferred_element_type=preferred)
    assert got.dtype == want


def _conv_dn(lhs_spec, rhs_spec, out_spec):
    return Record("ConvDimensionNumbers", dict(lhs_spec=lhs_spec, rhs_spec=rhs_spec, out_spec=out_spec))


CONV_DN = _conv_dn((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))


def _conv(lhs, rhs, strides=(1, 1), padding=((0, 0), (0, 0)), groups=1, batch_groups=1, dn=CONV_DN):
    return one("conv_general_dilated", A(lhs), A(rhs), window_strides=strides, padding=padding,
               lhs_dilation=(1, 1), rhs_dilation=(1, 1), dimension_numbers=dn, feature_group_count=groups,
               batch_group_count=batch_groups, precision=None, preferred_element_type=None)


def test_conv_shapes():
    # A 1x1 kernel keeps the spatial size; a kernel as large as the input leaves one position;
    # the output has the kernel's output features.
    assert _conv("f64[2,3,5,6]", "f64[7,3,1,1]").shape == (2, 7, 5, 6)
    assert _conv("f64[2,3,5,6]", "f64[7,3,5,6]").shape == (2, 7, 1, 1)
    assert _conv("f64[2,3,5,6]", "f64[7,3,2,2]", strides=(2, 2)).shape == (2, 7, 2, 3)
    assert _conv("f64[2,3,5,6]", "f64[7,3,3,3]", padding=((1, 1), (1, 1))).shape == (2, 7, 5, 6)
    assert _conv("f64[1,4,3,3]", "f64[6,2,1,1]", groups=2).shape == (1, 6, 3, 3)
    nhwc = _conv_dn((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert _conv("f64[1,5,6,3]", "f64[1,1,3,7]", dn=nhwc).shape == (1, 5, 6, 7)


# --- ill-typed applications -----------------------------------------------------------------------

DN = (([1], [0]), ([], []))
ILL_TYPED = [
    ("sin", [A("i32[3]")], {}, "floating or complex"),
    ("floor", [A("c128[3]")], {}, "floating"),
    ("abs", [A("u8[3]")], {}, "signed integer"),
    ("real", [A("f64[3]")], {}, "complex"),
    ("not", [A("f32[3]")], {}, "bool"),
    ("add", [A("f64[3]"), A("f64[4]")], {}, "compatible shapes"),
    ("add", [A("f64[3,4]"), A("f64[4]")], {}, "equal ranks"),
    ("add", [A("f64[3]"), A("f32[3]")], {}, "equal dtypes"),
    ("add", [A("bool[3]"), A("bool[3]")], {}, "bool"),
    ("add", [A("f64[3]")], {}, "2"),
    ("lt", [A("c128[3]"), A("c128[3]")], {}, "bool"),
    ("shift_left", [A("f32[3]"), A("f32[3]")], {}, "integer"),
    ("complex", [A("f16[3]"), A("f16[3]")], {}, "float32 or float64"),
    ("pow", [A("f64[3]"), A("f32[3]")], {}, "integer dtype"),
    ("pow", [A("i32[3]"), A("i32[3]")], {}, "floating"),
    ("integer_pow", [A("i32[3]")], {"y": -1}, "y >= 0"),
    ("add_any", [A("f64[3]"), A("f64[1]")], {}, "f64[3]"),
    ("select_n", [A("f64[3]"), A("f64[3]"), A("f64[3]")], {}, "bool"),
    ("select_n", [A("bool[3]"), A("f64[3]"), A("f64[3]"), A("f64[3]")], {}, "integer predicate"),
    ("select_n", [A("bool[2]"), A("f64[3]"), A("f64[3]")], {}, "shape () or (3,)"),
    ("select_n", [A("bool[3]"), A("f64[3]"), A("f32[3]")], {}, "equal dtypes"),
    ("clamp", [A("f64[2]"), A("f64[3]"), A("f64[]")], {}, "shape () or (3,)"),
    ("convert_element_type", [A("f64[3]")], {"new_dtype": "float99", "weak_type": False}, "dtype name"),
    ("bitcast_convert_type", [A("u8[3,3]")], {"new_dtype": D.float32}, "(..., 4)"),
    ("bitcast_convert_type", [A("c64[3]")], {"new_dtype": D.float64}, "complex64"),
    ("reduce_precision", [A("f64[3]")], {"exponent_bits": 0, "mantissa_bits": 3}, "exponent_bits >= 1"),
    ("iota", [], {"dtype": D.bool_, "shape": (3,), "dimension": 0, "sharding": None}, "integer"),
    ("iota", [], {"dtype": D.int32, "shape": (3,), "dimension": 1, "sharding": None}, "dimension"),
    ("reshape", [A("f64[3,4]")], {"new_sizes": (5, 2), "dimensions": None}, "12 elements"),
    ("reshape", [A("f64[3,4]")], {"new_sizes": (12,), "dimensions": (0, 0)}, "permutation"),
    ("transpose", [A("f64[3,4]")], {"permutation": (0,)}, "permutation"),
    ("broadcast_in_dim", [A("f64[3]")], {"shape": (4, 2), "broadcast_dimensions": (0,)}, "size 1 or 4"),
    ("broadcast_in_dim", [A("f64[3,1]")], {"shape": (3, 2), "broadcast_dimensions": (1, 0)}, "increasing"),
    ("squeeze", [A("f64[3,4]")], {"dimensions": (0,)}, "size-1"),
    ("squeeze", [A("f64[1]")], {"dimensions": (1,)}, "0 <= dimensions < 1"),
    ("concatenate", [A("f64[3,4]"), A("f64[2,5]")], {"dimension": 0}, "other dimensions"),
    ("concatenate", [A("f64[3,4]"), A("f64[2,4]")], {"dimension": 2}, "0 <= dimension < 2"),
    ("stack", [A("f64[3]"), A("f64[4]")], {"axis": 0}, "equal shapes"),
    ("tile", [A("f64[3]")], {"reps": (2, 2)}, "1"),
    ("pad", [A("f64[3]"), A("f64[1]")], {"padding_config": ((0, 0, 0),)}, "shape ()"),
    ("pad", [A("f64[3]"), A("f64[]")], {"padding_config": ((0, 0, -1),)}, "interior >= 0"),
    ("pad", [A("f64[3]"), A("f64[]")], {"padding_config": ((-2, -2, 0),)}, "sizes >= 0"),
    ("pad", [A("f64[3]"), A("i32[]")], {"padding_config": ((0, 0, 0),)}, "equal dtypes"),
    ("rev", [A("f64[3]")], {"dimensions": (0, 0)}, "distinct"),
    ("split", [A("f64[3,4]")], {"sizes": (1, 2), "axis": 1}, "4"),
    ("reduce_sum", [A("bool[3]")], {"axes": (0,)}, "floating or complex or signed integer"),
    ("reduce_max", [A("f64[3]")], {"axes": (1,)}, "axes < 1"),
    ("reduce_or", [A("f64[3]")], {"axes": (0,)}, "bool"),
    ("argmax", [A("f64[3,4]")], {"axes": (0, 1), "index_dtype": D.int32}, "axes=(axis,)"),
    ("argmax", [A("f64[3]")], {"axes": (0,), "index_dtype": D.float32}, "integer dtype"),
    ("cumsum", [A("f64[3]")], {"axis": 1, "reverse": False}, "axis"),
    ("reduce_window_sum", [A("f64[4]")], {"window_dimensions": (2, 2), "window_strides": (1,),
                                          "padding": ((0, 0),)}, "1"),
    ("reduce_window_max", [A("f64[4]")], {"window_dimensions": (0,), "window_strides": (1,),
                                          "padding": ((0, 0),)}, "window_dimensions >= 1"),
    ("select_and_scatter_add", [A("f64[3]"), A("f64[4]")], {"select_prim": "ge", "window_dimensions": (2,),
                                                            "window_strides": (2,), "padding": ((0, 0),)},
     "shape (2,)"),
    ("slice", [A("f64[3,4]")], {"start_indices": (0, 0), "limit_indices": (4, 4)}, "bounds"),
    ("slice", [A("f64[3,4]")], {"start_indices": (0,), "limit_indices": (1,)}, "2"),
    ("slice", [A("f64[3,4]")], {"start_indices": (0, 0), "limit_indices": (1, 1), "strides": (0, 1)},
     "strides >= 1"),
    ("dynamic_slice", [A("f64[3,4]"), A("i32[]")], {"slice_sizes": (1, 1)}, "2"),
    ("dynamic_slice", [A("f64[3,4]"), A("i32[]"), A("i64[]")], {"slice_sizes": (1, 1)}, "equal dtypes"),
    ("dynamic_slice", [A("f64[3,4]"), A("f32[]"), A("f32[]")], {"slice_sizes": (1, 1)}, "integer"),
    ("dynamic_slice", [A("f64[3,4]"), A("i32[]"), A("i32[]")], {"slice_sizes": (4, 1)}, "size <="),
    ("dynamic_update_slice", [A("f64[3,4]"), A("f64[4,4]"), A("i32[]"), A("i32[]")], {}, "at most"),
    ("gather", [A("f64[3,4]"), A("f32[5,1]")], {"dimension_numbers": _gdn((1,), (0,), (0,)),
                                                "slice_sizes": (1, 4)}, "integer"),
    ("gather", [A("f64[3,4]"), A("i32[5,1]")], {"dimension_numbers": _gdn((1,), (0,), (0,)),
                                                "slice_sizes": (2, 4)}, "size 1"),
    ("gather", [A("f64[3,4]"), A("i32[5,2]")], {"dimension_numbers": _gdn((1,), (0,), (0,)),
                                                "slice_sizes": (1, 4)}, "2"),
    ("scatter-add", [A("f64[3,4]"), A("i32[5,1]"), A("f64[5,5]")],
     {"dimension_numbers": _sdn((1,), (0,), (0,))}, "window sizes at most [4]"),
    ("scatter-add", [A("f64[3,4]"), A("i32[5,1]"), A("f64[6,4]")],
     {"dimension_numbers": _sdn((1,), (0,), (0,))}, "sizes (5,)"),
    ("scatter", [A("f64[3,4]"), A("i32[5,1]"), A("f32[5,4]")],
     {"dimension_numbers": _sdn((1,), (0,), (0,))}, "equal dtypes"),
    ("sort", [A("f64[3]"), A("f64[4]")], {"dimension": 0, "num_keys": 1}, "equal shapes"),
    ("sort", [A("f64[3]")], {"dimension": 0, "num_keys": 2}, "num_keys <= 1"),
    ("top_k", [A("f64[3]")], {"k": 4}, "k <= 3"),
    ("top_k", [A("c128[3]")], {"k": 1}, "floating"),
    ("dot_general", [A("f64[3,4]"), A("f64[5,2]")], {"dimension_numbers": DN}, "rhs sizes [4]"),
    ("dot_general", [A("f64[3,4]"), A("f64[4,2]")], {"dimension_numbers": (([2], [0]), ([], []))},
     "[0, 2)"),
    ("dot_general", [A("f64[2,3,4]"), A("f64[3,4,2]")], {"dimension_numbers": (([2], [1]), ([0], [0]))},
     "rhs sizes [2]"),
    ("dot_general", [A("f64[3,4]"), A("f64[4,2]")], {"dimension_numbers": DN,
                                                    "preferred_element_type": D.int64}, "like float64"),
    ("dot_general", [A("f64[3,4]"), A("f64[4,2]")], {"dimension_numbers": DN,
                                                    "preferred_element_type": D.float32}, "64 bits"),
    ("conv_general_dilated", [A("f64[1,4,3,3]"), A("f64[6,3,1,1]")],
     {"window_strides": (1, 1), "padding": ((0, 0), (0, 0)), "lhs_dilation": (1, 1), "rhs_dilation": (1, 1),
      "dimension_numbers": CONV_DN, "feature_group_count": 1, "batch_group_count": 1}, "input features 4"),
    ("conv_general_dilated", [A("f64[1,4,3,3]"), A("f64[6,4,1,1]")],
     {"window_strides": (1,), "padding": ((0, 0), (0, 0)), "lhs_dilation": (1, 1), "rhs_dilation": (1, 1),
      "dimension_numbers": CONV_DN, "feature_group_count": 1, "batch_group_count": 1}, "2"),
    ("conv_general_dilated", [A("f64[1,4,3,3]"), A("f32[6,4,1,1]")],
     {"window_strides": (1, 1), "padding": ((0, 0), (0, 0)), "lhs_dilation": (1, 1), "rhs_dilation": (1, 1),
      "dimension_numbers": CONV_DN, "feature_group_count": 1, "batch_group_count": 1}, "equal dtypes"),
]


@pytest.mark.parametrize("prim, avals, params, expected", ILL_TYPED,
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(ILL_TYPED)])
def test_ill_typed_applications_raise(prim, avals, params, expected):
    with pytest.raises(JaxprTypeError) as info:
        abstract_eval(prim, avals, params)
    assert info.value.primitive == prim
    assert expected in str(info.value)


def _scalar_body(prims: list[str], dtypes: list[D.DType]):
    """`{ lambda ; a b c d. let e = prims[0] a c; f = prims[1] b d in (e, f) }` over scalars."""
    from ir.core import ClosedJaxpr, Eqn, Jaxpr, Var

    accs = [Var(ShapedArray((), d)) for d in dtypes]
    xs = [Var(ShapedArray((), d)) for d in dtypes]
    outs = [Var(ShapedArray((), d)) for d in dtypes]
    eqns = [Eqn(p, [a, x], [o], {}) for p, a, x, o in zip(prims, accs, xs, outs, strict=True)]
    return ClosedJaxpr(Jaxpr([], accs + xs, outs, eqns))


def test_variadic_reduce_and_reduce_window():
    body = _scalar_body(["add", "mul"], [D.float64, D.int32])
    got = out("reduce", A("f64[3,4]"), A("i32[3,4]"), A("f64[]"), A("i32[]"), computation=None, jaxpr=body,
              dimensions=(1,))
    assert got == [ShapedArray(np.zeros((3, 4)).sum(1).shape, D.float64), A("i32[3]")]
    got = out("reduce_window", A("f64[3,4]"), A("i32[3,4]"), A("f64[]"), A("i32[]"), jaxpr=body, consts=(),
              window_dimensions=(2, 2), window_strides=(1, 1), padding=((0, 0), (0, 0)),
              base_dilation=(1, 1), window_dilation=(1, 1))
    want = np.lib.stride_tricks.sliding_window_view(np.zeros((3, 4)), (2, 2)).shape[:2]
    assert [a.shape for a in got] == [want, want]
    with pytest.raises(JaxprTypeError, match="reducer jaxpr does not fit"):
        out("reduce", A("f64[3]"), A("f64[]"), jaxpr=_scalar_body(["add"], [D.float32]), dimensions=(0,))
    with pytest.raises(JaxprTypeError, match="initial values must be scalars"):
        out("reduce", A("f64[3]"), A("f64[1]"), jaxpr=_scalar_body(["add"], [D.float64]), dimensions=(0,))


def _ragged_dn(contract, ragged, groups):
    return Record("RaggedDotDimensionNumbers", dict(dot_dimension_numbers=(contract, ((), ())),
                                                    lhs_ragged_dimensions=ragged,
                                                    rhs_group_dimensions=groups))


def test_ragged_dot_general_modes():
    # ragged rows (m split into groups, one rhs matrix per group): [m,k] x [g,k,n] -> [m,n]
    got = one("ragged_dot_general", A("f64[3,4]"), A("f64[2,4,5]"), A("i32[2]"),
              ragged_dot_dimension_numbers=_ragged_dn(((1,), (1,)), (0,), (0,)))
    assert got.shape == np.einsum("mk,kn->mn", np.zeros((3, 4)), np.zeros((4, 5))).shape
    # ragged contraction (k split into groups): [m,k] x [k,n] -> [g,m,n]
    got = one("ragged_dot_general", A("f64[3,4]"), A("f64[4,5]"), A("i32[2]"),
              ragged_dot_dimension_numbers=_ragged_dn(((1,), (0,)), (1,), ()))
    assert got.shape == (2, 3, 5)
    with pytest.raises(JaxprTypeError, match="one entry per group"):
        one("ragged_dot_general", A("f64[3,4]"), A("f64[3,4,5]"), A("i32[2]"),
            ragged_dot_dimension_numbers=_ragged_dn(((1,), (1,)), (0,), (0,)))
