"""The learned cost model (`rewrites.latency.learned`): features, fitting, saving, and use in extraction.
Fitting is checked on synthetic times that a known model generates, so no test depends on a clock."""

import numpy as np
import pytest

import ir
import ir.numpy as jnp
from ir.control import cond, scan
from rewrites.costs import bytes_moved, flops, jaxpr_cost
from rewrites.engine import optimize
from rewrites.latency.learned import _COLUMN, FAMILIES, N_FEATURES, LearnedModel, family, fit, program_features


def _programs():
    out = []
    for n in (4, 64, 1024, 16384):
        x = np.ones(n)
        out.append(ir.make_jaxpr(lambda a: jnp.exp(a) * 2.0 + a)(x))
        out.append(ir.make_jaxpr(lambda a: jnp.sum(a * a))(x))
        out.append(ir.make_jaxpr(lambda a: jnp.tanh(a) / (a + 1.0))(x))
        m = int(np.sqrt(n)) or 1
        out.append(ir.make_jaxpr(lambda a: a @ a.T)(np.ones((m, m))))
        out.append(ir.make_jaxpr(lambda a: jnp.reshape(a, (-1,)).T + 1.0)(np.ones((m, m))))
    return out


def test_every_primitive_has_a_family_and_features_add_up():
    assert family("add") == "elementwise" and family("exp") == "transcendental" and family("div") == "divide"
    assert family("reduce_sum") == "reduction" and family("dot_general") == "dot"
    assert family("reshape") == "free" and family("transpose") == "movement" and family("gather") == "indexing"
    assert family("made_up_primitive") == "other"
    closed = ir.make_jaxpr(lambda a: jnp.exp(a) * 2.0)(np.ones(10))
    f = program_features(closed)
    assert f[_COLUMN["transcendental", "eqns"]] == 1 and f[_COLUMN["elementwise", "eqns"]] == 1
    assert f[_COLUMN["transcendental", "flops"]] + f[_COLUMN["elementwise", "flops"]] == jaxpr_cost(flops, closed)
    assert sum(f[_COLUMN[fam, "bytes"]] for fam in FAMILIES) == jaxpr_cost(bytes_moved, closed)


def test_control_flow_features_follow_the_cost_models_rules():
    def body(c, x):
        return c + jnp.sin(x), c

    scanned = ir.make_jaxpr(lambda xs: scan(body, 0.0, xs)[0])(np.ones(7))
    f = program_features(scanned)
    assert f[_COLUMN["transcendental", "eqns"]] == 7  # the body's sin, 7 times
    branchy = ir.make_jaxpr(lambda p, x: cond(p, lambda y: jnp.exp(y) + 1.0, lambda y: y * 2.0, x))(True, np.ones(3))
    g = program_features(branchy)
    assert g[_COLUMN["transcendental", "eqns"]] == 1 and g[_COLUMN["elementwise", "eqns"]] == 1  # the max branch


def test_fit_recovers_a_linear_model_that_generated_the_times():
    programs = _programs()
    truth = np.zeros(N_FEATURES)
    truth[_COLUMN["elementwise", "eqns"]] = 2e-6
    truth[_COLUMN["elementwise", "bytes"]] = 1e-10
    truth[_COLUMN["transcendental", "flops"]] = 3e-10
    truth[_COLUMN["dot", "flops"]] = 5e-11
    truth[_COLUMN["reduction", "eqns"]] = 4e-6
    truth[_COLUMN["free", "eqns"]] = 1e-7
    truth[_COLUMN["movement", "bytes"]] = 2e-10
    truth[_COLUMN["divide", "eqns"]] = 3e-6
    times = [5e-6 + program_features(p) @ truth for p in programs]
    model = fit(programs, times, "numpy")
    predicted = np.array([model.predict(p) for p in programs])
    assert np.allclose(predicted, times, rtol=1e-3), np.abs(predicted / times - 1).max()
    assert model.training["median_rel_error"] < 1e-3
    assert np.all(model.coef >= 0) and model.intercept >= 0


def test_a_saved_model_loads_back_and_optimizes_as_learned_path(tmp_path):
    programs = _programs()
    times = [1e-6 * (1 + i) for i in range(len(programs))]
    model = fit(programs, times, "numpy")
    path = tmp_path / "learned.json"
    model.save(path)
    again = LearnedModel.load(path)
    assert np.array_equal(again.coef, model.coef) and again.intercept == model.intercept
    closed = ir.make_jaxpr(lambda a: jnp.exp(jnp.log(a)) * 1.0 + 0.0)(np.ones(8))
    optimized, report = optimize(closed, cost=f"learned:{path}")
    assert report.cost_model == "learned-numpy"
    assert report.cost_after <= report.cost_before


def test_bad_inputs_are_refused(tmp_path):
    with pytest.raises(ValueError, match="as many times as programs"):
        fit(_programs()[:2], [1.0], "numpy")
    with pytest.raises(ValueError, match="positive"):
        fit(_programs()[:1], [0.0], "numpy")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": 1, "kind": "latency"}')
    with pytest.raises(ValueError, match="not a learned cost model"):
        LearnedModel.load(bad)
