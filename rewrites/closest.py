"""How close two e-classes came when saturation did not merge them: the pair of terms, one from each class,
that differ in the fewest places, and those places.

The distance of classes A and B is 0 when they are one class; otherwise the least of
- over pairs of nodes a in A, b in B with the same op, params and arity: the sum of their children's
  distances (the terms agree at the top and differ further down), and
- the sizes of A's and B's smallest terms added (the terms differ here: one difference).
Cycles through a pair being computed count as no way through, so every distance is a finite term's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rewrites.decode import args_classes, node_spec
from rewrites.egraph_view import EGraphView, canonical
from rewrites.terms import default_value

_LEAF_NAMES = {"inp": "in", "const": "const", "barg": "arg"}


@dataclass(frozen=True)
class Difference:
    left: str  # the left program's subterm, as text
    right: str


@dataclass
class Closest:
    """The closest pair of terms of two classes: `distance` counts the nodes of the differing subterms."""

    distance: int
    differences: list[Difference] = field(default_factory=list)

    def __str__(self) -> str:
        if not self.differences:
            return "the two sides are one e-class"
        places = "\n".join(f"  {d.left}   vs   {d.right}" for d in self.differences)
        return f"closest terms differ in {len(self.differences)} place(s) ({self.distance} nodes):\n{places}"


class Terms:
    """Each class's smallest term (node count, shared subterms counted each time) and its text."""

    def __init__(self, view: EGraphView):
        self.view = view
        self.size: dict[str, int] = {}
        self.best: dict[str, int] = {}
        changed = True
        while changed:  # Bellman-Ford style: sizes only fall, and a class's smallest term is finite
            changed = False
            for cid, members in view.classes.items():
                for i in members:
                    kids = view.nodes[i].children
                    if all(k in self.size for k in kids):
                        size = 1 + sum(self.size[k] for k in kids)
                        if size < self.size.get(cid, 1 << 62):
                            self.size[cid], self.best[cid] = size, i
                            changed = True

    def text(self, cid: str, node: int | None = None, depth: int = 0) -> str:
        """The smallest term of class `cid` (rooted at `node` if given) as `op[params](args)` text."""
        if cid not in self.best:
            return f"<{cid}: no finite term>"
        node_ix = self.best[cid] if node is None else node
        return node_text(self.view, node_ix, lambda k: self.text(k, depth=depth + 1) if depth < 12 else "...")


def node_text(view: EGraphView, i: int, child_text) -> str:
    node = view.nodes[i]
    if node.op in _LEAF_NAMES:
        return _LEAF_NAMES[node.op] + "".join(str(p) for p in node.payload)
    if node.op == "scalar":
        return repr(node.payload[0])
    if node.op == "nil":
        return "[]"
    if node.op == "cons":
        return "[" + ", ".join(map(child_text, [node.children[0], *args_classes(view, node.children[1])])) + "]"
    params = [canonical(p) for p in _shown_params(node) if p not in ("", ())]
    head = node.op + (f"[{', '.join(params)}]" if params else "")
    return f"{head}({', '.join(child_text(c) for c in node.children)})"


def _shown_params(node) -> list:
    """A node's payload without the keyword fields that hold their defaults (what a rule builds unasked)."""
    spec = node_spec(node)
    if spec is None:
        return list(node.payload)
    shown = list(node.payload[:spec.positional])
    for (name, _), value in zip(spec.keyword_fields, node.payload[spec.positional:], strict=True):
        try:
            if value == default_value(spec, name):
                continue
        except TypeError:  # no default: always shown
            pass
        shown.append(value)
    return shown


def closest(view: EGraphView, left: str, right: str, terms: Terms | None = None) -> Closest:
    """The closest pair of terms of classes `left` and `right` of `view`."""
    terms = terms or Terms(view)
    memo: dict[tuple[str, str], tuple[int, tuple | None]] = {}
    busy: set[tuple[str, str]] = set()
    unreachable = 1 << 40

    def distance(a: str, b: str) -> int:
        if a == b:
            return 0
        key = (a, b)
        if key in memo:
            return memo[key][0]
        if key in busy:
            return unreachable
        busy.add(key)
        best = (terms.size.get(a, unreachable) + terms.size.get(b, unreachable), None)
        for i in view.classes[a]:
            x = view.nodes[i]
            for j in view.classes[b]:
                y = view.nodes[j]
                if (x.op, x.payload, len(x.children)) != (y.op, y.payload, len(y.children)):
                    continue
                total = 0
                for ca, cb in zip(x.children, y.children, strict=True):
                    total += distance(ca, cb)
                    if total >= best[0]:
                        break
                if total < best[0]:
                    best = (total, (i, j))
        busy.discard(key)
        memo[key] = best
        return best[0]

    def differences(a: str, b: str, out: list[Difference]) -> None:
        if a == b:
            return
        _, pair = memo[(a, b)]
        if pair is None:
            out.append(Difference(terms.text(a), terms.text(b)))
            return
        i, j = pair
        for ca, cb in zip(view.nodes[i].children, view.nodes[j].children, strict=True):
            differences(ca, cb, out)

    total = distance(left, right)
    found: list[Difference] = []
    if total:
        differences(left, right, found)
    return Closest(total, found)
