"""Inverse pairs, egg-style: f(g(x)) = x where the value analysis (or nothing) allows it, and not where
g's range leaves f's domain."""

import numpy as np

import ir.numpy as jnp
from ir import lax
from ir.core import ShapedArray
from ir.dtypes import bfloat16, complex128, float16, float32, float64, int32, int64, uint8
from rewrites.rules import inverse
from tests.rewrites.helpers import F32, F64
from tests.rewrites.rule_checks import F2, I32, B, rows_cover, table_tests

C128 = ShapedArray((3,), complex128)
F16 = ShapedArray((3,), float16)
BF16 = ShapedArray((3,), bfloat16)
U8 = ShapedArray((3,), uint8)


ONE = np.int32(1)


def via(wide, back):
    """x converted to `wide`, then to `back`."""
    return lambda x: lax.convert_element_type(lax.convert_element_type(x, wide), back)



# (rule, f, g, avals, rule set)
PROVES = [
    ("exp-log", lambda x: jnp.exp(jnp.log(x * x)), lambda x: x * x, (F64,), "default"),
    ("exp-log-any", lambda x: jnp.exp(jnp.log(x)), lambda x: x, (F64,), "fast"),
    ("log-exp", lambda x: jnp.log(jnp.exp(x)), lambda x: x, (F64,), "default"),
    ("expm1-log1p", lambda x: jnp.expm1(jnp.log1p(jnp.tanh(x))), jnp.tanh, (F64,), "default"),
    ("log1p-expm1", lambda x: jnp.log1p(jnp.expm1(x)), lambda x: x, (F64,), "default"),
    ("sqrt-mul-self", lambda x: jnp.sqrt(jnp.abs(x)) * jnp.sqrt(jnp.abs(x)), jnp.abs, (F64,), "default"),
    ("sqrt-mul-self-any", lambda x: jnp.sqrt(x) * jnp.sqrt(x), lambda x: x, (F64,), "fast"),
    ("sqrt-square", lambda x: jnp.sqrt(x * x), jnp.abs, (F64,), "default"),
    ("sqrt-square", lambda x: jnp.sqrt(x ** 2), jnp.abs, (F32,), "default"),
    ("recip-recip", lambda x: 1.0 / (1.0 / x), lambda x: x, (F64,), "default"),
    ("tanh-atanh", lambda x: jnp.tanh(jnp.arctanh(jnp.cos(x))), jnp.cos, (F64,), "default"),
    ("atanh-tanh", lambda x: jnp.arctanh(jnp.tanh(x)), lambda x: x, (F64,), "default"),
    ("sinh-asinh", lambda x: jnp.sinh(jnp.arcsinh(x)), lambda x: x, (F64,), "default"),
    ("asinh-sinh", lambda x: jnp.arcsinh(jnp.sinh(x)), lambda x: x, (F64,), "default"),
    ("sin-asin", lambda x: jnp.sin(jnp.arcsin(jnp.tanh(x))), jnp.tanh, (F64,), "default"),
    ("cos-acos", lambda x: jnp.cos(jnp.arccos(lax.logistic(x))), lax.logistic, (F64,), "default"),
    ("not-not", lambda b: jnp.logical_not(jnp.logical_not(b)), lambda b: b, (B,), "strict"),
    ("not-not", lambda x: jnp.invert(jnp.invert(x)), lambda x: x, (I32,), "strict"),
    ("conj-conj", lambda z: lax.conj(lax.conj(z)), lambda z: z, (C128,), "strict"),
    ("real-complex", lambda x, y: lax.real(lax.complex(x, y)), lambda x, y: x, F2, "strict"),
    ("imag-complex", lambda x, y: lax.imag(lax.complex(x, y)), lambda x, y: y, F2, "strict"),
    ("complex-parts", lambda z: lax.complex(lax.real(z), lax.imag(z)), lambda z: z, (C128,), "strict"),
    ("convert-same", lambda x: lax.convert_element_type(x * 2.0, float64, weak_type=True), lambda x: x * 2.0,
     (F64,), "strict"),
    ("convert-round-trip", via(float64, float32), lambda x: x, (F32,), "strict"),
    ("convert-round-trip", via(float32, float16), lambda x: x, (F16,), "strict"),
    ("convert-round-trip", via(float64, bfloat16), lambda x: x, (BF16,), "strict"),
    ("convert-round-trip", via(int64, int32), lambda x: x, (I32,), "strict"),
    ("convert-round-trip", via(float64, int32), lambda x: x, (I32,), "strict"),
    ("convert-round-trip", via(float16, uint8), lambda x: x, (U8,), "strict"),
    ("convert-round-trip", via(int32, np.bool_), lambda b: b, (B,), "strict"),
]

# (what must not be proved, f, g, avals, rule set)
NOT_PROVES = [
    ("exp(log x) needs x >= 0", lambda x: jnp.exp(jnp.log(x)), lambda x: x, (F64,), "default"),
    ("expm1(log1p x) needs x >= -1", lambda x: jnp.expm1(jnp.log1p(x)), lambda x: x, (F64,), "fast"),
    ("sqrt(x)^2 needs x >= 0", lambda x: jnp.sqrt(x) * jnp.sqrt(x), lambda x: x, (F64,), "default"),
    ("tanh(atanh x) needs |x| <= 1", lambda x: jnp.tanh(jnp.arctanh(x)), lambda x: x, (F64,), "fast"),
    ("sin(asin x) needs |x| <= 1", lambda x: jnp.sin(jnp.arcsin(x * 2.0)), lambda x: x * 2.0, (F64,), "fast"),
    ("cos(acos x) needs |x| <= 1", lambda x: jnp.cos(jnp.arccos(jnp.exp(x))), jnp.exp, (F64,), "fast"),
    ("sqrt(x*x) is not x", lambda x: jnp.sqrt(x * x), lambda x: x, (F64,), "fast"),
    ("log(exp z) has a branch cut", lambda z: jnp.log(jnp.exp(z)), lambda z: z, (C128,), "fast"),
    ("integer 1/(1/x) truncates", lambda x: lax.div(ONE, lax.div(ONE, x)), lambda x: x, (I32,), "fast"),
    ("f64 -> f32 -> f64 rounds", via(float32, float64), lambda x: x, (F64,), "fast"),
    ("f16 -> bf16 -> f16 rounds", via(bfloat16, float16), lambda x: x, (F16,), "fast"),
    ("i32 -> f32 -> i32 rounds", via(float32, int32), lambda x: x, (I32,), "fast"),
    ("f64 -> i32 -> f64 truncates", via(int32, float64), lambda x: x, (F64,), "fast"),
]


test_proves, test_not_proves = table_tests(PROVES, NOT_PROVES)


def test_every_rule_has_a_row():
    assert not rows_cover(inverse, PROVES)
