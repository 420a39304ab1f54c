"""Staging, written once for every transform (`jit`, `grad` and friends, the Jacobians, `vmap`): trace a
function per input signature, derive its program through the e-graph once per signature, keep programs on
disk, and run them on a backend, or replay them into the enclosing trace when called on tracers.

    programs = ProgramCache(backend, options)          # one per transformed function
    staged = programs.trace(fun, args)                 # traced once per (structure, avals, extra)
    program, report = programs.program(key, staged, derive, on_disk=("kind", settings))
    outs = programs.run(program, staged.flat_args)     # on the backend, or replayed into a trace

A function that closes over an enclosing trace's values (`grad(lambda w: f(w, x_tracer))`) is traced with
those values hoisted to leading inputs, and is neither kept in memory nor reused: its program is only good
inside that trace.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from eval.interpreter import eval_jaxpr
from ir.core import ClosedJaxpr
from ir.jax_convert import trace_to_jaxpr
from ir.tracing import aval_of, bind_jaxpr, hoist_consts, is_tracer
from ir.tree import TreeDef, tree_flatten, tree_unflatten
from rewrites.costs import for_backend
from rewrites.engine import Report
from rewrites.options import DEFAULT_OPTIONS, Options
from transforms import backends, diskcache


@dataclass
class Staged:
    """`fun` traced at some arguments: the program (closed-over tracers hoisted to leading inputs), the flat
    arguments to run it on, the pytree structures, and the signature the program depends on."""

    closed: ClosedJaxpr
    flat_args: list
    n_hoisted: int
    in_tree: TreeDef
    out_tree: TreeDef
    arg_leaves: list[range]  # which flat inputs (after the hoisted ones) belong to each argument
    signature: Hashable  # (input structure, avals, the caller's extra key): what tracing depended on


def trace(fun: Callable, args: Sequence, at: Sequence | None = None, extra: Hashable = ()) -> Staged:
    """`fun(*args)` traced at the avals of the leaves of `args`, or at `at` (one aval per leaf: `vmap` traces
    at the unbatched slices); `extra` is what else the trace depends on (static arguments, mapped axes)."""
    leaves_per_arg = [tree_flatten(a)[0] for a in args]
    leaves, in_tree = tree_flatten(tuple(args))
    avals = tuple(aval_of(x) for x in leaves)
    closed, out_tree = trace_to_jaxpr(fun, tree_unflatten(in_tree, list(avals if at is None else at)))
    hoisted: list = []
    if any(is_tracer(c) for c in closed.consts):
        closed, hoisted = hoist_consts(closed)
    starts = np.cumsum([0, *(len(x) for x in leaves_per_arg)])
    ranges = [range(len(hoisted) + int(a), len(hoisted) + int(b)) for a, b in zip(starts[:-1], starts[1:], strict=True)]
    return Staged(closed, [*hoisted, *leaves], len(hoisted), in_tree, out_tree, ranges, (in_tree, avals, extra))


def run_reference(program: ClosedJaxpr, flat_args: Sequence) -> list:
    """Run `program` with the reference interpreter, or replay it into the enclosing trace."""
    return backends.run(program, partial(eval_jaxpr, program), flat_args)


class ProgramCache:
    """One transformed function's traces by signature, its programs by (derivation key, signature), and a
    compiled runner per program on the transform's backend: a call at a signature seen before neither traces
    nor optimizes again. `options` are the optimizer's knobs the programs are derived with, the cost model
    resolved for the backend (`cost="latency"`: that backend's profile)."""

    def __init__(self, backend: str = "numpy", options: Options = DEFAULT_OPTIONS):
        self.backend = backends.check_backend(backend)
        self.options = replace(options, cost=for_backend(options.cost, self.backend))
        self.traced: dict[Any, Staged] = {}
        self.programs: dict[Any, tuple[ClosedJaxpr, Report]] = {}
        self._runners: dict[int, tuple[ClosedJaxpr, Callable]] = {}

    def trace(self, fun: Callable, args: Sequence, at: Sequence | None = None, extra: Hashable = ()) -> Staged:
        """`trace(fun, args, at, extra)`, once per signature unless it closes over an enclosing trace's values."""
        leaves, in_tree = tree_flatten(tuple(args))
        signature = (in_tree, tuple(aval_of(x) for x in leaves), extra)
        hit = self.traced.get(signature)
        if hit is not None:
            return replace(hit, flat_args=leaves)
        staged = trace(fun, args, at, extra)
        if not staged.n_hoisted:
            self.traced[signature] = staged
        return staged

    def program(self, key: Hashable, staged: Staged, derive: Callable[[], tuple[ClosedJaxpr, Report]],
                on_disk: tuple[str, dict] | None = None) -> tuple[ClosedJaxpr, Report]:
        """The program `derive()` makes from `staged`, derived once per (key, signature); with `on_disk` (the
        kind of program and the settings it is derived with besides the options), also kept on disk across
        processes (`transforms.diskcache`)."""
        full = (key, staged.signature)
        if not staged.n_hoisted and full in self.programs:
            return self.programs[full]
        if on_disk is not None:
            kind, settings = on_disk
            derived = diskcache.cached(kind, staged.closed, {**settings, "options": self.options}, derive)
        else:
            derived = derive()
        if not staged.n_hoisted:  # a program closing over an enclosing trace's values is good only there
            self.programs[full] = derived
        return derived

    def run(self, program: ClosedJaxpr, flat_args: Sequence) -> list:
        """Run `program` on the backend (compiled once per program), or replay it into the enclosing trace."""
        if any(is_tracer(x) for x in flat_args):
            return bind_jaxpr(program, *flat_args)
        entry = self._runners.get(id(program))
        if entry is None or entry[0] is not program:
            entry = self._runners[id(program)] = (program, backends.runner(program, self.backend))
        return list(entry[1](*flat_args))
