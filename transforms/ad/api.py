"""The AD API, with JAX's signatures: `grad`, `value_and_grad`, `jvp`, `vjp`, `jacfwd`, `jacrev`, `hessian`.

Each call traces the function once per input signature, builds the derivative program through the
e-graph (`transforms.ad.programs`) and evaluates it with NumPy. Called on tracers (inside
`ir.make_jaxpr`, `jit` or another transform) it replays the derivative program into the enclosing
trace instead, so transforms compose: `grad(grad(f))` differentiates the optimized gradient program,
`ir.make_jaxpr(grad(f))(x)` is the gradient program as extracted from the e-graph.

Every function takes the optimizer's knobs as keywords (`rules`, `cost`, `extractor`, `limits`), and JAX's
`has_aux`, `holomorphic` and `allow_int` where JAX has them, with JAX's meaning and dtype checks. `fun` may
be written with JAX, or be a program, ir or live JAX (see `ir.jax_convert`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
from rewrites.engine import Limits, Report
from transforms import backends, diskcache
from transforms.ad.build import differentiable
from transforms.ad.programs import GradTypeError, Options, grad_program, jvp_program, vjp_program


@dataclass
class Staged:
    """`fun` traced at some arguments: the program (closed-over tracers hoisted to leading inputs),
    the flat arguments to run it on, and the pytree structures."""

    closed: ClosedJaxpr
    flat_args: list
    n_hoisted: int
    in_tree: TreeDef
    out_tree: TreeDef
    arg_leaves: list[range]  # which flat inputs (after the hoisted ones) belong to each argument


def stage(fun: Callable, args: Sequence) -> Staged:
    leaves_per_arg = [tree_flatten(a)[0] for a in args]
    leaves, in_tree = tree_flatten(tuple(args))
    avals = [aval_of(x) for x in leaves]
    closed, out_tree = trace_to_jaxpr(fun, tree_unflatten(in_tree, avals))
    hoisted: list = []
    if any(is_tracer(c) for c in closed.consts):
        closed, hoisted = hoist_consts(closed)
    starts = np.cumsum([0, *(len(x) for x in leaves_per_arg)])
    ranges = [range(len(hoisted) + int(a), len(hoisted) + int(b)) for a, b in zip(starts[:-1], starts[1:], strict=True)]
    return Staged(closed, [*hoisted, *leaves], len(hoisted), in_tree, out_tree, ranges)


def run_program(program: ClosedJaxpr, flat_args: Sequence) -> list:
    """Run `program` with the reference interpreter, or replay it into the enclosing trace."""
    return backends.run(program, partial(eval_jaxpr, program), flat_args)


class ProgramCache:
    """A transform's programs by (transform key, input structure, avals), each with its runner on the
    transform's backend, and the traced function by input signature: a call at a signature seen
    before neither traces nor optimizes again (as `jit`)."""

    def __init__(self, backend: str = "numpy"):
        self.backend = backends.check_backend(backend)
        self.programs: dict[Any, tuple[ClosedJaxpr, Report]] = {}
        self.staged: dict[Any, Staged] = {}
        self._runners: dict[int, tuple[ClosedJaxpr, Callable]] = {}

    def stage(self, fun: Callable, args: Sequence) -> Staged:
        """`stage(fun, args)`, traced once per input signature unless it closes over an enclosing
        trace's values."""
        leaves, in_tree = tree_flatten(tuple(args))
        key = (in_tree, tuple(aval_of(x) for x in leaves))
        hit = self.staged.get(key)
        if hit is not None:
            return replace(hit, flat_args=leaves)
        staged = stage(fun, args)
        if not staged.n_hoisted:
            self.staged[key] = staged
        return staged

    def get(self, key, staged: Staged, build: Callable[[], tuple[ClosedJaxpr, Report]],
            on_disk: tuple[str, dict] | None = None):
        """The program `build()` makes for `staged`, built once per (key, signature); with `on_disk`
        (what is built, and the settings it is built with), also kept on disk across processes."""
        if staged.n_hoisted:  # closes over an enclosing trace's values: not reusable
            return build()
        full = (key, staged.in_tree, tuple(aval_of(x) for x in staged.flat_args))
        hit = self.programs.get(full)
        if hit is None:
            if on_disk is not None:
                hit = diskcache.cached(on_disk[0], staged.closed, on_disk[1], build)
            else:
                hit = build()
            self.programs[full] = hit
        return hit

    def run(self, program: ClosedJaxpr, flat_args: Sequence) -> list:
        """Run `program` on the backend (compiled once per program), or replay it into a trace."""
        entry = self._runners.get(id(program))
        if entry is None or entry[0] is not program:
            if any(is_tracer(x) for x in flat_args):
                return bind_jaxpr(program, *flat_args)
            entry = self._runners[id(program)] = (program, backends.runner(program, self.backend))
        return backends.run(program, entry[1], flat_args)


