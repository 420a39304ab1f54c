"""NumPy implementations of the shape, reduction, window and dot/conv primitives.

Checked against JAX's oracle fixtures (every single-equation case of the shape, reduce and dot_conv
families, on its args and on each slice of its vmap batch) and against independent references: loops
written from the definitions (XLA's Pad, ReduceWindow, convolution), np.einsum, and identities
(select_and_scatter_add is the transpose of select_and_gather_add).
"""

from __future__ import annotations

import functools
import itertools
import math
import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from eval.interpreter import eval_jaxpr, literal_array
from eval.oracle import decode_array, load_fixtures, mismatch, parse_case
from eval.registry import get_impl
from ir import dtypes
from ir.core import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.errors import UnsupportedPrimitive
from ir.params import Record, Symbol
from ir.primitives import get_primitive
from ir.text import parse_jaxpr
from tests.oracle_paths import ORACLE

OWN_PRIMITIVES = frozenset({
    "reshape", "transpose", "broadcast_in_dim", "squeeze", "concatenate", "stack", "tile", "pad", "rev",
    "split", "iota", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or",
    "reduce_xor", "argmax", "argmin", "reduce", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
    "reduce_window_sum", "reduce_window_max", "reduce_window_min", "reduce_window", "select_and_scatter_add",
    "select_and_gather_add", "dot_general", "ragged_dot_general", "conv_general_dilated",
})
FAMILIES = ("shape", "reduce", "dot_conv")


def run(primitive, *operands, **params):
    return get_impl(primitive)(*operands, **params)


def assert_matches(got, want, rtol=0.0, atol=0.0):
    assert isinstance(got, np.ndarray), f"expected an ndarray, got {type(got).__name__}"
    problem = mismatch(got, np.asarray(want), rtol, atol)
    assert problem is None, problem


# --- the oracle: every single-equation case of the three families ---------------------------------


@functools.cache
def _single_equation_cases():
    params = []
    for case in load_fixtures([ORACLE], FAMILIES):
        if OWN_PRIMITIVES & set(case.primitives):
            closed = parse_case(case)
            eqns = closed.jaxpr.eqns
            if len(eqns) == 1 and eqns[0].primitive in OWN_PRIMITIVES:
                params.append(pytest.param(case, closed, id=case.id))
    return params


def _eval_single_equation(closed: ClosedJaxpr, args):
    (eqn,) = closed.jaxpr.eqns
    env = {id(v): a for v, a in zip(closed.jaxpr.invars, args, strict=True)}
    operands = [literal_array(x) if isinstance(x, Literal) else env[id(x)] for x in eqn.invars]
    result = run(eqn.primitive, *operands, **eqn.params)
    results = list(result) if get_primitive(eqn.primitive).multiple_results else [result]
    env.update((id(v), r) for v, r in zip(eqn.outvars, results, strict=True))
    return [literal_array(x) if isinstance(x, Literal) else env[id(x)] for x in closed.jaxpr.outvars]


@pytest.mark.parametrize("case,closed", _single_equation_cases())
def test_oracle_single_equation(case, closed):
    got = _eval_single_equation(closed, case.arrays("args"))
    for g, w in zip(got, case.arrays("out"), strict=True):
        assert_matches(g, w, case.rtol, case.atol)


@pytest.mark.parametrize("case,closed", [p for p in _single_equation_cases() if "vmap" in p.values[0].raw])
def test_oracle_single_equation_on_vmap_slices(case, closed):
    """vmap(f)(xs)[i] == f(xs[i]): the vmap batch gives three more inputs per case (where JAX recorded one)."""
    batch = case.raw["vmap"]
    args, outs = [decode_array(a) for a in batch["args"]], [decode_array(o) for o in batch["out"]]
    for i in range(outs[0].shape[0]):
        sliced = [a[i] if axis == 0 else a for a, axis in zip(args, batch["in_axes"], strict=True)]
        for g, w in zip(_eval_single_equation(closed, sliced), outs, strict=True):
            assert_matches(g, w[i], case.rtol, case.atol)


def _gradient_jaxprs():
    """JAX's own grad jaxprs of the programs that pool or convolve: they use params only transposition
    produces (select_and_scatter_add, conv with lhs dilation and negative padding, pad with interior)."""
    params = []
    for case in load_fixtures([ORACLE], ("programs",)):
        grad = case.raw.get("grad")
        if grad and any(p in grad["jaxpr"] for p in ("select_and_scatter_add", "conv_general_dilated")):
            params.append(pytest.param(case, id=case.id))
    return params


