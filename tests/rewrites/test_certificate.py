"""Certificates of optimize runs and their replay (`rewrites.certificate`, `eqjax optimize --certificate`,
`eqjax replay`): a certificate made in another process is confirmed here; tampering with its input, its output
or a rule's definition is detected and named; the differential check catches a wrong rule; control flow and
gradient programs are covered.

The programs are ones whose optimization is deterministic today (the gradient of `residual_chain_16` is not:
its output depends on PYTHONHASHSEED).
"""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from eval.oracle import load_fixtures, parse_case
from ir.text import parse_jaxpr
from rewrites.certificate import SCHEMA, CertificateError, RulesChanged, replay, samples
from rewrites.engine import optimize
from rewrites.rulesets import rules_in_set
from rewrites.verify.judges import FINITE, RANGE, SPECIAL
from tests.oracle_paths import ORACLE
from transforms.ad.programs import grad_program
from transforms.cli import main

ROOT = Path(__file__).resolve().parents[2]
CASES = {c.id: c for c in load_fixtures([ORACLE / "programs.json", ORACLE / "control_flow.json"])}


def certified(closed, **options) -> dict:
    """The certificate of optimizing `closed`, as it reads back from JSON."""
    _, report = optimize(closed, certificate=True, **options)
    return json.loads(json.dumps(report.certificate))


@pytest.fixture(scope="module")
def mlp_certificate() -> dict:
    return certified(parse_case(CASES["program/mlp_tanh"]))


def test_a_certificate_made_in_another_process_is_confirmed_here(tmp_path):
    program = tmp_path / "rnn_scan.jaxpr"
    program.write_text(CASES["program/rnn_scan"].jaxpr_text)
    run = tmp_path / "run.json"
    seed = "7" if os.environ.get("PYTHONHASHSEED") != "7" else "8"
    proc = subprocess.run([sys.executable, "-m", "transforms.cli", "optimize", str(program), "--certificate", str(run)],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed})
    assert proc.returncode == 0, proc.stderr
    certificate = json.loads(run.read_text())
    assert certificate["schema"] == SCHEMA
    assert certificate["output"]["text"] == proc.stdout.rstrip("\n")

    result = replay(certificate)
    assert result.confirmed, result.summary()
    assert result.replayed["output"]["fingerprint"] == certificate["output"]["fingerprint"]
    assert result.replayed["differential"]["verdict"] == certificate["differential"]["verdict"] == "agree"
    assert main(["replay", str(run)]) == 0


def test_the_certificate_records_the_run(mlp_certificate):
    closed = parse_case(CASES["program/mlp_tanh"])
    optimized, report = optimize(closed)
    cert = mlp_certificate
    assert cert["input"]["text"] == str(closed) and cert["output"]["text"] == str(optimized)
    assert cert["settings"]["cost"] == "flops" and cert["settings"]["cost_source"] is None
    assert cert["rules"]["spec"] == "default" and cert["rules"]["comparison"] == "default"
    assert [r["name"] for r in cert["rules"]["rules"]] == report.rules
    assert cert["report"]["rules_fired"] == {n: k for n, k in report.rule_matches.items() if k}
    assert (cert["report"]["cost_before"], cert["report"]["cost_after"]) == (report.cost_before, report.cost_after)
    assert cert["differential"]["samples"] > cert["differential"]["skipped"]
    assert set(cert["versions"]) == {"eqjax", "egglog", "numpy", "python", "platform"}


def test_tampered_output_is_named(mlp_certificate):
    cert = copy.deepcopy(mlp_certificate)
    cert["output"]["text"] = cert["output"]["text"].replace("tanh", "sin", 1)
    result = replay(cert)
    assert not result.confirmed
    assert [m.field for m in result.mismatches] == ["output.text"]


def test_tampered_input_is_named(mlp_certificate):
    cert = copy.deepcopy(mlp_certificate)
    cert["input"]["text"] = cert["input"]["text"].replace("tanh", "sin", 1)
    result = replay(cert)
    assert [m.field for m in result.mismatches] == ["input.fingerprint"]
    assert result.replayed is None


