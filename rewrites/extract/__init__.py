"""Extraction: choose one node per e-class so the program outputs (the roots) get a cheap term.

`extract(view, cost, method=..., **options)` runs one of

| method       | minimizes                                      | optimal? | module          |
|--------------|------------------------------------------------|----------|-----------------|
| `tree`       | tree cost (shared subterms counted per use)    | yes      | `tree.py`       |
| `greedy_dag` | DAG cost (each class once), class by class     | no       | `greedy_dag.py` |
| `ilp`        | DAG cost, by 0-1 integer programming (HiGHS)   | yes*     | `ilp.py`        |

(*) within `time_limit`; otherwise it falls back and says so in `status`. `cost[i]` is the cost of
node i (non-negative int or float; `math.inf` forbids a node). Every extractor works on the plain
`EGraphView`, knows nothing of egglog, breaks ties by (cost, `view.node_key`), and raises
`UnextractableError` for a root with no finite term. `bench.py` times them on random e-graphs;
`gym_bench.py` (`eqjax bench extraction`) compares them with extraction-gym's extractors (`gym_ports.py`)
on its public e-graphs (`gym.py` reads them).

`sample(closed, k=, seed=)` draws up to k distinct equivalent programs from one saturated e-graph
(`sampling.py`): the population a cost model is judged on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rewrites.egraph_view import EGraphView
from rewrites.extract.greedy_dag import extract_greedy_dag
from rewrites.extract.ilp import extract_ilp
from rewrites.extract.result import Cost, Extraction, UnextractableError, validate
from rewrites.extract.sampling import sample, sample_choices, sample_saturated
from rewrites.extract.tree import extract_tree

Extractor = Callable[..., Extraction]

EXTRACTORS: dict[str, Extractor] = {
    "tree": extract_tree,
    "greedy_dag": extract_greedy_dag,
    "ilp": extract_ilp,
}


def get_extractor(name: str) -> Extractor:
    try:
        return EXTRACTORS[name]
    except KeyError:
        raise ValueError(f"unknown extraction method {name!r}; known: {', '.join(EXTRACTORS)}") from None


def extract(view: EGraphView, cost: Sequence[Cost], method: str = "greedy_dag", **options) -> Extraction:
    return get_extractor(method)(view, cost, **options)


__all__ = ["EXTRACTORS", "Extraction", "UnextractableError", "extract", "extract_greedy_dag", "extract_ilp",
           "extract_tree", "get_extractor", "sample", "sample_choices", "sample_saturated", "validate"]
