"""The accuracy-aware cost ("flops+accuracy", rewrites/accuracy/local.py): Herbie-style local error as a price per
e-node. On every numerical-stability row the optimizer, priced so and given the stable forms (rules="accurate"),
returns a program with fewer bits of error
than the naive form (measured against the high-precision reference by `measure_accuracy`, not by the cost
itself), and as few as the `flops` choice; on the redundancy suite it reaches what `flops` reaches."""

import math

import pytest

import ir.numpy as jnp
from ir import lax
from ir.core import ShapedArray
from ir.dtypes import float64
from ir.text import parse_jaxpr
from ir.tracing import make_jaxpr
from rewrites.accuracy import measure_accuracy
from rewrites.accuracy.local import AccuracyCost, local_errors, program_steps
from rewrites.costs import get_cost_model, jaxpr_cost, split_accuracy
from rewrites.engine import optimize, saturated
from rewrites.extract import EXTRACTORS
from rewrites.redundancy import CASES, measure
from tests.profile import ci_share
from transforms.cli import main

S = ShapedArray((), float64)
V = ShapedArray((4,), float64)
exp, log, logistic = jnp.exp, jnp.log, lax.logistic

# (name, the naive form, its operands): PyTensor's numerical-stability rewrites, as the naive programs they fix
STABILITY = [
    ("log(1-x)", lambda x: log(1.0 - x), (S,)),
    ("1-exp(x)", lambda x: 1.0 - exp(x), (S,)),
    ("log(1-exp(x))", lambda x: log(1.0 - exp(x)), (S,)),
    ("1-sigmoid(x)", lambda x: 1.0 - logistic(x), (S,)),
    ("1/(1+exp(x))", lambda x: 1.0 / (1.0 + exp(x)), (S,)),
    ("softplus log(1+exp(x))", lambda x: log(1.0 + exp(x)), (S,)),
    ("softplus log1p(exp(x))", lambda x: jnp.log1p(exp(x)), (S,)),
    ("log-sigmoid", lambda x: log(logistic(x)), (S,)),
    ("logaddexp", lambda x, y: log(exp(x) + exp(y)), (S, S)),
    ("logsumexp", lambda x: log(jnp.sum(exp(x))), (V,)),
    ("1-erf(x)", lambda x: 1.0 - lax.erf(x), (S,)),
    ("1-erfc(x)", lambda x: 1.0 - lax.erfc(x), (S,)),
]


def _traced(f, avals=(S,)):
    return make_jaxpr(f)(*avals)


def _mean_bits(original, program) -> tuple[float, float]:
    [out] = measure_accuracy(original, program)["outputs"]
    return out["input_mean_bits"], out["optimized_mean_bits"]


@pytest.mark.parametrize("name,f,avals", STABILITY, ids=[r[0] for r in STABILITY])
def test_accuracy_cost_picks_the_accurate_form(name, f, avals):
    naive = _traced(f, avals)
    accurate, report = optimize(naive, rules="accurate", cost="flops+accuracy")
    by_flops, _ = optimize(naive, rules="accurate", cost="flops")
    before, after = _mean_bits(naive, accurate)
    _, flops_after = _mean_bits(naive, by_flops)
    assert after <= flops_after + 0.05, f"{name}: flops+accuracy gives {after} bits, flops {flops_after}"
    assert after < 1.0, f"{name}: {after} mean bits of error left\n{accurate}"
    assert after < before or before < 1.0, f"{name}: {before} -> {after} bits"
    assert report.cost_model == "flops+accuracy" and report.cost_after <= report.cost_before


def test_log_softmax_loses_most_of_its_error():
    """log(exp(x)/sum(exp x)) -> x - logsumexp(x): from 17 mean bits to about 3 (the subtraction x - lse still
    cancels where x is the largest element, which PyTensor's (x - m) - log(sum(exp(x - m))) avoids)."""
    naive = _traced(lambda x: log(exp(x) / jnp.sum(exp(x))), (V,))
    before, after = _mean_bits(naive, optimize(naive, rules="accurate", cost="flops+accuracy")[0])
    assert before > 10 and after < before / 3


def test_local_error_charges_the_operation_that_loses_the_bits():
    """log(1 - x): the `sub` rounds once (0 bits); `log` of the rounded 1 - x loses up to 64 bits at tiny x."""
    steps, leaves, in_avals = program_steps(_traced(lambda x: log(1.0 - x)))
    errors = local_errors(steps, leaves, in_avals)
    bits = dict(zip([s.eqn.primitive for s in steps], errors.bits, strict=True))
    assert errors.measured == 2 and errors.samples > 20
    assert bits["sub"] == 0.0 and bits["log"] > 2.0
    steps, leaves, in_avals = program_steps(_traced(lambda x: jnp.log1p(-x)))
    assert local_errors(steps, leaves, in_avals).bits == [0.0, 0.0]


