"""`eqjax show`: the picture follows --out's suffix (.html the e-graph page, .svg the program before and after);
another suffix, a focus that names nothing, or a missing `dot` exit 2 with one line saying why."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.rewrites.show_programs import demo_program
from transforms.cli import main


@pytest.fixture(scope="module")
def program_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("show") / "mlp.jaxpr"
    path.write_text(str(demo_program()))
    return str(path)


def test_html_out_writes_the_egraph_page(program_file, tmp_path, capsys):
    out = tmp_path / "egraph.html"
    assert main(["show", program_file, "--out", str(out), "--rules", "strict", "--iter-limit", "3"]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "e-graph of mlp.jaxpr" in page
    assert len(re.findall(r'class="cluster\b', page)) > 1 and "under <b>flops</b>" in page
    assert f"wrote {out}" in capsys.readouterr().err


def test_svg_out_writes_the_program_before_and_after(program_file, tmp_path):
    out = tmp_path / "prog.SVG"  # the suffix is read case-blind
    assert main(["show", program_file, "--out", str(out), "--cost", "ops"]) == 0
    svg = ET.fromstring(out.read_text())
    ids = [g.get("id", "") for g in svg.iter("{http://www.w3.org/2000/svg}g")]
    assert sum(re.fullmatch(r"before-eqn-\d+", i) is not None for i in ids) == len(demo_program().jaxpr.eqns)
    assert any(re.fullmatch(r"after-eqn-\d+", i) for i in ids)


@pytest.mark.parametrize("argv, message", [
    (["--out", "x.png"], "cannot tell what to draw from 'x.png' (suffix '.png'); end it in .html for"),
    (["--out", "x"], "(suffix 'none')"),
    (["--out", "x.svg", "--focus", "c1"], "--focus draws part of the e-graph page"),
    (["--out", "x.html", "--extractor", "best"], "unknown extractor 'best'"),
])
def test_usage_errors_exit_2_with_one_line(program_file, tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(["show", program_file, *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("eqjax show: ") and message in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_focus_that_names_nothing_exits_2(program_file, tmp_path, capsys):
    assert main(["show", program_file, "--out", str(tmp_path / "g.html"), "--focus", "c9999",
                 "--iter-limit", "1"]) == 2
    assert "UnknownClass: --focus 'c9999': no class has that name" in capsys.readouterr().err


def test_without_dot_it_exits_2_naming_the_install(program_file, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["show", program_file, "--out", str(tmp_path / "g.html")]) == 2
    err = capsys.readouterr().err
    assert "ShowDependencyMissing" in err and "apt-get install graphviz" in err
