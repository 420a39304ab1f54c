"""`jax.random` for traced code, over the random primitives (random_seed/wrap/unwrap/split/fold_in/bits) with
JAX's threefry keys, written as jax.random lowers them so the bits match JAX's for the same key.

Keys are raw `u32[2]` arrays (`PRNGKey`) or typed `key<fry>` keys (`key`); every function takes either."""

from __future__ import annotations

import numpy as np

import ir.numpy as jnp
from ir import lax
from ir.params import Symbol
from ir.tracing import bind

__all__ = ['PRNGKey', 'key', 'key_data', 'wrap_key_data', 'split', 'fold_in', 'bits', 'uniform', 'normal',
           'bernoulli', 'categorical', 'gumbel', 'exponential']

_FRY = Symbol("fry")


def key(seed):
    return bind("random_seed", jnp.asarray(seed), impl=_FRY)


def PRNGKey(seed):  # noqa: N802  (JAX's name)
    return bind("random_unwrap", key(seed))


def key_data(keys):
    return bind("random_unwrap", keys)


def wrap_key_data(data):
    return bind("random_wrap", data, impl=_FRY)


def _typed(k):
    k = jnp.asarray(k)
    return k if k.dtype.kind == "key" else wrap_key_data(k)


def _like_input(k, typed_keys):
    return typed_keys if jnp.asarray(k).dtype.kind == "key" else key_data(typed_keys)


def split(k, num: int = 2):
    return _like_input(k, bind("random_split", _typed(k), shape=(int(num),)))


def fold_in(k, data):
    return _like_input(k, bind("random_fold_in", _typed(k), jnp.astype(jnp.asarray(data), jnp.uint32)))


def bits(k, shape=(), dtype=None):
    width = 64 if dtype is None else lax.to_dtype(dtype).bits  # JAX's default `uint` is uint64 under x64
    return bind("random_bits", _typed(k), bit_width=width, shape=tuple(shape))


def uniform(k, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Mantissa bits of `random_bits` under exponent 0 give [1, 2); minus 1, scaled, clamped below by minval."""
    dt = jnp.float64 if dtype is None else lax.to_dtype(dtype)
    shape = tuple(shape)
    minval = lax.broadcast_to_rank(jnp.astype(jnp.asarray(minval), dt), len(shape))
    maxval = lax.broadcast_to_rank(jnp.astype(jnp.asarray(maxval), dt), len(shape))
    nbits, mantissa = dt.bits, int(np.finfo(dt.numpy).nmant)
    uint = lax.to_dtype(f"uint{nbits}")
    raw = bits(k, shape, uint)
    one_bits = int(np.array(1.0, dt.numpy).view(uint.numpy))
    floats = lax.bitcast_convert_type(lax.bitwise_or(lax.shift_right_logical(raw, nbits - mantissa),
                                                     np.array(one_bits, uint.numpy)), dt)
    floats = lax.sub(floats, np.array(1.0, dt.numpy))
    return lax.max(minval, lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval))


def normal(k, shape=(), dtype=None):
    dt = jnp.float64 if dtype is None else lax.to_dtype(dtype)
    lo = np.nextafter(np.array(-1.0, dt.numpy), np.array(0.0, dt.numpy))
    u = uniform(k, shape, dt, lo, 1.0)
    return lax.mul(np.array(np.sqrt(2), dt.numpy), lax.erf_inv(u))


def bernoulli(k, p=0.5, shape=None):
    p = jnp.asarray(p)
    shape = p.shape if shape is None else tuple(shape)
    return jnp.less(uniform(k, shape, p.dtype if p.dtype.is_inexact else jnp.float64), p)


def gumbel(k, shape=(), dtype=None):
    dt = jnp.float64 if dtype is None else lax.to_dtype(dtype)
    tiny = float(np.finfo(dt.numpy).tiny)
    return -jnp.log(-jnp.log(uniform(k, shape, dt, tiny, 1.0)))


def exponential(k, shape=(), dtype=None):
    return -jnp.log1p(-uniform(k, shape, dtype))


def categorical(k, logits, axis: int = -1, shape=None):
    logits = jnp.asarray(logits)
    axis = axis % logits.ndim
    batch = logits.shape[:axis] + logits.shape[axis + 1:]
    shape = batch if shape is None else tuple(shape)
    g = gumbel(k, shape[:len(shape) - len(batch)] + logits.shape, logits.dtype)
    return jnp.argmax(g + logits, axis=axis + len(shape) - len(batch))

