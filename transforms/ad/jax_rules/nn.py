"""jax.nn's custom JVP rules (jax/_src/nn/functions.py)."""

from __future__ import annotations

from ir import lax
from ir import numpy as jnp
from ir.core import Eqn
from ir.errors import UnsupportedPrimitive
from transforms.ad.jax_rules import body_eqns, call_again, defjvps, jax_rule

# relu'(0) = 0 (https://dl.acm.org/doi/10.5555/3540261.3540297); the body, max(x, 0), gives 1/2 there.
jax_rule("relu", "jvp")(defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0))))
jax_rule("relu6", "jvp")(defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0))))
jax_rule("log1mexp", "jvp")(defjvps(lambda g, ans, x: g / jnp.expm1(x)))


@jax_rule("_softmax", "_softmax_jvp")
def _softmax_jvp(eqn: Eqn, primals, tangents):
    """Printed when `jax_softmax_custom_jvp` is on. The axis (a nondiff argument) is the body's first
    reduce_max's; the operands are (x, initial), or (x, where, initial) with a `where` mask."""
    axes = next((e.params["axes"] for e in body_eqns(eqn) if e.primitive == "reduce_max"), None)
    if axes is None:
        raise UnsupportedPrimitive(eqn.primitive, "_softmax_jvp: the body has no reduce_max to read the axis from",
                                   "transforms/ad/jax_rules/nn.py")
    x_dot = tangents[0]
    y = call_again(eqn, *primals)
    y_x_dot = y * x_dot
    if len(primals) == 3:
        y_x_dot = jnp.where(primals[1], y_x_dot, 0)
    return y, y * (x_dot - jnp.sum(y_x_dot, axis=tuple(axes), keepdims=True))
