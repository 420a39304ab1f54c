"""`vmap` with JAX's signature and semantics, batching through the e-graph.

    vmap(f)(xs)                                  map over axis 0 of every argument
    vmap(f, in_axes=(0, None))(xs, w)            w is shared by every batch element
    vmap(f, in_axes=({"a": 1}, 0), out_axes=-1)  pytree prefixes; negative axes count from the end
    vmap(f, in_axes=None, axis_size=4)(w)        nothing mapped: the outputs are broadcast

`f` is traced once per input signature at the unbatched avals; the batched program is built through
the e-graph (`transforms.batching.programs`) and evaluated with NumPy, or, called on tracers (inside
`ir.make_jaxpr`, `jit`, `grad` or another `vmap`), replayed into the enclosing trace, so transforms
compose: `vmap(vmap(f))`, `vmap(grad(f))`, `grad(lambda w: vmap(f, (None, 0))(w, xs).sum())`.
Keyword arguments are mapped over their axis 0, as in JAX. `fun` may be written with JAX, or be a program,
ir or live JAX (see `ir.jax_convert`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ir.core import ShapedArray
from ir.jax_convert import as_function
from ir.tracing import aval_of
from ir.tree import tree_flatten, tree_unflatten
from rewrites.options import Options, merge_options
from transforms.batching.programs import VmapError, vmap_program
from transforms.staging import ProgramCache


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_size: int | None = None, *,
         backend: str = "numpy", options: Options | None = None, **knobs):
    """`fun` mapped over the axes `in_axes` of its arguments, its outputs stacked along `out_axes`; the
    batched program is built and compiled once per input signature and runs on `backend`. The optimizer's
    knobs are `options` and/or its fields as keywords (`rules`, `cost`, ...: `rewrites.options`)."""
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    fun = as_function(fun)
    cache = ProgramCache(backend, merge_options("vmap", options, knobs))

    def vmapped(*args, **kwargs):
        names = sorted(kwargs)
        call_args = (*args, *(kwargs[k] for k in names))
        spec = in_axes if not isinstance(in_axes, list) else tuple(in_axes)
        if not (spec is None or isinstance(spec, (int, tuple))):
            raise VmapError("vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                            f"positional arguments passed to the function, got {type(spec).__name__}")
        if isinstance(spec, tuple) and len(spec) != len(args):
            raise VmapError(f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                            f"positional arguments passed to the function, but got len(in_axes)={len(spec)}, "
                            f"len(args)={len(args)}")
        spec = spec if isinstance(spec, tuple) else (spec,) * len(args)
        spec = (*spec, *(0,) * len(names))  # keyword arguments: always axis 0
        leaves = tree_flatten(call_args)[0]
        axes = _prefix_leaves(spec, call_args, "in_axes")
        avals = [aval_of(x) for x in leaves]
        size = _batch_size(avals, axes, axis_size)
        slices = [_unbatched(a, ax, k) for k, (a, ax) in enumerate(zip(avals, axes, strict=True))]

        def call(*all_args):
            return fun(*all_args[:len(args)], **dict(zip(names, all_args[len(args):], strict=True)))

        staged = cache.trace(call, call_args, at=slices, extra=tuple(axes))
        flat_in = [*(None,) * staged.n_hoisted, *axes]
        out_tree = staged.out_tree
        flat_out = _prefix_leaves(out_axes, tree_unflatten(out_tree, [0] * out_tree.num_leaves), "out_axes")
        program, _ = cache.program((tuple(flat_in), tuple(flat_out), size), staged,
                                   lambda: vmap_program(staged.closed, flat_in, flat_out, size, cache.options),
                                   on_disk=("vmap", {"in_axes": flat_in, "out_axes": flat_out, "size": size}))
        return tree_unflatten(out_tree, cache.run(program, staged.flat_args))

    vmapped.__name__ = f"vmap({getattr(fun, '__name__', 'fun')})"
    vmapped.__wrapped__ = fun
    return vmapped


def _check_spec(spec: Any, what: str) -> None:
    for a in tree_flatten(spec)[0]:
        if not (a is None or (isinstance(a, int) and not isinstance(a, bool))):
            raise VmapError(f"vmap {what} must be an int, None, or a (nested) tuple/list/dict of those, "
                            f"got {a!r}")


def _prefix_leaves(prefix: Any, tree: Any, what: str) -> list[int | None]:
    """One axis per leaf of `tree`: `prefix` is a tree prefix of it whose leaves are ints or None."""
    out: list[int | None] = []
    _broadcast(prefix, tree, out, what)
    return out


def _broadcast(prefix: Any, tree: Any, out: list, what: str) -> None:
    if prefix is None or isinstance(prefix, int):
        out.extend([prefix] * tree_flatten(tree)[1].num_leaves)
        return
    if type(prefix) is not type(tree) or (isinstance(prefix, dict) and sorted(prefix) != sorted(tree)) or (
            len(prefix) != len(tree)):
        raise VmapError(f"vmap {what} specification must be a tree prefix of the corresponding value, got "
                        f"specification {prefix!r} for value tree {tree_flatten(tree)[1]}")
    for p, t in zip(_children(prefix), _children(tree), strict=True):
        _broadcast(p, t, out, what)


def _children(node: Any) -> list:
    return [node[k] for k in sorted(node)] if isinstance(node, dict) else list(node)


def _batch_size(avals: list[ShapedArray], axes: list[int | None], axis_size: int | None) -> int:
    sizes = {}
    for k, (a, ax) in enumerate(zip(avals, axes, strict=True)):
        if ax is None:
            continue
        if not -a.ndim <= ax < a.ndim:
            raise VmapError(f"vmap was requested to map its argument along axis {ax}, which implies that its rank "
                            f"should be at least {ax + 1 if ax >= 0 else -ax}, but is only {a.ndim} "
                            f"(its shape is {a.shape})")
        sizes[k] = a.shape[ax]
    found = set(sizes.values())
    if len(found) > 1:
        detail = ", ".join(f"argument leaf {k} has size {n}" for k, n in sizes.items())
        raise VmapError(f"vmap got inconsistent sizes for array axes to be mapped: {detail}")
    if axis_size is not None:
        if found and found != {axis_size}:
            raise VmapError(f"vmap got axis_size={axis_size} but the mapped axes have size {found.pop()}")
        return axis_size
    if not found:
        raise VmapError("vmap must have at least one non-None value in in_axes (or be given axis_size)")
    return found.pop()


def _unbatched(aval: ShapedArray, axis: int | None, k: int) -> ShapedArray:
    if axis is None:
        return aval
    shape = list(aval.shape)
    del shape[axis % aval.ndim]
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)

