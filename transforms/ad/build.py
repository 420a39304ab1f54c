"""Building the derivative's nodes in the e-graph, from the program's structure.

Forward (`Builder.forward`): one pass over the equations in order. A value's tangent is a
symbolic zero (Python `None`, nothing in the e-graph) when it cannot depend on the seeded inputs,
when it is an integer or boolean, or when its primitive has zero derivative; otherwise it is the sum
of one `jvp_of` node per operand with a nonzero tangent (or one node per result for the primitives
whose JVP does not split by operand), bound to an alias.

Reverse (`Builder.backward`): JAX's `backward_pass` over the def-use structure. Equations are visited
in reverse; each *use* of a value adds one `vjp_of` node to that value's contribution list, and a
value's cotangent is the sum of its list, built once when its defining equation is reached. Every
node is O(1) in size, so the e-graph grows linearly with the program, whatever its sharing: chains of
diamonds and residual chains stay linear (a top-down `vjp(e, ct)` rule would re-derive shared values
along every path). Values that do not depend on the differentiated inputs get no contribution nodes.

Nodes are rewritten into primal-language terms by the per-primitive rules of `transforms.ad.rules`,
run to saturation before any algebraic rule (see `rewrites.engine.run_prelude`).
"""

from __future__ import annotations

from collections.abc import Iterable

from egglog import bindings as eb

from ir.core import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.errors import UnsupportedPrimitive
from ir.primitives import primitives_with
from rewrites.build_terms import B
from rewrites.encode import Loader, literal_term
from transforms.ad import control, custom
from transforms.ad.rule import ZERO_DERIVATIVE, ADRule, by_result, jvp_rules, vjp_rule
from transforms.rulebook import ValueStore

# Primitives whose derivative is built from their bodies or registered rules rather than per-operand nodes.
CONTROL_JVP = {**control.JVP_RULES, **custom.JVP_RULES}
CONTROL_VJP = {**control.VJP_RULES, **custom.VJP_RULES}

_ZERO = B.function("zero")
_VINT = B.function("vint")  # the index of a "*"/"out*" entry's slot, in front of its values
_NODE = {"jvp": B.function("jvp_of"), "vjp": B.function("vjp_of")}

ELEMENTWISE = frozenset(primitives_with("elementwise"))


def differentiable(aval: ShapedArray) -> bool:
    """Floats and complex numbers carry tangents; integers and booleans have symbolic-zero tangents."""
    return aval.dtype.kind in "fc"


def float_positions(atoms) -> list[int]:
    """Positions of the differentiable values among `atoms` (a jaxpr's invars or outvars)."""
    return [i for i, x in enumerate(atoms) if differentiable(x.aval)]


