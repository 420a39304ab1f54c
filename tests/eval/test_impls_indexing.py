"""NumPy implementations of the indexing primitives, against the JAX oracle and against references.

References are independent of the implementation: per-element loops written from XLA's gather and
scatter specifications, `np.add.at`, `np.lexsort` (which already orders NaN last and -0.0 == 0.0,
as JAX's sort does) and NumPy slicing.
"""

from __future__ import annotations

import json
from functools import partial

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from eval.oracle import decode_array, mismatch
from eval.registry import get_impl
from ir.core import ClosedJaxpr, Jaxpr, ShapedArray, Var
from ir.dtypes import from_numpy
from ir.params import NpScalar, Record, Symbol
from tests.oracle_paths import ORACLE

MINE = ("slice", "dynamic_slice", "dynamic_update_slice", "gather", "scatter", "scatter-add", "scatter-sub",
        "scatter-mul", "scatter-min", "scatter-max", "sort", "top_k", "approx_top_k")
MODES = ("CLIP", "FILL_OR_DROP", "PROMISE_IN_BOUNDS")
CASES = {c["id"]: c for c in json.loads((ORACLE / "indexing.json").read_text())["cases"]}


def run(name, *operands, **params):
    return get_impl(name)(*operands, **params)


def mode(name):
    return Symbol(f"GatherScatterMode.{name}")


def gather_dn(offset, collapsed, start_map, operand_batching=(), indices_batching=()):
    return Record("GatherDimensionNumbers", {
        "offset_dims": offset, "collapsed_slice_dims": collapsed, "start_index_map": start_map,
        "operand_batching_dims": operand_batching, "start_indices_batching_dims": indices_batching})


def scatter_dn(window, inserted, to_operand, operand_batching=(), indices_batching=()):
    return Record("ScatterDimensionNumbers", {
        "update_window_dims": window, "inserted_window_dims": inserted,
        "scatter_dims_to_operand_dims": to_operand, "operand_batching_dims": operand_batching,
        "scatter_indices_batching_dims": indices_batching})


def assert_matches(got, want, rtol=0.0, atol=0.0):
    assert isinstance(got, np.ndarray), type(got)
    problem = mismatch(got, want, rtol, atol)
    assert problem is None, problem


# --- the oracle, single-primitive cases --------------------------------------------------------
# The jaxprs around these primitives only wrap negative indices (`select_n(lt(i, 0), i, add(i, n))`)
# or build index vectors (`broadcast_in_dim`, `concatenate`); `prep` does the same with NumPy.

def wrap(i, n):
    return np.where(i < 0, i + np.asarray(n, i.dtype), i)


def column(i):
    return i[:, None]


ROWS = gather_dn((1,), (0,), (0,))
ROW_UPDATES = scatter_dn((1,), (0,), (0,))
PROMISE, CLIP, FILL = mode("PROMISE_IN_BOUNDS"), mode("CLIP"), mode("FILL_OR_DROP")


def gather_params(dn, sizes, mode_, fill_value=None):
    return dict(dimension_numbers=dn, slice_sizes=sizes, mode=mode_, fill_value=fill_value,
                indices_are_sorted=False, unique_indices=False)


def scatter_params(dn, mode_=FILL):
    return dict(dimension_numbers=dn, mode=mode_, indices_are_sorted=False, unique_indices=False,
                update_consts=(), update_jaxpr=None)