def test_a_changed_builtin_rule_definition_is_refused_by_name(mlp_certificate):
    cert = copy.deepcopy(mlp_certificate)
    changed = cert["rules"]["rules"][3]
    changed["hash"] = "0" * 64
    with pytest.raises(RulesChanged, match=changed["name"]) as caught:
        replay(cert)
    assert caught.value.changes == [f"{changed['name']}: definition changed"]


def test_a_changed_rule_file_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.rules").write_text("my-mul-one  exact  mul(x, 1.0) => x\n")
    cert = certified(parse_jaxpr("{ lambda ; a:f64[3]. let b:f64[3] = mul a 1.0:f64[] in (b,) }"),
                     rules="strict,+mine.rules")
    assert replay(cert).confirmed
    (tmp_path / "mine.rules").write_text("my-mul-one  exact  mul(x, 1.0) => add(x, 0.0)\n")
    os.utime(tmp_path / "mine.rules", ns=(1, 1))  # a new modification time, however fast the file system
    with pytest.raises(RulesChanged, match="my-mul-one: definition changed"):
        replay(cert)


WRONG_RULES = [
    ("sub-self-is-one  exact  sub(x, x) => 1.0  # wrong: x - x is 0",
     "{ lambda ; a:f64[3] b:f64[3]. let c:f64[3] = sub a a; d:f64[3] = add c b in (d,) }"),
    ("add-zero-exact  exact  add(x, 0.0) => x  # wrong at x = -0.0 (-0.0 + 0.0 is +0.0): it is real",
     "{ lambda ; a:f32[4]. let b:f32[4] = add a 0.0:f32[] in (b,) }"),
]


def test_a_list_of_rules_replays_by_name():
    closed = parse_jaxpr("{ lambda ; a:f64[3]. let b:f64[3] = mul a 1.0:f64[]; c:f64[3] = sin b in (c,) }")
    cert = certified(closed, rules=rules_in_set("strict"))
    assert cert["rules"]["spec"] is None and cert["rules"]["comparison"] == "strict"
    assert replay(cert).confirmed
    cert["rules"]["rules"].append({**cert["rules"]["rules"][0], "name": "no-such-rule"})
    with pytest.raises(RulesChanged, match="no-such-rule: missing here"):
        replay(cert)


@pytest.mark.parametrize("rule, program", WRONG_RULES)
def test_the_differential_check_catches_a_wrong_rule(tmp_path, monkeypatch, rule, program):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wrong.rules").write_text(rule + "\n")
    cert = certified(parse_jaxpr(program), rules="strict,+wrong.rules")
    assert cert["report"]["rules_fired"].get(rule.split()[0])
    diff = cert["differential"]
    assert (diff["comparison"], diff["verdict"]) == ("strict", "differ")
    first = diff["first_difference"]
    assert first["output"] == 0 and first["problem"].startswith("bits differ")
    assert first["input_gives"] != first["output_gives"]
    assert replay(cert).confirmed  # a certificate of a wrong run replays: the same verdict, `differ`


@pytest.mark.parametrize("dtype", ["f64", "f32", "bf16", "c64", "i32", "u8", "bool"])
def test_samples_cover_the_special_values_each_dtype_has(dtype):
    [aval] = parse_jaxpr(f"{{ lambda ; a:{dtype}[5]. let  in (a,) }}").in_avals
    drawn = samples([aval])
    assert all(s.args[0].dtype == aval.dtype.numpy and s.args[0].shape == (5,) for s in drawn)
    assert {s.kind for s in drawn} == {FINITE, SPECIAL, RANGE}
    values = np.concatenate([s.args[0].ravel() for s in drawn])
    if aval.dtype.kind in "fc":
        info = ml_dtypes.finfo(values.real.dtype)
        parts = np.concatenate([values.real, values.imag]).astype(np.float64)
        for wanted in (np.inf, -np.inf, float(info.max), float(info.smallest_subnormal), float(info.smallest_normal)):
            assert wanted in parts
        assert np.isnan(parts).any() and np.signbit(parts[parts == 0]).any()
    elif aval.dtype.kind in "iu":
        info = np.iinfo(aval.dtype.numpy)
        assert info.min in values and info.max in values
    assert samples([aval])[0].args[0].tobytes() == drawn[0].args[0].tobytes()  # seeded


