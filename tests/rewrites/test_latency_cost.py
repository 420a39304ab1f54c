"""`cost="latency"` and `cost="learned:PATH"` wherever a cost model is taken: `optimize`, `jit`, `grad`,
`vmap`, the CLI, and the disk cache's key. Profiles come from quick calibrations of a few primitives into a
temporary `EQJAX_PROFILE_DIR` (primitives they do not name are priced by the fallback)."""

from __future__ import annotations

import numpy as np
import pytest

import ir
import ir.numpy as jnp
from rewrites.costs import for_backend, get_cost_model
from rewrites.engine import optimize
from rewrites.latency import profile as profiles
from rewrites.latency.calibrate import calibrate
from rewrites.latency.profile import ProfileMachineError, ProfileNotFound, profile_filename, save_profile
from transforms import diskcache, grad, jit, vmap
from transforms.cli import main

PRIMITIVES = ["add", "mul", "exp", "log", "reduce_sum"]


@pytest.fixture(scope="module")
def profile_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("profiles")
    save_profile(calibrate("numpy", PRIMITIVES, quick=True, progress=False),
                 directory / profile_filename("numpy"))
    pytest.importorskip("jax", reason="the XLA backend needs the jax extra")
    save_profile(calibrate("xla", ["add", "exp"], quick=True, progress=False), directory / profile_filename("xla"))
    return directory


@pytest.fixture
def profiled(profile_dir, monkeypatch):
    monkeypatch.setenv("EQJAX_PROFILE_DIR", str(profile_dir))
    return profile_dir


def f(x, y):
    return jnp.sum(jnp.exp(x) * 1.0 * y + x * y + 0.0)


X, Y = np.linspace(0.5, 2.0, 64), np.linspace(-1.0, 1.0, 64)


def test_optimize_with_latency_prices_in_seconds_and_keeps_the_values(profiled):
    closed = ir.make_jaxpr(f)(X, Y)
    optimized, report = optimize(closed, cost="latency")
    assert report.cost_model == "latency-numpy"
    assert 0 < report.cost_after <= report.cost_before < 1.0  # seconds
    assert len(optimized.eqns) < len(closed.eqns)  # * 1.0 and + 0.0 are gone
    from eval.interpreter import eval_jaxpr
    np.testing.assert_allclose(eval_jaxpr(optimized, X, Y)[0], eval_jaxpr(closed, X, Y)[0], rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_jit_grad_and_vmap_take_the_latency_profile_of_their_backend(profiled, backend):
    fast = jit(f, cost="latency", backend=backend)
    np.testing.assert_allclose(np.asarray(fast(X, Y)), float(np.sum(np.exp(X) * Y + X * Y)), rtol=1e-12)
    assert fast.optimized(X, Y)[1].cost_model == f"latency-{backend}"
    gx = np.asarray(grad(f, cost="latency", backend=backend)(X, Y))
    np.testing.assert_allclose(gx, np.exp(X) * Y + Y, rtol=1e-12)
    batched = vmap(lambda x: jnp.exp(x) * 1.0 + x, cost="latency", backend=backend)
    np.testing.assert_allclose(np.asarray(batched(np.stack([X, Y]))), np.stack([np.exp(X) + X, np.exp(Y) + Y]),
                               rtol=1e-12)


def test_latency_means_the_backend_in_use_and_the_interpreter_has_none():
    assert for_backend("latency", "xla") == "latency-xla" and for_backend("flops", "xla") == "flops"
    with pytest.raises(ValueError, match="latency-numpy"):
        jit(f, cost="latency", backend="interpreter")


def test_cli_optimize_takes_cost_latency(profiled, tmp_path, capsys):
    path = tmp_path / "f.jaxpr"
    path.write_text(str(ir.make_jaxpr(f)(X, Y)))
    assert main(["optimize", str(path), "--cost", "latency-numpy"]) == 0
    captured = capsys.readouterr()
    assert "cost (latency-numpy)" in captured.out + captured.err


def test_no_profile_for_this_machine_is_a_typed_error_naming_the_calibrate_command(tmp_path, monkeypatch):
    monkeypatch.setenv("EQJAX_PROFILE_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(profiles, "machine_key", lambda fp=None: "0000000000000000")
    closed = ir.make_jaxpr(f)(X, Y)
    with pytest.raises(ProfileNotFound, match="eqjax calibrate --backend numpy"):
        optimize(closed, cost="latency")


def test_a_learned_model_of_another_machine_is_refused(tmp_path, profiled):
    from rewrites.latency.learned import fit

    closed = ir.make_jaxpr(f)(X, Y)
    model = fit([closed, optimize(closed)[0]], [2e-5, 1e-5], "numpy")
    model.machine_key = "0000000000000000"
    path = tmp_path / "other.json"
    model.save(path)
    with pytest.raises(ProfileMachineError, match="not this machine"):
        get_cost_model(f"learned:{path}")


def test_the_disk_cache_key_follows_the_profile_content(profiled):
    closed = ir.make_jaxpr(f)(X, Y)
    settings = {"rules": "default", "cost": "latency-numpy", "extractor": "greedy_dag", "limits": None}
    before = diskcache.entry_key("jit", closed, settings)
    path = profiled / profile_filename("numpy")
    original = path.read_bytes()
    try:
        path.write_bytes(original.replace(b'"created"', b'"comment": "recalibrated", "created"', 1))
        after = diskcache.entry_key("jit", closed, settings)
    finally:
        path.write_bytes(original)
    assert before is not None and after is not None and before != after
    assert diskcache.entry_key("jit", closed, settings) == before
