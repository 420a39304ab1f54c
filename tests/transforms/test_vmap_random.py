"""Batching rules of the PRNG primitives (transforms/batching/rules/random.py): vmap of each spec row at every
batch-axis position and on random configurations against a loop over slices, rng_bit_generator against JAX's
own batching rule (which is not a loop), then the `random` oracle family against JAX."""

from __future__ import annotations

import numpy as np
import pytest

from eval.interpreter import eval_jaxpr
from ir import make_jaxpr
from ir.errors import UnsupportedPrimitive
from ir.params import Symbol
from ir.tracing import bind
from tests.transforms.ad_helpers import Dom, Spec
from tests.transforms.vmap_helpers import Config, assert_oracle, batched_program, vmap_spec_tests

FRY = Symbol("fry")
U32 = dict(low=0, high=2**32, dtype="uint32")


def key(*shape: int) -> Dom:
    """Key data of a key array of `shape`: uint32 words, two per key."""
    return Dom((*shape, 2), **U32)


def wrap(data):
    return bind("random_wrap", data, impl=FRY)


def unwrap(keys):
    return bind("random_unwrap", keys)


def bits(width: int, shape: tuple[int, ...]):
    return lambda k: bind("random_bits", wrap(k), bit_width=width, shape=shape)


def split(shape: tuple[int, ...]):
    return lambda k: unwrap(bind("random_split", wrap(k), shape=shape))


def fold_in(k, m):
    return unwrap(bind("random_fold_in", wrap(k), m))


def gamma(log_space: bool):
    return lambda k, a: bind("random_gamma", wrap(k), a, log_space=log_space)


def threefry(*xs):
    return tuple(bind("threefry2x32", *xs))


SPECS = [
    Spec("seed/int32", lambda s: unwrap(bind("random_seed", s, impl=FRY)), [Dom((), dtype="int32",
                                                                             values=(-5, 0, 7, 2**31 - 1))]),
    Spec("seed/int64-array", lambda s: unwrap(bind("random_seed", s, impl=FRY)),
         [Dom((3,), dtype="int64", values=(-1, 0, 2**40 + 3, -2**63))]),
    Spec("wrap-unwrap", lambda k: unwrap(wrap(k)), [key(2)]),
    Spec("clone", lambda k: unwrap(bind("random_clone", wrap(k))), [key()]),
    Spec("bits/32", bits(32, (2, 3)), [key()]),
    Spec("bits/64-key-array", bits(64, (3,)), [key(2)]),
    Spec("bits/8", bits(8, (5,)), [key()]),
    Spec("bits/16-scalar", bits(16, ()), [key()]),
    Spec("split/three", split((3,)), [key()]),
    Spec("split/key-array", split((2, 2)), [key(2)]),
    Spec("fold_in/scalars", fold_in, [key(), Dom((), **U32)]),
    Spec("fold_in/arrays", fold_in, [key(3), Dom((3,), **U32)]),
    Spec("fold_in/scalar-key", fold_in, [key(), Dom((2, 3), **U32)]),
    Spec("fold_in/scalar-msg", fold_in, [key(3), Dom((), dtype="int32", values=(-1, 0, 9))]),
    Spec("fold_in/stretch", fold_in, [key(3, 1), Dom((1, 4), **U32)]),
    Spec("gamma/scalar-key", gamma(False), [key(), Dom((3,), 0.3, 5.0)]),
    Spec("gamma/key-array", gamma(False), [key(2), Dom((2, 3), 0.3, 5.0)]),
    Spec("gamma/log-space", gamma(True), [key(), Dom((2,), 0.1, 3.0)]),
    Spec("threefry/scalars", threefry, [Dom((), **U32)] * 4),
    Spec("threefry/mixed-ranks", threefry, [Dom((), **U32), Dom((), **U32), Dom((3,), **U32), Dom((3,), **U32)]),
    Spec("threefry/stretch", threefry, [Dom((3, 1), **U32), Dom((), **U32), Dom((1, 4), **U32), Dom((3, 4), **U32)]),
]

test_axes, test_random = vmap_spec_tests(SPECS)


def test_an_unbatched_scalar_key_stays_unbatched():
    """fold_in of an unbatched scalar key with batched messages folds them into the key as it is: no
    broadcast of the key (the op broadcasts rank-0 keys itself)."""
    closed = make_jaxpr(fold_in)(np.zeros(2, np.uint32), np.uint32(0))
    program = batched_program(closed, Config((None, 0), (0,), 4))
    assert not any(e.primitive == "broadcast_in_dim" for e in program.jaxpr.eqns)
    got = eval_jaxpr(program, np.array([1, 2], np.uint32), np.arange(4, dtype=np.uint32))[0]
    want = np.stack([eval_jaxpr(closed, np.array([1, 2], np.uint32), np.uint32(m))[0] for m in range(4)])
    np.testing.assert_array_equal(got, want)


# --- rng_bit_generator: JAX's rule draws the whole batch from the first state -------------------------------


def generator(dtype: str, shape: tuple[int, ...]):
    return lambda s: tuple(bind("rng_bit_generator", s, shape=shape, dtype=dtype, algorithm=Symbol("RNG_THREE_FRY"),
                                out_sharding=None))


@pytest.mark.parametrize("state_dtype, n", [(np.uint32, 4), (np.uint64, 2)])
@pytest.mark.parametrize("size, axis", [(1, 0), (3, 0), (3, 1)])
def test_rng_bit_generator_follows_jax_rule(state_dtype, n, size, axis):
    """JAX's `_rng_bit_generator_batching_rule`: (new, bits) = rng_bit_generator(states[0], shape=(B, *shape));
    the batched states are states[0] replaced by new, the others unchanged."""
    from ir.dtypes import uint32

    rng = np.random.default_rng(size)
    states = rng.integers(0, 2**32, (size, n)).astype(state_dtype)
    closed = make_jaxpr(generator(uint32, (2, 3)))(states[0])
    program = batched_program(closed, Config((axis,), (0, 0), size))
    new_states, got = eval_jaxpr(program, np.moveaxis(states, 0, axis), check=True)
    first = make_jaxpr(generator(uint32, (size, 2, 3)))(states[0])
    new_first, want = eval_jaxpr(first, states[0])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(new_states, np.concatenate([new_first[None], states[1:]]))


def test_rng_bit_generator_of_an_empty_batch_is_refused():
    from ir.dtypes import uint32

    closed = make_jaxpr(generator(uint32, (2,)))(np.zeros(4, np.uint32))
    with pytest.raises(UnsupportedPrimitive, match="rng_bit_generator"):
        batched_program(closed, Config((0,), (0, 0), 0))


# --- the oracle ----------------------------------------------------------------------------------------------


def test_oracle():
    outcomes = assert_oracle("random", ("vmap",), stride=1)
    assert len(outcomes) == 25 and all(o.status == "passed" for o in outcomes)
