"""Shape and indexing primitives on key-typed arrays (eval/impls/keys.py, the interpreter's key rules).

A `key<fry>[*S]` value is evaluated as uint32 key data of shape `(*S, 2)`. Every case traces a program on
key-typed inputs, evaluates it on random key data (checked mode: each result's dtype and shape against the
jaxpr), and compares with the same move done by hand in NumPy on the key data, the word axis placed last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import ir
from eval.interpreter import eval_jaxpr
from eval.registry import get_impl
from ir import lax
from ir.control import cond, scan
from ir.core import ClosedJaxpr, Eqn, Jaxpr, ShapedArray, Var
from ir.dtypes import bool_, int32, key_fry
from ir.errors import JaxprTypeError, UnsupportedPrimitive
from ir.params import Symbol
from ir.tracing import bind

U32_MAX = np.iinfo(np.uint32).max
FRY = Symbol("fry")


@dataclass(frozen=True)
class Keys:
    """A key-typed argument of this shape: the program sees `key<fry>[*shape]`, NumPy its data."""

    shape: tuple[int, ...]


@dataclass(frozen=True)
class Case:
    id: str
    fn: Callable
    args: tuple  # Keys markers and concrete (non-key) arrays
    ref: Callable  # the expected outputs from the key data and the other arrays, in NumPy


def key_data(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**32, size=(*shape, 2), dtype=np.uint32)


def gather_dn(offset, collapsed, start_map):
    return lax.GatherDimensionNumbers(offset_dims=offset, collapsed_slice_dims=collapsed, start_index_map=start_map)


def scatter_dn(window, inserted, to_operand):
    return lax.ScatterDimensionNumbers(update_window_dims=window, inserted_window_dims=inserted,
                                       scatter_dims_to_operand_dims=to_operand)


def set_rows(d, rows, u):
    out = d.copy()
    for r, v in zip(rows, u, strict=True):
        if 0 <= r < len(d):
            out[r] = v
    return out


def dynamic_update(d, u, start):
    start = min(max(start, 0), len(d) - len(u))
    out = d.copy()
    out[start:start + len(u)] = u
    return out


# Raw uint32 arrays stand for key data: the keys equal, differing in the second word, in the first, equal.
EQ_LEFT = np.array([[1, 2], [1, 2], [1, 2], [7, 7]], np.uint32)
EQ_RIGHT = np.array([[1, 2], [1, 3], [0, 2], [7, 7]], np.uint32)


def all_words_equal(a, b):
    return np.asarray((a == b).all(axis=-1))


def any_word_differs(a, b):
    return np.asarray((a != b).any(axis=-1))


CASES = [
    Case("reshape", lambda k: lax.reshape(k, (2, 3)), (Keys((6,)),), lambda d: d.reshape(2, 3, 2)),
    Case("reshape/dimensions", lambda k: lax.reshape(k, (3, 2), dimensions=(1, 0)), (Keys((2, 3)),),
         lambda d: d.transpose(1, 0, 2).reshape(3, 2, 2)),
    Case("reshape/to-scalar", lambda k: lax.reshape(k, ()), (Keys((1, 1)),), lambda d: d.reshape(2)),
    Case("transpose", lambda k: lax.transpose(k, (2, 0, 1)), (Keys((2, 3, 4)),),
         lambda d: d.transpose(2, 0, 1, 3)),
    Case("transpose/T", lambda k: k.T, (Keys((2, 3)),), lambda d: d.transpose(1, 0, 2)),
    Case("broadcast_in_dim/scalar", lambda k: lax.broadcast_in_dim(k, (4,), ()), (Keys(()),),
         lambda d: np.broadcast_to(d, (4, 2))),
    Case("broadcast_in_dim/middle", lambda k: lax.broadcast_in_dim(k, (3, 4, 2), (0, 2)), (Keys((3, 2)),),
         lambda d: np.broadcast_to(d[:, None], (3, 4, 2, 2))),
    Case("broadcast_in_dim/stretch", lambda k: lax.broadcast_in_dim(k, (3, 4), (0, 1)), (Keys((3, 1)),),
         lambda d: np.broadcast_to(d, (3, 4, 2))),
    Case("expand_dims", lambda k: lax.expand_dims(k, (0, 2)), (Keys((3,)),), lambda d: d[None, :, None]),
    Case("squeeze", lambda k: lax.squeeze(k, (0, 2)), (Keys((1, 3, 1)),), lambda d: d[0, :, 0]),
    Case("squeeze/to-scalar", lambda k: lax.squeeze(k, (0,)), (Keys((1,)),), lambda d: d[0]),
    Case("concatenate/axis0", lambda a, b: lax.concatenate([a, b], 0), (Keys((2, 3)), Keys((1, 3))),
         lambda a, b: np.concatenate([a, b], axis=0)),
    Case("concatenate/last-axis", lambda a, b: lax.concatenate([a, b], -1), (Keys((2, 3)), Keys((2, 1))),
         lambda a, b: np.concatenate([a, b], axis=1)),
    Case("stack/inner", lambda a, b: lax.stack([a, b], -1), (Keys((3,)), Keys((3,))),
         lambda a, b: np.stack([a, b], axis=1)),
    Case("tile", lambda k: lax.tile(k, (3, 1)), (Keys((2, 2)),), lambda d: np.tile(d, (3, 1, 1))),
    Case("rev", lambda k: lax.rev(k, (0,)), (Keys((4, 3)),), lambda d: d[::-1]),
    Case("rev/inner", lambda k: lax.rev(k, (1,)), (Keys((4, 3)),), lambda d: d[:, ::-1]),
    Case("split", lambda k: tuple(lax.split(k, (2, 3), axis=-1)), (Keys((2, 5)),),
         lambda d: (d[:, :2], d[:, 2:])),
    Case("slice/strided", lambda k: lax.slice(k, (1,), (6,), (2,)), (Keys((6,)),), lambda d: d[1:6:2]),
    Case("slice/2d", lambda k: lax.slice(k, (1, 0), (3, 2)), (Keys((4, 3)),), lambda d: d[1:3, 0:2]),
    Case("slice/index-and-squeeze", lambda k: lax.squeeze(lax.slice(k, (1,), (2,)), (0,)), (Keys((3,)),),
         lambda d: d[1]),
    Case("dynamic_slice", lambda k, i: lax.dynamic_slice(k, (i, 1), (2, 2)), (Keys((5, 3)), np.int32(2)),
         lambda d, i: d[2:4, 1:3]),
    Case("dynamic_slice/clamped", lambda k, i: lax.dynamic_slice(k, (i,), (2,)), (Keys((5,)), np.int32(9)),
         lambda d, i: d[3:5]),
    Case("dynamic_index_in_dim", lambda k, i: lax.dynamic_index_in_dim(k, i, axis=1, keepdims=False),
         (Keys((2, 4)), np.int64(-1)), lambda d, i: d[:, 3]),
    Case("dynamic_update_slice", lambda k, u, i: lax.dynamic_update_slice(k, u, (i,)),
         (Keys((5,)), Keys((2,)), np.int32(2)), lambda d, u, i: dynamic_update(d, u, 2)),
    Case("dynamic_update_slice/clamped", lambda k, u, i: lax.dynamic_update_slice(k, u, (i, 0)),
         (Keys((4, 3)), Keys((2, 3)), np.int32(7)), lambda d, u, i: dynamic_update(d, u, 7)),
    Case("select_n/bool", lambda p, a, b: lax.select_n(p, a, b),
         (np.array([True, False, True]), Keys((3,)), Keys((3,))), lambda p, a, b: np.where(p[:, None], b, a)),
    Case("select_n/square-shape", lambda p, a, b: lax.select_n(p, a, b),
         (np.array([False, True]), Keys((2,)), Keys((2,))), lambda p, a, b: np.where(p[:, None], b, a)),
    Case("select_n/scalar-predicate", lambda p, a, b: lax.select_n(p, a, b),
         (np.array(True), Keys((2, 2)), Keys((2, 2))), lambda p, a, b: b),
    Case("select_n/three-way", lambda p, a, b, c: lax.select_n(p, a, b, c),
         (np.array([2, 0, 1, 2], np.int32), Keys((4,)), Keys((4,)), Keys((4,))),
         lambda p, a, b, c: np.choose(p[:, None], [a, b, c])),
    Case("gather/take", lambda k, i: lax.gather(k, i, gather_dn((), (0,), (0,)), (1,), mode="clip"),
         (Keys((5,)), np.array([[3], [0], [3], [9]], np.int32)), lambda d, i: d[np.minimum(i[:, 0], 4)]),
    Case("gather/rows", lambda k, i: lax.gather(k, i, gather_dn((1,), (0,), (0,)), (1, 3),
                                                mode="promise_in_bounds"),
         (Keys((4, 3)), np.array([[2], [1]], np.int32)), lambda d, i: d[i[:, 0]]),
    Case("gather/window", lambda k, i: lax.gather(k, i, gather_dn((0, 1), (), (0, 1)), (2, 2), mode="clip"),
         (Keys((4, 3)), np.array([1, 1], np.int32)), lambda d, i: d[1:3, 1:3]),
    # Out of range, FILL_OR_DROP fills both words of a key with the uint32 maximum: JAX gathers the key data
    # (`_gather_lower_opaque`) and `_gather_fill` fills a uint32 gather with iinfo(uint32).max.
    Case("gather/fill", lambda k, i: lax.gather(k, i, gather_dn((), (0,), (0,)), (1,), mode="fill"),
         (Keys((3,)), np.array([[1], [5]], np.int32)),
         lambda d, i: np.stack([d[1], np.full(2, U32_MAX, np.uint32)])),
    Case("scatter/points", lambda k, i, u: lax.scatter(k, i, u, scatter_dn((), (0,), (0,))),
         (Keys((5,)), np.array([[1], [3]], np.int32), Keys((2,))), lambda d, i, u: set_rows(d, [1, 3], u)),
    Case("scatter/drops-out-of-range", lambda k, i, u: lax.scatter(k, i, u, scatter_dn((), (0,), (0,))),
         (Keys((3,)), np.array([[7], [0]], np.int32), Keys((2,))), lambda d, i, u: set_rows(d, [7, 0], u)),
    Case("scatter/rows", lambda k, i, u: lax.scatter(k, i, u, scatter_dn((1,), (0,), (0,))),
         (Keys((4, 3)), np.array([[2], [0]], np.int32), Keys((2, 3))), lambda d, i, u: set_rows(d, [2, 0], u)),
    Case("scatter/clip-window", lambda k, i, u: lax.scatter(k, i, u, scatter_dn((0,), (), (0,)), mode="clip"),
         (Keys((4,)), np.array([3], np.int32), Keys((2,))), lambda d, i, u: np.concatenate([d[:2], u])),
    Case("eq", lax.eq, (EQ_LEFT, EQ_RIGHT), all_words_equal),
    Case("ne", lax.ne, (EQ_LEFT, EQ_RIGHT), any_word_differs),
    Case("eq/scalars", lax.eq, (EQ_LEFT[1], EQ_RIGHT[1]), all_words_equal),
    Case("ne/scalars", lax.ne, (EQ_LEFT[3], EQ_RIGHT[3]), any_word_differs),
    Case("eq/scalar-with-array", lax.eq, (EQ_RIGHT[1], EQ_LEFT), all_words_equal),
    Case("copy", lambda k: lax.copy(k), (Keys((3,)),), lambda d: d),
    Case("device_put", lambda k: lax.device_put(k), (Keys((2, 2)),), lambda d: d),
    Case("optimization_barrier", lambda a, b: tuple(bind("optimization_barrier", a, b)),
         (Keys((2,)), Keys(())), lambda a, b: (a, b)),
]


def key_arg(x, i: int):
    """A Keys marker's aval and random data; a raw uint32 array in place of a marker is the key data."""
    if isinstance(x, Keys):
        return ShapedArray(x.shape, key_fry), key_data(x.shape, seed=i)
    return ShapedArray(x.shape[:-1], key_fry), x


