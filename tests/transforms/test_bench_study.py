"""The benches and papers/cost-models on the study runner (`eval.study.rows`, `transforms.cli_study.row_runner`): a
bench's rows stream to --json-lines and --resume redoes none of them; a bench that times every row refuses
--jobs and --scheduler; the cost-models paper's deterministic part gives the same lines in process and on a pool."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

import rewrites.extract.gym_bench as gym_bench
import rewrites.redundancy as redundancy
from eval.study import ProcessPool, RowRunner, read_records, run_study, without_timing
from rewrites.extract.gym import BUNDLE, gym_files
from transforms.cli import main

PAPER = Path(__file__).parents[2] / "papers" / "cost-models"


def _no_rerun(*args, **kwargs):
    raise AssertionError("a row finished in the --json-lines file ran again")


def test_a_bench_resumed_from_its_json_lines_reruns_no_row(tmp_path, capsys, monkeypatch):
    shutil.copytree(BUNDLE / "data" / "dummy_examples", tmp_path / "data" / "dummy_examples")
    out = tmp_path / "bench.jsonl"
    command = ["bench", "extraction", "--data", str(tmp_path / "data"), "--json", "--json-lines", str(out)]
    assert main(command) == 0
    first = json.loads(capsys.readouterr().out)
    records = read_records(out)
    assert [r["args"]["path"] for r in records] == [str(p) for p in gym_files(tmp_path / "data")["dummy_examples"]]
    assert all(r["function"] == "rewrites.extract.gym_bench:file_row" and r["error"] is None for r in records)

    monkeypatch.setattr(gym_bench, "bench_file", _no_rerun)
    assert main([*command, "--resume"]) == 0
    assert json.loads(capsys.readouterr().out) == first  # every row from the file, timings included
    assert read_records(out) == records


def test_the_untimed_redundancy_suite_resumed_from_its_json_lines_reruns_no_case(tmp_path, capsys, monkeypatch):
    out = tmp_path / "rows.jsonl"
    cases = redundancy.CASES[:3]
    monkeypatch.setattr(redundancy, "CASES", cases)
    first = redundancy.redundancy_table(run_rows=RowRunner(out=out))
    assert [r["args"]["name"] for r in read_records(out)] == [c.name for c in cases]

    monkeypatch.setattr(redundancy, "measure", _no_rerun)
    assert redundancy.redundancy_table(run_rows=RowRunner(out=out, resume=True)) == first
    assert "reached the optimum: 3 of 3" in capsys.readouterr().out


@pytest.mark.parametrize(("bench", "flags"), [("eval", ["--jobs", "2"]), ("runtime", ["--jobs", "2"]),
                                              ("extraction", ["--scheduler", "local"])])
def test_a_bench_that_times_every_row_refuses_parallel_workers(bench, flags, capsys):
    assert main(["bench", bench, *flags]) == 2
    captured = capsys.readouterr()
    message = captured.err.strip()
    assert "\n" not in message and not captured.out
    assert message.startswith(f"eqjax bench: bench {bench} runs its rows one at a time in this process, as ")
    assert message.endswith("drop --jobs and --scheduler")


def _paper():
    spec = importlib.util.spec_from_file_location("cost_models_run", PAPER / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_cost_models_papers_tasks_give_the_same_lines_in_process_and_on_a_pool(tmp_path):
    paper = _paper()
    subjects = [s for s in sys.modules["population"].population(small=True)
                if s.name in ("redundant_mixed", "horner")]
    assert len(subjects) == 2
    tasks = [paper.variant_task(s, k=3, models=("ops", "flops", "bytes")) for s in subjects]  # no machine profile
    serial = run_study(tasks, out=tmp_path / "serial.jsonl", quiet=True)
    run_study(tasks, out=tmp_path / "pool.jsonl", executor=ProcessPool(2), quiet=True)
    assert not serial.failed
    lines = [[without_timing(r) for r in read_records(tmp_path / f"{name}.jsonl")] for name in ("serial", "pool")]
    assert lines[0] == lines[1]
    for subject, record in zip(subjects, serial.records, strict=True):
        study = paper.build(subject, record["result"])
        assert len(study.sampled) == 3 and set(study.extracted) >= {"original/-", "flops/ilp", "bytes/greedy_dag"}
        assert set(study.programs) == set(study.predicted["flops"])  # every variant read back and priced
