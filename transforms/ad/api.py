"""The AD API, with JAX's signatures: `grad`, `value_and_grad`, `jvp`, `vjp` (the Jacobians, which batch
derivative programs, are `transforms.jacobians`).

Each call traces the function once per input signature, builds the derivative program through the
e-graph (`transforms.ad.programs`) and evaluates it with NumPy (`transforms.staging`). Called on tracers
(inside `ir.make_jaxpr`, `jit` or another transform) it replays the derivative program into the enclosing
trace instead, so transforms compose: `grad(grad(f))` differentiates the optimized gradient program,
`ir.make_jaxpr(grad(f))(x)` is the gradient program as extracted from the e-graph.

Every function takes the optimizer's knobs as `options=` and/or keywords (`rules`, `cost`, `extractor`,
`limits`, `loops`: `rewrites.options`), the `backend` its programs run on, and JAX's `has_aux`, `holomorphic`
and `allow_int` where JAX has them, with JAX's meaning and dtype checks. `fun` may be written with JAX, or
be a program, ir or live JAX (see `ir.jax_convert`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ir.tree import TreeDef, tree_flatten, tree_unflatten
from rewrites.options import Options, merge_options
from transforms.ad.build import differentiable
from transforms.ad.programs import GradTypeError, grad_program, jvp_program, vjp_program
from transforms.staging import ProgramCache, Staged, run_reference


def argnum_positions(argnums: int | Sequence[int], n_args: int) -> tuple[int, ...]:
    """`argnums` (an int or ints, negative ones counted from the end) as positions in 0..n_args-1."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -n_args <= i < n_args:
            raise ValueError(f"argnums {i} is out of range for a function of {n_args} positional arguments")
    return tuple(i % n_args for i in nums)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False, *, backend: str = "numpy",
                   options: Options | None = None, **knobs):
    """`(f(*args), ∇f(*args))` for a scalar-valued `f`, the gradient with respect to `argnums` (an int
    gives that argument's gradient, a tuple a tuple of them). With `has_aux`, `f` returns `(out, aux)`
    and the result is `((out, aux), grad)`. As in JAX, `holomorphic=True` requires complex inputs and a
    complex output and gives f'(z) (the VJP with cotangent 1, not conjugated); `allow_int=True` accepts
    integer and boolean inputs, whose gradient is a float0-like zero (dtype bool, as `jvp` gives). Traced,
    differentiated and compiled once per input signature; the gradient program runs on `backend`."""
    cache = ProgramCache(backend, merge_options("value_and_grad", options, knobs))

    def value_and_grad_f(*args):
        staged = cache.trace(fun, args)
        nums = argnum_positions(argnums, len(args))
        leaves = [i for n in nums for i in staged.arg_leaves[n]]
        for i in leaves:  # inputs first, then the output, as JAX checks them
            check_input_revderiv("grad", staged.closed.in_avals[i], holomorphic, allow_int)
        _check_scalar_output(staged, has_aux, holomorphic)
        wrt = [i for i in leaves if differentiable(staged.closed.in_avals[i])]
        n_out = staged.out_tree.num_leaves
        if holomorphic:
            results = _holomorphic_value_and_grad(cache, staged, wrt)
        else:
            program, _ = cache.program(nums, staged, lambda: grad_program(staged.closed, wrt, keep_outputs=True,
                                                                          options=cache.options),
                                       on_disk=("value_and_grad", {"wrt": wrt}))
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


