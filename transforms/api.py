"""`jit`: trace once per input signature, optimize through the e-graph, run the optimized program.

    f_fast = jit(f)                       # rules="default", cost="flops", extractor="greedy_dag"
    jit(f, rules="fast", cost="bytes")    # the optimizer's knobs (`rewrites.options.Options`), or options=Options(...)
    f_fast(x, y)                          # traced, saturated, extracted, compiled and cached for these avals
    f_fast.optimized(x, y)                # (ClosedJaxpr, Report) of that signature
    jit(f, backend="xla")                 # run it under XLA (the `jax` extra); "interpreter" for the reference
    jit(f, static_argnums=1)(x, 3)        # static arguments are passed to `f` as they are, part of the cache key
    jit(f_written_with_jax_numpy)         # traced by JAX and converted (`ir.jax_convert`); also a live
    jit(jax.make_jaxpr(f)(x))             # jax.core.ClosedJaxpr, or an ir.ClosedJaxpr: the list of its outputs
    ir.make_jaxpr(jit(f))(x)              # the optimized program, inlined into the enclosing trace

Tracing, the cache of programs by signature, the disk cache (`transforms.diskcache`: the same call in a new
process neither saturates nor extracts again) and running are `transforms.staging`'s.

The optimized program runs as generated NumPy by default (`eval.compile_numpy`, bit for bit the
interpreter's results); see `transforms.backends`. Called on tracers (inside `make_jaxpr` or another
transform) it traces `f`, optimizes the program and replays the optimized equations into the
enclosing trace, so transforms compose with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ir.core import ClosedJaxpr
from ir.jax_convert import as_function
from ir.tree import tree_unflatten
from rewrites.engine import Report, optimize
from rewrites.options import DEFAULT_OPTIONS, Options, merge_options
from transforms.staging import ProgramCache, Staged


class Jitted:
    """`fun` optimized once per input signature (see `jit`)."""

    def __init__(self, fun: Callable, backend: str = "numpy", static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = (), options: Options = DEFAULT_OPTIONS):
        self.fun = as_function(fun)
        self.static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        self.static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        self._programs = ProgramCache(backend, options)
        self.backend, self.options = self._programs.backend, self._programs.options
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

    def _stage(self, args: tuple, kwargs: dict) -> tuple[Staged, ClosedJaxpr, Report]:
        """These arguments' trace, optimized program and report (each made once per signature)."""
        dynamic, dyn_kwargs, static = self._split(args, kwargs)
        static_pos = {k: v for k, v in static if isinstance(k, int)}
        static_kw = {k: v for k, v in static if isinstance(k, str)}

        def call(dyn, kw):
            it = iter(dyn)
            full = [static_pos[i] if i in static_pos else next(it) for i in range(len(args))]
            return self.fun(*full, **kw, **static_kw)

        staged = self._programs.trace(call, (dynamic, dyn_kwargs), extra=static)
        program, report = self._programs.program((), staged, lambda: optimize(staged.closed, options=self.options),
                                                 on_disk=("jit", {}))
        return staged, program, report

    def __call__(self, *args, **kwargs):
        staged, program, _ = self._stage(args, kwargs)
        return tree_unflatten(staged.out_tree, self._programs.run(program, staged.flat_args))

    def optimized(self, *args, **kwargs) -> tuple[ClosedJaxpr, Report]:
        """The optimized program for these arguments' avals and the report of its optimization."""
        _, program, report = self._stage(args, kwargs)
        return program, report

    @property
    def cache_size(self) -> int:
        return len(self._programs.programs)


def jit(fun: Callable | None = None, *, backend: str = "numpy", static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), options: Options | None = None, **knobs):
    """Optimize `fun` through the e-graph, once per input signature (usable as a decorator); run the
    optimized program on `backend` ("numpy", "interpreter" or "xla"). The optimizer's knobs are `options`
    and/or its fields as keywords (`rules="default"`, `cost="flops"`, `extractor="greedy_dag"`, `limits`,
    `loops`: `rewrites.options`).

    As in `jax.jit`, the positional arguments at `static_argnums` (negative counts from the end) and the
    keyword arguments named in `static_argnames` are not traced: they are passed to `fun` as they are, must
    be hashable, and each value gets its own program. Other keyword arguments are traced. `fun` may be
    written with JAX, or be a program (see `ir.jax_convert`)."""
    merged = merge_options("jit", options, knobs)

    def make(f):
        return Jitted(f, backend, static_argnums, static_argnames, merged)

    return make if fun is None else make(fun)