def run(fn: Callable, args: tuple) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """`fn` traced on key-typed avals for its key arguments, evaluated on key data: (outputs, data args)."""
    avals, data = [], []
    for i, x in enumerate(args):
        is_key = isinstance(x, Keys) or (isinstance(x, np.ndarray) and x.dtype == np.uint32)
        aval, value = key_arg(x, i) if is_key else (x, np.asarray(x))
        avals.append(aval)
        data.append(value)
    closed = ir.make_jaxpr(fn)(*avals)
    return eval_jaxpr(closed, *data, check=True), data


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op_on_keys_moves_the_key_data(case):
    got, data = run(case.fn, case.args)
    want = case.ref(*data)
    want = list(want) if isinstance(want, tuple) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


# --- keys that moved still draw their own numbers ---------------------------------------------------------


def random_bits(keys_data: np.ndarray, shape=(3,)) -> np.ndarray:
    return get_impl("random_bits")(keys_data, bit_width=32, shape=shape)


def test_split_then_reshape_keeps_each_keys_stream():
    """`jax.random.split(key, 6).reshape(2, 3)` then bits: the bits of split's keys, reshaped."""
    def program(k):
        keys = lax.reshape(bind("random_split", k, shape=(6,)), (2, 3))
        return bind("random_bits", keys, bit_width=32, shape=(4,))

    [got], [k] = run(program, (Keys(()),))
    split = get_impl("random_split")(k, shape=(6,))
    np.testing.assert_array_equal(got, random_bits(split, (4,)).reshape(2, 3, 4))


