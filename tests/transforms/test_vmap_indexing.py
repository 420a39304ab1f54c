"""Batching rules of the indexing primitives (transforms/batching/rules/indexing.py): vmap of gather, the
scatters, dynamic_slice, dynamic_update_slice, sort, top_k and approx_top_k against a loop over slices, at
every batch-axis position and on random gather/scatter configurations, the cheaper forms for materialized
operands, the rules' limits, then the `indexing` oracle family against jax.vmap."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ir import lax, make_jaxpr
from ir.tracing import bind
from rewrites.options import Options
from tests.transforms.ad_helpers import CONFIG_EXAMPLES, Dom, Spec
from tests.transforms.test_ad_indexing import SDN, X, gather_configs, idx
from tests.transforms.test_ad_indexing import SPECS as AD_SPECS
from tests.transforms.vmap_helpers import Config, assert_oracle, batched_program, check_config, configs, vmap_spec_tests

M = lax.GatherScatterMode
I32 = dict(dtype="int32", values=(-9, -1, 0, 2, 7, 7))
POINTS_1D = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))

# The AD rows whose dimension numbers, modes and operand counts differ (the others repeat one of these or a row
# below, and each configuration costs ~0.15 s).
AD_ROWS = ("gather/columns", "gather/points", "gather/batched", "gather/clip-windows", "gather/fill-batched",
           "gather/complex", "scatter-add/windows-clipped", "scatter-add/batched", "scatter-sub/dup-rows",
           "scatter/dup-points", "scatter/overlapping-windows", "scatter-mul/unique", "scatter-min/dup-rows",
           "scatter-max/points", "sort/3d", "sort/num_keys=2", "sort/complex-values", "top_k", "approx_min_k/axis-0")


def dynamic_slice(x, *starts, sizes):
    """The primitive alone (lax.dynamic_slice adds JAX's negative-index select_n)."""
    return bind("dynamic_slice", x, *starts, slice_sizes=tuple(sizes))


def dynamic_update_slice(x, u, *starts):
    return bind("dynamic_update_slice", x, u, *starts)


SPECS = [
    *(s for s in AD_SPECS if s.name in AD_ROWS),
    # integer operands, index vectors of one entry, indices of rank 3
    Spec("gather/int-rows", lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 4),
                                                     mode=M.CLIP), [Dom((3, 4), **I32), idx((2, 1), range(-1, 4))]),
    Spec("gather/interp-points", lambda x, i: lax.gather(x, i, POINTS_1D, (1,), mode=M.PROMISE_IN_BOUNDS),
         [Dom((5,)), idx((2, 3, 1), range(5))]),
    Spec("scatter-add/int", lambda x, i, u: lax.scatter_add(x, i, u, SDN((1,), (0,), (0,)), mode=M.FILL_OR_DROP),
         [Dom((3, 4), **I32), idx((4, 1), range(-1, 4)), Dom((4, 4), **I32)]),
    Spec("scatter-max/int-points", lambda x, i, u: lax.scatter_max(x, i, u, SDN((), (0,), (0,)), mode=M.CLIP),
         [Dom((5,), **I32), idx((3, 1), range(-2, 7)), Dom((3,), **I32)]),
    # dynamic_slice / dynamic_update_slice: ranks 1-5 (one rule for any rank), starts clamped, int64 starts
    Spec("dynamic_slice/1d", lambda x, i: dynamic_slice(x, i, sizes=(2,)), [Dom((5,)), idx((), range(-2, 7))]),
    Spec("dynamic_slice/2d", lambda x, i, j: dynamic_slice(x, i, j, sizes=(2, 3)),
         [X, idx((), range(-2, 5)), idx((), range(-2, 6))]),
    Spec("dynamic_slice/3d-int64", lambda x, i, j, k: dynamic_slice(x, i, j, k, sizes=(1, 2, 2)),
         [Dom((2, 3, 4)), Dom((), dtype="int64", values=(0, 1, 5)), Dom((), dtype="int64", values=(-1, 1, 2)),
          Dom((), dtype="int64", values=(0, 3))]),
    Spec("dynamic_slice/4d-int", lambda x, i, j, k, m: dynamic_slice(x, i, j, k, m, sizes=(1, 2, 1, 2)),
         [Dom((2, 2, 3, 3), **I32), *[idx((), range(-1, 4))] * 4]),
    Spec("dynamic_update_slice/1d", lambda x, u, i: dynamic_update_slice(x, u, i),
         [Dom((5,)), Dom((2,)), idx((), range(-2, 7))]),
    Spec("dynamic_update_slice/2d", lambda x, u, i, j: dynamic_update_slice(x, u, i, j),
         [X, Dom((2, 2)), idx((), range(-2, 5)), idx((), range(-2, 6))]),
    Spec("dynamic_slice/5d", lambda x, i, j: dynamic_slice(x, i, j, i, j, i, sizes=(1, 2, 1, 2, 1)),
         [Dom((2, 3, 2, 3, 2)), idx((), range(-1, 4)), idx((), range(-1, 4))]),
    Spec("dynamic_update_slice/5d", lambda x, u, i, j: dynamic_update_slice(x, u, i, j, i, j, i),
         [Dom((2, 3, 2, 3, 2)), Dom((1, 2, 1, 2, 1)), idx((), range(-1, 4)), idx((), range(-1, 4))]),
    Spec("dynamic_update_slice/3d-bool", lambda x, u, i, j, k: dynamic_update_slice(x, u, i, j, k),
         [Dom((2, 3, 2), dtype="bool", values=(False, True)), Dom((1, 2, 2), dtype="bool", values=(True,)),
          *[idx((), range(-1, 4))] * 3]),
    # sort: several keys, an unbatched iota (argsort); top_k of integers, negative axis
    Spec("sort/4-operands", lambda a, b, c, d: lax.sort((a, b, c, d), 0, num_keys=3),
         [Dom((6,), dtype="int32", values=(0, 1)), Dom((6,), dtype="int32", values=(2, 3)), Dom((6,)), Dom((6,))]),
    Spec("argsort", lambda x: lax.sort((x, lax.broadcasted_iota("int32", (3, 4), 1)), 1)[1],
         [Dom((3, 4), values=(0.0, 1.0, np.nan))]),
    Spec("top_k/int", lambda x: lax.top_k(x, 3), [Dom((6,), **I32)]),
    Spec("approx_max_k", lambda x: lax.approx_max_k(x, 2, reduction_dimension=-1), [Dom((2, 3, 4))]),
]