def _argnums(argnums: int | Sequence[int], n_args: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -n_args <= i < n_args:
            raise ValueError(f"argnums {i} is out of range for a function of {n_args} positional arguments")
    return tuple(i % n_args for i in nums)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False, *, rules="default", cost="flops",
                   extractor="greedy_dag", limits: Limits | None = None, backend: str = "numpy"):
    """`(f(*args), ∇f(*args))` for a scalar-valued `f`, the gradient with respect to `argnums` (an int
    gives that argument's gradient, a tuple a tuple of them). With `has_aux`, `f` returns `(out, aux)`
    and the result is `((out, aux), grad)`. As in JAX, `holomorphic=True` requires complex inputs and a
    complex output and gives f'(z) (the VJP with cotangent 1, not conjugated); `allow_int=True` accepts
    integer and boolean inputs, whose gradient is a float0-like zero (dtype bool, as `jvp` gives). Traced,
    differentiated and compiled once per input signature; the gradient program runs on `backend`."""
    options = Options(rules, for_backend(cost, backend), extractor, limits)
    cache = ProgramCache(backend)

    def value_and_grad_f(*args):
        staged = cache.stage(fun, args)
        nums = _argnums(argnums, len(args))
        leaves = [i for n in nums for i in staged.arg_leaves[n]]
        for i in leaves:  # inputs first, then the output, as JAX checks them
            _check_input_revderiv("grad", staged.closed.in_avals[i], holomorphic, allow_int)
        _check_scalar_output(staged, has_aux, holomorphic)
        wrt = [i for i in leaves if differentiable(staged.closed.in_avals[i])]
        n_out = staged.out_tree.num_leaves
        if holomorphic:
            results = _holomorphic_value_and_grad(cache, staged, wrt, options)
        else:
            program, _ = cache.get(nums, staged, lambda: grad_program(staged.closed, wrt, keep_outputs=True,
                                                                      options=options),
                                   on_disk=("value_and_grad", {"wrt": wrt, "options": options}))
            results = cache.run(program, staged.flat_args)
        value = tree_unflatten(staged.out_tree, results[:n_out])
        by_leaf = dict(zip(wrt, results[n_out:], strict=True))
        grads = []
        for n in nums:
            arg_leaves = [by_leaf[i] if i in by_leaf else np.zeros(staged.closed.in_avals[i].shape, bool)
                          for i in staged.arg_leaves[n]]
            grads.append(tree_unflatten(tree_flatten(args[n])[1], arg_leaves))
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        return value, g

    value_and_grad_f.__name__ = f"value_and_grad({getattr(fun, '__name__', 'fun')})"
    return value_and_grad_f


def _holomorphic_value_and_grad(cache: ProgramCache, staged: Staged, wrt: list[int], options: Options) -> list:
    """The outputs, then f'(z) per `wrt` input: the VJP program with the cotangent 1 on output 0."""
    program, _ = cache.get(("holomorphic", tuple(wrt)), staged, lambda: vjp_program(
        staged.closed, wrt, seed="inputs", cotangent_outputs=[0], options=options))
    outs = run_program(staged.closed, staged.flat_args)
    one = np.ones((), staged.closed.out_avals[0].dtype.numpy)
    return [*outs, *cache.run(program, [*staged.flat_args, one])]


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False, **options):
    """∇f with respect to `argnums` (see `value_and_grad`); with `has_aux`, returns `(grad, aux)`."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, **options)

    def grad_f(*args):
        value, g = vg(*args)
        return (g, value[1]) if has_aux else g

    grad_f.__name__ = f"grad({getattr(fun, '__name__', 'fun')})"
    return grad_f


def _check_input_revderiv(name: str, aval, holomorphic: bool, allow_int: bool) -> None:
    """JAX's input dtype check of reverse-mode derivatives (`jax._src.api._check_input_dtype_revderiv`)."""
    kind, dtype = aval.dtype.kind, aval.dtype.name
    if holomorphic and kind != "c":
        raise GradTypeError(f"{name} with holomorphic=True requires inputs with complex dtype, but got {dtype}.")
    if kind in ("i", "u", "b", "key") and not allow_int:
        raise GradTypeError(f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                            f"np.inexact), but got {dtype}. If you want to use Boolean- or integer-valued "
                            "inputs, use vjp or set allow_int to True.")


def _check_scalar_output(staged: Staged, has_aux: bool, holomorphic: bool = False) -> None:
    out_avals = staged.closed.out_avals
    tree = staged.out_tree
    if has_aux:
        if tree.kind not in ("tuple", "list") or len(tree.children) != 2:
            raise GradTypeError("has_aux=True requires the function to return a pair (out, aux)")
        if tree.children[0].num_leaves != 1:
            raise GradTypeError("grad requires a single scalar output (the first of the pair with has_aux)")
    elif tree.num_leaves != 1:
        raise GradTypeError(f"grad requires a scalar output, got a pytree of {tree.num_leaves} leaves")
    aval = out_avals[0]
    if aval.shape != ():
        raise GradTypeError(f"grad requires a scalar output; the output has shape {aval.shape}")
    _check_output_revderiv("grad", aval, holomorphic)