def _holomorphic_value_and_grad(cache: ProgramCache, staged: Staged, wrt: list[int]) -> list:
    """The outputs, then f'(z) per `wrt` input: the VJP program with the cotangent 1 on output 0."""
    program, _ = cache.program(("holomorphic", tuple(wrt)), staged, lambda: vjp_program(
        staged.closed, wrt, seed="inputs", cotangent_outputs=[0], options=cache.options))
    outs = run_reference(staged.closed, staged.flat_args)
    one = np.ones((), staged.closed.out_avals[0].dtype.numpy)
    return [*outs, *cache.run(program, [*staged.flat_args, one])]


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False, *, backend: str = "numpy", options: Options | None = None, **knobs):
    """∇f with respect to `argnums` (see `value_and_grad`); with `has_aux`, returns `(grad, aux)`."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, backend=backend,
                        options=merge_options("grad", options, knobs))

    def grad_f(*args):
        value, g = vg(*args)
        return (g, value[1]) if has_aux else g

    grad_f.__name__ = f"grad({getattr(fun, '__name__', 'fun')})"
    return grad_f


def check_input_revderiv(name: str, aval, holomorphic: bool, allow_int: bool) -> None:
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
    check_output_revderiv("grad", aval, holomorphic)


def check_output_revderiv(name: str, aval, holomorphic: bool) -> None:
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


def jvp(fun: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False, *, backend: str = "numpy",
        options: Options | None = None, **knobs):
    """`(f(*primals), J f(primals) · tangents)`; tangents have the primals' structure and avals.
    Integer and boolean inputs take any tangent (ignored); their outputs' tangents are float0-like
    zeros of dtype bool, as JAX gives float0. With `has_aux`, `f` returns `(out, aux)` and the result is
    `(out, out_tangent, aux)`, as in JAX."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    cache = ProgramCache(backend, merge_options("jvp", options, knobs))
    staged = cache.trace(fun, primals)
    t_leaves, t_tree = tree_flatten(tangents)
    if t_tree != staged.in_tree:
        raise TypeError(f"jvp: tangents have structure {t_tree}, primals {staged.in_tree}")
    in_avals = staged.closed.in_avals
    wrt = [i for i, a in enumerate(in_avals) if i >= staged.n_hoisted and differentiable(a)]
    program, _ = cache.program((), staged, lambda: jvp_program(staged.closed, wrt, cache.options))
    used = [t for t, a in zip(t_leaves, in_avals[staged.n_hoisted:], strict=True) if differentiable(a)]
    results = cache.run(program, [*staged.flat_args, *used])
    n_out = staged.out_tree.num_leaves
    outs, it = results[:n_out], iter(results[n_out:])
    out_tangents = [next(it) if differentiable(a) else np.zeros(a.shape, bool) for a in staged.closed.out_avals]
    if has_aux:
        main, aux = main_and_aux(staged)
        n_main = main.num_leaves
        return (tree_unflatten(main, outs[:n_main]), tree_unflatten(main, out_tangents[:n_main]),
                tree_unflatten(aux, outs[n_main:]))
    return tree_unflatten(staged.out_tree, outs), tree_unflatten(staged.out_tree, out_tangents)


def main_and_aux(staged: Staged) -> tuple[TreeDef, TreeDef]:
    """With `has_aux`: the structures of the output and of the auxiliary data of `f`'s pair."""
    tree = staged.out_tree
    if tree.kind not in ("tuple", "list") or len(tree.children) != 2:
        raise TypeError(f"has_aux=True requires the function to return a pair (out, aux), got structure {tree}")
    return tree.children[0], tree.children[1]


def vjp(fun: Callable, *primals, has_aux: bool = False, backend: str = "numpy", options: Options | None = None,
        **knobs):
    """`(f(*primals), pullback)` where `pullback(cotangents)` gives one cotangent per primal (None
    inside it for integer leaves is not used: they get float0-like bool zeros, as JAX's float0)."""
    cache = ProgramCache(backend, merge_options("vjp", options, knobs))
    staged = cache.trace(fun, primals)
    out_avals = staged.closed.out_avals
    n_main = staged.out_tree.children[0].num_leaves if has_aux else staged.out_tree.num_leaves
    outs = run_reference(staged.closed, staged.flat_args)
    wrt = [i for r in staged.arg_leaves for i in r if differentiable(staged.closed.in_avals[i])]
    program, _ = cache.program((), staged, lambda: vjp_program(staged.closed, wrt, seed="inputs",
                                                               cotangent_outputs=list(range(n_main)),
                                                               options=cache.options))
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