ORACLE_TABLE = [
    # case id, primitive, params, prep(args) -> operands
    ("slice/strided/f64[3,4]", "slice",
     dict(start_indices=(0, 1), limit_indices=(3, 4), strides=(1, 2)), lambda a: (a,)),
    ("slice/basic/f64[3,4]", "slice",
     dict(start_indices=(1, 0), limit_indices=(3, 3), strides=None), lambda a: (a,)),
    ("slice/np_int64_params/f64[3,4]", "slice",
     dict(start_indices=(NpScalar(0), NpScalar(1)), limit_indices=(NpScalar(2), NpScalar(3)), strides=None),
     lambda a: (a,)),
    ("dynamic_slice/f64[3,4],i32[]", "dynamic_slice", dict(slice_sizes=(2, 2)),
     lambda a, b, c: (a, wrap(b, 3), wrap(c, 4))),
    ("dynamic_slice/clamped/f64[3,4],i32[]", "dynamic_slice", dict(slice_sizes=(2, 2)),
     lambda a, b, c: (a, wrap(b, 3), wrap(c, 4))),
    ("dynamic_slice/int64_index/f64[3,4],i64[]", "dynamic_slice", dict(slice_sizes=(3, 2)),
     lambda a, b: (a, np.int64(0), wrap(b, 4))),
    ("dynamic_update_slice/f64[3,4],f64[2,2],i32[]", "dynamic_update_slice", {},
     lambda a, b, c, d: (a, b, wrap(c, 3), wrap(d, 4))),
    ("dynamic_update_slice/clamped/f64[3,4],f64[2,3],i32[]", "dynamic_update_slice", {},
     lambda a, b, c, d: (a, b, wrap(c, 3), wrap(d, 4))),
    ("dynamic_update_slice/set/f64[3,4],f64[4],i32[]", "scatter",
     scatter_params(scatter_dn((0,), (0,), (0,))), lambda a, b, c: (a, wrap(c, 3)[None], b)),
    ("gather/rows/f64[3,4],i32[4]", "gather", gather_params(ROWS, (1, 4), PROMISE),
     lambda a, b: (a, column(wrap(b, 3)))),
    ("gather/negative/f64[3,4],i32[5]", "gather", gather_params(ROWS, (1, 4), PROMISE),
     lambda a, b: (a, column(wrap(b, 3)))),
    ("gather/int_operand/i32[3,4],i32[3]", "gather", gather_params(ROWS, (1, 4), PROMISE),
     lambda a, b: (a, column(wrap(b, 3)))),
    ("gather/columns/f64[3,4],i32[3]", "gather", gather_params(gather_dn((0,), (1,), (1,)), (3, 1), PROMISE),
     lambda a, b: (a, column(wrap(b, 4)))),
    ("gather/points/f64[3,4],i32[5]", "gather", gather_params(gather_dn((), (0, 1), (0, 1)), (1, 1), PROMISE),
     lambda a, b, c: (a, np.stack([wrap(b, 3), wrap(c, 4)], axis=1))),
    ("gather/take_clip/f64[3,4],i32[4]", "gather", gather_params(gather_dn((0,), (1,), (1,)), (3, 1), CLIP),
     lambda a, b: (a, column(b))),
    ("gather/take_fill/f64[3,4],i32[4]", "gather",
     gather_params(gather_dn((0,), (1,), (1,)), (3, 1), FILL, fill_value=-1.0),
     lambda a, b: (a, column(wrap(b, 4)))),
    ("gather/take_along_axis/f64[3,4],i32[3,2]", "gather",
     gather_params(gather_dn((), (1,), (1,), (0,), (0,)), (1, 1), FILL, fill_value=np.nan),
     lambda a, b: (a, wrap(b, 4)[..., None])),
    ("scatter-add/dup_rows/f64[3,4],i32[4],f64[4,4]", "scatter-add", scatter_params(ROW_UPDATES),
     lambda a, b, c: (a, column(wrap(b, 3)), c)),
    ("scatter-add/oob_dropped/f64[3,4],i32[4],f64[4,4]", "scatter-add", scatter_params(ROW_UPDATES),
     lambda a, b, c: (a, column(wrap(b, 3)), c)),
    ("scatter-add/int/i32[3,4],i32[4],i32[4,4]", "scatter-add", scatter_params(ROW_UPDATES),
     lambda a, b, c: (a, column(wrap(b, 3)), c)),
    ("scatter-add/points/f64[3,4],i32[5],f64[5]", "scatter-add",
     scatter_params(scatter_dn((), (0, 1), (0, 1))),
     lambda a, b, c, d: (a, np.stack([wrap(b, 3), wrap(c, 4)], axis=1), d)),
    ("scatter/set_unique/f64[3,4],i32[2],f64[2,4]", "scatter", scatter_params(ROW_UPDATES),
     lambda a, b, c: (a, column(wrap(b, 3)), c)),
    ("scatter/set_columns/f64[3,4],i32[2],f64[3,2]", "scatter", scatter_params(scatter_dn((0,), (1,), (1,))),
     lambda a, b, c: (a, column(wrap(b, 4)), c)),
    ("scatter-mul/unique/f64[3,4],i32[2],f64[2,4]", "scatter-mul", scatter_params(ROW_UPDATES),
     lambda a, b, c: (a, column(wrap(b, 3)), c)),
    ("scatter-min/unique/f64[3,4],i32[2],f64[2,4]", "scatter-min", scatter_params(ROW_UPDATES),
     lambda a, b, c: (a, column(wrap(b, 3)), c)),
    ("scatter-max/unique/f64[3,4],i32[2],f64[2,4]", "scatter-max", scatter_params(ROW_UPDATES),
     lambda a, b, c: (a, column(wrap(b, 3)), c)),
    ("sort/axis=1/f64[3,4]", "sort", dict(dimension=1, is_stable=True, num_keys=1), lambda *a: a),
    ("sort/axis=0/f64[3,4]", "sort", dict(dimension=0, is_stable=True, num_keys=1), lambda *a: a),
    ("sort/int/i32[3,4]", "sort", dict(dimension=1, is_stable=True, num_keys=1), lambda *a: a),
    ("sort/special/f64[3,4]", "sort", dict(dimension=1, is_stable=True, num_keys=1), lambda *a: a),
    ("sort/multi_operand/f64[3,4]", "sort", dict(dimension=1, is_stable=True, num_keys=1), lambda *a: a),
    ("sort/num_keys=2/i32[3,4],f64[3,4]", "sort",
     dict(dimension=1, is_stable=True, num_keys=2), lambda *a: a),
    ("top_k/f64[3,4]", "top_k", dict(axis=1, k=2), lambda *a: a),
    ("top_k/int/i32[6]", "top_k", dict(axis=0, k=3), lambda *a: a),
    ("approx_max_k/f64[3,4]", "approx_top_k",
     dict(aggregate_to_topk=True, is_max_k=True, k=2, recall_target=0.95, reduction_dimension=-1,
          reduction_input_size_override=-1), lambda *a: a),
]


