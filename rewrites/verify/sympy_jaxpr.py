"""A Jaxpr of scalar elementwise primitives as SymPy expressions, for checking derivative programs
against `sympy.diff` and the two sides of a rewrite rule over the reals (`rewrites.verify.symbolic`).

    to_sympy(closed, x, y, ...) -> [expr per output]

Real and boolean rank-0 values only: a float is an expression, a comparison a SymPy relational, and
`select_n` with a boolean predicate a `Piecewise`. Literals become exact numbers (`0.5` is 1/2, a
float within a few ulps of a simple expression in π, like 2/√π, is that expression). Conversions between float
dtypes and `reduce_precision` to float64's own format are the identity (SymPy computes over the
reals). Anything else raises `UnsupportedPrimitive` naming the primitive: complex values, arrays,
integer predicates, functions with no differentiable SymPy form (rem, floor, round, ...).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import sympy as sp

from ir.core import ClosedJaxpr, Literal
from ir.errors import UnsupportedPrimitive

WHERE = "rewrites/verify/sympy_jaxpr.py"


def _exp_minus_abs(f: Callable) -> Callable:
    return lambda x: sp.exp(-sp.Abs(x)) * f(x)


UNARY: dict[str, Callable] = {
    "neg": lambda x: -x, "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "asin": sp.asin, "acos": sp.acos,
    "atan": sp.atan, "sinh": sp.sinh, "cosh": sp.cosh, "tanh": sp.tanh, "asinh": sp.asinh, "acosh": sp.acosh,
    "atanh": sp.atanh, "exp": sp.exp, "exp2": lambda x: 2**x, "expm1": lambda x: sp.exp(x) - 1, "log": sp.log,
    "log1p": lambda x: sp.log(1 + x), "logistic": lambda x: 1 / (1 + sp.exp(-x)), "sqrt": sp.sqrt,
    "rsqrt": lambda x: 1 / sp.sqrt(x), "cbrt": lambda x: sp.real_root(x, 3), "square": lambda x: x**2,
    "abs": sp.Abs, "sign": sp.sign, "lgamma": sp.loggamma, "digamma": sp.digamma, "erf": sp.erf,
    "erfc": sp.erfc, "erf_inv": sp.erfinv, "bessel_i0e": _exp_minus_abs(lambda x: sp.besseli(0, x)),
    "bessel_i1e": _exp_minus_abs(lambda x: sp.besseli(1, x)), "copy": lambda x: x, "copy_p": lambda x: x,
}
BINARY: dict[str, Callable] = {
    "add": lambda x, y: x + y, "add_any": lambda x, y: x + y, "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y, "div": lambda x, y: x / y, "pow": lambda x, y: x**y, "atan2": sp.atan2,
    "max": sp.Max, "min": sp.Min, "polygamma": sp.polygamma,
    "igamma": lambda a, x: sp.lowergamma(a, x) / sp.gamma(a), "igammac": lambda a, x: sp.uppergamma(a, x) / sp.gamma(a),
    "eq": sp.Eq, "ne": sp.Ne, "lt": sp.Lt, "le": sp.Le, "gt": sp.Gt, "ge": sp.Ge,
}
LOGICAL: dict[str, Callable] = {"not": sp.Not, "and": sp.And, "or": sp.Or, "xor": sp.Xor}  # on booleans
NARY: dict[str, Callable] = {
    "clamp": lambda lo, x, hi: sp.Min(sp.Max(x, lo), hi),
    "regularized_incomplete_beta": lambda a, b, x: sp.betainc_regularized(a, b, 0, x),
}


def _identity_if(ok: Callable[[dict], bool]) -> Callable:
    def translate(prim: str, params: dict, x):
        if not ok(params):
            raise UnsupportedPrimitive(prim, f"SymPy translation with params {params}", WHERE)
        return x

    return translate


def _integer_pow(prim: str, params: dict, x):
    return x ** int(params["y"])


def _select_n(prim: str, params: dict, which, *cases):
    if len(cases) != 2 or not _is_boolean(which):
        raise UnsupportedPrimitive(prim, "SymPy translation (a boolean predicate and two cases only)", WHERE)
    return sp.Piecewise((cases[1], which), (cases[0], True))


WITH_PARAMS: dict[str, Callable] = {
    "integer_pow": _integer_pow,
    "select_n": _select_n,
    "convert_element_type": _identity_if(lambda p: p["new_dtype"].kind == "f"),
    "reduce_precision": _identity_if(lambda p: int(p["exponent_bits"]) >= 11 and int(p["mantissa_bits"]) >= 52),
    "broadcast_in_dim": _identity_if(lambda p: tuple(p["shape"]) == ()),
}


def number(value) -> sp.Expr:
    """A literal's exact value: booleans and integers as they are; a float as the simplest number
    (a rational, or an expression in π) within 4 ulps of it (a constant JAX computes in float64, like
`np.sqrt(np.pi) / 2`, is rounded more than once), else its exact binary value."""
    value = np.asarray(value)[()]
    if value.dtype.kind == "b":
        return sp.true if bool(value) else sp.false
    if value.dtype.kind in "iu":
        return sp.Integer(int(value))
    if value.dtype.kind != "f" or not np.isfinite(value):
        raise UnsupportedPrimitive(f"literal {value!r}", "SymPy translation (finite reals only)", WHERE)
    v = float(value)
    simple = sp.nsimplify(v, [sp.pi])
    return simple if abs(float(simple) - v) <= 4 * math.ulp(v) else sp.Rational(v)


def _is_boolean(x) -> bool:
    return isinstance(x, (sp.logic.boolalg.Boolean, sp.core.relational.Relational))


def apply_primitive(prim: str, params: dict, args: list):
    if prim in LOGICAL and all(_is_boolean(a) for a in args):
        return LOGICAL[prim](*args)
    if prim in UNARY and len(args) == 1:
        return UNARY[prim](*args)
    if prim in BINARY and len(args) == 2:
        return BINARY[prim](*args)
    if prim in NARY:
        return NARY[prim](*args)
    if prim in WITH_PARAMS:
        return WITH_PARAMS[prim](prim, params, *args)
    raise UnsupportedPrimitive(prim, "SymPy translation", WHERE)


def to_sympy(closed: ClosedJaxpr, *inputs) -> list:
    """The outputs of `closed` as SymPy expressions of `inputs` (one per input)."""
    jaxpr = closed.jaxpr
    env: dict[int, object] = {}
    for v, const in zip(jaxpr.constvars, closed.consts, strict=True):
        env[id(v)] = number(const)
    for v, x in zip(jaxpr.invars, inputs, strict=True):
        env[id(v)] = x

    def read(atom):
        if atom.aval.shape != () or atom.aval.dtype.kind not in "fbiu":
            raise UnsupportedPrimitive(str(atom.aval), "SymPy translation (real or boolean scalars only)", WHERE)
        return number(atom.value) if isinstance(atom, Literal) else env[id(atom)]

    for eqn in jaxpr.eqns:
        args = [read(x) for x in eqn.invars]
        if len(eqn.outvars) != 1 or eqn.outvars[0].aval.shape != () or eqn.outvars[0].aval.dtype.kind not in "fbiu":
            raise UnsupportedPrimitive(eqn.primitive, "SymPy translation (one real or boolean scalar result)", WHERE)
        env[id(eqn.outvars[0])] = apply_primitive(eqn.primitive, eqn.params, args)
    return [read(x) for x in jaxpr.outvars]
