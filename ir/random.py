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
           'bernoulli', 'categorical', 'gumbel', 'exponential', 'randint', 'truncated_normal', 'permutation',
           'choice', 'clone', 'rademacher', 'laplace', 'logistic', 'cauchy', 'lognormal', 'rayleigh', 'pareto',
           'weibull_min', 'gamma', 'loggamma', 'beta', 'chisquare', 't', 'triangular', 'maxwell',
           'double_sided_maxwell']

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



def _split2(k):
    pair = bind("random_split", _typed(k), shape=(2,))
    return pair[0], pair[1]


def randint(k, shape, minval, maxval, dtype=None):
    """JAX's two-draw scheme: `(hi % span) * (2**(nbits/2) % span)**2 % span + lo % span`, all mod span."""
    dt = jnp.int64 if dtype is None else lax.to_dtype(dtype)
    info = np.iinfo(dt.numpy)
    shape = tuple(shape)
    maxval_out_of_range = jnp.greater(maxval, info.max) if not isinstance(maxval, (int, np.integer)) \
        else maxval > info.max
    minval = jnp.astype(jnp.clip(minval, int(info.min), int(info.max)), dt)
    maxval = jnp.astype(jnp.clip(maxval, int(info.min), int(info.max)), dt)
    minval = lax.broadcast_to_rank(minval, len(shape))
    maxval = lax.broadcast_to_rank(maxval, len(shape))
    nbits = dt.bits
    uint = lax.to_dtype(f"uint{nbits}")
    k1, k2 = _split2(k)
    higher_bits, lower_bits = bits(k1, shape, uint), bits(k2, shape, uint)
    span = lax.convert_element_type(lax.sub(maxval, minval), uint)
    span = jnp.where(jnp.less_equal(maxval, minval), np.array(1, uint.numpy), span)
    span = jnp.where(jnp.logical_and(maxval_out_of_range, jnp.greater(maxval, minval)),
                     lax.add(span, np.array(1, uint.numpy)), span)
    multiplier = lax.rem(np.array(2 ** (nbits // 2), uint.numpy), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dt))


def truncated_normal(k, lower, upper, shape=None, dtype=None):
    dt = jnp.float64 if dtype is None else lax.to_dtype(dtype)
    lower, upper = jnp.astype(jnp.asarray(lower), dt), jnp.astype(jnp.asarray(upper), dt)
    shape = jnp.broadcast_shapes(lower.shape, upper.shape) if shape is None else tuple(shape)
    sqrt2 = np.array(np.sqrt(2), dt.numpy)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    out = lax.mul(sqrt2, lax.erf_inv(uniform(k, shape, dt, a, b)))
    lo = lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dt.numpy))
    hi = lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dt.numpy))
    return jnp.clip(out, lo, hi)


def _shuffle(k, x, axis: int):
    """Rounds of sorting by fresh random 32-bit keys, as JAX's `_shuffle` (enough rounds for 3 log n bits)."""
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        k, subkey = _split2(k)
        sort_keys = bits(subkey, x.shape, jnp.uint32)
        x = lax.sort_key_val(sort_keys, x, axis)[1]
    return x


def permutation(k, x, axis: int = 0, independent: bool = False):
    if isinstance(x, (int, np.integer)):
        return _shuffle(k, lax.iota(jnp.int64, int(x)), 0)
    x = jnp.asarray(x)
    if x.ndim == 0:
        raise TypeError("permutation: x must be an int or an array of rank >= 1")
    axis = axis % x.ndim
    if independent or x.ndim == 1:
        return _shuffle(k, x, axis)
    ind = _shuffle(k, lax.iota(jnp.int64, x.shape[axis]), 0)
    return jnp.take(x, ind, axis)


def choice(k, a, shape=(), replace: bool = True, p=None, axis: int = 0):
    shape = tuple(shape)
    scalar = isinstance(a, (int, np.integer))
    arr = None if scalar else jnp.asarray(a)
    n_inputs = int(a) if scalar else arr.shape[axis % arr.ndim]
    n_draws = int(np.prod(shape))
    if n_draws == 0:
        raise ValueError("choice: an empty shape draws nothing")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"choice: cannot take {shape} samples from {n_inputs} without replacement")
    axis = 0 if scalar else axis % arr.ndim
    if p is None:
        if replace:
            ind = randint(k, shape, 0, n_inputs)
            return ind if scalar else jnp.take(arr, ind, axis)
        perm = permutation(k, n_inputs if scalar else arr, axis)
        result = lax.slice_in_dim(perm, 0, n_draws, axis=axis)
    else:
        p = jnp.asarray(p)
        if replace:
            cumulative = jnp.cumsum(p)
            r = lax.mul(cumulative[-1], lax.sub(np.array(1.0, p.dtype.numpy), uniform(k, shape, p.dtype)))
            ind = jnp.searchsorted(cumulative, r)
            return ind if scalar else jnp.take(arr, ind, axis)
        g = lax.add(gumbel(k, (n_inputs,), p.dtype), jnp.log(p))
        ind = lax.convert_element_type(lax.top_k(g, n_draws)[1], jnp.int64)
        result = ind if scalar else jnp.take(arr, ind, axis)
    if scalar:
        return jnp.reshape(result, shape)
    return jnp.reshape(result, arr.shape[:axis] + shape + arr.shape[axis + 1:])


