"""Jacobians and Hessians, exact, as one program each: JAX's construction, through the e-graph.

`jacfwd_program` is vmap of the JVP program over a basis of tangents (one direction per element of the
differentiated inputs), `jacrev_program` vmap of the VJP program over a basis of output cotangents;
the batch of directions is one batched program (`transforms.batching`), so the primal program and
everything the directions share is computed once. The blocks are cut and reshaped into JAX's
layout: output shape + input shape. `hessian` is `jacfwd(jacrev(f))`, forward over reverse, as in JAX.
Built from both AD and batching, this module sits above both (neither imports the other).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

import ir.lax as lax
from ir.core import ClosedJaxpr, Jaxpr, ShapedArray
from ir.tracing import bind_jaxpr, trace_to_jaxpr
from ir.tree import tree_flatten, tree_unflatten
from rewrites.engine import Report
from rewrites.options import DEFAULT_OPTIONS, Options, merge_options
from transforms.ad.api import argnum_positions, check_input_revderiv, check_output_revderiv, main_and_aux
from transforms.ad.build import differentiable
from transforms.ad.programs import GradTypeError, jvp_program, vjp_program
from transforms.batching.programs import vmap_program
from transforms.staging import ProgramCache


def _float_outputs(closed: ClosedJaxpr) -> list[ShapedArray]:
    avals = [a.strip_weak() for a in closed.out_avals]
    bad = [j for j, a in enumerate(avals) if not differentiable(a)]
    if bad:
        raise GradTypeError(f"jacobians need float outputs; output {bad[0]} is {avals[bad[0]]}")
    return avals


def _float_inputs(closed: ClosedJaxpr, wrt: list[int], mode: str) -> list[ShapedArray]:
    avals = [closed.in_avals[i].strip_weak() for i in wrt]
    for i, a in zip(wrt, avals, strict=True):
        if not differentiable(a):
            raise GradTypeError(f"{mode}: input {i} is {a}, not float")
    return avals


def _basis(avals: list[ShapedArray]) -> list[np.ndarray]:
    """One-hot directions over the elements of `avals` together: for each aval, (N, *shape) where N is
    the total element count, row r the r-th element's direction."""
    n = sum(a.size for a in avals)
    out, start = [], 0
    for a in avals:
        eye = np.zeros((n, a.size), a.dtype.numpy)
        eye[start + np.arange(a.size), np.arange(a.size)] = 1
        out.append(eye.reshape((n, *a.shape)))
        start += a.size
    return out


def _block(x, axis: int, start: int, rows: ShapedArray, lead: tuple[int, ...], trail: tuple[int, ...]):
    """The rows [start, start + rows.size) of `x` along `axis`, reshaped to lead + trail."""
    limits = list(x.shape)
    limits[axis] = start + rows.size
    starts = [0] * len(x.shape)
    starts[axis] = start
    return lax.reshape(lax.slice(x, starts, limits), lead + trail)


def jacfwd_program(closed: ClosedJaxpr, wrt: list[int],
                   options: Options = DEFAULT_OPTIONS) -> tuple[ClosedJaxpr, Report]:
    """Outputs: for each output, for each `wrt` input, the block d out / d in of shape out.shape + in.shape."""
    outs, ins = _float_outputs(closed), _float_inputs(closed, wrt, "jacfwd")
    tangent, _ = jvp_program(closed, wrt, options)
    n_in, n_out = len(closed.in_avals), len(outs)
    basis = _basis(ins)
    batched, report = vmap_program(tangent, [None] * n_in + [0] * len(wrt), [None] * n_out + [-1] * n_out,
                                   len(basis[0]) if basis else 0, options)

    def jacobian(*primals):
        columns = bind_jaxpr(batched, *primals, *basis)[n_out:]  # out.shape + (N,)
        blocks = []
        for col, out in zip(columns, outs, strict=True):
            start = 0
            for a in ins:
                blocks.append(_block(col, out.ndim, start, a, out.shape, a.shape))
                start += a.size
        return blocks

    return trace_to_jaxpr(jacobian, closed.in_avals)[0], report


def jacrev_program(closed: ClosedJaxpr, wrt: list[int],
                   options: Options = DEFAULT_OPTIONS) -> tuple[ClosedJaxpr, Report]:
    """The same blocks as `jacfwd_program`, by vmap of the VJP program over the output elements."""
    outs, ins = _float_outputs(closed), _float_inputs(closed, wrt, "jacrev")
    pullback, _ = vjp_program(closed, wrt, seed="inputs", options=options)
    n_in = len(closed.in_avals)
    basis = _basis(outs)
    batched, report = vmap_program(pullback, [None] * n_in + [0] * len(outs), 0,
                                   len(basis[0]) if basis else 0, options)

    def jacobian(*primals):
        rows = bind_jaxpr(batched, *primals, *basis)  # (M, *in.shape) per wrt input
        blocks = []
        start = 0
        for out in outs:
            blocks += [_block(r, 0, start, out, out.shape, a.shape) for r, a in zip(rows, ins, strict=True)]
            start += out.size
        return blocks

    return trace_to_jaxpr(jacobian, closed.in_avals)[0], report


def hessian_program(closed: ClosedJaxpr, argnum: int = 0, options: Options = DEFAULT_OPTIONS) -> ClosedJaxpr:
    """d²f/dx² at input `argnum` for a scalar f: jacfwd of the jacrev program (forward over reverse)."""
    gradient, _ = jacrev_program(closed, [argnum], options)
    return jacfwd_program(gradient, [argnum], options)[0]


