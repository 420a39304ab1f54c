"""Jacobians and Hessians, exact, as one program each.

`jacfwd_program` seeds one forward direction per element of the differentiated inputs (a one-hot
constant tangent), `jacrev_program` one reverse direction per element of the outputs; all
directions live in one e-graph, so the primal program and everything the directions share is built
and simplified once. The blocks are assembled with reshape and concatenate into JAX's layout:
output shape + input shape. `hessian` is `jacfwd(jacrev(f))`, forward over reverse, as in JAX.
(Batching the directions with vmap instead of unrolling them belongs to the vmap rules.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ir.core import ClosedJaxpr, ShapedArray, Var
from rewrites.encode import Loader, egg_args, egg_call, egg_int, egg_ints, egg_str
from rewrites.engine import Report
from transforms.ad.build import Builder, differentiable, flat_program
from transforms.ad.programs import DEFAULT_OPTIONS, GradTypeError, Options, _optimize, _Outputs
from transforms.ad.terms import declare_ad_terms


def _one_hots(enc, loader: Loader, aval: ShapedArray) -> list:
    """One constant per element of `aval`: that element 1, the rest 0."""
    terms = []
    for k in range(aval.size):
        basis = np.zeros(aval.size, aval.dtype.numpy)
        basis[k] = 1
        term = egg_call("const", egg_int(enc.add_const(basis.reshape(aval.shape), aval)))
        loader.facts(term, aval)
        terms.append(term)
    return terms


def _stack(builder: Builder, blocks: list, block_aval: ShapedArray, lead: tuple[int, ...], trail: tuple[int, ...],
           axis_last: bool):
    """Blocks (one per direction, each `block_aval`, None = zero) stacked into shape lead + trail: along a
    new last axis (forward: directions are input elements) or a new first axis (reverse: output elements)."""
    enc = builder.enc
    step = block_aval.shape + (1,) if axis_last else (1,) + block_aval.shape
    step_aval = ShapedArray(step, block_aval.dtype)
    pieces = []
    for b in blocks:
        b = b if b is not None else builder.zero(block_aval)
        pieces.append(builder.bind(egg_call("p_reshape", b, egg_ints(step), egg_str("")), step_aval))
    axis = len(block_aval.shape) if axis_last else 0
    joined_shape = list(step)
    joined_shape[axis] = len(blocks)
    key = enc.extra_key("concatenate", {"dimension": axis})
    joined = builder.bind(egg_call("apply", egg_str("concatenate"), egg_str(key), egg_args(pieces)),
                          ShapedArray(tuple(joined_shape), block_aval.dtype))
    return egg_call("p_reshape", joined, egg_ints(lead + trail), egg_str(""))


def _float_outputs(jaxpr) -> list[int]:
    outs = list(range(len(jaxpr.outvars)))
    bad = [j for j in outs if not differentiable(jaxpr.outvars[j].aval)]
    if bad:
        raise GradTypeError(f"jacobians need float outputs; output {bad[0]} is {jaxpr.outvars[bad[0]].aval}")
    return outs


def jacfwd_program(closed: ClosedJaxpr, wrt: list[int],
                   options: Options = DEFAULT_OPTIONS) -> tuple[ClosedJaxpr, Report]:
    """Outputs: for each output, for each `wrt` input, the block d out / d in of shape out.shape + in.shape."""
    flat = flat_program(closed, "jvp")
    jaxpr = flat.jaxpr
    outs = _float_outputs(jaxpr)

    def extend(egraph, enc, env):
        declare_ad_terms(egraph)
        loader = Loader(egraph, enc)
        builder = Builder(loader, env)
        directions = []  # (wrt position, tangents of every value)
        for p, i in enumerate(wrt):
            v = jaxpr.invars[i]
            for onehot in _one_hots(enc, loader, v.aval):
                directions.append((p, builder.forward(jaxpr, {id(v): onehot})))
        result = _Outputs(builder)
        for j in outs:
            x = jaxpr.outvars[j]
            for p, i in enumerate(wrt):
                blocks = [tangents.get(id(x)) if isinstance(x, Var) else None for q, tangents in directions if q == p]
                in_aval = jaxpr.invars[i].aval
                block_aval = ShapedArray(x.aval.shape, x.aval.dtype)
                out_aval = ShapedArray(x.aval.shape + in_aval.shape, x.aval.dtype)
                result.add(_stack(builder, blocks, block_aval, x.aval.shape, in_aval.shape, True), out_aval)
        loader.run()
        return result.terms

    return _optimize(flat, extend, options)


def jacrev_program(closed: ClosedJaxpr, wrt: list[int],
                   options: Options = DEFAULT_OPTIONS) -> tuple[ClosedJaxpr, Report]:
    """The same blocks as `jacfwd_program`, by one reverse pass per output element."""
    flat = flat_program(closed, "vjp")
    jaxpr = flat.jaxpr
    outs = _float_outputs(jaxpr)
    for i in wrt:
        if not differentiable(jaxpr.invars[i].aval):
            raise GradTypeError(f"jacrev: input {i} is {jaxpr.invars[i].aval}, not float")

    def extend(egraph, enc, env):
        declare_ad_terms(egraph)
        loader = Loader(egraph, enc)
        builder = Builder(loader, env)
        wrt_vars = [jaxpr.invars[i] for i in wrt]
        result = _Outputs(builder)
        for j in outs:
            x = jaxpr.outvars[j]
            per_direction = []
            for onehot in _one_hots(enc, loader, x.aval.strip_weak()):
                seeds = {id(x): [onehot]} if isinstance(x, Var) else {}
                per_direction.append(builder.backward(jaxpr, wrt_vars, seeds))
            for v in wrt_vars:
                blocks = [cts[id(v)] for cts in per_direction]
                out_aval = ShapedArray(x.aval.shape + v.aval.shape, v.aval.dtype)
                result.add(_stack(builder, blocks, v.aval.strip_weak(), x.aval.shape, v.aval.shape, False), out_aval)
        loader.run()
        return result.terms

    return _optimize(flat, extend, options)


def hessian_program(closed: ClosedJaxpr, argnum: int = 0, options: Options = DEFAULT_OPTIONS) -> ClosedJaxpr:
    """d²f/dx² at input `argnum` for a scalar f: jacfwd of the jacrev program (forward over reverse)."""
    gradient, _ = jacrev_program(closed, [argnum], options)
    return jacfwd_program(gradient, [argnum], options)[0]


# --- API ------------------------------------------------------------------------------------------


def _jacobian(mode: str, fun: Callable, argnums: int | Sequence[int], options: Options):
    from ir.tree import tree_flatten, tree_unflatten
    from transforms.ad.api import ProgramCache, _argnums, run_program, stage

    build = jacfwd_program if mode == "jacfwd" else jacrev_program
    cache = ProgramCache()

    def jac_f(*args):
        staged = stage(fun, args)
        nums = _argnums(argnums, len(args))
        wrt = [i for n in nums for i in staged.arg_leaves[n]]
        program, _ = cache.get(nums, staged, lambda: build(staged.closed, wrt, options))
        blocks = iter(run_program(program, staged.flat_args))
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
           extractor="greedy_dag", limits=None):
    """The Jacobian by forward mode: for each output leaf, an array of shape out.shape + in.shape (a
    tuple of them for a tuple of argnums, a pytree of them for a pytree argument)."""
    return _jacobian("jacfwd", fun, argnums, Options(rules, cost, extractor, limits))


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, *, rules="default", cost="flops",
           extractor="greedy_dag", limits=None):
    """The Jacobian by reverse mode (same layout as `jacfwd`)."""
    return _jacobian("jacrev", fun, argnums, Options(rules, cost, extractor, limits))


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, **options):
    """`jacfwd(jacrev(f))`: for a scalar f of x, an array of shape x.shape + x.shape."""
    return jacfwd(jacrev(fun, argnums, **options), argnums, **options)