@pytest.mark.parametrize("case_id,name,params,prep", ORACLE_TABLE, ids=[row[0] for row in ORACLE_TABLE])
def test_matches_oracle(case_id, name, params, prep):
    case = CASES[case_id]
    args = [decode_array(a) for a in case["args"]]
    got = run(name, *prep(*args), **params)
    want = [decode_array(o) for o in case["out"]]
    if name == "sort" and len(got) > len(want):  # argsort-like cases keep only some operands
        got = got[-len(want):]
    got = list(got) if isinstance(got, tuple) else [got]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert_matches(g, w, case["rtol"], case["atol"])


def _parsed_single_primitive_cases():
    return [cid for cid, c in CASES.items()
            if {t.split(":", 1)[1] for t in c["tags"] if t.startswith("primitive:")} <= set(MINE) | {"jit"}]


def _eval_mine(jaxpr, args):
    """Evaluate a jaxpr made only of this module's primitives (and `jit` around them)."""
    env = dict(zip(jaxpr.invars, args, strict=True))
    for eqn in jaxpr.eqns:
        operands = [env[v] for v in eqn.invars]
        if eqn.primitive == "jit":
            results = _eval_mine(eqn.params["jaxpr"].jaxpr, operands)
        else:
            result = run(eqn.primitive, *operands, **eqn.params)
            results = list(result) if isinstance(result, tuple) else [result]
        env.update(zip(eqn.outvars, results, strict=True))
    return [env[v] for v in jaxpr.outvars]


