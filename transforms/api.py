"""`jit`: trace once per input signature, optimize through the e-graph, run the optimized program.

    f_fast = jit(f)                       # rules="default", cost="flops", extractor="greedy_dag"
    f_fast(x, y)                          # traced, saturated, extracted, compiled and cached for these avals
    f_fast.optimized(x, y)                # (ClosedJaxpr, Report) of that signature
    jit(f, backend="xla")                 # run it under XLA (the `jax` extra); "interpreter" for the reference
    ir.make_jaxpr(jit(f))(x)              # the optimized program, inlined into the enclosing trace

Optimized programs are also kept on disk (`transforms.diskcache`), so the same call in a new process
neither saturates nor extracts again.

The optimized program runs as generated NumPy by default (`eval.compile_numpy`, bit for bit the
interpreter's results); see `transforms.backends`. Called on tracers (inside `make_jaxpr` or another
transform) it traces `f`, optimizes the program and replays the optimized equations into the
enclosing trace, so transforms compose with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ir.core import ClosedJaxpr
from ir.tracing import aval_of, hoist_consts, is_tracer, trace_to_jaxpr
from ir.tree import TreeDef, tree_flatten, tree_unflatten
from rewrites.costs import for_backend
from rewrites.engine import Limits, Report, optimize
from transforms import backends, diskcache


@dataclass
class Compiled:
    """One signature's optimized program, its output structure, its report and its runner."""

    program: ClosedJaxpr
    out_tree: TreeDef
    report: Report
    run: Callable[..., list]


class Jitted:
    def __init__(self, fun: Callable, rules="default", cost="flops", extractor="greedy_dag",
                 limits: Limits | None = None, backend: str = "numpy"):
        self.fun, self.rules, self.cost, self.extractor, self.limits = fun, rules, cost, extractor, limits
        self.backend = backends.check_backend(backend)
        self.cost = for_backend(cost, self.backend)  # "latency": the profile of this backend
        self._cache: dict[Any, Compiled] = {}
        self.__name__ = f"jit({getattr(fun, '__name__', 'fun')})"
        self.__wrapped__ = fun

    def _compile(self, args: tuple) -> tuple[Compiled, list]:
        leaves, in_tree = tree_flatten(args)
        key = (in_tree, tuple(aval_of(x) for x in leaves))
        hit = self._cache.get(key)
        if hit is not None:
            return hit, leaves
        closed, out_tree = trace_to_jaxpr(self.fun, tree_unflatten(in_tree, list(key[1])))
        closed, consts = _close_over_arrays(closed)
        settings = {"rules": self.rules, "cost": self.cost, "extractor": self.extractor, "limits": self.limits}
        optimized, report = diskcache.cached("jit", closed, settings, lambda: optimize(closed, **settings))
        if consts:  # closes over an enclosing trace's values (so it is replayed there): not reusable
            return Compiled(optimized, out_tree, report, backends.runner(optimized, "interpreter")), [*consts, *leaves]
        compiled = self._cache[key] = Compiled(optimized, out_tree, report,
                                               backends.runner(optimized, self.backend))
        return compiled, leaves

    def __call__(self, *args):
        compiled, flat = self._compile(args)
        return tree_unflatten(compiled.out_tree, backends.run(compiled.program, compiled.run, flat))

    def optimized(self, *args) -> tuple[ClosedJaxpr, Report]:
        """The optimized program for these arguments' avals and the report of its optimization."""
        compiled, _ = self._compile(args)
        return compiled.program, compiled.report

    @property
    def cache_size(self) -> int:
        return len(self._cache)


def _close_over_arrays(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """Constants that are tracers of an enclosing trace become leading inputs (returned as `consts`)."""
    if not any(is_tracer(c) for c in closed.consts):
        return closed, []
    return hoist_consts(closed)


def jit(fun: Callable | None = None, *, rules="default", cost="flops", extractor="greedy_dag",
        limits: Limits | None = None, backend: str = "numpy"):
    """Optimize `fun` through the e-graph, once per input signature (usable as a decorator); run the
    optimized program on `backend` ("numpy", "interpreter" or "xla")."""
    if fun is None:
        return lambda f: Jitted(f, rules, cost, extractor, limits, backend)
    return Jitted(fun, rules, cost, extractor, limits, backend)