test_axes, test_random = vmap_spec_tests(SPECS)


# --- random gather / scatter configurations, batched at random axes ---------------------------------------


@CONFIG_EXAMPLES
@given(data=st.data())
def test_random_gathers(data):
    shape, dn, sizes, mode, indices = data.draw(gather_configs())
    spec = Spec(f"gather{shape, dn, sizes, mode}", lambda x, i: lax.gather(x, i, dn, sizes, mode=mode),
                [Dom(shape), indices])
    check_config(spec, data.draw(configs(spec)), data.draw(st.integers(0, 2**31 - 1)))


@CONFIG_EXAMPLES
@given(data=st.data(), op=st.sampled_from((lax.scatter_add, lax.scatter, lax.scatter_min)))
def test_random_scatters(data, op):
    """The scatter mirroring a random gather (updates of the gather's result shape)."""
    shape, gdn, sizes, mode, indices = data.draw(gather_configs())
    dn = SDN(update_window_dims=gdn.offset_dims, inserted_window_dims=gdn.collapsed_slice_dims,
             scatter_dims_to_operand_dims=gdn.start_index_map, operand_batching_dims=gdn.operand_batching_dims,
             scatter_indices_batching_dims=gdn.start_indices_batching_dims)
    updates = make_jaxpr(lambda x, i: lax.gather(x, i, gdn, sizes, mode=mode))(
        np.zeros(shape), np.zeros(indices.shape, np.int32)).out_avals[0].shape
    spec = Spec(f"{op.args[0]}{shape, dn, updates, mode}", lambda x, i, u: op(x, i, u, dn, mode=mode),
                [Dom(shape), indices, Dom(updates)])
    check_config(spec, data.draw(configs(spec)), data.draw(st.integers(0, 2**31 - 1)))


# --- cheaper forms for materialized operands ----------------------------------------------------------------
# Under a cost model that prices data movement the variants win; `flops` prices it at 0 (a tie).

BYTES = Options(rules="none", cost="bytes")


def _program(fn, args, in_axes, size=3):
    return batched_program(make_jaxpr(fn)(*args), Config(tuple(in_axes), (0,), size), BYTES)


def _eqns(program, prim):
    return [e for e in program.jaxpr.eqns if e.primitive == prim]


