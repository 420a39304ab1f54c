"""Equivalence proofs in egg's style: put two programs in one e-graph, saturate, ask if they merged.

    prove_equal(lambda x: jnp.sin(x)**2 + jnp.cos(x)**2, lambda x: jnp.ones_like(x), f64(3))

Both programs are traced on the same inputs (`Arr.inp(k)` is shared), so an equality found means
the rules rewrite one into the other. Not merging within the limits is not a disproof: a failed proof
says why saturation stopped (`Proof.stop_reason`) and how close it got (`Proof.closest`: per output that
did not merge, the pair of terms, one from each side, that differ in the fewest places).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from egglog import eq

from ir.core import ClosedJaxpr, ShapedArray
from ir.tracing import make_jaxpr
from rewrites.analyses.signed_zero import negative_zero_unions
from rewrites.closest import Closest, Terms, closest
from rewrites.decode import output_classes
from rewrites.encode import encode, load
from rewrites.engine import Limits, Report, fresh_egraph, saturate
from rewrites.rulesets import resolve_rules
from rewrites.serialize import ROOT_LET, view_of
from rewrites.terms import args_list


@dataclass
class Proof:
    equal: bool
    report: Report
    closest: dict[int, Closest] = field(default_factory=dict)  # output index -> how close it got (failed proofs)
    _saturated: tuple | None = field(default=None, repr=False)  # what `derivation` needs of the run

    def derivation(self, samples: int = 6) -> list:
        """The steps from the left program to the right one (`rewrites.explain.Step`s, each re-checked on
        `samples` inputs); only for a proof."""
        from rewrites.explain import checked_steps, derive_terms, input_terms

        if not self.equal:
            raise ValueError("not proved: there is no derivation; `closest` says how close it got")
        loaded, view, enc, rule_list, left = self._saturated
        view = view.with_retired()  # a derivation may pass through folded nodes
        terms = input_terms(loaded, view, output_classes(loaded))
        raw = derive_terms(view, rule_list, self.report, terms[:len(left.out_avals)], terms[len(left.out_avals):])
        return checked_steps(view, enc, raw, left, samples)

    def __bool__(self) -> bool:
        return self.equal

    @property
    def stop_reason(self) -> str:
        return self.report.stop_reason

    def __str__(self) -> str:
        r = self.report
        head = (f"{'proved' if self.equal else 'not proved'}: {r.iterations} iterations, stopped by {r.stop_reason}; "
                f"{r.enodes} e-nodes in {r.eclasses} e-classes")
        return "\n".join([head, *(f"output {k}: {c}" for k, c in sorted(self.closest.items()))])


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
        if signed_zeros := negative_zero_unions(enc):
            load(egraph, signed_zeros)
        egraph.let(ROOT_LET.lstrip("$"), args_list(lhs + rhs))
        loaded = view_of(egraph)
        saturate(prep, enc.n_eqns, limits or Limits(iterations=10), report)
        merged = [egraph.check_bool(eq(a).to(b)) for a, b in zip(lhs, rhs, strict=True)]
        view = view_of(egraph)
    report.enodes, report.eclasses = len(view.nodes), len(view.classes)
    if len(lhs) != len(rhs):
        return Proof(False, report)
    if all(merged):
        return Proof(True, report, _saturated=(loaded, view, enc, rule_list, left))
    outputs, terms = output_classes(view), Terms(view)
    gaps = {k: closest(view, outputs[k], outputs[len(lhs) + k], terms) for k, ok in enumerate(merged) if not ok}
    return Proof(False, report, gaps)

