"""Running a transform's program: on its backend (`eval.backends`), or replayed into the enclosing
trace when it is called on tracers (inside `ir.make_jaxpr` or another transform)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from eval.backends import BACKENDS, check_backend, runner
from ir.core import ClosedJaxpr
from ir.tracing import bind_jaxpr, is_tracer

__all__ = ["BACKENDS", "check_backend", "run", "runner"]


def run(program: ClosedJaxpr, run_fn: Callable[..., list], flat_args: Sequence) -> list:
    """Run on arrays, or replay into the enclosing trace when an argument is a tracer."""
    if any(is_tracer(x) for x in flat_args):
        return bind_jaxpr(program, *flat_args)
    return list(run_fn(*flat_args))
