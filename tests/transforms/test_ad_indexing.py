"""AD rules of the indexing primitives (transforms/ad/rules/indexing.py): JVP vs central differences and the
transpose identity ⟨v, J u⟩ = ⟨Jᵀ v, u⟩ on a table of dimension-number and mode variants and on random
gather/scatter configurations, then the `indexing` oracle family against JAX."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ir import dtypes, lax
from ir.core import ShapedArray
from ir.errors import UnsupportedPrimitive
from ir.tracing import bind, trace_flat
from tests.transforms.ad_helpers import (
    CONFIG_EXAMPLES,
    Dom,
    Spec,
    assert_oracle,
    check_spec,
    jvp_eval,
    program_of,
    spec_test,
    vjp_eval,
)

M = lax.GatherScatterMode
GDN, SDN = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
X = Dom((3, 4))
C128 = "complex128"

ROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
COLUMNS = GDN(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,))
POINTS = GDN(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
ALONG_ROWS = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,),
                 start_indices_batching_dims=(0,))
WINDOWS = GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0,))
SET_ROWS = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
SET_COLUMNS = SDN(update_window_dims=(0,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,))
SET_POINTS = SDN(update_window_dims=(), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1))
SET_WINDOWS = SDN(update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
SET_ALONG_ROWS = SDN(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
                     operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
UNIQUE_ROWS = np.array([[2], [0]], np.int32)


def idx(shape, values) -> Dom:
    return Dom(shape, dtype="int32", values=tuple(values))


def scatter_sub(x, i, u, dn, mode):
    """lax.scatter_sub (ir.lax has none): scatter-sub with a `sub` update_jaxpr, as JAX binds it."""
    sub = trace_flat(lax.sub, [ShapedArray((), dtypes.float64)] * 2)[0]
    return bind("scatter-sub", x, i, u, dimension_numbers=dn, indices_are_sorted=False, mode=M.from_any(mode),
                unique_indices=False, update_consts=(), update_jaxpr=sub)


SPECS = [
    # gather: rows, columns, points, windows, batched, the three modes, complex
    Spec("gather/rows", lambda x, i: lax.gather(x, i, ROWS, (1, 4), mode=M.PROMISE_IN_BOUNDS),
         [X, idx((5, 1), range(3))]),
    Spec("gather/columns", lambda x, i: lax.gather(x, i, COLUMNS, (3, 1), mode=M.PROMISE_IN_BOUNDS),
         [X, idx((3, 1), range(4))]),
    Spec("gather/points", lambda x, i: lax.gather(x, i, POINTS, (1, 1), mode=M.PROMISE_IN_BOUNDS),
         [X, idx((5, 2), range(3))]),
    Spec("gather/windows", lambda x, i: lax.gather(x, i, WINDOWS, (2, 3), mode=M.PROMISE_IN_BOUNDS),
         [X, idx((4, 1), range(2))]),
    Spec("gather/batched", lambda x, i: lax.gather(x, i, ALONG_ROWS, (1, 1), mode=M.PROMISE_IN_BOUNDS),
         [X, idx((3, 2, 1), range(4))]),
    Spec("gather/clip-windows", lambda x, i: lax.gather(x, i, WINDOWS, (2, 3), mode=M.CLIP),
         [X, idx((4, 1), range(-1, 4))]),
    Spec("gather/fill", lambda x, i: lax.gather(x, i, COLUMNS, (3, 1), mode=M.FILL_OR_DROP, fill_value=-1.0),
         [X, idx((5, 1), range(-2, 6))]),
    Spec("gather/fill-batched", lambda x, i: lax.gather(x, i, ALONG_ROWS, (1, 1), mode=M.FILL_OR_DROP,
                                                         fill_value=0.5),
         [X, idx((3, 2, 1), range(-1, 5))]),
    Spec("gather/complex", lambda x, i: lax.gather(x, i, POINTS, (1, 1), mode=M.CLIP),
         [Dom((3, 4), dtype=C128), idx((4, 2), range(-1, 4))]),
    # dynamic_slice / dynamic_update_slice, in range and clamped
    Spec("dynamic_slice/clamped", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
         [X, idx((), range(-4, 5)), idx((), range(-5, 6))]),
    Spec("dynamic_slice/3d", lambda x, i: lax.dynamic_slice(x, (0, i, 1), (1, 2, 3)),
         [Dom((2, 3, 4)), idx((), range(-1, 4))]),
    Spec("dynamic_update_slice/clamped", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
         [X, Dom((2, 2)), idx((), range(-3, 5)), idx((), range(-3, 6))]),
    Spec("dynamic_update_slice/update-only", lambda u, i: lax.dynamic_update_slice(np.ones((3, 4)), u, (i, 1)),
         [Dom((1, 3)), idx((), range(3))]),
    # any rank: one rule matches the start indices as a list (there were rules for ranks 1-4 only)
    Spec("dynamic_slice/rank-5", lambda x, i, j: lax.dynamic_slice(x, (i, 0, j, 1, i), (1, 2, 1, 2, 2)),
         [Dom((2, 3, 2, 3, 2)), idx((), range(-1, 3)), idx((), range(-1, 3))]),
    Spec("dynamic_update_slice/rank-5", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, 0, j, 1, i)),
         [Dom((2, 3, 2, 3, 2)), Dom((1, 2, 1, 2, 2)), idx((), range(-1, 3)), idx((), range(-1, 3))]),
    # scatter-add / scatter-sub: duplicates, points, windows, batched, out of bounds (dropped or clipped)
    Spec("scatter-add/dup-rows", lambda x, i, u: lax.scatter_add(x, i, u, SET_ROWS, mode=M.FILL_OR_DROP),
         [X, idx((4, 1), range(3)), Dom((4, 4))]),
    Spec("scatter-add/columns-dropped", lambda x, i, u: lax.scatter_add(x, i, u, SET_COLUMNS, mode=M.FILL_OR_DROP),
         [X, idx((3, 1), range(-2, 6)), Dom((3, 3))]),
    Spec("scatter-add/windows-clipped", lambda x, i, u: lax.scatter_add(x, i, u, SET_WINDOWS, mode=M.CLIP),
         [X, idx((3, 1), range(-1, 4)), Dom((3, 2, 3))]),
    Spec("scatter-add/batched", lambda x, i, u: lax.scatter_add(x, i, u, SET_ALONG_ROWS, mode=M.FILL_OR_DROP),
         [X, idx((3, 2, 1), range(-1, 5)), Dom((3, 2))]),
    Spec("scatter-sub/dup-rows", lambda x, i, u: scatter_sub(x, i, u, SET_ROWS, M.FILL_OR_DROP),
         [X, idx((4, 1), range(-1, 4)), Dom((4, 4))]),
    # scatter: unique (JAX's own-op rule) and duplicates (JAX's update-id scheme)
    Spec("scatter/unique", lambda x, u: lax.scatter(x, UNIQUE_ROWS, u, SET_ROWS, unique_indices=True,
                                                    mode=M.FILL_OR_DROP), [X, Dom((2, 4))]),
    Spec("scatter/unique-dropped", lambda x, u: lax.scatter(x, np.array([[5], [1]], np.int32), u, SET_ROWS,
                                                            unique_indices=True, mode=M.FILL_OR_DROP),
         [X, Dom((2, 4))]),
    Spec("scatter/dup-rows", lambda x, i, u: lax.scatter(x, i, u, SET_ROWS, mode=M.FILL_OR_DROP),
         [X, idx((4, 1), range(-1, 4)), Dom((4, 4))]),
    Spec("scatter/dup-points", lambda x, i, u: lax.scatter(x, i, u, SET_POINTS, mode=M.CLIP),
         [X, idx((6, 2), range(-1, 4)), Dom((6,))]),
    Spec("scatter/columns", lambda x, i, u: lax.scatter(x, i, u, SET_COLUMNS, mode=M.FILL_OR_DROP),
         [X, idx((2, 1), range(4)), Dom((3, 2))]),
    Spec("scatter/overlapping-windows", lambda x, i, u: lax.scatter(x, i, u, SET_WINDOWS, mode=M.CLIP),
         [X, idx((3, 1), range(-1, 4)), Dom((3, 2, 3))]),
    # scatter-mul (unique indices: JAX's only case for the updates), scatter-min/max with and without ties
    Spec("scatter-mul/unique", lambda x, u: lax.scatter_mul(x, UNIQUE_ROWS, u, SET_ROWS, unique_indices=True,
                                                            mode=M.FILL_OR_DROP), [X, Dom((2, 4))]),
    Spec("scatter-mul/operand-only", lambda x, i: lax.scatter_mul(x, i, np.full((4, 4), 1.5), SET_ROWS,
                                                                  mode=M.FILL_OR_DROP),
         [X, idx((4, 1), range(-1, 4))]),
    Spec("scatter-min/dup-rows", lambda x, i, u: lax.scatter_min(x, i, u, SET_ROWS, mode=M.FILL_OR_DROP),
         [X, idx((4, 1), range(3)), Dom((4, 4))]),
    Spec("scatter-max/points", lambda x, i, u: lax.scatter_max(x, i, u, SET_POINTS, mode=M.FILL_OR_DROP),
         [X, idx((6, 2), range(3)), Dom((6,))]),
    Spec("scatter-max/unique", lambda x, u: lax.scatter_max(x, UNIQUE_ROWS, u, SET_ROWS, unique_indices=True,
                                                            mode=M.FILL_OR_DROP), [X, Dom((2, 4))]),
    # sort (one and several operands, keys, axes), top_k, approx_top_k
    Spec("sort/axis-1", lambda x: lax.sort(x, 1), [X]),
    Spec("sort/3d", lambda x: lax.sort(x, 1), [Dom((2, 3, 4))]),
    Spec("sort/key-value", lambda k, v: lax.sort((k, v), 1), [X, X]),
    Spec("sort/num_keys=2", lambda k, a, b: lax.sort((k, a, b), 1, num_keys=2),
         [idx((3, 4), range(2)), X, X]),
    Spec("sort/values-by-int-key", lambda k, v: lax.sort((k, v), 0), [idx((5,), range(9)), Dom((5,))]),
    Spec("sort/complex-values", lambda k, v: lax.sort((k, v), 1), [X, Dom((3, 4), dtype=C128)]),
    # any operand count: one rule per slot (there were rules for 1-4 operands only)
    Spec("sort/7-operands", lambda *xs: lax.sort(xs, 1), [X] * 7),
    Spec("sort/7-operands-int-keys", lambda k, *xs: lax.sort((k, *xs), 1, num_keys=2),
         [idx((3, 4), range(2)), *[X] * 6]),
    Spec("top_k", lambda x: lax.top_k(x, 2), [X]),
    Spec("top_k/axis-0", lambda x: lax.top_k(x, 2, axis=0), [X]),
    Spec("approx_max_k", lambda x: lax.approx_max_k(x, 2), [X]),
    Spec("approx_min_k/axis-0", lambda x: lax.approx_min_k(x, 2, reduction_dimension=0), [X]),
]


# A row's examples share its derivative programs (ad_helpers caches them); each example evaluates them and
# the primal with NumPy (20-40 ms), and every example draws new index values.
test_spec = spec_test(SPECS)


# --- random gather / scatter configurations ------------------------------------------------------------

# Each configuration is a new program to differentiate through egglog, where a row's examples share theirs.


@st.composite
def gather_configs(draw, out_of_bounds=(M.CLIP, M.FILL_OR_DROP)):
    """A random gather: operand of rank 1-3, each axis indexed (collapsed, or a window from the index), batched
    with an index axis, or a window starting at 0; index batch axes; offset dims among the result axes; a mode,
    with index values out of bounds for the modes in `out_of_bounds` (PROMISE_IN_BOUNDS defines none)."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    kinds = [draw(st.sampled_from(("collapsed", "indexed", "batched", "window"))) for _ in shape]
    batch_shape = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2)))]
    operand_batching = [d for d, k in enumerate(kinds) if k == "batched"]
    while len(batch_shape) < len(operand_batching):
        batch_shape.append(1)
    batch_axes = draw(st.permutations(range(len(batch_shape))))[:len(operand_batching)]
    for d, b in zip(operand_batching, batch_axes, strict=True):
        batch_shape[b] = shape[d]
    indexed = draw(st.permutations([d for d, k in enumerate(kinds) if k in ("collapsed", "indexed")]))
    sizes = tuple(1 if k in ("collapsed", "batched") else draw(st.integers(1, n)) for n, k in zip(shape, kinds,
                                                                                                   strict=True))
    windows = sum(k in ("indexed", "window") for k in kinds)
    offset_dims = sorted(draw(st.permutations(range(len(batch_shape) + windows)))[:windows])
    dn = GDN(offset_dims=offset_dims, collapsed_slice_dims=[d for d, k in enumerate(kinds) if k == "collapsed"],
             start_index_map=indexed, operand_batching_dims=operand_batching, start_indices_batching_dims=batch_axes)
    mode = draw(st.sampled_from((M.CLIP, M.FILL_OR_DROP, M.PROMISE_IN_BOUNDS)))
    room = min((shape[d] - sizes[d] for d in indexed), default=0)
    values = range(-1, max(shape) + 1) if mode in out_of_bounds else range(0, room + 1)
    return shape, dn, sizes, mode, Dom((*batch_shape, len(indexed)), dtype="int32", values=tuple(values))