def clone(k):
    return bind("random_clone", k)


def _float(dtype):
    return jnp.float64 if dtype is None else lax.to_dtype(dtype)


def _param(value, dt):
    return lax.convert_element_type(jnp.asarray(value), dt)


def rademacher(k, shape=(), dtype=None):
    dt = jnp.int64 if dtype is None else lax.to_dtype(dtype)
    samples = jnp.astype(bernoulli(k, 0.5, shape), dt)
    return jnp.astype(2 * samples - 1, dt)


def laplace(k, shape=(), dtype=None):
    dt = _float(dtype)
    u = uniform(k, shape, dt, -1.0 + float(np.finfo(dt.numpy).epsneg), 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(k, shape=(), dtype=None):
    dt = _float(dtype)
    x = uniform(k, shape, dt, float(np.finfo(dt.numpy).tiny), 1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def cauchy(k, shape=(), dtype=None):
    dt = _float(dtype)
    u = uniform(k, shape, dt, float(np.finfo(dt.numpy).eps), 1.0)
    return lax.tan(lax.mul(np.array(np.pi, dt.numpy), lax.sub(u, np.array(0.5, dt.numpy))))


def lognormal(k, sigma=1.0, shape=None, dtype=None):
    dt = _float(dtype)
    sigma = _param(sigma, dt)
    shape = sigma.shape if shape is None else tuple(shape)
    return lax.exp(normal(k, shape, dt) * sigma)


def rayleigh(k, scale=1.0, shape=None, dtype=None):
    dt = _float(dtype)
    scale = _param(scale, dt)
    shape = scale.shape if shape is None else tuple(shape)
    u = uniform(k, shape, dt)
    scale = jnp.broadcast_to(scale, shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), np.array(-2, dt.numpy))))


def pareto(k, b, shape=None, dtype=None):
    dt = _float(dtype)
    b = _param(b, dt)
    shape = b.shape if shape is None else tuple(shape)
    return lax.exp(exponential(k, shape, dt) / b)


def weibull_min(k, scale, concentration, shape=(), dtype=None):
    dt = _float(dtype)
    u = uniform(k, shape, dt, 0, 1)
    return jnp.power(-jnp.log1p(-u), 1.0 / jnp.asarray(concentration)) * scale


def _gamma(k, a, shape, dtype, log_space: bool):
    dt = _float(dtype)
    a = _param(a, dt)
    shape = a.shape if shape is None else tuple(shape)
    if a.shape != shape:
        a = jnp.broadcast_to(a, shape)
    return bind("random_gamma", _typed(k), a, log_space=log_space)


def gamma(k, a, shape=None, dtype=None):
    return _gamma(k, a, shape, dtype, False)


def loggamma(k, a, shape=None, dtype=None):
    return _gamma(k, a, shape, dtype, True)


def beta(k, a, b, shape=None, dtype=None):
    dt = _float(dtype)
    a, b = _param(a, dt), _param(b, dt)
    shape = jnp.broadcast_shapes(a.shape, b.shape) if shape is None else tuple(shape)
    key_a, key_b = _split2(k)
    log_gamma_a = loggamma(key_a, jnp.broadcast_to(a, shape), shape, dt)
    log_gamma_b = loggamma(key_b, jnp.broadcast_to(b, shape), shape, dt)
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = jnp.exp(log_gamma_a - log_max)
    gamma_b_scaled = jnp.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


def chisquare(k, df, shape=None, dtype=None):
    dt = _float(dtype)
    df = _param(df, dt)
    two = np.array(2, dt.numpy)
    return lax.mul(jnp.exp(loggamma(k, lax.div(df, two), shape, dt)), two)


def t(k, df, shape=(), dtype=None):
    dt = _float(dtype)
    df = _param(df, dt)
    shape = df.shape if shape is None else tuple(shape)
    key_n, key_g = _split2(k)
    n = normal(key_n, shape, dt)
    half_df = lax.div(df, np.array(2, dt.numpy))
    g = gamma(key_g, half_df, shape, dt)
    return n * jnp.sqrt(half_df / g)


def triangular(k, left, mode, right, shape=(), dtype=None):
    dt = _float(dtype)
    shape = tuple(shape)
    left, right, mode = (jnp.broadcast_to(_param(v, dt), shape) for v in (left, right, mode))
    fc = (mode - left) / (right - left)
    u = uniform(k, shape, dt)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


def maxwell(k, shape=(), dtype=None):
    return jnp.linalg.norm(normal(k, tuple(shape) + (3,), _float(dtype)), axis=-1)


def double_sided_maxwell(k, loc, scale, shape=(), dtype=None):
    dt = _float(dtype)
    params_shape = jnp.broadcast_shapes(np.shape(loc), np.shape(scale))
    shape = (tuple(shape) or params_shape) + params_shape
    maxwell_key, rademacher_key = _split2(k)
    maxwell_rvs = maxwell(maxwell_key, shape, dt)
    random_sign = rademacher(rademacher_key, shape, dt)
    return random_sign * maxwell_rvs * scale + loc
