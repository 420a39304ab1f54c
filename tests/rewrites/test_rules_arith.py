"""Arithmetic identities, egg-style: one line per equation that must (or must not) be proved.

Each PROVES row names the rule it is about; `check_rule` proves the equation with the row's rule set,
asserts that the rule fired, compares both programs on random inputs, and checks the rule's class on
special inputs (±0, ±1, ±inf, nan, extremes): an `exact` rule's programs agree bit for bit, a `real` or
`guarded` one's give the same kind of result (nan, +inf, -inf or a number). The helpers here are used by
the other rule test modules of this family (fold, strength, inverse, explog).
"""

import itertools

import ml_dtypes
import numpy as np
import pytest

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir import lax
from ir.core import ShapedArray
from ir.dtypes import bool_, int32
from ir.tracing import make_jaxpr
from rewrites.prove import prove_jaxprs_equal
from rewrites.rule import EXACT, GUARDED, REAL
from rewrites.rulesets import all_rules
from tests.rewrites.helpers import F32, F64, assert_not_proves, sample

I32 = ShapedArray((3,), int32)
B = ShapedArray((3,), bool_)
F2 = (F64, F64)
F3 = (F64, F64, F64)
I2 = (I32, I32)
TWO = np.int32(2)

_SPECIAL_FLOATS = [-np.inf, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, np.inf, np.nan]
_RTOL = {"float64": 1e-9, "complex128": 1e-9, "float32": 1e-5, "complex64": 1e-5}


def rule_named(name: str):
    return next(r for r in all_rules() if r.name == name)


def special_values(dtype, extremes: bool) -> list | None:
    """Special inputs of a dtype: ±0, ±1, ±2, ±inf, nan (with `extremes`: the largest, the smallest
    subnormal, 3), integer extremes; None for dtypes without a list (complex)."""
    if dtype.is_float:
        info = ml_dtypes.finfo(dtype.numpy)
        more = [float(info.max), -float(info.max), float(info.smallest_subnormal), 3.0] if extremes else []
        return _SPECIAL_FLOATS + more
    if dtype.is_integer:
        info = np.iinfo(dtype.numpy)
        return sorted({int(info.min), int(info.max), 0, 1, 2, 3} | ({-1, -2, -3} if info.min < 0 else set()))
    if dtype.is_bool:
        return [False, True]
    return None


def special_args(avals, extremes: bool) -> list[np.ndarray] | None:
    """Every combination of the operands' special values, one vector per operand."""
    lists = [special_values(a.dtype, extremes) for a in avals]
    if any(v is None for v in lists):
        return None
    combos = list(itertools.product(*lists))
    return [np.array([c[i] for c in combos], dtype=object).astype(a.dtype.numpy) for i, a in enumerate(avals)]


def _outputs(f, args):
    avals = [ShapedArray(a.shape, _dtype(a)) for a in args]
    return [np.asarray(o) for o in eval_jaxpr(make_jaxpr(f)(*avals), *args)]


def _dtype(a: np.ndarray):
    from ir.dtypes import from_numpy

    return from_numpy(a.dtype)


def _kind(v: np.ndarray) -> np.ndarray:
    """0 nan, 1 +inf, 2 -inf, 3 a number."""
    w = v.astype(np.float64)
    return np.where(np.isnan(w), 0, np.where(w == np.inf, 1, np.where(w == -np.inf, 2, 3)))


def _bytes(v: np.ndarray) -> np.ndarray:
    return v.view(np.uint8).reshape(v.size, -1)


def _as_float(v) -> np.ndarray:
    v = np.asarray(v)
    return v if v.dtype.kind == "c" else v.astype(np.float64)


def assert_agree_on_specials(f, g, avals, soundness: str) -> None:
    """exact: identical bits (any nan equals any nan); real/guarded: the same kind of float result."""
    args = special_args(avals, extremes=soundness == EXACT)
    if args is None:
        return
    with np.errstate(all="ignore"):
        lhs_outs, rhs_outs = _outputs(f, args), _outputs(g, args)
    for lhs, rhs in zip(lhs_outs, rhs_outs, strict=True):
        assert lhs.dtype == rhs.dtype and lhs.shape == rhs.shape
        floating = lhs.dtype.kind in "fc" or lhs.dtype == ml_dtypes.bfloat16
        if soundness == EXACT:
            same = (_bytes(lhs) == _bytes(rhs)).all(1)
            if floating:
                same |= np.isnan(lhs.astype(np.float64)) & np.isnan(rhs.astype(np.float64))
        elif floating:
            same = _kind(lhs) == _kind(rhs)
        else:
            same = lhs == rhs
        bad = ~same.reshape(-1)
        assert not bad.any(), (f"differ at inputs {[a[bad][:4] for a in args]}: "
                               f"{lhs.reshape(-1)[bad][:4]} vs {rhs.reshape(-1)[bad][:4]}")


