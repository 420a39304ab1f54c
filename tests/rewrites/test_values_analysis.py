"""The value analysis: which facts it derives for a program's output (exactly: derived where it should
be and not elsewhere), that every derived fact holds on special and random inputs, and that each
guarded rule's sides agree wherever its guard holds (the reason the guards are what they are)."""

import functools
import itertools

import numpy as np
import pytest
from egglog import EGraph, ruleset, run

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir import lax
from ir.core import ShapedArray
from ir.dtypes import complex128, float32, int32
from ir.tracing import make_jaxpr
from rewrites.analyses import values
from rewrites.encode import encode
from rewrites.rule import GUARDED
from rewrites.rulesets import all_rules, analysis_rules
from tests.rewrites.helpers import F64
from tests.rewrites.rule_checks import fin, float_kind, pos, special_values

C128 = ShapedArray((3,), complex128)
I32 = ShapedArray((3,), int32)
FACT_NAMES = {name: getattr(values, name)
              for name in ("positive", "nonneg", "nonzero", "within_one", "above_minus_one", "finite")}

# What each fact means for one element (nan passes the sign and range facts, not `finite`).
HOLDS = {
    "positive": lambda v: (v > 0) | np.isnan(v),
    "nonneg": lambda v: (v >= 0) | np.isnan(v),
    "nonzero": lambda v: (v != 0) | np.isnan(v),
    "within_one": lambda v: (np.abs(v) <= 1) | np.isnan(v),
    "above_minus_one": lambda v: (v >= -1) | np.isnan(v),
    "finite": np.isfinite,
}

_BY_DECL = {egg.decl: r.name for r in analysis_rules() for egg in r.egg}


@functools.cache
def derive(f, *avals) -> tuple[frozenset[str], frozenset[str]]:
    """The facts derived for f's (first) output, and the names of the analysis rules that matched
    (cached: the coverage test reuses the rows' e-graphs)."""
    egraph = EGraph()
    enc = encode(make_jaxpr(f)(*avals), egraph)
    report = egraph.run(run(ruleset(*(e for r in analysis_rules() for e in r.egg))).saturate())
    fired = {_BY_DECL[decl] for decl, n in report.num_matches_per_rule.items() if n and decl in _BY_DECL}
    facts = {name for name, rel in FACT_NAMES.items() if egraph.check_bool(rel(enc.outputs[0]))}
    return frozenset(facts), frozenset(fired)


SIGNS = {"positive", "nonneg", "nonzero", "above_minus_one"}
POSITIVE_FINITE = SIGNS | {"finite"}
BOUNDED = {"within_one", "above_minus_one"}
NONNEG = {"nonneg", "above_minus_one"}

