"""Derivations: how an optimized program follows from its input, rule application by rule application.

    derivation = explain(closed, rules="default")
    print(derivation)            # one line per step: rule, class, where, before -> after, re-check verdict
    derivation.steps[0].before   # the subterm before the step, as a jaxpr over the program's inputs

`explain` optimizes as `rewrites.engine.optimize` does, then rebuilds how each output of the extracted
program follows from the input's (`rewrites.explain.derive`). Each step names its rule and soundness class,
where it applied (output, subterm path, and the input equation whose result the subterm's class holds, if
any), and its two sides as jaxprs, evaluated on sample inputs under the judge of its class
(`rewrites.explain.render`): `Step.recheck` is None when they agree. `Derivation.shaping_rules` are the
rules on the derivation, what shaped the result, as against every rule that fired.

Only a plain optimize run is explained (no transform's prelude): AD and batching rules are egglog rules
with computed right sides, which the pattern language does not hold.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ir.core import ClosedJaxpr
from rewrites.decode import output_classes
from rewrites.egraph_view import canonical
from rewrites.engine import Limits, Report, extract_program, saturated
from rewrites.explain.derive import UNEXPLAINED, Deriver, RawStep
from rewrites.explain.match import Term
from rewrites.explain.render import recheck, sample_inputs, term_program
from rewrites.rulesets import resolve_rules

__all__ = ["Derivation", "Step", "checked_steps", "chosen_terms", "derive_terms", "explain", "input_terms"]


@dataclass
class Step:
    rule: str  # the rule's name, or "unexplained"
    soundness: str  # its class (exact, real, guarded, unsafe), or "unexplained"
    reversed: bool  # the rule read right to left
    output: int  # which output of the program
    path: tuple[int, ...]  # kid indices from the output's root to the rewritten subterm
    equation: int | None  # the input equation whose result the subterm's class holds, if any
    before: ClosedJaxpr  # the subterm before, and after, as programs over the inputs
    after: ClosedJaxpr
    recheck: str | None  # None: the two sides agree on the samples; else the difference

    def as_dict(self) -> dict:
        return {"rule": self.rule, "soundness": self.soundness, "reversed": self.reversed, "output": self.output,
                "path": list(self.path), "equation": self.equation, "before": str(self.before),
                "after": str(self.after), "recheck": self.recheck}

    def __str__(self) -> str:
        where = f"output {self.output}" + (f", at {'.'.join(map(str, self.path))}" if self.path else "")
        if self.equation is not None:
            where += f" (input equation {self.equation})"
        arrow = "<=" if self.reversed else "=>"
        verdict = "agrees" if self.recheck is None else f"DIFFERS: {self.recheck}"
        return (f"{self.rule} {arrow} [{self.soundness}] at {where}; re-check {verdict}\n"
                f"{_indent(str(self.before))}\n    ->\n{_indent(str(self.after))}")


@dataclass
class Derivation:
    program: ClosedJaxpr  # the input
    optimized: ClosedJaxpr
    report: Report
    steps: list[Step] = field(default_factory=list)

    @property
    def shaping_rules(self) -> Counter:
        """How often each rule appears on the derivation: the rules that shaped the result."""
        return Counter(s.rule for s in self.steps)

    @property
    def complete(self) -> bool:
        """Every step is a rule application that the re-check confirmed."""
        return all(s.rule != UNEXPLAINED and s.recheck is None for s in self.steps)

    def __str__(self) -> str:
        head = (f"{len(self.steps)} steps from the input to the optimized program; rules on the derivation: "
                + (", ".join(f"{n} ×{c}" for n, c in sorted(self.shaping_rules.items())) or "none"))
        return "\n".join([head, *(f"{k + 1}. {s}" for k, s in enumerate(self.steps))])


def explain(closed: ClosedJaxpr, rules="default", cost="flops", extractor="greedy_dag",
            limits: Limits | None = None, *, samples: int = 6) -> Derivation:
    """Optimize `closed` and derive the result from it step by step, each step re-checked on `samples` inputs."""
    from ir.jax_convert import as_program
    from rewrites.costs import get_cost_model
    from rewrites.extract import extract

    closed = as_program(closed)
    model = get_cost_model(cost)
    sat = saturated(closed, rules, limits, keep_loaded=True)
    extraction = extract(sat.view, sat.costs(model), method=extractor)
    optimized, report = extract_program(sat, model, extractor, baseline=closed, extraction=extraction)
    if report.kept_input:
        report.shaping_rules = {}
        return Derivation(closed, optimized, report)
    view = sat.view.with_retired()  # folded nodes too: a derivation may pass through them
    inputs = input_terms(sat.loaded, view)
    outputs = chosen_terms(view, extraction.choice)
    raw = derive_terms(view, resolve_rules(rules), report, inputs, outputs)
    derivation = Derivation(closed, optimized, report, checked_steps(view, sat.enc, raw, closed, samples))
    report.shaping_rules = dict(derivation.shaping_rules)
    return derivation


def checked_steps(view, enc, raw: list[RawStep], program: ClosedJaxpr, samples: int = 6) -> list[Step]:
    """The steps as programs, each re-checked on `samples` inputs of `program`."""
    inputs = sample_inputs(program, count=samples)
    return [_step(view, enc, s, inputs) for s in raw]


def derive_terms(view, rule_list, report: Report, inputs: list[Term], outputs: list[Term]) -> list[RawStep]:
    """The steps from the terms `inputs` to `outputs` (output by output, one class each) by the rules of
    `rule_list` that fired in `report`'s run."""
    from rewrites.ruledump import dump_rule

    fired = {name for name, n in report.rule_matches.items() if n}
    patterns = [p for r in rule_list if r.name in fired for p in dump_rule(r)]
    deriver = Deriver(view, patterns)
    deriver.program = list(inputs)
    for k, target in enumerate(outputs):
        deriver.make(k, (), target)
    return deriver.steps


