"""svd of non-finite input returns all nan without calling LAPACK, whose gesdd never returns on some
inputs with ±inf (JAX's CPU svd, which calls the same routine, hangs on this matrix too)."""

import numpy as np
import pytest

from eval.registry import get_impl


def _matrix_lapack_loops_on(shape=(4, 3)) -> np.ndarray:
    a = np.random.default_rng(1).standard_normal(shape)
    a[3, 0] = np.inf
    return a


@pytest.mark.parametrize("full_matrices", [False, True])
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_svd_of_non_finite_input_is_all_nan(full_matrices, bad):
    a = _matrix_lapack_loops_on()
    a[3, 0] = bad
    s, u, vt = get_impl("svd")(a, full_matrices=full_matrices, compute_uv=True)
    m, n = a.shape
    k = min(m, n)
    assert (s.shape, u.shape, vt.shape) == ((k,), (m, m if full_matrices else k), (n if full_matrices else k, n))
    assert np.isnan(s).all() and np.isnan(u).all() and np.isnan(vt).all()
    (values,) = get_impl("svd")(a, full_matrices=full_matrices, compute_uv=False)
    assert values.shape == (k,) and np.isnan(values).all()


def test_svd_of_batched_input_guards_each_matrix():
    good = np.random.default_rng(2).standard_normal((4, 3))
    batch = np.stack([good, _matrix_lapack_loops_on()])
    s, = get_impl("svd")(batch, full_matrices=False, compute_uv=False)
    assert np.isfinite(s[0]).all() and np.isnan(s[1]).all()
    np.testing.assert_allclose(s[0], np.linalg.svd(good, compute_uv=False))
