"""The backends a transformed program runs on, and how a program becomes a callable on one of them.

| backend       | runs the program with                                  |
|---------------|--------------------------------------------------------|
| `numpy`       | generated straight-line NumPy (`eval.compile_numpy`), the default |
| `interpreter` | the reference interpreter (`eval.interpreter.eval_jaxpr`)        |
| `xla`         | `jax.jit` of the program rebuilt from JAX's primitives (`eval.xla.to_jax`, the `jax` extra) |

A runner takes the program's flat inputs and returns its flat outputs as a list. Called on tracers
(inside `ir.make_jaxpr` or another transform), a program is replayed into the enclosing trace instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from ir.core import ClosedJaxpr
from ir.tracing import bind_jaxpr, is_tracer

BACKENDS = ("numpy", "interpreter", "xla")


def check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
    return backend


def runner(program: ClosedJaxpr, backend: str) -> Callable[..., list]:
    """`program` as a function of its flat inputs on `backend`."""
    if backend == "numpy":
        from eval.codegen import compile_numpy
        return compile_numpy(program)
    if backend == "interpreter":
        from eval.interpreter import eval_jaxpr
        return partial(eval_jaxpr, program)
    from eval.xla import to_jax  # raises a typed error naming the `jax` extra when JAX is missing

    rebuilt = to_jax(program)
    import jax
    return jax.jit(rebuilt)


def run(program: ClosedJaxpr, run_fn: Callable[..., list], flat_args: Sequence) -> list:
    """Run on arrays, or replay into the enclosing trace when an argument is a tracer."""
    if any(is_tracer(x) for x in flat_args):
        return bind_jaxpr(program, *flat_args)
    return list(run_fn(*flat_args))


def as_arrays(flat_args: Sequence) -> list[np.ndarray]:
    return [np.asarray(x) for x in flat_args]
