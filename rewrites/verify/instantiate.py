"""A PatternRule as two concrete programs over the same inputs.

    instantiate(rule, float64, n=8) -> Instance(names, in_avals, lhs, rhs)

Each pattern variable becomes one input of `dtype` and shape `(n,)` (n sample points evaluated in one
call) or `()` with `n=None` (the form the scalar interpreters and SymPy read); a variable used as
`select_n`'s predicate is a bool. A literal takes the dtype of its context: of its non-literal sibling
operands, else (an operation on literals only, a side that is a bare literal) of the rule's dtype; a
`select_n` predicate literal is a bool (an int32 for an integer value). A side whose result has a lower
rank than the left side's (a bare literal, `0.0` for `mul(x, 0.0)`) is broadcast to its shape. Params of
an application are its concrete values plus the defaults a rule-built node gets (`Primitive.default_params`).

An `extra=s` param variable (the params besides the typed ones, carried from one side to the other) takes
the defaults; a carried field without a default (concatenate's `dimension`, stack's `axis`) is the param
variable `s_<field>` (`extra_field_vars`), sampled as any other (`rewrites.verify.params`).
Not instantiable (`NotInstantiable`, the reason in words): other param variables, `engine` conditions,
unbound right-hand variables, a left side the dtype does not type-check for (the rule does not apply to
that dtype: `applicable_dtypes` skips it; so does a bare-variable right side of another shape, which
compiling adds a condition against, as long as some sampled param values give it the left side's shape:
`arrays.array_instances`), or a right side that does not type-check or has another dtype than the left
side (an ill-typed rule: reported by the verifier).

Dtypes (`candidate_dtypes`): float64 and float32 for every rule without an `integer` condition; int32,
uint32 and bool too for dtype-agnostic rules (no `float` or value condition, integral literals), so an
`exact` rule that silently needs floats is caught; with `complex_dtypes`, complex128 and complex64 for
those without a `not_complex` condition and without a literal on the left (complex literals are never
matched as literals); int32 and uint32 alone under `integer`. A left-side literal the dtype cannot hold exactly
(-1 in uint32, 0.1 in float32) makes the dtype inapplicable: the rule never matches such a program.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ir import dtypes as D
from ir.core import ClosedJaxpr, ShapedArray
from ir.errors import EqjaxError
from ir.lax import broadcast_in_dim
from ir.primitives import PRIMITIVES
from ir.tracing import Tracer, bind, literal, trace_flat
from rewrites.pattern import App, Lit, Param, PatternRule, Var, variables
from rewrites.terms import SPECS, has_default

DTYPE_PARAMS = ("new_dtype", "preferred_element_type", "dtype")
EXTRA = "extra"  # `prim[extra=s](...)` binds the params besides the typed ones (`rewrites.ruletext`)
VALUE_CONDITIONS = ("positive", "nonneg", "nonzero", "within_one", "above_minus_one", "finite")


class NotInstantiable(Exception):
    """A rule that this path cannot turn into programs; `reason` says why."""

    def __init__(self, reason: str, ill_typed: bool = False, shape_problem: bool = False,
                 param_vars: bool = False, other_shape: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.ill_typed = ill_typed  # the left side builds but the right side is wrong for it
        self.shape_problem = shape_problem  # no dtype fits at rank 0: an array shape may
        self.param_vars = param_vars  # sampled param values may (`rewrites.verify.params`)
        self.other_shape = other_shape  # a bare-variable right side of another shape: other params may fit


@dataclass(frozen=True)
class Instance:
    rule: PatternRule
    dtype: D.DType
    names: tuple[str, ...]  # one input per pattern variable, in this order
    in_avals: tuple[ShapedArray, ...]
    lhs: ClosedJaxpr
    rhs: ClosedJaxpr

    @property
    def out_aval(self) -> ShapedArray:
        return self.lhs.jaxpr.outvars[0].aval


def check_instantiable(rule: PatternRule) -> None:
    """Raise `NotInstantiable` for what no dtype can fix: params, engine conditions, unbound names."""
    engine = [c for c in rule.conditions if c.kind == "engine"]
    if engine:
        raise NotInstantiable(f"an engine condition ({engine[0].args[0] if engine[0].args else '?'}) "
                              "only the engine evaluates")
    ps = list(dict.fromkeys(_param_vars(rule.lhs) + _param_vars(rule.rhs)))
    if ps:
        raise NotInstantiable(f"param variables {', '.join(ps)}: their values are not fixed by the rule",
                              param_vars=True)
    bound = set(variables(rule.lhs))
    unbound = [v for v in variables(rule.rhs) if v not in bound]
    if rule.both_ways:
        unbound += [v for v in variables(rule.lhs) if v not in set(variables(rule.rhs))]
    if unbound:
        raise NotInstantiable(f"unbound variables {', '.join(unbound)} (a side uses a variable the side it "
                              "is rewritten from does not bind)")
    for c in rule.conditions:
        missing = [a for a in c.args if a not in bound]
        if missing:
            raise NotInstantiable(f"condition {c.kind}({', '.join(c.args)}) names unbound variables")


def _param_vars(p) -> list[str]:
    """Param variables other than `extra` ones (the remaining params, carried over: the defaults are one
    instance of them), and the fields an `extra` one carries that have no default."""
    if not isinstance(p, App):
        return []
    own = [v.name for k, v in p.params if isinstance(v, Param) and k != EXTRA]
    return own + list(extra_field_vars(p)) + [n for a in p.args for n in _param_vars(a)]


def extra_field_vars(app: App) -> dict[str, str]:
    """`{s_<field>: field}` for the keyword fields without a default that `app`'s `extra=s` carries (and that no
    sampled value fills yet): no default stands for them, so they are param variables of their own (named as
    `rewrites.rulecompile` names them)."""
    extra = dict(app.params).get(EXTRA)
    if not isinstance(extra, Param):
        return {}
    spec, given = SPECS[app.prim], dict(app.params)
    return {f"{extra.name}_{field}": field for field, _ in spec.keyword_fields
            if not has_default(spec, field) and field not in given}


def rule_variables(rule: PatternRule) -> list[str]:
    names = variables(rule.lhs)
    return names + [v for v in variables(rule.rhs) if v not in names]


def _literals(p) -> list:
    if isinstance(p, Lit):
        return [p.value]
    if isinstance(p, App):
        return [v for a in p.args for v in _literals(a)]
    return []


def candidate_dtypes(rule: PatternRule, complex_dtypes: bool = False) -> list[D.DType]:
    kinds = {c.kind for c in rule.conditions}
    if "integer" in kinds:
        return [D.int32, D.uint32]
    floats = [D.float64, D.float32]
    lits = _literals(rule.lhs) + _literals(rule.rhs)
    integral = all(float(v).is_integer() for v in lits if not isinstance(v, bool))
    if "float" in kinds or kinds & set(VALUE_CONDITIONS) or not integral:
        return floats
    # a complex literal is never a `scalar` term, so rules matching a literal never fire on complex values
    no_complex = not complex_dtypes or "not_complex" in kinds or _literals(rule.lhs)
    complex_ = [] if no_complex else [D.complex128, D.complex64]
    return floats + [D.int32, D.uint32, D.bool_] + complex_


def _predicate_vars(p, out: set[str]) -> set[str]:
    if isinstance(p, App):
        predicate = p.args[0] if p.prim == "select_n" and p.args else None
        while isinstance(predicate, App) and predicate.prim == "not" and predicate.args:
            predicate = predicate.args[0]  # a predicate's negation is a bool too
        if isinstance(predicate, Var):
            out.add(predicate.name)
        for a in p.args:
            _predicate_vars(a, out)
    return out


def _param_value(name: str, value):
    if name in DTYPE_PARAMS and isinstance(value, str):
        return D.from_name(value)
    return value


def _lit_dtype(app: App, index: int, lit: Lit, siblings: list, dtype: D.DType) -> D.DType:
    if app.prim == "select_n" and index == 0:
        return D.bool_ if isinstance(lit.value, bool) else D.int32
    start = 1 if app.prim == "select_n" else 0
    typed = [s for i, s in enumerate(siblings) if i >= start and s is not None]
    return typed[0].dtype if typed else dtype


def _literal(value, dtype: D.DType, matched: bool):
    """A literal of `value` in `dtype`; on a left side (`matched`), only one holding `value` exactly: a rule
    matches a literal by its value, so `div(x, -1.0)` never matches an unsigned program and `mul(x, 0.1)`
    no float32 one."""
    lit = literal(value, dtype)
    if matched:
        if dtype.kind == "c":
            raise NotInstantiable("a complex literal is never matched as a literal")
        held = float(np.asarray(lit.value, dtype=np.float64)) if dtype.kind != "b" else float(bool(lit.value))
        if not (held == float(value) or (math.isnan(held) and math.isnan(float(value)))):
            raise NotInstantiable(f"the literal {value!r} has no exact {dtype.name} value")
    return lit


def _build(p, env: dict, dtype: D.DType, matched: bool):
    if isinstance(p, Var):
        return env[p.name]
    if isinstance(p, Lit):
        return _literal(p.value, dtype, matched)
    if not isinstance(p, App):
        raise NotInstantiable(f"not a pattern: {p!r}")
    built = [None if isinstance(a, Lit) else _build(a, env, dtype, matched) for a in p.args]
    args = [_literal(a.value, _lit_dtype(p, i, a, built, dtype), matched) if isinstance(a, Lit) else built[i]
            for i, a in enumerate(p.args)]
    given = {k: _param_value(k, v) for k, v in p.params if k != EXTRA}
    if any(isinstance(v, Param) for v in given.values()):
        raise NotInstantiable(f"{p.prim} has a param variable")
    avals = [a.aval for a in args]
    defaults = PRIMITIVES[p.prim].default_params(avals)
    return bind(p.prim, *args, **dict(sorted({**defaults, **given}.items())))


def _side(pattern, names: list[str], in_avals: list[ShapedArray], dtype: D.DType,
          shape_of: Callable[[], ShapedArray | None], matched: bool) -> ClosedJaxpr:
    def fun(*tracers):
        out = _build(pattern, dict(zip(names, tracers, strict=True)), dtype, matched)
        target = shape_of()
        if target is not None:
            if not isinstance(out, Tracer):
                out = literal(out.value, target.dtype)
            if out.aval.shape != target.shape and out.aval.shape == ():
                out = broadcast_in_dim(out, target.shape, ())
        return out

    closed, _ = trace_flat(fun, in_avals)
    return closed


def instantiate(rule: PatternRule, dtype: D.DType = D.float64, n: int | None = None,
                shape: tuple[int, ...] | None = None) -> Instance:
    """Both sides of `rule` as programs of its variables, each of `dtype` and of shape (n,) (n points of an
    elementwise rule), () (n=None), or `shape` (one sample of an array rule)."""
    check_instantiable(rule)
    names = rule_variables(rule)
    preds = _predicate_vars(rule.lhs, _predicate_vars(rule.rhs, set()))
    elementwise = shape is None
    shape = shape if shape is not None else () if n is None else (n,)
    in_avals = [ShapedArray(shape, D.bool_ if v in preds else dtype) for v in names]
    try:
        lhs = _side(rule.lhs, names, in_avals, dtype, lambda: None, True)
    except NotInstantiable:
        raise
    except (EqjaxError, TypeError, ValueError, KeyError) as err:
        raise NotInstantiable(f"the left side is not defined for {dtype.name}{list(shape)}: {err}") from None
    out = lhs.jaxpr.outvars[0].aval
    if elementwise and out.shape not in ((), shape):
        raise NotInstantiable(f"not elementwise: the left side maps {dtype.name}{list(shape)} to {out}")
    if isinstance(rule.lhs, Lit) or (elementwise and out.shape != shape):
        lhs = _side(rule.lhs, names, in_avals, dtype, lambda: ShapedArray(shape, out.dtype), True)
        out = lhs.jaxpr.outvars[0].aval
    try:
        rhs = _side(rule.rhs, names, in_avals, dtype, lambda: out, rule.both_ways)
    except NotInstantiable:
        raise
    except (EqjaxError, TypeError, ValueError, KeyError) as err:
        raise NotInstantiable(f"the right side is ill-typed for {dtype.name}{list(shape)}: {err}",
                              ill_typed=True) from None
    got = rhs.jaxpr.outvars[0].aval
    if (got.shape, got.dtype) != (out.shape, out.dtype):
        if isinstance(rule.rhs, Var) and not rule.both_ways and got.dtype == out.dtype:
            # a compiled bare-variable right side comes with the condition that it has the left side's shape
            # (`rewrites.rulecompile`): the rule does not apply here (another dtype is an ill-typed rule)
            raise NotInstantiable(f"the right side gives {got} where the left side gives {out} (a bare variable "
                                  f"{rule.rhs.name}: the rule applies where the shapes agree)", other_shape=True)
        raise NotInstantiable(f"the right side gives {got} where the left side gives {out}", ill_typed=True)
    return Instance(rule, dtype, tuple(names), tuple(in_avals), lhs, rhs)


def applicable_instances(rule: PatternRule, shape: tuple[int, ...] | None = None, complex_dtypes: bool = False
                         ) -> tuple[list[Instance], list[str]]:
    """The rule instantiated for each candidate dtype its left side is defined for (elementwise: rank 0
    and n points both; else at the array `shape`), and the reasons the others were skipped. Raises
    `NotInstantiable` when no dtype can be instantiated and for right sides ill-typed where the left
    side is not."""
    check_instantiable(rule)
    out, skipped, other_shape = [], [], False
    for dtype in candidate_dtypes(rule, complex_dtypes):
        try:
            if shape is None:
                instantiate(rule, dtype, 2)
                out.append(instantiate(rule, dtype))
            else:
                out.append(instantiate(rule, dtype, shape=shape))
        except NotInstantiable as err:
            if err.ill_typed:
                raise
            skipped.append(err.reason)
            other_shape = other_shape or err.other_shape  # some dtype builds both sides, of two shapes
    if not out:
        reasons = list(dict.fromkeys(skipped))
        raise NotInstantiable("; ".join(reasons[:2]) + (f" (and {len(reasons) - 2} more)" if len(reasons) > 2 else "")
                              if reasons else "no dtype to check", shape_problem=True,
                              other_shape=other_shape)
    return out, skipped
