"""Reverse mode is O(program size): the e-graph once the AD rules have expanded every node grows
linearly with depth on residual chains and on chains of diamonds (where top-down cotangent rules
explode exponentially, EGGLOG-NOTES.md). Sizes, not times: `eqjax bench grad` prints the timings."""

import numpy as np
import pytest

import ir.numpy as jnp
from ir import make_jaxpr
from rewrites.bench import residual_chain
from rewrites.options import Options
from transforms.ad.programs import grad_program


def diamonds(depth: int):
    def f(x):
        for _ in range(depth):
            x = jnp.sin(x) * jnp.cos(x)  # x is used twice per level
        return jnp.sum(x)

    return make_jaxpr(f)(np.ones(3))


def ad_size(closed) -> int:
    _, report = grad_program(closed, list(range(len(closed.jaxpr.invars))), options=Options(rules="none"))
    return report.prelude_enodes


@pytest.mark.parametrize("program", [residual_chain, diamonds], ids=["residual-chain", "diamonds"])
def test_e_graph_after_ad_expansion_grows_linearly(program):
    sizes = {depth: ad_size(program(depth)) for depth in (8, 16, 32, 64)}
    steps = [sizes[2 * d] - sizes[d] for d in (8, 16, 32)]
    # doubling the depth adds the same number of nodes per added level, up to a few
    per_level = [step / d for step, d in zip(steps, (8, 16, 32), strict=True)]
    assert max(per_level) <= 1.1 * min(per_level), sizes
