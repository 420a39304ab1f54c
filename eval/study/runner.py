"""Run a sweep: stream one JSON line per finished task, skip what a previous run finished, show progress.

    study = run_study(tasks, out="results.jsonl", executor=ProcessPool(2), resume=True)
    study.records          # one record per task, in task order: {"key", "function", "args", "code",
                           #   "result", "error", "seconds"}
    study.ran, study.reused, study.failed

Lines are appended to `out` as tasks finish, flushed one by one, so an interrupted sweep (Ctrl-C, a killed
machine) keeps every finished task; with `resume=True` a rerun reads the file and runs only the tasks whose
key is not there (`resume=False` starts the file afresh). A task that raises is a recorded failure (its
"error"), not the end of the sweep; it counts as done on a rerun, as its result would.

When the sweep completes, the file is rewritten in task order (lines of other sweeps or code versions that were
in it come first, in their order: a bench's earlier sections stay ahead of its later ones), so the same sweep
gives the same file whichever executor ran it and in what order tasks finished. Only "seconds" (wall time in
the worker) differs between runs.

The progress bar (rich, on stderr) shows counts, failures, rate and time left; it is off when stderr is not a
terminal or `quiet` is set.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.study.executors import InProcess
from eval.study.task import Task, code_version

TIMING_FIELDS = ("seconds",)  # what differs between two runs of the same sweep


class StudyInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep: the finished tasks are in the file (`done` of `total`)."""

    def __init__(self, done: int, total: int, out: Path | None):
        super().__init__(f"interrupted after {done} of {total} tasks"
                         + (f"; their results are in {out} (run again with --resume to finish)" if out else ""))
        self.done, self.total, self.out = done, total, out


@dataclass
class Study:
    records: list[dict]  # in task order
    ran: int  # tasks run now
    reused: int  # tasks whose result was in the file already
    seconds: float
    executor: str

    @property
    def failed(self) -> list[dict]:
        return [r for r in self.records if r["error"] is not None]


def read_records(path: str | Path) -> list[dict]:
    """The records of a JSON-lines file; a last line cut short by a killed run is dropped (it reruns)."""
    records = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return [r for r in records if isinstance(r, dict) and "key" in r]


def run_study(tasks: Sequence[Task], out: str | Path | None = None, executor=None, resume: bool = True,
              quiet: bool = False, label: str = "tasks") -> Study:
    """Run `tasks` (duplicates run once) on `executor` (default in-process); see the module docstring."""
    start = time.perf_counter()
    executor = executor or InProcess()
    code = code_version()
    unique = list({task.key(code): task for task in tasks}.items())
    out = Path(out) if out is not None else None
    previous = read_records(out) if out is not None and resume and out.exists() else []
    done = {r["key"]: r for r in previous}
    todo = [(key, task) for key, task in unique if key not in done]
    reused = len(unique) - len(todo)
    sink = _open_sink(out, previous)
    progress = _Progress(len(unique), reused, label, quiet)
    finished = reused
    try:
        calls = [(task.function, task.args, code) for _, task in todo]
        for position, outcome in executor.run(calls) if calls else ():  # nothing to do: no pool, no cluster
            key, task = todo[position]
            record = {"key": key, "function": task.function, "args": task.args, "code": code, **outcome}
            done[key] = record
            if sink is not None:
                sink.write(_line(record))
                sink.flush()
            finished += 1
            progress.advance(record["error"] is not None)
    except KeyboardInterrupt:
        raise StudyInterrupted(finished, len(unique), out) from None
    finally:
        executor.close()
        progress.close()
        if sink is not None:
            sink.close()
    records = [done[key] for key, _ in unique]
    if out is not None:
        keys = {key for key, _ in unique}
        _rewrite(out, [r for r in previous if r["key"] not in keys] + records)
    return Study(records, len(todo), reused, time.perf_counter() - start, executor.name)


def _open_sink(out: Path | None, previous: list[dict]):
    if out is None:
        return None
    out.parent.mkdir(parents=True, exist_ok=True)
    if previous:
        # rewritten first: a line cut short by a killed run must not run into the next one
        _rewrite(out, previous)
    return open(out, "a" if previous else "w", encoding="utf-8")


def _rewrite(out: Path, records: list[dict]) -> None:
    temporary = out.with_name(out.name + ".tmp")
    temporary.write_text("".join(map(_line, records)), encoding="utf-8")
    os.replace(temporary, out)


def _line(record: dict) -> str:
    """One line: the record's fields in the order they were made (key first), nested results as the task
    function ordered them (the same on every executor: results pass through JSON in the worker)."""
    return json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n"


def without_timing(record: dict[str, Any]) -> dict[str, Any]:
    """A record without the fields that differ between runs of the same task (`TIMING_FIELDS`)."""
    return {k: v for k, v in record.items() if k not in TIMING_FIELDS}


class _Progress:
    def __init__(self, total: int, reused: int, label: str, quiet: bool):
        self._bar = None
        self.failed = 0
        if quiet or not sys.stderr.isatty():
            return
        from rich import progress as rp
        from rich.console import Console

        self._bar = rp.Progress(rp.TextColumn("{task.description}"), rp.BarColumn(), rp.MofNCompleteColumn(),
                                rp.TextColumn("{task.fields[failed]} failed"), rp.TextColumn("{task.fields[rate]}"),
                                rp.TimeElapsedColumn(), rp.TextColumn("eta"), rp.TimeRemainingColumn(),
                                console=Console(stderr=True), transient=False)
        self._bar.start()
        self._start = time.perf_counter()
        self._ran = 0
        note = f" ({reused} from the file)" if reused else ""
        self._task = self._bar.add_task(f"{label}{note}", total=total, completed=reused, failed=0, rate="")

    def advance(self, failed: bool) -> None:
        self.failed += failed
        if self._bar is None:
            return
        self._ran += 1
        rate = self._ran / max(time.perf_counter() - self._start, 1e-9)
        self._bar.update(self._task, advance=1, failed=self.failed,
                         rate=f"{rate:.2f}/s" if rate >= 0.1 else f"{60 * rate:.1f}/min")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
