"""The optimize report's record of the run: one `Step` per run of the saturation loop, the e-graph's size after
each (`trace=True` counts e-nodes and e-classes), and, for a transform, the cost of the program its rules
make before the algebra (`cost_transformed`), which the optimized program is measured against."""

from collections import Counter

import numpy as np

import ir
import ir.numpy as jnp
from rewrites.engine import Limits, Report, optimize
from rewrites.options import Options
from transforms.ad.programs import grad_program
from transforms.demo import example_inputs, mlp_loss


def _program():
    return ir.make_jaxpr(lambda x, y: jnp.sum(jnp.exp(jnp.log(x * 1.0)) + (y - y) * x))(np.ones(3), np.ones(3))


def _step_totals(report: Report) -> Counter:
    totals = Counter()
    for step in report.steps:
        if step.phase != "undone":
            totals.update(step.matches)
    return totals


def test_steps_add_up_to_the_report():
    _, report = optimize(_program(), limits=Limits(iterations=5))
    assert [s.phase for s in report.steps][-1] == "analysis"
    assert sum(s.iterations for s in report.steps) == report.iterations
    assert _step_totals(report) == Counter({n: c for n, c in report.rule_matches.items() if c})
    assert report.steps[-1].egraph_nodes == report.egraph_nodes
    assert "most matches" in report.steps_table()


def test_trace_runs_one_iteration_a_step_and_counts_the_egraph():
    _, report = optimize(_program(), limits=Limits(iterations=4), trace=True)
    rules = [s for s in report.steps if s.phase == "rules"]
    assert len(rules) == report.iterations and all(s.iterations == 1 for s in rules)
    last = report.steps[-1]
    assert (last.enodes, last.eclasses) == (report.enodes, report.eclasses)
    assert all(s.enodes >= s.eclasses > 0 for s in report.steps)


def test_report_round_trips_through_its_dict():
    _, report = optimize(_program(), trace=True)
    again = Report(**report.as_dict())
    assert again.steps == report.steps and again.summary() == report.summary()


def test_a_gradient_is_measured_against_the_unoptimized_gradient():
    params, x, y = example_inputs()
    closed = ir.make_jaxpr(mlp_loss)(params, x, y)
    gradient, report = grad_program(closed, [0, 1, 2, 3], options=Options(measure_transformed=True))
    assert report.steps[0].phase == "prelude" and report.steps[0].matches
    assert report.cost_transformed is not None and report.eqns_transformed > report.eqns_before
    assert report.cost_after <= report.cost_transformed
    assert "as transformed" in report.summary()
    _, plain = optimize(closed)
    assert plain.cost_transformed is None and "as transformed" not in plain.summary()
    _, unmeasured = grad_program(closed, [0, 1, 2, 3])
    assert unmeasured.cost_transformed is None and unmeasured.cost_after == report.cost_after