@pytest.mark.parametrize("case_id", _parsed_single_primitive_cases())
def test_parsed_fixture_case(case_id):
    try:
        from ir.text import parse_jaxpr
    except ImportError:
        pytest.skip("the jaxpr parser (ir/text) has not landed yet")
    case = CASES[case_id]
    closed = parse_jaxpr(case["jaxpr"])
    got = _eval_mine(closed.jaxpr, [decode_array(a) for a in case["args"]])
    want = [decode_array(o) for o in case["out"]]
    for g, w in zip(got, want, strict=True):
        assert_matches(g, w, case["rtol"], case["atol"])


# --- slices ------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,start,limit,strides", [
    ((5,), (1,), (4,), None),
    ((5,), (0,), (5,), (2,)),
    ((3, 4), (0, 1), (3, 4), (2, 3)),
    ((2, 3, 4), (1, 0, 2), (2, 3, 4), (1, 2, 1)),
    ((3, 0), (1, 0), (3, 0), None),
    ((), (), (), None),
])
def test_slice_is_numpy_slicing(shape, start, limit, strides):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    got = run("slice", x, start_indices=start, limit_indices=limit, strides=strides)
    steps = strides or (1,) * len(shape)
    want = x[tuple(slice(s, e, k) for s, e, k in zip(start, limit, steps, strict=True))]
    assert_matches(got, np.asarray(want))


small_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
index_dtypes = st.sampled_from([np.int32, np.int64, np.uint32, np.int8])


@given(st.data(), small_shapes, index_dtypes)
def test_dynamic_slice_clamps_starts(data, shape, index_dtype):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    sizes = tuple(data.draw(st.integers(0, d)) for d in shape)
    lo = 0 if np.dtype(index_dtype).kind == "u" else -6
    starts = [index_dtype(data.draw(st.integers(lo, 6))) for _ in shape]
    got = run("dynamic_slice", x, *starts, slice_sizes=sizes)
    assert got.shape == sizes and got.dtype == x.dtype
    # In-range starts are plain slices; any other start reads the same as the nearest in-range one.
    nearest = [min(max(int(s), 0), d - k) for s, d, k in zip(starts, shape, sizes, strict=True)]
    want = x[tuple(slice(b, b + k) for b, k in zip(nearest, sizes, strict=True))]
    assert_matches(got, want)
    assert_matches(run("dynamic_slice", x, *map(np.int64, nearest), slice_sizes=sizes), got)


@given(st.data(), small_shapes)
def test_dynamic_update_slice_clamps_and_leaves_operand_unchanged(data, shape):
    x = np.zeros(shape, np.int32)
    update_shape = tuple(data.draw(st.integers(0, d)) for d in shape)
    update = np.arange(1, int(np.prod(update_shape)) + 1, dtype=np.int32).reshape(update_shape)
    starts = [np.int32(data.draw(st.integers(-6, 6))) for _ in shape]
    got = run("dynamic_update_slice", x, update, *starts)
    assert not x.any()
    nearest = [min(max(int(s), 0), d - k) for s, d, k in zip(starts, shape, update_shape, strict=True)]
    window = tuple(slice(b, b + k) for b, k in zip(nearest, update_shape, strict=True))
    assert_matches(got[window], update)
    assert got.sum() == update.sum()  # nothing written outside the window


# --- gather ------------------------------------------------------------------------------------

def default_fill(dtype):
    """JAX's fill for out-of-bounds FILL_OR_DROP gathers (jax.lax.gather docs)."""
    kind = from_numpy(dtype).kind
    if kind in "fc":
        return np.nan
    if kind in "iu":
        info = np.iinfo(dtype)
        return info.min if kind == "i" else info.max
    return True


