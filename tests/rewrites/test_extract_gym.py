"""extraction-gym's e-graphs: the reader, the ported gym extractors, eqjax's extractors against brute force,
and `eqjax bench extraction` on a slice of the bundled data."""

from __future__ import annotations

import itertools
import json
import math
import shutil

import pytest

from rewrites.extract.greedy_dag import greedy_dag_choice
from rewrites.extract.gym import BUNDLE, GymFormatError, gym_egraph, read_gym
from rewrites.extract.gym_bench import EQJAX, GYM, bench_extraction, run_one
from rewrites.extract.gym_ports import gym_bottom_up, gym_faster_greedy_dag, gym_ilp_highs
from rewrites.extract.ilp import cheapest_heuristic
from rewrites.extract.result import finish
from transforms.cli import main

CRAFTED = BUNDLE / "crafted"  # from extraction-gym's test_data/crafted/


def node(eclass, op, children=(), cost=1.0):
    return {"op": op, "eclass": eclass, "children": list(children), "cost": cost}


# Sharing pays only as a DAG: A and B each take their leaf (cost 2) alone, but both reuse S
# (1 + 1 + 1.5 = 3.5 < 2 + 2): tree and greedy extraction give 4, the optimum is 3.5.
SHARING = {"nodes": {"r": node("R", "pair", ["a1", "b1"], 0.0),
                     "a1": node("A", "f", ["s"], 1.0), "a2": node("A", "x", [], 2.0),
                     "b1": node("B", "g", ["s"], 1.0), "b2": node("B", "y", [], 2.0),
                     "s": node("S", "s", [], 1.5)},
           "root_eclasses": ["R"]}

# Cycles: A = f(A) = g(B), B = h(A) = leaf; the only acyclic term of A is g(leaf) (cost 1 + 5).
CYCLE = {"nodes": {"r": node("R", "out", ["f"], 0.0),
                   "f": node("A", "f", ["f"], 0.0), "g": node("A", "g", ["h"], 1.0),
                   "h": node("B", "h", ["f"], 0.0), "leaf": node("B", "leaf", [], 5.0)},
         "root_eclasses": ["R"]}


def brute_force_dag_cost(egraph) -> float:
    """The least DAG cost over every acyclic choice of one node per class."""
    view, ix = egraph.view, egraph.view.index
    best = math.inf
    for picks in itertools.product(*ix.members):
        try:
            best = min(best, finish(view, "brute", dict(enumerate(picks)), egraph.cost, "", 0.0).dag_cost)
        except ValueError:  # the choice has a cycle
            continue
    return best


def test_reader_maps_node_children_to_their_classes_in_gym_order():
    g = gym_egraph({"nodes": {"n2": {"op": "b", "eclass": "y"}, "n1": node("x", "a", ["n2", "n2"], 3.0),
                              "n3": node("y", "c", [], 0.5)}, "root_eclasses": ["x"]}, "t")
    assert list(g.view.classes) == ["y", "x"]  # order of first appearance, as egraph-serialize
    assert [(n.op, n.children, n.payload) for n in g.view.nodes] == [
        ("b", (), ("n2",)), ("c", (), ("n3",)), ("a", ("y", "y"), ("n1",))]
    assert g.cost == [1.0, 0.5, 3.0]  # a missing cost is 1.0
    assert g.view.roots == ["x"]


@pytest.mark.parametrize("data, message", [
    ({"nodes": {"a": node("x", "a")}, "root_eclasses": ["z"]}, "have no nodes"),
    ({"nodes": {"a": node("x", "a", ["b"])}, "root_eclasses": ["x"]}, "not a node"),
    ({"nodes": {"a": node("x", "a")}}, "no root"),
])
def test_reader_rejects_malformed_egraphs(data, message):
    with pytest.raises(GymFormatError, match=message):
        gym_egraph(data)


def test_reader_reads_gzipped_bundle_files():
    g = read_gym(BUNDLE / "data" / "egg" / "math_diff_same.json.gz")
    assert g.name == "egg/math_diff_same" and len(g.view.nodes) == len(g.cost) > 0


@pytest.mark.parametrize("name", ["tree", "tree_plus_cycles"])
def test_every_extractor_finds_the_brute_force_optimum_on_gym_crafted_egraphs(name):
    egraph = read_gym(CRAFTED / f"{name}.json")
    optimum = brute_force_dag_cost(egraph)
    for name in EQJAX + GYM:
        assert run_one(egraph, name, timeout=10.0)["dag_cost"] == optimum, name


def _dag_costs(egraph) -> dict[str, float]:
    return {name: run_one(egraph, name, timeout=10.0)["dag_cost"] for name in EQJAX + GYM}


