"""Sharing after greedy DAG extraction: classes switch to nodes that reuse what the extracted program already
computes, when that lowers its DAG cost.

Greedy DAG extraction prices each class's sub-DAG alone, so two classes can each pick one of two nodes of
equal price that the program then needs both of: an AD forward scan computes the primal's results and its
residuals, the primal scan only the results, and with the results' classes tied between the two scans a
gradient ran both. This pass looks at the program as a whole and tries, in a fixed order:
- for each class d of the program but a root, every class using d switched to its cheapest node that does not
  use d and whose children are all in the program (dropping d and what only it needs);
- each class switched to a cheaper node of its own whose children are in the program;
- each class switched to any node of its own that needs classes the program will not have, those brought in
  with nodes chosen to add least given what the program keeps (`_pull`: up to `_PULL` classes). gelu_tanh's
  JVP computes σ(2u) anyway, and tanh(u) is 2σ(2u) - 1: priced alone, tanh beats the three nodes of that, so
  greedy keeps both; brought in over the σ the program has, `2(σ - ½)` costs two cheap nodes.
The moves of a round are those of the program as the round began; a move is kept if the choice stays acyclic
and the DAG cost from the roots goes strictly down, and rounds repeat until none helps. So the result is never
costlier than greedy's, and is greedy's own wherever nothing in the program could be shared. A sharing that
needs several classes switched together at once is the ILP's job.

Two kinds of class are never switched: one whose new node would read a program input the old one did not (a
primal result taken from a JVP's node would read the tangents, and vmap with `out_axes=None` refuses that), and
one inside a loop body (the loop passes prune a body after extraction, which the DAG cost cannot see).

A move is priced first by reference counting (`_saves`, cut off after `_CASCADE` freed classes), and only a
move that may save is checked by a walk of the program: on extraction-gym's herbie e-graph (17,216 nodes) the
pass takes greedy from 1.30 times the ILP's optimum to the optimum, in 0.1 s in all.
"""

from __future__ import annotations

import math
from collections import ChainMap
from collections.abc import Sequence
from itertools import islice

from rewrites.egraph_view import EGraphView
from rewrites.extract.result import Cost, exact_sum, postorder


def share_choice(view: EGraphView, cost: Sequence[Cost], chosen: dict[int, int]) -> dict[int, int]:
    """`chosen` (class number -> node) with classes switched to nodes the rest of the program already pays for,
    while that lowers the DAG cost from the roots; the classes off the program keep their choice."""
    ix = view.index
    chosen = dict(chosen)
    cheapest = [sorted(members, key=lambda m: (cost[m], m))[:_PULL_OPTIONS] for members in ix.members]
    improved = True
    while improved:
        reads = _inputs_read(view, chosen)  # every class of the program, with the inputs it reads
        program = set(reads)
        current = exact_sum(cost[chosen[c]] for c in program)
        refs = _references(ix, chosen, program)
        improved = False
        # The moves of a round are those of the program as the round began; a move kept goes on to the next one,
        # each checked exactly against the program as it is by then.
        for switch, pulled in _moves(view, cost, chosen, program, reads, refs, cheapest):
            if not _saves(ix, cost, chosen, refs, switch, pulled):
                continue
            trial = {**chosen, **pulled, **switch}
            reached = _program(ix, trial)
            if reached is None:
                continue  # a switched node needs its own class: a cycle
            total = exact_sum(cost[trial[d]] for d in reached)
            if total < current:
                chosen, current, improved = trial, total, True
                refs = _references(ix, chosen, reached)
    return chosen