def test_unbatched_starts_keep_dynamic_slice():
    x, i = np.ones((3, 4)), np.int32(1)
    program = _program(lambda x, i, j: dynamic_slice(x, i, j, sizes=(2, 2)), [x, i, i], (0, None, None))
    [ds] = _eqns(program, "dynamic_slice")
    assert ds.params["slice_sizes"] == (3, 2, 2) and not _eqns(program, "gather")
    program = _program(lambda x, u, i: dynamic_update_slice(x, u, i, i), [x, np.ones((2, 2)), i], (None, 0, None))
    assert _eqns(program, "dynamic_update_slice") and not _eqns(program, "scatter")


def test_unbatched_operand_is_not_broadcast_for_batched_starts():
    program = _program(lambda x, i, j: dynamic_slice(x, i, j, sizes=(2, 2)), [np.ones((3, 4)), np.int32(1),
                                                                            np.int32(0)], (None, 0, None))
    [gather] = _eqns(program, "gather")
    assert gather.invars[0].aval.shape == (3, 4)
    assert not gather.params["dimension_numbers"].operand_batching_dims


def test_unbatched_indices_of_a_scatter_are_not_broadcast():
    dn = SDN((1,), (0,), (0,))
    program = _program(lambda x, i, u: lax.scatter_add(x, i, u, dn), [np.ones((3, 4)), np.zeros((2, 1), np.int32),
                                                                      np.ones((2, 4))], (0, None, None))
    [scatter] = _eqns(program, "scatter-add")
    assert scatter.invars[1].aval.shape == (2, 1)
    assert scatter.params["dimension_numbers"].update_window_dims == (0, 2)


# --- any operand count -------------------------------------------------------------------------------------------


def test_rank_5_unbatched_starts_keep_the_op():
    """The cheaper forms hold for any rank too (the rules covered ranks 1-4): with every start unbatched, the op
    itself with a leading start 0; with the operand unbatched, a gather from it."""
    x, i = np.ones((2, 3, 2, 3, 2)), np.int32(1)
    program = _program(lambda x, i: dynamic_slice(x, *[i] * 5, sizes=(1,) * 5), [x, i], (0, None))
    [ds] = _eqns(program, "dynamic_slice")
    assert ds.params["slice_sizes"] == (3, 1, 1, 1, 1, 1) and not _eqns(program, "gather")
    program = _program(lambda x, u, i: dynamic_update_slice(x, u, *[i] * 5), [x, np.ones((1,) * 5), i],
                       (None, 0, None))
    assert _eqns(program, "dynamic_update_slice") and not _eqns(program, "scatter")
    program = _program(lambda x, i: dynamic_slice(x, *[i] * 5, sizes=(1,) * 5), [x, i], (None, 0))
    [gather] = _eqns(program, "gather")
    assert gather.invars[0].aval.shape == x.shape


def test_some_starts_unbatched_use_the_start_matrix():
    """Where only some starts are materialized, no variant applies: the gather of the whole start matrix."""
    x, i = np.ones((2, 3, 2)), np.int32(1)
    program = _program(lambda x, i, j: dynamic_slice(x, i, j, i, sizes=(1, 2, 1)), [x, i, i], (0, 0, None))
    assert _eqns(program, "gather") and not _eqns(program, "dynamic_slice")


def test_sort_of_many_operands():
    """One sort rule serves any operand count and result: 12 operands (2 keys), batched or unbatched."""
    spec = Spec("sort/12-operands", lambda *xs: lax.sort(xs, 0, num_keys=2),
                [Dom((5,), dtype="int32", values=(0, 1)), *[Dom((5,))] * 11])
    check_config(spec, Config((0, None, 1, *[None, 0, 1] * 3), (0,) * 12, 3))


# --- oracle ---------------------------------------------------------------------------------------------------

INDEXING_PRIMITIVES = {"gather", "dynamic_slice", "dynamic_update_slice", "scatter", "scatter-add", "scatter-sub",
                       "scatter-mul", "scatter-min", "scatter-max", "sort", "top_k", "approx_top_k"}


def test_oracle():
    """The `indexing` family (every other case under `ci`): no failure, and nothing skipped for one of these
    primitives (its programs also use other families' primitives: select_n, slice, reduce_sum, scan...)."""
    outcomes = assert_oracle("indexing", ("vmap",))
    skipped = {re.search(r"primitive '([^']+)'", o.reason).group(1) for o in outcomes if o.status == "skipped"}
    assert not skipped & INDEXING_PRIMITIVES, f"skipped for indexing primitives: {skipped & INDEXING_PRIMITIVES}"
    assert sum(o.status == "passed" for o in outcomes) >= len(outcomes) - 3
