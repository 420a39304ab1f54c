"""Tree-cost extraction, and the bottom-up driver greedy DAG extraction shares.

The driver is Knuth's generalization of Dijkstra's algorithm to superior functions: a node becomes
a candidate once each of its child classes is final, with the value `evaluate(node)`; the cheapest
candidate of all makes its class final, ties going to the term with fewer unpriced equations (of cost
0, `EGraphView.is_equation`: a cost model that prices data movement at 0 cannot tell `x[1:][1:]` from
`x[2:]`; the equations it prices are in the value already), then to node rank. Values and those
counts never decrease along a node's children (costs are non-negative), so the first candidate popped
for a class is its best, no value ever needs revising, and cycles need no special case: a node inside
a cycle only becomes a candidate once its class is already final (through some acyclic node), and is
then dropped. A class that is never made final has no finite term. Time O(E log N) for N nodes and E
child edges, plus `evaluate`.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from rewrites.egraph_view import EGraphView
from rewrites.extract.result import Cost, Extraction, UnextractableError, exact_sum, finish, normalize_costs


def bottom_up(view: EGraphView, cost: list[Cost], evaluate: Callable[[int], tuple[Cost, int, Any]],
              on_final: Callable[[int, int, Cost, Any], None], stop_at_roots: bool = True) -> dict[int, int]:
    """Best node per class number, by the value and the count of unpriced equations `evaluate(node) -> (value,
    unpriced, data)`, which may read anything `on_final(class, node, value, data)` stored for the node's (final)
    child classes. With `stop_at_roots`, stops as soon as every root class is final."""
    ix, rank = view.index, view.node_rank
    waiting = [len(set(kids)) for kids in ix.children]
    parents: list[list[int]] = [[] for _ in ix.class_ids]
    for n, kids in enumerate(ix.children):
        for d in sorted(set(kids)):
            parents[d].append(n)
    heap = []
    for n in range(len(ix.children)):
        if waiting[n] == 0 and cost[n] != math.inf:
            value, eqns, data = evaluate(n)
            heap.append((value, eqns, rank[n], n, data))
    heapq.heapify(heap)
    chosen: dict[int, int] = {}
    roots_left = set(ix.roots) if stop_at_roots else None
    if roots_left is not None and not roots_left:
        return chosen
    while heap:
        value, _, _, n, data = heapq.heappop(heap)
        c = ix.node_class[n]
        if c in chosen:
            continue
        chosen[c] = n
        on_final(c, n, value, data)
        if roots_left is not None:
            roots_left.discard(c)
            if not roots_left:
                break
        for p in parents[c]:
            waiting[p] -= 1
            if waiting[p] == 0 and ix.node_class[p] not in chosen and cost[p] != math.inf:
                value, eqns, data = evaluate(p)
                heapq.heappush(heap, (value, eqns, rank[p], p, data))
    return chosen


def unpriced_equations(view: EGraphView, cost: list[Cost]) -> list[bool]:
    """Whether each node is an equation the cost prices at 0 (data movement under `flops`): the work a cost tie
    breaks on."""
    return [eqn and c == 0 for eqn, c in zip(view.is_equation, cost, strict=True)]


def check_roots(view: EGraphView, method: str, chosen: dict[int, int]) -> None:
    ix = view.index
    missing = [ix.class_ids[r] for r in dict.fromkeys(ix.roots) if r not in chosen]
    if missing:
        raise UnextractableError(method, missing)


def tree_costs(view: EGraphView, cost: list[Cost], stop_at_roots: bool = True) -> tuple[dict[int, int], list]:
    """Best node per class by tree cost, and each class's optimal tree cost (None if it has no term)."""
    ix = view.index
    best: list[Cost | None] = [None] * len(ix.class_ids)
    eqns: list[int] = [0] * len(ix.class_ids)  # unpriced equations in each final class's tree
    unpriced = unpriced_equations(view, cost)

    def evaluate(n: int) -> tuple[Cost, int, int]:
        kids = ix.children[n]
        size = unpriced[n] + sum(eqns[d] for d in kids)
        return exact_sum([cost[n], *(best[d] for d in kids)]), size, size

    def on_final(c: int, n: int, value: Cost, size: int) -> None:
        best[c], eqns[c] = value, size

    return bottom_up(view, cost, evaluate, on_final, stop_at_roots), best


def extract_tree(view: EGraphView, cost: Sequence[Cost], **options) -> Extraction:
    """Each class takes the node minimizing cost[node] + the tree costs of its children (with
    multiplicity), ties to fewer unpriced equations: optimal tree cost, no regard for sharing. No options."""
    if options:
        raise TypeError(f"tree extraction takes no options, got {sorted(options)}")
    start = time.perf_counter()
    cost = normalize_costs(view, cost)
    chosen, _ = tree_costs(view, cost)
    check_roots(view, "tree", chosen)
    return finish(view, "tree", chosen, cost, "tree", time.perf_counter() - start)
