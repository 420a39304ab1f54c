"""Latency profiles (rewrites/latency): calibration, the profile format, the machine check, the cost model.

Calibrations here are quick ones of a few primitives (seconds), made once per module; no test asserts
an absolute speed, only relations between the model and the times it was fitted to.
"""

from __future__ import annotations

import copy
import json
import math
import pickle

import numpy as np
import pytest

import ir
from eval.machine import fingerprint, machine_key
from ir import lax
from rewrites.costs import CostModel, bytes_moved, flops, get_cost_model, jaxpr_cost
from rewrites.latency import profile as profiles
from rewrites.latency.calibrate import CalibrationError, calibrate, oracle_samples, refit
from rewrites.latency.fit import predict, segments_for
from rewrites.latency.model import LatencyModel
from rewrites.latency.profile import (
    ProfileError,
    ProfileMachineError,
    ProfileNotFound,
    default_profile,
    load_profile,
    profile_filename,
    save_profile,
    validate_profile,
)
from transforms.cli import main

PRIMITIVES = ["add", "exp", "min", "reduce_sum"]


@pytest.fixture(scope="module")
def numpy_profile() -> dict:
    return calibrate("numpy", PRIMITIVES, quick=True, progress=False)


@pytest.fixture(scope="module")
def xla_profile() -> dict:
    pytest.importorskip("jax", reason="the XLA backend needs the jax extra")
    return calibrate("xla", ["add", "exp"], quick=True, progress=False)


def _price(model: CostModel, closed) -> float:
    eqn, = closed.eqns
    return model(eqn.primitive, eqn.params, [v.aval for v in eqn.invars], [v.aval for v in eqn.outvars])


def _program(fn, *shapes, dtype=np.float64):
    return ir.make_jaxpr(fn)(*(np.ones(s, dtype) for s in shapes))


def _other_machine(profile: dict) -> dict:
    other = copy.deepcopy(profile)
    other["machine"] = {**other["machine"], "cpu": "Imaginary CPU 9000", "cores": 512}
    other["machine_key"] = "0" * 16
    return other


def test_the_profile_names_what_was_calibrated_and_its_machine(numpy_profile):
    assert sorted(numpy_profile["primitives"]) == PRIMITIVES
    assert numpy_profile["machine_key"] == machine_key() and numpy_profile["backend"] == "numpy"
    assert numpy_profile["machine"]["cpu"] == fingerprint()["cpu"]
    assert numpy_profile["call_overhead_s"] > 0 and numpy_profile["skipped"] == {}
    for name, entry in numpy_profile["primitives"].items():
        assert entry["points"] == len(entry["measured"]) > 0, name
        assert 0 <= entry["median_rel_error"] < math.inf, name


def test_the_profile_round_trips_as_sorted_json(numpy_profile, tmp_path):
    path = save_profile(numpy_profile, tmp_path / "p.json")
    text = path.read_text()
    assert load_profile(path) == json.loads(json.dumps(numpy_profile))
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=1) + "\n"


def test_a_refit_of_the_measured_rows_gives_the_same_profile(numpy_profile):
    assert refit(copy.deepcopy(numpy_profile)) == numpy_profile


@pytest.mark.parametrize("damage, named", [
    (lambda p: p.pop("fallback"), "'fallback'"),
    (lambda p: p.update(format=0), "format 0"),
    (lambda p: p["primitives"]["add"]["segments"][0]["coef"].update(c0=-1.0), "'add' segment 0"),
    (lambda p: p["primitives"]["exp"]["segments"][-1].update(max_elements=10), "'exp' segment"),
    (lambda p: p.update(backend="tpu"), "'tpu'"),
])
def test_a_damaged_profile_is_refused_naming_the_damage(numpy_profile, damage, named):
    broken = copy.deepcopy(numpy_profile)
    damage(broken)
    with pytest.raises(ProfileError, match=named):
        validate_profile(broken)


def test_the_model_is_a_cost_model_in_seconds(numpy_profile):
    model = LatencyModel(numpy_profile)
    assert isinstance(model, CostModel) and get_cost_model(model) is model and model.name == "latency-numpy"
    closed = _program(lambda x: lax.reduce_sum(lax.exp(lax.add(x, x)), (0,)), (1000,))
    total = jaxpr_cost(model, closed)
    assert total > 0 and isinstance(total, float)
    assert model.program_seconds(closed) == pytest.approx(model.overhead_seconds(1, 1) + total)
    assert pickle.loads(pickle.dumps(model)).program_seconds(closed) == model.program_seconds(closed)


def test_an_elementwise_price_is_non_negative_and_grows_with_size(numpy_profile):
    model = LatencyModel(numpy_profile)
    prices = [_price(model, _program(lax.add, (n,), (n,))) for n in (1, 16, 256, 4096, 65536, 1 << 20)]
    assert all(p >= 0 for p in prices)
    assert prices[-1] > prices[3] > prices[0]


def test_a_primitive_the_profile_lacks_is_priced_by_the_fallback_and_reported(numpy_profile):
    model = LatencyModel(numpy_profile)
    assert not model.covers("sin") and model.covers("exp")
    assert _price(model, _program(lax.sin, (4096,))) > 0
    assert model.fell_back == {"sin"}


def test_the_fitted_model_predicts_its_large_probes_within_a_loose_factor(numpy_profile):
    for name, entry in numpy_profile["primitives"].items():
        largest = [r for r in entry["measured"] if r[2] == entry["max_elements_measured"]]
        for _, variant, size, elements, n_flops, n_bytes, seconds in largest:
            predicted = predict(segments_for(entry, variant), size, elements, n_flops, n_bytes)
            assert seconds / 4 <= predicted <= seconds * 4, (name, size, predicted, seconds)


