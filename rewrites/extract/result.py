"""What every extractor returns, and the exact cost arithmetic they share.

Costs stay exact: Python ints (never fixed width) are summed with `sum`; as soon as one cost is a
float, sums use `math.fsum`, whose correctly rounded result does not depend on the order of terms.
`math.inf` marks a node that must never be chosen.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ir.errors import EqjaxError
from rewrites.egraph_view import EGraphView

Cost = int | float


class UnextractableError(EqjaxError, ValueError):
    """A root class has no finite term: every node of it needs a cycle, an infinite cost or such a class."""

    def __init__(self, method: str, roots: Sequence[str]):
        self.method, self.roots = method, list(roots)
        super().__init__(f"{method} extraction: root class(es) {', '.join(map(repr, self.roots))} have no "
                         "finite term (every node needs a cycle or an infinite-cost node); "
                         "saturation must keep a base case for each output")


@dataclass
class Extraction:
    method: str  # "tree", "greedy_dag" or "ilp"
    choice: dict[str, int]  # class id -> chosen node, for every class reachable from the roots
    dag_cost: Cost  # each chosen node counted once
    tree_cost: Cost  # sum over the roots (as listed) of their tree cost: shared subterms counted per use
    status: str  # "tree", "greedy", "optimal", "time-limit-fallback", ...
    seconds: float
    view: EGraphView = field(repr=False, compare=False)

    def order(self) -> list[str]:
        """The chosen classes, children before parents (the order a decoder emits equations in)."""
        ix = self.view.index
        chosen = {ix.class_of[cid]: n for cid, n in self.choice.items()}
        return [ix.class_ids[c] for c in postorder(ix, chosen, ix.roots)]

    def expr(self, class_id: str | None = None) -> str:
        """The chosen term of a class (default: the first root) as an s-expression, for tests and
        debugging; shared subterms are written out each time, so this can be exponentially long."""
        cid = self.view.roots[0] if class_id is None else class_id
        node = self.view.nodes[self.choice[cid]]
        if not node.children:
            return node.op
        return f"({node.op} {' '.join(self.expr(ch) for ch in node.children)})"


def normalize_costs(view: EGraphView, cost: Sequence[Cost] | np.ndarray) -> list[Cost]:
    """`cost[i]` for every node as a Python int or float, checked non-negative and not NaN."""
    values = list(cost.tolist() if isinstance(cost, np.ndarray) else cost)
    if len(values) != len(view.nodes):
        raise ValueError(f"cost has {len(values)} entries but the e-graph has {len(view.nodes)} nodes")
    out: list[Cost] = []
    for i, v in enumerate(values):
        if isinstance(v, numbers.Integral):
            v = int(v)
        elif isinstance(v, numbers.Real):
            v = float(v)
        else:
            raise TypeError(f"cost of node {i} ({view.nodes[i].op}) must be a real number, got {v!r}")
        if v != v or v < 0:
            raise ValueError(f"cost of node {i} ({view.nodes[i].op}) must be non-negative, got {v!r}")
        out.append(v)
    if any(type(v) is float for v in out):
        out = [float(v) for v in out]
    return out


def exact_sum(values: Iterable[Cost]) -> Cost:
    values = list(values)
    return math.fsum(values) if any(type(v) is float for v in values) else sum(values)


def postorder(ix, chosen: dict[int, int], roots: Sequence[int]) -> list[int]:
    """Classes reachable from `roots` through `chosen` nodes, children first; checks the choice."""
    state: dict[int, int] = {}  # 1 = on the stack, 2 = done
    order: list[int] = []
    for root in roots:
        if root in state:
            continue
        stack = [(root, 0)]
        state[root] = 1
        while stack:
            c, k = stack.pop()
            if c not in chosen:
                raise ValueError(f"class {ix.class_ids[c]!r} is reachable but has no chosen node")
            node = chosen[c]
            if ix.node_class[node] != c:
                raise ValueError(f"node {node} chosen for class {ix.class_ids[c]!r} belongs to "
                                 f"{ix.class_ids[ix.node_class[node]]!r}")
            kids = ix.children[node]
            if k < len(kids):
                stack.append((c, k + 1))
                d = kids[k]
                if state.get(d) == 1:
                    raise ValueError(f"the choice has a cycle through class {ix.class_ids[d]!r}")
                if d not in state:
                    state[d] = 1
                    stack.append((d, 0))
            else:
                state[c] = 2
                order.append(c)
    return order


def finish(view: EGraphView, method: str, chosen: dict[int, int], cost: list[Cost], status: str,
           seconds: float) -> Extraction:
    """The Extraction of per-class-number choices `chosen`, kept only where reachable from the roots."""
    ix = view.index
    order = postorder(ix, chosen, ix.roots)
    tree: dict[int, Cost] = {}
    for c in order:
        node = chosen[c]
        tree[c] = exact_sum([cost[node], *(tree[d] for d in ix.children[node])])
    return Extraction(method=method,
                      choice={ix.class_ids[c]: chosen[c] for c in order},
                      dag_cost=exact_sum(cost[chosen[c]] for c in order),
                      tree_cost=exact_sum(tree[r] for r in ix.roots),
                      status=status, seconds=seconds, view=view)


def validate(view: EGraphView, choice: dict[str, int]) -> None:
    """Raise ValueError unless `choice` picks a node of each class reachable from the roots through
    chosen nodes, and those nodes form no cycle."""
    ix = view.index
    postorder(ix, {ix.class_of[cid]: n for cid, n in choice.items()}, ix.roots)