def _moves(view: EGraphView, cost, chosen: dict[int, int], program: set[int], reads: dict[int, int],
           refs: dict[int, int], cheapest: list[list[int]]):
    """Moves to try, each a switch (class -> new node) and the classes it brings in with their nodes (`_pull`),
    in a deterministic order: for each class d of the program but a root, every class using it switched to its
    cheapest node that does not (dropping d, if nothing else needs it); then each class switched to a cheaper node
    of its own; then each class switched to a node that needs classes the program will not have, when what those
    add may be less than what the switch frees. A node may only replace one that reads every
    input it reads (`reads`), so no value comes to depend on an input it did not: vmap's `out_axes=None`,
    for one, asks that an output not read the batched inputs, which a primal result taken from a JVP's node
    (computed with the tangents) would."""
    ix = view.index
    users: dict[int, list[int]] = {c: [] for c in program}
    for c in sorted(program):
        for d in sorted(set(ix.children[chosen[c]])):
            users[d].append(c)

    def usable(c: int, without: int | None) -> list[int]:
        return [m for m in ix.members[c] if m != chosen[c] and cost[m] != math.inf and c not in ix.children[m]
                and without not in ix.children[m] and set(ix.children[m]) <= program
                and not reads[c] & IN_BODY and not _node_reads(view, m, reads) & ~reads[c]]

    roots = set(ix.roots)
    for d in sorted(program - roots):
        switch = {}
        for u in users[d]:
            options = usable(u, d)
            if not options:
                break
            switch[u] = min(options, key=lambda m: (cost[m], m))
        else:
            yield switch, {}
    for c in sorted(program):
        cheaper = [m for m in usable(c, None) if cost[m] < cost[chosen[c]]]
        if cheaper:
            yield {c: min(cheaper, key=lambda m: (cost[m], m))}, {}
    for c in sorted(program):
        if reads[c] & IN_BODY:
            continue
        dropped = None  # the classes only c's node needs, in cascade
        for m in ix.members[c]:
            if m == chosen[c] or cost[m] == math.inf or c in ix.children[m] or set(ix.children[m]) <= program:
                continue
            if dropped is None:
                dropped = _freed(ix, chosen, refs, c)
                most = cost[chosen[c]] + sum(cost[chosen[k]] for k in dropped)  # what a move of c's saves at most
            if cost[m] + sum(cost[cheapest[d][0]] for d in set(ix.children[m]) - program) >= most:
                continue
            # a pulled node may use at no cost the classes that stay when m replaces c's node
            freed = dropped - _needs(ix, chosen, dropped, m)
            budget = cost[chosen[c]] - cost[m] + sum(cost[chosen[k]] for k in freed)  # what pulling may add
            if budget <= 0:
                continue
            pulled = _pull(ix, cost, cheapest, chosen, program, freed, m, c, budget)
            if pulled is None:
                continue
            reads_then = ChainMap({}, reads)
            for k, n in pulled.items():
                reads_then[k] = _node_reads(view, n, reads_then)
                if reads_then[k] & ~reads.get(k, ~IN_BODY):  # a class of the program that would read more
                    break
            else:
                if not _node_reads(view, m, reads_then) & ~reads[c]:
                    yield {c: m}, pulled


def _freed(ix, chosen: dict[int, int], refs: dict[int, int], c: int) -> set[int]:
    """The classes of the program but its leaves that only class c's chosen node needs, by reference counting,
    in cascade; at most `_PULL_CASCADE` (what a pull of a few classes can make up for is near)."""
    freed = (k for k in _cascade(ix, chosen, refs, {}, sorted(set(ix.children[chosen[c]]))) if ix.children[chosen[k]])
    return set(islice(freed, _PULL_CASCADE))


def _needs(ix, chosen: dict[int, int], among: set[int], m: int) -> set[int]:
    """The classes of `among` that node m needs through their chosen nodes (walking within `among`)."""
    needed: set[int] = set()
    stack = [k for k in ix.children[m] if k in among]
    while stack:
        k = stack.pop()
        if k not in needed:
            needed.add(k)
            stack.extend(d for d in ix.children[chosen[k]] if d in among)
    return needed


def _pull(ix, cost, cheapest: list[list[int]], chosen: dict[int, int], program: set[int], freed: set[int], m: int,
          c: int, budget: Cost) -> dict[int, int] | None:
    """Nodes for the classes that node m (for class c) needs and the program will not have (those off it, and the
    `freed` ones), children first: each class's node the one that adds least to the program (its cost and that of
    its own children the program will not have, priced the same way; from `_PULL_DEPTH` classes down, greedy's
    choices); a freed class that keeps its node is not among them. None when that needs c, when more than `_PULL`
    classes, or when the classes of m's children alone add `budget` or more (the search stops there)."""
    price: dict[int, tuple[float, int, float]] = {}  # class -> (what it adds, its node, the bound it was priced in)

    def missing(n: int) -> list[int]:  # node n's children that the program will not have
        return sorted({d for d in ix.children[n] if d not in program or d in freed})

    def priced(k: int, depth: int, path: frozenset, bound: float) -> float:
        """What class k adds at least, exactly when less than `bound` (else inf)."""
        hit = price.get(k)
        if hit is None or (hit[0] == math.inf and hit[2] < bound):
            options = cheapest[k] if depth < _PULL_DEPTH else [chosen[k]] if k in chosen else []
            best = (math.inf, -1)
            for n in options:
                kids, limit = missing(n), min(bound, best[0])
                if (cost[n] + sum(cost[cheapest[d][0]] for d in kids) >= limit or c in kids or k in kids
                        or path.intersection(kids) or depth > _PULL):
                    continue
                added = cost[n]
                for d in kids:
                    added += priced(d, depth + 1, path | {k}, limit - added)
                    if added >= limit:
                        break
                else:
                    best = min(best, (added, n))
            hit = price[k] = (*best, bound)
        return hit[0] if hit[0] < bound else math.inf

    pulled: dict[int, int] = {}  # in postorder
    seen: set[int] = set()
    stack = [(k, False) for k in missing(m)]
    while stack:
        k, done = stack.pop()
        if done:
            pulled[k] = price[k][1]
            continue
        if k in seen:
            continue
        if priced(k, 0, frozenset(), budget) == math.inf or len(seen) >= _PULL:
            return None
        seen.add(k)
        stack.append((k, True))
        stack.extend((d, False) for d in missing(price[k][1]) if d not in seen)
    return {k: n for k, n in pulled.items() if k not in program or n != chosen[k]}


