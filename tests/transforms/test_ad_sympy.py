"""JVP rules against SymPy: for every scalar elementwise primitive with a JVP entry (whichever rule
module holds it), the one-equation program f(x[, y, z]) on float64 scalars is differentiated with
`jvp_program`, with the rules alone and with the default algebra; the tangent program translated to
SymPy must equal Σ ∂f/∂xᵢ tᵢ, by `sympy.simplify` or, where that
does not reduce the difference to 0 (piecewise forms, special functions), at random rational points
of f's domain to 30 digits (`transforms/ad/verify.py`, which `eqjax rules verify --set ad` runs). The
primitives SymPy cannot check are listed with the reason."""

from __future__ import annotations

import pytest

from ir.errors import JaxprTypeError, UnsupportedPrimitive
from rewrites.options import Options
from tests.profile import NIGHTLY
from transforms.ad.build import ELEMENTWISE
from transforms.ad.rule import JVP
from transforms.ad.rules import unary
from transforms.ad.verify import NOT_SYMPY_CHECKED, PARAMS, checked_primitives, disagreement, sympy_problem

CHECKED = checked_primitives()
CASES = [(p, i) for p in CHECKED for i in range(len(PARAMS.get(p, ({},))))]


# The rules alone in every run; after the default algebra too under `nightly` (the oracle tests run the
# default pipeline in every run).
RULE_SETS = ["none", "default"] if NIGHTLY else ["none"]


@pytest.mark.parametrize("rules", RULE_SETS)
@pytest.mark.parametrize(("prim", "variant"), CASES, ids=[f"{p}-{i}" for p, i in CASES])
def test_jvp_matches_sympy(prim, variant, rules):
    params = PARAMS.get(prim, ({},))[variant]
    tangent, expected = sympy_problem(prim, params, Options(rules=rules))
    assert disagreement(prim, tangent, expected, seed=variant) is None


def test_unchecked_list_is_current():
    """Every listed primitive that has a JVP entry indeed has no SymPy check."""
    for prim in sorted(p for p in NOT_SYMPY_CHECKED if p in JVP):
        with pytest.raises((UnsupportedPrimitive, JaxprTypeError)):
            for params in PARAMS.get(prim, ({},)):
                sympy_problem(prim, params, Options(rules="none"))


def test_which_elementwise_primitives_are_not_sympy_checked():
    """Every elementwise primitive with a JVP entry is checked above unless NOT_SYMPY_CHECKED lists it
    with a reason; of the unary family, these are the complex parts and conjugation."""
    unchecked = {p for p in JVP if p in ELEMENTWISE and p not in CHECKED}
    assert unchecked == {"real", "imag", "conj", "complex", "select_n", "rem", "igamma", "igammac"} & set(JVP)
    assert unchecked & {e.primitive for e in unary.A.entries} == {"real", "imag", "conj"}
