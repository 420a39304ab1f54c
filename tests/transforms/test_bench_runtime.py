"""`eqjax bench runtime` runs end to end (its numbers are the benchmark's business, not the tests')."""

from __future__ import annotations

import ir
from transforms.bench_runtime import SYSTEMS, bench_runtime, first_calls
from transforms.runtime_suite import workloads


def test_every_workload_traces():
    for w in workloads():
        closed = ir.make_jaxpr(w.fun)(*w.args)
        assert closed.eqns and (not w.is_grad or closed.out_avals[0].shape == ())


def test_a_small_run_reports_every_system(capsys):
    result = bench_runtime(suite="oracle", only={"huber", "redundant_exp_log"}, min_time=0.0, first=False,
                           as_json=True)
    assert [r["name"] for r in result["rows"]] == ["redundant_exp_log", "huber"]
    for row in result["rows"]:
        assert row["jax_jit"] > 0 and set(row["ratios"]) == set(SYSTEMS), row
        assert all(v is not None and v > 0 for v in row["ratios"].values()), row["notes"]
    assert result["summary"]["oracle"]["numpy"] > 0 and result["machine"]["cores"] >= 1
    assert '"rows"' in capsys.readouterr().out


def test_first_calls_run_in_fresh_processes():
    result = first_calls("elementwise_chain")
    assert set(result) == {"eqjax cold", "eqjax cached", "jax.jit"}
    assert all("first_call_s" in r for r in result.values()), result