def gather_reference(operand, indices, dn, slice_sizes, mode_, fill_value=None):
    """XLA's gather, one output element at a time (index_vector_dim is the last indices axis)."""
    rank, batch_shape = operand.ndim, indices.shape[:-1]
    offset_dims = dn.offset_dims
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = [d for d in range(rank) if d not in dropped]
    out_rank = len(batch_shape) + len(offset_dims)
    batch_out = [d for d in range(out_rank) if d not in offset_dims]
    out_shape = [0] * out_rank
    for k, d in enumerate(offset_dims):
        out_shape[d] = slice_sizes[window[k]]
    for k, d in enumerate(batch_out):
        out_shape[d] = batch_shape[k]
    fill = default_fill(operand.dtype) if fill_value is None else fill_value
    out = np.empty(out_shape, operand.dtype)
    for out_index in np.ndindex(*out_shape):
        batch = tuple(out_index[d] for d in batch_out)
        start = [0] * rank
        for k, d in enumerate(dn.start_index_map):
            start[d] = int(indices[batch + (k,)])
        for od, bd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=True):
            start[od] = batch[bd]
        in_bounds = all(0 <= start[d] <= operand.shape[d] - slice_sizes[d] for d in dn.start_index_map)
        start = [min(max(s, 0), operand.shape[d] - slice_sizes[d]) for d, s in enumerate(start)]
        for k, d in enumerate(window):
            start[d] += out_index[offset_dims[k]]
        out[out_index] = fill if mode_ == "FILL_OR_DROP" and not in_bounds else operand[tuple(start)]
    return out


def ordered_selection(dims):
    """Some of `dims` (at least one when there are any), in random order."""
    return st.permutations(dims).flatmap(
        lambda p: st.integers(min(1, len(p)), len(p)).map(lambda n: tuple(p[:n])))


@st.composite
def gather_problems(draw):
    """Random operand, indices and dimension numbers satisfying XLA's gather constraints."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(2, 4)) for _ in range(rank))
    dims = list(range(rank))
    operand_batching = draw(st.lists(st.sampled_from(dims), max_size=1, unique=True))
    free = [d for d in dims if d not in operand_batching]
    start_map = draw(ordered_selection(free))
    collapsed = tuple(sorted(draw(st.lists(st.sampled_from(free), unique=True)) if free else []))
    sizes = tuple(1 if d in operand_batching or d in collapsed else draw(st.integers(1, shape[d]))
                  for d in dims)
    n_batch = draw(st.integers(len(operand_batching), 2))
    batch_shape = [draw(st.integers(1, 3)) for _ in range(n_batch)]
    indices_batching = tuple(draw(st.permutations(range(n_batch)))[:len(operand_batching)])
    for od, bd in zip(operand_batching, indices_batching, strict=True):
        batch_shape[bd] = shape[od]
    n_window = rank - len(collapsed) - len(operand_batching)
    offset_dims = tuple(sorted(draw(st.permutations(range(n_batch + n_window)))[:n_window]))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int32, np.uint8, np.bool_, ml_dtypes.bfloat16]))
    operand = (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)
    index_dtype = draw(index_dtypes)
    lo = 0 if np.dtype(index_dtype).kind == "u" else -3
    indices = np.array(draw(st.lists(st.integers(lo, 6), min_size=int(np.prod(batch_shape)) * len(start_map),
                                     max_size=int(np.prod(batch_shape)) * len(start_map))),
                       dtype=index_dtype).reshape(tuple(batch_shape) + (len(start_map),))
    dn = gather_dn(offset_dims, collapsed, start_map, tuple(operand_batching), indices_batching)
    return operand, indices, dn, sizes, draw(st.sampled_from(MODES))


@given(gather_problems())
def test_gather_follows_xla_spec(problem):
    operand, indices, dn, sizes, mode_ = problem
    got = run("gather", operand, indices, **gather_params(dn, sizes, mode(mode_)))
    assert_matches(got, gather_reference(operand, indices, dn, sizes, mode_))


def test_gather_fill_value_and_defaults():
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    idx = np.array([[1], [2], [-1]], np.int32)
    params = gather_params(gather_dn((1,), (0,), (0,)), (1, 3), FILL)
    assert_matches(run("gather", x, idx, **params),
                   np.array([[3, 4, 5], [-32768] * 3, [-32768] * 3], np.int16))
    assert_matches(run("gather", x, idx, **{**params, "fill_value": 7}),
                   np.array([[3, 4, 5], [7] * 3, [7] * 3], np.int16))
    c = run("gather", x.astype(np.complex64), idx, **params)
    assert c.dtype == np.complex64 and np.isnan(c[1:]).all()


# --- scatter -----------------------------------------------------------------------------------

COMBINE = {"scatter": lambda old, new: new, "scatter-add": lambda old, new: old + new,
           "scatter-sub": lambda old, new: old - new, "scatter-mul": lambda old, new: old * new,
           "scatter-min": min, "scatter-max": max}


def scatter_reference(name, operand, indices, updates, dn, mode_):
    """XLA's scatter, one update element at a time in row-major order of the updates."""
    rank = operand.ndim
    window = [d for d in range(rank)
              if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    window_size = [1] * rank
    for k, d in enumerate(window):
        window_size[d] = updates.shape[dn.update_window_dims[k]]
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    out = operand.copy()
    for update_index in np.ndindex(*updates.shape):
        batch = tuple(update_index[d] for d in scatter_dims)
        start = [0] * rank
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            s = int(indices[batch + (k,)])
            start[d] = min(max(s, 0), operand.shape[d] - window_size[d]) if mode_ == "CLIP" else s
        for od, bd in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, strict=True):
            start[od] = batch[bd]
        if not all(0 <= start[d] <= operand.shape[d] - window_size[d] for d in range(rank)):
            continue
        for k, d in enumerate(window):
            start[d] += update_index[dn.update_window_dims[k]]
        target = tuple(start)
        out[target] = COMBINE[name](out[target], updates[update_index])
    return out


