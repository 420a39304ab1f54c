"""`eqjax check` (and the commands that parse before they work) refuse a primitive eqjax has no shape rule
for: one line on stderr naming the primitive and where a rule would go, exit status 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from transforms.cli import main

UNKNOWN = "{ lambda ; a:f64[3]. let b:f64[3] = sin a c:f64[3] = frobnicate[k=1] b in (c,) }"
NESTED = ("{ lambda ; a:f64[3]. let b:f64[3] = jit[name=f jaxpr={ lambda ; c:f64[3]. let "
          "d:f64[3] = frobnicate c in (d,) }] a in (b,) }")


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "prog.jaxpr"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("command", ["check", "eval"])
@pytest.mark.parametrize("text", [UNKNOWN, NESTED], ids=["top-level", "nested"])
def test_unknown_primitive_is_one_line_and_status_2(tmp_path, capsys, command, text):
    assert main([command, _file(tmp_path, text)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"eqjax {command}: UnsupportedPrimitive: primitive 'frobnicate' has no shape/dtype "
                            "rule (add it to ir/shapes)\n")


def test_known_primitives_still_check(tmp_path, capsys):
    assert main(["check", _file(tmp_path, UNKNOWN.replace("frobnicate[k=1]", "cos"))]) == 0
    assert "cos b" in capsys.readouterr().out
