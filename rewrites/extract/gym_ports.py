"""Python ports of extraction-gym's extractors, the baselines of `eqjax bench extraction`.

extraction-gym (github.com/egraphs-good/extraction-gym at 903ba0f, MIT, Copyright 2019 Max Willsey)
is Rust and cannot be built on a machine without crates.io, so its extractors are translated here,
step for step, from its sources:

| function                  | gym source                          | gym name            |
|---------------------------|-------------------------------------|---------------------|
| `gym_bottom_up`           | `src/extract/bottom_up.rs`          | bottom-up           |
| `gym_faster_greedy_dag`   | `src/extract/faster_greedy_dag.rs`  | faster-greedy-dag   |
| `gym_ilp_highs`           | `src/extract/ilp_cbc.rs`            | ilp-cbc-timeout     |

They run on an `EGraphView` whose class and node order is the gym's (`rewrites/extract/gym.py`), so
they visit classes and nodes in the Rust order. Where the Rust code depends on something Python
does not share, the port says so: faster-greedy-dag sums a `HashMap`'s values in Rust's random
iteration order, the port uses the exactly rounded `math.fsum`; Rust's `max_by_key` keeps the last
of equal maxima, the port too. The ILP is the gym's CBC model solved by HiGHS (`scipy.optimize.milp`)
since CBC is not installed: the same variables and rows, with the gym's "opposite" column of each
node written as `1 - x`; like the gym it falls back to faster-greedy-dag when the solver times out.

Each returns the chosen node per class number; `deadline` (a `time.perf_counter()` value) makes the
pure-Python loops give up with `GymTimeout`.
"""

from __future__ import annotations

import math
import time
from collections import deque

import numpy as np

from rewrites.egraph_view import EGraphView


class GymTimeout(Exception):
    """A ported extractor ran past its deadline."""


def _check(deadline: float | None) -> None:
    if deadline is not None and time.perf_counter() > deadline:
        raise GymTimeout


def gym_bottom_up(view: EGraphView, cost: list[float], deadline: float | None = None) -> dict[int, int]:
    """bottom_up.rs: sweep every class's nodes in order, a node replacing its class's choice when
    cost + the sum of its children's class costs (with multiplicity) is strictly lower, until a
    sweep changes nothing. Optimal tree cost; roots are not consulted."""
    ix = view.index
    costs: list[float] = [math.inf] * len(ix.class_ids)
    choice: dict[int, int] = {}
    changed = True
    while changed:
        changed = False
        _check(deadline)
        for c, members in enumerate(ix.members):
            for n in members:
                value = cost[n] + sum(costs[d] for d in ix.children[n])
                if value < costs[c]:
                    choice[c], costs[c] = n, value
                    changed = True
    return choice


def gym_faster_greedy_dag(view: EGraphView, cost: list[float], deadline: float | None = None) -> dict[int, int]:
    """faster_greedy_dag.rs: a FIFO of unique nodes, seeded with the leaves; a node whose child
    classes all have a cost set gets the union of their sets plus its own class, and replaces its
    class's set when that set's total is lower, queueing the class's parents."""
    ix = view.index
    class_ids = ix.class_ids
    parents: list[list[int]] = [[] for _ in class_ids]
    pending: deque[int] = deque()
    queued: set[int] = set()
    for members in ix.members:
        for n in members:
            for d in ix.children[n]:
                parents[d].append(n)
            if not ix.children[n]:
                pending.append(n)
                queued.add(n)
    # class -> (class -> its node's cost, total, chosen node)
    sets: dict[int, tuple[dict[int, float], float, int]] = {}

    def cost_set(n: int, best: float) -> tuple[dict[int, float], float, int]:
        c = ix.node_class[n]
        if not ix.children[n]:
            return {c: cost[n]}, cost[n], n
        # the Rust sorts the children's ClassIds (strings) and dedups them
        kids = sorted(set(ix.children[n]), key=class_ids.__getitem__)
        if c in kids or (len(kids) == 1 and cost[n] + sets[kids[0]][1] > best):
            return {}, math.inf, n  # can't be cheaper
        biggest = kids[0]
        for d in kids[1:]:  # max_by_key: the last of equal maxima
            if len(sets[d][0]) >= len(sets[biggest][0]):
                biggest = d
        result = dict(sets[biggest][0])
        for d in kids:
            if d != biggest:
                result.update(sets[d][0])
        contains = c in result
        result[c] = cost[n]
        return result, (math.inf if contains else math.fsum(result.values())), n

    steps = 0
    while pending:
        steps += 1
        if steps % 256 == 0:
            _check(deadline)
        n = pending.popleft()
        queued.discard(n)
        c = ix.node_class[n]
        if all(d in sets for d in ix.children[n]):
            previous = sets[c][1] if c in sets else math.inf
            candidate = cost_set(n, previous)
            if candidate[1] < previous:
                sets[c] = candidate
                for p in parents[c]:
                    if p not in queued:
                        queued.add(p)
                        pending.append(p)
    return {c: s[2] for c, s in sets.items()}