@st.composite
def scatter_problems(draw):
    """Random operand, indices, updates and dimension numbers satisfying XLA's scatter constraints."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(2, 4)) for _ in range(rank))
    dims = list(range(rank))
    operand_batching = draw(st.lists(st.sampled_from(dims), max_size=1, unique=True))
    free = [d for d in dims if d not in operand_batching]
    to_operand = draw(ordered_selection(free))
    inserted = tuple(sorted(draw(st.lists(st.sampled_from(free), unique=True)) if free else []))
    window = [d for d in free if d not in inserted]
    window_shape = [draw(st.integers(1, shape[d])) for d in window]
    n_batch = draw(st.integers(len(operand_batching), 2))
    batch_shape = [draw(st.integers(1, 3)) for _ in range(n_batch)]
    indices_batching = tuple(draw(st.permutations(range(n_batch)))[:len(operand_batching)])
    for od, bd in zip(operand_batching, indices_batching, strict=True):
        batch_shape[bd] = shape[od]
    window_dims = tuple(sorted(draw(st.permutations(range(n_batch + len(window))))[:len(window)]))
    updates_shape, batch_iter, window_iter = [], iter(batch_shape), iter(window_shape)
    for d in range(n_batch + len(window)):
        updates_shape.append(next(window_iter) if d in window_dims else next(batch_iter))
    dtype = draw(st.sampled_from([np.float64, np.int32, np.int64]))
    operand = (np.arange(int(np.prod(shape))) % 5 + 1).astype(dtype).reshape(shape)
    updates = (np.arange(int(np.prod(updates_shape))) % 3 + 2).astype(dtype).reshape(updates_shape)
    count = int(np.prod(batch_shape)) * len(to_operand)
    indices = np.array(draw(st.lists(st.integers(-2, 5), min_size=count, max_size=count)),
                       np.int32).reshape(tuple(batch_shape) + (len(to_operand),))
    dn = scatter_dn(window_dims, inserted, to_operand, tuple(operand_batching), indices_batching)
    return operand, indices, updates, dn, draw(st.sampled_from(MODES))


@given(scatter_problems(), st.sampled_from(sorted(COMBINE)))
def test_scatter_follows_xla_spec(problem, name):
    operand, indices, updates, dn, mode_ = problem
    got = run(name, operand, indices, updates, **scatter_params(dn, mode(mode_)))
    assert_matches(got, scatter_reference(name, operand, indices, updates, dn, mode_), 1e-12, 1e-12)


@given(st.data())
def test_scatter_add_rows_is_add_at(data):
    """Row scatter-add with duplicates and out-of-range rows: FILL_OR_DROP drops whole rows."""
    rows, cols, n = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 4)), data.draw(st.integers(0, 8))
    operand = np.linspace(-1.0, 1.0, rows * cols).reshape(rows, cols)
    idx = np.array(data.draw(st.lists(st.integers(-2, rows + 1), min_size=n, max_size=n)), np.int64)
    updates = np.arange(n * cols, dtype=np.float64).reshape(n, cols) / 7
    got = run("scatter-add", operand, idx[:, None], updates, **scatter_params(ROW_UPDATES))
    want = operand.copy()
    keep = (idx >= 0) & (idx < rows)
    np.add.at(want, idx[keep], updates[keep])
    assert_matches(got, want, 1e-12, 1e-12)
    assert not np.shares_memory(got, operand)


def _combiner(returns_new: bool) -> ClosedJaxpr:
    old, new = Var(ShapedArray((), from_numpy(np.float64))), Var(ShapedArray((), from_numpy(np.float64)))
    return ClosedJaxpr(Jaxpr([], [old, new], [new if returns_new else old], []), [])


def test_scatter_runs_its_update_jaxpr():
    operand, idx, updates = np.zeros(3), np.array([[2], [0], [2]], np.int32), np.array([1.0, 2.0, 3.0])
    params = scatter_params(scatter_dn((), (0,), (0,)))
    assert_matches(run("scatter", operand, idx, updates, **{**params, "update_jaxpr": _combiner(True)}),
                   np.array([2.0, 0.0, 3.0]))
    assert_matches(run("scatter", operand, idx, updates, **{**params, "update_jaxpr": _combiner(False)}),
                   operand)


# --- sort and top-k ----------------------------------------------------------------------------

SPECIALS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 1e-300]


@given(st.data())
def test_sort_matches_lexsort(data):
    shape = data.draw(small_shapes)
    dimension = data.draw(st.integers(0, len(shape) - 1))
    n_operands = data.draw(st.integers(1, 3))
    num_keys = data.draw(st.integers(1, n_operands))
    size = int(np.prod(shape))
    operands = []
    for _ in range(n_operands):
        if data.draw(st.booleans()):
            values = data.draw(st.lists(st.sampled_from(SPECIALS), min_size=size, max_size=size))
            operands.append(np.array(values, np.float64).reshape(shape))
        else:
            values = data.draw(st.lists(st.integers(-2, 2), min_size=size, max_size=size))
            operands.append(np.array(values, np.int32).reshape(shape))
    got = run("sort", *operands, dimension=dimension, is_stable=True, num_keys=num_keys)
    moved = [np.moveaxis(x, dimension, -1) for x in operands]
    order = np.lexsort(moved[:num_keys][::-1], axis=-1)
    assert len(got) == n_operands
    for g, x in zip(got, moved, strict=True):
        want = np.moveaxis(np.take_along_axis(x, order, -1), -1, dimension)
        assert g.dtype == x.dtype and g.shape == want.shape
        assert np.array_equal(g.view(f"u{g.itemsize}"), want.view(f"u{want.itemsize}"))  # bit for bit


def test_sort_keeps_signed_zeros_in_input_order_and_nans_last():
    x = np.array([np.nan, 0.0, -np.inf, -0.0, 2.0, -np.nan], np.float64)
    (got,) = run("sort", x, dimension=0, is_stable=True, num_keys=1)
    assert_matches(got, np.array([-np.inf, 0.0, -0.0, 2.0, np.nan, np.nan]))
    assert list(np.signbit(got[1:3])) == [False, True]


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.complex64, np.bool_, np.uint8])
def test_sort_other_dtypes(dtype):
    raw = np.array([3, 1, 0, 2, 1], np.float64)
    x = (raw > 1 if dtype == np.bool_ else raw).astype(dtype)
    if dtype == np.complex64:
        x = x + 1j * np.array([0, 2, 0, -1, 1], np.float32)
    (got,) = run("sort", x, dimension=0, is_stable=True, num_keys=1)
    assert got.dtype == x.dtype
    want = sorted(x.tolist(), key=lambda v: (v.real, v.imag) if isinstance(v, complex) else v)
    assert got.tolist() == want


@given(st.data())
def test_top_k_is_first_k_of_descending_stable_order(data):
    shape = data.draw(small_shapes)
    axis = data.draw(st.integers(0, len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int32, np.uint8]))
    size = int(np.prod(shape))
    x = np.array(data.draw(st.lists(st.integers(0, 4), min_size=size, max_size=size)), dtype).reshape(shape)
    values, indices = run("top_k", x, k=k, axis=axis)
    assert values.dtype == x.dtype and indices.dtype == np.int32
    rows = np.moveaxis(x, axis, -1).reshape(-1, shape[axis])
    got_v = np.moveaxis(values, axis, -1).reshape(len(rows), k)
    got_i = np.moveaxis(indices, axis, -1).reshape(len(rows), k)
    for row, v, i in zip(rows, got_v, got_i, strict=True):
        order = sorted(range(len(row)), key=lambda j: (-float(row[j]), j))[:k]
        assert i.tolist() == order and v.tolist() == row[order].tolist()


def test_top_k_ranks_special_values_by_total_order():
    x = np.array([0.0, np.nan, -np.inf, -0.0, np.inf, 1.0], np.float64)
    values, indices = run("top_k", x, k=6, axis=0)
    assert indices.tolist() == [1, 4, 5, 0, 3, 2]
    assert_matches(values, x[[1, 4, 5, 0, 3, 2]])


@pytest.mark.parametrize("is_max_k", [True, False])
def test_approx_top_k_is_exact_on_cpu(is_max_k):
    x = np.array([[0.5, -1.0, 2.0, 0.5, 3.0], [1.0, 1.0, -2.0, 0.0, 4.0]], np.float32)
    params = dict(k=3, reduction_dimension=1, recall_target=0.95, is_max_k=is_max_k,
                  reduction_input_size_override=-1, aggregate_to_topk=True)
    values, indices = run("approx_top_k", x, **params)
    sign = -1 if is_max_k else 1
    order = np.argsort(sign * x, axis=1, kind="stable")[:, :3]
    assert_matches(indices, order.astype(np.int32))
    assert_matches(values, np.take_along_axis(x, order, 1))
    # Without aggregation a dimension this small is returned whole, sorted.
    values, indices = run("approx_top_k", x, **{**params, "aggregate_to_topk": False,
                                                "reduction_dimension": -1})
    assert values.shape == x.shape
    assert_matches(indices, np.argsort(sign * x, axis=1, kind="stable").astype(np.int32))


# --- contracts ---------------------------------------------------------------------------------

def test_results_are_arrays_never_numpy_scalars():
    x = np.arange(4.0)
    assert isinstance(run("dynamic_slice", np.array(2.0), slice_sizes=()), np.ndarray)
    got = run("gather", x, np.array([2], np.int32), **gather_params(gather_dn((), (0,), (0,)), (1,), PROMISE))
    assert isinstance(got, np.ndarray) and got.shape == () and got == 2.0


@pytest.mark.parametrize("name", ["gather", "scatter-add"])
def test_unknown_mode_names_the_primitive(name):
    x, idx = np.zeros((2, 2)), np.zeros((1, 1), np.int32)
    if name == "gather":
        call = partial(run, "gather", x, idx, **gather_params(ROWS, (1, 2), mode("ONE_HOT")))
    else:
        call = partial(run, "scatter-add", x, idx, np.zeros((1, 2)),
                       **scatter_params(ROW_UPDATES, mode("ONE_HOT")))
    with pytest.raises(NotImplementedError, match=name):
        call()


def test_dynamic_slice_needs_one_start_per_dimension():
    with pytest.raises(NotImplementedError, match="dynamic_slice"):
        run("dynamic_slice", np.zeros((2, 2)), np.int32(0), slice_sizes=(1, 1))


def test_every_indexing_primitive_is_registered():
    for name in MINE:
        assert callable(get_impl(name))
