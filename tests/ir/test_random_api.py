"""ir.random against jax.random: the same key gives the same keys, bits and float64 uniforms bit for bit;
results through a transcendental (erf_inv, log) or float32 arithmetic agree to a few ulps (NumPy's libm
and XLA's differ there)."""

import jax
import jax.random
import numpy as np
import pytest

import ir.random
from eval.interpreter import eval_jaxpr
from ir.tracing import make_jaxpr

jax.config.update("jax_enable_x64", True)

GRID = np.arange(12.0).reshape(4, 3)
P4 = np.array([0.1, 0.2, 0.3, 0.4])

CASES = {
    "PRNGKey": (lambda r, s: r.PRNGKey(s), lambda s: jax.random.PRNGKey(s)),
    "split": (lambda r, s: r.split(r.PRNGKey(s), 3), lambda s: jax.random.split(jax.random.PRNGKey(s), 3)),
    "fold_in": (lambda r, s: r.fold_in(r.PRNGKey(s), 7), lambda s: jax.random.fold_in(jax.random.PRNGKey(s), 7)),
    "bits": (lambda r, s: r.bits(r.PRNGKey(s), (5,)), lambda s: jax.random.bits(jax.random.PRNGKey(s), (5,))),
    "uniform": (lambda r, s: r.uniform(r.PRNGKey(s), (4, 3)), lambda s: jax.random.uniform(jax.random.PRNGKey(s),
                                                                                              (4, 3))),
    "uniform_f32_range": (lambda r, s: r.uniform(r.PRNGKey(s), (6,), "float32", -2.0, 3.0),
                          lambda s: jax.random.uniform(jax.random.PRNGKey(s), (6,), np.float32, -2.0, 3.0)),
    "normal": (lambda r, s: r.normal(r.split(r.PRNGKey(s))[1], (7,)),
               lambda s: jax.random.normal(jax.random.split(jax.random.PRNGKey(s))[1], (7,))),
    "bernoulli": (lambda r, s: r.bernoulli(r.PRNGKey(s), 0.3, (8,)),
                  lambda s: jax.random.bernoulli(jax.random.PRNGKey(s), 0.3, (8,))),
    "exponential": (lambda r, s: r.exponential(r.PRNGKey(s), (5,)),
                    lambda s: jax.random.exponential(jax.random.PRNGKey(s), (5,))),
    "gumbel": (lambda r, s: r.gumbel(r.PRNGKey(s), (5,)), lambda s: jax.random.gumbel(jax.random.PRNGKey(s), (5,))),
    "categorical": (lambda r, s: r.categorical(r.PRNGKey(s), np.log(np.array([[0.1, 0.6, 0.3]] * 4))),
                    lambda s: jax.random.categorical(jax.random.PRNGKey(s), np.log(np.array([[0.1, 0.6, 0.3]] * 4)))),
    "randint": (lambda r, s: r.randint(r.PRNGKey(s), (3, 4), -5, 17),
                lambda s: jax.random.randint(jax.random.PRNGKey(s), (3, 4), -5, 17)),
    "randint_int32": (lambda r, s: r.randint(r.PRNGKey(s), (6,), 0, 1000, "int32"),
                      lambda s: jax.random.randint(jax.random.PRNGKey(s), (6,), 0, 1000, np.int32)),
    "truncated_normal": (lambda r, s: r.truncated_normal(r.PRNGKey(s), -1.0, 2.0, (6,)),
                         lambda s: jax.random.truncated_normal(jax.random.PRNGKey(s), -1.0, 2.0, (6,))),
    "permutation_int": (lambda r, s: r.permutation(r.PRNGKey(s), 10),
                        lambda s: jax.random.permutation(jax.random.PRNGKey(s), 10)),
    "permutation_rows": (lambda r, s: r.permutation(r.PRNGKey(s), GRID, axis=1),
                         lambda s: jax.random.permutation(jax.random.PRNGKey(s), GRID, axis=1)),
    "choice_replace": (lambda r, s: r.choice(r.PRNGKey(s), 7, (5,)),
                       lambda s: jax.random.choice(jax.random.PRNGKey(s), 7, (5,))),
    "choice_no_replace": (lambda r, s: r.choice(r.PRNGKey(s), GRID[0], (2,), replace=False),
                          lambda s: jax.random.choice(jax.random.PRNGKey(s), GRID[0], (2,), replace=False)),
    "choice_p": (lambda r, s: r.choice(r.PRNGKey(s), 4, (6,), p=P4),
                 lambda s: jax.random.choice(jax.random.PRNGKey(s), 4, (6,), p=P4)),
    "choice_p_no_replace": (lambda r, s: r.choice(r.PRNGKey(s), 5, (3,), replace=False,
                                                  p=np.array([0.1, 0.2, 0.3, 0.3, 0.1])),
                            lambda s: jax.random.choice(jax.random.PRNGKey(s), 5, (3,), replace=False,
                                                        p=np.array([0.1, 0.2, 0.3, 0.3, 0.1]))),
    **{name: (lambda r, s, _n=name: getattr(r, _n)(r.PRNGKey(s), (2, 3)),
              lambda s, _n=name: getattr(jax.random, _n)(jax.random.PRNGKey(s), (2, 3)))
       for name in ("rademacher", "laplace", "logistic", "cauchy", "maxwell")},
    **{name: (lambda r, s, _n=name, _a=args: getattr(r, _n)(r.PRNGKey(s), *_a),
              lambda s, _n=name, _a=args: getattr(jax.random, _n)(jax.random.PRNGKey(s), *_a))
       for name, args in (("lognormal", (0.5, (4,))), ("rayleigh", (2.0, (4,))), ("pareto", (3.0, (4,))),
                          ("weibull_min", (2.0, 1.5, (4,))), ("gamma", (np.array([0.5, 2.5, 7.0]),)),
                          ("loggamma", (2.5, (4,))), ("beta", (2.0, 3.0, (4,))), ("chisquare", (3.0, (4,))),
                          ("t", (4.0, (4,))), ("triangular", (0.0, 0.3, 2.0, (5,))),
                          ("double_sided_maxwell", (1.0, 2.0, (3,))))},
    "clone": (lambda r, s: r.key_data(r.clone(r.key(s))), lambda s: jax.random.key_data(
        jax.random.clone(jax.random.key(s)))),
    "typed_key": (lambda r, s: r.key_data(r.split(r.key(s))), lambda s: jax.random.key_data(
        jax.random.split(jax.random.key(s)))),
}


ULP_CLOSE = {"normal", "exponential", "gumbel", "uniform_f32_range", "truncated_normal", "laplace", "logistic",
             "cauchy", "maxwell", "lognormal", "rayleigh", "pareto", "weibull_min", "gamma", "loggamma", "beta",
             "chisquare", "t", "triangular", "double_sided_maxwell"}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 42])
def test_random_matches_jax_bits(name, seed):
    ours, theirs = CASES[name]
    seed = np.int64(seed)
    (got,) = eval_jaxpr(make_jaxpr(lambda s: ours(ir.random, s))(seed), seed)
    want = np.asarray(theirs(seed))
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    if name in ULP_CLOSE:
        eps = np.finfo(want.dtype).eps  # values are O(1): a few ulps of 1 absolute, or relative
        np.testing.assert_allclose(got, want, rtol=4 * eps, atol=4 * eps)
    else:
        np.testing.assert_array_equal(got, want)
