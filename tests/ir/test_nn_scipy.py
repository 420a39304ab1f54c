"""ir.nn and ir.scipy.special against jax.nn and jax.scipy.special: values (special points included), and
relu's custom derivative at 0 against JAX's."""

import jax
import jax.nn
import jax.scipy.special
import numpy as np
import pytest

import ir.nn
import ir.scipy.special
from tests.ir.test_numpy_surface import check

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(3)
X = np.concatenate([RNG.uniform(-4, 4, 10), [0.0, -0.0, 1.0, -1.0, 30.0, -30.0]])
P = np.array([0.01, 0.2, 0.5, 0.9, 0.999])
POS = RNG.uniform(0.1, 5, 6)
ZERO_AND = np.array([0.0, 0.0, 1.5, 2.0, 0.5])
M = RNG.uniform(-3, 3, (3, 5))

NN = {name: (lambda m, x, _n=name: getattr(m, _n)(x), (X,)) for name in [
    "relu", "relu6", "silu", "swish", "softplus", "soft_sign", "sigmoid", "log_sigmoid", "hard_sigmoid",
    "hard_silu", "hard_tanh", "elu", "celu", "selu", "leaky_relu", "mish", "squareplus", "sparse_plus",
    "sparse_sigmoid", "identity", "tanh"]}
NN.update({
    "gelu_tanh": (lambda m, x: m.gelu(x), (X,)),
    "gelu_exact": (lambda m, x: m.gelu(x, approximate=False), (X,)),
    "glu": (lambda m, x: m.glu(x, axis=0), (M[:2],)),
    "softmax": (lambda m, x: m.softmax(x, axis=1), (M,)),
    "log_softmax": (lambda m, x: m.log_softmax(x), (M,)),
    "logsumexp": (lambda m, x: m.logsumexp(x, axis=0), (M,)),
    "one_hot": (lambda m, x: m.one_hot(x, 4), (np.array([0, 3, 1, 5]),)),
    "standardize": (lambda m, x: m.standardize(x, axis=1), (M,)),
})

SPECIAL = {name: (lambda m, x, _n=name: getattr(m, _n)(x), (args,)) for name, args in [
    ("erf", X), ("erfc", X), ("erfinv", P * 2 - 1), ("gammaln", POS), ("gamma", np.array([0.5, 3.0, -1.5, 4.2])),
    ("digamma", POS), ("entr", ZERO_AND), ("expit", X), ("logit", P), ("ndtr", X), ("ndtri", P),
    ("log_ndtr", np.array([-30.0, -5.0, -1.0, 0.0, 2.0, 8.0])), ("i0e", X), ("i1e", X), ("i0", X[:10]),
    ("i1", X[:10]), ("factorial", np.array([0.0, 1.0, 4.0, 5.5]))]}
SPECIAL.update({
    "logsumexp": (lambda m, x: (m.logsumexp(x), m.logsumexp(x, axis=1, keepdims=True)), (M,)),
    "logsumexp_inf": (lambda m, x: m.logsumexp(x), (np.array([-np.inf, -np.inf]),)),
    "xlogy": (lambda m, x, y: m.xlogy(x, y), (ZERO_AND, np.array([0.0, 2.0, 3.0, 0.5, 1.0]))),
    "xlog1py": (lambda m, x, y: m.xlog1py(x, y), (ZERO_AND, np.array([-1.0, 2.0, 3.0, 0.5, 1.0]))),
    "betaln": (lambda m, a, b: m.betaln(a, b), (POS, POS[::-1].copy())),
    "beta": (lambda m, a, b: m.beta(a, b), (POS, POS[::-1].copy())),
    "betainc": (lambda m, a, b, x: m.betainc(a, b, x), (POS, POS[::-1].copy(), np.linspace(0.1, 0.9, 6))),
    "gammainc": (lambda m, a, x: m.gammainc(a, x), (POS, POS[::-1].copy())),
    "gammaincc": (lambda m, a, x: m.gammaincc(a, x), (POS, POS[::-1].copy())),
    "polygamma": (lambda m, n, x: m.polygamma(n, x), (np.array([0, 1, 2]), POS[:3])),
    "zeta": (lambda m, x, q: m.zeta(x, q), (np.array([2.0, 3.0, 4.5]), POS[:3])),
    "rel_entr": (lambda m, p, q: m.rel_entr(p, q), (ZERO_AND, np.array([1.0, 0.0, 2.0, 0.5, 1.0]))),
    "kl_div": (lambda m, p, q: m.kl_div(p, q), (ZERO_AND, np.array([1.0, 0.5, 2.0, 0.5, 1.0]))),
    "softmax": (lambda m, x: m.softmax(x, axis=0), (M,)),
})


