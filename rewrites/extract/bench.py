"""Random e-graphs and a timing table of the extractors on them: `python -m rewrites.extract.bench`.

A random e-graph has classes 0..C-1; the first few are leaf classes, every other class holds 1-4
alternative nodes whose children are mostly among the `window` classes just below it (sharing and
depth, as in a traced program) and, with probability `back_edge`, one class at or above it (cycles,
as equality saturation makes: `x = neg(neg(x))`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from rewrites.egraph_view import EGraphView, ENode
from rewrites.extract import EXTRACTORS, extract

_OPS = ("add", "mul", "sub", "neg", "exp", "dot_general", "reduce_sum", "transpose")


def random_egraph(n_nodes: int, seed: int = 0, *, window: int = 30, back_edge: float = 0.03,
                  n_roots: int = 4) -> tuple[EGraphView, list[int]]:
    """A random e-graph of about `n_nodes` nodes and a cost per node (ints: leaves 0-5, others 1-100)."""
    rng = random.Random(seed)
    n_classes = max(2, round(n_nodes / 2.5))
    n_leaves = max(1, n_classes // 20)
    classes: dict[str, list[ENode]] = {}
    cost: list[int] = []
    for c in range(n_classes):
        nodes = []
        for k in range(1 if c < n_leaves else rng.randint(1, 4)):
            if c < n_leaves:
                nodes.append(ENode("input", (), (c, k)))
                cost.append(rng.randint(0, 5))
                continue
            kids = [rng.randrange(max(0, c - window), c) for _ in range(rng.randint(1, 3))]
            if rng.random() < back_edge:
                kids[rng.randrange(len(kids))] = rng.randrange(c, n_classes)
            nodes.append(ENode(rng.choice(_OPS), tuple(f"c{d}" for d in kids)))
            cost.append(rng.randint(1, 100))
        classes[f"c{c}"] = nodes
    roots = [f"c{c}" for c in range(max(n_leaves, n_classes - n_roots), n_classes)]
    return EGraphView.from_classes(classes, roots), cost


def bench_extract(sizes: Sequence[int] = (1000, 10000), seed: int = 0, time_limit: float = 10.0,
                  methods: Sequence[str] = tuple(EXTRACTORS)) -> list[dict]:
    """Time each extractor on a random e-graph of each size; prints and returns one row per run."""
    rows = []
    for size in sizes:
        view, cost = random_egraph(size, seed)
        for method in methods:
            options = {"time_limit": time_limit} if method == "ilp" else {}
            start = time.perf_counter()
            result = extract(view, cost, method, **options)
            rows.append({"nodes": len(view.nodes), "classes": len(view.classes), "method": method,
                         "seconds": round(time.perf_counter() - start, 3), "dag_cost": result.dag_cost,
                         "tree_cost": result.tree_cost, "status": result.status})
    header = ("nodes", "classes", "method", "seconds", "dag_cost", "tree_cost", "status")
    print("  ".join(f"{h:>11}" for h in header))
    for row in rows:
        print("  ".join(f"{row[h]!s:>11}" for h in header))
    return rows


if __name__ == "__main__":
    bench_extract()
