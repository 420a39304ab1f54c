"""A bench's rows as study tasks: what every `eqjax bench` hands its rows to.

    rows = RowRunner(jobs=2, out="bench.jsonl")           # the CLI makes one from the study flags
    results = rows([Task("eval.bench:eval_row", {...}), ...], "programs timed", timed=True)

A bench builds one task per row (a pure function of JSON arguments, in the package that owns the work) and
gets back each task's result in task order. `timed=True` rows measure wall-clock time: they run one at a time in
this process whatever executor was asked for, since two rows timed at once on shared cores would slow each other
(and a worker process would time its own cold start). Untimed rows (counts, costs) run on the executor asked for.

A bench with several sections calls the runner once per section, all into one JSON-lines file: the first call
starts the file afresh unless `resume`, later calls keep what earlier sections wrote (so a completed file holds
the sections in the order they ran, each in task order). A task that raised ends the bench with `RowFailed` naming
the row; its line stays in the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.study.executors import InProcess, executor_for
from eval.study.runner import run_study
from eval.study.task import Task
from ir.errors import EqjaxError


class RowFailed(EqjaxError):
    """A bench row whose task raised: the bench cannot print its table."""


class RowRunner:
    def __init__(self, jobs: int = 1, scheduler: str | None = None, out: str | Path | None = None,
                 resume: bool = False, quiet: bool = True, release: str | None = None):
        self.jobs, self.scheduler, self.release = jobs, scheduler, release
        self.out, self.resume, self.quiet = out, resume, quiet

    def __call__(self, tasks: Sequence[Task], label: str = "rows", timed: bool = True) -> list[Any]:
        executor = InProcess() if timed else executor_for(self.jobs, self.scheduler, self.release)
        study = run_study(tasks, out=self.out, executor=executor, resume=self.resume, quiet=self.quiet,
                          label=label)
        self.resume = True  # the next section keeps this one's lines
        for record in study.failed:
            error = record["error"]
            raise RowFailed(f"the row {record['function']}({_short(record['args'])}) raised "
                            f"{error['type']}: {error['message']}")
        return [record["result"] for record in study.records]


def _short(args: dict) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return text if len(text) <= 120 else text[:117] + "..."
