"""Derivatives of custom-derivative calls from their registered rules (`ir.custom_rules`), built in the
e-graph as ordinary equations:

    JVP  custom_jvp_call  the rule's program over (primals, tangents): its tangent outputs.
    VJP  custom_jvp_call  the transpose of the rule's tangent map t -> jvp(x, t)[1], built by the reverse
                          builder on the rule's program (JAX linearizes and transposes the rule too), so
                          the cotangent is a program in x that differentiates again (hessians).
         custom_vjp_call  fwd's residuals, then bwd on them and the output cotangents.

Calls without a registered rule never reach here: `flat_program` inlines a custom_jvp_call's body, and a
custom_vjp_call without rules fails in reverse mode naming its bwd. The call itself stays in the program
(evaluated through its body), so a second transform meets it and its rules again.
"""

from __future__ import annotations

from ir import custom_rules
from ir.core import Eqn, Literal, Var
from ir.errors import UnsupportedPrimitive
from rewrites.encode import Term, literal_term
from transforms.ad.control import inline_body


def has_rules(eqn: Eqn, mode: str) -> bool:
    """Whether AD takes `eqn`'s derivative in `mode` ("jvp" or "vjp") from registered rules."""
    if eqn.primitive == "custom_jvp_call":
        return custom_rules.jvp_rule(eqn) is not None
    return mode == "vjp" and eqn.primitive in _VJP_CALLS and custom_rules.vjp_rules(eqn) is not None


def _split(eqn: Eqn, flags: list) -> list:
    """The operands after the call's consts, refusing a derivative that would flow into a const."""
    k = eqn.params.get("num_consts", 0)
    if any(flags[:k]):
        raise UnsupportedPrimitive(eqn.primitive, f"derivative through a closed-over const of {eqn.params.get('name')}",
                                   "transforms/ad/custom.py")
    return eqn.invars[k:]


def _zero(builder, aval) -> Term:
    """A zero as an operand of inlined equations (which name their operands by alias)."""
    return Term.of(builder.bind(builder.zero(aval), aval))


def _terms(builder, atoms) -> list[Term]:
    return [literal_term(x, builder.enc) if isinstance(x, Literal) else builder.env[id(x)] for x in atoms]


def custom_jvp_jvp(builder, eqn: Eqn, tans: list) -> list:
    from transforms.ad.build import differentiable

    primals = _split(eqn, [t is not None for t in tans])
    k = len(eqn.invars) - len(primals)
    dots = [Term.of(t) if t is not None else _zero(builder, x.aval) for x, t in zip(primals, tans[k:], strict=True)]
    outs, _ = inline_body(builder, custom_rules.jvp_program(eqn), _terms(builder, eqn.invars) + dots)  # consts first
    n = len(eqn.outvars)
    return [o if differentiable(v.aval) else None for v, o in zip(eqn.outvars, outs[n:], strict=True)]


def custom_jvp_vjp(builder, eqn: Eqn, cts: list, active: list[bool]) -> list:
    primals = _split(eqn, active)
    k, n = len(eqn.invars) - len(primals), len(eqn.outvars)
    program = custom_rules.jvp_program(eqn)
    zeros = [_zero(builder, x.aval) for x in primals]
    _, sub = inline_body(builder, program, _terms(builder, eqn.invars) + zeros)  # consts, primals, tangents
    seeds: dict[int, list] = {}
    for v, ct in zip(program.jaxpr.outvars[n:], cts, strict=True):
        if ct is not None and isinstance(v, Var):
            seeds.setdefault(id(v), []).append(ct)
    tangent_in = program.jaxpr.invars[k + len(primals):]
    got = sub.backward(program.jaxpr, tangent_in, seeds)
    return [None] * k + [got[id(t)] if active[k + i] else None for i, t in enumerate(tangent_in)]


def custom_vjp_vjp(builder, eqn: Eqn, cts: list, active: list[bool]) -> list:
    if custom_rules.vjp_rules(eqn) is None:
        raise UnsupportedPrimitive(eqn.primitive, f"reverse mode: its bwd {eqn.params.get('bwd')} is a Python "
                                   "function the text does not hold; register it with ir.custom_rules.defvjp",
                                   "ir/custom_rules.py")
    primals = _split(eqn, active)
    k, n = len(eqn.invars) - len(primals), len(eqn.outvars)
    fwd, residual_tree = custom_rules.fwd_program(eqn)
    outs, _ = inline_body(builder, fwd, _terms(builder, primals))
    residuals = [Term.of(r) for r in outs[n:]]
    bwd = custom_rules.bwd_program(eqn, [v.aval for v in fwd.jaxpr.outvars[n:]], residual_tree)
    seeds = [Term.of(c) if c is not None else _zero(builder, v.aval) for v, c in zip(eqn.outvars, cts, strict=True)]
    got, _ = inline_body(builder, bwd, residuals + seeds)
    return [None] * k + [g if active[k + i] else None for i, g in enumerate(got)]


_VJP_CALLS = ("custom_vjp_call", "custom_vjp_call_jaxpr")
JVP_RULES = {"custom_jvp_call": custom_jvp_jvp}
VJP_RULES = {"custom_jvp_call": custom_jvp_vjp, **dict.fromkeys(_VJP_CALLS, custom_vjp_vjp)}
