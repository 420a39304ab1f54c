"""`jit`: trace once per input signature, optimize through the e-graph, run the optimized program.

    f_fast = jit(f)                       # rules="default", cost="flops", extractor="greedy_dag"
    f_fast(x, y)                          # traced, saturated, extracted, compiled and cached for these avals
    f_fast.optimized(x, y)                # (ClosedJaxpr, Report) of that signature
    jit(f, backend="xla")                 # run it under XLA (the `jax` extra); "interpreter" for the reference
    jit(f, static_argnums=1)(x, 3)        # static arguments are passed to `f` as they are, part of the cache key
    jit(f_written_with_jax_numpy)         # traced by JAX and converted (`ir.jax_convert`); also a live
    jit(jax.make_jaxpr(f)(x))             # jax.core.ClosedJaxpr, or an ir.ClosedJaxpr: the list of its outputs
    ir.make_jaxpr(jit(f))(x)              # the optimized program, inlined into the enclosing trace

Optimized programs are also kept on disk (`transforms.diskcache`), so the same call in a new process
neither saturates nor extracts again.

The optimized program runs as generated NumPy by default (`eval.compile_numpy`, bit for bit the
interpreter's results); see `transforms.backends`. Called on tracers (inside `make_jaxpr` or another
transform) it traces `f`, optimizes the program and replays the optimized equations into the
enclosing trace, so transforms compose with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ir.core import ClosedJaxpr
from ir.jax_convert import as_function, trace_to_jaxpr
from ir.tracing import aval_of, hoist_consts, is_tracer
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
                 limits: Limits | None = None, backend: str = "numpy", static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = ()):
        self.fun, self.rules, self.cost, self.extractor, self.limits = as_function(fun), rules, cost, extractor, limits
        self.static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        self.static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        self.backend = backends.check_backend(backend)
        self.cost = for_backend(cost, self.backend)  # "latency": the profile of this backend
        self._cache: dict[Any, Compiled] = {}
        self.__name__ = f"jit({getattr(fun, '__name__', 'fun')})"
        self.__wrapped__ = fun

    def _split(self, args: tuple, kwargs: dict) -> tuple[tuple, dict, tuple]:
        """The traced arguments (positional, keyword) and the static ones, as a hashable cache key."""
        n = len(args)
        nums = set()
        for i in self.static_argnums:
            if not -n <= i < n:
                raise ValueError(f"jitted function has static_argnums={self.static_argnums} but was called with "
                                 f"only {n} positional arguments")
            nums.add(i % n)
        static = tuple((i, args[i]) for i in sorted(nums)) + tuple(
            sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames))
        for where, value in static:
            try:
                hash(value)
            except TypeError:
                raise ValueError(f"non-hashable static argument {where!r} of type {type(value).__name__}: static "
                                 "arguments must be hashable, as in jax.jit") from None
        dynamic = tuple(a for i, a in enumerate(args) if i not in nums)
        return dynamic, {k: v for k, v in kwargs.items() if k not in self.static_argnames}, static

    def _compile(self, args: tuple, kwargs: dict | None = None) -> tuple[Compiled, list]:
        dynamic, dyn_kwargs, static = self._split(args, kwargs or {})
        leaves, in_tree = tree_flatten((dynamic, dyn_kwargs))
        key = (in_tree, tuple(aval_of(x) for x in leaves), static)
        hit = self._cache.get(key)
        if hit is not None:
            return hit, leaves
        static_pos = {k: v for k, v in static if isinstance(k, int)}
        static_kw = {k: v for k, v in static if isinstance(k, str)}

        def call(dyn, kw):
            it = iter(dyn)
            full = [static_pos[i] if i in static_pos else next(it) for i in range(len(args))]
            return self.fun(*full, **kw, **static_kw)

        closed, out_tree = trace_to_jaxpr(call, tree_unflatten(in_tree, list(key[1])))
        closed, consts = _close_over_arrays(closed)
        settings = {"rules": self.rules, "cost": self.cost, "extractor": self.extractor, "limits": self.limits}
        optimized, report = diskcache.cached("jit", closed, settings, lambda: optimize(closed, **settings))
        if consts:  # closes over an enclosing trace's values (so it is replayed there): not reusable
            return Compiled(optimized, out_tree, report, backends.runner(optimized, "interpreter")), [*consts, *leaves]
        compiled = self._cache[key] = Compiled(optimized, out_tree, report,
                                               backends.runner(optimized, self.backend))
        return compiled, leaves

    def __call__(self, *args, **kwargs):
        compiled, flat = self._compile(args, kwargs)
        return tree_unflatten(compiled.out_tree, backends.run(compiled.program, compiled.run, flat))

    def optimized(self, *args, **kwargs) -> tuple[ClosedJaxpr, Report]:
        """The optimized program for these arguments' avals and the report of its optimization."""
        compiled, _ = self._compile(args, kwargs)
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
        limits: Limits | None = None, backend: str = "numpy", static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()):
    """Optimize `fun` through the e-graph, once per input signature (usable as a decorator); run the
    optimized program on `backend` ("numpy", "interpreter" or "xla").

    As in `jax.jit`, the positional arguments at `static_argnums` (negative counts from the end) and the
    keyword arguments named in `static_argnames` are not traced: they are passed to `fun` as they are, must
    be hashable, and each value gets its own program. Other keyword arguments are traced. `fun` may be
    written with JAX, or be a program (see `ir.jax_convert`)."""
    def make(f):
        return Jitted(f, rules, cost, extractor, limits, backend, static_argnums, static_argnames)

    return make if fun is None else make(fun)