def gym_ilp_highs(view: EGraphView, cost: list[float], deadline: float | None = None) -> tuple[dict[int, int], str]:
    """ilp_cbc.rs's model solved by HiGHS: a binary per class (active) and per node, a level per
    class; active = sum of its nodes; a node implies each child class; roots active; a node whose
    class is among its children is fixed to 0; otherwise level[child] - level[class] + (C+1)(1 - x)
    >= 1 for each child class. The choice and "optimal", or faster-greedy-dag's and why on timeout."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_array

    ix = view.index
    n_nodes, n_classes = len(ix.node_class), len(ix.class_ids)
    active = n_nodes  # column of class c: active + c; level of class c: level + c
    level = n_nodes + n_classes
    big = float(n_classes + 1)
    rows, cols, vals, lower, upper = [], [], [], [], []

    def row(entries: list[tuple[int, float]], lo: float, hi: float) -> None:
        for col, val in entries:
            rows.append(len(lower))
            cols.append(col)
            vals.append(val)
        lower.append(lo)
        upper.append(hi)

    for c, members in enumerate(ix.members):
        row([(active + c, -1.0), *((n, 1.0) for n in members)], 0.0, 0.0)
        for n in members:
            for d in dict.fromkeys(ix.children[n]):
                row([(n, 1.0), (active + d, -1.0)], -np.inf, 0.0)
    for c, members in enumerate(ix.members):
        for n in members:
            kids = dict.fromkeys(ix.children[n])
            if c in kids:
                row([(n, 1.0)], 0.0, 0.0)
                continue
            for d in kids:
                row([(level + c, -1.0), (level + d, 1.0), (n, -big)], 1.0 - big, np.inf)
    n_vars = n_nodes + 2 * n_classes
    lo_var, hi_var = np.zeros(n_vars), np.ones(n_vars)
    hi_var[level:] = np.inf  # CBC's default column bounds: [0, inf)
    for r in ix.roots:
        lo_var[active + r] = 1.0
    integrality = np.ones(n_vars)
    integrality[level:] = 0
    objective = np.zeros(n_vars)
    objective[:n_nodes] = cost
    matrix = coo_array((vals, (rows, cols)), shape=(len(lower), n_vars)).tocsr()
    remaining = None if deadline is None else max(deadline - time.perf_counter(), 0.01)
    options = {"disp": False, "mip_rel_gap": 0.0, **({"time_limit": remaining} if remaining else {})}
    res = milp(objective, integrality=integrality, bounds=Bounds(lo_var, hi_var),
               constraints=[LinearConstraint(matrix, np.array(lower), np.array(upper))], options=options)
    if res.status != 0 or res.x is None:
        return gym_faster_greedy_dag(view, cost), "timeout-greedy-fallback" if res.status == 1 else "solver-fallback"
    choice = {}
    for c, members in enumerate(ix.members):
        if res.x[active + c] > 0.5:
            choice[c] = next(n for n in members if res.x[n] > 0.5)
    return choice, "optimal"
