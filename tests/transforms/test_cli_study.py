"""The long commands as sweeps (transforms/cli_study.py, cli_sweep.py): `eqjax sweep` prints its table and writes
JSON lines, resumes from them; `rules verify` gives the same verdicts in process and on a process pool."""

from __future__ import annotations

import json
from pathlib import Path

from eval.study import read_records, without_timing
from transforms.cli import main
from transforms.cli_sweep import rule_specs

DATA = Path(__file__).parents[1] / "rewrites" / "data"
PROGRAMS = {
    "redundant": "{ lambda ; a:f64[3] b:f64[3]. let c:f64[3] = mul a 1.0:f64[]; d:f64[3] = sub b b; "
                 "e:f64[3] = add c d in (e,) }",
    "inverses": "{ lambda ; a:f64[4]. let b:f64[4] = neg a; c:f64[4] = neg b; d:f64[4] = exp c; "
                "e:f64[4] = log d in (e,) }",
}


def _programs(tmp_path: Path) -> str:
    folder = tmp_path / "programs"
    folder.mkdir()
    for name, text in PROGRAMS.items():
        (folder / f"{name}.jaxpr").write_text(text)
    return str(folder)


def test_sweep_prints_a_table_and_writes_json_lines(tmp_path, capsys):
    out = tmp_path / "sweep.jsonl"
    args = ["sweep", "--programs", _programs(tmp_path), "--rules", "strict,fast", "--cost", "flops",
            "--extractor", "greedy_dag", "--json-lines", str(out)]
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "4 optimizations on in-process (4 run, 0 from the file)" in table
    for head in ("cost before", "cost after", "e-nodes median", "stop reasons"):
        assert head in table
    records = read_records(out)
    assert [(r["args"]["rules"], r["args"]["program"]["name"]) for r in records] == [
        (rules, program) for rules in ("strict", "fast") for program in ("inverses", "redundant")]
    assert all(r["error"] is None for r in records)
    fast = {r["args"]["program"]["name"]: r["result"] for r in records if r["args"]["rules"] == "fast"}
    assert fast["inverses"]["cost_after"] < fast["inverses"]["cost_before"]  # log(exp(neg(neg a))) is a
    assert fast["redundant"]["eqns_after"] < fast["redundant"]["eqns_before"]
    assert main([*args, "--resume", "--json"]) == 0  # everything from the file: nothing runs again
    rows = json.loads(capsys.readouterr().out)
    assert [(r["rules"], r["extractor"], r["programs"], r["failed"]) for r in rows] == [
        ("strict", "greedy_dag", 2, 0), ("fast", "greedy_dag", 2, 0)]
    assert [json.loads(line)["key"] for line in out.read_text().splitlines()] == [r["key"] for r in records]


def test_sweep_on_a_process_pool_and_a_local_dask_cluster_writes_the_same_lines(tmp_path, capfd):
    programs = _programs(tmp_path)
    runs = {"serial": [], "pool": ["--jobs", "2"], "dask": ["--scheduler", "local", "--jobs", "2"]}
    for name, flags in runs.items():
        assert main(["sweep", "--programs", programs, "--rules", "strict,fast", "--json-lines",
                     str(tmp_path / f"{name}.jsonl"), "--json", *flags]) == 0
    serial, pool, dask = ([without_timing(r) for r in read_records(tmp_path / f"{name}.jsonl")] for name in runs)
    assert len(serial) == 4 and pool == serial and dask == serial
    # the workers freed their e-graphs in the threads that made them (rewrites.sweep.release_engine_state)
    assert "unsendable" not in capfd.readouterr().err


def test_sweep_options_name_their_choices(tmp_path, capsys):
    assert main(["sweep", "--programs", _programs(tmp_path), "--extractor", "greedy_dag,nope"]) == 2
    assert "unknown extractor 'nope'" in capsys.readouterr().err
    assert main(["sweep", "--programs", str(tmp_path / "programs"), "--resume"]) == 2
    assert "--json-lines PATH" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["sweep", "--programs", str(empty)]) == 2
    assert "NoPrograms" in capsys.readouterr().err


def test_rule_specs_keep_their_items():
    assert rule_specs("default,-mul-comm,fast, +x.rules") == ["default,-mul-comm", "fast,+x.rules"]


def test_rules_verify_on_a_process_pool_gives_the_same_verdicts(tmp_path, capsys):
    args = ["rules", "verify", "add-zero-exact", "log-product", "mul-one", "--load", str(DATA / "planted.rules"),
            "--json", "--budget", "20"]
    assert main(args) == 1
    serial = capsys.readouterr().out
    lines = tmp_path / "verify.jsonl"
    assert main([*args, "--jobs", "2", "--json-lines", str(lines)]) == 1
    assert capsys.readouterr().out == serial
    assert [r["args"]["name"] for r in read_records(lines)] == [v["name"] for v in json.loads(serial)]
