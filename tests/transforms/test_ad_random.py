"""AD rules of the PRNG primitives (transforms/ad/rules/random.py): random_gamma's derivative in `a` against
the implicit reparameterization gradient computed from the gamma CDF, the transpose identity, keys that carry
no tangent, then the `random` oracle family against JAX.

The reference: a gamma sample x = P⁻¹(a, u) for the uniform u = P(a, x) its draw fixes (P the regularized
lower incomplete gamma function); JAX differentiates it at fixed u, so dx/da is the central difference of
scipy's `gammaincinv(a, u)` in a (not of the sampler's output, whose accepted proposal moves with a).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from eval.interpreter import eval_jaxpr
from ir import make_jaxpr
from ir.dtypes import float64
from ir.params import Symbol
from ir.tracing import bind
from tests.transforms.ad_helpers import assert_oracle, check_transpose, jvp_eval, vjp_eval

FRY = Symbol("fry")


def gamma(log_space: bool, dtype=np.float64):
    def fn(key, a):
        return bind("random_gamma", bind("random_wrap", key, impl=FRY), a, log_space=log_space)

    return make_jaxpr(fn)(np.zeros(2, np.uint32), np.ones(4, dtype))


PROGRAMS = {log_space: gamma(log_space) for log_space in (False, True)}


def implicit_gradient(a: np.ndarray, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    u = special.gammainc(a, x)
    return (special.gammaincinv(a + eps, u) - special.gammaincinv(a - eps, u)) / (2 * eps)


@pytest.mark.parametrize("log_space", [False, True])
@settings(max_examples=4)
@given(seed=st.integers(0, 2**31 - 1))
def test_gamma_jvp_is_the_implicit_reparameterization_gradient(log_space, seed):
    rng = np.random.default_rng(seed)
    key = rng.integers(0, 2**32, 2).astype(np.uint32)
    a, t = rng.uniform(0.3, 6.0, 4), rng.standard_normal(4)
    closed = PROGRAMS[log_space]
    (ans,) = eval_jaxpr(closed, key, a)
    sample = np.exp(ans) if log_space else ans
    dx = implicit_gradient(a, sample)
    (got,) = jvp_eval(closed, [key, a], [t])
    np.testing.assert_allclose(got, t * (dx / sample if log_space else dx), rtol=1e-5)
    check_transpose(closed, [key, a], seed)


def test_gamma_vjp_scales_the_cotangent_by_the_gradient():
    key, a, ct = np.array([3, 4], np.uint32), np.array([0.5, 1.0, 2.5, 8.0]), np.array([1.0, -2.0, 0.5, 3.0])
    closed = PROGRAMS[False]
    (ans,) = eval_jaxpr(closed, key, a)
    (got,) = vjp_eval(closed, [key, a], [ct])
    np.testing.assert_allclose(got, ct * implicit_gradient(a, ans), rtol=1e-5)


def test_float32_log_space_gamma_has_its_rule():
    """The log-space rules are one per float dtype (the smallest normal a zero sample becomes)."""
    closed = gamma(True, np.float32)
    key, a = np.array([1, 2], np.uint32), np.array([0.5, 1.0, 2.0, 4.0], np.float32)
    (got,) = jvp_eval(closed, [key, a], [np.ones(4, np.float32)])
    (ans,) = eval_jaxpr(closed, key, a)
    want = implicit_gradient(a.astype(np.float64), np.exp(ans.astype(np.float64))) / np.exp(ans.astype(np.float64))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-3)


def test_keys_and_bits_carry_no_tangent():
    """A float output computed only from a key (bits turned into floats) has a zero tangent; one scaled by a
    float input gets that input's tangent times the sample (JAX: keys are integers)."""
    def scaled_bits(key, x):
        bits = bind("random_bits", bind("random_split", bind("random_wrap", key, impl=FRY), shape=(3,)),
                    bit_width=32, shape=())
        floats = bind("convert_element_type", bits, new_dtype=float64, weak_type=False, sharding=None)
        return floats * x, floats

    key, x = np.array([9, 10], np.uint32), np.array([1.0, 2.0, 3.0])
    closed = make_jaxpr(scaled_bits)(key, x)
    t = np.array([0.5, -1.0, 2.0])
    scaled, floats = jvp_eval(closed, [key, x], [t])
    (sample,) = eval_jaxpr(closed, key, x)[1:]
    np.testing.assert_array_equal(scaled, t * sample)
    np.testing.assert_array_equal(floats, np.zeros(3))


def test_oracle():
    outcomes = assert_oracle("random", ("jvp", "vjp"), stride=1)
    assert len(outcomes) == 4 and all(o.status == "passed" for o in outcomes)
