"""`transforms.vmap`: JAX's in_axes/out_axes semantics, nesting, composition with AD and jit, errors."""

from __future__ import annotations

import numpy as np
import pytest

import ir.lax as lax
import ir.numpy as jnp
from ir import make_jaxpr
from transforms import grad, hessian, jacfwd, jacrev, jit, vmap
from transforms.batching.programs import VmapError

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
W = RNG.standard_normal(3)


def loop(f, args, in_axes, out_axis=0):
    """The reference: f on each slice, stacked along `out_axis`."""
    size = next(a.shape[ax] for a, ax in zip(args, in_axes, strict=True) if ax is not None)
    f = jit(f)
    outs = [f(*[a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, in_axes, strict=True)])
            for b in range(size)]
    return np.stack([np.asarray(o) for o in outs], axis=out_axis)


def f(x, w):
    return jnp.tanh(x * w).sum() + jnp.dot(x, w)


def test_in_axes_int_none_and_negative():
    np.testing.assert_allclose(vmap(f, (0, None))(X, W), loop(f, [X, W], [0, None]), rtol=1e-13)
    np.testing.assert_allclose(vmap(f, (1, None))(X.T, W), loop(f, [X.T, W], [1, None]), rtol=1e-13)
    np.testing.assert_allclose(vmap(f, (-1, None))(X.T, W), loop(f, [X.T, W], [1, None]), rtol=1e-13)
    np.testing.assert_allclose(vmap(f)(X, X), loop(f, [X, X], [0, 0]), rtol=1e-13)
    np.testing.assert_allclose(vmap(f, [0, None])(X, W), loop(f, [X, W], [0, None]), rtol=1e-13)


def test_pytree_in_axes_and_out_axes():
    def g(params, x):
        return {"y": params["a"] * x + params["b"], "n": jnp.sum(params["a"])}

    params = {"a": RNG.standard_normal((3, 4)), "b": RNG.standard_normal(3)}
    out = vmap(g, in_axes=({"a": 1, "b": None}, 0), out_axes={"y": -1, "n": 0})(params, X)
    assert out["y"].shape == (3, 4) and out["n"].shape == (4,)
    for b in range(4):
        ref = jit(g)({"a": params["a"][:, b], "b": params["b"]}, X[b])
        np.testing.assert_allclose(out["y"][..., b], ref["y"], rtol=1e-13)
        np.testing.assert_allclose(out["n"][b], ref["n"], rtol=1e-13)


def test_keyword_arguments_are_mapped_over_axis_0():
    got = vmap(lambda x, *, w: x * w, in_axes=None, axis_size=4)(W, w=X)
    np.testing.assert_allclose(got, X * W, rtol=0)


def test_unbatched_outputs_broadcast_or_stay_with_out_axes_none():
    g = vmap(lambda x, w: (x * w, w + 1.0), in_axes=(0, None), out_axes=(0, None))
    y, v = g(X, W)
    assert y.shape == (4, 3) and v.shape == (3,)
    np.testing.assert_allclose(v, W + 1.0, rtol=0)
    _, v = vmap(lambda x, w: (x * w, w + 1.0), in_axes=(0, None))(X, W)
    np.testing.assert_allclose(v, np.broadcast_to(W + 1.0, (4, 3)), rtol=0)


def test_axis_size_with_nothing_mapped():
    got = vmap(lambda w: w * 2.0, in_axes=None, axis_size=5)(W)
    np.testing.assert_allclose(got, np.broadcast_to(W * 2.0, (5, 3)), rtol=0)


@pytest.mark.parametrize("size", [0, 1])
def test_batch_sizes_zero_and_one(size):
    xs = RNG.standard_normal((size, 3))
    got = vmap(f, (0, None))(xs, W)
    assert got.shape == (size,)
    if size:
        np.testing.assert_allclose(got, loop(f, [xs, W], [0, None]), rtol=1e-13)


def test_nested_vmap_and_closure_over_an_outer_batched_value():
    xs = RNG.standard_normal((2, 4, 3))
    np.testing.assert_allclose(vmap(vmap(f, (0, None)), (0, None))(xs, W),
                               np.stack([loop(f, [x, W], [0, None]) for x in xs]), rtol=1e-13)
    got = vmap(lambda x: vmap(lambda w: jnp.dot(x, w))(X))(X)
    np.testing.assert_allclose(got, X @ X.T, rtol=1e-13)


def test_vmap_of_grad_gives_per_example_gradients():
    loss = lambda w, x: jnp.sum(jnp.tanh(x * w) ** 2)  # noqa: E731
    per_example = vmap(grad(loss), in_axes=(None, 0))(W, X)
    np.testing.assert_allclose(per_example, np.stack([grad(loss)(W, x) for x in X]), rtol=1e-12)


def test_grad_of_a_function_using_vmap():
    @jit
    def total(w):
        return jnp.sum(vmap(lambda x: jnp.sin(jnp.dot(x, w)))(X))

    eps = 1e-6
    fd = np.array([(total(W + eps * e) - total(W - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(grad(total)(W), fd, rtol=1e-7)


def test_jacobians_by_vmap_agree_with_finite_differences():
    g = jit(lambda x: jnp.sin(x) * jnp.sum(x ** 2))
    fwd, rev = jacfwd(g)(W), jacrev(g)(W)
    eps = 1e-6
    fd = np.stack([(g(W + eps * e) - g(W - eps * e)) / (2 * eps) for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(fwd, fd, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(rev, fwd, rtol=1e-12)
    h = hessian(lambda x: jnp.sum(jnp.sin(x) * x))(W)
    np.testing.assert_allclose(h, np.diag(2 * np.cos(W) - W * np.sin(W)), rtol=1e-12, atol=1e-14)


def test_make_jaxpr_of_vmap_is_the_batched_program():
    closed = make_jaxpr(vmap(lambda x, w: jnp.sin(x) * w, (0, None)))(X, W)
    assert [v.aval.shape for v in closed.jaxpr.invars] == [(4, 3), (3,)]
    assert [e.primitive for e in closed.eqns] == ["sin", "broadcast_in_dim", "mul"]
    assert closed.out_avals[0].shape == (4, 3)


def test_jit_of_vmap_and_vmap_of_jit():
    g = lambda x, w: lax.exp(x) * w  # noqa: E731
    want = np.exp(X) * W
    np.testing.assert_allclose(jit(vmap(g, (0, None)))(X, W), want, rtol=1e-14)
    np.testing.assert_allclose(vmap(jit(g), (0, None))(X, W), want, rtol=1e-14)


@pytest.mark.parametrize("call, message", [
    (lambda: vmap(f)(X, RNG.standard_normal((5, 3))), "inconsistent sizes"),
    (lambda: vmap(f, (0, 1))(X, W), "rank"),
    (lambda: vmap(f, (0,))(X, W), "len(in_axes)=1"),
    (lambda: vmap(f, None)(X, W), "at least one non-None"),
    (lambda: vmap(lambda x: x, out_axes=None)(X), "out_axes is None"),
    (lambda: vmap(f, ("0", None)), "must be an int, None"),
    (lambda: vmap(lambda p: p["a"], in_axes=({"b": 0},))({"a": X}), "tree prefix"),
    (lambda: vmap(lambda p: p["a"], in_axes={"a": 0})({"a": X}), "tuple of entries"),
])
def test_errors_name_the_problem(call, message):
    with pytest.raises(VmapError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