@pytest.mark.parametrize("name", sorted(NN))
def test_nn_matches_jax(name):
    check(name, NN, ir.nn, jax.nn, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_scipy_special_matches_jax(name):
    check(name, SPECIAL, ir.scipy.special, jax.scipy.special, rtol=1e-8, atol=1e-12)


def test_relu_derivative_at_zero_is_jaxs():
    from eval.interpreter import eval_jaxpr
    from ir.tracing import make_jaxpr
    from transforms import grad

    x = np.array(0.0)
    closed = make_jaxpr(grad(lambda v: ir.nn.relu(v)))(x)
    (got,) = eval_jaxpr(closed, x)
    assert got == jax.grad(jax.nn.relu)(0.0) == 0.0


def _grad(fn, argnums, *args):
    from eval.interpreter import eval_jaxpr
    from ir.tracing import make_jaxpr
    from transforms import grad

    return eval_jaxpr(make_jaxpr(grad(fn, argnums=argnums))(*args), *args)


# name -> (function of the namespace, argnums, arguments at the special point)
CUSTOM_JVP_POINTS = {
    "xlogy_at_x0": (lambda m, x, y: m.xlogy(x, y), (0, 1), (0.0, 2.5)),
    "xlog1py_at_x0": (lambda m, x, y: m.xlog1py(x, y), (0, 1), (0.0, 1.5)),
    "xlogy_regular": (lambda m, x, y: m.xlogy(x, y), (0, 1), (1.5, 0.5)),
    "log_ndtr_far_tail": (lambda m, x: m.log_ndtr(x), 0, (-30.0,)),
    "log_ndtr_middle": (lambda m, x: m.log_ndtr(x), 0, (0.3,)),
    "logit": (lambda m, x: m.logit(x), 0, (0.3,)),
    "entr": (lambda m, x: m.entr(x), 0, (0.25,)),
    "rel_entr_equal": (lambda m, p, q: m.rel_entr(p, q), (0, 1), (0.5, 0.5)),
    "kl_div": (lambda m, p, q: m.kl_div(p, q), (0, 1), (0.2, 0.7)),
}

NN_JVP_POINTS = {
    "relu6_at_0": ("relu6", 0.0), "relu6_at_6": ("relu6", 6.0), "relu6_inside": ("relu6", 2.0),
    "hard_sigmoid_at_kink": ("hard_sigmoid", -3.0), "hard_silu_at_kink": ("hard_silu", 3.0),
    "softplus_at_inf": ("softplus", np.inf), "softplus_at_minus_inf": ("softplus", -np.inf),
    "log_sigmoid_at_minus_inf": ("log_sigmoid", -np.inf), "mish": ("mish", 0.7), "softplus": ("softplus", -2.0),
}


@pytest.mark.parametrize("name", sorted(NN_JVP_POINTS))
def test_nn_custom_jvp_derivatives_are_jaxs(name):
    fn, x = NN_JVP_POINTS[name]
    got = _grad(getattr(ir.nn, fn), 0, np.float64(x))
    np.testing.assert_allclose(np.ravel(got), [jax.grad(getattr(jax.nn, fn))(np.float64(x))], rtol=1e-12)


@pytest.mark.parametrize("name", sorted(CUSTOM_JVP_POINTS))
def test_custom_jvp_derivatives_are_jaxs(name):
    fn, argnums, args = CUSTOM_JVP_POINTS[name]
    args = tuple(np.float64(a) for a in args)
    got = _grad(lambda *xs: fn(ir.scipy.special, *xs), argnums, *args)
    want = jax.grad(lambda *xs: fn(jax.scipy.special, *xs), argnums)(*args)
    want = want if isinstance(want, tuple) else (want,)
    np.testing.assert_allclose(np.array(got, dtype=np.float64).ravel(), np.array(want, dtype=np.float64),
                               rtol=1e-9, atol=1e-12)


STATS_X = np.array([-2.0, -0.3, 0.0, 0.4, 1.0, 2.5])
UNIT = np.array([0.05, 0.3, 0.5, 0.7, 0.95])
COUNTS = np.array([0.0, 1.0, 3.0, 7.0, 2.5, -1.0])
MVN_COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]])


