"""The backends a program runs on, and how a program becomes a function of its flat inputs on one.

| backend       | runs the program with                                                            |
|---------------|----------------------------------------------------------------------------------|
| `numpy`       | generated straight-line NumPy (`eval.compile_numpy`), bit for bit the interpreter  |
| `interpreter` | the reference interpreter (`eval.interpreter.eval_jaxpr`)                          |
| `xla`         | `jax.jit` of the program rebuilt from JAX's primitives (`eval.xla.to_jax`, the `jax` extra) |

A runner returns the program's outputs as a list; the xla runner returns JAX arrays, which compute
asynchronously (`block` waits for them).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from eval.codegen import compile_numpy
from ir.core import ClosedJaxpr

BACKENDS = ("numpy", "interpreter", "xla")


def check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
    return backend


def runner(program: ClosedJaxpr, backend: str) -> Callable[..., list]:
    """`program` as a function of its flat inputs on `backend`."""
    check_backend(backend)
    if backend == "numpy":
        return compile_numpy(program)
    if backend == "interpreter":
        from eval.interpreter import eval_jaxpr
        return partial(eval_jaxpr, program)
    from eval.xla import to_jax  # raises a typed error naming the `jax` extra when JAX is missing

    rebuilt = to_jax(program)
    import jax
    return jax.jit(rebuilt)


def block(outputs):
    """Wait until the outputs are computed (JAX dispatches asynchronously; NumPy is done already)."""
    if any(type(x).__module__.startswith("jax") for x in outputs):
        import jax
        jax.block_until_ready(outputs)
    return outputs
