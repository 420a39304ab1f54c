"""exp/log/pow laws, egg-style. Guarded rows use operands the value analysis knows are positive
(x*x + 1) or finite (literals); the same equations over arbitrary inputs must not be proved."""


import numpy as np

import ir.numpy as jnp
from ir import lax
from ir.core import ShapedArray
from ir.dtypes import complex128
from rewrites.rules import explog
from tests.rewrites.helpers import F64
from tests.rewrites.rule_checks import F2, F3, pos, rows_cover, table_tests

C128 = ShapedArray((3,), complex128)
exp, log = jnp.exp, jnp.log

# (rule, f, g, avals, rule set)
PROVES = [
    ("exp-add", lambda x, y: exp(x + y), lambda x, y: exp(x) * exp(y), F2, "default"),
    ("exp-add", lambda x, y: exp(x) * exp(y), lambda x, y: exp(x + y), F2, "default"),
    ("exp-sub", lambda x, y: exp(x - y), lambda x, y: exp(x) / exp(y), F2, "default"),
    ("exp-neg", lambda x: exp(-x), lambda x: 1.0 / exp(x), (F64,), "default"),
    ("exp2-add", lambda x, y: lax.exp2(x + y), lambda x, y: lax.exp2(x) * lax.exp2(y), F2, "default"),
    ("exp2-sub", lambda x, y: lax.exp2(x) / lax.exp2(y), lambda x, y: lax.exp2(x - y), F2, "default"),
    ("log-add-merge", lambda x, y: log(x) + log(y), lambda x, y: log(x * y), F2, "fast"),
    ("ipow-exp", lambda x: exp(x) ** 3, lambda x: exp(3.0 * x), (F64,), "default"),
    ("log-mul", lambda x, y: log(pos(x) * pos(y)), lambda x, y: log(pos(x)) + log(pos(y)), F2, "default"),
    ("log-mul", lambda x, y: log(pos(x)) + log(pos(y)), lambda x, y: log(pos(x) * pos(y)), F2, "default"),
    ("log-div", lambda x, y: log(pos(x) / pos(y)), lambda x, y: log(pos(x)) - log(pos(y)), F2, "default"),
    ("log-recip", lambda x: log(1.0 / pos(x)), lambda x: -log(pos(x)), (F64,), "default"),
    ("log-exp-mul", lambda x, y: log(exp(x) * jnp.abs(y)), lambda x, y: x + log(jnp.abs(y)), F2, "default"),
    ("log-sqrt", lambda x: log(jnp.sqrt(x)), lambda x: 0.5 * log(x), (F64,), "default"),
    ("log-ipow", lambda x: log(pos(x) ** 3), lambda x: 3.0 * log(pos(x)), (F64,), "default"),
    ("log-ipow", lambda x: log(pos(x) ** -2), lambda x: -2.0 * log(pos(x)), (F64,), "default"),
    ("log-pow", lambda x: log(lax.pow(pos(x), 2.5)), lambda x: 2.5 * log(pos(x)), (F64,), "default"),
    ("exp-log-mul", lambda x: exp(log(pos(x)) * 2.5), lambda x: lax.pow(pos(x), 2.5), (F64,), "default"),
    ("pow-mul-pow", lambda x, y: lax.pow(3.0, x) * lax.pow(3.0, y), lambda x, y: lax.pow(3.0, x + y), F2,
     "default"),
    ("pow-two-base", lambda x: lax.pow(2.0, x), lax.exp2, (F64,), "default"),
    ("polygamma-zero", lambda x: lax.polygamma(np.float64(0.0), x), lax.digamma, (F64,), "strict"),
    ("log-one-plus", lambda x: log(1.0 + x), jnp.log1p, (F64,), "default"),
    ("log-plus-one", lambda x: log(x + 1.0), jnp.log1p, (F64,), "default"),
    ("exp-minus-one", lambda x: exp(x) - 1.0, jnp.expm1, (F64,), "default"),
    ("logistic-def", lambda x: 1.0 / (1.0 + exp(-x)), lax.logistic, (F64,), "default"),
]

# (what must not be proved, f, g, avals, rule set)
NOT_PROVES = [
    ("log(x*y) needs x, y > 0", lambda x, y: log(x * y), lambda x, y: log(x) + log(y), F2, "default"),
    ("log(x/y) needs x, y > 0", lambda x, y: log(x / y), lambda x, y: log(x) - log(y), F2, "default"),
    ("log(1/x) needs x > 0 (-0.0)", lambda x: log(1.0 / x), lambda x: -log(x), (F64,), "fast"),
    ("log(x^2) needs x > 0", lambda x: log(x ** 2), lambda x: 2.0 * log(x), (F64,), "default"),
    ("log(x^y) needs a finite y", lambda x, y: log(lax.pow(pos(x), y)), lambda x, y: y * log(pos(x)), F2,
     "fast"),
    ("exp(log(x)*y) needs x > 0", lambda x: exp(log(x) * 2.5), lambda x: lax.pow(x, 2.5), (F64,), "fast"),
    ("x^y*x^z needs a finite x", lambda x, y, z: lax.pow(x * x + 1.0, y) * lax.pow(x * x + 1.0, z),
     lambda x, y, z: lax.pow(x * x + 1.0, y + z), F3, "fast"),
    ("log(exp(x)*y) needs y >= 0", lambda x, y: log(exp(x) * y), lambda x, y: x + log(y), F2, "fast"),
    ("exp(x)^0 is not exp(0*x)", lambda x: exp(x) ** 0, lambda x: exp(0.0 * x), (F64,), "default"),
    ("exp(a+b) over complex numbers is left alone", lambda z, w: exp(z + w), lambda z, w: exp(z) * exp(w),
     (C128, C128), "fast"),
]


test_proves, test_not_proves = table_tests(PROVES, NOT_PROVES)


def test_every_rule_has_a_row():
    assert not rows_cover(explog, PROVES)
