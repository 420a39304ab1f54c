"""The on-disk cache of optimized programs (transforms/diskcache.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ir.numpy as jnp
import transforms.ad.programs
import transforms.api
import transforms.batching.programs
from rewrites.engine import Limits
from transforms import diskcache, grad, jit, vmap


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EQJAX_CACHE", "on")
    monkeypatch.setenv("EQJAX_CACHE_DIR", str(tmp_path))
    return tmp_path


def loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) * 1.0)


W, X = np.linspace(-1, 1, 6).reshape(3, 2), np.linspace(0, 2, 12).reshape(4, 3)


def _forbid(monkeypatch, module, name):
    def fail(*args, **kwargs):
        raise AssertionError(f"{name} ran although the program is in the cache")
    monkeypatch.setattr(module, name, fail)


def test_jit_reads_the_optimized_program_back_in_a_new_jit(cache, monkeypatch):
    first = jit(loss)
    want = first(W, X)
    program, report = first.optimized(W, X)
    assert len(list(cache.glob("*.json"))) == 1
    _forbid(monkeypatch, transforms.api, "optimize")
    again = jit(loss)
    assert np.array_equal(again(W, X), want)
    cached_program, cached_report = again.optimized(W, X)
    assert str(cached_program) == str(program) and cached_report.as_dict() == report.as_dict()


def test_grad_and_vmap_programs_are_cached(cache, monkeypatch):
    g, v = grad(loss)(W, X), vmap(loss, (None, 0))(W, np.stack([X, X + 1]))
    assert len(list(cache.glob("*.json"))) == 2
    _forbid(monkeypatch, transforms.ad.api, "grad_program")
    _forbid(monkeypatch, transforms.batching.api, "vmap_program")
    assert np.array_equal(grad(loss)(W, X), g)
    assert np.array_equal(vmap(loss, (None, 0))(W, np.stack([X, X + 1])), v)


@pytest.mark.parametrize("settings", [dict(rules="strict"), dict(cost="bytes"), dict(extractor="tree"),
                                      dict(limits=Limits(iterations=2))])
def test_each_setting_is_part_of_the_key(cache, settings):
    jit(loss)(W, X)
    jit(loss, **settings)(W, X)
    assert len(list(cache.glob("*.json"))) == 2


def test_an_edit_of_eqjax_invalidates_the_entries(cache, monkeypatch):
    jit(loss)(W, X)
    monkeypatch.setattr(diskcache, "code_version", lambda: "edited")
    jit(loss)(W, X)
    assert len(list(cache.glob("*.json"))) == 2


def test_settings_without_a_stable_name_bypass_the_cache(cache):
    jit(loss, cost=lambda primitive, params, in_avals, out_avals: 1.0)(W, X)
    assert list(cache.glob("*.json")) == []


def test_a_damaged_entry_is_rebuilt(cache):
    want = jit(loss)(W, X)
    (entry,) = cache.glob("*.json")
    entry.write_text("{ not json")
    assert np.array_equal(jit(loss)(W, X), want)
    assert json.loads(entry.read_text())["jaxpr"].startswith("{ lambda")


def test_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("EQJAX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EQJAX_CACHE", "off")
    jit(loss)(W, X)
    assert list(tmp_path.iterdir()) == []


def test_constants_round_trip_exactly():
    import ml_dtypes

    for a in [np.arange(6.0).reshape(2, 3), np.array([1.5, -0.0, np.nan], np.float32),
              np.array([1, 2], ml_dtypes.bfloat16), np.array([True, False]), np.array(3 + 4j)]:
        back = diskcache._decode_array(diskcache._encode_array(a))
        assert back.dtype == a.dtype and back.shape == a.shape and back.tobytes() == a.tobytes()


def test_eqjax_own_custom_rules_keep_the_cache_on(cache):
    """`ir.nn` registers custom_jvp rules of its own (relu's kink): they are eqjax's source, which the key
    covers, so using them does not turn the cache off as a user's rules do."""
    import ir.nn

    jit(lambda w, x: jnp.sum(ir.nn.relu(x @ w)))(W, X)
    assert len(list(cache.glob("*.json"))) == 1
