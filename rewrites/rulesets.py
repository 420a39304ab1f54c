"""Named rule sets, and the analysis rules every run includes.

    strict    exact rules only: results are bit-identical
    default   exact + real + guarded
    accurate  default + the numerically stable forms (category `stability`), for an accuracy-aware cost, and the
              select-guarded forms (category `domain`)
    fast      every rule, unsafe ones included

The `stability` rules (rewrites/rules/stability.py) are `real`, but only `accurate` and `fast` take them: they
put the accurate form of a formula beside the naive one, which only a cost that prices error prefers; under
`flops` a complement such as 1 - logistic(x) -> logistic(-x) is a tie where logistic(x) is needed anyway, and
the greedy extractor, blind to that sharing, broke it the costly way in silu's derivatives (one more logistic).
The `domain` rules (exp(log x) -> x >= 0 ? x : nan, ...) are `real` too, and opt-in the same way: under
`flops` the select is cheaper than the transcendental pair, so in `default` they would rewrite every such pair
whose argument's sign is unknown into a select and a broadcast nan (more equations, fewer flops: the golden
record's `redundant_exp_log` changed in every derivation). `accurate` takes them (the select computes x exactly
where exp(log x) rounds twice), and `fast` has the unsafe `exp-log-any` beside them.

A rule spec is a set name, optionally followed by `,+NAME` / `,-NAME` items that add or remove single
rules (`default,-mul-comm`) and `,+FILE.rules` items that add the rules of a text rule file
(`rewrites.ruletext`), or an explicit list of `Rule`s.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from rewrites.rule import EXACT, GUARDED, REAL, UNSAFE, Rule, RuleError, check_rules

RULE_SETS: dict[str, frozenset[str]] = {
    "strict": frozenset({EXACT}),
    "default": frozenset({EXACT, REAL, GUARDED}),
    "accurate": frozenset({EXACT, REAL, GUARDED}),
    "fast": frozenset({EXACT, REAL, GUARDED, UNSAFE}),
    "none": frozenset(),
}
OPT_IN_CATEGORIES: dict[str, frozenset[str]] = {  # category -> the sets that take it
    "stability": frozenset({"accurate", "fast"}),
    "domain": frozenset({"accurate", "fast"}),
}


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every built-in algebraic rule, checked, in category order."""
    from rewrites.rules import CATEGORY_MODULES

    return tuple(check_rules(r for module in CATEGORY_MODULES for r in module.R.rules))


@cache
def analysis_rules() -> tuple[Rule, ...]:
    from rewrites.analyses import ANALYSIS_MODULES

    return tuple(check_rules(r for module in ANALYSIS_MODULES for r in module.R.rules))


def rules_in_set(name: str) -> list[Rule]:
    if name not in RULE_SETS:
        raise RuleError(f"unknown rule set {name!r}; choose from {', '.join(RULE_SETS)}")
    return [r for r in all_rules() if r.soundness in RULE_SETS[name]
            and name in OPT_IN_CATEGORIES.get(r.category, RULE_SETS)]


@cache
def _rule_file(name: str, resolved: str, mtime_ns: int) -> tuple[Rule, ...]:
    """A rule file's compiled rules, once per version of the file (errors name it as written): the engine
    caches its prepared e-graphs by rule identity, so recompiling the file for every program would
    register its rules again each time (~1 s)."""
    from rewrites.rulecompile import load_rules

    return tuple(load_rules(name))


def resolve_rules(spec: str | Sequence[Rule]) -> list[Rule]:
    if not isinstance(spec, str):
        return check_rules(spec)
    head, *items = [s.strip() for s in spec.split(",") if s.strip()]
    chosen = rules_in_set(head)
    by_name = {r.name: r for r in all_rules()}
    for item in items:
        sign, name = item[0], item[1:]
        if sign == "+" and name.endswith(".rules"):
            path = Path(name).resolve()
            loaded = list(_rule_file(name, str(path), path.stat().st_mtime_ns))
            names = {r.name for r in loaded}
            chosen = [r for r in chosen if r.name not in names] + loaded
            continue
        if sign not in "+-" or name not in by_name:
            raise RuleError(f"bad rule spec item {item!r}: use +NAME or -NAME with a built-in rule name, "
                            "or +FILE.rules")
        chosen = [r for r in chosen if r.name != name]
        if sign == "+":
            chosen.append(by_name[name])
    return chosen
