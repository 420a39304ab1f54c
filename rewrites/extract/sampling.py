"""Sampling equivalent programs from one saturated e-graph: the population a cost model is judged on.

    programs = sample(closed, k=32, seed=0)           # up to 32 distinct ClosedJaxprs, all equal to `closed`
    choices = sample_choices(view, costs, k=32, seed=0)   # the same on a plain EGraphView

Draw 0 is the greedy DAG extraction under the base costs themselves (what `optimize` returns for that
cost model). Draw i > 0 extracts under randomly perturbed costs

    c_i[n] = (base[n] / scale + 1) · exp(σ_i · z_{i,n}),    z ~ N(0, 1),  σ_i = SIGMAS[i mod 5]

where `scale` is the median positive base cost: the `+ 1` gives every node (also those the base model
rates free, like reshapes) a price, so the draws vary the data movement too; small σ draws stay near the
base model's optimum, large σ draws wander far from it. A draw is kept when its choice (the chosen node
of every class reachable from the outputs) is new, and, after decoding, when its program's canonical
fingerprint is new. Everything comes from `numpy.random.default_rng(seed)`, so a seed gives the same
programs in the same order.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator, Sequence

import numpy as np

from rewrites.egraph_view import EGraphView
from rewrites.extract.greedy_dag import extract_greedy_dag
from rewrites.extract.result import Cost, Extraction, normalize_costs

SIGMAS = (0.25, 0.5, 1.0, 2.0, 4.0)


def perturbed_costs(base: Sequence[Cost], rng: np.random.Generator, sigma: float) -> list[float]:
    """One draw's costs (see the module doc); `math.inf` stays forbidden."""
    finite = [float(c) for c in base if c != math.inf]
    positive = [c for c in finite if c > 0]
    scale = statistics.median(positive) if positive else 1.0
    noise = np.exp(sigma * rng.standard_normal(len(base)))
    return [math.inf if c == math.inf else (float(c) / scale + 1.0) * float(z)
            for c, z in zip(base, noise, strict=True)]


def sample_choices(view: EGraphView, base: Sequence[Cost], k: int = 8, seed: int = 0,
                   attempts: int | None = None) -> Iterator[Extraction]:
    """Up to `k` extractions of `view` with pairwise different choices, from at most `attempts` draws
    (default 8k); draw 0 uses `base` unperturbed."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    base = normalize_costs(view, base)
    rng = np.random.default_rng(seed)
    seen: set[frozenset] = set()
    for i in range(attempts if attempts is not None else 8 * k):
        costs = base if i == 0 else perturbed_costs(base, rng, SIGMAS[(i - 1) % len(SIGMAS)])
        result = extract_greedy_dag(view, costs)
        key = frozenset(result.choice.items())
        if key in seen:
            continue
        seen.add(key)
        yield result
        if len(seen) >= k:
            return


def sample(closed, k: int = 8, seed: int = 0, rules="default", cost="flops", limits=None,
           attempts: int | None = None, loops: bool = True) -> list:
    """Up to `k` distinct programs equal to `closed`, drawn from its e-graph saturated under `rules`
    (each decoded and typechecked; distinct by canonical fingerprint). `cost` is the base of the
    perturbed costs, and draw 0 is its own extraction; `attempts` bounds the draws (default 8k)."""
    from rewrites.engine import saturated

    return sample_saturated(saturated(closed, rules, limits, loops=loops), k, seed, cost, attempts)


def sample_saturated(sat, k: int = 8, seed: int = 0, cost="flops", attempts: int | None = None) -> list:
    """`sample` of an e-graph saturated already (`rewrites.engine.saturated`)."""
    from ir.typecheck import fingerprint

    programs, prints = [], set()
    # Several choices can decode to one program (a dead loop output pruned, a hoisted body equation), so
    # choices are drawn until k distinct programs, within the same total of draws.
    budget = attempts if attempts is not None else 8 * k
    for result in sample_choices(sat.view, sat.costs(cost), k=budget, seed=seed, attempts=budget):
        program, _ = sat.decode(result.choice)
        fp = fingerprint(program)
        if fp in prints:
            continue
        prints.add(fp)
        programs.append(program)
        if len(programs) >= k:
            break
    return programs
