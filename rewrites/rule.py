"""Rule metadata: a rule is one line of data with a name, a category, a soundness class and its math.

    Rule(name="mul-one", category="arith", soundness="exact", math="x*1 -> x", egg=<egglog rewrite>)

Soundness classes (see the project design):
    exact    bit-identical results for every input, special values included
    real     equal over the reals where the left side is defined; IEEE specials give the same kind of result
    guarded  `real` under a side condition the engine proves with an analysis
    unsafe   true over the reals but changes special-value behaviour (x*0 -> 0)

Rule lists are checked on load (`check_rules`): kebab-case unique names, a known class, a math
comment, and no variable on the right-hand side that the left side and conditions do not bind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from egglog import RewriteOrRule, birewrite, rewrite, rule

SOUNDNESS = ("exact", "real", "guarded", "unsafe")
EXACT, REAL, GUARDED, UNSAFE = SOUNDNESS
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Rule:
    name: str
    category: str
    soundness: str
    math: str
    egg: tuple[RewriteOrRule, ...] = field(repr=False)
    # Rules that can grow the e-graph without bound (assoc/comm) run under back-off in their own group.
    explosive: bool = False

    def __str__(self) -> str:
        return f"{self.name:32} {self.category:12} {self.soundness:8} {self.math}"


class RuleBook:
    """Builds the rules of one category: `R = RuleBook("arith")`, then `R.rw(...)` per rule."""

    def __init__(self, category: str):
        self.category = category
        self.rules: list[Rule] = []

    def rw(self, name: str, soundness: str, lhs: Any, rhs: Any, *when: Any, math: str,
           explosive: bool = False) -> Rule:
        """`lhs => rhs` (if every condition in `when` holds)."""
        return self._add(name, soundness, math, (rewrite(lhs).to(rhs, *when),), explosive)

    def birw(self, name: str, soundness: str, lhs: Any, rhs: Any, *when: Any, math: str,
             explosive: bool = False) -> Rule:
        """`lhs <=> rhs`, both directions."""
        return self._add(name, soundness, math, (birewrite(lhs).to(rhs, *when),), explosive)

    def rule(self, name: str, soundness: str, facts: Iterable[Any], actions: Iterable[Any], *, math: str,
             explosive: bool = False) -> Rule:
        """A general egglog rule: when every fact holds, run the actions (unions, sets)."""
        return self._add(name, soundness, math, (rule(*facts).then(*actions),), explosive)

    def family(self, name: str, soundness: str, eggs: Iterable[RewriteOrRule], *, math: str,
               explosive: bool = False) -> Rule:
        """One named rule made of several egglog rules (one per primitive, per rank, ...)."""
        return self._add(name, soundness, math, tuple(eggs), explosive)

    def _add(self, name, soundness, math, egg, explosive) -> Rule:
        r = Rule(name, self.category, soundness, math, egg, explosive)
        self.rules.append(r)
        return r


class RuleError(ValueError):
    """A malformed rule list (names the rule and what is wrong)."""


def check_rules(rules: Iterable[Rule]) -> list[Rule]:
    rules = list(rules)
    seen: set[str] = set()
    for r in rules:
        if not _NAME.match(r.name):
            raise RuleError(f"rule {r.name!r}: names are kebab-case ([a-z0-9] words joined by '-')")
        if r.name in seen:
            raise RuleError(f"rule {r.name!r} is defined twice")
        seen.add(r.name)
        if r.soundness not in SOUNDNESS:
            raise RuleError(f"rule {r.name!r}: soundness {r.soundness!r} is not one of {SOUNDNESS}")
        if not r.math.strip():
            raise RuleError(f"rule {r.name!r} has no math comment")
        for egg in r.egg:
            unbound = _unbound_rhs_vars(egg)
            if unbound:
                raise RuleError(f"rule {r.name!r}: right-hand side uses unbound variables {sorted(unbound)}")
    return rules


def _unbound_rhs_vars(egg: RewriteOrRule) -> set[str]:
    decl = egg.decl
    if hasattr(decl, "lhs"):  # rewrite / birewrite
        bound = _vars_in(decl.lhs) | set().union(*(_vars_in(c) for c in decl.conditions))
        return _vars_in(decl.rhs) - bound
    bound = set().union(*(_vars_in(f) for f in decl.body))
    used = set().union(*(_vars_in(a) for a in decl.head))
    return used - bound - _vars_bound_by_let(decl.head)


def _vars_in(node: Any) -> set[str]:
    """Names of pattern variables anywhere inside an egglog declaration object."""
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n).__name__ == "UnboundVarDecl":
            found.add(n.name)
            continue
        if isinstance(n, (tuple, list)):
            stack.extend(n)
        elif hasattr(n, "__dataclass_fields__"):
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__)
    return found


def _vars_bound_by_let(actions: Any) -> set[str]:
    return {a.name for a in actions if type(a).__name__ == "LetDecl"}