@pytest.mark.parametrize("case", _gradient_jaxprs())
def test_jax_gradient_jaxprs_evaluate_to_jax_gradients(case):
    try:
        got = eval_jaxpr(parse_jaxpr(case.raw["grad"]["jaxpr"]), *case.arrays("args"), check=True)
    except UnsupportedPrimitive as e:
        pytest.skip(str(e))
    for g, w in zip(got, case.raw["grad"]["out"], strict=True):
        assert_matches(g, decode_array(w), case.rtol, case.atol)


# --- shape ops ---------------------------------------------------------------------------------------


def pad_reference(x, value, config):
    """XLA's Pad from its definition: element i of a dimension lands at low + i * (interior + 1)."""
    out_shape = [lo + hi + n + max(n - 1, 0) * r for n, (lo, hi, r) in zip(x.shape, config, strict=True)]
    out = np.full(out_shape, value, x.dtype)
    for idx in np.ndindex(*x.shape):
        at = [lo + i * (r + 1) for i, (lo, _, r) in zip(idx, config, strict=True)]
        if all(0 <= a < n for a, n in zip(at, out_shape, strict=True)):
            out[tuple(at)] = x[idx]
    return out


@st.composite
def pad_problems(draw):
    shape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=3))
    config = []
    for n in shape:
        r = draw(st.integers(0, 2))
        dilated = n + max(n - 1, 0) * r
        lo = draw(st.integers(-dilated, 3))
        hi = draw(st.integers(-(dilated + lo) if dilated + lo > 0 else 0, 3))
        config.append((lo, hi, r))
    x = np.arange(math.prod(shape), dtype=np.float64).reshape(shape) + 1
    return x, tuple(config)


@given(pad_problems())
def test_pad_matches_its_definition(problem):
    x, config = problem
    assert_matches(run("pad", x, np.array(-7.0), padding_config=config), pad_reference(x, -7.0, config))


def test_iota_counts_along_its_dimension():
    for dimension in range(3):
        got = run("iota", dtype=dtypes.int32, shape=(2, 3, 4), dimension=dimension, sharding=None)
        assert_matches(got, np.indices((2, 3, 4), dtype=np.int32)[dimension])


@given(st.lists(st.integers(0, 3), min_size=1, max_size=4), st.integers(0, 1))
def test_split_then_concatenate_round_trips(sizes, axis):
    shape = [2, 2]
    shape[axis] = sum(sizes)
    x = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    parts = run("split", x, sizes=tuple(sizes), axis=axis)
    assert [p.shape[axis] for p in parts] == sizes
    assert_matches(run("concatenate", *parts, dimension=axis), x)


def test_broadcast_in_dim_without_printed_dimensions_broadcasts_a_scalar():
    got = run("broadcast_in_dim", np.array(2.5), shape=(2, 3), broadcast_dimensions=(), sharding=None)
    assert_matches(got, np.full((2, 3), 2.5))


# --- reductions --------------------------------------------------------------------------------------

F64, I32, U32 = np.float64, np.int32, np.uint32


@pytest.mark.parametrize("primitive,dtype,identity", [
    ("reduce_sum", F64, 0.0), ("reduce_prod", F64, 1.0),
    ("reduce_max", F64, -np.inf), ("reduce_min", F64, np.inf),
    ("reduce_max", I32, np.iinfo(I32).min), ("reduce_min", I32, np.iinfo(I32).max),
    ("reduce_max", np.bool_, False), ("reduce_min", np.bool_, True),
    ("reduce_and", U32, 0xFFFFFFFF), ("reduce_and", I32, -1), ("reduce_or", U32, 0), ("reduce_xor", I32, 0),
    ("reduce_and", np.bool_, True), ("reduce_or", np.bool_, False),
])
def test_empty_reductions_give_the_identity(primitive, dtype, identity):
    assert_matches(run(primitive, np.zeros((0, 3), dtype), axes=(0,)), np.full(3, identity, dtype))


