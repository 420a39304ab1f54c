"""`make demo`: trace a small MLP loss with `ir.numpy`, print its jaxpr, evaluate it with NumPy."""

from __future__ import annotations

import numpy as np

import ir
import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir.tree import tree_leaves


def mlp_loss(params, x, y):
    """Mean squared error of a two-layer tanh MLP."""
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(x @ w1 + b1)
    pred = h @ w2 + b2
    return jnp.mean((pred - y) ** 2)


def example_inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = ((rng.normal(size=(3, 5)), rng.normal(size=5)), (rng.normal(size=(5, 2)), rng.normal(size=2)))
    return params, rng.normal(size=(4, 3)), rng.normal(size=(4, 2))


def run_demo() -> None:
    params, x, y = example_inputs()
    closed = ir.make_jaxpr(mlp_loss)(params, x, y)
    print("# traced jaxpr of mlp_loss(params, x, y)")
    print(closed)
    [loss] = eval_jaxpr(closed, *tree_leaves((params, x, y)))
    print(f"# evaluated with NumPy: loss = {float(loss):.12g}")
    (w1, b1), (w2, b2) = params
    direct = np.mean((np.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)
    print(f"# plain NumPy reference:  loss = {float(direct):.12g}")
