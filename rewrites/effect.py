"""What rules do to real programs: how often each one fires, and what the extracted programs cost with
and without it.

    effects, skipped = rule_effect(rules, corpus(), base="default", cost="flops")
    effect_tasks(program_specs, text, file, base, cost)      # the same, one `eval.study` task per program

Each program is optimized once with the base rule set plus `rules` (counting every rule's matches), and
once more without each of `rules` that matched there; `saved` is the cost without the rule minus the
cost with it, summed over the programs (> 0: the rule pays for itself; 0: the others find the same
program; < 0: it steers the bounded saturation somewhere worse).

    add_verdicts(effects, patterns, budget=VERDICT_BUDGET)

gives each rule the verdict of `eqjax rules verify` (`rewrites.verify`: ok | misclassified | unsound |
unknown, with the counterexample or reason), from the same checker run on just these rules with a smaller
hypothesis budget; the table marks the rules whose verdict is not `ok`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ir.core import ClosedJaxpr
from ir.errors import EqjaxError
from rewrites.engine import Limits, optimize
from rewrites.pattern import PatternRule
from rewrites.rule import Rule
from rewrites.rulesets import resolve_rules


@dataclass
class RuleEffect:
    name: str
    matches: int = 0  # over every program
    programs: list[str] = field(default_factory=list)  # the programs where it matched
    cost_with: float = 0  # summed over those programs
    cost_without: float = 0
    verdict: str = ""  # of `eqjax rules verify` (add_verdicts); "" when not checked
    verdict_note: str = ""  # the counterexample or the reason, when the verdict is not ok

    @property
    def saved(self) -> float:
        return self.cost_without - self.cost_with

    def as_dict(self) -> dict:
        return {"name": self.name, "matches": self.matches, "programs": len(self.programs),
                "cost_with": self.cost_with, "cost_without": self.cost_without, "saved": self.saved,
                "verdict": self.verdict, "verdict_note": self.verdict_note}


def corpus(paths: Iterable[str | Path] | None = None) -> list[tuple[str, ClosedJaxpr]]:
    """Named programs: jaxpr text files (`*.jaxpr`) and oracle fixture files (`*.json`, every case) under
    `paths`; by default the oracle's whole programs."""
    from eval.oracle import load_fixtures, parse_case
    from ir.text import parse_jaxpr

    if paths is None:
        from eval.oracle import DEFAULT_ORACLE as ORACLE

        return [(c.id, parse_case(c)) for c in load_fixtures([ORACLE], ["programs"])]
    out = []
    for p in map(Path, paths):
        files = sorted(p.glob("*.jaxpr")) + sorted(p.glob("*.json")) if p.is_dir() else [p]
        for f in files:
            if f.suffix == ".json":
                out += [(c.id, parse_case(c)) for c in load_fixtures([f])]
            else:
                out.append((f.stem, parse_jaxpr(f.read_text())))
    return out


def rule_effect(rules: Sequence[Rule], programs: Sequence[tuple[str, ClosedJaxpr]], base: str = "default",
                cost: str = "flops", limits: Limits | None = None) -> tuple[list[RuleEffect], list[tuple[str, str]]]:
    """The effect of each of `rules` over `programs` (see the module docstring), and the programs that
    could not be optimized, with the reason."""
    return sum_effects([r.name for r in rules],
                       [(name, effect_on_program(closed, rules, base, cost, limits)) for name, closed in programs])


def effect_on_program(closed: ClosedJaxpr, rules: Sequence[Rule], base: str = "default", cost: str = "flops",
                      limits: Limits | None = None) -> dict:
    """What `rules` do to one program: {"matches": {rule: k}, "cost_with": c, "cost_without": {rule: c}} over
    the rules that matched, or {"skipped": reason} when the program cannot be optimized."""
    chosen = {r.name for r in rules}
    base_rules = [r for r in resolve_rules(base) if r.name not in chosen]
    try:
        _, report = optimize(closed, rules=[*base_rules, *rules], cost=cost, limits=limits)
        matches = {r.name: report.rule_matches[r.name] for r in rules if report.rule_matches.get(r.name, 0)}
        without = {}
        for name in matches:
            others = [q for q in rules if q.name != name]
            without[name] = optimize(closed, rules=[*base_rules, *others], cost=cost, limits=limits)[1].cost_after
    except EqjaxError as e:
        return {"skipped": f"{type(e).__name__}: {e}"}
    return {"matches": matches, "cost_with": report.cost_after, "cost_without": without}