def test_vmap_like_broadcast_then_transpose_of_keys():
    """A batching rule's pattern: an unbatched key array broadcast over a batch axis, the batch axis moved
    to the front, then one draw per key; each batch row draws the keys' own numbers."""
    def program(k):
        batched = lax.broadcast_in_dim(k, (3, 4), (0,))  # (keys, batch)
        moved = lax.transpose(batched, (1, 0))  # (batch, keys)
        return bind("random_bits", moved, bit_width=32, shape=(2,))

    [got], [k] = run(program, (Keys((3,)),))
    want_row = random_bits(k, (2,))
    assert got.shape == (4, 3, 2)
    for row in got:
        np.testing.assert_array_equal(row, want_row)


def test_keys_indexed_by_a_traced_position_fold_in_like_their_data():
    def program(k, i, m):
        one = lax.dynamic_index_in_dim(k, i, keepdims=False)
        return bind("random_unwrap", bind("random_fold_in", one, m))

    [got], [k, i, m] = run(program, (Keys((4,)), np.int32(2), np.uint32(11)))
    np.testing.assert_array_equal(got, get_impl("random_fold_in")(k[2], m))


def test_where_then_unwrap_round_trip_from_uint32_data():
    """random_wrap / random_unwrap around select_n: the program's inputs and outputs are plain uint32."""
    def program(p, a, b):
        keys = lax.select_n(p, bind("random_wrap", a, impl=FRY), bind("random_wrap", b, impl=FRY))
        return bind("random_unwrap", keys)

    p = np.array([[True, False], [False, True]])
    a, b = key_data((2, 2), 1), key_data((2, 2), 2)
    closed = ir.make_jaxpr(program)(p, a, b)
    [got] = eval_jaxpr(closed, p, a, b, check=True)
    np.testing.assert_array_equal(got, np.where(p[..., None], b, a))


