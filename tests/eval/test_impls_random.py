"""NumPy implementations of the PRNG primitives (eval/impls/random.py), against the JAX oracle and references.

References are independent of the implementation's vectorized code: the Threefry-2x32 and Philox-4x32
known-answer vectors of Random123 (the first three are JAX's own `testThreefry2x32`), JAX's definitions
of split, fold_in, random_bits and random_seed written per element on top of the (vector-checked) block
cipher, the gamma distribution's CDF (scipy) for random_gamma, and identities between the output widths
and state layouts of rng_bit_generator that follow from XLA's generator. The oracle fixtures pin the
whole pipeline: every `random` case's outputs, and each slice of its vmap batch evaluated unbatched.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from eval.interpreter import eval_jaxpr
from eval.oracle import decode_array, load_fixtures, mismatch, parse_case, run_conformance
from eval.registry import get_impl
from ir.params import Symbol
from tests.oracle_paths import ORACLE

FRY = Symbol("fry")
MASK = 0xFFFFFFFF
words = st.integers(0, MASK)
keys = st.tuples(words, words).map(lambda k: np.array(k, np.uint32))


def run(name, *operands, **params):
    return get_impl(name)(*operands, **params)


def hash_one(key, hi: int, lo: int) -> tuple[int, int]:
    """The threefry2x32 primitive on one counter pair."""
    y1, y2 = run("threefry2x32", *(np.asarray(v, np.uint32) for v in (key[0], key[1], hi, lo)))
    return int(y1), int(y2)


# --- the oracle --------------------------------------------------------------------------------------------


CASES = load_fixtures([ORACLE], ["random"])


def test_oracle_outputs():
    outcomes = run_conformance(CASES, ["out"])
    assert len(outcomes) == len(CASES)
    bad = [f"{o.case}: {o.status} {o.reason}" for o in outcomes if o.status != "passed"]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("case", [c for c in CASES if "vmap" in c.raw], ids=lambda c: c.id)
def test_oracle_vmap_slices_evaluated_one_by_one(case):
    """Each slice of a case's vmap batch, evaluated unbatched, is the slice of JAX's batched result; except
    rng_bit_generator, whose batching rule draws for the whole batch from the first state (JAX's
    `_rng_bit_generator_batching_rule`): that is the unbatched op on state 0 with shape (B, *shape)."""
    closed, vm = parse_case(case), case.raw["vmap"]
    args, want = [decode_array(a) for a in vm["args"]], [decode_array(a) for a in vm["out"]]
    if "primitive:rng_bit_generator" in case.tags:
        states = args[0]
        (eqn,) = closed.jaxpr.eqns
        params = {**eqn.params, "shape": (len(states), *eqn.params["shape"])}
        new_state, bits = run("rng_bit_generator", states[0], **params)
        got = [np.concatenate([new_state[None], states[1:]]), bits]
    else:
        slices = [eval_jaxpr(closed, *[a[b] if ax == 0 else a for a, ax in zip(args, vm["in_axes"], strict=True)])
                  for b in range(3)]
        got = [np.stack([s[j] for s in slices]) for j in range(len(want))]
    for g, w in zip(got, want, strict=True):
        assert mismatch(g, w, case.rtol, case.atol) is None, mismatch(g, w, case.rtol, case.atol)


# --- threefry2x32: the known-answer vectors, broadcasting ---------------------------------------------------

THREEFRY_KAT = [  # (key, counter, output), Random123 kat_vectors, threefry2x32 20 rounds
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]
PHILOX_KAT = [  # (counter, key, output), Random123 kat_vectors, philox4x32 10 rounds
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK, MASK, MASK, MASK), (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("key, counter, want", THREEFRY_KAT)
def test_threefry_known_answers(key, counter, want):
    assert hash_one(key, *counter) == want


@pytest.mark.parametrize("counter, key, want", PHILOX_KAT)
def test_philox_known_answers(counter, key, want):
    from eval.impls.random import philox_4x32

    got = philox_4x32([np.uint32(c) for c in counter], (np.uint32(key[0]), np.uint32(key[1])))
    assert tuple(int(g) for g in got) == want


@given(keys, st.lists(st.tuples(words, words), min_size=1, max_size=6))
def test_threefry_broadcasts_scalar_keys_over_counters(key, counters):
    hi, lo = (np.array(c, np.uint32) for c in zip(*counters, strict=True))
    y1, y2 = run("threefry2x32", np.uint32(key[0]), np.uint32(key[1]), hi, lo)
    assert y1.dtype == y2.dtype == np.uint32 and y1.shape == hi.shape
    assert [(int(a), int(b)) for a, b in zip(y1, y2, strict=True)] == [hash_one(key, *c) for c in counters]


def test_threefry_stretches_size_one_axes():
    k1, k2 = np.arange(3, dtype=np.uint32).reshape(3, 1), np.uint32(9)
    x1, x2 = np.arange(4, dtype=np.uint32).reshape(1, 4), np.full((3, 4), 5, np.uint32)
    y1, y2 = run("threefry2x32", k1, k2, x1, x2)
    assert y1.shape == (3, 4)
    assert all((int(y1[i, j]), int(y2[i, j])) == hash_one((i, 9), j, 5) for i in range(3) for j in range(4))


# --- keys: seed, wrap/unwrap/clone, split, fold_in, random_bits, as JAX defines them -----------------------


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32", "uint64"])
def test_random_seed_is_the_seed_in_two_words(dtype):
    info = np.iinfo(dtype)
    seeds = np.array([0, 1, info.max, info.min, -1 if info.min < 0 else 7], dtype)
    got = run("random_seed", seeds, impl=FRY)
    assert got.dtype == np.uint32 and got.shape == (5, 2)
    for s, (hi, lo) in zip(seeds.tolist(), got.tolist(), strict=True):
        # JAX's threefry_seed: the high word of a 64-bit seed (0 for narrower ones), the low 32 bits of s
        assert (hi, lo) == ((s >> 32) & MASK if info.bits == 64 else 0, s & MASK)


def test_wrap_unwrap_clone_keep_the_key_data():
    data = np.arange(12, dtype=np.uint32).reshape(3, 2, 2)
    for name, params in (("random_wrap", {"impl": FRY}), ("random_unwrap", {}), ("random_clone", {})):
        got = run(name, data, **params)
        assert got is not data and np.array_equal(got, data) and got.dtype == np.uint32


def test_unsupported_prng_implementation_is_refused():
    with pytest.raises(NotImplementedError, match="random_wrap.*rbg"):
        run("random_wrap", np.zeros(4, np.uint32), impl=Symbol("rbg"))


@given(keys, st.lists(st.integers(0, 3), max_size=3).map(tuple))
def test_split_hashes_the_row_major_index(key, shape):
    """JAX's _threefry_split_foldlike: new key i is the hash of the counter pair (i >> 32, i & mask)."""
    got = run("random_split", key, shape=shape)
    assert got.shape == (*shape, 2) and got.dtype == np.uint32
    for i, idx in enumerate(np.ndindex(*shape)):
        assert tuple(int(w) for w in got[idx]) == hash_one(key, 0, i)


