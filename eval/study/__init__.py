"""Studies at scale: a sweep is a list of tasks, each a pure function named by its import path with JSON-able
arguments; `run_study` runs them on an executor, streams one JSON line per finished task, skips on a rerun what
a previous run finished, and shows progress.

    from eval.study import Task, run_study, executor_for
    tasks = [Task("rewrites.sweep:optimize_program", {"program": p, "rules": r}) for p in programs for r in sets]
    study = run_study(tasks, out="sweep.jsonl", executor=executor_for(jobs=2), resume=True)

`task` (keys, the code version, running one task), `executors` (in-process, process pool, Dask), `runner`
(the file, resuming, progress), `programs` (programs as JSON-able task arguments), `rows` (a bench's rows as
tasks, timed ones one at a time in this process). Generic: no module here imports `rewrites` or `transforms`;
the task functions of eqjax's studies live beside what they run.
"""

from eval.study.executors import Dask, ExecutorUnavailable, InProcess, ProcessPool, WorkerDied, executor_for
from eval.study.rows import RowFailed, RowRunner
from eval.study.runner import Study, StudyInterrupted, read_records, run_study, without_timing
from eval.study.task import Task, TaskError, call_task, code_version

__all__ = ["Dask", "ExecutorUnavailable", "InProcess", "ProcessPool", "RowFailed", "RowRunner", "Study",
           "StudyInterrupted", "Task", "TaskError", "WorkerDied", "call_task", "code_version", "executor_for",
           "read_records", "run_study", "without_timing"]