def sum_effects(names: Sequence[str], outcomes: Sequence[tuple[str, dict]]) -> tuple[list[RuleEffect],
                                                                                     list[tuple[str, str]]]:
    """The effects of the rules `names` summed over (program name, `effect_on_program`) pairs, in that order,
    and the skipped programs with the reason."""
    effects = {name: RuleEffect(name) for name in names}
    skipped = []
    for program, outcome in outcomes:
        if "skipped" in outcome:
            skipped.append((program, outcome["skipped"]))
            continue
        for name, k in outcome["matches"].items():
            effect = effects[name]
            effect.matches += k
            effect.programs.append(program)
            effect.cost_with += outcome["cost_with"]
            effect.cost_without += outcome["cost_without"][name]
    return [effects[name] for name in names], skipped


def effect_tasks(programs: Sequence[dict], text: str, file: str, base: str, cost: str) -> list:
    """One `eval.study` task per program (`eval.study.programs` specs): the rules of the rule file `text`."""
    from eval.study import Task

    return [Task("rewrites.effect:effect_task", {"program": p, "text": text, "file": file, "base": base, "cost": cost})
            for p in programs]


def effect_task(program: dict, text: str, file: str, base: str, cost: str) -> dict:
    from eval.study.programs import load_program

    try:
        closed = load_program(program)
    except EqjaxError as e:
        return {"skipped": f"{type(e).__name__}: {e}"}
    return effect_on_program(closed, _file_rules(text, file), base, cost)


@cache
def _file_rules(text: str, file: str) -> tuple[Rule, ...]:
    from rewrites.rulecompile import rules_from_text

    return tuple(rules_from_text(text, file))


VERDICT_BUDGET = 100  # hypothesis examples per rule and dtype (`rules verify` defaults to 1000)


def add_verdicts(effects: Sequence[RuleEffect], patterns: Sequence[PatternRule], budget: int = VERDICT_BUDGET) -> None:
    """Set each effect's verdict from `rewrites.verify` on the `patterns` of the same rule file."""
    from rewrites.verify import merge_verdicts, verify_rules

    set_verdicts(effects, merge_verdicts(verify_rules(patterns, budget=budget)))


def set_verdicts(effects: Sequence[RuleEffect], verdicts: Iterable) -> None:
    """Set each effect's verdict and note from the `Verdict` of the same name."""
    verdicts = {v.name: v for v in verdicts}
    for e in effects:
        v = verdicts.get(e.name)
        if v is None:
            e.verdict, e.verdict_note = "unknown", "no pattern of this name in the file"
            continue
        e.verdict = v.verdict
        if v.verdict != "ok":
            e.verdict_note = str(v.counterexample) if v.counterexample else v.reason


def format_effects(effects: Sequence[RuleEffect], n_programs: int) -> str:
    """The table; with verdicts, a verdict column, `!` before a rule whose verdict is not ok, and its note."""
    checked = any(e.verdict for e in effects)
    head = "  verdict" if checked else ""
    lines = [f"  {'rule':<32}{'matches':>9}{'programs':>10}{'cost with':>14}{'without':>14}{'saved':>12}{head}"]
    for e in effects:
        mark = "! " if checked and e.verdict != "ok" else "  "
        verdict = f"{e.verdict:<15}" if checked else ""
        lines.append(f"{mark}{e.name:<32}{e.matches:>9}{len(e.programs):>10}{e.cost_with:>14,.0f}"
                     f"{e.cost_without:>14,.0f}{e.saved:>12,.0f}  {verdict}".rstrip())
    fired = sum(1 for e in effects if e.matches)
    lines.append(f"{fired} of {len(effects)} rules fired over {n_programs} programs")
    flagged = [e for e in effects if checked and e.verdict != "ok"]
    if flagged:
        lines.append(f"{len(flagged)} rules whose verdict is not ok (details: `eqjax rules verify --load FILE`):")
        lines += [f"  {e.name}: {e.verdict}" + (f": {e.verdict_note}" if e.verdict_note else "") for e in flagged]
    return "\n".join(lines)
