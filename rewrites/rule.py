"""Rule metadata: a rule is one line of data with a name, a category, a soundness class and its math.

    Rule(name="mul-one", category="arith", soundness="exact", math="x*1 -> x", built=(<egglog rewrite>,))

Soundness classes (see the project design):
    exact    bit-identical results for every input, special values included
    real     equal over the reals where the left side is defined; IEEE specials give the same kind of result;
             the sign of a zero may change (0 and -0 are one real: `0 - x -> -x` at +0), and with it the
             sign of an infinity a later division makes of it (`rewrites.verify.semantics` judges so)
    guarded  `real` under a side condition the engine proves with an analysis
    unsafe   true over the reals but changes special-value behaviour (x*0 -> 0)

Rule lists are checked on load (`check_rules`): kebab-case unique names, a known class, a math
comment, and no variable on the right-hand side that the left side and conditions do not bind.

Tables of many rules of which a program needs few (the AD and batching rules, one per primitive) build
them lazily: `Rule.lazy(..., build, trigger=...)` builds its egglog rules on first use of `egg` (and checks
them then); `trigger` names a symbol the rules' queries need (`rewrites.liveness`), so the engine builds
only the rules whose trigger is in the e-graph.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from egglog import RewriteOrRule, birewrite, rewrite, rule
from egglog import declarations as ED

SOUNDNESS = ("exact", "real", "guarded", "unsafe")
EXACT, REAL, GUARDED, UNSAFE = SOUNDNESS
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True, eq=False)
class Rule:
    name: str
    category: str
    soundness: str
    math: str
    built: tuple[RewriteOrRule, ...] | None = field(repr=False)  # None until `build` runs (lazy rules)
    # Rules that can grow the e-graph without bound (assoc/comm) run under back-off in their own group.
    explosive: bool = False
    build: Callable[[], tuple[RewriteOrRule, ...]] | None = field(default=None, repr=False)
    trigger: str | None = None  # a symbol every egglog rule of a lazy rule needs (`rewrites.liveness`)
    # Rules run to saturation with the analyses before each pass of the others (constant folding: what they
    # retire is gone before another rule could build on it).
    eager: bool = False

    @classmethod
    def lazy(cls, name: str, category: str, soundness: str, math: str, build: Callable[[], tuple], *,
             trigger: str, explosive: bool = False) -> Rule:
        return cls(name, category, soundness, math, None, explosive, build, trigger)

    @property
    def egg(self) -> tuple[RewriteOrRule, ...]:
        if self.built is None:
            built = tuple(self.build())
            _check_eggs(self.name, built)
            object.__setattr__(self, "built", built)
        return self.built

    def __str__(self) -> str:
        return f"{self.name:32} {self.category:12} {self.soundness:8} {self.math}"


class RuleBook:
    """Builds the rules of one category: `R = RuleBook("arith")`, then `R.rw(...)` per rule."""

    def __init__(self, category: str):
        self.category = category
        self.rules: list[Rule] = []

    def rw(self, name: str, soundness: str, lhs: Any, rhs: Any, *when: Any, math: str,
           explosive: bool = False, subsume: bool = False, eager: bool = False) -> Rule:
        """`lhs => rhs` (if every condition in `when` holds); `subsume=True` also retires the matched node: no rule
        matches it again and extraction never picks it (`rewrites.backoff` says why the engine's schedule allows
        this), though a derivation may pass through it (`EGraphView.with_retired`)."""
        return self._add(name, soundness, math, (rewrite(lhs, subsume=subsume).to(rhs, *when),), explosive, eager)

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

    def _add(self, name, soundness, math, egg, explosive, eager=False) -> Rule:
        r = Rule(name, self.category, soundness, math, egg, explosive, eager=eager)
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
        if r.built is not None:  # a lazy rule is checked when it is built
            _check_eggs(r.name, r.built)
    return rules


def _check_eggs(name: str, eggs: tuple[RewriteOrRule, ...]) -> None:
    for egg in eggs:
        unbound = _unbound_rhs_vars(egg)
        if unbound:
            raise RuleError(f"rule {name!r}: right-hand side uses unbound variables {sorted(unbound)}")


def _unbound_rhs_vars(egg: RewriteOrRule) -> set[str]:
    decl = egg.decl
    if hasattr(decl, "lhs"):  # rewrite / birewrite
        bound = _vars_in(decl.lhs) | set().union(*(_vars_in(c) for c in decl.conditions))
        return _vars_in(decl.rhs) - bound
    bound = set().union(*(_vars_in(f) for f in decl.body))
    used = set().union(*(_vars_in(a) for a in decl.head))
    return used - bound - _vars_bound_by_let(decl.head)


_LEAVES = (ED.LitDecl, ED.JustTypeRef, ED.PyObjectDecl, ED.LetRefDecl, ED.DummyDecl)


def _vars_in(node: Any) -> set[str]:
    """Names of pattern variables anywhere inside an egglog declaration object."""
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ED.TypedExprDecl):
            stack.append(n.expr)
        elif isinstance(n, ED.CallDecl):
            stack.extend(n.args)
        elif isinstance(n, ED.UnboundVarDecl):
            found.add(n.name)
        elif isinstance(n, (tuple, list)):
            stack.extend(n)
        elif hasattr(n, "__dataclass_fields__") and not isinstance(n, _LEAVES):
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__)
    return found


def _vars_bound_by_let(actions: Any) -> set[str]:
    return {a.name for a in actions if isinstance(a, ED.LetDecl)}
