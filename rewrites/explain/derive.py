"""A derivation of one concrete term from another in the same e-class, rule application by rule application.

egglog 13 records no proofs, so the derivation is rebuilt from the saturated e-graph, the way egg's
explanations read a proof forest: two nodes of a class are linked by a rule when the rule's left side
matches a term rooted at one and its right side a term rooted at the other with the same bindings
(`rewrites.explain.match`). Making term t into term u (one class):
- same root node: make each kid of t into u's kid (congruence: steps inside);
- otherwise: the shortest chain of rule links from t's root node to u's (breadth-first, rules read left to
  right preferred), whose first link is applied: t's subterms at the rule's pattern positions are first
  made into the nodes the match used (steps inside, recursively), then the rule rewrites the whole; then
  again from the new root.
A link can be read right to left (`reversed`): equality is symmetric, and a term and its rewrite can both
descend from a third. A budget of steps bounds the search; what it cannot explain within it is one step
of the rule `UNEXPLAINED`, which the re-check still evaluates.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from rewrites.closest import Terms
from rewrites.egraph_view import EGraphView
from rewrites.explain.match import (
    VAR,
    Bindings,
    Literal,
    Position,
    Term,
    literal_form,
    match_class,
    match_node,
    operand_path,
)
from rewrites.pattern import App, Lit, Pattern, PatternRule, Var

UNEXPLAINED = "unexplained"
MAX_STEPS = 400


@dataclass(frozen=True)
class Link:
    """Rule `rule` rewrites a term rooted at node `source` into one rooted at `target`: the `start` side
    matched at `source` (`start_nodes`: the node each App or literal position matched), the `end` side at
    `target`, under `bindings`."""

    rule: PatternRule
    reversed: bool  # read right to left
    source: int
    target: int
    start: Pattern
    end: Pattern
    bindings: Bindings
    start_nodes: dict
    end_nodes: dict


@dataclass
class RawStep:
    output: int
    path: Position
    rule: PatternRule | None  # None: unexplained
    reversed: bool
    whole_before: Term  # the output's whole term before and after the step
    whole_after: Term

    @property
    def before(self) -> Term:
        return self.whole_before.at(self.path)

    @property
    def after(self) -> Term:
        return self.whole_after.at(self.path)


class Deriver:
    def __init__(self, view: EGraphView, rules: list[PatternRule], terms: Terms | None = None):
        self.view, self.terms = view, terms or Terms(view)
        self.sides = []  # (rule, reversed, start pattern, end pattern)
        rules = [literal_form(r) for r in rules]
        for r in rules:
            self.sides.append((r, False, r.lhs, r.rhs))
        for r in rules:
            self.sides.append((r, True, r.rhs, r.lhs))
        self._links: dict[int, list[Link]] = {}
        self._smallest: dict[str, Term] = {}
        self.steps: list[RawStep] = []
        self.program: list[Term] = []

    # -- links between the nodes of one class ----------------------------------------------------------------
    def links(self, a: int) -> list[Link]:
        hit = self._links.get(a)
        if hit is not None:
            return hit
        view, cls = self.view, self.view.node_class[a]
        out: list[Link] = []
        for rule, rev, start, end in self.sides:
            if isinstance(start, App):
                starts = match_node(view, start, a, {})
            elif isinstance(start, Var):
                starts = iter([({start.name: cls}, {(VAR, ()): start.name})])
            elif isinstance(start, Literal) and view.nodes[a].op == "scalar":
                starts = iter([({"literal:" + start.name: view.nodes[a].payload[0]}, {(): a})])
            else:
                continue
            for bound, start_nodes in starts:
                for b in view.classes[cls]:
                    if b == a:
                        continue
                    if isinstance(end, App):
                        ends = match_node(view, end, b, bound)
                    elif isinstance(end, Var) and end.name not in bound:
                        continue  # a variable only the end side has: nothing says what it is
                    else:
                        ends = match_class(view, end, cls, bound)
                    for bound2, end_nodes in ends:
                        if isinstance(end, Lit) and end_nodes.get(()) != b:
                            continue
                        out.append(Link(rule, rev, a, b, start, end, bound2, start_nodes, end_nodes))
                        break
        self._links[a] = out
        return out

    def route(self, a: int, b: int) -> list[Link] | None:
        """The shortest chain of links from node a to node b (same class), or None; one that wraps no term in a
        pattern (a link whose start side is a bare variable, `x -> exp(log x)` read right to left) if there is
        one. A wrapping link can undo the step it serves: to make log(m)'s m an exp for `log(exp t) -> t`,
        wrapping gives log(exp(log m)), whose t is log m, and the step rebuilds log(m)."""
        for wrap in (False, True):
            came: dict[int, Link | None] = {a: None}
            queue = deque([a])
            while queue:
                n = queue.popleft()
                if n == b:
                    chain = []
                    while came[n] is not None:
                        chain.append(came[n])
                        n = came[n].source
                    return chain[::-1]
                for link in self.links(n):
                    if link.target not in came and (wrap or not isinstance(link.start, Var)):
                        came[link.target] = link
                        queue.append(link.target)
        return None

    # -- concrete terms -------------------------------------------------------------------------------------
    def smallest(self, cls: str) -> Term:
        hit = self._smallest.get(cls)
        if hit is None:
            i = self.terms.best[cls]
            hit = self._smallest[cls] = Term(i, tuple(self.smallest(c) for c in self.view.nodes[i].children))
        return hit

    def rooted(self, node: int, like: Term | None = None) -> Term:
        """A term rooted at `node`: each kid taken from `like`'s kids when one has the class, else the smallest."""
        spare = list(like.kids) if like is not None else []
        kids = []
        for c in self.view.nodes[node].children:
            reuse = next((k for k in spare if self.view.node_class[k.node] == c), None)
            if reuse is not None:
                spare.remove(reuse)
            kids.append(reuse if reuse is not None else self.smallest(c))
        return Term(node, tuple(kids))

    # -- rewriting the program ------------------------------------------------------------------------------
    def at(self, out: int, path: Position) -> Term:
        return self.program[out].at(path)

    def record(self, out: int, path: Position, rule, rev: bool, after: Term) -> None:
        whole = self.program[out]
        self.program[out] = whole.replace(path, after)
        self.steps.append(RawStep(out, path, rule, rev, whole, self.program[out]))

    def make(self, out: int, path: Position, target: Term, depth: int = 0) -> None:
        """Rewrite the subterm at `path` of output `out` into `target` (one class), recording the steps."""
        while True:
            cur = self.at(out, path)
            if cur == target:
                return
            if len(self.steps) >= MAX_STEPS or depth > 64:
                self.record(out, path, None, False, target)
                return
            if cur.node == target.node:
                for i, kid in enumerate(target.kids):
                    self.make(out, path + (i,), kid, depth + 1)
                return
            if not self.reroot(out, path, target.node, depth):
                self.record(out, path, None, False, target)
                return

    def reroot(self, out: int, path: Position, node: int, depth: int) -> bool:
        """Rewrite the subterm at `path` until its root is `node` (its kids as the rules leave them); False
        when no chain of links leads there within the budget."""
        while self.at(out, path).node != node:
            chain = self.route(self.at(out, path).node, node)
            if not chain or len(self.steps) >= MAX_STEPS or depth > 64:
                return False
            self.apply(out, path, chain[0], depth)
        return True

    def apply(self, out: int, path: Position, link: Link, depth: int) -> None:
        """Apply `link` to the subterm at `path`: first make its subterms the nodes the match used."""
        for pos in sorted((p for p in link.start_nodes if p and p[0] != VAR), key=len):
            node = link.start_nodes[pos]
            if not self.reroot(out, path + pos, node, depth + 1):
                self.make(out, path + pos, self.rooted(node, self.at(out, path + pos)), depth + 1)
        cur = self.at(out, path)
        if cur.node != link.source:  # an inner step changed the root (it should not): plan again
            return
        seen: dict[str, Term] = {}
        for (_, pos), name in sorted((k, v) for k, v in link.start_nodes.items() if k and k[0] == VAR):
            term = cur.at(pos)
            if name in seen and seen[name] != term:
                self.make(out, path + pos, seen[name], depth + 1)
                cur = self.at(out, path)
            seen.setdefault(name, term)
        self.record(out, path, link.rule, link.reversed, self.build(link.end, link, seen, ()))

    def build(self, pattern: Pattern, link: Link, seen: dict[str, Term], pos: Position) -> Term:
        if isinstance(pattern, Var):
            return seen.get(pattern.name) or self.smallest(link.bindings[pattern.name])
        node = link.end_nodes[pos]
        if isinstance(pattern, (Lit, Literal)):
            return self.rooted(node)  # a scalar, or a broadcast of one (`match._is_filled`)
        kids = list(self.rooted(node).kids)
        for k, arg in enumerate(pattern.args):
            sub = operand_path(self.view, node, k)
            built = self.build(arg, link, seen, pos + sub)
            if len(sub) == 1:
                kids[sub[0]] = built
            else:
                kids[sub[0]] = kids[sub[0]].replace(sub[1:], built)
        return Term(node, tuple(kids))