# (f, avals, the facts of f's output)
FACTS = [
    (lambda x: x, (F64,), set()),
    (lambda x: jnp.full_like(x, 2.0), (F64,), POSITIVE_FINITE),
    (lambda x: jnp.full_like(x, 0.5), (F64,), POSITIVE_FINITE | BOUNDED),
    (lambda x: jnp.full_like(x, -0.5), (F64,), {"nonzero", "finite"} | BOUNDED),
    (lambda x: jnp.full_like(x, -3.0), (F64,), {"nonzero", "finite"}),
    (lambda x: jnp.full_like(x, 0.0), (F64,), {"nonneg", "finite"} | BOUNDED),
    (lambda x: jnp.full_like(x, np.inf), (F64,), SIGNS),
    (lambda x: jnp.full_like(x, 2), (I32,), POSITIVE_FINITE),
    (lambda x: x * x, (F64,), NONNEG),
    (lambda x: x ** 2, (F64,), NONNEG),
    (lambda x: lax.square(x), (F64,), NONNEG),
    (lambda x: lax.integer_pow(x, -2), (F64,), NONNEG),
    (lambda x: lax.integer_pow(pos(x), 3), (F64,), POSITIVE_FINITE),
    (lambda x: x * x, (I32,), set()),
    (lambda x, y: x * y, (F64, F64), set()),
    (lambda x: x - x, (F64,), set()),
    (lambda x: jnp.exp(x), (F64,), NONNEG),
    (lambda x: jnp.exp(jnp.tanh(x)), (F64,), SIGNS),
    (lambda x: jnp.exp(fin(x)), (F64,), POSITIVE_FINITE),
    (lambda x: x * x + 1.0, (F64,), SIGNS),
    (lambda x: 1.0 + x * x, (F64,), SIGNS),
    (pos, (F64,), POSITIVE_FINITE),
    (lambda x: -pos(x), (F64,), {"nonzero", "finite"}),
    (lambda x: -jnp.tanh(x), (F64,), BOUNDED),
    (lambda x: jnp.sqrt(x), (F64,), NONNEG),
    (lambda x: jnp.sqrt(pos(x)), (F64,), POSITIVE_FINITE),
    (lambda x: lax.rsqrt(x * x + 1.0), (F64,), NONNEG),
    (lambda x: lax.rsqrt(pos(x)), (F64,), POSITIVE_FINITE),
    (lambda x: jnp.abs(x), (F64,), NONNEG),
    (lambda x: jnp.abs(x), (I32,), set()),
    (lambda z: jnp.abs(z), (C128,), NONNEG),
    (lambda z: jnp.exp(z), (C128,), set()),
    (lambda x: jnp.abs(fin(x)), (F64,), NONNEG | {"finite"}),
    (lambda x: jnp.abs(pos(x) - 5.0), (F64,), NONNEG | {"finite"}),
    (lambda x: jnp.abs(x * x + 1.0), (F64,), SIGNS),
    (jnp.tanh, (F64,), BOUNDED),
    (lambda x: jnp.tanh(fin(x)), (F64,), BOUNDED | {"finite"}),
    (jnp.sin, (F64,), BOUNDED),
    (lambda x: jnp.cos(fin(x)), (F64,), BOUNDED | {"finite"}),
    (lambda x: lax.erf(x), (F64,), BOUNDED),
    (lax.logistic, (F64,), BOUNDED | NONNEG),
    (lambda x: lax.logistic(fin(x)), (F64,), BOUNDED | POSITIVE_FINITE),
    (lambda x: lax.logistic(jnp.tanh(x)), (F64,), BOUNDED | SIGNS),
    (lambda x: jnp.arctan(fin(x)), (F64,), {"finite"}),
    (jnp.cosh, (F64,), SIGNS),
    (jnp.expm1, (F64,), {"above_minus_one"}),
    (lambda x: jnp.expm1(x * x), (F64,), NONNEG),
    (lambda x: jnp.log1p(pos(x)), (F64,), SIGNS),
    (lambda x: jnp.log(pos(x)), (F64,), {"finite"}),
    (lambda x: jnp.log(x * x + 1.0), (F64,), set()),
    (lambda x: 1.0 / pos(x), (F64,), POSITIVE_FINITE),
    (lambda x: 1.0 / (x * x + 1.0), (F64,), NONNEG),
    (lambda x, y: (x * x) / pos(y), (F64, F64), NONNEG),
    (lambda x, y: fin(x) / pos(y), (F64, F64), {"finite"}),
    (lambda x, y: jnp.full_like(x, 3.0) / y, (F64, F64), set()),
    (lambda x, y: jnp.full_like(x, 3.0) / fin(y), (F64, F64), {"nonzero"}),
    (lambda x, y: pos(x) * pos(y), (F64, F64), POSITIVE_FINITE),
    (lambda x, y: (x * x) * (y * y), (F64, F64), NONNEG),
    (lambda x, y: (x * x) + (y * y), (F64, F64), NONNEG),
    (lambda x, y: fin(x) - fin(y), (F64, F64), {"finite"}),
    (lambda x: jnp.maximum(x, 0.0), (F64,), NONNEG),
    (lambda x: jnp.maximum(0.5, x), (F64,), SIGNS),
    (lambda x: jnp.minimum(pos(x), 1.0), (F64,), POSITIVE_FINITE),
    (lambda x: jnp.minimum(x, 1.0), (F64,), set()),
    (lambda x: jnp.where(x > 0, 0.25, 2.0), (F64,), POSITIVE_FINITE),
    (lambda x: jnp.where(x > 0, x * x, 2.0), (F64,), NONNEG),
    (fin, (F64,), {"finite"}),
    (lambda x: pos(x).astype(float32), (F64,), SIGNS),
    (lambda x: (x * x).astype(int32), (F64,), set()),
    (lambda x: jnp.sum(x * x), (F64,), NONNEG),
    (lambda x: jnp.sum(fin(x)), (F64,), {"finite"}),
    (lambda x: jnp.transpose(jnp.reshape(x * x, (-1, 1))), (F64,), NONNEG),
    (lambda x: jnp.broadcast_to(jnp.tanh(x), (2, *x.shape)), (F64,), BOUNDED),
    (lambda x: jnp.flip(pos(x)), (F64,), POSITIVE_FINITE),
    (lambda x: jnp.sign(fin(x)), (F64,), {"finite"}),
]


