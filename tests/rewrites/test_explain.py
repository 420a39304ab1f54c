"""Derivations (rewrites.explain): the optimized program rebuilt from the input rule by rule, each step a named
rule with its class and place, its two sides as jaxprs re-checked on samples; the `eqjax explain` command.
(Every PROVES row of the rule tables checks its proof's derivation: tests/rewrites/helpers.py.)"""

import json

import numpy as np

import ir
import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir.core import ShapedArray
from ir.dtypes import float64
from rewrites.explain import explain
from rewrites.explain.derive import UNEXPLAINED, RawStep
from rewrites.explain.render import recheck, sample_inputs, term_program
from rewrites.prove import prove_equal
from transforms.cli import main

A = ShapedArray((3,), float64)
PROGRAM = """{ lambda ; a:f64[3] b:f64[3]. let
    c:f64[3] = mul a 1.0:f64[]
    d:f64[3] = log c
    e:f64[3] = exp d
    f:f64[3] = sub b b
    g:f64[3] = mul f a
    h:f64[3] = add e g
  in (h,) }"""


def _closed():
    return ir.make_jaxpr(lambda x, y: jnp.sum(jnp.exp(jnp.log(x * 1.0)) + (y - y) * x))(np.ones(3), np.ones(3))


def test_the_derivation_ends_at_the_optimized_program_and_every_step_checks():
    d = explain(_closed())
    assert d.steps and d.complete
    assert {"mul-one", "sub-self"} <= set(d.shaping_rules) <= {n for n, c in d.report.rule_matches.items() if c}
    assert d.report.shaping_rules == dict(d.shaping_rules) and "what shaped the result" in d.report.summary()
    first = d.steps[0]
    assert first.rule == "mul-one" and first.soundness == "exact" and first.equation == 1
    assert "mul a 1.0" in str(first.before) and str(first.after).endswith("in (a,) }")
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    for step in d.steps:  # each side is a program over the inputs, and they agree
        np.testing.assert_allclose(eval_jaxpr(step.before, x, y)[0], eval_jaxpr(step.after, x, y)[0], rtol=1e-12)


def test_a_kept_input_has_no_steps_and_the_derivation_is_deterministic():
    plain = ir.make_jaxpr(lambda x: jnp.sin(x))(np.ones(3))
    assert explain(plain).steps == []
    assert [str(s) for s in explain(_closed()).steps] == [str(s) for s in explain(_closed()).steps]


def test_a_proof_derives_the_right_side_from_the_left():
    proof = prove_equal(lambda x, y: jnp.log(jnp.exp(x) * jnp.exp(y)), lambda x, y: x + y, A, A)
    steps = proof.derivation()
    assert [s.rule for s in steps] == ["exp-add", "log-exp"] and steps[0].reversed
    assert all(s.recheck is None for s in steps)


def test_the_recheck_catches_a_step_that_changes_the_value():
    d = explain(_closed())
    step = next(s for s in d.steps if s.rule == "sub-self")
    samples = sample_inputs(d.program)
    assert recheck(step.before, step.after, "real", samples) is None
    wrong = ir.make_jaxpr(lambda x, y: y)(np.ones(3), np.ones(3))  # y - y "rewritten" to y
    assert recheck(step.before, wrong, "exact", samples) is not None


def test_an_unexplained_step_is_reported_and_makes_the_derivation_incomplete():
    from rewrites.engine import saturated
    from rewrites.explain import Derivation, checked_steps, chosen_terms, input_terms
    from rewrites.extract import extract

    closed = _closed()
    sat = saturated(closed, "default", keep_loaded=True)
    [start] = input_terms(sat.loaded, sat.view)
    [end] = chosen_terms(sat.view, extract(sat.view, sat.costs("flops")).choice)
    [step] = checked_steps(sat.view, sat.enc, [RawStep(0, (), None, False, start, end)], closed)
    assert step.rule == UNEXPLAINED and step.recheck is None  # equal values, no rule named
    assert not Derivation(closed, closed, sat.report, [step]).complete
    assert str(term_program(sat.view, start, sat.enc)) == str(step.before)


def test_the_explain_command(tmp_path, capsys):
    path = tmp_path / "prog.jaxpr"
    path.write_text(PROGRAM)
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{out.split()[0]} steps from the input") and "mul-one => [exact]" in out
    assert main(["explain", str(path), "--json", "--rules", "strict"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["complete"] and all(s["soundness"] == "exact" for s in data["steps"])
    assert set(data["shaping_rules"]) == {s["rule"] for s in data["steps"]}


def test_a_derivation_passes_through_the_nodes_constant_folding_retired():
    # Folding retires `1 + 3` (no rule matches it again), but the derivation still goes x + 3x -> (1+3)x -> 4x,
    # and a literal subterm of the input (2*3) is folded as a step of its own.
    d = explain(ir.make_jaxpr(lambda x: x + 3.0 * x)(A))
    assert d.complete and [s.rule for s in d.steps] == ["add-scaled-self", "fold-add-f64"]
    d = explain(ir.make_jaxpr(lambda x: x + ir.lax.mul(np.float64(2.0), np.float64(3.0)))(A))
    assert d.complete and "fold-mul-f64" in d.shaping_rules