def test_the_program_cost_is_the_base_cost_plus_the_weighted_local_errors():
    naive = _traced(lambda x: log(1.0 - x))
    flops = jaxpr_cost(get_cost_model("flops"), naive)
    one, eight = jaxpr_cost(get_cost_model("flops+accuracy:1"), naive), jaxpr_cost(get_cost_model(
        "flops+accuracy:8"), naive)
    assert one > flops and math.isclose(eight - flops, 8 * (one - flops))
    accurate = _traced(lambda x: jnp.log1p(-x))
    assert jaxpr_cost(get_cost_model("flops+accuracy"), accurate) == jaxpr_cost(get_cost_model("flops"), accurate)


def test_names_and_weights():
    assert split_accuracy("flops") == ("flops", None)
    assert split_accuracy("latency-numpy+accuracy:2.5") == ("latency-numpy", 2.5)
    model = get_cost_model("ops+accuracy")
    assert isinstance(model, AccuracyCost) and model.name == "ops+accuracy" and model.base.name == "ops"
    assert get_cost_model("flops+accuracy:8").name == "flops+accuracy:8"
    for bad in ("flops+accuracy:0", "flops+accuracy:-1", "flops+accuracy:x", "flops+accuracy:inf"):
        with pytest.raises(ValueError, match="accuracy weight"):
            get_cost_model(bad)
    with pytest.raises(ValueError, match="unknown cost model"):
        get_cost_model("flopz+accuracy")


@pytest.mark.parametrize("extractor", sorted(EXTRACTORS))
def test_every_extractor_minimizes_it(extractor):
    naive = _traced(lambda x: log(1.0 - x))
    program, _ = optimize(naive, rules="accurate", cost="flops+accuracy", extractor=extractor)
    assert [e.primitive for e in program.eqns] == ["neg", "log1p"]


def test_saturated_egraph_prices_every_node():
    sat = saturated(_traced(lambda x: 1.0 - lax.erf(x)), rules="accurate")
    base, priced = sat.costs("flops"), sat.costs("flops+accuracy")
    assert len(base) == len(priced) and all(p >= b for p, b in zip(priced, base, strict=True))
    assert sum(p > b for p, b in zip(priced, base, strict=True)) >= 1  # the cancelling sub


@pytest.mark.parametrize("case", ci_share([c for c in CASES if c.rules != "fast"], 3), ids=lambda c: c.name)
def test_no_loss_on_the_redundancy_suite(case):
    """Priced with accuracy and given the stable forms (`accurate` for the `default` cases), each program still
    gets as few equations and flops as under `flops`. (The `fast` cases reach their optimum by unsafe rules, which
    change results at special values: the accuracy cost counts that as error, see the next test.)"""
    by_flops, _ = measure(case, cost="flops")
    by_accuracy, _ = measure(case, "accurate" if case.rules == "default" else case.rules, cost="flops+accuracy")
    assert (by_accuracy.reached, by_accuracy.eqns, by_accuracy.flops) == (by_flops.reached, by_flops.eqns,
                                                                          by_flops.flops)


def test_accuracy_cost_declines_an_unsafe_rewrite_that_changes_results():
    """x/|x| -> sign x (unsafe) gives 0 at x = 0 where the program gives nan: flops takes it, flops+accuracy not."""
    program = _traced(lambda x: x / jnp.abs(x))
    by_flops, _ = optimize(program, rules="fast", cost="flops")
    by_accuracy, _ = optimize(program, rules="fast", cost="flops+accuracy")
    assert [e.primitive for e in by_flops.eqns] == ["sign"]
    assert [e.primitive for e in by_accuracy.eqns] == ["abs", "div"]


def test_cli_takes_the_accuracy_cost(tmp_path, capfd):
    path = tmp_path / "p.jaxpr"
    path.write_text("{ lambda ; a:f64[]. let b:f64[] = sub 1.0:f64[] a; c:f64[] = log b in (c,) }")
    assert main(["optimize", str(path), "--rules", "accurate", "--cost", "flops+accuracy"]) == 0
    printed = capfd.readouterr()
    assert [e.primitive for e in parse_jaxpr(printed.out).eqns] == ["neg", "log1p"]
    assert "cost (flops+accuracy)" in printed.err
    assert main(["optimize", str(path), "--cost", "flops+accuracy:zero"]) == 2
    assert "accuracy weight must be a positive number" in capfd.readouterr().err