def test_fast_reports_special_value_differences_without_failing():
    closed = parse_jaxpr("{ lambda ; a:f64[3]. let b:f64[3] = mul a 0.0:f64[] in (b,) }")
    diff = certified(closed, rules="fast")["differential"]
    assert diff["comparison"] == "fast" and diff["verdict"] == "agree"
    assert diff["tolerated"] > 0 and "nan" in diff["first_tolerated"]["problem"]


@pytest.mark.parametrize("case", ["scan/multi_carry/f64[3,4]", "scan/nested/f64[3,4]",
                                  "program/newton_sqrt_while"])
def test_control_flow_programs_replay(case):
    cert = certified(parse_case(CASES[case]))
    assert cert["differential"]["verdict"] == "agree"
    result = replay(cert)
    assert result.confirmed, result.summary()


def test_a_while_loop_that_does_not_end_on_a_sample_is_skipped_not_hung():
    """`while max(x) < 10: x = 1.5 x + 0.25` never ends from x = -inf."""
    cert = certified(parse_case(CASES["while/data_dependent/f64[6]"]))
    diff = cert["differential"]
    assert diff["skipped"] >= 1 and "nested evaluations" in diff["first_skipped"]
    assert diff["verdict"] == "agree" and replay(cert).confirmed


@pytest.mark.parametrize("case", ["program/mlp_tanh", "program/rnn_scan"])
def test_gradient_programs_replay(case):
    """JAX's gradient program from the oracle, and eqjax's own (`grad_program`), optimized with a certificate.
    `grad_program` itself takes none: its optimize run adds the derivative's terms, so its output does not
    compute what its input does (a certificate is refused for such runs, below)."""
    jax_grad = parse_jaxpr(CASES[case].raw["grad"]["jaxpr"])
    eqjax_grad, _ = grad_program(parse_case(CASES[case]), [0])
    for closed in (jax_grad, eqjax_grad):
        cert = certified(closed)
        assert cert["differential"]["verdict"] == "agree"
        assert replay(cert).confirmed


def test_a_transform_run_gets_no_certificate():
    closed = parse_case(CASES["program/mlp_tanh"])
    with pytest.raises(CertificateError, match="plain optimize run"):
        optimize(closed, baseline=closed, certificate=True)


def test_library_version_differences_are_warnings(mlp_certificate):
    cert = copy.deepcopy(mlp_certificate)
    cert["versions"]["numpy"] = "0.0.1"
    result = replay(cert)
    assert result.confirmed
    assert any(w.startswith("versions.numpy") for w in result.warnings)


def test_cli_replay_exit_codes(tmp_path, mlp_certificate, capsys):
    good, bad, broken, missing = (tmp_path / f"{n}.json" for n in ("good", "bad", "broken", "missing"))
    good.write_text(json.dumps(mlp_certificate))
    tampered = copy.deepcopy(mlp_certificate)
    tampered["output"]["fingerprint"] = "0" * 64
    bad.write_text(json.dumps(tampered))
    broken.write_text("{not json")
    missing.write_text(json.dumps({"schema": SCHEMA, "input": {}}))

    assert main(["replay", str(good), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["confirmed"] is True
    assert main(["replay", str(bad)]) == 1
    assert "output.fingerprint" in capsys.readouterr().out
    for path in (broken, missing):
        assert main(["replay", str(path)]) == 2
        err = capsys.readouterr().err
        assert "CertificateError" in err and len(err.strip().splitlines()) == 1


def test_the_certificate_judges_as_the_semantics_run_does():
    """One policy for both checkers (`rewrites.verify.judges`): under `default` a `real` rule may change the
    sign of a zero and so of the infinity a division makes of it (x - x -> x * 0 is -0 at x = -1.5), which
    the semantics run accepts; the certificate's verdict agrees, and strict rules keep every sign."""
    closed = parse_jaxpr("{ lambda ; a:f64[3]. let b:f64[3] = sub a a; c:f64[3] = div 1.0:f64[] b in (c,) }")
    cert = certified(closed, rules="default")
    assert cert["report"]["rules_fired"], "a rule should rewrite x - x"
    assert cert["differential"]["verdict"] == "agree", cert["differential"]
    assert certified(closed, rules="strict")["differential"]["verdict"] == "agree"
