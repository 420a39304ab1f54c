"""The custom derivative rules the oracle fixtures name, as their author wrote them (the fixtures' grad
texts show them): clip_gradient(-0.5, 0.5) and newton_sqrt's d sqrt(x) = dx / (2 sqrt x). Running this
file registers them, as `eqjax conformance --custom-rules tests/oracle_custom_rules.py` does; without
them those checks are skipped (tests/transforms/test_known_gaps.py)."""

from ir import custom_rules, lax
from ir import numpy as jnp


def _clip_gradient_fwd(x):
    return x, None


def _clip_gradient_bwd(_, g):
    return (lax.clamp(-0.5, g, 0.5),)


def _newton_sqrt_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = jnp.sqrt(x)
    return y, t / (2.0 * y)


custom_rules.defvjp(_clip_gradient_fwd, _clip_gradient_bwd)
custom_rules.defjvp(_newton_sqrt_jvp)