@given(keys, keys, st.integers(0, MASK))
def test_split_and_fold_in_of_a_key_array_act_on_each_key(k0, k1, msg):
    both = np.stack([k0, k1])
    split = run("random_split", both, shape=(3,))
    assert np.array_equal(split, np.stack([run("random_split", k, shape=(3,)) for k in (k0, k1)]))
    folded = run("random_fold_in", both, np.uint32(msg))
    assert [tuple(int(w) for w in k) for k in folded] == [hash_one(k, 0, msg) for k in (k0, k1)]


@given(keys, st.integers(-2**63, 2**63 - 1))
def test_fold_in_hashes_the_message_as_a_uint32(key, msg):
    """JAX's _threefry_fold_in: threefry_2x32(key, threefry_seed(uint32(msg))) = hash of (0, msg mod 2^32)."""
    got = run("random_fold_in", key, np.int64(msg))
    assert tuple(int(w) for w in got) == hash_one(key, 0, msg & MASK)


def test_fold_in_broadcasts_keys_and_messages():
    ks = np.arange(6, dtype=np.uint32).reshape(3, 1, 2)
    msgs = np.arange(4, dtype=np.uint32).reshape(1, 4)
    got = run("random_fold_in", ks, msgs)
    assert got.shape == (3, 4, 2)
    assert all(tuple(int(w) for w in got[i, j]) == hash_one(ks[i, 0], 0, j) for i in range(3) for j in range(4))