def _out_shape(shape, dn, sizes, batch_shape):
    window = iter(n for d, n in enumerate(sizes) if d not in dn.collapsed_slice_dims + dn.operand_batching_dims)
    batch = iter(batch_shape)
    return tuple(next(window) if a in dn.offset_dims else next(batch)
                 for a in range(len(batch_shape) + len(dn.offset_dims)))


@CONFIG_EXAMPLES
@given(data=st.data())
def test_random_gathers(data):
    shape, dn, sizes, mode, indices = data.draw(gather_configs())
    fill = 0.5 if mode == M.FILL_OR_DROP else None  # not the default nan: central differences need a number
    spec = Spec(f"gather{shape, dn, sizes, mode}",
                lambda x, i: lax.gather(x, i, dn, sizes, mode=mode, fill_value=fill),
                [Dom(shape), indices])
    check_spec(spec, data.draw(st.integers(0, 2**31 - 1)))


@CONFIG_EXAMPLES
@given(data=st.data(), op=st.sampled_from((lax.scatter_add, lax.scatter, lax.scatter_max)))
def test_random_scatters(data, op):
    """The scatter mirroring a random gather: updates of the gather's result shape. JAX's scatter-min/max JVP
    counts the updates landing in each window with scatter_add's default mode (FILL_OR_DROP), so with CLIP
    an out-of-bounds window's clipped update is not counted and the tangent is nan: not drawn."""
    oob = (M.FILL_OR_DROP,) if op in (lax.scatter_min, lax.scatter_max) else (M.CLIP, M.FILL_OR_DROP)
    shape, gdn, sizes, mode, indices = data.draw(gather_configs(oob))
    dn = SDN(update_window_dims=gdn.offset_dims, inserted_window_dims=gdn.collapsed_slice_dims,
             scatter_dims_to_operand_dims=gdn.start_index_map, operand_batching_dims=gdn.operand_batching_dims,
             scatter_indices_batching_dims=gdn.start_indices_batching_dims)
    updates = _out_shape(shape, gdn, sizes, indices.shape[:-1])
    spec = Spec(f"{op.args[0]}{shape, dn, updates, mode}", lambda x, i, u: op(x, i, u, dn, mode=mode),
                [Dom(shape), indices, Dom(updates)])
    check_spec(spec, data.draw(st.integers(0, 2**31 - 1)))


