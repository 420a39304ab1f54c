"""Checks shared by the rule test modules (one line per equation that must, or must not, be proved).

`check_rule` proves an equation with a row's rule set, asserts that the row's rule fired, compares both
programs on random inputs, and checks the rule's class on special inputs (±0, ±1, ±inf, nan, extremes):
an `exact` rule's programs agree bit for bit, a `real` or `guarded` one's give the same kind of result
(nan, +inf, -inf or a number). `assert_bitwise_equal` compares two programs bit for bit on every
combination of special inputs. `table_tests(PROVES, NOT_PROVES)` makes a module's two table tests.
"""

import itertools

import ml_dtypes
import numpy as np
import pytest

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir.core import ShapedArray
from ir.dtypes import bool_, int32
from ir.dtypes import from_numpy as dtype_of_numpy
from ir.tracing import make_jaxpr
from rewrites.prove import prove_equal, prove_jaxprs_equal
from rewrites.rule import EXACT, GUARDED, REAL
from rewrites.rulesets import all_rules
from rewrites.verify.numeric import float_kind  # noqa: F401  (nan / inf / -inf / num; re-exported)
from tests.rewrites.helpers import F64, assert_derivation_checks, assert_not_proves, sample

I32 = ShapedArray((3,), int32)
B = ShapedArray((3,), bool_)
F2 = (F64, F64)
F3 = (F64, F64, F64)

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
            same = float_kind(lhs) == float_kind(rhs)
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
    assert_derivation_checks(proof)
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


FLOAT_SPECIALS = [-np.inf, -2.0, -1.0, -0.5, -0.0, 0.0, 1e-310, 0.5, 1.0, 2.0, 1e308, np.inf, np.nan]
INT_SPECIALS = [np.iinfo(np.int32).min, -2, -1, 0, 1, 2, np.iinfo(np.int32).max]


def special_vectors(dtype, n: int) -> list[np.ndarray]:
    """Every combination of `n` special values of `dtype` (±0, ±inf, nan, extremes), as `n` vectors."""
    values = FLOAT_SPECIALS if dtype.is_float else INT_SPECIALS if dtype.kind == "i" else [False, True]
    combos = np.array(list(itertools.product(values, repeat=n)), dtype=np.float64).T
    with np.errstate(invalid="ignore", over="ignore"):
        return [c.astype(dtype.numpy) for c in combos]


def assert_bitwise_equal(f, g, *dtypes) -> None:
    """f and g give identical bits on every combination of special inputs (any nan equals any nan).
    Bool operands next to another dtype get its specials' truth values."""
    main = next((t for t in dtypes if t != bool_), bool_)
    specials = special_vectors(main, len(dtypes))
    args = [a if t == main else a.astype(bool) for a, t in zip(specials, dtypes, strict=True)]
    avals = [ShapedArray(a.shape, t) for a, t in zip(args, dtypes, strict=True)]
    lhs_outs, rhs_outs = (eval_jaxpr(make_jaxpr(h)(*avals), *args) for h in (f, g))
    for lhs, rhs in zip(map(np.asarray, lhs_outs), map(np.asarray, rhs_outs), strict=True):
        assert lhs.dtype == rhs.dtype and lhs.shape == rhs.shape
        bits = lhs.view(np.uint8).reshape(lhs.size, -1) == rhs.view(np.uint8).reshape(rhs.size, -1)
        same = bits.all(1)
        if dtype_of_numpy(lhs.dtype).is_float:
            same |= np.isnan(lhs) & np.isnan(rhs)
        assert same.all(), f"differ at {[a[~same][:4] for a in args]}: {lhs[~same][:4]} vs {rhs[~same][:4]}"


def matches(rule: str, f, *avals) -> int:
    """How often `rule` matched while saturating `f` alone under the fast set."""
    return prove_equal(f, f, *avals, rules="fast").report.rule_matches[rule]


def table_tests(proves: list, not_proves: list):
    """A module's table tests: every PROVES row by `check_rule`, no NOT_PROVES row proved."""

    @pytest.mark.parametrize("name,f,g,avals,rules", proves, ids=[p[0] for p in proves])
    def test_proves(name, f, g, avals, rules):
        check_rule(name, f, g, avals, rules)

    @pytest.mark.parametrize("why,f,g,avals,rules", not_proves, ids=[p[0] for p in not_proves])
    def test_not_proves(why, f, g, avals, rules):
        assert_not_proves(f, g, *avals, rules=rules)

    return test_proves, test_not_proves
