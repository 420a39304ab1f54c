"""eval.measure and the machine fingerprint."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ir
import ir.numpy as jnp
from eval import machine
from eval.measure import measure, time_calls
from transforms.cli import main

X = np.linspace(0.0, 1.0, 64)
CLOSED = ir.make_jaxpr(lambda x: jnp.sum(jnp.sin(x) * 2.0))(X)


@pytest.mark.parametrize("backend", ["numpy", "interpreter", "xla"])
def test_measure_times_every_backend(backend):
    m = measure(CLOSED, X, backend=backend, repeats=7)
    assert m.count == 7 and m.backend == backend
    assert 0 < min(m.times) <= m.median <= max(m.times)
    q1, q3 = m.quartiles
    assert q1 <= m.median <= q3 and m.iqr == q3 - q1
    assert m.as_dict()["machine"]["cores"] >= 1


def test_without_repeats_calls_fill_the_minimum_time():
    calls = []
    times = time_calls(lambda: calls.append(1), warmup=3, min_time=0.0)
    assert len(times) == 5 and len(calls) == 8
    assert len(time_calls(lambda: None, warmup=0, repeats=12)) == 12


def test_the_fingerprint_names_cpu_blas_libraries_and_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    fp = machine.fingerprint()
    assert fp["cpu"] and fp["cores"] >= 1 and fp["libraries"]["numpy"] == np.__version__
    assert fp["threads"]["OMP_NUM_THREADS"] == "1"
    assert any(p["user_api"] == "blas" for p in fp["blas"])
    assert machine.machine_key(fp) == machine.machine_key(dict(fp, threads={}))


def test_eqjax_measure_prints_json(tmp_path, capsys):
    path = tmp_path / "prog.jaxpr"
    path.write_text(str(CLOSED))
    np.savez(tmp_path / "args.npz", X)
    assert main(["measure", str(path), "--args", str(tmp_path / "args.npz"), "--backend", "numpy,interpreter",
                 "--repeats", "3", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["backend"] for r in rows] == ["numpy", "interpreter"] and all(r["count"] == 3 for r in rows)


def test_side_by_side_rounds_interleave_every_run():
    from eval.measure import time_side_by_side

    order = []
    times = time_side_by_side({"a": lambda: order.append("a"), "b": lambda: order.append("b")}, min_time=0.0,
                              rounds=4)
    assert [len(t) for t in times.values()] == [4, 4] and all(x > 0 for t in times.values() for x in t)
    assert "ab" in "".join(order)[4:]  # after the warm-up and sizing calls, rounds alternate
