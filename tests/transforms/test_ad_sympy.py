"""JVP rules against SymPy: for every scalar elementwise primitive with a JVP entry (whichever rule
module holds it), the one-equation program f(x[, y, z]) on float64 scalars is differentiated with
`jvp_program`, with the rules alone and with the default algebra; the tangent program translated to
SymPy (tests/transforms/sympy_jaxpr.py) must equal Σ ∂f/∂xᵢ tᵢ, by `sympy.simplify` or, where that
does not reduce the difference to 0 (piecewise forms, special functions), at random rational points
of f's domain to 30 digits. The primitives SymPy cannot check are listed with the reason."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
import sympy as sp

from ir import dtypes as D
from ir import make_jaxpr
from ir.errors import JaxprTypeError, UnsupportedPrimitive
from ir.tracing import bind
from rewrites.terms import SPECS
from tests.transforms.sympy_jaxpr import to_sympy
from transforms.ad.build import ELEMENTWISE
from transforms.ad.programs import Options, ad_rules, jvp_program
from transforms.ad.rule import JVP
from transforms.ad.rules import unary

ad_rules()  # imports every rule module, filling the JVP registry

PRIMALS = sp.symbols("x0:3", positive=True)
TANGENTS = sp.symbols("t0:3", real=True)

# Params of the checked equation, one program per entry (default: none).
PARAMS = {
    "integer_pow": ({"y": 3}, {"y": -2}, {"y": 1}, {"y": 0}),
    "convert_element_type": ({"new_dtype": D.float64, "sharding": None, "weak_type": False},),
    "reduce_precision": ({"exponent_bits": 11, "mantissa_bits": 52},),
}
# Where f is real and smooth (the points are drawn there; the symbols are positive): lower, upper.
DOMAIN = {"acosh": (sp.Rational(11, 10), sp.Integer(3))}
DEFAULT_DOMAIN = (sp.Rational(1, 10), sp.Rational(9, 10))
# Points must also satisfy: clamp's bounds in order (JAX's clamp JVP assumes lo <= hi).
VALID = {"clamp": lambda lo, x, hi: lo < hi}

# Elementwise primitives whose JVP SymPy does not check here, and why. Listing one without a JVP entry
# is harmless; an entry that SymPy can check must not be listed (test_unchecked_list_is_current).
NOT_SYMPY_CHECKED = {
    "real": "takes a complex operand",
    "imag": "takes a complex operand",
    "conj": "gives a complex result",
    "complex": "gives a complex result",
    "select_n": "its predicate is a boolean or an integer, not a float",
    "rem": "SymPy leaves the derivative of Mod unevaluated",
    "igamma": "its JVP uses igamma_grad_a, which has no SymPy form",
    "igammac": "its JVP uses igamma_grad_a, which has no SymPy form",
    "random_gamma_grad": "has no SymPy form",
    "igamma_grad_a": "has no SymPy form",
    "nextafter": "has no SymPy form",
    "zeta": "has no derivative in JAX",
}


def _arity(prim: str) -> int:
    return SPECS[prim].arity if prim in SPECS else 3


def _wrt(prim: str) -> list[int]:
    """The operands that get a tangent: those with a JVP entry (all, for a whole-equation JVP)."""
    slots = JVP[prim]
    return list(range(_arity(prim))) if "out0" in slots else sorted(int(s) for s in slots)


def _program(prim: str, params: dict):
    x = np.asarray(0.5)
    return make_jaxpr(lambda *xs: bind(prim, *xs, **params))(*[x] * _arity(prim))


def _sympy_problem(prim: str, params: dict, options: Options):
    """(the JVP program's tangent, Σ ∂f/∂xᵢ tᵢ) as SymPy expressions; raises UnsupportedPrimitive
    (or the shape rule's error) where the function or its JVP program has no SymPy form."""
    closed = _program(prim, params)
    xs = PRIMALS[:_arity(prim)]
    [f] = to_sympy(closed, *xs)
    wrt = _wrt(prim)
    ts = TANGENTS[:len(wrt)]
    program, _ = jvp_program(closed, wrt, options)
    [_, tangent] = to_sympy(program, *xs, *ts)
    expected = sum(sp.diff(f, xs[i]) * t for i, t in zip(wrt, ts, strict=True))
    if expected.has(sp.Derivative):
        raise UnsupportedPrimitive(prim, "a derivative SymPy evaluates", "tests/transforms/test_ad_sympy.py")
    return tangent, expected


def _checkable(prim: str) -> bool:
    return prim in ELEMENTWISE and prim not in NOT_SYMPY_CHECKED


CHECKED = sorted(p for p in JVP if _checkable(p))
CASES = [(p, i) for p in CHECKED for i in range(len(PARAMS.get(p, ({},))))]


PIECEWISE = (sp.Piecewise, sp.Heaviside, sp.Max, sp.Min, sp.Abs, sp.sign)


def _points(prim: str, seed: int):
    """Random rational points of f's domain (primals) with random rational tangents."""
    rng = random.Random(seed)
    low, high = DOMAIN.get(prim, DEFAULT_DOMAIN)
    valid = VALID.get(prim, lambda *xs: True)
    xs = PRIMALS[:_arity(prim)]
    while True:
        point = {x: low + (high - low) * sp.Rational(rng.randint(1, 999), 1000) for x in xs}
        if valid(*point.values()):
            yield point | {t: sp.Rational(rng.randint(-999, 999), 250) for t in TANGENTS}


def assert_equal_as_functions(prim: str, got: sp.Expr, want: sp.Expr, seed: int) -> None:
    """`simplify` proves got = want, or (always, for piecewise forms, where simplify is slow and
    rarely succeeds) they agree at 5 random points to 25 digits."""
    difference = got - want
    if not difference.has(*PIECEWISE) and sp.simplify(difference) == 0:
        return
    for point, _ in zip(_points(prim, seed), range(5), strict=False):
        d, w = sp.N(difference.subs(point), 30), sp.N(want.subs(point), 30)
        assert abs(d) <= 1e-25 * max(1, abs(w)), f"at {point}: JVP program {got}, SymPy {want}"


# The rules alone in every run; after the default algebra too under `nightly` (the oracle tests run the
# default pipeline in every run).
RULE_SETS = ["none", "default"] if os.environ.get("HYPOTHESIS_PROFILE") == "nightly" else ["none"]


@pytest.mark.parametrize("rules", RULE_SETS)
@pytest.mark.parametrize(("prim", "variant"), CASES, ids=[f"{p}-{i}" for p, i in CASES])
def test_jvp_matches_sympy(prim, variant, rules):
    params = PARAMS.get(prim, ({},))[variant]
    tangent, expected = _sympy_problem(prim, params, Options(rules=rules))
    assert_equal_as_functions(prim, tangent, expected, seed=variant)


def test_unchecked_list_is_current():
    """Every listed primitive that has a JVP entry indeed has no SymPy check."""
    for prim in sorted(p for p in NOT_SYMPY_CHECKED if p in JVP):
        with pytest.raises((UnsupportedPrimitive, JaxprTypeError)):
            for params in PARAMS.get(prim, ({},)):
                _sympy_problem(prim, params, Options(rules="none"))


def test_which_elementwise_primitives_are_not_sympy_checked():
    """Every elementwise primitive with a JVP entry is checked above unless NOT_SYMPY_CHECKED lists it
    with a reason; of the unary family, these are the complex parts and conjugation."""
    unchecked = {p for p in JVP if p in ELEMENTWISE and not _checkable(p)}
    assert unchecked == {"real", "imag", "conj", "complex", "select_n", "rem", "igamma", "igammac"} & set(JVP)
    assert unchecked & {e.primitive for e in unary.A.entries} == {"real", "imag", "conj"}
