"""Which primitives have AD rules: a walk over the primitive registry that fails listing every primitive
lacking a JVP or VJP rule, except the listed known gaps. The lists are checked both ways: a listed gap
that has gained its rules must leave the list."""

import ir.shapes  # noqa: F401  (registers every primitive)
from ir.inline import CALLS
from ir.primitives import SHAPE_RULES
from transforms.ad.build import INLINED_REVERSE
from transforms.ad.control import JVP_RULES as CONTROL_JVP
from transforms.ad.control import VJP_RULES as CONTROL_VJP
from transforms.ad.programs import ad_rules
from transforms.ad.rule import JVP, VJP, ZERO_DERIVATIVE

# Bodies the AD builder inlines and differentiates in both modes (calls, remat, custom-JVP calls).
INLINED = CALLS | INLINED_REVERSE

# JAX has no derivative for these either (tests/oracle/README.md lists what JAX refuses).
NOT_DIFFERENTIABLE_IN_JAX = {"nextafter", "zeta", "householder_product", "schur", "hessenberg", "tridiagonal",
                             "cholesky_update", "composite", "igamma_grad_a", "random_gamma_grad",
                             "platform_index", "rng_uniform", "lu_pivots_to_permutation", "bitcast_convert_type"}

# Primitives still without AD rules, by reason.
KNOWN_GAPS = {
    "reverse mode through while (JAX has none either)": {"while"},
    "generic reduce_window (JAX has no VJP either)": {"reduce_window"},
    "custom_vjp (its bwd is a Python function, not in the jaxpr)": {"custom_vjp_call", "custom_vjp_call_jaxpr"},
    "geqrf (JAX defines no derivative: jax/_src/lax/linalg.py; slogdet's QR method differentiates by its "
    "custom rule)": {"geqrf"},
}


def _gaps() -> set[str]:
    return set().union(*KNOWN_GAPS.values())


def _lacking() -> dict[str, str]:
    ad_rules()  # imports every rule module
    out = {}
    for prim in sorted(SHAPE_RULES):
        if prim in ZERO_DERIVATIVE or prim in INLINED:
            continue
        what = [name for name, table in (("JVP", JVP | CONTROL_JVP), ("VJP", VJP | CONTROL_VJP)) if prim not in table]
        if what:
            out[prim] = " and ".join(what)
    return out


def test_every_primitive_has_jvp_and_vjp_rules_or_is_a_listed_gap():
    lacking = _lacking()
    unexpected = {p: w for p, w in lacking.items() if p not in _gaps() and p not in NOT_DIFFERENTIABLE_IN_JAX}
    assert not unexpected, "primitives without AD rules: " + ", ".join(f"{p} (no {w})" for p, w in unexpected.items())


def test_known_gap_lists_are_current():
    lacking = _lacking()
    stale = sorted(p for p in _gaps() | NOT_DIFFERENTIABLE_IN_JAX if p not in lacking)
    assert not stale, f"these have AD rules now; remove them from the gap lists: {stale}"


def test_rules_are_named_and_described():
    rules = ad_rules()
    assert len({r.name for r in rules}) == len(rules)
    assert all(r.math.strip() and r.category in ("jvp", "vjp", "zero") for r in rules)