def test_the_model_prices_an_equation_by_the_features_calibration_measured(numpy_profile):
    """The features the model computes from an equation are the ones its probe was measured with."""
    model = LatencyModel(numpy_profile)
    n = numpy_profile["settings"]["sizes"][-1]
    closed = _program(lax.exp, (n,))
    eqn, = closed.eqns
    ins, outs = [v.aval for v in eqn.invars], [v.aval for v in eqn.outvars]
    row = ("f64->f64", n, n, flops(eqn.primitive, eqn.params, ins, outs),
           bytes_moved(eqn.primitive, eqn.params, ins, outs))
    entry = numpy_profile["primitives"]["exp"]
    assert list(row) in [r[1:6] for r in entry["measured"]]
    assert _price(model, closed) == pytest.approx(predict(segments_for(entry, row[0]), *row[1:]))


def test_each_dtype_variant_is_priced_by_its_own_model(numpy_profile):
    """Generated NumPy computes an int min with np.minimum and a float one through its implementation."""
    model = LatencyModel(numpy_profile)
    variants = numpy_profile["primitives"]["min"]["variants"]
    assert {"f64,f64->f64", "u32,u32->u32"} <= set(variants)
    for dtype, variant in ((np.float64, "f64,f64->f64"), (np.uint32, "u32,u32->u32")):
        closed = _program(lax.min, (4096,), (4096,), dtype=dtype)
        eqn, = closed.eqns
        ins, outs = [v.aval for v in eqn.invars], [v.aval for v in eqn.outvars]
        features = (4096, 4096, flops(eqn.primitive, eqn.params, ins, outs),
                    bytes_moved(eqn.primitive, eqn.params, ins, outs))
        assert _price(model, closed) == pytest.approx(predict(variants[variant]["segments"], *features))


@pytest.mark.parametrize("primitive", ["scan", "cond", "while"])
def test_control_flow_is_priced_through_its_bodies(numpy_profile, primitive):
    model = LatencyModel(numpy_profile)
    sample = oracle_samples(2)[primitive][0]
    eqn, = sample.closed.eqns
    if primitive == "scan":
        expected = eqn.params["length"] * jaxpr_cost(model, eqn.params["jaxpr"])
    elif primitive == "cond":
        expected = max(jaxpr_cost(model, b) for b in eqn.params["branches"])
    else:
        expected = jaxpr_cost(model, eqn.params["cond_jaxpr"]) + jaxpr_cost(model, eqn.params["body_jaxpr"])
    assert expected > 0
    assert _price(model, sample.closed) == pytest.approx(expected)


def test_a_profile_of_another_machine_is_refused_unless_allowed(numpy_profile, tmp_path):
    other = _other_machine(numpy_profile)
    path = save_profile(other, tmp_path / "other.json")
    for source in (other, path):
        with pytest.raises(ProfileMachineError) as refused:
            LatencyModel(source)
        message = str(refused.value)
        assert "Imaginary CPU 9000 (512 cores)" in message
        assert f"{fingerprint()['cpu']} ({fingerprint()['cores']} cores)" in message
        assert "eqjax calibrate --backend numpy" in message
        assert isinstance(refused.value, ValueError)
    assert LatencyModel(path, allow_other_machine=True).covers("add")


def test_default_profile_looks_in_the_profile_dir_first(numpy_profile, tmp_path, monkeypatch):
    monkeypatch.setenv("EQJAX_PROFILE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(profiles, "SHIPPED_DIR", tmp_path / "shipped")
    save_profile(_other_machine(numpy_profile), tmp_path / "shipped" / profile_filename("numpy", "0" * 16))
    with pytest.raises(ProfileNotFound) as missing:
        default_profile("numpy")
    assert "Imaginary CPU 9000 (512 cores)" in str(missing.value)
    assert "eqjax calibrate --backend numpy" in str(missing.value)

    cached = save_profile(numpy_profile, tmp_path / "cache" / "eqjax" / "profiles" / profile_filename("numpy"))
    assert default_profile("numpy") == cached
    mine = save_profile(numpy_profile, tmp_path / "mine" / profile_filename("numpy"))
    assert default_profile("numpy") == mine
    assert LatencyModel.for_backend("numpy").source.endswith(str(mine))


def test_the_xla_backend_calibrates_too(xla_profile):
    model = LatencyModel(xla_profile)
    assert model.name == "latency-xla" and sorted(xla_profile["primitives"]) == ["add", "exp"]
    assert xla_profile["call_overhead_s"] > 0
    assert _price(model, _program(lax.exp, (65536,), dtype=np.float32)) > 0


def test_the_cli_writes_a_valid_profile(tmp_path, capsys):
    assert main(["calibrate", "--backend", "numpy", "--quick", "--primitives", "add,exp", "--out", str(tmp_path)]) == 0
    written = tmp_path / profile_filename("numpy")
    assert sorted(load_profile(written)["primitives"]) == ["add", "exp"]
    shown = capsys.readouterr().out
    assert "add" in shown and "exp" in shown and str(written) in shown


def test_an_unknown_primitive_is_an_error_naming_it(tmp_path, capsys):
    with pytest.raises(CalibrationError, match="'not_a_primitive' \\(no such primitive\\)"):
        calibrate("numpy", ["add", "not_a_primitive"], quick=True, progress=False)
    with pytest.raises(CalibrationError, match="'scan' \\(runs jaxprs"):
        calibrate("numpy", ["scan"], quick=True, progress=False)
    status = main(["calibrate", "--backend", "numpy", "--quick", "--primitives", "exp,not_a_primitive",
                   "--out", str(tmp_path)])
    assert status == 2 and "not_a_primitive" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
