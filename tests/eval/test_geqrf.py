"""`geqrf` (LAPACK's QR factorization in packed form, which jnp.linalg.slogdet(method="qr") prints): values
against JAX's, batching against a loop over slices."""

import numpy as np
import pytest

from eval import eval_jaxpr
from ir import parse_jaxpr
from transforms.batching.programs import vmap_program

jax = pytest.importorskip("jax")
from jax._src.lax.linalg import geqrf as jax_geqrf  # noqa: E402

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 5, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_geqrf_is_jaxs(shape, dtype):
    rng = np.random.default_rng(0)
    a = rng.normal(size=shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.normal(size=shape)
    closed = parse_jaxpr(str(jax.make_jaxpr(jax_geqrf)(a)))
    assert [e.primitive for e in closed.jaxpr.eqns] == ["geqrf"]
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got, want in zip(eval_jaxpr(closed, a), jax.jit(jax_geqrf)(a), strict=True):
        np.testing.assert_allclose(got, np.asarray(want), rtol=tol, atol=tol)


def test_slogdet_by_qr_is_jaxs():
    a = np.random.default_rng(1).normal(size=(4, 4))
    f = lambda m: jax.numpy.linalg.slogdet(m, method="qr")  # noqa: E731
    closed = parse_jaxpr(str(jax.make_jaxpr(f)(a)))
    for got, want in zip(eval_jaxpr(closed, a), f(a), strict=True):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)


def test_vmap_of_geqrf_is_a_loop_over_slices():
    xs = np.random.default_rng(2).normal(size=(3, 4, 3))
    closed = parse_jaxpr(str(jax.make_jaxpr(jax_geqrf)(xs[0])))
    batched, _ = vmap_program(closed, [0], size=3)
    got = eval_jaxpr(batched, xs)
    for k in range(3):
        for g, w in zip(got, eval_jaxpr(closed, xs[k]), strict=True):
            np.testing.assert_allclose(g[k], w, rtol=1e-12, atol=1e-12)