def _ids(rows):
    return [f"{i}" for i in range(len(rows))]


@pytest.mark.parametrize("f,avals,expected", FACTS, ids=_ids(FACTS))
def test_derived_facts(f, avals, expected):
    facts, _ = derive(f, *avals)
    assert facts == expected, f"{make_jaxpr(f)(*avals)}\nderived {sorted(facts)}, expected {sorted(expected)}"


def _inputs(avals) -> list[np.ndarray]:
    """Special values (every combination) and random values in [-2, 2] for float operands."""
    specials = [special_values(a.dtype, extremes=False) or [0.5, -1.5] for a in avals]
    combos = list(itertools.product(*specials))
    rng = np.random.default_rng(0)
    out = []
    for i, a in enumerate(avals):
        column = np.array([c[i] for c in combos] + list(rng.uniform(-2, 2, 50)), dtype=np.float64)
        out.append((column.round() if a.dtype.kind == "i" else column).astype(a.dtype.numpy))
    return out


@pytest.mark.parametrize("f,avals,expected", FACTS, ids=_ids(FACTS))
def test_derived_facts_hold(f, avals, expected):
    args = _inputs(avals)
    vector_avals = [ShapedArray(a.shape, aval.dtype) for a, aval in zip(args, avals, strict=True)]
    with np.errstate(all="ignore"):
        out = np.asarray(eval_jaxpr(make_jaxpr(f)(*vector_avals), *args)[0])
    if out.dtype.kind == "c":
        assert not expected, "complex values have no sign facts"
        return
    out = out.astype(np.float64)
    for fact in expected:
        holds = HOLDS[fact](out)
        assert holds.all(), f"{fact} fails: {out[~holds][:4]}"


def test_every_value_rule_fires():
    fired = set().union(*(derive(f, *avals)[1] for f, avals, _ in FACTS))
    assert not {r.name for r in values.R.rules} - fired


# --- the guards: each guarded rule's sides agree (same kind of result) wherever its guard holds ---------

def _exp(x):
    return jnp.exp(x)


