"""Bad input on the command line: one line on stderr (cut short, escapes shown), exit status 2, no
traceback; zero limits mean zero and negative ones are usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from transforms.cli import main

GOOD = b"{ lambda ; a:f64[3]. let b:f64[3] = sin a in (b,) }"
BAD_INPUTS = {
    "not-utf8": GOOD.replace(b"sin", b"sin\xff"),
    "ansi-escape": GOOD.replace(b"sin", b"sin\x1b[2J"),
    "lone-surrogate-bytes": GOOD.replace(b"sin", b"sin[q='\xed\xa0\x80']"),
    "huge-integer": GOOD.replace(b"f64[3]. ", b"f64[" + b"9" * 20000 + b"]. "),
    "long-line": GOOD.replace(b"sin a", b"sin a" + b" a" * 200_000 + b" +"),
    "deep-nesting": GOOD.replace(b"sin a", b"sin[x=" + b"(" * 5000 + b"] a"),
    "param-kind": GOOD.replace(b"sin a", b"integer_pow[y=2.5] a"),
    "param-range": GOOD.replace(b"sin a", b"integer_pow[y=1e999] a"),
    "unknown-param": GOOD.replace(b"sin a", b"sin[foo=1] a"),
}


def _file(tmp_path: Path, data: bytes, name: str = "prog.jaxpr") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("command", ["check", "eval", "optimize"])
@pytest.mark.parametrize("kind", sorted(BAD_INPUTS))
def test_bad_input_is_one_short_line_and_status_2(tmp_path, capsys, command, kind):
    assert main([command, _file(tmp_path, BAD_INPUTS[kind])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 600, err
    assert err.startswith(f"eqjax {command}: Jaxpr") and "\x1b" not in err and "Traceback" not in err


def test_bad_rule_files_are_one_line_rule_errors(tmp_path, capsys):
    for data in (b"bad-rule exact: mul(x, \xff) => x\n", b"bad-rule exact: mul(x, 1 => x\x1b[2J\n"):
        path = _file(tmp_path, data, "bad.rules")
        assert main(["rules", "verify", "--load", path]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "RuleSyntaxError" in err and "\x1b" not in err, err


def test_zero_iteration_limit_runs_zero_iterations(tmp_path, capsys):
    assert main(["optimize", _file(tmp_path, GOOD), "--iter-limit", "0", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["report"]
    assert report["iterations"] == 0


@pytest.mark.parametrize("option", ["--iter-limit", "--node-limit", "--time-limit"])
def test_negative_limits_are_usage_errors(tmp_path, capsys, option):
    with pytest.raises(SystemExit) as info:
        main(["optimize", _file(tmp_path, GOOD), option, "-1"])
    assert info.value.code == 2
    assert "must be at least 0" in capsys.readouterr().err