class Builder:
    """Adds the AD nodes of one program to the e-graph its `loader` fills (see module docstring)."""

    def __init__(self, loader: Loader, env: dict):
        self.loader, self.enc, self.env = loader, loader.enc, env
        self.values = ValueStore(loader)

    # --- terms --------------------------------------------------------------------------------------

    def atom(self, x) -> eb.Call:
        return literal_term(x, self.enc).egg if isinstance(x, Literal) else self.env[id(x)].egg

    def zero(self, aval: ShapedArray) -> eb.Call:
        term = _ZERO(B.ints(aval.shape), aval.dtype.name)
        self.loader.facts(term, aval)
        return term

    def bind(self, definition: eb.Call, aval: ShapedArray) -> eb.Call:
        return self.loader.bind(definition, aval).egg

    def total(self, parts: list[eb.Call], aval: ShapedArray) -> eb.Call:
        """The sum of contributions, each added once, as one alias."""
        acc = parts[0]
        for p in parts[1:]:
            acc = B.add(acc, p)
        return self.bind(acc, aval)

    def node(self, mode: str, entry: ADRule, eqn: Eqn, seeds: list[eb.Call], index: int) -> eb.Call:
        """The `<mode>_of` node of `entry` for `eqn`, its values computed from the equation (and from the
        operand or result `index` for an entry of any slot)."""
        context = [eqn.params, [x.aval for x in eqn.invars], [v.aval for v in eqn.outvars]]
        any_slot = entry.slot.endswith("*")
        values = self.values.list_of(f"{mode} {entry.tag}", entry.values, *context, *([index] if any_slot else []))
        if any_slot:
            values = _VINT(B.int(index), values)
        primals = B.args([self.atom(x) for x in eqn.invars])
        outs = B.args([self.env[id(v)].egg for v in eqn.outvars])
        return _NODE[mode](entry.tag, values, primals, outs, B.args(seeds))

    # --- forward ------------------------------------------------------------------------------------

    def forward(self, jaxpr: Jaxpr, seeds: dict[int, eb.Call]) -> dict[int, eb.Call]:
        """Tangents of every value from `seeds` (id(input var) -> tangent term); missing = zero."""
        tangent = dict(seeds)
        for eqn in jaxpr.eqns:
            tans = [tangent.get(id(x)) if isinstance(x, Var) else None for x in eqn.invars]
            outs = float_positions(eqn.outvars)
            if all(t is None for t in tans) or not outs or eqn.primitive in ZERO_DERIVATIVE:
                continue
            if eqn.primitive in CONTROL_JVP:
                for v, t in zip(eqn.outvars, CONTROL_JVP[eqn.primitive](self, eqn, tans), strict=True):
                    if t is not None:
                        tangent[id(v)] = t
                continue
            rules = jvp_rules(eqn.primitive)
            if by_result(rules):
                full = [t if t is not None else self.zero(x.aval) for x, t in zip(eqn.invars, tans, strict=True)]
                for j in outs:
                    entry = rules.get(f"out{j}") or rules.get("out*") or _missing(eqn.primitive, f"JVP (result {j})")
                    v = eqn.outvars[j]
                    seeds = [full[j]] if entry.seeds == "own" else full
                    tangent[id(v)] = self.bind(self.node("jvp", entry, eqn, seeds, j), v.aval)
                continue
            [v] = eqn.outvars
            parts = []
            for i, (x, t) in enumerate(zip(eqn.invars, tans, strict=True)):
                if t is None:
                    continue
                entry = rules.get(str(i)) or _missing(eqn.primitive, f"JVP (operand {i})")
                if eqn.primitive in ELEMENTWISE and x.aval.shape != v.aval.shape:
                    dims = tuple(range(x.aval.ndim))  # rank 0, or size-1 axes stretched
                    t = self.bind(B.broadcast_in_dim(t, shape=v.aval.shape, broadcast_dimensions=dims),
                                  ShapedArray(v.aval.shape, x.aval.dtype))
                parts.append(self.node("jvp", entry, eqn, [t], i))
            tangent[id(v)] = self.total(parts, v.aval)
        return tangent

    # --- reverse ------------------------------------------------------------------------------------

    def backward(self, jaxpr: Jaxpr, wrt: list[Var], seeds: dict[int, list[eb.Call]]) -> dict[int, eb.Call | None]:
        """Cotangents of the `wrt` inputs from output cotangents `seeds` (id(output var) -> terms, one
        per time the var is an output); None where the cotangent is a symbolic zero."""
        active = _depends_on(jaxpr, wrt)
        contributions: dict[int, list[eb.Call]] = {k: list(ts) for k, ts in seeds.items()}
        for eqn in reversed(jaxpr.eqns):
            cts = [self._cotangent(v, contributions) for v in eqn.outvars]
            if all(c is None for c in cts) or eqn.primitive in ZERO_DERIVATIVE:
                continue
            if eqn.primitive in CONTROL_VJP:
                mask = [isinstance(x, Var) and id(x) in active for x in eqn.invars]
                for x, part in zip(eqn.invars, CONTROL_VJP[eqn.primitive](self, eqn, cts, mask), strict=True):
                    if part is not None:
                        contributions.setdefault(id(x), []).append(part)
                continue
            for i, x in enumerate(eqn.invars):
                if not isinstance(x, Var) or id(x) not in active:
                    continue
                entry = vjp_rule(eqn.primitive, i)
                if entry.seeds == "all":
                    seeds_i = [c if c is not None else self.zero(v.aval) for v, c in zip(eqn.outvars, cts, strict=True)]
                elif entry.seeds == "own":
                    seeds_i = [cts[i] if cts[i] is not None else self.zero(eqn.outvars[i].aval)]
                else:
                    seeds_i = cts[:1]
                part = self.node("vjp", entry, eqn, seeds_i, i)
                out_aval = eqn.outvars[0].aval
                if eqn.primitive in ELEMENTWISE and x.aval.shape != out_aval.shape:
                    part = self._unbroadcast(part, x.aval, out_aval)
                contributions.setdefault(id(x), []).append(part)
        return {id(v): self._cotangent(v, contributions) for v in wrt}

    def _cotangent(self, v, contributions: dict[int, list[eb.Call]]) -> eb.Call | None:
        parts = contributions.get(id(v))
        if not parts:
            return None
        if len(parts) > 1 or not _is_alias(parts[0]):
            parts[:] = [self.total(parts, v.aval)]
        return parts[0]

    def _unbroadcast(self, part: eb.Call, aval: ShapedArray, out_aval: ShapedArray) -> eb.Call:
        """The operand of a broadcasting elementwise op (rank 0, or with size-1 axes stretched) gets
        its contributions summed over the broadcast axes."""
        axes = tuple(k for k in range(out_aval.ndim) if aval.ndim == 0 or aval.shape[k] != out_aval.shape[k])
        kept = tuple(d for k, d in enumerate(out_aval.shape) if k not in axes)
        part = self.bind(B.reduce_sum(part, axes=axes), ShapedArray(kept, aval.dtype))
        if kept != aval.shape:
            part = self.bind(B.reshape(part, new_sizes=aval.shape), aval)
        return part


