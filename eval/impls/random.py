"""The PRNG primitives, bit-exact with JAX (x64, CPU): threefry keys, random bits, gamma, rng_bit_generator.

A `key<fry>[...]` value is held as its key data, a uint32 array with a trailing pair of words (a
`key<fry>[3]` is a uint32 (3, 2) array), so `random_wrap`, `random_unwrap` and `random_clone` are the
identity. The rest follows JAX's `jax/_src/prng.py` with `jax_threefry_partitionable` on (JAX's default
since 0.5, and what the oracle fixtures show):
- `threefry2x32` is the Threefry-2x32 block cipher with 20 rounds (Salmon et al., SC 2011), JAX's
  `_threefry2x32_lowering`; its four uint32 operands broadcast;
- a key's 64-bit counters are the row-major index of each output element, split in (high, low) words:
  `random_bits` hashes them (64 bits: high << 32 | low word; 32: their xor; 8 and 16: the xor truncated)
  and `random_split` keeps both words as the new keys;
- `random_fold_in(k, m)` is the hash of the counter pair (0, uint32(m)), `random_seed(s)` the key
  (high word of a 64-bit seed or 0, low 32 bits of the seed);
- `random_gamma` is JAX's `_gamma_impl`: each key split into one key per sample, then Marsaglia–Tsang
  rejection sampling (`_gamma_one`) with JAX's own key splitting, normal and uniform draws, computed in
  the dtype of `a` with the elementwise implementations XLA's are matched by (log, pow, erf_inv);
- `rng_bit_generator` is XLA's RngBitGeneratorExpander (xla/hlo/builder/lib/prng.cc) on the state as
  JAX passes it (a uint32[4] state is two little-endian uint64 words): RNG_THREE_FRY, and RNG_PHILOX, which
  XLA's CPU compiler also runs for RNG_DEFAULT.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from eval.registry import get_impl, impl
from ir.params import as_ints

_U32, _U64 = np.dtype(np.uint32), np.dtype(np.uint64)
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: _U64}
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


# --- Threefry-2x32 and the counters it hashes ----------------------------------------------------


def _rotate_left(x: np.ndarray, d: int) -> np.ndarray:
    return (x << np.uint32(d)) | (x >> np.uint32(32 - d))


def threefry_2x32(k1, k2, x1, x2) -> tuple[np.ndarray, np.ndarray]:
    """The Threefry-2x32 hash of the counter words (x1, x2) under the key (k1, k2), broadcast together."""
    k1, k2, x1, x2 = np.broadcast_arrays(*(np.asarray(v, _U32) for v in (k1, k2, x1, x2)))
    ks = (k1, k2, k1 ^ k2 ^ _PARITY)
    with np.errstate(over="ignore"):
        x = [x1 + ks[0], x2 + ks[1]]
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                x[0] = x[0] + x[1]
                x[1] = x[0] ^ _rotate_left(x[1], r)
            x[0] = x[0] + ks[(i + 1) % 3]
            x[1] = x[1] + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x[0], x[1]


def _counters(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """JAX's `iota_2x32_shape`: each element's row-major index as a 64-bit count, in (high, low) words."""
    count = np.arange(math.prod(shape), dtype=_U64).reshape(shape)
    return (count >> np.uint64(32)).astype(_U32), count.astype(_U32)


def _hash_counters(keys: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Both hash words for every key (data (*K, 2)) and every counter of `shape`: arrays of shape K + shape."""
    hi, lo = _counters(shape)
    lead = keys.shape[:-1] + (1,) * len(shape)
    return threefry_2x32(keys[..., 0].reshape(lead), keys[..., 1].reshape(lead), hi, lo)


