"""The `eqjax` commands of the batching and rule-workbench work, run in process: vmap, rules list (the
vmap set, the text format), optimize with a rule file added, rules effect."""

from __future__ import annotations

import json
from pathlib import Path

from ir.text import parse_jaxpr
from rewrites.rulecompile import rules_from_text
from transforms.cli import main

EXAMPLE_RULES = Path(__file__).parents[1] / "rewrites" / "data" / "example.rules"
PROGRAM = """{ lambda ; a:f64[3] b:f64[3]. let
    c:f64[3] = sin a
    d:f64[3] = mul c 1.0:f64[]
    e:f64[3] = mul d b
  in (e,) }"""


def _file(tmp_path: Path, text: str = PROGRAM) -> str:
    path = tmp_path / "prog.jaxpr"
    path.write_text(text)
    return str(path)


def test_vmap_prints_the_batched_program(tmp_path, capsys):
    assert main(["vmap", _file(tmp_path), "--in-axes", "0,None", "--axis-size", "5"]) == 0
    batched = parse_jaxpr(capsys.readouterr().out)
    assert [str(v.aval) for v in batched.jaxpr.invars] == ["f64[5,3]", "f64[3]"]
    assert [str(a) for a in batched.out_avals] == ["f64[5,3]"]


def test_rules_list_of_the_vmap_set_and_in_text_format(capsys):
    assert main(["rules", "list", "--set", "vmap", "--json"]) == 0
    rules = json.loads(capsys.readouterr().out)
    # "lists": the expansions of the list functions the any-count rules build (transforms/arglists.py)
    assert {r["category"] for r in rules} == {"vmap", "lists"}
    assert any(r["name"] == "vmap-dot-general-bb-front" for r in rules)
    assert main(["rules", "list", "--set", "strict", "--format", "text"]) == 0
    text = capsys.readouterr().out
    reloaded = rules_from_text(text, "<dump>")
    assert len(reloaded) > 50 and all(r.soundness == "exact" for r in reloaded)


def test_optimize_with_a_rule_file_added(tmp_path, capsys):
    assert main(["optimize", _file(tmp_path), "--rules", f"strict,+{EXAMPLE_RULES}", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["report"]["rule_matches"]["mul-by-one"] > 0
    assert "1.0" not in out["jaxpr"]


def test_rules_effect_over_a_program_directory(tmp_path, capsys):
    _file(tmp_path)
    assert main(["rules", "effect", str(EXAMPLE_RULES), "--programs", str(tmp_path), "--base", "strict",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    effects = {e["name"]: e for e in out["rules"]}
    assert out["programs"] == 1 and not out["skipped"]
    assert effects["mul-by-one"]["matches"] > 0 and effects["mul-by-one"]["programs"] == 1
    assert effects["log-of-product"]["matches"] == 0


def test_bench_control_prints_sizes_independent_of_trip_count(capsys):
    from transforms.bench_control import bench_control

    result = bench_control(rules="none", lengths=(2, 32), depths=(2, 4))
    out = capsys.readouterr().out
    assert "fitted exponent of e-graph size in body size" in out
    for kind in ("scan", "while"):
        short, long = result[(kind, "length", 2)], result[(kind, "length", 32)]
        assert [nodes for nodes, _ in short] == [nodes for nodes, _ in long]  # bodies are terms, not unrolled


def test_sample_prints_distinct_equivalent_programs_the_same_for_a_seed(tmp_path, capsys):
    import numpy as np

    from eval.interpreter import eval_jaxpr

    assert main(["sample", _file(tmp_path), "-k", "4", "--seed", "2", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["sample", _file(tmp_path), "-k", "4", "--seed", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert 2 <= len(first) <= 4 and len({s["jaxpr"] for s in first}) == len(first)
    a, b = np.linspace(-1, 1, 3), np.linspace(2, 3, 3)
    want = eval_jaxpr(parse_jaxpr(PROGRAM), a, b)[0]
    for s in first:
        np.testing.assert_allclose(eval_jaxpr(parse_jaxpr(s["jaxpr"]), a, b)[0], want, rtol=1e-15)
    assert main(["sample", _file(tmp_path), "-k", "2"]) == 0
    assert capsys.readouterr().out.startswith("# sample 0:")


def test_a_check_without_fixture_data_counts_as_skipped_with_the_reason(capsys):
    from eval.oracle import DEFAULT_ORACLE, load_fixtures

    assert main(["conformance", "--family", "unary", "--check", "out,grad", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    cases = load_fixtures([DEFAULT_ORACLE], ["unary"])
    grad = [o for o in out["outcomes"] if o["check"] == "grad"]
    assert len(grad) == len(cases) and {o["status"] for o in grad} == {"skipped"}
    assert all(o["reason"].startswith("no grad data: the oracle records grad for whole programs only") for o in grad)
    assert out["summary"]["skipped"] == len(cases) + sum(o["status"] == "skipped" for o in out["outcomes"]
                                                         if o["check"] == "out")


def test_optimize_trace_prints_each_run_with_the_egraph_size(tmp_path, capsys):
    assert main(["optimize", _file(tmp_path), "--trace", "--iter-limit", "3"]) == 0
    err = capsys.readouterr().err
    table = err.split("runs of the saturation loop:\n")[1].splitlines()
    assert table[0].split()[:6] == ["phase", "iters", "seconds", "rows", "e-nodes", "classes"]
    runs = [line.split() for line in table[1:]]
    assert [r[0] for r in runs] == ["rules"] * (len(runs) - 1) + ["analysis"]
    assert all(r[1] == "1" and int(r[4]) >= int(r[5]) > 0 for r in runs[:-1])