def test_keys_through_control_flow():
    """A scan over a key array with a key carry (each step hands back the previous key, reshaped there and
    back): the interpreter evaluates the body's key-typed equations with the same rules, and a cond picks a
    key array by an ordinary predicate."""
    def step(carry, k):
        return lax.reshape(lax.expand_dims(k, (0,)), ()), carry

    def program(keys, first, p):
        last, ys = scan(step, first, keys)
        return last, ys, cond(p, lambda a, b: lax.rev(a, (0,)), lambda a, b: b, ys, keys)

    keys, first = key_data((3,), 1), key_data((), 2)
    closed = ir.make_jaxpr(program)(ShapedArray((3,), key_fry), ShapedArray((), key_fry), np.bool_(True))
    last, ys, picked = eval_jaxpr(closed, keys, first, np.bool_(True), check=True)
    np.testing.assert_array_equal(last, keys[-1])
    np.testing.assert_array_equal(ys, np.concatenate([first[None], keys[:-1]]))
    np.testing.assert_array_equal(picked, ys[::-1])


PARSED = """{ lambda ; a:u32[6,2] b:i32[]. let
    c:key<fry>[6] = random_wrap[impl=fry] a
    d:key<fry>[2,3] = reshape[dimensions=None new_sizes=(2, 3) sharding=None] c
    e:key<fry>[3,2] = transpose[permutation=(1, 0)] d
    f:key<fry>[1,2] = dynamic_slice[slice_sizes=(1, 2)] e b 0:i32[]
    g:key<fry>[2] = squeeze[dimensions=(0,)] f
    h:u32[2,2] = random_unwrap g
  in (h,) }"""


