"""The realistic-size programs of `eqjax bench runtime`, written with `ir.numpy` and `ir.lax`.

Each `Workload` is a function of flat float64 arrays and its inputs; a gradient workload (`argnums`)
is timed as the gradient of its scalar function with respect to those arguments. Sizes follow the issue
that asked for the benchmark: an MLP (batch 256, 256 -> 512 -> 10), softmax cross-entropy (4096 x 1000),
layernorm (4096 x 1024), a 4-head attention block (sequence 256, head dim 64), a 10-op elementwise
chain on 10^6 elements, a scan RNN (128 steps, hidden 256) and a small conv net.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import ir.lax as lax
import ir.numpy as jnp


@dataclass
class Workload:
    name: str
    fun: Callable
    args: tuple[np.ndarray, ...]
    argnums: tuple[int, ...] | None = None  # a gradient with respect to these arguments

    @property
    def is_grad(self) -> bool:
        return self.argnums is not None


def _log_softmax(logits):
    shifted = logits - jnp.max(logits, axis=-1, keepdims=True)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))


def mlp_loss(w1, b1, w2, b2, x, y):
    h = jnp.tanh(x @ w1 + b1)
    return -jnp.mean(jnp.sum(_log_softmax(h @ w2 + b2) * y, axis=-1))


def softmax_xent(logits, labels):
    return -jnp.mean(jnp.sum(_log_softmax(logits) * labels, axis=-1))


def layernorm(x, gamma, beta):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = jnp.mean(centered * centered, axis=-1, keepdims=True)
    return centered / jnp.sqrt(var + 1e-5) * gamma + beta


HEADS, HEAD_DIM, SEQ = 4, 64, 256


def attention(x, wq, wk, wv, wo):
    def heads(t):  # (seq, heads*dim) -> (heads, seq, dim)
        return jnp.transpose(jnp.reshape(t, (SEQ, HEADS, HEAD_DIM)), (1, 0, 2))

    q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    scores = jnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(HEAD_DIM)
    weights = jnp.exp(scores - jnp.max(scores, axis=-1, keepdims=True))
    weights = weights / jnp.sum(weights, axis=-1, keepdims=True)
    mixed = jnp.einsum("hqk,hkd->hqd", weights, v)
    return jnp.reshape(jnp.transpose(mixed, (1, 0, 2)), (SEQ, HEADS * HEAD_DIM)) @ wo


def attention_loss(x, wq, wk, wv, wo):
    out = attention(x, wq, wk, wv, wo)
    return jnp.mean(out * out)


def elementwise_chain(x):
    y = jnp.sin(x) * 2.0 + 1.0
    y = jnp.exp(-y * y) + jnp.cos(x)
    return jnp.tanh(y * x - 0.5) / (1.0 + x * x)


def rnn_loss(h0, w, u, b, xs):
    def step(h, x):
        h = jnp.tanh(h @ w + x @ u + b)
        return h, h

    h, _ = lax.scan(step, h0, xs)
    return jnp.sum(h * h)


def conv_net(x, k1, k2, w):
    dn = ("NCHW", "OIHW", "NCHW")
    h = jnp.maximum(lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn), 0.0)
    h = jnp.maximum(lax.conv_general_dilated(h, k2, (2, 2), "SAME", dimension_numbers=dn), 0.0)
    return jnp.mean(h, axis=(2, 3)) @ w


def conv_loss(x, k1, k2, w, y):
    return -jnp.mean(jnp.sum(_log_softmax(conv_net(x, k1, k2, w)) * y, axis=-1))


def workloads(seed: int = 0) -> list[Workload]:
    rng = np.random.default_rng(seed)

    def normal(*shape, scale=1.0):
        return rng.normal(size=shape) * scale

    def one_hot(n, k):
        return np.eye(k)[rng.integers(0, k, n)]

    mlp = (normal(256, 512, scale=0.05), normal(512), normal(512, 10, scale=0.05), normal(10),
           normal(256, 256), one_hot(256, 10))
    att = (normal(SEQ, HEADS * HEAD_DIM), *(normal(HEADS * HEAD_DIM, HEADS * HEAD_DIM, scale=0.06)
                                           for _ in range(4)))
    rnn = (np.zeros(256), normal(256, 256, scale=0.06), normal(256, 256, scale=0.06), normal(256),
           normal(128, 256))
    conv = (normal(8, 3, 32, 32), normal(16, 3, 3, 3, scale=0.2), normal(32, 16, 3, 3, scale=0.1),
            normal(32, 10, scale=0.2), one_hot(8, 10))
    return [
        Workload("mlp_loss", mlp_loss, mlp),
        Workload("mlp_grad", mlp_loss, mlp, argnums=(0, 1, 2, 3)),
        Workload("softmax_xent", softmax_xent, (normal(4096, 1000), one_hot(4096, 1000))),
        Workload("layernorm", layernorm, (normal(4096, 1024), normal(1024), normal(1024))),
        Workload("attention", attention, att),
        Workload("attention_grad", attention_loss, att, argnums=(1, 2, 3, 4)),
        Workload("elementwise_chain", elementwise_chain, (normal(1_000_000),)),
        Workload("rnn_scan", rnn_loss, rnn),
        Workload("conv_net", conv_loss, conv),
    ]