def _dist(dist, fn):
    return lambda m, *args: getattr(getattr(m, dist), fn)(*args)


STATS = {
    **{f"norm_{f}": (_dist("norm", f), (STATS_X, 0.5, 2.0)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")},
    **{f"norm_{f}": (_dist("norm", f), (UNIT, 0.5, 2.0)) for f in ("ppf", "isf")},
    **{f"expon_{f}": (_dist("expon", f), (STATS_X, -0.5, 2.0)) for f in ("logpdf", "pdf", "cdf")},
    **{f"uniform_{f}": (_dist("uniform", f), (STATS_X, -1.0, 2.0)) for f in ("logpdf", "pdf")},
    **{f"logistic_{f}": (_dist("logistic", f), (STATS_X, 0.5, 2.0)) for f in ("logpdf", "pdf", "cdf")},
    "logistic_ppf": (_dist("logistic", "ppf"), (UNIT, 0.5, 2.0)),
    **{f"laplace_{f}": (_dist("laplace", f), (STATS_X, 0.5, 2.0)) for f in ("logpdf", "pdf", "cdf")},
    **{f"cauchy_{f}": (_dist("cauchy", f), (STATS_X, 0.5, 2.0)) for f in ("logpdf", "pdf", "cdf")},
    **{f"gamma_{f}": (_dist("gamma", f), (STATS_X + 2.1, 2.5, 0.1, 1.5)) for f in ("logpdf", "pdf", "cdf")},
    **{f"beta_{f}": (_dist("beta", f), (UNIT, 2.0, 3.5)) for f in ("logpdf", "pdf", "cdf")},
    **{f"poisson_{f}": (_dist("poisson", f), (COUNTS, 2.5)) for f in ("logpmf", "pmf", "cdf")},
    **{f"bernoulli_{f}": (_dist("bernoulli", f), (np.array([0.0, 1.0, 2.0]), 0.3)) for f in ("logpmf", "pmf")},
    **{f"t_{f}": (_dist("t", f), (STATS_X, 3.5, 0.5, 2.0)) for f in ("logpdf", "pdf")},
    "multivariate_normal": (_dist("multivariate_normal", "logpdf"), (RNG.uniform(-1, 1, (4, 3)), np.ones(3),
                                                                     MVN_COV)),
    "multivariate_normal_vector": (_dist("multivariate_normal", "pdf"), (np.zeros(3), np.ones(3), MVN_COV)),
}


@pytest.mark.parametrize("name", sorted(STATS))
def test_scipy_stats_matches_jax(name):
    import jax.scipy.stats

    import ir.scipy.stats

    check(name, STATS, ir.scipy.stats, jax.scipy.stats, rtol=1e-9, atol=1e-12)