# (rule, f, g, number of operands, guard: which operand values satisfy the rule's conditions)
GUARDS = [
    ("abs-of-nonneg", jnp.abs, lambda x: x, 1, lambda x: HOLDS["nonneg"](x)),
    ("div-self", lambda x: x / x, jnp.ones_like, 1, lambda x: (x != 0) & np.isfinite(x)),
    ("div-abs-finite", lambda x: x / jnp.abs(x), jnp.sign, 1, lambda x: (x != 0) & np.isfinite(x)),
    ("zero-div", lambda x: 0.0 / x, jnp.zeros_like, 1, lambda x: (x != 0) & np.isfinite(x)),
    ("mul-div-cancel", lambda x, y: (x * y) / y, lambda x, y: x, 2, lambda x, y: (y != 0) & np.isfinite(y)),
    ("div-mul-cancel", lambda x, y: (x / y) * y, lambda x, y: x, 2, lambda x, y: (y != 0) & np.isfinite(y)),
    ("add-sub-cancel", lambda x, y: (x + y) - y, lambda x, y: x, 2, lambda x, y: np.isfinite(y)),
    ("sub-add-cancel", lambda x, y: (x - y) + y, lambda x, y: x, 2, lambda x, y: np.isfinite(y)),
    ("pow-half-nonneg", lambda x: lax.pow(x, 0.5), jnp.sqrt, 1, lambda x: HOLDS["nonneg"](x)),
    ("pow-neg-half", lambda x: lax.pow(x, -0.5), lax.rsqrt, 1, lambda x: HOLDS["positive"](x)),
    ("exp-log", lambda x: jnp.exp(jnp.log(x)), lambda x: x, 1, lambda x: HOLDS["nonneg"](x)),
    ("expm1-log1p", lambda x: jnp.expm1(jnp.log1p(x)), lambda x: x, 1, lambda x: HOLDS["above_minus_one"](x)),
    ("sqrt-mul-self", lambda x: jnp.sqrt(x) * jnp.sqrt(x), lambda x: x, 1, lambda x: HOLDS["nonneg"](x)),
    ("tanh-atanh", lambda x: jnp.tanh(jnp.arctanh(x)), lambda x: x, 1, lambda x: HOLDS["within_one"](x)),
    ("sin-asin", lambda x: jnp.sin(jnp.arcsin(x)), lambda x: x, 1, lambda x: HOLDS["within_one"](x)),
    ("cos-acos", lambda x: jnp.cos(jnp.arccos(x)), lambda x: x, 1, lambda x: HOLDS["within_one"](x)),
    ("log-mul", lambda x, y: jnp.log(x * y), lambda x, y: jnp.log(x) + jnp.log(y), 2,
     lambda x, y: HOLDS["positive"](x) & HOLDS["positive"](y)),
    ("log-div", lambda x, y: jnp.log(x / y), lambda x, y: jnp.log(x) - jnp.log(y), 2,
     lambda x, y: HOLDS["positive"](x) & HOLDS["positive"](y)),
    ("log-recip", lambda x: jnp.log(1.0 / x), lambda x: -jnp.log(x), 1, lambda x: HOLDS["positive"](x)),
    ("log-exp-mul", lambda x, y: jnp.log(_exp(x) * y), lambda x, y: x + jnp.log(y), 2,
     lambda x, y: HOLDS["nonneg"](y)),
    ("log-ipow", lambda x: jnp.log(lax.integer_pow(x, -3)), lambda x: -3.0 * jnp.log(x), 1,
     lambda x: HOLDS["positive"](x)),
    ("log-pow", lambda x, y: jnp.log(lax.pow(x, y)), lambda x, y: y * jnp.log(x), 2,
     lambda x, y: HOLDS["positive"](x) & np.isfinite(y) & (y != 0)),
    ("exp-log-mul", lambda x, y: jnp.exp(jnp.log(x) * y), lambda x, y: lax.pow(x, y), 2,
     lambda x, y: HOLDS["positive"](x) & np.isfinite(y) & (y != 0)),
    ("pow-mul-pow", lambda x, y, z: lax.pow(x, y) * lax.pow(x, z), lambda x, y, z: lax.pow(x, y + z), 3,
     lambda x, y, z: (x > 0) & np.isfinite(x)),
]


@pytest.mark.parametrize("name,f,g,n,guard", GUARDS, ids=[r[0] for r in GUARDS])
def test_guarded_rule_agrees_under_its_guard(name, f, g, n, guard):

    grid = list(itertools.product(special_values(F64.dtype, extremes=False) + [3.0, 0.25], repeat=n))
    columns = [np.array([c[i] for c in grid]) for i in range(n)]
    keep = guard(*columns)
    args = [c[keep] for c in columns]
    avals = [ShapedArray(a.shape, F64.dtype) for a in args]
    with np.errstate(all="ignore"):
        lhs, rhs = (np.asarray(eval_jaxpr(make_jaxpr(h)(*avals), *args)[0]) for h in (f, g))
    bad = float_kind(lhs) != float_kind(rhs)
    assert not bad.any(), f"{name}: differ at {[a[bad][:4] for a in args]}: {lhs[bad][:4]} vs {rhs[bad][:4]}"


def test_every_guarded_rule_of_this_family_has_a_guard_row():
    family = {"arith", "fold", "strength", "inverse", "explog"}
    guarded = {r.name for r in all_rules() if r.soundness == GUARDED and r.category in family}
    assert guarded == {row[0] for row in GUARDS}