@pytest.mark.parametrize("bits", [8, 16, 32, 64])
@given(key=keys, shape=st.lists(st.integers(0, 3), max_size=3).map(tuple))
def test_random_bits_combine_the_two_hash_words(bits, key, shape):
    """JAX's _threefry_random_bits_partitionable: element i hashes (i >> 32, i & mask); 64 bits are the
    words high then low, 32 bits their xor, 8 and 16 bits the xor's low bits."""
    got = run("random_bits", key, bit_width=bits, shape=shape)
    assert got.shape == shape and got.dtype == np.dtype(f"uint{bits}")
    for i, idx in enumerate(np.ndindex(*shape)):
        hi, lo = hash_one(key, 0, i)
        assert int(got[idx]) == ((hi << 32) | lo if bits == 64 else (hi ^ lo) & ((1 << bits) - 1))


def test_random_bits_of_a_key_array_are_each_keys_bits():
    ks = np.arange(8, dtype=np.uint32).reshape(2, 2, 2)
    got = run("random_bits", ks, bit_width=32, shape=(3,))
    assert got.shape == (2, 2, 3)
    assert np.array_equal(got[1, 0], run("random_bits", ks[1, 0], bit_width=32, shape=(3,)))


# --- random_gamma: JAX's sampler -------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.2, 1.0, 3.5, 40.0])
def test_gamma_samples_follow_the_gamma_distribution(alpha):
    a = np.full(3000, alpha)
    samples = run("random_gamma", np.array([0, 7], np.uint32), a, log_space=False)
    assert samples.dtype == np.float64 and samples.shape == a.shape and np.all(samples > 0)
    assert stats.kstest(samples, stats.gamma(alpha).cdf).pvalue > 1e-3


@given(keys, st.lists(st.floats(0.05, 20.0), min_size=1, max_size=6))
def test_log_space_gamma_is_the_log_of_gamma(key, alphas):
    """JAX's loggamma draws the same variates as gamma (its docstring's identity)."""
    a = np.array(alphas)
    plain = run("random_gamma", key, a, log_space=False)
    logs = run("random_gamma", key, a, log_space=True)
    np.testing.assert_allclose(np.exp(logs), plain, rtol=1e-12)


def test_gamma_with_a_key_array_draws_each_row_with_its_key():
    ks = np.array([[1, 2], [3, 4]], np.uint32)
    a = np.array([[0.5, 2.0, 9.0], [1.5, 0.7, 3.0]])
    got = run("random_gamma", ks, a, log_space=False)
    for i in range(2):
        np.testing.assert_array_equal(got[i], run("random_gamma", ks[i], a[i], log_space=False))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_gamma_keeps_narrow_dtypes(dtype):
    a = np.array([0.5, 2.0, 6.0], dtype)
    got = run("random_gamma", np.array([5, 6], np.uint32), a, log_space=False)
    assert got.dtype == dtype and np.all(np.isfinite(got)) and np.all(got > 0)


def test_gamma_with_a_misplaced_key_array_is_refused():
    with pytest.raises(ValueError, match="random_gamma"):
        run("random_gamma", np.zeros((2, 2), np.uint32), np.ones((3,)), log_space=False)


# --- rng_bit_generator: XLA's generators ------------------------------------------------------------------


def generate(state, shape, dtype=np.uint32, algorithm="RNG_THREE_FRY"):
    from ir.dtypes import from_numpy

    return run("rng_bit_generator", np.asarray(state), shape=shape, dtype=from_numpy(dtype),
               algorithm=Symbol(algorithm), out_sharding=None)


