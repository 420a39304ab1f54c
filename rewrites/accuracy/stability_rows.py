"""PyTensor's numerical-stability rewrites as rows to measure: per formula, the naive program, the form PyTensor's
rewrites give (pytensor/tensor/rewriting/math.py, written with PyTensor's own definitions: its softplus is
piecewise in x, its log1mexp a switch at log ½) and the operand shapes. `measure_row(name, dtype)` measures one
row; `papers/accuracy/run.py` runs them all as `eval.study` tasks and tabulates them.
"""

from __future__ import annotations

import math

import ir.numpy as jnp
from ir import lax
from ir.core import ShapedArray
from ir.dtypes import from_name
from ir.tracing import make_jaxpr
from rewrites.accuracy import measure_accuracy
from rewrites.engine import optimize

exp, log, log1p, expm1, logistic = jnp.exp, jnp.log, jnp.log1p, jnp.expm1, lax.logistic
COLUMNS = ("naive", "PyTensor", "eqjax flops", "eqjax flops+accuracy")


def pytensor_softplus(x):
    """PyTensor's scalar softplus: exp(x) below -37, log1p(exp(x)) below 18, x + exp(-x) below 33.3, else x."""
    return lax.select_n(x < -37.0, lax.select_n(x < 18.0, lax.select_n(x < 33.3, x, x + exp(-x)), log1p(exp(x))),
                        exp(x))


def pytensor_log1mexp(x):
    """PyTensor's log1mexp: log(-expm1(x)) near 0, log1p(-exp(x)) below log(1/2)."""
    return lax.select_n(x < math.log(0.5), log(-expm1(x)), log1p(-exp(x)))


def pytensor_max_shift(x):
    """PyTensor's logsumexp shift: max(x), or 0 where it is infinite."""
    m = jnp.max(x)
    return lax.select_n(jnp.isinf(m), m, jnp.zeros_like(m))


def pytensor_logsumexp(x):
    m = pytensor_max_shift(x)
    return m + log(jnp.sum(exp(x - m)))


def pytensor_log_softmax(x):
    shifted = x - pytensor_max_shift(x)
    return shifted - log(jnp.sum(exp(shifted)))


# (name, naive form, PyTensor's form, operand shapes)
ROWS = [
    ("log(1-x)", lambda x: log(1.0 - x), lambda x: log1p(-x), [()]),
    ("1-exp(x)", lambda x: 1.0 - exp(x), lambda x: -expm1(x), [()]),
    ("log(1-exp(x))", lambda x: log(1.0 - exp(x)), pytensor_log1mexp, [()]),
    ("1-sigmoid(x)", lambda x: 1.0 - logistic(x), lambda x: logistic(-x), [()]),
    ("1/(1+exp(x))", lambda x: 1.0 / (1.0 + exp(x)), lambda x: logistic(-x), [()]),
    ("log(1+exp(x))", lambda x: log(1.0 + exp(x)), pytensor_softplus, [()]),
    ("log(sigmoid(x))", lambda x: log(logistic(x)), lambda x: -pytensor_softplus(-x), [()]),
    ("log(exp(x)+exp(y))", lambda x, y: log(exp(x) + exp(y)),
     lambda x, y: jnp.maximum(x, y) + log1p(exp(-jnp.abs(x - y))), [(), ()]),
    ("log(sum(exp(x)))", lambda x: log(jnp.sum(exp(x))), pytensor_logsumexp, [(4,)]),
    ("log(softmax(x))", lambda x: log(exp(x) / jnp.sum(exp(x))), pytensor_log_softmax, [(4,)]),
    ("1-erf(x)", lambda x: 1.0 - lax.erf(x), lax.erfc, [()]),
    ("1-erfc(x)", lambda x: 1.0 - lax.erfc(x), lax.erf, [()]),
]


def measure_row(name: str, dtype: str) -> dict:
    """One row (an `eval.study` task): the naive program of `ROWS[name]` in `dtype`, PyTensor's form and what eqjax
    extracts under rules="accurate" with `flops` and with `flops+accuracy`, each as mean and max bits of error
    against the exact results (`measure_accuracy`) and as its printed program."""
    _, naive, pytensor, shapes = next(row for row in ROWS if row[0] == name)
    dtype = from_name(dtype)
    avals = [ShapedArray(shape, dtype) for shape in shapes]
    program = make_jaxpr(naive)(*avals)
    forms = {"naive": program, "PyTensor": make_jaxpr(pytensor)(*avals)}
    for cost in ("flops", "flops+accuracy"):
        forms[f"eqjax {cost}"], _ = optimize(program, rules="accurate", cost=cost)
    row = {"name": name, "dtype": dtype.name, "forms": {}}
    for column, form in forms.items():
        [out] = measure_accuracy(program, form)["outputs"]
        row["forms"][column] = {"mean_bits": out["optimized_mean_bits"], "max_bits": out["optimized_max_bits"],
                                "program": str(form)}
    return row
