"""Batched programs: a Jaxpr in, the optimized batched Jaxpr out, through one e-graph.

    vmap_program(closed, in_axes, out_axes, size)

`in_axes` has one entry per input: None (the input is the same for every batch element) or the axis
of the batched input that indexes the batch (negative counts from the end, as in JAX). `out_axes`
likewise per output (an int for all): None asks for an output that does not depend on the batch
(an error otherwise), an int puts the batch axis there (an output that does not depend on the batch
is broadcast). The batched program takes the inputs with the batch axis where `in_axes` says.

The unbatched part of the program is encoded as it is; the builder (`transforms.batching.build`) adds one
`vmap_of` node per batched equation result; the batching rules expand them to saturation (the engine's
prelude), then the algebra simplifies and the cost model extracts the batched program.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from ir.core import ClosedJaxpr, Jaxpr, Literal, ShapedArray, Var
from ir.errors import EqjaxError
from rewrites.build_terms import B
from rewrites.encode import Loader, Term, literal_term
from rewrites.engine import Report, optimize
from rewrites.options import DEFAULT_OPTIONS, Options
from rewrites.rule import Rule
from rewrites.terms import Arr
from transforms.batching.build import Batcher, batched_values, flat_program
from transforms.batching.rule import moveaxis_perm, with_batch
from transforms.batching.terms import declare_vmap_terms


class VmapError(EqjaxError, ValueError):
    """A vmap that cannot be: bad axes, inconsistent batch sizes, a mapped output with out_axes None."""


@cache
def vmap_rules() -> tuple[Rule, ...]:
    """Every batching rule (operand preparations included), in module order: the prelude of batched
    programs. (Not one prelude with the AD rules: egglog's push/pop per program costs grow with the
    rules registered, ~40 ms per program for the two sets together.)"""
    from rewrites.rule import check_rules
    from transforms.batching.rules import rule_list

    return tuple(check_rules(rule_list()))


def normalize_axis(axis: int | None, rank: int, what: str) -> int | None:
    """`axis` of an array of `rank` dimensions, counted from the front (JAX's rule: -rank <= axis < rank)."""
    if axis is None:
        return None
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise VmapError(f"{what} must be an int or None, got {axis!r}")
    if not -rank <= axis < rank:
        raise VmapError(f"{what} = {axis} is out of range for an array of rank {rank}")
    return axis % rank


def vmap_program(closed: ClosedJaxpr, in_axes: Sequence[int | None], out_axes: int | None | Sequence[int | None] = 0,
                 size: int | None = None, options: Options = DEFAULT_OPTIONS) -> tuple[ClosedJaxpr, Report]:
    """The batched program of `closed` (see the module docstring); `size` is the batch size B, needed
    since the inputs' avals are the unbatched ones."""
    flat = flat_program(closed)
    jaxpr = flat.jaxpr
    if len(in_axes) != len(jaxpr.invars):
        raise VmapError(f"in_axes has {len(in_axes)} entries for a program of {len(jaxpr.invars)} inputs")
    outs = [out_axes] * len(jaxpr.outvars) if out_axes is None or isinstance(out_axes, int) else list(out_axes)
    if len(outs) != len(jaxpr.outvars):
        raise VmapError(f"out_axes has {len(outs)} entries for a program of {len(jaxpr.outvars)} outputs")
    if size is None or size < 0:
        raise VmapError(f"the batch size must be a non-negative int, got {size!r}")
    ins = [normalize_axis(a, v.aval.ndim + 1, f"in_axes[{k}]")
           for k, (a, v) in enumerate(zip(in_axes, jaxpr.invars, strict=True))]
    outs = [normalize_axis(a, x.aval.ndim + 1, f"out_axes[{j}]")
            for j, (a, x) in enumerate(zip(outs, jaxpr.outvars, strict=True))]

    mapped = [v for v, a in zip(jaxpr.invars, ins, strict=True) if a is not None]
    dep = batched_values(jaxpr, mapped)
    for j, (x, a) in enumerate(zip(jaxpr.outvars, outs, strict=True)):
        if a is None and isinstance(x, Var) and id(x) in dep:
            raise VmapError(f"output {j} depends on the batch but its out_axes is None")

    # The encoded program: the unbatched equations, over the inputs as the batched program takes them.
    invars = [Var(_batched_input(v.aval, a, size)) if a is not None else v
              for v, a in zip(jaxpr.invars, ins, strict=True)]
    unbatched = [e for e in jaxpr.eqns if not any(isinstance(x, Var) and id(x) in dep for x in e.invars)]
    carrier = ClosedJaxpr(Jaxpr(jaxpr.constvars, invars, [], unbatched), flat.consts)

    def extend(egraph, enc, env) -> list[Arr]:
        declare_vmap_terms(egraph)
        loader = Loader(egraph, enc)
        batcher = Batcher(loader, env, size)
        starts = {}
        for k, (v, a) in enumerate(zip(jaxpr.invars, ins, strict=True)):
            if a is not None:
                term = Term("inp", (k,)).egg
                if a != 0:
                    term = batcher.transpose(term, invars[k].aval, moveaxis_perm(v.aval.ndim + 1, a, 0))
                starts[id(v)] = term
        batched = batcher.run(jaxpr, starts)
        results = [_output(batcher, x, a, batched, size) for x, a in zip(jaxpr.outvars, outs, strict=True)]
        loader.run()
        return results

    return optimize(carrier, options=options, prelude=vmap_rules(), extend=extend, baseline=flat)


def _batched_input(aval: ShapedArray, axis: int, size: int) -> ShapedArray:
    shape = list(aval.shape)
    shape.insert(axis, size)
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def _output(batcher: Batcher, x, axis: int | None, batched: dict, size: int) -> Arr:
    """Output `x` with its batch axis at `axis` (broadcast if it does not depend on the batch)."""
    aval = x.aval.strip_weak()
    if isinstance(x, Var) and id(x) in batched:
        term, full = batched[id(x)], with_batch(aval, size)
        if axis == 0:
            return batcher.loader.output(term, full)  # an input returned as it is: inp(k), not an alias
        term = batcher.transpose(term, full, moveaxis_perm(aval.ndim + 1, 0, axis))
    else:
        term = (literal_term(x, batcher.enc) if isinstance(x, Literal) else batcher.env[id(x)]).egg
        if axis is None:
            return batcher.loader.output(term, aval)
        shape = _batched_input(aval, axis, size).shape
        dims = tuple(k for k in range(aval.ndim + 1) if k != axis)
        term = batcher.bind(B.broadcast_in_dim(term, shape=shape, broadcast_dimensions=dims),
                            ShapedArray(shape, aval.dtype))
    return batcher.loader.output(term, None)
