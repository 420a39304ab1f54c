"""Functions written with JAX, straight into eqjax's transforms, compared with JAX's own transforms.

A flax.linen MLP loss, an optax adam update step and a jax.nn softmax cross-entropy are optimized (`jit`),
differentiated (`grad`) and batched (`vmap`) from their Python functions: eqjax's tracer is refused by JAX,
so each is traced by JAX and converted (`ir.jax_convert`). Under the `ci` profile the e-graph runs the exact
rules for two iterations (what is tested here is the JAX route, not the algebra); `nightly` uses the defaults.
Also: live programs as transform inputs, the recognition rule, `jit`'s static arguments, and `has_aux`,
`holomorphic` and `allow_int` against JAX.
"""

from __future__ import annotations

import numpy as np
import pytest

from rewrites.engine import Limits
from tests.ir.jax_compare import random_params
from tests.profile import NIGHTLY
from transforms import grad, hessian, jacfwd, jacrev, jit, jvp, value_and_grad, vmap

jax = pytest.importorskip("jax", reason="live JAX in needs the jax extra (installed by the dev extra)")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

KNOBS = {} if NIGHTLY else {"rules": "strict", "limits": Limits(iterations=2)}
RNG = np.random.default_rng(0)
X = RNG.normal(size=(5, 4))
LABELS = np.array([0, 2, 1, 1, 0])


def close(got, want, rtol=1e-10, atol=1e-12):
    """Leaf by leaf; JAX's references run under `jax.jit` (one compile instead of one per operation)."""
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        w = np.asarray(w)
        assert np.shape(g) == w.shape
        np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=atol)


def as_numpy(tree):
    return jax.tree_util.tree_map(np.asarray, tree)


def test_flax_mlp_loss_is_optimized_differentiated_and_batched():
    nn = pytest.importorskip("flax.linen", reason="flax is in the dev extra")

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(2)(jax.nn.relu(nn.Dense(8)(x)))

    model = MLP()
    params = random_params(model, X)
    targets = RNG.normal(size=(5, 2))

    def loss(params, x, y):
        return jnp.mean((model.apply(params, x) - y) ** 2)

    close(jit(loss, **KNOBS)(params, X, targets), jax.jit(loss)(params, X, targets))
    close(grad(loss, **KNOBS)(params, X, targets), jax.jit(jax.grad(loss))(params, X, targets))
    per_example = vmap(loss, in_axes=(None, 0, 0), **KNOBS)(params, X[:, None], targets[:, None])
    close(per_example, jax.jit(jax.vmap(loss, in_axes=(None, 0, 0)))(params, X[:, None], targets[:, None]))


def test_optax_adam_step_is_optimized_differentiated_and_batched():
    optax = pytest.importorskip("optax", reason="optax is in the dev extra")
    tx = optax.adam(1e-2)
    params = {"w": RNG.normal(size=(4, 3)), "b": RNG.normal(size=(3,))}
    grads = {"w": RNG.normal(size=(4, 3)), "b": RNG.normal(size=(3,))}
    state = tx.init(params)  # a tuple of NamedTuples, a JAX pytree: it crosses the transforms as its leaves
    state = (state[0]._replace(mu={k: RNG.normal(size=v.shape) for k, v in params.items()}), *state[1:])
    state_leaves, state_tree = jax.tree_util.tree_flatten(state)
    state_leaves = [np.asarray(x) for x in state_leaves]

    def step(params, state_leaves, grads):
        updates, state = tx.update(grads, jax.tree_util.tree_unflatten(state_tree, state_leaves), params)
        return optax.apply_updates(params, updates), jax.tree_util.tree_leaves(state)

    close(jit(step, **KNOBS)(params, state_leaves, grads), jax.jit(step)(params, state_leaves, grads))

    def moved(params, grads):  # how far one step moves the parameters: differentiable in both
        new, _ = step(params, state_leaves, grads)
        return sum(jnp.sum((new[k] - params[k]) ** 2) for k in params)

    close(grad(moved, argnums=(0, 1), **KNOBS)(params, grads), jax.jit(jax.grad(moved, argnums=(0, 1)))(params, grads),
          rtol=1e-8)
    batch = {k: np.stack([v, 2 * v, -v]) for k, v in grads.items()}
    close(vmap(moved, in_axes=(None, 0), **KNOBS)(params, batch),
          jax.jit(jax.vmap(moved, in_axes=(None, 0)))(params, batch))


