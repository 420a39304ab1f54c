"""Equivalence proofs in egg's style: put two programs in one e-graph, saturate, ask if they merged.

    prove_equal(lambda x: jnp.sin(x)**2 + jnp.cos(x)**2, lambda x: jnp.ones_like(x), f64(3))

Both programs are traced on the same inputs (`Arr.inp(k)` is shared), so an equality found means
the rules rewrite one into the other. Not merging within the limits is not a disproof.
"""

from __future__ import annotations

from dataclasses import dataclass

from egglog import eq

from ir.core import ClosedJaxpr, ShapedArray
from ir.tracing import make_jaxpr
from rewrites.encode import encode
from rewrites.engine import Limits, Report, fresh_egraph, saturate
from rewrites.rulesets import resolve_rules
from rewrites.serialize import ROOT_LET
from rewrites.terms import args_list


@dataclass
class Proof:
    equal: bool
    report: Report

    def __bool__(self) -> bool:
        return self.equal


def prove_equal(f, g, *avals: ShapedArray, rules="default", limits: Limits | None = None) -> Proof:
    """Whether saturation with `rules` puts `f(*avals)` and `g(*avals)` in one e-class (every output)."""
    return prove_jaxprs_equal(make_jaxpr(f)(*avals), make_jaxpr(g)(*avals), rules=rules, limits=limits)


def prove_jaxprs_equal(left: ClosedJaxpr, right: ClosedJaxpr, rules="default",
                       limits: Limits | None = None) -> Proof:
    if [a.strip_weak() for a in left.in_avals] != [a.strip_weak() for a in right.in_avals]:
        raise ValueError(f"the programs take different inputs: {left.in_avals} vs {right.in_avals}")
    rule_list = resolve_rules(rules)
    report = Report([r.name for r in rule_list])
    with fresh_egraph(rule_list) as prep:
        egraph = prep.egraph
        enc = encode(left, egraph)
        lhs = list(enc.outputs)
        rhs = list(encode(right, egraph, enc).outputs)
        egraph.let(ROOT_LET.lstrip("$"), args_list(lhs + rhs))
        saturate(prep, enc.n_eqns, limits or Limits(iterations=10), report)
        equal = len(lhs) == len(rhs) and all(egraph.check_bool(eq(a).to(b)) for a, b in zip(lhs, rhs, strict=True))
    return Proof(equal, report)