# --- API ------------------------------------------------------------------------------------------


def _jacobian(mode: str, fun: Callable, argnums: int | Sequence[int], cache: ProgramCache,
              has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False):
    build = jacfwd_program if mode == "jacfwd" else jacrev_program

    def jac_f(*args):
        staged = cache.trace(fun, args)
        nums = argnum_positions(argnums, len(args))
        out_tree, aux_tree = main_and_aux(staged) if has_aux else (staged.out_tree, None)
        leaves = [i for n in nums for i in staged.arg_leaves[n]]
        avals = staged.closed.in_avals
        _check_dtypes(mode, [avals[i] for i in leaves], staged.closed.out_avals[:out_tree.num_leaves],
                      holomorphic, allow_int)
        wrt = [i for i in leaves if differentiable(avals[i])]
        closed = _first_outputs(staged.closed, out_tree.num_leaves) if has_aux else staged.closed
        program, _ = cache.program((nums, has_aux), staged, lambda: build(closed, wrt, cache.options),
                                   on_disk=(mode, {"wrt": wrt, "has_aux": has_aux}))
        blocks = iter(cache.run(program, staged.flat_args))
        out_avals = closed.out_avals
        per_out = []
        for out in out_avals:
            per_arg = []
            for n in nums:
                arg_tree = tree_flatten(args[n])[1]
                # an integer input's block (allow_int) is a float0-like zero, dtype bool, as `grad` gives
                per_arg.append(tree_unflatten(arg_tree, [
                    next(blocks) if i in wrt else np.zeros(out.shape + avals[i].shape, bool)
                    for i in staged.arg_leaves[n]]))
            per_out.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
        jac = tree_unflatten(out_tree, per_out)
        if not has_aux:
            return jac
        aux = cache.run(staged.closed, staged.flat_args)[out_tree.num_leaves:]
        return jac, tree_unflatten(aux_tree, aux)

    jac_f.__name__ = f"{mode}({getattr(fun, '__name__', 'fun')})"
    return jac_f


def _first_outputs(closed: ClosedJaxpr, n: int) -> ClosedJaxpr:
    """`closed` computing only its first `n` outputs (the rest is dead code the optimizer drops)."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.outvars[:n], j.eqns), closed.consts)


def _check_dtypes(mode: str, in_avals: list[ShapedArray], out_avals: list[ShapedArray], holomorphic: bool,
                  allow_int: bool) -> None:
    """JAX's dtype checks of `jacfwd` (`_check_input_dtype_jacfwd`, `_check_output_dtype_jacfwd`) and of
    `jacrev` (the reverse-mode ones of `grad`)."""
    if mode == "jacrev":
        for a in in_avals:
            check_input_revderiv("jacrev", a, holomorphic, allow_int)
        for a in out_avals:
            check_output_revderiv("jacrev", a, holomorphic)
        return
    for a in in_avals:
        kind, dtype = a.dtype.kind, a.dtype.name
        if holomorphic and kind != "c":
            raise GradTypeError(f"jacfwd with holomorphic=True requires inputs with complex dtype, but got {dtype}.")
        if not holomorphic and kind != "f":
            raise GradTypeError(f"jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), "
                                f"but got {dtype}. For holomorphic differentiation, pass holomorphic=True. For "
                                "differentiation of non-holomorphic functions involving complex inputs or integer "
                                "inputs, use jax.jvp directly.")
    for a in out_avals:
        if holomorphic and a.dtype.kind != "c":
            raise GradTypeError(f"jacfwd with holomorphic=True requires outputs with complex dtype, "
                                f"but got {a.dtype.name}.")


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False, *,
           backend: str = "numpy", options: Options | None = None, **knobs):
    """The Jacobian by forward mode: for each output leaf, an array of shape out.shape + in.shape (a
    tuple of them for a tuple of argnums, a pytree of them for a pytree argument). Built and compiled
    once per input signature; runs on `backend`. As in JAX: with `has_aux`, `f` returns `(out, aux)` and
    the result is `(jacobian, aux)`; `holomorphic=True` requires complex inputs and outputs, and without
    it inputs must be real floats. The optimizer's knobs are `options` and/or its fields as keywords
    (`rewrites.options`)."""
    cache = ProgramCache(backend, merge_options("jacfwd", options, knobs))
    return _jacobian("jacfwd", fun, argnums, cache, has_aux, holomorphic)


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False, *, backend: str = "numpy", options: Options | None = None, **knobs):
    """The Jacobian by reverse mode (same layout as `jacfwd`); `has_aux`, `holomorphic` and `allow_int`
    (an integer input's block is a float0-like zero) as in JAX's `jacrev`."""
    cache = ProgramCache(backend, merge_options("jacrev", options, knobs))
    return _jacobian("jacrev", fun, argnums, cache, has_aux, holomorphic, allow_int)


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False,
            *, backend: str = "numpy", options: Options | None = None, **knobs):
    """`jacfwd(jacrev(f))`: for a scalar f of x, an array of shape x.shape + x.shape; with `has_aux`,
    `(hessian, aux)`, as in JAX. Both run on `backend` with the optimizer's knobs (`options`, keywords)."""
    merged = merge_options("hessian", options, knobs)
    inner = jacrev(fun, argnums, has_aux, holomorphic, backend=backend, options=merged)
    return jacfwd(inner, argnums, has_aux, holomorphic, backend=backend, options=merged)