_FIRST_USE = re.compile(r"^\w+-e(\d+)-")  # a class holding input equation k's result (serialize.canonical_class_ids)


def _step(view, enc, raw: RawStep, samples: list) -> Step:
    """The step as programs: the subterm before and after, or, for a subterm inside a loop body (over the
    body's own inputs), the whole output before and after."""
    shown = (raw.before, raw.after)
    if _in_body(view, raw.before) or _in_body(view, raw.after):
        shown = (raw.whole_before, raw.whole_after)
    before, after = (term_program(view, t, enc) for t in shown)
    soundness = raw.rule.soundness if raw.rule is not None else UNEXPLAINED
    first_use = _FIRST_USE.match(view.node_class[raw.before.node])
    equation = int(first_use.group(1)) if first_use else None
    return Step(raw.rule.name if raw.rule is not None else UNEXPLAINED, soundness, raw.reversed, raw.output,
                raw.path, equation, before, after, recheck(before, after, soundness, samples))


def _in_body(view, term: Term, seen: set | None = None) -> bool:
    """Whether `term` reads a loop body's inputs (`barg`): it only exists inside that body."""
    seen = set() if seen is None else seen
    if term in seen:
        return False
    seen.add(term)
    return view.nodes[term.node].op == "barg" or any(_in_body(view, k, seen) for k in term.kids)


def input_terms(loaded, view, roots: list[str] | None = None) -> list[Term]:
    """The input program's output terms in the saturated `view`: each node of the e-graph as loaded, found
    by its op, payload and (mapped) children among the saturated e-graph's nodes (a node constant folding
    retired, `mul 2.0 3.0`, among the retired ones of a view `with_retired`)."""
    index = {(n.op, canonical(n.payload), n.children): i for i, n in enumerate(view.nodes)}  # 0.0 != -0.0 here
    node_of: dict[str, int] = {}
    terms: dict[str, Term] = {}
    for cid, members in loaded.classes.items():  # leaves first: children are mapped before their parents
        node = loaded.nodes[members[0]]
        if not all(c in node_of for c in node.children):
            continue
        key = (node.op, canonical(node.payload), tuple(view.node_class[node_of[c]] for c in node.children))
        if key in index:
            node_of[cid] = index[key]
            terms[cid] = Term(index[key], tuple(terms[c] for c in node.children))
    return [terms[r] for r in (output_classes(loaded) if roots is None else roots)]


def chosen_terms(view, choice: dict[str, int]) -> list[Term]:
    memo: dict[str, Term] = {}

    def term(cls: str) -> Term:
        hit = memo.get(cls)
        if hit is None:
            i = choice[cls]
            hit = memo[cls] = Term(i, tuple(term(c) for c in view.nodes[i].children))
        return hit

    return [term(r) for r in output_classes(view)]


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