@pytest.mark.parametrize("primitive,reference", [
    ("reduce_sum", np.sum), ("reduce_prod", np.prod), ("reduce_max", np.max), ("reduce_min", np.min),
])
@pytest.mark.parametrize("axes", [(0,), (1,), (0, 2), (0, 1, 2), ()])
def test_float_reductions_match_numpy(primitive, reference, axes):
    x = np.random.default_rng(0).normal(size=(2, 3, 4))
    got = run(primitive, x, axes=axes)
    assert_matches(got, np.asarray(reference(x, axis=axes)), 1e-12, 1e-12)


def test_integer_reductions_wrap():
    big = np.array([[2**31 - 1, 1], [2**16, 2**16]], I32)
    assert_matches(run("reduce_sum", big, axes=(1,)), np.array([-(2**31), 2**17], I32))
    assert_matches(run("reduce_prod", big, axes=(1,)), np.array([2**31 - 1, 0], I32))
    assert_matches(run("cumsum", big, axis=1, reverse=False),
                   np.array([[2**31 - 1, -(2**31)], [2**16, 2**17]], I32))


def test_bitwise_reductions_match_python():
    x = np.array([[0b1100, 0b1010, 0b0110]], U32)
    assert_matches(run("reduce_and", x, axes=(1,)), np.array([0b1100 & 0b1010 & 0b0110], U32))
    assert_matches(run("reduce_or", x, axes=(1,)), np.array([0b1110], U32))
    assert_matches(run("reduce_xor", x, axes=(1,)), np.array([0b1100 ^ 0b1010 ^ 0b0110], U32))


def test_bfloat16_sums_accumulate_in_float32():
    """256 + 64 ones is exactly 320, a bfloat16 number; a bfloat16 running sum would stall at 256."""
    bf16 = dtypes.bfloat16.numpy
    x = np.array([256.0] + [1.0] * 64, bf16)
    assert_matches(run("reduce_sum", x, axes=(0,)), np.array(320.0, bf16))
    assert_matches(run("cumsum", x, axis=0, reverse=False)[-1:], np.array([320.0], bf16))


def test_full_reductions_return_0d_arrays():
    x = np.ones((2, 3))
    for primitive in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
        out = run(primitive, x, axes=(0, 1))
        assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == F64
    out = run("argmax", np.ones(4), axes=(0,), index_dtype=dtypes.int32)
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.int32


@pytest.mark.parametrize("primitive,row,want", [
    ("argmax", [1.0, 3.0, 3.0, 0.0], 1),          # first of ties
    ("argmin", [2.0, 0.0, 5.0, 0.0], 1),
    ("argmax", [1.0, np.nan, 9.0, np.nan], 1),    # nan counts as the max; the first nan wins
    ("argmin", [1.0, -9.0, np.nan, 0.0], 2),      # ... and as the min
    ("argmax", [-0.0, 0.0], 0),                   # -0 == 0 is a tie
])
def test_argmax_argmin_follow_xla(primitive, row, want):
    assert_matches(run(primitive, np.array([row]), axes=(1,), index_dtype=dtypes.int64), np.array([want]))


def test_reductions_reject_what_they_do_not_support():
    with pytest.raises(NotImplementedError, match="reduce_max"):
        run("reduce_max", np.ones(3, np.complex128), axes=(0,))
    with pytest.raises(TypeError, match="reduce_or"):
        run("reduce_or", np.ones(3), axes=(0,))


def cumulative_reference(op, x, axis, reverse):
    x = np.moveaxis(x, axis, -1)
    out = np.empty_like(x)
    for idx in np.ndindex(*x.shape[:-1]):
        order = range(x.shape[-1] - 1, -1, -1) if reverse else range(x.shape[-1])
        acc = None
        for j in order:
            acc = x[idx + (j,)] if acc is None else op(acc, x[idx + (j,)])
            out[idx + (j,)] = acc
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("primitive,op", [
    ("cumsum", operator.add), ("cumprod", operator.mul), ("cummax", max), ("cummin", min),
    ("cumlogsumexp", np.logaddexp),
])
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data(), reverse=st.booleans())
def test_cumulative_ops_match_a_running_fold(primitive, op, shape, data, reverse):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = np.random.default_rng(len(shape)).normal(size=shape)
    got = run(primitive, x, axis=axis, reverse=reverse)
    assert_matches(got, cumulative_reference(op, x, axis, reverse), 1e-12, 1e-12)