def _inputs_read(view: EGraphView, chosen: dict[int, int]) -> dict[int, int]:
    """The program's inputs (bit k + 1: input k) each class of the program reads, and bit 0 (`IN_BODY`) for a
    class that reads a loop body's argument: it is computed inside a body, where the loop passes
    (`rewrites/loops.py`) prune what the body's results do not need after extraction, which the DAG cost here
    cannot see (sharing a cond between a JVP scan's primal and tangent carries kept the primal carry alive).
    A body's arguments are bound by its loop: the loop's own node reads what its operands read."""
    ix = view.index
    reads: dict[int, int] = {}
    for c in postorder(ix, chosen, ix.roots):
        reads[c] = _node_reads(view, chosen[c], reads)
    return reads


IN_BODY = 1


def _node_reads(view: EGraphView, n: int, reads: dict[int, int]) -> int:
    node = view.nodes[n]
    if node.op == "inp":
        return 2 << node.payload[0]
    if node.op == "barg":
        return IN_BODY
    out = 0
    for k in view.index.children[n]:
        out |= reads[k]
    return out & ~IN_BODY if node.op == "body" else out  # the loop binds its body's arguments


def _references(ix, chosen: dict[int, int], program: set[int]) -> dict[int, int]:
    """How many classes of the program (and root slots) use each class of it through their chosen node."""
    refs = dict.fromkeys(program, 0)
    for r in set(ix.roots):
        refs[r] += 1
    for c in program:
        for d in set(ix.children[chosen[c]]):
            refs[d] += 1
    return refs


def _saves(ix, cost, chosen: dict[int, int], refs: dict[int, int], switch: dict[int, int],
           pulled: dict[int, int]) -> bool:
    """Whether a switch may lower the DAG cost, by reference counting: the classes it frees are those whose last
    user goes, in cascade, and it may save if they cost more than the switched nodes add. The cascade stops as
    soon as they do, or after `_CASCADE` classes (a saving so deep is not looked for: that bounds the pass's
    time on long chains whose every class has another node). Where a switched class is itself freed (its new
    node's children then stay counted) it can only miss a saving; a move is checked exactly before it is
    kept."""
    added = exact_sum([cost[m] for m in switch.values()] + [-cost[chosen[u]] for u in switch]
                      + [cost[n] for n in pulled.values()])
    if added < 0:
        return True
    left: dict[int, int] = {}
    for u, m in switch.items():
        for k in set(ix.children[m]) - set(ix.children[chosen[u]]):
            left[k] = left.get(k, refs.get(k, 0)) + 1
    for n in pulled.values():
        for d in set(ix.children[n]):
            left[d] = left.get(d, refs.get(d, 0)) + 1
    stack = [k for u, m in switch.items() for k in sorted(set(ix.children[chosen[u]]) - set(ix.children[m]))]
    freed = 0  # a running sum: this only sorts moves out, the kept ones are priced exactly
    for k in islice(_cascade(ix, chosen, refs, left, stack), _CASCADE):
        freed += cost[chosen[k]]
        if freed > added:
            return True
    return False


def _cascade(ix, chosen: dict[int, int], refs: dict[int, int], left: dict[int, int], stack: list[int]):
    """The classes whose last user goes as the uses `stack` lists go, in cascade: reference counting, one use per
    class a node reads, from `refs` (`left`: the counts already changed, kept up to date)."""
    while stack:
        k = stack.pop()
        left[k] = left.get(k, refs.get(k, 0)) - 1
        if left[k] == 0:
            yield k
            stack.extend(sorted(set(ix.children[chosen[k]])))


_CASCADE = 64
_PULL, _PULL_DEPTH, _PULL_OPTIONS, _PULL_CASCADE = 4, 2, 8, 16


def _program(ix, chosen: dict[int, int]) -> set[int] | None:
    """The classes reachable from the roots through `chosen`, or None if the choice has a cycle there."""
    state: dict[int, int] = {}  # 1 = on the stack, 2 = done
    for root in ix.roots:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, 0)]
        while stack:
            c, k = stack.pop()
            kids = ix.children[chosen[c]]
            if k < len(kids):
                stack.append((c, k + 1))
                d = kids[k]
                if state.get(d) == 1:
                    return None
                if d not in state:
                    state[d] = 1
                    stack.append((d, 0))
            else:
                state[c] = 2
    return set(state)
