"""`jax.nn` for traced code, written as jax.nn writes each function.

Where JAX's custom_jvp changes a derivative at a special point, the function is a `custom_jvp` too
(`ir.custom_rules`), registered under `_ir_nn_*` names: `relu` (derivative 0 at 0, where differentiating
`max(x, 0)` gives 1/2), `relu6` (0 at both kinks; also in hard_sigmoid/hard_silu) and the logaddexp inside
softplus/log_sigmoid/mish (JAX's `_logaddexp_jvp`: finite at infinities). softmax and log_softmax stop the
gradient through the max shift, as JAX's bodies do."""

from __future__ import annotations

import numpy as np

import ir.numpy as jnp
from ir import lax
from ir.custom_rules import custom_jvp
from ir.scipy.special import logsumexp

__all__ = [
    'relu', 'relu6', 'gelu', 'silu', 'swish', 'softplus', 'soft_sign', 'sigmoid', 'log_sigmoid', 'hard_sigmoid',
    'hard_silu', 'hard_swish', 'hard_tanh', 'tanh', 'elu', 'celu', 'selu', 'leaky_relu', 'glu', 'mish',
    'squareplus', 'sparse_plus', 'sparse_sigmoid', 'softmax', 'log_softmax', 'logsumexp', 'one_hot',
    'standardize', 'identity',
]


@custom_jvp
def relu(x):
    return jnp.maximum(x, 0)


@relu.defjvp
def _ir_nn_relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return relu(x), jnp.where(x > 0, t, jnp.zeros_like(t))


@custom_jvp
def relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


@relu6.defjvp
def _ir_nn_relu6_jvp(primals, tangents):
    """JAX's rule: slope 1 strictly between the kinks, 0 at 0 and 6."""
    (x,), (t,) = primals, tangents
    return relu6(x), jnp.where((x > 0) & (x < 6), t, jnp.zeros_like(t))


def identity(x):
    return x


def sigmoid(x):
    (x,) = jnp.promote_dtypes_inexact(x)
    return lax.logistic(x)


def log_sigmoid(x):
    return -softplus(-x)


def softplus(x):
    (x,) = jnp.promote_dtypes_inexact(x)
    return _logaddexp(x, jnp.zeros_like(x))


@custom_jvp
def _logaddexp(x1, x2):
    return jnp.logaddexp(x1, x2)


@_logaddexp.defjvp
def _ir_nn_logaddexp_jvp(primals, tangents):
    """JAX's `_logaddexp_jvp`: +inf replaced by 0 in the exponents, so softplus'(inf) = 1, not NaN."""
    (x1, x2), (t1, t2) = primals, tangents
    out = _logaddexp(x1, x2)

    def finite(v):
        return jnp.where(jnp.isposinf(v), jnp.zeros_like(v), v)

    return out, t1 * jnp.exp(finite(x1) - finite(out)) + t2 * jnp.exp(finite(x2) - finite(out))


def soft_sign(x):
    return x / (jnp.abs(x) + 1)


def silu(x):
    return x * sigmoid(x)


swish = silu


def hard_sigmoid(x):
    return relu6(x + 3.0) / 6.0


def hard_silu(x):
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x):
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


tanh = jnp.tanh


def gelu(x, approximate: bool = True):
    (x,) = jnp.promote_dtypes_inexact(x)
    if approximate:
        cdf = 0.5 * (1.0 + jnp.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * (x ** 3))))
        return x * cdf
    return x * (lax.erfc(-x * (1 / np.sqrt(2))) / 2)


def elu(x, alpha=1.0):
    safe_x = jnp.where(x > 0, 0.0, x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe_x))


def celu(x, alpha=1.0):
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x):
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def leaky_relu(x, negative_slope=1e-2):
    return jnp.where(x >= 0, x, negative_slope * x)


def glu(x, axis: int = -1):
    size = x.shape[axis]
    if size % 2:
        raise ValueError("glu: the axis must have an even size")
    a, b = jnp.split(x, 2, axis)
    return a * sigmoid(b)


def mish(x):
    return x * jnp.tanh(softplus(x))


def squareplus(x, b=4):
    return (x + jnp.sqrt(x * x + b)) / 2


def sparse_plus(x):
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


def softmax(x, axis=-1, where=None):
    (x,) = jnp.promote_dtypes_inexact(x)
    x_max = jnp.max(x, axis, keepdims=True)
    unnormalized = jnp.exp(x - lax.stop_gradient(x_max))
    return unnormalized / jnp.sum(unnormalized, axis, keepdims=True)


def log_softmax(x, axis=-1, where=None):
    (x,) = jnp.promote_dtypes_inexact(x)
    x_max = jnp.max(x, axis, keepdims=True)
    shifted = x - lax.stop_gradient(x_max)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis, keepdims=True))


def one_hot(x, num_classes: int, *, dtype=None, axis=-1):
    x = jnp.asarray(x)
    out_axis = axis % (x.ndim + 1)
    classes = lax.broadcasted_iota(x.dtype, x.shape[:out_axis] + (num_classes,) + x.shape[out_axis:], out_axis)
    hot = jnp.equal(jnp.expand_dims(x, out_axis), classes)
    return jnp.astype(hot, jnp.float64 if dtype is None else dtype)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True)
    if variance is None:
        variance = jnp.mean(jnp.square(x), axis, keepdims=True) - jnp.square(mean)
    return (x - mean) * lax.rsqrt(variance + epsilon)
