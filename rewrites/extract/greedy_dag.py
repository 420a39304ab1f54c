"""Greedy DAG extraction (extraction-gym's "faster-greedy-dag", run on the bottom-up driver).

Each class keeps the set of classes of its chosen sub-DAG and that set's cost (each class counted
once). A node's value is cost[node] + the cost of the union of its children's sets; each class takes
its cheapest node. This is greedy, not optimal: a class picks its own cheapest sub-DAG without
knowing what its parents share elsewhere.

Because the driver makes classes final in order of value, a class's set is built once, from final
sets only, so sets are never stale and the choice is acyclic by construction (the fixpoint version
in extraction-gym can leave stale sets behind). Sets are frozensets of class numbers, closed
downward (a class's set holds its children's sets). A candidate's value is the largest child set's
cost plus the cost of the classes the other children add (C-level set difference; a child already in
the largest set adds nothing and is skipped in O(1)), and the full set is only copied when the node
wins its class: time O(E log N + the smaller children's sets over all candidates + the set sizes of
all classes), at worst O(N * C) for N nodes and C classes (a deep chain of classes each sharing
nothing with its siblings); memory O(sum of set sizes), at worst O(C^2).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from rewrites.egraph_view import EGraphView
from rewrites.extract.result import Cost, Extraction, finish, normalize_costs
from rewrites.extract.tree import bottom_up, check_roots

_EMPTY: frozenset[int] = frozenset()


def greedy_dag_choice(view: EGraphView, cost: list[Cost], stop_at_roots: bool = True) -> dict[int, int]:
    """Best node per class number by greedy DAG cost (for every class with a finite term unless
    `stop_at_roots`)."""
    ix = view.index
    members: list[frozenset[int]] = [_EMPTY] * len(ix.class_ids)
    total: list[Cost] = [0] * len(ix.class_ids)
    own: list[Cost] = [0] * len(ix.class_ids)
    floats = any(type(v) is float for v in cost)

    def added_cost(classes: frozenset[int]) -> Cost:
        return math.fsum(own[d] for d in classes) if floats else sum(own[d] for d in classes)

    def evaluate(n: int) -> tuple[Cost, tuple[int, frozenset[int]] | None]:
        kids = sorted(set(ix.children[n]))
        if not kids:
            return cost[n], None
        largest = max(kids, key=lambda d: (len(members[d]), -d))
        base = members[largest]
        # Sets are downward closed (a class's set holds its children's sets), so a child already in
        # the largest set adds nothing.
        extra = _EMPTY.union(*(members[d] for d in kids if d not in base)) - base
        return cost[n] + total[largest] + added_cost(extra), (largest, extra)

    def on_final(c: int, n: int, value: Cost, data: tuple[int, frozenset[int]] | None) -> None:
        if data is None:
            members[c] = frozenset((c,))
        else:
            largest, extra = data
            members[c] = members[largest].union(extra, (c,))
        total[c], own[c] = value, cost[n]

    return bottom_up(view, cost, evaluate, on_final, stop_at_roots)


def extract_greedy_dag(view: EGraphView, cost: Sequence[Cost], **options) -> Extraction:
    """Greedy DAG extraction: shared subterms counted once per class's sub-DAG. No options."""
    if options:
        raise TypeError(f"greedy_dag extraction takes no options, got {sorted(options)}")
    start = time.perf_counter()
    cost = normalize_costs(view, cost)
    chosen = greedy_dag_choice(view, cost)
    check_roots(view, "greedy_dag", chosen)
    return finish(view, "greedy_dag", chosen, cost, "greedy", time.perf_counter() - start)
