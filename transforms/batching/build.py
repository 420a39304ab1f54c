"""Building the batched program's nodes in the e-graph, from the program's structure.

Which values carry the batch axis is decided by dependence (`batched_values`), as JAX's BatchTrace
does: a value is batched when it is computed from a mapped input; everything else stays in the
e-graph exactly as the unbatched program computes it (encoded once, never broadcast). One pass over
the equations in order then gives each batched result one `vmap_of` node, whose operands are the
batched terms of batched operands (batch axis first) and the unbatched terms of the others, after
the primitive's policy has prepared them (`transforms.batching.rule`; an `own` rule's node holds only
the result's own operand). The nodes are O(1) each, so the
e-graph grows linearly with the program.

Calls, remat and custom-derivative calls are inlined first: their bodies are batched as written (the
custom rules are not in the jaxpr text; the batched program computes the same values).
"""

from __future__ import annotations

from dataclasses import replace

from egglog import bindings as eb

from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, ShapedArray, Var
from rewrites.build_terms import B
from rewrites.encode import Loader, literal_term
from transforms.batching.rule import (
    OPERAND_PREPARATION,
    POLICY,
    PREPARE,
    Site,
    batch_rule,
    broadcast_count,
    broadcasting_preparation,
    tag,
    with_batch,
)
from transforms.rulebook import ValueStore

_VMAP_OF = B.function("vmap_of")
_VINT = B.function("vint")  # an each_result node's index, in front of its values
INLINED = frozenset({"remat2", "checkpoint", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr",
                     "custom_linear_solve"})


def flat_program(closed: ClosedJaxpr) -> ClosedJaxpr:
    """`closed` with calls and the bodies batching goes through inlined."""
    from ir.inline import CALLS, inline_calls

    return inline_calls(closed, CALLS | INLINED, into_bodies=True)


def batched_values(jaxpr: Jaxpr, mapped) -> set[int]:
    """Ids of the values that depend on the `mapped` inputs: the ones that carry the batch axis."""
    dep = {id(v) for v in mapped}
    for eqn in jaxpr.eqns:
        if any(isinstance(x, Var) and id(x) in dep for x in eqn.invars):
            dep.update(id(v) for v in eqn.outvars)
    return dep


def _control():
    from transforms.batching.control import BATCH_RULES

    return BATCH_RULES


class Batcher:
    """Adds the batching nodes of one program to the e-graph its `loader` fills (see module docstring)."""

    def __init__(self, loader: Loader, env: dict, size: int):
        self.loader, self.enc, self.env, self.size = loader, loader.enc, env, size
        self.values = ValueStore(loader)

    def atom(self, x) -> eb.Call:
        return literal_term(x, self.enc).egg if isinstance(x, Literal) else self.env[id(x)].egg

    def bind(self, definition: eb.Call, aval: ShapedArray) -> eb.Call:
        return self.loader.bind(definition, aval).egg

    def broadcast(self, x: eb.Call, aval: ShapedArray) -> eb.Call:
        """An unbatched value of `aval` with the batch axis added in front (every element the same)."""
        return self._prepare("materialize:u", x, Site({}, [aval], [aval], (False,), self.size), 0)

    def transpose(self, x: eb.Call, aval: ShapedArray, perm: tuple[int, ...]) -> eb.Call:
        out = ShapedArray(tuple(aval.shape[p] for p in perm), aval.dtype)
        return self.bind(B.transpose(x, permutation=perm), out)

    def run(self, jaxpr: Jaxpr, batched: dict[int, eb.Call]) -> dict[int, eb.Call]:
        """Batched terms of every batched value, from those of the mapped inputs (`batched`: id(var) ->
        term with the batch axis first). Unbatched values are read from `env`."""
        batched = dict(batched)
        for eqn in jaxpr.eqns:
            flags = tuple(isinstance(x, Var) and id(x) in batched for x in eqn.invars)
            if any(flags) and eqn.primitive in _control():
                results = _control()[eqn.primitive](self, eqn, flags, batched)
                batched.update((id(v), r) for v, r in zip(eqn.outvars, results, strict=True))
            elif any(flags):
                self._equation(eqn, flags, batched)
        return batched

    def _equation(self, eqn: Eqn, flags: tuple[bool, ...], batched: dict) -> None:
        operands = [batched[id(x)] if b else self.atom(x) for x, b in zip(eqn.invars, flags, strict=True)]
        site = Site(eqn.params, [x.aval for x in eqn.invars], [v.aval for v in eqn.outvars], flags, self.size)
        entry = batch_rule(eqn.primitive, site.flags)
        policy = POLICY[eqn.primitive]
        if policy == "elementwise":
            prepare = OPERAND_PREPARATION.get(eqn.primitive, broadcasting_preparation)
            operands = [self._prepare(name, x, site, i) if (name := prepare(site, i)) else x
                        for i, x in enumerate(operands)]
        elif policy == "materialize":
            k = broadcast_count(eqn.primitive, len(flags))
            operands = [x if b or i >= k else self._prepare("materialize:u", x, site, i) for i, (x, b)
                        in enumerate(zip(operands, flags, strict=True))]
            site = replace(site, batched=(True,) * k + flags[k:])
        avals = [site.batched_aval(i) for i in range(len(operands))]

        values = self.values.list_of(f"vmap {eqn.primitive}:{entry.flags}", entry.values, site, avals=avals)
        for j, v in enumerate(eqn.outvars):
            if isinstance(v, DropVar):
                continue
            result = "*" if entry.each_result else j if entry.results > 1 else None
            node = _VMAP_OF(tag(eqn.primitive, entry.flags, result),
                            _VINT(B.int(j), values) if entry.each_result else values,
                            B.args([operands[j]] if entry.own else operands))
            batched[id(v)] = self.bind(node, with_batch(v.aval, self.size))

    def _prepare(self, name: str, x: eb.Call, site: Site, i: int) -> eb.Call:
        entry = PREPARE[name]
        values = self.values.list_of(f"vmap {name}", entry.values, _operand_site(site, i))
        a = site.in_avals[i]
        out = site.out_avals[0].shape
        shape = {"lift:b": (self.size, *(1,) * len(out)), "lift:u": (1, *a.shape), "fill:b": (self.size, *out),
                 "materialize:u": (self.size, *a.shape)}[name]
        return self.bind(_VMAP_OF(name, values, B.args([x])), ShapedArray(shape, a.dtype))


def _operand_site(site: Site, i: int) -> Site:
    """The site of operand i's preparation: that operand alone, with the equation's result avals."""
    return Site({}, [site.in_avals[i]], site.out_avals, (site.batched[i],), site.size)
