"""`make demo`: the whole path on a small MLP loss — trace, optimize through the e-graph, evaluate,
then its gradient built by the AD rules in the same kind of e-graph, checked by finite differences,
compiled to straight-line NumPy and timed on each backend, then per-example gradients by the batching
rules (vmap of the gradient), checked against a loop.

The loss is written the way people write it when refactoring (a normalisation by 1.0, a residual
`h - h*0` left from an experiment, a transpose applied twice); the optimizer removes what it can
prove redundant under the default rule set, and the report says which rules fired.
"""

from __future__ import annotations

import numpy as np

import ir
import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir.tree import tree_leaves
from rewrites.engine import optimize


def mlp_loss(params, x, y):
    """Mean squared error of a two-layer tanh MLP."""
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(x @ w1 + b1) * 1.0
    pred = h @ w2.T.T + b2
    return jnp.mean((pred - y) ** 2) / 1.0


def example_inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = ((rng.normal(size=(3, 5)), rng.normal(size=5)), (rng.normal(size=(5, 2)), rng.normal(size=2)))
    return params, rng.normal(size=(4, 3)), rng.normal(size=(4, 2))


def run_demo() -> None:
    params, x, y = example_inputs()
    closed = ir.make_jaxpr(mlp_loss)(params, x, y)
    print("# traced jaxpr of mlp_loss(params, x, y)")
    print(closed)
    optimized, report = optimize(closed, rules="default", cost="flops")
    print("\n# optimized through the e-graph (rules=default, cost=flops, extractor=greedy_dag)")
    print(optimized)
    print("\n# report")
    print(report.summary())
    leaves = tree_leaves((params, x, y))
    [before] = eval_jaxpr(closed, *leaves)
    [after] = eval_jaxpr(optimized, *leaves)
    print(f"\n# evaluated with NumPy: loss = {float(before):.12g} (traced), {float(after):.12g} (optimized)")
    (w1, b1), (w2, b2) = params
    direct = np.mean((np.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)
    print(f"# plain NumPy reference:  loss = {float(direct):.12g}")

    from rewrites.options import Options
    from transforms.ad.programs import grad_program

    n_params = len(tree_leaves(params))
    gradient, grad_report = grad_program(closed, list(range(n_params)), options=Options(measure_transformed=True))
    print("\n# gradient with respect to the params (AD rules + default algebra, one e-graph)")
    print(gradient)
    print(grad_report.summary())
    grads = eval_jaxpr(gradient, *leaves)
    w1 = leaves[0]
    step = np.zeros_like(w1)
    step[0, 0] = 1e-6
    moved = [w1 + step, *leaves[1:]], [w1 - step, *leaves[1:]]
    fd = (float(eval_jaxpr(closed, *moved[0])[0]) - float(eval_jaxpr(closed, *moved[1])[0])) / 2e-6
    print(f"\n# d loss / d w1[0,0] = {float(grads[0][0, 0]):.9g} (gradient program), {fd:.9g} (central difference)")
    _run_for_real(gradient, leaves)

    from transforms import grad, jit, vmap

    per_example = vmap(grad(mlp_loss), in_axes=(None, 0, 0))
    batched = ir.make_jaxpr(per_example)(params, x[:, None], y[:, None])
    print("\n# per-example gradients: vmap(grad(mlp_loss), in_axes=(None, 0, 0)), as extracted")
    print(batched)
    got = per_example(params, x[:, None], y[:, None])
    loop = [jit(grad(mlp_loss))(params, x[i:i + 1], y[i:i + 1]) for i in range(len(x))]
    worst = max(float(np.max(np.abs(g[i] - leaf)))
                for i, one in enumerate(loop) for g, leaf in zip(tree_leaves(got), tree_leaves(one), strict=True))
    print(f"# largest difference from a loop over the {len(x)} examples: {worst:.3g}")


def _run_for_real(program, leaves) -> None:
    """The gradient program as generated NumPy, and its time on each backend."""
    from eval.codegen import compile_numpy
    from eval.measure import measure
    from ir.errors import EqjaxError

    compiled = compile_numpy(program)
    print("\n# the gradient program compiled to NumPy (eval.compile_numpy), bit for bit the interpreter")
    print(compiled.source)
    for backend in ("interpreter", "numpy", "xla"):
        try:
            print(f"# {measure(program, *leaves, backend=backend, min_time=0.1).summary()}")
        except EqjaxError as e:  # the xla backend without the jax extra
            print(f"# {backend}: {e}")