def split_keys(keys: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """JAX's `_threefry_split_foldlike`: key data (*K, 2) -> (*K, *shape, 2)."""
    return np.stack(_hash_counters(keys, shape), axis=-1)


def random_bits_of(keys: np.ndarray, bit_width: int, shape: tuple[int, ...]) -> np.ndarray:
    """JAX's `_threefry_random_bits_partitionable`: uint<bit_width> of shape K + shape."""
    b1, b2 = _hash_counters(keys, shape)
    if bit_width == 64:
        return (b1.astype(_U64) << np.uint64(32)) | b2.astype(_U64)
    return (b1 ^ b2).astype(_UINT[bit_width])


# --- the key primitives ----------------------------------------------------------------------------


def _check_impl(prim: str, impl_name) -> None:
    if str(impl_name) != "fry":
        raise NotImplementedError(f"{prim}: PRNG implementation {impl_name!r} is not supported (only threefry, "
                                  "impl=fry)")


@impl("random_seed")
def random_seed(seeds, *, impl):
    _check_impl("random_seed", impl)
    wide = seeds.astype(np.int64 if seeds.dtype.kind == "i" else _U64).view(_U64)
    high = (wide >> np.uint64(32)).astype(_U32) if seeds.dtype.itemsize == 8 else np.zeros(seeds.shape, _U32)
    return np.stack([high, wide.astype(_U32)], axis=-1)


@impl("random_wrap")
def random_wrap(data, *, impl):
    _check_impl("random_wrap", impl)
    return data.copy()


@impl("random_unwrap", "random_clone")
def key_data(keys):
    return keys.copy()


@impl("random_bits")
def random_bits(keys, *, bit_width, shape):
    return random_bits_of(keys, int(bit_width), as_ints(shape))


@impl("random_split")
def random_split(keys, *, shape):
    return split_keys(keys, as_ints(shape))


@impl("random_fold_in")
def random_fold_in(keys, msgs):
    """threefry_2x32(key, [0, msg]): the hash of the counter pair (0, msg) broadcast with the keys."""
    y1, y2 = threefry_2x32(keys[..., 0], keys[..., 1], 0, msgs.astype(_U32))
    return np.stack([y1, y2], axis=-1)


@impl("threefry2x32")
def threefry2x32(k1, k2, x1, x2):
    return threefry_2x32(k1, k2, x1, x2)


# --- gamma: JAX's _gamma_impl and _gamma_one, vectorized over the samples ------------------------------


def _call(prim: str, *xs: np.ndarray) -> np.ndarray:
    return get_impl(prim)(*xs)


def _uniform(keys: np.ndarray, dtype: np.dtype, low: float, high: float) -> np.ndarray:
    """JAX's `_uniform` with shape (): one sample in [low, high) per key (data (N, 2))."""
    info = ml_dtypes.finfo(dtype)
    nbits, nmant = info.bits, int(info.nmant)
    rng_bits = 8 if nmant < 8 else nbits
    uint = _UINT[nbits]
    bits = random_bits_of(keys, rng_bits, ()).astype(uint)
    one_bits = np.asarray(1.0, dtype).view(uint)
    floats = ((bits >> uint.type(rng_bits - nmant)) | one_bits).view(dtype) - np.asarray(1.0, dtype)
    lo, hi = np.asarray(low, dtype), np.asarray(high, dtype)
    return _call("max", np.broadcast_to(lo, floats.shape), floats * (hi - lo) + lo)


def _normal(keys: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """JAX's `_normal_real`: sqrt(2) * erf_inv(uniform(nextafter(-1, 0), 1))."""
    low = np.nextafter(np.asarray(-1.0, dtype), np.asarray(0.0, dtype))
    u = _uniform(keys, dtype, low, 1.0)
    return np.asarray(np.sqrt(2), dtype) * _call("erf_inv", u)


def _gamma_one(keys: np.ndarray, alpha: np.ndarray, log_space: bool) -> np.ndarray:
    """JAX's `_gamma_one` for each (key, alpha) pair: its while loops run per sample until it is accepted."""
    dt = alpha.dtype
    zero, one, third = (np.asarray(v, dt) for v in (0.0, 1.0, 1.0 / 3.0))
    boost_mask = alpha >= one
    boosted = np.where(boost_mask, alpha, alpha + one)
    d = boosted - third
    c = third / _call("sqrt", d)

    def rejected(X, V, U, d):  # the loop condition: the proposal is not accepted yet
        squeeze = U >= one - np.asarray(0.0331, dt) * (X * X)
        return squeeze & (_call("log", U) >= X * np.asarray(0.5, dt) + d * ((one - V) + _call("log", V)))

    first = split_keys(keys, (2,))
    keys, subkeys = first[:, 0].copy(), first[:, 1]
    X, V, U = (np.full(alpha.shape, v, dt) for v in (0.0, 1.0, 2.0))
    active = rejected(X, V, U, d)
    while active.any():
        three = split_keys(keys[active], (3,))
        keys[active] = three[:, 0]
        x, v = _positive_v(three[:, 1], c[active])
        X[active], V[active], U[active] = x * x, (v * v) * v, _uniform(three[:, 2], dt, 0.0, 1.0)
        active[active] = rejected(X[active], V[active], U[active], d[active])
    if log_space:
        log_samples = _call("log1p", -_uniform(subkeys, dt, 0.0, 1.0))  # -exponential(subkey)
        log_boost = np.where(boost_mask | (log_samples == zero), zero, log_samples * (one / alpha))
        return (_call("log", d) + _call("log", V)) + log_boost
    samples = one - _uniform(subkeys, dt, 0.0, 1.0)
    boost = np.where(boost_mask, one, _call("pow", samples, one / alpha))
    return (d * V) * boost


def _positive_v(keys: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inner loop of `_gamma_one`: normal draws x until v = 1 + x c is positive (x starts at 0, v at -1)."""
    dt = c.dtype
    keys = keys.copy()
    x, v = np.zeros(c.shape, dt), np.full(c.shape, -1.0, dt)
    active = v <= 0
    while active.any():
        pair = split_keys(keys[active], (2,))
        keys[active] = pair[:, 0]
        x[active] = _normal(pair[:, 1], dt)
        v[active] = np.asarray(1.0, dt) + x[active] * c[active]
        active[active] = v[active] <= 0
    return x, v


@impl("random_gamma")
@np.errstate(all="ignore")
def random_gamma(keys, a, *, log_space=False):
    key_shape = keys.shape[:-1]
    if a.shape[:len(key_shape)] != key_shape:
        raise ValueError(f"random_gamma: the key array's shape {key_shape} must lead the shape {a.shape} of a")
    per_key = math.prod(a.shape[len(key_shape):])
    sample_keys = split_keys(keys.reshape(-1, 2), (per_key,)).reshape(-1, 2)
    samples = _gamma_one(sample_keys, a.reshape(-1), bool(log_space))
    return samples.reshape(a.shape).astype(a.dtype)


# --- rng_bit_generator: XLA's RngBitGeneratorExpander ------------------------------------------------
_PHILOX_MULTIPLIERS = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
_PHILOX_KEY_STEPS = (np.uint32(0x9E3779B9), np.uint32(0xBB67AE85))


def _words(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """uint64 values as their (low, high) uint32 words."""
    return x.astype(_U32), (x >> np.uint64(32)).astype(_U32)


def _join(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    return low.astype(_U64) | (high.astype(_U64) << np.uint64(32))


def _split_shape(shape: tuple[int, ...]) -> tuple[tuple[int, ...], int | None]:
    """XLA's SplitShapeIntoHalves: the half shape (a size-1 axis after the split one) and the split axis."""
    if not shape:
        return (1,), None
    dim = next((i for i, n in enumerate(shape) if n % 2 == 0), None)
    if dim is None:
        dim = max(range(len(shape)), key=shape.__getitem__)  # the first largest axis
    return (*shape[:dim], (shape[dim] + 1) // 2, 1, *shape[dim + 1:]), dim


def _threefry_generator(key, counter, shape: tuple[int, ...], bits: int):
    """ThreeFryRngBit32/64/Narrow: one Threefry hash per 64-bit count (counter + row-major index); 32-bit
    values use both words, the first word filling the first half of the split axis pairwise."""
    half, dim = (shape, None) if bits == 64 else _split_shape(shape)
    count = counter + np.arange(math.prod(half), dtype=_U64).reshape(half)
    out0, out1 = threefry_2x32(*_words(key), *_words(count))
    if bits == 64:
        return _join(out0, out1), counter + np.uint64(count.size)
    if dim is None:
        values = out0.reshape(())
    else:
        even = list(shape)
        even[dim] = 2 * half[dim]
        values = np.concatenate([out0, out1], axis=dim + 1).reshape(even)[tuple(slice(0, n) for n in shape)]
    return values.astype(_UINT[bits]), counter + np.uint64(count.size)


def philox_4x32(counter: list[np.ndarray], key: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
    """Philox-4x32 with 10 rounds (Salmon et al., SC 2011; XLA's Philox4x32)."""
    k0, k1 = (np.asarray(k, _U32) for k in key)
    x = [np.asarray(c, _U32) for c in counter]
    with np.errstate(over="ignore"):
        for _ in range(10):
            low0, high0 = _words(x[0].astype(_U64) * _PHILOX_MULTIPLIERS[0])
            low1, high1 = _words(x[2].astype(_U64) * _PHILOX_MULTIPLIERS[1])
            x = [high1 ^ x[1] ^ k0, low1, high0 ^ x[3] ^ k1, low0]
            k0, k1 = k0 + _PHILOX_KEY_STEPS[0], k1 + _PHILOX_KEY_STEPS[1]
    return x


def _philox_generator(key, counter, shape: tuple[int, ...], bits: int):
    """PhiloxRngBit32/64/Narrow for a two-word state: the 128-bit count is (low counter, high key) plus the
    block index, each block's four words (two for 64 bits) taken in turn; only the low word is kept."""
    n = math.prod(shape)
    blocks = np.arange(-(-n * (2 if bits == 64 else 1) // 4), dtype=_U64)
    low = counter + blocks
    high = np.where(low < counter, key + np.uint64(1), key)
    out = philox_4x32([*_words(low), *_words(high)], _words(key))
    lanes = [_join(out[0], out[1]), _join(out[2], out[3])] if bits == 64 else out
    values = np.stack(lanes, axis=1).reshape(-1)[:n].reshape(shape)
    return values.astype(_UINT[bits]), counter + np.uint64(blocks.size)


_GENERATORS = {"RNG_THREE_FRY": _threefry_generator, "RNG_PHILOX": _philox_generator,
               "RNG_DEFAULT": _philox_generator}  # XLA's CPU compiler expands RNG_DEFAULT as Philox


@impl("rng_bit_generator")
@np.errstate(over="ignore")
def rng_bit_generator(state, *, shape, dtype, algorithm, out_sharding=None):
    name = str(algorithm).rsplit(".", 1)[-1]
    generator = _GENERATORS.get(name)
    if generator is None:
        raise NotImplementedError(f"rng_bit_generator: algorithm {algorithm} is not supported "
                                  f"(only {', '.join(_GENERATORS)})")
    if state.dtype == _U32 and state.shape == (4,):
        words = _join(state[0::2], state[1::2])
    elif state.dtype == _U64 and state.shape == (2,):
        words = state
    else:
        raise ValueError(f"rng_bit_generator: the state must be uint32[4] or uint64[2], got "
                         f"{state.dtype}{list(state.shape)}")
    bits = 8 * np.dtype(dtype.numpy if hasattr(dtype, "numpy") else dtype).itemsize
    values, counter = generator(words[0], words[1], as_ints(shape), bits)
    new_state = np.array([words[0], counter], _U64)
    if state.dtype == _U32:
        new_state = np.stack(_words(new_state), axis=-1).reshape(4)
    return new_state, values
