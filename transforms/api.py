"""`jit`: trace once per input signature, optimize through the e-graph, evaluate with NumPy.

    f_fast = jit(f)                       # rules="default", cost="flops", extractor="greedy_dag"
    f_fast(x, y)                          # traced, saturated, extracted and cached for these avals
    f_fast.optimized(x, y)                # (ClosedJaxpr, Report) of that signature
    ir.make_jaxpr(jit(f))(x)              # the optimized program, inlined into the enclosing trace

Called on tracers (inside `make_jaxpr` or another transform) it traces `f`, optimizes the program and
replays the optimized equations into the enclosing trace, so transforms compose with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from eval.interpreter import eval_jaxpr
from ir.core import ClosedJaxpr
from ir.tracing import aval_of, bind_jaxpr, hoist_consts, is_tracer, trace_to_jaxpr
from ir.tree import tree_flatten, tree_unflatten
from rewrites.engine import Limits, Report, optimize


class Jitted:
    def __init__(self, fun: Callable, rules="default", cost="flops", extractor="greedy_dag",
                 limits: Limits | None = None):
        self.fun, self.rules, self.cost, self.extractor, self.limits = fun, rules, cost, extractor, limits
        self._cache: dict[Any, tuple[ClosedJaxpr, Any, Report]] = {}
        self.__name__ = f"jit({getattr(fun, '__name__', 'fun')})"
        self.__wrapped__ = fun

    def _compile(self, args: tuple) -> tuple[ClosedJaxpr, Any, Report, list]:
        leaves, in_tree = tree_flatten(args)
        avals = [aval_of(x) for x in leaves]
        key = (in_tree, tuple(avals))
        hit = self._cache.get(key)
        if hit is not None:
            return (*hit, leaves)
        closed, out_tree = trace_to_jaxpr(self.fun, tree_unflatten(in_tree, avals))
        closed, consts = _close_over_arrays(closed)
        optimized, report = optimize(closed, rules=self.rules, cost=self.cost, extractor=self.extractor,
                                     limits=self.limits)
        if not consts:  # a program closing over an enclosing trace's values is not reusable
            self._cache[key] = (optimized, out_tree, report)
        return optimized, out_tree, report, [*consts, *leaves]

    def __call__(self, *args):
        closed, out_tree, _, flat = self._compile(args)
        if any(is_tracer(x) for x in flat):
            return tree_unflatten(out_tree, bind_jaxpr(closed, *flat))
        return tree_unflatten(out_tree, eval_jaxpr(closed, *[np.asarray(x) for x in flat]))

    def optimized(self, *args) -> tuple[ClosedJaxpr, Report]:
        """The optimized program for these arguments' avals and the report of its optimization."""
        closed, _, report, _ = self._compile(args)
        return closed, report

    @property
    def cache_size(self) -> int:
        return len(self._cache)


def _close_over_arrays(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """Constants that are tracers of an enclosing trace become leading inputs (returned as `consts`)."""
    if not any(is_tracer(c) for c in closed.consts):
        return closed, []
    return hoist_consts(closed)


def jit(fun: Callable | None = None, *, rules="default", cost="flops", extractor="greedy_dag",
        limits: Limits | None = None):
    """Optimize `fun` through the e-graph, once per input signature (usable as a decorator)."""
    if fun is None:
        return lambda f: Jitted(f, rules, cost, extractor, limits)
    return Jitted(fun, rules, cost, extractor, limits)
