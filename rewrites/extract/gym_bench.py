"""`eqjax bench extraction`: eqjax's extractors beside extraction-gym's on the gym's e-graphs, one run.

For every file of every data set (default: the bundled subset in `tests/extraction_gym/`; `--data`
takes a gym checkout's `data/`), each extractor's DAG cost (each chosen node counted once, the roots'
reachable classes only: the gym's `dag_cost`) and seconds. The gym's extractors are the Python ports
of `gym_ports.py` (its Rust binary cannot be built offline), its CBC ILP is run on HiGHS. A table per
data set gives each extractor's cost ratio to the best of all extractors on each file (geometric mean
and worst over the files), how many files it was best on, and its total seconds; the verdict says
whether eqjax's best extractor per file is within 1% of the best on every file of the set.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path

from rewrites.egraph_view import EGraphView
from rewrites.extract import EXTRACTORS
from rewrites.extract.gym import BUNDLE, GymEGraph, GymFormatError, gym_files, read_gym, unsupported
from rewrites.extract.gym_ports import GymTimeout, gym_bottom_up, gym_faster_greedy_dag, gym_ilp_highs
from rewrites.extract.result import UnextractableError, finish, normalize_costs

WITHIN = 1.01  # eqjax's best must cost at most this times the best of all
EQJAX = tuple(f"eqjax:{m}" for m in EXTRACTORS)
GYM = ("gym:bottom-up", "gym:faster-greedy-dag", "gym:ilp-highs")


def _gym_runner(name: str) -> Callable[[EGraphView, list, float], tuple[dict[int, int], str]]:
    if name == "gym:ilp-highs":
        return gym_ilp_highs
    port = {"gym:bottom-up": gym_bottom_up, "gym:faster-greedy-dag": gym_faster_greedy_dag}[name]
    return lambda view, cost, deadline: (port(view, cost, deadline), "port")


def run_one(egraph: GymEGraph, extractor: str, timeout: float) -> dict:
    """One extractor on one e-graph: {"extractor", "dag_cost" (None if it failed), "seconds", "status"}."""
    view, cost = egraph.view, normalize_costs(egraph.view, egraph.cost)
    start = time.perf_counter()
    try:
        if extractor in EQJAX:
            method = extractor.split(":", 1)[1]
            result = EXTRACTORS[method](view, cost, **({"time_limit": timeout} if method == "ilp" else {}))
            dag_cost, status = result.dag_cost, result.status
        else:
            choice, status = _gym_runner(extractor)(view, cost, start + timeout)
            dag_cost = finish(view, extractor, choice, cost, status, 0.0).dag_cost
    except GymTimeout:
        dag_cost, status = None, "timeout"
    except UnextractableError:
        dag_cost, status = None, "unextractable"
    except ValueError as e:  # a port's choice misses a reachable class or has a cycle
        dag_cost, status = None, f"invalid: {e}"
    return {"extractor": extractor, "dag_cost": dag_cost, "seconds": time.perf_counter() - start, "status": status}


def bench_file(path: Path, extractors: tuple[str, ...], timeout: float) -> dict:
    """Every extractor on one file, with each one's ratio to the best cost found; {"file", "skipped",
    "detail"} for a malformed e-graph (the gym's binary panics on those too) or negative costs."""
    start = time.perf_counter()
    try:
        egraph = read_gym(path)
    except GymFormatError as e:
        return {"file": path.name, "skipped": "malformed", "detail": str(e)}
    if reason := unsupported(egraph):
        return {"file": egraph.name, "skipped": "negative costs", "detail": reason}
    egraph.view.index, egraph.view.node_rank  # noqa: B018 (built once, outside every extractor's time)
    load = time.perf_counter() - start
    runs = [run_one(egraph, name, timeout) for name in extractors]
    costs = [r["dag_cost"] for r in runs if r["dag_cost"] is not None]
    best = min(costs) if costs else None
    for r in runs:
        r["ratio"] = _ratio(r["dag_cost"], best)
    eqjax = [r["ratio"] for r in runs if r["extractor"] in EQJAX and r["ratio"] is not None]
    return {"file": egraph.name, "nodes": len(egraph.view.nodes), "classes": len(egraph.view.classes),
            "load_seconds": load, "best": best, "eqjax_ratio": min(eqjax) if eqjax else None, "runs": runs}


def _ratio(cost: float | None, best: float | None) -> float | None:
    if cost is None or best is None:
        return None
    return 1.0 if cost == best else (math.inf if best == 0 else cost / best)


def summarize(data_set: str, files: list[dict], extractors: tuple[str, ...]) -> dict:
    """Per extractor over a data set's files: geometric mean and worst ratio, files best on, seconds.
    A set with no benched file is not "within 1%"."""
    per = {}
    for name in extractors:
        runs = [next(r for r in f["runs"] if r["extractor"] == name) for f in files]
        ratios = [r["ratio"] for r in runs if r["ratio"] is not None]
        finite = [x for x in ratios if x != math.inf]
        per[name] = {"geomean_ratio": (math.exp(math.fsum(map(math.log, finite)) / len(finite))
                                       if finite and len(finite) == len(ratios) else (math.inf if ratios else None)),
                     "worst_ratio": max(ratios) if ratios else None,
                     "best_on": sum(1 for x in ratios if x == 1.0),
                     "failed": len(runs) - len(ratios),
                     "seconds": sum(r["seconds"] for r in runs)}
    eqjax = [f["eqjax_ratio"] for f in files]
    ok = bool(eqjax) and all(x is not None and x <= WITHIN for x in eqjax)
    return {"data_set": data_set, "files": len(files), "extractors": per,
            "eqjax_worst_ratio": max((x for x in eqjax if x is not None), default=None), "eqjax_within_1pct": ok}


def file_row(path: str, extractors: list[str], timeout: float) -> dict:
    """The task of one file (`bench_file`), infinite ratios written as "inf" (JSON has no infinity)."""
    return _no_infinity(bench_file(Path(path), tuple(extractors), timeout))


def bench_extraction(data: str | Path | None = None, *, timeout: float = 10.0, as_json: bool = False,
                     extractors: tuple[str, ...] = EQJAX + GYM, out=print, run_rows=None) -> dict:
    """Run every extractor on every file under `data` (default: the bundle); print and return the results.
    `run_rows` runs a task per file, timed, one at a time (`eval.study.rows.RowRunner`; default: in this process):
    the seconds and the timeouts are wall clock."""
    from eval.study import RowRunner, Task

    data = Path(data) if data is not None else BUNDLE / "data"
    if not data.is_dir():
        raise GymFormatError(f"{data} is not a folder of data sets (an extraction-gym checkout's data/)")
    import scipy.optimize  # noqa: F401 (both ILPs import it on first use: a second no extractor is charged)

    by_data_set = gym_files(data)
    tasks = [Task("rewrites.extract.gym_bench:file_row", {"path": str(p), "extractors": list(extractors),
                                                          "timeout": timeout})
             for paths in by_data_set.values() for p in paths]
    rows_done = iter((run_rows or RowRunner())(tasks, "e-graphs extracted"))
    results = {"data": str(data), "timeout": timeout, "data_sets": []}
    for data_set, paths in by_data_set.items():
        benched = [_with_infinity(next(rows_done)) for _ in paths]
        files = [f for f in benched if "skipped" not in f]
        skipped = [f for f in benched if "skipped" in f]
        entry = {**summarize(data_set, files, extractors), "per_file": files, "skipped": skipped}
        results["data_sets"].append(entry)
        if not as_json:
            _print_data_set(results["data_sets"][-1], out)
    if as_json:
        out(json.dumps(_no_infinity(results), indent=1))
    else:
        _print_verdict(results["data_sets"], out)
    return results


def _no_infinity(value):
    """`value` with every infinite ratio written as the string "inf" (JSON has no infinity)."""
    if isinstance(value, dict):
        return {k: _no_infinity(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_infinity(v) for v in value]
    return "inf" if value == math.inf else value


def _with_infinity(value):
    """The inverse of `_no_infinity`."""
    if isinstance(value, dict):
        return {k: _with_infinity(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_infinity(v) for v in value]
    return math.inf if value == "inf" else value


def _fmt(x: float | None, digits: int = 4) -> str:
    return "-" if x is None else ("inf" if x == math.inf else f"{x:.{digits}f}")


def _print_data_set(entry: dict, out) -> None:
    files, skipped = entry["per_file"], entry["skipped"]
    reasons = sorted({f["skipped"] for f in skipped})
    note = f"; {len(skipped)} skipped ({', '.join(reasons)})" if skipped else ""
    if not files:
        out(f"\n{entry['data_set']}: no file benched{note}")
        return
    nodes = sorted(f["nodes"] for f in files)
    out(f"\n{entry['data_set']}: {entry['files']} file(s), {nodes[0]}-{nodes[-1]} nodes{note}")
    header = ("extractor", "geomean ratio", "worst ratio", "best on", "failed", "seconds")
    out("  ".join(f"{h:>22}" if i == 0 else f"{h:>13}" for i, h in enumerate(header)))
    for name, s in entry["extractors"].items():
        cells = (name, _fmt(s["geomean_ratio"]), _fmt(s["worst_ratio"]), f"{s['best_on']}/{entry['files']}",
                 str(s["failed"]), f"{s['seconds']:.3f}")
        out("  ".join(f"{c:>22}" if i == 0 else f"{c:>13}" for i, c in enumerate(cells)))


def _print_verdict(data_sets: list[dict], out) -> None:
    out("\neqjax's best extractor within 1% of the best cost on every file (gym's ILP ran on HiGHS, not CBC; "
        "its greedy extractors are Python ports):")
    for entry in data_sets:
        if not entry["files"]:
            out(f"  {entry['data_set']:>16}: -    (no file benched)")
            continue
        verdict = "yes" if entry["eqjax_within_1pct"] else "NO"
        out(f"  {entry['data_set']:>16}: {verdict:>3}  (worst eqjax ratio {_fmt(entry['eqjax_worst_ratio'])})")