def test_jax_nn_softmax_cross_entropy_is_optimized_differentiated_and_batched():
    def xent(logits, onehot):
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * onehot, axis=-1))

    onehot = np.eye(4)[[0, 3, 1, 1, 2]]
    close(jit(xent, **KNOBS)(X, onehot), jax.jit(xent)(X, onehot))
    close(grad(xent, **KNOBS)(X, onehot), jax.jit(jax.grad(xent))(X, onehot))
    close(vmap(xent, **KNOBS)(X[:, None], onehot[:, None]), jax.jit(jax.vmap(xent))(X[:, None], onehot[:, None]))
    if NIGHTLY:  # per-example gradients: vmap of the gradient program
        close(vmap(grad(xent, **KNOBS), **KNOBS)(X[:, None], onehot[:, None]),
              jax.vmap(jax.grad(xent))(X[:, None], onehot[:, None]))


def test_live_programs_are_transform_inputs():
    live = jax.make_jaxpr(lambda x: jnp.sum(jnp.sin(x) ** 2))(X[0])
    close(jit(live, **KNOBS)(X[0]), [np.sum(np.sin(X[0]) ** 2)])
    close(grad(live, **KNOBS)(X[0]), [2 * np.sin(X[0]) * np.cos(X[0])])
    close(vmap(live, **KNOBS)(X), [np.sum(np.sin(X) ** 2, axis=1)])


def test_recognition_rule():
    from ir import numpy as inp
    from ir.jax_convert import function

    def with_jax(x):
        return jnp.tanh(x).sum()

    calls = []

    def declared(x):
        calls.append(type(x).__module__)
        return jnp.tanh(x).sum()

    close(jit(function(declared), **KNOBS)(X), np.tanh(X).sum())
    assert all(m.startswith("jax") for m in calls), "declared: traced by JAX only"
    close(jit(with_jax, **KNOBS)(X), np.tanh(X).sum())
    close(jit(lambda x: inp.tanh(x).sum(), **KNOBS)(X), np.tanh(X).sum())  # eqjax's own API: no JAX
    # the ways eqjax's first trace fails on JAX code: JAX refuses the tracer, eqjax's NumPy conversion is
    # asked for a value (jnp.asarray), eqjax refuses a JAX array
    for fun in (lambda x: jnp.sin(x), lambda x: jnp.asarray(x) * 2, lambda x: x * jnp.ones(4)):
        close(jit(fun, **KNOBS)(X), jax.jit(fun)(X))

    def mixed(x):  # the same value through both libraries: refused, not computed by the wrong one
        return inp.sum(jnp.tanh(x))

    with pytest.raises(TypeError):
        jit(mixed, **KNOBS)(X)


def test_jax_functions_nest_in_transforms_through_their_arguments():
    from ir.jax_convert import ClosureError

    xs = X[:3]

    def total(w):  # per-example JAX function inside an eqjax grad, w passed as an argument
        return vmap(lambda w, x: jnp.tanh(jnp.dot(w, x)), in_axes=(None, 0), **KNOBS)(w, xs).sum()

    close(grad(total, **KNOBS)(X[3]), jax.grad(lambda w: jnp.tanh(xs @ w).sum())(X[3]))

    def closing(w):  # the same, closing over w: JAX cannot see eqjax's variable
        return vmap(lambda x: jnp.tanh(jnp.dot(w, x)), **KNOBS)(xs).sum()

    with pytest.raises(ClosureError, match="pass it as an argument"):
        grad(closing, **KNOBS)(X[3])