def _check_output_revderiv(name: str, aval, holomorphic: bool) -> None:
    """JAX's output dtype check of reverse-mode derivatives (`_check_output_dtype_revderiv`)."""
    kind, dtype = aval.dtype.kind, aval.dtype.name
    if holomorphic:
        if kind != "c":
            raise GradTypeError(f"{name} with holomorphic=True requires outputs with complex dtype, "
                                f"but got {dtype}.")
    elif kind == "c":
        raise GradTypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
                            f"np.floating), but got {dtype}. For holomorphic differentiation, pass "
                            "holomorphic=True. For differentiation of non-holomorphic functions involving "
                            "complex outputs, use jax.vjp directly.")
    elif kind != "f":
        raise GradTypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
                            f"np.floating), but got {dtype}. For differentiation of functions with integer "
                            "outputs, use jax.vjp directly.")


def jvp(fun: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False, *, rules="default",
        cost="flops", extractor="greedy_dag", limits: Limits | None = None, backend: str = "numpy"):
    """`(f(*primals), J f(primals) · tangents)`; tangents have the primals' structure and avals.
    Integer and boolean inputs take any tangent (ignored); their outputs' tangents are float0-like
    zeros of dtype bool, as JAX gives float0. With `has_aux`, `f` returns `(out, aux)` and the result is
    `(out, out_tangent, aux)`, as in JAX."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    staged = stage(fun, primals)
    t_leaves, t_tree = tree_flatten(tangents)
    if t_tree != staged.in_tree:
        raise TypeError(f"jvp: tangents have structure {t_tree}, primals {staged.in_tree}")
    in_avals = staged.closed.in_avals
    wrt = [i for i, a in enumerate(in_avals) if i >= staged.n_hoisted and differentiable(a)]
    program, _ = jvp_program(staged.closed, wrt, Options(rules, for_backend(cost, backend), extractor, limits))
    used = [t for t, a in zip(t_leaves, in_avals[staged.n_hoisted:], strict=True) if differentiable(a)]
    results = ProgramCache(backend).run(program, [*staged.flat_args, *used])
    n_out = staged.out_tree.num_leaves
    outs, it = results[:n_out], iter(results[n_out:])
    out_tangents = [next(it) if differentiable(a) else np.zeros(a.shape, bool) for a in staged.closed.out_avals]
    if has_aux:
        main, aux = _main_and_aux(staged)
        n_main = main.num_leaves
        return (tree_unflatten(main, outs[:n_main]), tree_unflatten(main, out_tangents[:n_main]),
                tree_unflatten(aux, outs[n_main:]))
    return tree_unflatten(staged.out_tree, outs), tree_unflatten(staged.out_tree, out_tangents)


def _main_and_aux(staged: Staged) -> tuple[TreeDef, TreeDef]:
    """With `has_aux`: the structures of the output and of the auxiliary data of `f`'s pair."""
    tree = staged.out_tree
    if tree.kind not in ("tuple", "list") or len(tree.children) != 2:
        raise TypeError(f"has_aux=True requires the function to return a pair (out, aux), got structure {tree}")
    return tree.children[0], tree.children[1]


def vjp(fun: Callable, *primals, has_aux: bool = False, rules="default", cost="flops",
        extractor="greedy_dag", limits: Limits | None = None, backend: str = "numpy"):
    """`(f(*primals), pullback)` where `pullback(cotangents)` gives one cotangent per primal (None
    inside it for integer leaves is not used: they get float0-like bool zeros, as JAX's float0)."""
    staged = stage(fun, primals)
    options = Options(rules, for_backend(cost, backend), extractor, limits)
    cache = ProgramCache(backend)
    out_avals = staged.closed.out_avals
    n_main = staged.out_tree.children[0].num_leaves if has_aux else staged.out_tree.num_leaves
    outs = run_program(staged.closed, staged.flat_args)
    wrt = [i for r in staged.arg_leaves for i in r if differentiable(staged.closed.in_avals[i])]
    program, _ = vjp_program(staged.closed, wrt, seed="inputs", cotangent_outputs=list(range(n_main)),
                             options=options)
    main_tree = staged.out_tree.children[0] if has_aux else staged.out_tree

    def pullback(cotangents):
        ct_leaves, ct_tree = tree_flatten(cotangents)
        if ct_tree != main_tree:
            raise TypeError(f"vjp: cotangents have structure {ct_tree}, outputs {main_tree}")
        cts = [c for c, a in zip(ct_leaves, out_avals[:n_main], strict=True) if differentiable(a)]
        results = iter(cache.run(program, [*staged.flat_args, *cts]))
        grads = [next(results) if differentiable(a) else np.zeros(a.shape, bool)
                 for a in staged.closed.in_avals[staged.n_hoisted:]]
        return tree_unflatten(staged.in_tree, grads)

    value = tree_unflatten(staged.out_tree, outs)
    return (value[0], pullback, value[1]) if has_aux else (value, pullback)
