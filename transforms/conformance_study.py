"""`eqjax conformance` as a sweep (`eval.study`): one task per fixture case, carrying the case itself.

    conformance_tasks(cases, checks, rules=None, custom_rules=()) -> list[Task]
    outcomes_of(records) -> list[Outcome]          # in case order, then check order, as run_conformance gives

`rules` (a rule spec) runs each program through the e-graph first (`--optimize`). `custom_rules` are the
(path, text) of the Python files `--custom-rules` names: a worker runs each text once, so the rules they
register are there wherever the task runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from eval.oracle import Case, Outcome
from eval.study import Task


def conformance_tasks(cases: Sequence[Case], checks: Sequence[str], rules: str | None = None,
                      custom_rules: Sequence[tuple[str, str]] = ()) -> list[Task]:
    return [Task("transforms.conformance_study:check_case",
                 {"case": case.raw, "family": case.family, "checks": [c for c in checks if c in case.raw],
                  "rules": rules, "custom_rules": [list(item) for item in custom_rules]})
            for case in cases if any(c in case.raw for c in checks)]


def check_case(case: dict, family: str, checks: list[str], rules: str | None,
               custom_rules: list[list[str]]) -> list[dict]:
    from eval.oracle import run_conformance
    from transforms.checks import register_checks

    for path, text in custom_rules:
        _run_custom_rules(path, text)
    register_checks()
    prepare = None
    if rules is not None:
        from rewrites.engine import optimize

        def prepare(closed):
            return optimize(closed, rules=rules)[0]
    outcomes = run_conformance([Case(case["id"], family, case["tags"], case)], checks, prepare)
    return [asdict(o) for o in outcomes]


_ran: set[tuple[str, str]] = set()


def _run_custom_rules(path: str, text: str) -> None:
    """Run a --custom-rules file's text once per process, as `runpy.run_path` runs it."""
    if (path, text) in _ran:
        return
    exec(compile(text, path, "exec"), {"__name__": "<run_path>", "__file__": path})
    _ran.add((path, text))


def outcomes_of(records: Sequence[dict]) -> list[Outcome]:
    out = []
    for r in records:
        if r["error"] is None:
            out += [Outcome(**o) for o in r["result"]]
        else:
            a = r["args"]
            out += [Outcome(a["case"]["id"], a["family"], check, "failed",
                            f"the task failed: {r['error']['type']}: {r['error']['message']}") for check in a["checks"]]
    return out