def test_parsed_jaxpr_text():
    closed = ir.parse_jaxpr(PARSED)
    a = key_data((6,), 3)
    [got] = eval_jaxpr(closed, a, np.int32(1), check=True)
    np.testing.assert_array_equal(got, a.reshape(2, 3, 2).transpose(1, 0, 2)[1])


# --- what JAX refuses on keys -----------------------------------------------------------------------------


def untyped(primitive: str, avals_in, aval_out, **params) -> ClosedJaxpr:
    """One equation built directly (no shape rule runs), so evaluation alone must refuse it."""
    ins, out = [Var(a) for a in avals_in], Var(aval_out)
    return ClosedJaxpr(Jaxpr([], ins, [out], [Eqn(primitive, ins, [out], params)]))


K3, K = ShapedArray((3,), key_fry), ShapedArray((), key_fry)


def test_pad_of_keys_is_refused_naming_pad():
    closed = ir.make_jaxpr(lambda k, v: lax.pad(k, v, ((1, 0, 0),)))(K3, K)
    with pytest.raises(JaxprTypeError, match="pad: JAX cannot pad key-typed arrays"):
        eval_jaxpr(closed, key_data((3,), 0), key_data((), 1))


@pytest.mark.parametrize("as_payload", [False, True])
def test_sort_with_keys_is_refused_naming_sort(as_payload):
    if as_payload:
        closed = ir.make_jaxpr(lambda j, k: lax.sort((j, k), 0, num_keys=1))(ShapedArray((3,), int32), K3)
        args = (np.array([2, 0, 1], np.int32), key_data((3,), 0))
    else:
        closed, args = ir.make_jaxpr(lambda k: lax.sort(k, 0))(K3), (key_data((3,), 0),)
    with pytest.raises(JaxprTypeError, match="sort: JAX cannot sort with a key-typed operand"):
        eval_jaxpr(closed, *args)


def test_scatter_with_a_combiner_on_keys_is_refused():
    i = ShapedArray((1, 1), int32)
    inner = ir.make_jaxpr(lambda a, b: b)(K, K)
    closed = untyped("scatter", [K3, i, ShapedArray((1,), key_fry)], K3,
                     dimension_numbers=scatter_dn((), (0,), (0,)), indices_are_sorted=False, unique_indices=False,
                     mode=lax.GatherScatterMode.FILL_OR_DROP, update_consts=(), update_jaxpr=inner)
    with pytest.raises(JaxprTypeError, match="scatter"):
        eval_jaxpr(closed, key_data((3,), 0), np.zeros((1, 1), np.int32), key_data((1,), 1))


@pytest.mark.parametrize("primitive,avals_in,aval_out,params", [
    ("clamp", [K, K3, K], K3, {}),
    ("cumsum", [K3], K3, {"axis": 0, "reverse": False}),
    ("add", [K3, K3], K3, {}),
    ("lt", [K3, K3], ShapedArray((3,), bool_), {}),
])
def test_other_primitives_on_keys_name_themselves(primitive, avals_in, aval_out, params):
    closed = untyped(primitive, avals_in, aval_out, **params)
    args = [key_data(a.shape, i) for i, a in enumerate(avals_in)]
    with pytest.raises(UnsupportedPrimitive, match=f"'{primitive}'.*key-array evaluation"):
        eval_jaxpr(closed, *args)
