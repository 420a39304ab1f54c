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


def _one_line_status_2(capsys, argv: list[str], *wanted: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for text in wanted:
        assert text in err, err
    return err


OPTIMIZING_COMMANDS = ["optimize", "sample", "grad", "jvp", "vjp", "vmap"]


@pytest.mark.parametrize("command", OPTIMIZING_COMMANDS)
@pytest.mark.parametrize("option, value, choices", [
    ("--rules", "bogus", "choose from strict, default, accurate, fast, none"),
    ("--rules", "default,+no-such-rule", "bad rule spec item '+no-such-rule'"),
    ("--cost", "bogus", "choose from ops, flops, bytes, latency, latency-numpy, latency-xla, learned:PATH"),
    ("--cost", "latency-nowhere", "choose from ops, flops"),
    ("--extractor", "bogus", "choose from tree, greedy_dag, ilp"),
])
def test_an_unknown_option_value_lists_the_choices(tmp_path, capsys, command, option, value, choices):
    err = _one_line_status_2(capsys, [command, _file(tmp_path, GOOD), option, value], choices)
    assert err.startswith(f"eqjax {command}: {option}: ")


SCALAR = (b"{ lambda ; a:f64[3] b:i32[] c:f64[]. let d:f64[3] = mul a c; "
          b"e:f64[] = reduce_sum[axes=(0,) out_sharding=None] d in (e,) }")


@pytest.mark.parametrize("argnums, problem", [
    ("3", "3 is out of range for a program of 3 inputs"),
    ("-4", "-4 is out of range"),
    ("0,x", "'0,x' is not comma-separated input positions"),
    ("1", "input 1 is i32[], which has no gradient"),
])
def test_a_bad_argnums_lists_the_differentiable_inputs(tmp_path, capsys, argnums, problem):
    _one_line_status_2(capsys, ["grad", _file(tmp_path, SCALAR), "--argnums", argnums], problem,
                       "choose from 0, 2 (negative positions count from the end)")


def test_negative_argnums_count_from_the_end_as_in_jax(tmp_path, capsys):
    path = _file(tmp_path, SCALAR)
    assert main(["grad", path, "--argnums", "-1", "--json"]) == 0
    last = json.loads(capsys.readouterr().out)["jaxpr"]
    assert main(["grad", path, "--argnums", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["jaxpr"] == last


@pytest.mark.parametrize("argv, choices", [
    (["rules", "list", "--set", "bogus"], "choose from strict, default, accurate, fast, none, ad, vmap"),
    (["rules", "semantics", "--sets", "strict,bogus", "--no-fixtures"],
     "choose from strict, default, accurate, fast, none"),
    (["rules", "effect", "x.rules", "--base", "bogus"], "choose from strict, default, accurate, fast, none"),
    (["bench", "optimizer", "--rules", "bogus"], "choose from strict, default, accurate, fast, none"),
    (["conformance", "--check", "out,bogus"], "choose from out, jvp, vjp, vmap, grad, hessian, vmap_grad, grad_grad"),
    (["conformance", "--optimize", "--rules", "bogus"], "choose from strict, default, accurate, fast, none"),
])
def test_unknown_set_and_check_names_list_the_choices(capsys, argv, choices):
    _one_line_status_2(capsys, argv, choices)


@pytest.mark.parametrize("argv, option", [
    (["conformance"], "eqjax conformance PATH"),
    (["rules", "semantics", "--programs", "1"], "--fixtures DIR"),
    (["rules", "effect", "x.rules"], "--programs FILE|DIR"),
    (["bench", "eval"], "oracle programs"),
])
def test_missing_default_fixtures_name_the_option_that_reads_others(tmp_path, monkeypatch, capsys, argv, option):
    import transforms.cli

    monkeypatch.setattr(transforms.cli, "DEFAULT_ORACLE", tmp_path / "nowhere")
    _one_line_status_2(capsys, argv, "no oracle fixtures at", option)