def test_the_ilps_and_greedy_sharing_share_a_second_root_on_gym_multi_root():
    # root 0 = node_0(1, 1) (cost 0) or node_1 (5); root 1 = node_2 (10). Alone, class 0 is cheaper as
    # node_1 (5 < 0 + 10 + 10 as a tree, < 0 + 10 as a DAG), but class 1 is paid for anyway: the ILPs see it,
    # and so does eqjax's greedy_dag through its sharing pass (rewrites/extract/share.py); gym's greedy does not.
    egraph = read_gym(CRAFTED / "multi_root.json")
    assert brute_force_dag_cost(egraph) == 10.0
    assert _dag_costs(egraph) == {"eqjax:tree": 15.0, "eqjax:greedy_dag": 10.0, "eqjax:ilp": 10.0,
                                  "gym:bottom-up": 15.0, "gym:faster-greedy-dag": 15.0, "gym:ilp-highs": 10.0}


def test_every_extractor_finds_the_only_acyclic_term_through_cycles():
    egraph = gym_egraph(CYCLE)
    assert brute_force_dag_cost(egraph) == 6.0
    for name in EQJAX + GYM:
        assert run_one(egraph, name, timeout=10.0)["dag_cost"] == 6.0, name


def test_greedy_extractors_miss_sharing_that_the_ilps_find():
    egraph = gym_egraph(SHARING)
    assert brute_force_dag_cost(egraph) == 3.5
    assert _dag_costs(egraph) == {"eqjax:tree": 4.0, "eqjax:greedy_dag": 4.0, "eqjax:ilp": 3.5,
                                  "gym:bottom-up": 4.0, "gym:faster-greedy-dag": 4.0, "gym:ilp-highs": 3.5}


def test_ported_extractors_choose_the_hand_computed_nodes():
    egraph = gym_egraph(SHARING)
    view = egraph.view
    names = lambda choice: {view.index.class_ids[c]: view.nodes[n].payload[0] for c, n in choice.items()}
    assert names(gym_bottom_up(view, egraph.cost)) == {"R": "r", "A": "a2", "B": "b2", "S": "s"}
    # faster-greedy-dag: S, A, B from the leaves; R's set is {R, A, B}: 0 + 2 + 2
    assert names(gym_faster_greedy_dag(view, egraph.cost)) == {"R": "r", "A": "a2", "B": "b2", "S": "s"}
    choice, status = gym_ilp_highs(view, egraph.cost)
    assert status == "optimal" and names(choice) == {"R": "r", "A": "a1", "B": "b1", "S": "s"}


def test_ilp_falls_back_to_the_cheapest_heuristic_not_only_greedy_dag():
    egraph = read_gym(BUNDLE / "data" / "dummy_examples" / "ab_add.json.gz")
    greedy = greedy_dag_choice(egraph.view, egraph.cost)
    assert finish(egraph.view, "greedy_dag", greedy, egraph.cost, "", 0.0).dag_cost == 8.0
    # faster-greedy-dag and bottom-up both find 7 here, the optimum
    assert cheapest_heuristic(egraph.view, egraph.cost, greedy, deadline=math.inf).dag_cost == 7.0


def test_bench_prints_a_table_per_data_set_and_the_verdict(tmp_path, capsys):
    for data_set in ("egg", "dummy_examples"):
        shutil.copytree(BUNDLE / "data" / data_set, tmp_path / data_set)
    lines = []
    bench_extraction(tmp_path, timeout=5.0, out=lines.append)
    text = "\n".join(lines)
    assert "egg: 3 file(s)" in text and "dummy_examples: 2 file(s)" in text
    for name in EQJAX + GYM:
        assert name in text
    assert any(line.split() == ["egg:", "yes", "(worst", "eqjax", "ratio", "1.0000)"] for line in lines)

    assert main(["bench", "extraction", "--data", str(tmp_path), "--json", "--timeout", "5"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [d["data_set"] for d in result["data_sets"]] == ["dummy_examples", "egg"]
    egg = result["data_sets"][1]
    assert egg["eqjax_within_1pct"] and set(egg["extractors"]) == set(EQJAX + GYM)
    assert all(run["dag_cost"] is not None for f in egg["per_file"] for run in f["runs"])


def test_bench_skips_malformed_files_and_negative_costs(tmp_path):
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "negative.json").write_text(json.dumps(
        {"nodes": {"a": node("x", "a", [], -1.0)}, "root_eclasses": ["x"]}))
    (tmp_path / "odd" / "rootless.json").write_text(json.dumps(
        {"nodes": {"a": node("x", "a")}, "root_eclasses": ["z"]}))
    lines = []
    result = bench_extraction(tmp_path, out=lines.append)
    assert [f["skipped"] for f in result["data_sets"][0]["skipped"]] == ["negative costs", "malformed"]
    assert "\nodd: no file benched; 2 skipped (malformed, negative costs)" in lines
    assert not result["data_sets"][0]["eqjax_within_1pct"]


def test_bench_refuses_a_missing_data_folder(tmp_path, capsys):
    assert main(["bench", "extraction", "--data", str(tmp_path / "nothing")]) == 2
    assert "not a folder of data sets" in capsys.readouterr().err