def test_jit_static_argnums_and_static_argnames_as_in_jax():
    def f(x, power, *, mode):
        y = x ** power
        return jnp.sum(jnp.sin(y)) if mode == "sin" else jnp.sum(jnp.cos(y))

    ours = jit(f, static_argnums=1, static_argnames="mode", **KNOBS)
    theirs = jax.jit(f, static_argnums=1, static_argnames="mode")
    for power, mode in [(2, "sin"), (3, "sin"), (2, "cos")]:
        close(ours(X, power, mode=mode), theirs(X, power, mode=mode))
    assert ours.cache_size == 3
    close(jit(f, static_argnums=-1, static_argnames=("mode",), **KNOBS)(X, 2, mode="cos"), theirs(X, 2, mode="cos"))
    with pytest.raises(ValueError, match="hashable"):
        ours(X, [2], mode="sin")


def f_aux(x):
    y = jnp.sin(x) * x
    return jnp.sum(y ** 2), {"mean": jnp.mean(y), "count": jnp.int32(7)}


def test_has_aux_as_in_jax():
    x = X[0]
    t = np.ones_like(x)
    (out, out_t, aux), (jout, jout_t, jaux) = jvp(f_aux, (x,), (t,), has_aux=True, **KNOBS), \
        jax.jvp(f_aux, (x,), (t,), has_aux=True)
    close((out, out_t, aux), (jout, jout_t, jaux))
    for ours, theirs in [(jacfwd, jax.jacfwd), (jacrev, jax.jacrev), (hessian, jax.hessian)]:
        close(ours(f_aux, has_aux=True, **KNOBS)(x), theirs(f_aux, has_aux=True)(x))


def test_holomorphic_as_in_jax():
    z = X[0] + 1j * X[1]

    def f(z):
        return jnp.sum(jnp.sin(z) * z)

    close(grad(f, holomorphic=True, **KNOBS)(z), jax.grad(f, holomorphic=True)(z))
    close(value_and_grad(f, holomorphic=True, **KNOBS)(z), jax.value_and_grad(f, holomorphic=True)(z))
    g = lambda z: jnp.sin(z) * z  # noqa: E731
    close(jacfwd(g, holomorphic=True, **KNOBS)(z), jax.jacfwd(g, holomorphic=True)(z))
    close(jacrev(g, holomorphic=True, **KNOBS)(z), jax.jacrev(g, holomorphic=True)(z))
    for ours, theirs, arg in [(grad(f, **KNOBS), jax.grad(f), z), (grad(f, holomorphic=True, **KNOBS),
                              jax.grad(f, holomorphic=True), X[0]), (jacfwd(g, **KNOBS), jax.jacfwd(g), z)]:
        with pytest.raises(TypeError) as theirs_error:
            theirs(arg)
        with pytest.raises(TypeError) as ours_error:
            ours(arg)
        assert str(ours_error.value).split(",")[0] == str(theirs_error.value).split(",")[0]


def test_allow_int_as_in_jax():
    def f(x, n):
        return jnp.sum(x * n)

    n = np.arange(4, dtype=np.int32)
    with pytest.raises(TypeError, match="allow_int"):
        jax.grad(f, argnums=(0, 1))(X[0], n)
    with pytest.raises(TypeError, match="allow_int"):
        grad(f, argnums=(0, 1), **KNOBS)(X[0], n)
    ours = grad(f, argnums=(0, 1), allow_int=True, **KNOBS)(X[0], n)
    theirs = jax.grad(f, argnums=(0, 1), allow_int=True)(X[0], n)
    close(ours[0], theirs[0])
    assert theirs[1].dtype == jax.dtypes.float0 and ours[1].shape == theirs[1].shape and not ours[1].any()
    jac = jacrev(f, argnums=(0, 1), allow_int=True, **KNOBS)(X[0], n)
    jjac = jax.jacrev(f, argnums=(0, 1), allow_int=True)(X[0], n)
    close(jac[0], jjac[0])
    assert jac[1].shape == jjac[1].shape and not jac[1].any()