# --- window reductions -------------------------------------------------------------------------------


def window_reference(x, fill, fold, dims, strides, padding, base, wdil):
    """XLA's ReduceWindow from its definition, in the padded and base-dilated coordinates: element i of
    a dimension sits at low + i * base; holes and padding hold `fill` (the init value)."""
    shape, dims, strides, base, wdil = map(np.array, (x.shape, dims, strides, base, wdil))
    low, high = np.array(padding).T
    sizes = low + high + np.maximum((shape - 1) * base + 1, 0)
    spans = (dims - 1) * wdil + 1
    out_shape = np.where(sizes >= spans, (sizes - spans) // strides + 1, 0)
    out = []
    for o in np.ndindex(*out_shape):
        values = []
        for w in np.ndindex(*dims):
            q = np.array(o) * strides + np.array(w) * wdil - low
            inside = np.all((q % base == 0) & (q >= 0) & (q // base < shape))
            values.append(x[tuple(q // base)] if inside else fill)
        out.append(fold(values))
    return np.array(out).reshape(out_shape)


@st.composite
def window_problems(draw, dilations=True):
    ndim = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    dims = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    strides = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    padding = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(ndim))
    base = tuple(draw(st.integers(1, 2 if dilations else 1)) for _ in range(ndim))
    wdil = tuple(draw(st.integers(1, 2 if dilations else 1)) for _ in range(ndim))
    x = np.random.default_rng(draw(st.integers(0, 99))).normal(size=shape)
    return x, dict(window_dimensions=dims, window_strides=strides, padding=padding, base_dilation=base,
                   window_dilation=wdil)


@pytest.mark.parametrize("primitive,fill,fold", [
    ("reduce_window_sum", 0.0, math.fsum),
    ("reduce_window_max", -np.inf, max),
    ("reduce_window_min", np.inf, min),
])
@given(window_problems())
def test_window_reductions_match_their_definition(primitive, fill, fold, problem):
    x, window = problem
    want = window_reference(x, fill, fold, *window.values())
    assert_matches(run(primitive, x, **window), want, 1e-12, 1e-12)


@pytest.mark.parametrize("select_prim,select,fill", [
    ("ge", operator.ge, -np.inf),
    ("le", operator.le, np.inf),
])
@given(window_problems())
def test_select_and_gather_add_takes_the_tangent_at_the_windows_extremum(select_prim, select, fill, problem):
    """JAX's reducer over (key, tangent) pairs, from (fill, 0): keep the accumulator when select(acc, x)."""
    x, window = problem
    t = np.random.default_rng(1).normal(size=x.shape)

    def pick(positions):  # the window as flat positions into x and t; -1 marks padding and holes
        best_key, best = fill, 0.0
        for p in positions:
            key, tangent = (x.flat[p], t.flat[p]) if p >= 0 else (fill, 0.0)
            if not select(best_key, key):
                best_key, best = key, tangent
        return best

    positions = np.arange(x.size).reshape(x.shape)
    got = run("select_and_gather_add", t, x, select_prim=Symbol(select_prim), **window)
    assert_matches(got, window_reference(positions, -1, pick, *window.values()).astype(np.float64))


@pytest.mark.parametrize("select_prim", ["ge", "le"])
@given(window_problems(dilations=False))
def test_select_and_scatter_add_is_the_transpose_of_select_and_gather_add(select_prim, problem):
    """<gather(t), s> == <t, scatter(s)> for all t and s: JAX's VJP of one is the other."""
    x, window = problem
    del window["base_dilation"], window["window_dilation"]
    rng = np.random.default_rng(2)
    t = rng.normal(size=x.shape)
    gathered = run("select_and_gather_add", t, x, select_prim=Symbol(select_prim), **window)
    s = rng.normal(size=gathered.shape)
    scattered = run("select_and_scatter_add", s, x, select_prim=Symbol(select_prim), **window)
    assert scattered.shape == x.shape and scattered.dtype == x.dtype
    assert np.isclose(np.sum(gathered * s), np.sum(t * scattered), rtol=1e-12, atol=1e-12)


def test_select_and_scatter_add_sums_overlapping_windows_into_the_first_max():
    x = np.array([1.0, 5.0, 5.0, 2.0])
    got = run("select_and_scatter_add", np.array([10.0, 20.0, 30.0]), x, select_prim=Symbol("ge"),
              window_dimensions=(2,), window_strides=(1,), padding=((0, 0),))
    assert_matches(got, np.array([0.0, 30.0, 30.0, 0.0]))


# --- reducer jaxprs (variadic reduce, generic reduce_window) ----------------------------------------


def _scalar(dtype):
    return ShapedArray((), dtype)


def _binary_reducer(primitive, dtype) -> ClosedJaxpr:
    a, b, out = Var(_scalar(dtype)), Var(_scalar(dtype)), Var(_scalar(dtype))
    return ClosedJaxpr(Jaxpr([], [a, b], [out], [Eqn(primitive, [a, b], [out], {})]))


def _argmax_reducer() -> ClosedJaxpr:
    """JAX's `_argmax_reduce` comb: take the element when it is strictly greater."""
    acc, acc_i, x, x_i = Var(_scalar(dtypes.float64)), Var(_scalar(dtypes.int32)), Var(
        _scalar(dtypes.float64)), Var(_scalar(dtypes.int32))
    gt, val, idx = Var(_scalar(dtypes.bool_)), Var(_scalar(dtypes.float64)), Var(_scalar(dtypes.int32))
    eqns = [Eqn("gt", [x, acc], [gt], {}), Eqn("select_n", [gt, acc, x], [val], {}),
            Eqn("select_n", [gt, acc_i, x_i], [idx], {})]
    return ClosedJaxpr(Jaxpr([], [acc, acc_i, x, x_i], [val, idx], eqns))


def _needs_impls(*names):
    for name in names:
        try:
            get_impl(name)
        except UnsupportedPrimitive:
            pytest.skip(f"needs the NumPy implementation of {name}")


def test_variadic_reduce_folds_the_reducer():
    _needs_impls("add", "mul", "gt", "select_n")
    x = np.random.default_rng(3).normal(size=(3, 4))
    add, mul = _binary_reducer("add", dtypes.float64), _binary_reducer("mul", dtypes.float64)
    (total,) = run("reduce", x, np.array(0.0), jaxpr=add, dimensions=(1,))
    assert_matches(total, x.sum(axis=1), 1e-12, 1e-12)
    (product,) = run("reduce", x, np.array(1.0), jaxpr=mul, dimensions=(0, 1))
    assert_matches(product, np.prod(x), 1e-12, 1e-12)
    ties = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    index = np.broadcast_to(np.arange(3, dtype=np.int32), ties.shape)
    inits = np.array(-np.inf), np.array(0, np.int32)
    best, where = run("reduce", ties, index, *inits, jaxpr=_argmax_reducer(), dimensions=(1,))
    assert_matches(best, np.array([3.0, 2.0]))
    assert_matches(where, np.array([1, 0], np.int32))


@given(window_problems())
def test_generic_reduce_window_matches_its_definition(problem):
    _needs_impls("max")
    x, window = problem
    (got,) = run("reduce_window", x, np.array(-5.0), jaxpr=_binary_reducer("max", dtypes.float64), consts=(),
                 **window)
    assert_matches(got, window_reference(x, -5.0, max, *window.values()))


# --- dot_general -------------------------------------------------------------------------------------


@st.composite
def dot_problems(draw):
    """Random dimension numbers: batch, contracting and free dims, each operand in a random dim order."""
    nb, nc, nl, nr = (draw(st.integers(0, 2)) for _ in range(4))
    letters = iter("abcdefgh")
    batch, contract = [next(letters) for _ in range(nb)], [next(letters) for _ in range(nc)]
    lfree, rfree = [next(letters) for _ in range(nl)], [next(letters) for _ in range(nr)]
    size = {c: draw(st.integers(1, 3)) for c in batch + contract + lfree + rfree}
    lhs = draw(st.permutations(batch + contract + lfree))
    rhs = draw(st.permutations(batch + contract + rfree))
    dims = (([lhs.index(c) for c in contract], [rhs.index(c) for c in contract]),
            ([lhs.index(c) for c in batch], [rhs.index(c) for c in batch]))
    out = batch + [c for c in lhs if c in lfree] + [c for c in rhs if c in rfree]
    spec = f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}"
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    return (rng.normal(size=[size[c] for c in lhs]), rng.normal(size=[size[c] for c in rhs]), dims, spec)


@given(dot_problems())
def test_dot_general_matches_einsum(problem):
    lhs, rhs, dims, spec = problem
    got = run("dot_general", lhs, rhs, dimension_numbers=dims, precision=None, preferred_element_type=None)
    assert_matches(got, np.asarray(np.einsum(spec, lhs, rhs)), 1e-12, 1e-12)


def test_dot_general_integer_overflow_wraps_like_xla():
    lhs = np.array([[2**30, 2**30, 3]], I32)
    rhs = np.array([[2], [2], [-5]], I32)
    exact = 2**30 * 2 * 2 - 15
    wrapped = (exact + 2**31) % 2**32 - 2**31
    got = run("dot_general", lhs, rhs, dimension_numbers=(([1], [0]), ([], [])),
              preferred_element_type=dtypes.int32)
    assert_matches(got, np.array([[wrapped]], I32))


@pytest.mark.parametrize("lhs_dtype,preferred,out_dtype", [
    (np.float32, None, np.float32),
    (np.float32, dtypes.float64, np.float64),
    (np.int8, dtypes.int32, np.int32),
    (dtypes.bfloat16.numpy, None, dtypes.bfloat16.numpy),
    (np.bool_, None, np.bool_),
])
def test_dot_general_output_dtype(lhs_dtype, preferred, out_dtype):
    lhs = np.ones((2, 3), lhs_dtype)
    got = run("dot_general", lhs, lhs.T.copy(), dimension_numbers=(([1], [0]), ([], [])),
              preferred_element_type=preferred)
    assert got.dtype == out_dtype and got.shape == (2, 2)
    assert_matches(got.astype(np.float64), np.full((2, 2), 1.0 if lhs_dtype == np.bool_ else 3.0))


# --- ragged_dot_general ------------------------------------------------------------------------------


def _ragged_numbers(contract, batch, ragged, group):
    return Record("RaggedDotDimensionNumbers", (("dot_dimension_numbers", (contract, batch)),
                                                ("lhs_ragged_dimensions", ragged),
                                                ("rhs_group_dimensions", group)))


@given(st.lists(st.integers(0, 3), min_size=1, max_size=3), st.integers(0, 2))
def test_ragged_dot_over_rows_uses_each_rows_group(group_sizes, extra_rows):
    rng = np.random.default_rng(4)
    m, k, n, g = sum(group_sizes) + extra_rows, 3, 2, len(group_sizes)
    lhs, rhs = rng.normal(size=(m, k)), rng.normal(size=(g, k, n))
    ends = np.cumsum(group_sizes)
    want = np.zeros((m, n))
    for row in range(m):
        group = int(np.searchsorted(ends, row, side="right"))
        if group < g:  # rows past the last group stay zero
            want[row] = lhs[row] @ rhs[group]
    got = run("ragged_dot_general", lhs, rhs, np.array(group_sizes, np.int32),
              ragged_dot_dimension_numbers=_ragged_numbers(((1,), (1,)), ((), ()), (0,), (0,)))
    assert_matches(got, want, 1e-12, 1e-12)


def test_ragged_dot_over_the_contracting_dim_gives_one_product_per_group():
    rng = np.random.default_rng(5)
    sizes = [2, 0, 3]
    lhs, rhs = rng.normal(size=(4, 5)), rng.normal(size=(5, 2))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    want = np.stack([lhs[:, s:s + n] @ rhs[s:s + n] for s, n in zip(starts, sizes, strict=True)])
    got = run("ragged_dot_general", lhs, rhs, np.array(sizes, np.int32),
              ragged_dot_dimension_numbers=_ragged_numbers(((1,), (0,)), ((), ()), (1,), ()))
    assert_matches(got, want, 1e-12, 1e-12)


def test_ragged_dot_rejects_group_offset():
    with pytest.raises(NotImplementedError, match="ragged_dot_general"):
        run("ragged_dot_general", np.ones((2, 2)), np.ones((1, 2, 2)), np.array([2], np.int32),
            ragged_dot_dimension_numbers=_ragged_numbers(((1,), (1,)), ((), ()), (0,), (0,)),
            group_offset=np.array([0], np.int32))


# --- conv_general_dilated ----------------------------------------------------------------------------


def conv_reference(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, groups, batch_groups):
    """XLA's convolution from its definition, on logical layouts lhs (N, C, S...), rhs (O, I, K...):
    out[n, o, y] = sum over i, k of lhs[n', c, x] * rhs[o, i, k] where x * lhs_dilation == y * stride +
    k * rhs_dilation - low, c is channel i of o's feature group and n' is n in o's batch group."""
    n_in, _, *space = lhs.shape
    o_all, i_per, *kernel = rhs.shape
    space, strides, lhs_dilation, rhs_dilation = map(np.array, (space, strides, lhs_dilation, rhs_dilation))
    low, high = np.array(padding).T
    sizes = low + high + (space - 1) * lhs_dilation + 1
    spans = (np.array(kernel) - 1) * rhs_dilation + 1
    out_space = np.where(sizes >= spans, (sizes - spans) // strides + 1, 0)
    out = np.zeros([n_in // batch_groups, o_all, *out_space])
    for n, o, *y in itertools.product(*map(range, out.shape)):
        group, batch_group = o // (o_all // groups), o // (o_all // batch_groups)
        for i in range(i_per):
            for k in itertools.product(*map(range, kernel)):
                q = np.array(y) * strides + np.array(k) * rhs_dilation - low
                if np.all((q % lhs_dilation == 0) & (q >= 0) & (q // lhs_dilation < space)):
                    x = tuple(q // lhs_dilation)
                    out[(n, o, *y)] += (lhs[(batch_group * (n_in // batch_groups) + n, group * i_per + i, *x)]
                                        * rhs[(o, i, *k)])
    return out


@st.composite
def conv_problems(draw):
    spatial = draw(st.integers(1, 2))
    groups, batch_groups = draw(st.sampled_from([(1, 1), (2, 1), (3, 1), (1, 2)]))
    n = batch_groups * draw(st.integers(1, 2))
    i_per = draw(st.integers(1, 2))
    o = groups * batch_groups * draw(st.integers(1, 2))
    space = [draw(st.integers(1, 5)) for _ in range(spatial)]
    kernel = [draw(st.integers(1, 3)) for _ in range(spatial)]
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    lhs, rhs = rng.normal(size=[n, groups * i_per] + space), rng.normal(size=[o, i_per] + kernel)
    params = dict(
        strides=tuple(draw(st.integers(1, 2)) for _ in range(spatial)),
        padding=tuple((draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(spatial)),
        lhs_dilation=tuple(draw(st.integers(1, 2)) for _ in range(spatial)),
        rhs_dilation=tuple(draw(st.integers(1, 2)) for _ in range(spatial)),
        groups=groups, batch_groups=batch_groups)
    specs = [tuple(draw(st.permutations(range(spatial + 2)))) for _ in range(3)]
    return lhs, rhs, params, specs


@given(conv_problems())
def test_conv_matches_its_definition(problem):
    lhs, rhs, p, (lhs_spec, rhs_spec, out_spec) = problem
    want = conv_reference(lhs, rhs, **p)
    numbers = Record("ConvDimensionNumbers", (("lhs_spec", lhs_spec), ("rhs_spec", rhs_spec),
                                              ("out_spec", out_spec)))
    # the spec gives, for each logical dim (batch, feature, spatial...), the array dim that holds it
    lhs_array, rhs_array = np.transpose(lhs, np.argsort(lhs_spec)), np.transpose(rhs, np.argsort(rhs_spec))
    got = run("conv_general_dilated", lhs_array, rhs_array,
              window_strides=p["strides"], padding=p["padding"], lhs_dilation=p["lhs_dilation"],
              rhs_dilation=p["rhs_dilation"], dimension_numbers=numbers, feature_group_count=p["groups"],
              batch_group_count=p["batch_groups"], precision=None, preferred_element_type=None)
    assert_matches(got, np.transpose(want, np.argsort(out_spec)), 1e-12, 1e-12)


def test_conv_of_int8_with_int32_accumulation_wraps():
    lhs = np.full((1, 1, 3), 100, np.int8)
    rhs = np.full((1, 1, 3), 100, np.int8)
    got = run("conv_general_dilated", lhs, rhs, window_strides=(1,), padding=((0, 0),), lhs_dilation=(1,),
              rhs_dilation=(1,), dimension_numbers=None, feature_group_count=1, batch_group_count=1,
              preferred_element_type=dtypes.int32)
    assert_matches(got, np.array([[[30000]]], np.int32))
