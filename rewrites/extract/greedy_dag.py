"""Greedy DAG extraction (extraction-gym's "faster-greedy-dag", run on the bottom-up driver), then sharing
(`rewrites.extract.share`: a class takes a node the rest of the program already pays for when that is cheaper).

Each class keeps the set of classes of its chosen sub-DAG and that set's cost (each class counted
once). A node's value is cost[node] + the cost of the union of its children's sets; each class takes
its cheapest node, on a tie the one whose sub-DAG holds fewer unpriced equations (`tree.bottom_up`). This is
greedy, not optimal: a class picks its own cheapest sub-DAG without knowing what its parents share elsewhere.

Because the driver makes classes final in order of value, a class's set is built once, from final
sets only, so sets are never stale and the choice is acyclic by construction (the fixpoint version
in extraction-gym can leave stale sets behind). Sets are bitsets of class numbers (Python ints:
a union is one C-level OR, and a 10,000-deep chain holds 12 MB of sets where frozensets held 2 GB), closed
downward (a class's set holds its children's sets). A candidate's value is the largest child set's
cost plus the cost of the classes the other children add (a child already in the largest set adds
nothing and is skipped), and the full set is only copied when the node wins its class: time
O(E log N + E * C / 64) word operations plus the classes the smaller children add over all candidates,
for N nodes, E child edges and C classes; memory C^2 / 8 bytes at worst.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from rewrites.egraph_view import EGraphView
from rewrites.extract.result import Cost, Extraction, finish, normalize_costs
from rewrites.extract.share import share_choice
from rewrites.extract.tree import bottom_up, check_roots, unpriced_equations


def greedy_dag_choice(view: EGraphView, cost: list[Cost], stop_at_roots: bool = True) -> dict[int, int]:
    """Best node per class number by greedy DAG cost (for every class with a finite term unless
    `stop_at_roots`)."""
    ix = view.index
    members: list[int] = [0] * len(ix.class_ids)  # bit d set: class d is in the class's sub-DAG
    size: list[int] = [0] * len(ix.class_ids)
    total: list[Cost] = [0] * len(ix.class_ids)
    own: list[Cost] = [0] * len(ix.class_ids)
    eqns: list[int] = [0] * len(ix.class_ids)  # the unpriced equations of the sub-DAG (`unpriced_equations`)
    is_eqn: list[bool] = [False] * len(ix.class_ids)  # whether the class's chosen node is one
    unpriced = unpriced_equations(view, cost)
    floats = any(type(v) is float for v in cost)

    def added(classes: int) -> tuple[Cost, int]:
        """The cost and the unpriced equations that the classes `classes` add."""
        bits = _bits(classes)
        values = [own[d] for d in bits]
        return math.fsum(values) if floats else sum(values), sum(is_eqn[d] for d in bits)

    def evaluate(n: int) -> tuple[Cost, int, tuple[int, int, int] | None]:
        kids = sorted(set(ix.children[n]))
        if not kids:
            return cost[n], 0, None
        largest = max(kids, key=lambda d: (size[d], -d))
        base = members[largest]
        # Sets are downward closed (a class's set holds its children's sets), so a child already in
        # the largest set adds nothing.
        extra = 0
        for d in kids:
            if not (base >> d) & 1:
                extra |= members[d]
        extra &= ~base
        extra_cost, extra_eqns = added(extra)
        count = eqns[largest] + extra_eqns + unpriced[n]
        return cost[n] + total[largest] + extra_cost, count, (largest, extra, count)

    def on_final(c: int, n: int, value: Cost, data: tuple[int, int, int] | None) -> None:
        if data is None:
            members[c] = 1 << c
        else:
            largest, extra, eqns[c] = data
            members[c] = members[largest] | extra | (1 << c)
        is_eqn[c] = unpriced[n]
        size[c] = members[c].bit_count()
        total[c], own[c] = value, cost[n]

    return bottom_up(view, cost, evaluate, on_final, stop_at_roots)


def _bits(x: int) -> list[int]:
    """The positions of the set bits of `x`, ascending."""
    if x.bit_count() <= 32:
        out = []
        while x:
            low = x & -x
            out.append(low.bit_length() - 1)
            x ^= low
        return out
    raw = np.frombuffer(x.to_bytes((x.bit_length() + 7) // 8, "little"), np.uint8)
    return np.flatnonzero(np.unpackbits(raw, bitorder="little")).tolist()


def extract_greedy_dag(view: EGraphView, cost: Sequence[Cost], **options) -> Extraction:
    """Greedy DAG extraction: shared subterms counted once per class's sub-DAG. No options."""
    if options:
        raise TypeError(f"greedy_dag extraction takes no options, got {sorted(options)}")
    start = time.perf_counter()
    cost = normalize_costs(view, cost)
    chosen = greedy_dag_choice(view, cost)
    check_roots(view, "greedy_dag", chosen)
    chosen = share_choice(view, cost, chosen)
    return finish(view, "greedy_dag", chosen, cost, "greedy", time.perf_counter() - start)
