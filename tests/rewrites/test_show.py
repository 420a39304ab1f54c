"""`rewrites.show` without a browser: the e-graph page's structure (every class a cluster, the extracted choice
marked, class costs checked against a plain walk of the choice, neighbourhoods) and the program SVG."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ir.core import Literal
from rewrites.extract.greedy_dag import greedy_dag_choice
from rewrites.extract.result import exact_sum
from rewrites.show import ShowDependencyMissing, egraph_html, egraph_picture, program_svg
from rewrites.show.egraph_page import UnknownClass, class_links, page_html
from tests.rewrites.show_programs import demo_program

SVG = "{http://www.w3.org/2000/svg}"
ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def closed():
    return demo_program()


@pytest.fixture(scope="module")
def picture(closed):
    return egraph_picture(closed)


@pytest.fixture(scope="module")
def page(picture):
    return page_html(picture, "mlp_loss")


def svg_of_page(page: str) -> ET.Element:
    [svg] = re.findall(r"<svg\b.*?</svg>", page, re.S)
    return ET.fromstring(svg)


def groups(svg: ET.Element, css_class: str) -> list[ET.Element]:
    return [g for g in svg.iter(f"{SVG}g") if css_class in g.get("class", "").split()]


def data_of_page(page: str) -> dict:
    [text] = re.findall(r'<script type="application/json" id="egraph-data">(.*?)</script>', page, re.S)
    return json.loads(text)


def test_every_class_is_a_cluster_holding_its_nodes(picture, page):
    view = picture.view
    svg = svg_of_page(page)
    clusters = groups(svg, "cluster")
    assert picture.why == "all" and len(clusters) == len(view.classes) == len(groups(svg, "eclass"))
    assert {g.get("id") for g in clusters} == {f"class-{picture.names[c]}" for c in view.classes}
    assert {g.get("id") for g in groups(svg, "enode")} == {f"enode-{i}" for i in range(len(view.nodes))}
    assert not groups(svg, "stub")
    data = data_of_page(page)
    assert set(data["classes"]) == set(picture.names.values())
    assert data["roots"] == [picture.names[r] for r in view.roots]


def test_the_extracted_choice_is_marked(picture, page):
    svg = svg_of_page(page)
    choice = picture.extraction.choice
    assert {g.get("id") for g in groups(svg, "enode") if "chosen" in g.get("class")} == {
        f"enode-{i}" for i in choice.values()}
    assert {g.get("id") for g in groups(svg, "eclass") if "chosen" in g.get("class")} == {
        f"class-{picture.names[c]}" for c in choice}
    assert len(choice) < len(picture.view.classes)  # the rules found more than the program uses
    assert len(groups(svg, "root")) == len(set(picture.view.roots))


def _walked_cost(view, node_cost, chosen: dict[str, int], cid: str):
    """The DAG cost of class `cid` under `chosen` by a depth-first walk with a set (no bitsets)."""
    seen, stack = set(), [cid]
    while stack:
        c = stack.pop()
        if c not in seen:
            seen.add(c)
            stack.extend(view.nodes[chosen[c]].children)
    return exact_sum(node_cost[chosen[c]] for c in seen)


def test_class_costs_are_dag_costs_of_the_chosen_sub_programs(picture):
    view, ex = picture.view, picture.extraction
    ix = view.index
    greedy = {ix.class_ids[c]: n for c, n in greedy_dag_choice(view, picture.node_cost, stop_at_roots=False).items()}
    chosen = {**greedy, **ex.choice}
    for cid in view.classes:
        assert picture.class_cost[cid] == _walked_cost(view, picture.node_cost, chosen, cid), cid
    [root] = view.roots
    assert picture.class_cost[root] == ex.dag_cost > 0
    assert "DAG cost" in page_html(picture, "x")  # the legend says which cost


def test_focus_draws_a_neighbourhood_with_stubs_for_the_rest(picture):
    children, parents = class_links(picture.view)
    focus = next(c for c in picture.view.classes if children[c] and parents[c])
    name = picture.names[focus]
    near = picture.focused(name, radius=1)
    assert near.why == "focus" and near.focus == [focus]
    assert set(near.shown) == {focus, *children[focus], *parents[focus]}
    svg = svg_of_page(page_html(near, "x"))
    assert len(groups(svg, "cluster")) == len(near.shown)
    outside = {picture.names[d] for c in near.shown for i in near.view.classes[c]
               for d in near.view.nodes[i].children if d not in near.shown}
    assert {g.get("id") for g in groups(svg, "stub")} == {f"stub-{n}" for n in outside}
    assert picture.focused(focus, radius=0).shown == [focus]  # a full class id works too


def test_above_the_size_threshold_the_outputs_neighbourhood_is_drawn(picture):
    small = picture.focused(radius=1, max_classes=10)
    assert small.why == "size" and small.focus == picture.view.roots
    assert 1 < len(small.shown) < len(picture.view.classes)
    assert "more than 10: drawn is the outputs" in page_html(small, "x")
    with pytest.raises(UnknownClass, match="c0..c"):
        picture.focused("no-such-class")


def test_the_page_loads_nothing_from_outside(page):
    assert not re.search(r"""<(script|link|img|iframe)\b[^>]*\b(src|href)=""", page)
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert page.count("<svg") == 1 and "<?xml" not in page


def _count(svg: ET.Element, prefix: str, kind: str) -> int:
    return sum(1 for g in svg.iter(f"{SVG}g") if re.fullmatch(rf"{prefix}-{kind}-\d+", g.get("id", "")))


def test_program_svg_draws_both_programs(closed, picture):
    after = picture.program
    svg = ET.fromstring(program_svg(closed, after))
    assert svg.tag == f"{SVG}svg"
    for prefix, program in (("before", closed), ("after", after)):
        jaxpr = program.jaxpr
        assert _count(svg, prefix, "eqn") == len(jaxpr.eqns)
        assert _count(svg, prefix, "input") == len(jaxpr.invars)
        assert _count(svg, prefix, "output") == len(jaxpr.outvars)
        literals = sum(isinstance(a, Literal) for e in jaxpr.eqns for a in e.invars)
        assert sum(1 for g in svg.iter(f"{SVG}g") if g.get("id", "").startswith(f"{prefix}-lit-")) == literals
    assert len(after.jaxpr.eqns) < len(closed.jaxpr.eqns)
    labels = " ".join(t.text or "" for t in svg.iter(f"{SVG}text"))
    assert "dot_general" in labels and "permutation=(1, 0)" in labels and "f64[4,5]" in labels


def test_missing_graphviz_is_a_typed_error_naming_the_install(closed, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot`
    with pytest.raises(ShowDependencyMissing, match="apt-get install graphviz"):
        egraph_html(closed)
    with pytest.raises(ShowDependencyMissing, match="dot"):
        program_svg(closed, closed)
    monkeypatch.setitem(sys.modules, "graphviz", None)  # no Python package
    with pytest.raises(ShowDependencyMissing, match=r"pip install 'eqjax\[show\]'"):
        program_svg(closed, closed)


def test_the_core_runs_without_dot(tmp_path):
    """Only `show` needs Graphviz's `dot` (the graphviz Python package comes with egglog)."""
    code = ("import rewrites.show, rewrites.engine, transforms.cli\n"
            "from ir.text import parse_jaxpr\n"
            "p = parse_jaxpr('{ lambda ; a:f64[3]. let b:f64[3] = mul a 1.0:f64[] in (b,) }')\n"
            "out, _ = rewrites.engine.optimize(p)\n"
            "assert len(out.jaxpr.eqns) == 0, out\n"
            "transforms.cli.build_parser()\n"
            "try:\n    rewrites.show.program_svg(p, out)\n"
            "except rewrites.show.ShowDependencyMissing as e:\n    print('missing:', e)\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    assert "missing: eqjax show needs Graphviz's `dot` program on PATH" in run.stdout
