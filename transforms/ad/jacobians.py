"""Jacobians and Hessians, exact, as one program each: JAX's construction, through the e-graph.

`jacfwd_program` is vmap of the JVP program over a basis of tangents (one direction per element of the
differentiated inputs), `jacrev_program` vmap of the VJP program over a basis of output cotangents;
the batch of directions is one batched program (`transforms.batching`), so the primal program and
everything the directions share is computed once. The blocks are cut and reshaped into JAX's
layout: output shape + input shape. `hessian` is `jacfwd(jacrev(f))`, forward over reverse, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

import ir.lax as lax
from ir.core import ClosedJaxpr, ShapedArray
from ir.tracing import bind_jaxpr, trace_to_jaxpr
from rewrites.costs import for_backend
from rewrites.engine import Report
from transforms.ad.build import differentiable
from transforms.ad.programs import DEFAULT_OPTIONS, GradTypeError, Options, jvp_program, vjp_program


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
    from transforms.batching.programs import vmap_program

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
    from transforms.batching.programs import vmap_program

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


def _jacobian(mode: str, fun: Callable, argnums: int | Sequence[int], options: Options, backend: str):
    from ir.tree import tree_flatten, tree_unflatten
    from transforms.ad.api import ProgramCache, _argnums

    build = jacfwd_program if mode == "jacfwd" else jacrev_program
    cache = ProgramCache(backend)

    def jac_f(*args):
        staged = cache.stage(fun, args)
        nums = _argnums(argnums, len(args))
        wrt = [i for n in nums for i in staged.arg_leaves[n]]
        program, _ = cache.get(nums, staged, lambda: build(staged.closed, wrt, options),
                               on_disk=(mode, {"wrt": wrt, "options": options}))
        blocks = iter(cache.run(program, staged.flat_args))
        per_out = []
        for _ in range(staged.out_tree.num_leaves):
            per_arg = []
            for n in nums:
                arg_tree = tree_flatten(args[n])[1]
                per_arg.append(tree_unflatten(arg_tree, [next(blocks) for _ in staged.arg_leaves[n]]))
            per_out.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
        return tree_unflatten(staged.out_tree, per_out)

    jac_f.__name__ = f"{mode}({getattr(fun, '__name__', 'fun')})"
    return jac_f


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, *, rules="default", cost="flops",
           extractor="greedy_dag", limits=None, backend: str = "numpy"):
    """The Jacobian by forward mode: for each output leaf, an array of shape out.shape + in.shape (a
    tuple of them for a tuple of argnums, a pytree of them for a pytree argument). Built and compiled
    once per input signature; runs on `backend`."""
    return _jacobian("jacfwd", fun, argnums, Options(rules, for_backend(cost, backend), extractor, limits), backend)


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, *, rules="default", cost="flops",
           extractor="greedy_dag", limits=None, backend: str = "numpy"):
    """The Jacobian by reverse mode (same layout as `jacfwd`)."""
    return _jacobian("jacrev", fun, argnums, Options(rules, for_backend(cost, backend), extractor, limits), backend)


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, **options):
    """`jacfwd(jacrev(f))`: for a scalar f of x, an array of shape x.shape + x.shape."""
    return jacfwd(jacrev(fun, argnums, **options), argnums, **options)