ALGORITHMS = ["RNG_THREE_FRY", "RNG_PHILOX"]
states = st.lists(words, min_size=4, max_size=4).map(lambda s: np.array(s, np.uint32))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@given(state=states, n=st.integers(0, 9))
def test_32_bit_pairs_are_the_64_bit_words(algorithm, state, n):
    """Both generators give a 64-bit value the two 32-bit words they give in turn, and advance the state
    by the same count."""
    s32, b32 = generate(state, (2 * n,), np.uint32, algorithm)
    s64, b64 = generate(state, (n,), np.uint64, algorithm)
    assert np.array_equal(s32, s64)
    pairs = b32.reshape(n, 2).astype(np.uint64)
    assert np.array_equal(pairs[:, 0] | (pairs[:, 1] << np.uint64(32)), b64)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("narrow", [np.uint8, np.uint16])
@given(state=states, shape=st.lists(st.integers(0, 3), max_size=3).map(tuple))
def test_narrow_bits_truncate_the_32_bit_ones(algorithm, narrow, state, shape):
    s, wide = generate(state, shape, np.uint32, algorithm)
    s_narrow, bits = generate(state, shape, narrow, algorithm)
    assert bits.dtype == narrow and bits.shape == shape
    assert np.array_equal(bits, wide.astype(narrow)) and np.array_equal(s, s_narrow)


@given(state=states, n=st.integers(1, 8))
def test_threefry_generator_odd_lengths_are_prefixes(state, n):
    """XLA's ThreeFryRngBit32 rounds the split axis up to even and slices: shape (2n - 1,) is a prefix of (2n,)."""
    assert np.array_equal(generate(state, (2 * n - 1,))[1], generate(state, (2 * n,))[1][:-1])


@given(state=states, n=st.integers(0, 6))
def test_threefry_generator_hashes_consecutive_counts(state, n):
    """64-bit values: the Threefry hash of (state word 1 + i) under the key (state word 0), words low first."""
    new_state, bits = generate(state, (n,), np.uint64)
    key, counter = int(state[0]) | int(state[1]) << 32, int(state[2]) | int(state[3]) << 32
    for i in range(n):
        count = (counter + i) % 2**64
        lo, hi = hash_one((key & MASK, key >> 32), count & MASK, count >> 32)
        assert int(bits[i]) == lo | hi << 32
    advanced = (counter + n) % 2**64
    assert new_state.tolist() == [state[0], state[1], advanced & MASK, advanced >> 32]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_two_word_uint64_state_is_the_four_word_one(algorithm):
    state = np.array([11, 22, 33, 44], np.uint32)
    s32, bits32 = generate(state, (2, 3), algorithm=algorithm)
    s64, bits64 = generate(np.array([11 | 22 << 32, 33 | 44 << 32], np.uint64), (2, 3), algorithm=algorithm)
    assert np.array_equal(bits32, bits64) and s64.dtype == np.uint64
    assert np.array_equal(s32, np.stack([s64 & MASK, s64 >> np.uint64(32)], axis=-1).astype(np.uint32).reshape(4))


def test_default_algorithm_is_xla_cpus_philox():
    state = np.array([1, 2, 3, 4], np.uint32)
    for got, want in zip(generate(state, (5,), algorithm="RNG_DEFAULT"), generate(state, (5,), algorithm="RNG_PHILOX"),
                         strict=True):
        assert np.array_equal(got, want)


def test_philox_generator_counts_blocks_from_the_state():
    """XLA's PhiloxRngBit32 on a two-word state: block i is Philox of the 128-bit count (state word 1 + i,
    key word), under the key word; its four words are taken in turn; the state advances by the blocks."""
    from eval.impls.random import philox_4x32

    state = np.array([5, 6, 7, 8], np.uint32)
    new_state, bits = generate(state, (6,), algorithm="RNG_PHILOX")
    blocks = [philox_4x32([np.uint32(7 + i), np.uint32(8), np.uint32(5), np.uint32(6)], (np.uint32(5), np.uint32(6)))
              for i in range(2)]
    assert bits.tolist() == [int(w) for b in blocks for w in b][:6]
    assert new_state.tolist() == [5, 6, 9, 8]


def test_unsupported_algorithm_and_state_are_refused():
    with pytest.raises(NotImplementedError, match="rng_bit_generator.*RNG_FOO"):
        generate(np.zeros(4, np.uint32), (2,), algorithm="RNG_FOO")
    with pytest.raises(ValueError, match="rng_bit_generator.*state"):
        generate(np.zeros(3, np.uint32), (2,))