def check_rule(name: str, f, g, avals, rules: str = "default", positive: bool = True,
               specials: bool = True) -> None:
    """The rule set proves f = g with `name` firing; both agree on random inputs and, by the rule's
    class, on special inputs."""
    rule = rule_named(name)
    left, right = make_jaxpr(f)(*avals), make_jaxpr(g)(*avals)
    proof = prove_jaxprs_equal(left, right, rules=rules)
    assert proof.equal, f"not proved under {rules!r}:\n{left}\n  vs\n{right}\n{proof.report.summary()}"
    assert proof.report.rule_matches.get(name, 0) > 0, f"proved, but {name} did not fire"
    rng = np.random.default_rng(0)
    for _ in range(3):
        args = [sample(a, rng) if positive else sample(a, rng, -2.0, 2.0) for a in avals]
        for lhs, rhs in zip(eval_jaxpr(left, *args), eval_jaxpr(right, *args), strict=True):
            rtol = _RTOL.get(np.asarray(lhs).dtype.name, 1e-2)
            np.testing.assert_allclose(_as_float(lhs), _as_float(rhs), rtol=rtol, atol=rtol)
    if specials and rule.soundness in (EXACT, REAL, GUARDED):
        assert_agree_on_specials(f, g, avals, rule.soundness)


def rows_cover(module, rows) -> set[str]:
    """The names of `module`'s rules that no row is about."""
    return {r.name for r in module.R.rules} - {row[0] for row in rows}


def fin(x):
    """x where it is finite, else 1: a value the analysis knows is finite."""
    return jnp.where(jnp.isfinite(x), x, 1.0)


def pos(x):
    """fin(x)^2 + 1: known positive and finite."""
    return fin(x) * fin(x) + 1.0


# (rule, f, g, avals, rule set)
PROVES = [
    ("neg-neg", lambda x: lax.neg(lax.neg(x)), lambda x: x, (F64,), "default"),
    ("mul-one", lambda x: x * 1.0, lambda x: x, (F64,), "default"),
    ("mul-one", lambda x: x * np.int32(1), lambda x: x, (I32,), "default"),
    ("mul-one-left", lambda x: 1.0 * x, lambda x: x, (F64,), "default"),
    ("div-one", lambda x: x / 1.0, lambda x: x, (F64,), "default"),
    ("add-zero", lambda x: x + 0.0, lambda x: x, (F64,), "default"),
    ("zero-add", lambda x: 0.0 + x, lambda x: x, (F64,), "default"),
    ("sub-zero", lambda x: x - 0.0, lambda x: x, (F64,), "default"),
    ("zero-sub", lambda x: 0.0 - x, lambda x: -x, (F64,), "default"),
    ("mul-ones", lambda x: x * jnp.ones_like(x), lambda x: x, (F64,), "default"),
    ("add-zeros", lambda x: x + jnp.zeros_like(x), lambda x: x, (F64,), "default"),
    ("mul-zero", lambda x: x * 0.0, jnp.zeros_like, (F64,), "fast"),
    ("sub-self", lambda x: x - x, jnp.zeros_like, (F64,), "fast"),
    ("mul-neg-one", lambda x: x * -1.0, lambda x: -x, (F64,), "default"),
    ("mul-neg-one", lambda x: x * np.int32(-1), lambda x: -x, (I32,), "default"),
    ("neg-one-mul", lambda x: -1.0 * x, lambda x: -x, (F64,), "default"),
    ("div-neg-one", lambda x: x / -1.0, lambda x: -x, (F64,), "default"),
    ("div-neg-one", lambda x: lax.div(x, np.int32(-1)), lambda x: -x, (I32,), "default"),
    ("neg-mul-neg", lambda x, y: (-x) * (-y), lambda x, y: x * y, F2, "default"),
    ("neg-mul", lambda x, y: (-x) * y, lambda x, y: -(x * y), F2, "default"),
    ("neg-mul", lambda x, y: (-x) * y, lambda x, y: -(x * y), I2, "default"),
    ("neg-div-neg", lambda x, y: (-x) / (-y), lambda x, y: x / y, F2, "strict"),
    ("neg-div", lambda x, y: (-x) / y, lambda x, y: -(x / y), F2, "default"),
    ("div-neg", lambda x, y: x / (-y), lambda x, y: -(x / y), F2, "default"),
    ("sub-neg", lambda x, y: x - (-y), lambda x, y: x + y, F2, "default"),
    ("add-neg", lambda x, y: x + (-y), lambda x, y: x - y, F2, "default"),
    ("neg-add", lambda x, y: (-x) + y, lambda x, y: y - x, F2, "default"),
    ("neg-sub", lambda x, y: -(x - y), lambda x, y: y - x, F2, "default"),
    ("abs-abs", lambda x: jnp.abs(jnp.abs(x)), jnp.abs, (F64,), "default"),
    ("abs-neg", lambda x: jnp.abs(-x), jnp.abs, (F64,), "default"),
    ("abs-neg", lambda x: jnp.abs(-x), jnp.abs, (I32,), "default"),
    ("abs-mul", lambda x, y: jnp.abs(x * y), lambda x, y: jnp.abs(x) * jnp.abs(y), F2, "default"),
    ("abs-div", lambda x, y: jnp.abs(x / y), lambda x, y: jnp.abs(x) / jnp.abs(y), F2, "default"),
    ("abs-mul-self", lambda x: jnp.abs(x) * jnp.abs(x), lambda x: x * x, (F64,), "strict"),
    ("abs-square", lambda x: jnp.abs(x * x), lambda x: x * x, (F64,), "strict"),
    ("abs-of-nonneg", lambda x: jnp.abs(jnp.exp(x)), jnp.exp, (F64,), "default"),
    ("sign-sign", lambda x: jnp.sign(jnp.sign(x)), jnp.sign, (F64,), "default"),
    ("sign-sign", lambda x: jnp.sign(jnp.sign(x)), jnp.sign, (I32,), "default"),
    ("sign-neg", lambda x: jnp.sign(-x), lambda x: -jnp.sign(x), (F64,), "default"),
    ("abs-times-sign", lambda x: jnp.abs(x) * jnp.sign(x), lambda x: x, (F64,), "default"),
    ("div-self", lambda x: pos(x) / pos(x), jnp.ones_like, (F64,), "default"),
    ("zero-div", lambda x: 0.0 / pos(x), jnp.zeros_like, (F64,), "default"),
    ("mul-div-cancel", lambda x, y: (x * pos(y)) / pos(y), lambda x, y: x, F2, "default"),
    ("div-mul-cancel", lambda x, y: (x / pos(y)) * pos(y), lambda x, y: x, F2, "default"),
    ("add-sub-cancel", lambda x, y: (x + fin(y)) - fin(y), lambda x, y: x, F2, "default"),
    ("sub-add-cancel", lambda x, y: (x - fin(y)) + fin(y), lambda x, y: x, F2, "default"),
    ("mul-recip", lambda x, y: x * (1.0 / y), lambda x, y: x / y, F2, "default"),
    ("div-div", lambda x, y, z: (x / y) / z, lambda x, y, z: x / (y * z), F3, "default"),
]