# --- what JAX refuses, and the rules' limits ----------------------------------------------------------------


def _raises_unsupported(spec: Spec, match: str, seeds) -> None:
    args = spec.draw(0)
    closed = program_of(spec, args)
    floats = [a for a in args if a.dtype.kind == "f"]
    with pytest.raises(UnsupportedPrimitive, match=match):
        jvp_eval(closed, args, floats)
    with pytest.raises(UnsupportedPrimitive, match=match):
        vjp_eval(closed, args, seeds)


def test_scatter_mul_updates_need_unique_indices():
    """JAX has no scatter_mul derivative for the updates without `unique_indices` (NotImplementedError)."""
    spec = Spec("scatter-mul", lambda x, u: lax.scatter_mul(x, UNIQUE_ROWS, u, SET_ROWS), [X, Dom((2, 4))])
    _raises_unsupported(spec, "scatter-mul", [np.ones((3, 4))])


# --- oracle ---------------------------------------------------------------------------------------------------

INDEXING_PRIMITIVES = {"gather", "dynamic_slice", "dynamic_update_slice", "scatter", "scatter-add", "scatter-sub",
                       "scatter-mul", "scatter-min", "scatter-max", "sort", "top_k", "approx_top_k"}


def test_oracle():
    """The `indexing` family (every third case under `ci`): no failure, and nothing skipped for one of these
    primitives (the family's programs also use other families' primitives: add, select_n, slice, scan...)."""
    outcomes = assert_oracle("indexing", ("jvp", "vjp"))
    skipped = {re.search(r"primitive '([^']+)'", o.reason).group(1) for o in outcomes if o.status == "skipped"}
    assert not skipped & INDEXING_PRIMITIVES, f"skipped for indexing primitives: {skipped & INDEXING_PRIMITIVES}"
    assert any(o.status == "passed" for o in outcomes)
