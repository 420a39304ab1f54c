"""Which egglog rules can fire on a program: the rules worth registering for it.

A rule's query matches only where every constructor it names has a row, so a rule naming a constructor
that is not in the e-graph, and that no rule able to fire can create, never fires: leaving it out changes
nothing but the time spent registering and matching it. The live rules are a fixpoint: start from the
symbols of the loaded terms, add the symbols the actions of every rule whose needs are met can create,
until nothing changes.

Symbols are egglog constructor names (`p_mul`, `p_sort`, `scalar`, `call`), refined by a String literal first
argument (`call:remat2`, `jvp_of:sin:0`): a query needs the refined symbol, an action whose first
argument is a variable creates `call:*`, which meets every refinement. Functions and relations (the
analyses' facts) are not symbols: a rule is assumed able to find them.

A lazily built rule (`Rule.trigger`) is built only once its trigger symbol is present.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from egglog import bindings as eb
from egglog import declarations as ED

from rewrites.rule import Rule

ANY = "*"


class _Symbols:
    """Collects the symbols of egglog declarations: what a query needs (`creates` False: the refined symbol
    only) or what actions create (`creates` True: the constructor's name too)."""

    def __init__(self, decls: ED.Declarations, creates: bool):
        self.decls, self.creates = decls, creates
        self.found: set[str] = set()

    def walk(self, *nodes) -> set[str]:
        stack = list(nodes)
        while stack:
            n = stack.pop()
            if isinstance(n, ED.TypedExprDecl):
                stack.append(n.expr)
            elif isinstance(n, ED.CallDecl):
                self._call(n)
                stack.extend(n.args)
            elif isinstance(n, (tuple, list)):
                stack.extend(n)
            elif hasattr(n, "__dataclass_fields__") and not isinstance(n, (ED.JustTypeRef, ED.LitDecl,
                                                                             ED.UnboundVarDecl)):
                stack.extend(getattr(n, f) for f in n.__dataclass_fields__)
        return self.found

    def _call(self, call: ED.CallDecl) -> None:
        try:
            decl = self.decls.get_callable_decl(call.callable)
        except KeyError:  # egglog's own primitives (`!=`) are not declared: none is a constructor
            return
        if not isinstance(decl, ED.ConstructorDecl) or decl.egg_name is None:
            return
        name = decl.egg_name
        first = call.args[0] if call.args else None
        refined = None
        if first is not None and isinstance(first.expr, ED.LitDecl) and isinstance(first.expr.value, str):
            refined = f"{name}:{first.expr.value}"
        elif first is not None and self.creates and first.tp.ident.name == "String":
            refined = f"{name}:{ANY}"
        if refined is None or self.creates:
            self.found.add(name)
        if refined is not None:
            self.found.add(refined)


def _parts(egg) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """(needs, makes) of each direction of one egglog rule."""
    decl = egg.decl

    def needs(*nodes) -> frozenset[str]:
        return frozenset(_Symbols(egg.__egg_decls__, False).walk(*nodes))

    def makes(*nodes) -> frozenset[str]:
        return frozenset(_Symbols(egg.__egg_decls__, True).walk(*nodes))

    if isinstance(decl, ED.RuleDecl):
        return ((needs(decl.body), makes(decl.head)),)
    conditions = needs(decl.conditions)
    forward = (needs(decl.lhs) | conditions, makes(decl.rhs))
    if isinstance(decl, ED.BiRewriteDecl):
        return forward, (needs(decl.rhs) | conditions, makes(decl.lhs))
    return (forward,)


_PARTS: dict[int, tuple] = {}  # id(egg) -> (egg, its parts): eggs live as long as their rules


def parts(egg) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    hit = _PARTS.get(id(egg))
    if hit is None:
        hit = _PARTS[id(egg)] = (egg, _parts(egg))
    return hit[1]


_LIVE: OrderedDict[tuple, dict[int, Any]] = OrderedDict()  # (groups' rules, symbols) -> `live_eggs`
_LIVE_KEPT = 256  # programs of a test suite or a study repeat few symbol sets; the answer costs ~8 ms to compute


def live_eggs(groups: Sequence[Sequence[Rule]], present: Iterable[str]) -> dict[int, Any]:
    """`_live_eggs`, remembered for the `_LIVE_KEPT` most recent (rule lists, symbols) asked (rules are never
    rebuilt, so the answer for the same rule objects and symbols never changes)."""
    key = (tuple(tuple(group) for group in groups), frozenset(present))  # rules compare by identity
    hit = _LIVE.get(key)
    if hit is None:
        hit = _LIVE[key] = _live_eggs(groups, key[1])
        if len(_LIVE) > _LIVE_KEPT:
            _LIVE.popitem(last=False)
    else:
        _LIVE.move_to_end(key)
    return hit


def _live_eggs(groups: Sequence[Sequence[Rule]], present: Iterable[str]) -> dict[int, Any]:
    """The egglog rules (by id) of `groups`' rules that can fire on an e-graph holding the symbols `present`
    (the groups are the rule lists that run together: analyses, rules, prelude). Lazy rules are built
    when their trigger is present.

    A worklist over an index from each symbol to the rule directions needing it: a symbol becoming present
    meets those directions' needs only, so a call costs in the live rules, not in every rule per round.
    A need `c:r` is met by `c:r` or by `c:*` (made with any first argument)."""
    present = set(present)
    wild = {s[:-2] for s in present if s.endswith(":" + ANY)}
    unmet: list[set[str]] = []  # per direction
    makes_of: list[frozenset[str]] = []
    eggs: list[Any] = []
    by_symbol: dict[str, list[int]] = {}
    by_constructor: dict[str, list[int]] = {}
    lazy: dict[str, list[Rule]] = {}
    ready: list[int] = []

    def is_met(symbol: str) -> bool:
        return symbol in present or symbol.split(":", 1)[0] in wild

    def add_rule(rule: Rule) -> None:
        for egg in rule.egg:
            for needs, makes in parts(egg):
                d = len(eggs)
                eggs.append(egg)
                makes_of.append(makes)
                unmet.append({n for n in needs if not is_met(n)})
                for n in unmet[d]:
                    by_symbol.setdefault(n, []).append(d)
                    by_constructor.setdefault(n.split(":", 1)[0], []).append(d)
                if not unmet[d]:
                    ready.append(d)

    def met(d: int, symbols) -> None:
        if unmet[d]:
            unmet[d].difference_update(symbols)
            if not unmet[d]:
                ready.append(d)

    def make_present(symbols: Iterable[str]) -> None:
        for m in symbols:
            if m in present:
                continue
            present.add(m)
            for d in by_symbol.get(m, ()):
                met(d, (m,))
            for rule in lazy.pop(m, ()):
                add_rule(rule)
            if m.endswith(":" + ANY) and m[:-2] not in wild:
                constructor = m[:-2]
                wild.add(constructor)
                for d in by_constructor.get(constructor, ()):
                    met(d, [n for n in unmet[d] if n.split(":", 1)[0] == constructor])
                for t in [t for t in lazy if t.split(":", 1)[0] == constructor]:
                    for rule in lazy.pop(t):
                        add_rule(rule)

    for group in groups:
        for rule in group:
            if rule.trigger is None or is_met(rule.trigger):
                add_rule(rule)
            else:
                lazy.setdefault(rule.trigger, []).append(rule)
    live: dict[int, Any] = {}
    while ready:
        d = ready.pop()
        live[id(eggs[d])] = eggs[d]
        make_present(makes_of[d])
    return live


# --- symbols of loaded terms ---------------------------------------------------------------------------

def command_symbols(actions: Iterable) -> set[str]:
    """The symbols of the terms egglog-level load actions (`eb.Union`, `eb.Set`) create (every call's name:
    a function's name among them is harmless, no query needs it). A `Set`'s value is a fact about a term (a
    shape, a dtype), never a term itself."""
    found: set[str] = set()
    stack: list = []
    for a in actions:
        if isinstance(a, eb.Union):
            stack += [a.lhs, a.rhs]
        elif isinstance(a, eb.Set):
            stack += a.args
    while stack:
        e = stack.pop()
        if not isinstance(e, eb.Call):
            continue
        args = e.args
        found.add(e.name)
        if args and isinstance(args[0], eb.Lit) and isinstance(args[0].value, eb.String):
            found.add(f"{e.name}:{args[0].value.value}")
        stack.extend(args)
    return found


def expr_symbols(exprs: Iterable) -> set[str]:
    """The symbols of Python-level egglog expressions (a program's output terms)."""
    found: set[str] = set()
    for x in exprs:
        found |= _Symbols(x.__egg_decls__, True).walk(x.__egg_typed_expr__)
    return found