# (what must not be proved, f, g, avals, rule set)
NOT_PROVES = [
    ("mul-zero is unsafe", lambda x: x * 0.0, jnp.zeros_like, (F64,), "default"),
    ("sub-self is unsafe", lambda x: x - x, jnp.zeros_like, (F64,), "default"),
    ("add-zero is not exact", lambda x: x + 0.0, lambda x: x, (F64,), "strict"),
    ("x/x needs x finite and nonzero", lambda x: x / x, jnp.ones_like, (F64,), "fast"),
    ("x/x needs x finite", lambda x: (x * x + 1.0) / (x * x + 1.0), jnp.ones_like, (F64,), "fast"),
    ("0/x needs x nonzero", lambda x: 0.0 / fin(x), jnp.zeros_like, (F64,), "fast"),
    ("(x*y)/y needs y finite", lambda x, y: (x * y) / y, lambda x, y: x, F2, "fast"),
    ("(x+y)-y needs y finite", lambda x, y: (x + y) - y, lambda x, y: x, F2, "fast"),
    ("|x| -> x needs x >= 0", jnp.abs, lambda x: x, (F64,), "fast"),
    ("integer division by -y wraps", lambda x, y: lax.div(x, -y), lambda x, y: -lax.div(x, y), I2, "fast"),
    ("integer |x*y| wraps", lambda x, y: jnp.abs(x * y), lambda x, y: jnp.abs(x) * jnp.abs(y), I2, "fast"),
    ("-(x-y) is not exact", lambda x, y: -(x - y), lambda x, y: y - x, F2, "strict"),
    ("integer (x/2)*2 truncates", lambda x: lax.div(x, TWO) * TWO, lambda x: x, (I32,), "fast"),
    ("integer (x*2)/2 wraps", lambda x: lax.div(x * TWO, TWO), lambda x: x, (I32,), "fast"),
]


@pytest.mark.parametrize("name,f,g,avals,rules", PROVES, ids=[p[0] for p in PROVES])
def test_proves(name, f, g, avals, rules):
    check_rule(name, f, g, avals, rules)


@pytest.mark.parametrize("why,f,g,avals,rules", NOT_PROVES, ids=[p[0] for p in NOT_PROVES])
def test_not_proves(why, f, g, avals, rules):
    assert_not_proves(f, g, *avals, rules=rules)


def test_mul_zero_only_in_fast():
    check_rule("mul-zero", lambda x: x * 0.0, jnp.zeros_like, (F32,), "fast")


def test_add_is_not_div():
    assert_not_proves(lambda x, y: x + y, lambda x, y: x / y, F64, F64)


def test_every_rule_has_a_row():
    from rewrites.rules import arith

    assert not rows_cover(arith, PROVES)