def _is_alias(term: eb.Call) -> bool:
    return isinstance(term, eb.Call) and term.name == "ref"


def _missing(prim: str, what: str):
    raise UnsupportedPrimitive(prim, what, "transforms/ad/rules")


def _depends_on(jaxpr: Jaxpr, inputs: Iterable[Var]) -> set[int]:
    """Ids of the float values that depend on `inputs` through differentiable equations."""
    dep = {id(v) for v in inputs}
    for eqn in jaxpr.eqns:
        if eqn.primitive in ZERO_DERIVATIVE:
            continue
        if any(isinstance(x, Var) and id(x) in dep for x in eqn.invars):
            dep.update(id(v) for v in eqn.outvars if differentiable(v.aval))
    return dep


# Bodies AD differentiates as written: calls, remat (it only changes what is recomputed) and custom-JVP
# calls without a registered rule (`ir.custom_rules`; the rule is a Python callable the jaxpr text does
# not hold, so the body is differentiated: the same derivative wherever the body is smooth). Custom-VJP
# calls too in forward mode (JAX refuses that); in reverse mode they use their registered fwd/bwd
# (`transforms.ad.custom`) or raise UnsupportedPrimitive.
INLINED_FORWARD = frozenset({"remat2", "checkpoint", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr",
                             "custom_linear_solve"})
INLINED_REVERSE = frozenset({"remat2", "checkpoint", "custom_jvp_call", "custom_linear_solve"})


def flat_program(closed: ClosedJaxpr, mode: str) -> ClosedJaxpr:
    """`closed` with the bodies AD differentiates inlined (`mode` "jvp" or "vjp"), inside control-flow
    bodies too; custom-derivative calls with registered rules stay."""
    from ir.inline import CALLS, inline_calls

    return inline_calls(closed, CALLS | (INLINED_FORWARD if mode == "jvp" else INLINED_REVERSE), _differentiated_body,
                        keep=lambda eqn: custom.has_rules(eqn, mode), into_bodies=True)


def _differentiated_body(eqn: Eqn, operands: list) -> tuple[ClosedJaxpr, list]:
    """The body AD differentiates in place of an equation: the called body, but for `custom_linear_solve`
    JAX's implicit rule written as a program, x = x0 + S(b - M x0) with x0 = S(b) held constant: its value
    is x0 up to one refinement step's rounding, its derivative S(db - dM x0) (JAX's `_custom_linear_solve_jvp`),
    where S is the `solve` jaxpr (its consts held constant: JAX stops gradients through the factorization)
    and M the `matvec` jaxpr (its consts, the matrix, carry the derivative)."""
    from ir.inline import called

    if eqn.primitive != "custom_linear_solve":
        return called(eqn, operands)
    return _implicit_solve(eqn), list(operands)


def _implicit_solve(eqn: Eqn) -> ClosedJaxpr:
    from ir import lax
    from ir.inline import linear_solve_operands
    from ir.tracing import bind_jaxpr, make_jaxpr

    jaxprs = eqn.params["jaxprs"]

    def program(*args):
        groups = linear_solve_operands(eqn.params["const_lengths"], args)
        solve_consts, b = [lax.stop_gradient(c) for c in groups["solve"]], groups["b"]
        x0 = [lax.stop_gradient(x) for x in bind_jaxpr(jaxprs.solve, *solve_consts, *b)]
        residual = [bi - mi for bi, mi in zip(b, bind_jaxpr(jaxprs.matvec, *groups["matvec"], *x0), strict=True)]
        step = bind_jaxpr(jaxprs.solve, *solve_consts, *residual)
        return [x + d for x, d in zip(x0, step, strict=True)]

    return make_jaxpr(program)(*[x.aval for x in eqn.invars])
