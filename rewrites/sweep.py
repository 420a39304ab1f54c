"""The optimizer over programs × rule sets × cost models × extractors, as a sweep (`eval.study`); `eqjax sweep`.

    tasks = sweep_tasks(program_specs(paths), ["default", "fast"], ["flops", "latency"], ["greedy_dag", "ilp"])
    study = run_study(tasks, out="sweep.jsonl", executor=executor_for(jobs=8))
    rows = combination_rows(study.records)   # one per rule set × cost × extractor, summed over the programs

A task optimizes one program (carried as text, `eval.study.programs`) with one combination and returns the
report's numbers: costs before and after, equations, e-graph size (term e-nodes and e-classes), iterations, stop
reason, extraction status and the fingerprint of the optimized program. Not the report's table rows
(`egraph_nodes`): they count what earlier programs left in the worker's engine, so they depend on which tasks
that worker ran before (seen: 183 and 184 rows for one program). Wall time is the study record's `seconds`.
A rule file named in a rule spec (`default,+my.rules`) is read by the worker, so it must be at the same path
there; its SHA-256 is part of the task (a changed file is a new task) and a worker whose copy differs fails the
task and says so.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from eval.study import Task

LIMIT_FIELDS = ("iterations", "nodes", "seconds")


def sweep_tasks(programs: Sequence[dict], rule_specs: Sequence[str], costs: Sequence[str],
                extractors: Sequence[str], limits: dict | None = None) -> list[Task]:
    """Tasks in the order rule set, cost, extractor, program (a combination's programs are adjacent)."""
    limits = {k: v for k, v in (limits or {}).items() if v is not None}
    unknown = set(limits) - set(LIMIT_FIELDS)
    if unknown:
        raise ValueError(f"limits: unknown field(s) {', '.join(sorted(unknown))}; choose from {LIMIT_FIELDS}")
    return [Task("rewrites.sweep:optimize_program",
                 {"program": p, "rules": rules, "rule_files": rule_file_digests(rules), "cost": cost,
                  "extractor": extractor, "limits": limits})
            for rules in rule_specs for cost in costs for extractor in extractors for p in programs]


def rule_file_digests(spec: str) -> dict[str, str]:
    """{path: SHA-256} of each +FILE.rules item of a rule spec."""
    items = [item.strip()[1:] for item in spec.split(",")[1:] if item.strip().startswith("+")]
    return {path: _digest(path) for path in items if path.endswith(".rules")}


def _digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def optimize_program(program: dict, rules: str, rule_files: dict[str, str], cost: str, extractor: str,
                     limits: dict) -> dict:
    from eval.study.programs import load_program
    from ir.typecheck import fingerprint
    from rewrites.engine import optimize
    from rewrites.options import Limits

    for path, digest in rule_files.items():
        if _digest(path) != digest:
            raise ValueError(f"the rule file {path} on this worker is not the one the sweep was made with")
    closed = load_program(program)
    optimized, report = optimize(closed, rules=rules, cost=cost, extractor=extractor, limits=Limits(**limits))
    return {"cost_before": report.cost_before, "cost_after": report.cost_after, "eqns_before": report.eqns_before,
            "eqns_after": report.eqns_after, "enodes": report.enodes, "eclasses": report.eclasses,
            "iterations": report.iterations, "stop_reason": report.stop_reason,
            "extraction": report.extraction_status, "kept_input": report.kept_input,
            "fingerprint": fingerprint(optimized)}


def combination_rows(records: Sequence[dict]) -> list[dict]:
    """Per rule set × cost × extractor (in task order): programs, failed, summed costs before and after and their
    ratio, seconds, e-nodes (median, max) and the stop reasons counted."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        a = r["args"]
        groups.setdefault((a["rules"], a["cost"], a["extractor"]), []).append(r)
    rows = []
    for (rules, cost, extractor), members in groups.items():
        ok = [r["result"] for r in members if r["error"] is None]
        enodes = sorted(x["enodes"] for x in ok)
        before, after = sum(x["cost_before"] for x in ok), sum(x["cost_after"] for x in ok)
        rows.append({"rules": rules, "cost": cost, "extractor": extractor, "programs": len(members),
                     "failed": len(members) - len(ok), "cost_before": before, "cost_after": after,
                     "ratio": after / before if before > 0 else None,
                     "seconds": sum(r["seconds"] for r in members),
                     "enodes_median": enodes[len(enodes) // 2] if enodes else None,
                     "enodes_max": enodes[-1] if enodes else None,
                     "stop_reasons": dict(sorted(Counter(x["stop_reason"] for x in ok).items()))})
    return rows


def release_engine_state() -> None:
    """Drop the engine's e-graphs prepared in this thread, here, where they were made: a Dask executor runs this
    in each worker's task thread before it closes (`eval.study.Dask`)."""
    import gc

    from rewrites.engine import release_prepared

    release_prepared()
    gc.collect()
