"""jit, grad and vmap on each backend, and their per-signature caches."""

from __future__ import annotations

import numpy as np
import pytest

import ir
import ir.numpy as jnp
import transforms.staging
from eval.interpreter import eval_jaxpr
from transforms import grad, jit, value_and_grad, vmap

W, X = np.linspace(-1, 1, 6).reshape(3, 2), np.linspace(0, 2, 12).reshape(4, 3)


def loss(w, x):
    return jnp.mean(jnp.tanh(x @ w) ** 2)


@pytest.mark.parametrize("backend", ["numpy", "interpreter", "xla"])
def test_jit_runs_the_optimized_program_on_each_backend(backend):
    f = jit(loss, backend=backend)
    program, _ = f.optimized(W, X)
    want = eval_jaxpr(program, W, X)[0]
    got = np.asarray(f(W, X))
    if backend == "xla":
        np.testing.assert_allclose(got, want, rtol=1e-14)
    else:
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("backend", ["numpy", "interpreter", "xla"])
def test_grad_and_vmap_on_each_backend(backend):
    g = grad(loss, argnums=(0, 1), backend=backend)(W, X)
    want = grad(loss, argnums=(0, 1), backend="interpreter")(W, X)
    for a, b in zip(g, want, strict=True):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-13)
    xs = np.stack([X, 2 * X])
    batched = vmap(loss, (None, 0), backend=backend)(W, xs)
    np.testing.assert_allclose(np.asarray(batched), [loss_np(W, x) for x in xs], rtol=1e-13)


def loss_np(w, x):
    return np.mean(np.tanh(x @ w) ** 2)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        jit(loss, backend="gpu")


def test_grad_traces_once_per_signature(monkeypatch):
    traced = []
    original = transforms.staging.trace

    def counting(*args, **kwargs):
        traced.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(transforms.staging, "trace", counting)
    vg = value_and_grad(loss)
    first = vg(W, X)
    second = vg(W + 1.0, X)
    vg(W[:2], X[:, :2])  # another signature traces again
    assert len(traced) == 2
    assert not np.array_equal(first[1], second[1])


def test_transforms_compose_inside_a_trace():
    program = ir.make_jaxpr(jit(grad(loss)))(W, X)
    np.testing.assert_allclose(eval_jaxpr(program, W, X)[0], grad(loss)(W, X), rtol=1e-14)
