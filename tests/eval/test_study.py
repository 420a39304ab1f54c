"""The study runner: the same sweep gives the same file on every executor, an interrupted sweep resumes without
redoing finished tasks, a failing task is recorded and the sweep goes on."""

from __future__ import annotations

import json

import pytest

from eval import study as S
from eval.study import Task, run_study

TASKS = "tests.eval.study_tasks"


def _sweep(n: int = 6, fail_at: int = 4) -> list[Task]:
    return [Task(f"{TASKS}:square_or_fail", {"x": x, "fail_at": fail_at}) for x in range(n)]


def _lines_without_timing(path) -> list[str]:
    return [json.dumps(S.without_timing(json.loads(line)), sort_keys=True) for line in path.read_text().splitlines()]


def test_every_executor_writes_the_same_file(tmp_path):
    files = {}
    for name, executor in [("inprocess", S.InProcess()), ("pool", S.ProcessPool(2)), ("dask", S.Dask("local", 2))]:
        files[name] = tmp_path / f"{name}.jsonl"
        study = run_study(_sweep(), files[name], executor=executor, quiet=True)
        assert (study.ran, study.reused, len(study.failed)) == (6, 0, 1), name
    expected = _lines_without_timing(files["inprocess"])
    assert len(expected) == 6
    assert _lines_without_timing(files["pool"]) == expected
    assert _lines_without_timing(files["dask"]) == expected
    first = json.loads(files["inprocess"].read_text().splitlines()[0])
    assert first["result"] == {"x": 0, "square": 0, "pair": [0, 0]}  # through JSON: the tuple is a list
    assert list(first["result"]) == ["x", "square", "pair"]  # in the task's order, not sorted
    assert first["args"] == {"x": 0, "fail_at": 4} and first["code"] == S.code_version()


def test_a_failing_task_is_recorded_and_the_sweep_goes_on(tmp_path):
    out = tmp_path / "sweep.jsonl"
    study = run_study(_sweep(), out, quiet=True)
    [failure] = study.failed
    assert failure["args"]["x"] == 4 and failure["result"] is None
    assert failure["error"]["type"] == "ValueError" and failure["error"]["message"] == "no square of 4 today"
    assert "square_or_fail" in failure["error"]["traceback"]
    assert [r["result"]["square"] for r in study.records if r["error"] is None] == [0, 1, 4, 9, 25]
    again = run_study(_sweep(), out, executor=_Refusing(), quiet=True)  # a recorded failure is a result too
    assert (again.ran, again.reused) == (0, 6)


class _Refusing:
    """An executor for a sweep with nothing left to run: starting it is a mistake."""

    name = "refusing"

    def run(self, calls):
        raise AssertionError(f"asked to run {len(calls)} tasks of a finished sweep")

    def close(self):
        pass


def test_an_interrupted_sweep_resumes_without_redoing_finished_tasks(tmp_path):
    out, log = tmp_path / "sweep.jsonl", tmp_path / "calls.log"
    tasks = [Task(f"{TASKS}:square_until", {"x": x, "stop_at": 3, "log": str(log)}) for x in range(6)]
    with pytest.raises(S.StudyInterrupted) as stopped:
        run_study(tasks, out, quiet=True)
    assert (stopped.value.done, stopped.value.total) == (3, 6)
    assert [r["args"]["x"] for r in S.read_records(out)] == [0, 1, 2]  # flushed as they finished
    (tmp_path / "calls.log.resumed").touch()
    study = run_study(tasks, out, quiet=True)
    assert (study.ran, study.reused) == (3, 3)
    assert log.read_text().split() == ["0", "1", "2", "3", "4", "5"]  # each task ran once over both runs
    assert [r["result"]["square"] for r in S.read_records(out)] == [0, 1, 4, 9, 16, 25]


def test_a_line_cut_short_is_run_again(tmp_path):
    out, log = tmp_path / "sweep.jsonl", tmp_path / "calls.log"
    tasks = [Task(f"{TASKS}:square", {"x": x, "log": str(log)}) for x in range(3)]
    run_study(tasks, out, quiet=True)
    lines = out.read_text().splitlines()
    out.write_text(lines[0] + "\n" + lines[1][:20])  # a run killed while writing the second line
    study = run_study(tasks, out, quiet=True)
    assert (study.ran, study.reused) == (2, 1)
    assert log.read_text().split() == ["0", "1", "2", "1", "2"]
    assert len(S.read_records(out)) == 3


def test_without_resume_the_file_starts_afresh(tmp_path):
    out = tmp_path / "sweep.jsonl"
    run_study(_sweep(3), out, quiet=True)
    study = run_study(_sweep(2), out, resume=False, quiet=True)
    assert study.ran == 2 and len(S.read_records(out)) == 2


def test_lines_of_other_sweeps_are_kept_ahead_of_this_ones(tmp_path):
    out = tmp_path / "sweep.jsonl"
    run_study(_sweep(3)[2:], out, quiet=True)
    run_study(_sweep(2), out, quiet=True)
    assert [r["args"]["x"] for r in S.read_records(out)] == [2, 0, 1]


def test_the_key_is_the_call_and_the_code():
    a = Task(f"{TASKS}:square", {"x": 1, "log": None})
    b = Task(f"{TASKS}:square", {"log": None, "x": 1})
    assert a.key("c1") == b.key("c1")
    assert a.key("c1") != a.key("c2")
    assert a.key("c1") != Task(f"{TASKS}:square", {"x": 2, "log": None}).key("c1")


def test_tasks_that_cannot_run_say_why():
    with pytest.raises(S.TaskError, match="package.module:function"):
        Task("tests.eval.study_tasks.square")
    with pytest.raises(S.TaskError, match="not JSON"):
        Task(f"{TASKS}:square", {"x": object()})
    missing = S.call_task(f"{TASKS}:no_such_task", {}, S.code_version())
    assert missing["error"]["type"] == "TaskError" and "no task function" in missing["error"]["message"]
    other_code = S.call_task(f"{TASKS}:square", {"x": 1}, "0" * 16)
    assert "install the same eqjax on every worker" in other_code["error"]["message"]


def test_a_worker_that_dies_ends_a_pool_sweep_and_keeps_what_finished(tmp_path):
    out = tmp_path / "sweep.jsonl"
    tasks = [Task(f"{TASKS}:square_or_die", {"x": x, "die_at": 0 if x == 0 else -1}) for x in range(4)]
    with pytest.raises(S.WorkerDied, match="square_or_die.*--resume"):
        run_study(tasks, out, executor=S.ProcessPool(2), quiet=True)
    kept = S.read_records(out)
    assert all(r["error"] is None and r["args"]["x"] != 0 for r in kept)
