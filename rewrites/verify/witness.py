"""Rules whose conditions only the engine evaluates, checked on what the engine does with them.

    witness_groups(pattern, rule) -> [(binding, [Instance, ...]), ...]

A rule like `convert_element_type(x) => x if dtype(x) == new_dtype`, or constant folding over a literal
`a`, cannot be instantiated from its pattern alone: the verifier cannot evaluate the condition, or build
the literal the engine computes. Its left side can still be instantiated (with the engine conditions
dropped, and each variable the engine requires to be a literal replaced by a literal value), and the
compiled egglog rule run alone on it: where it fires, every other program in the output's e-class is a
right side the engine built for that instance. The pair is an ordinary `Instance`, judged by the array
checks. Where the rule fires on no instance the verdict stays `unknown` ("never fired").

Shapes, dtypes and literal values are tried in order; each dtype keeps the first instance the rule fires
on. Param variables are sampled as for other array rules (`rewrites.verify.params`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re

from ir import dtypes as D
from ir.core import ClosedJaxpr
from rewrites.costs import get_cost_model
from rewrites.decode import args_classes, class_avals, decode
from rewrites.encode import encode
from rewrites.engine import Limits, Report, fresh_egraph, node_costs, saturate
from rewrites.extract import UnextractableError, extract
from rewrites.pattern import App, Lit, PatternRule, Var
from rewrites.rule import Rule
from rewrites.serialize import ROOT_LET, view_of
from rewrites.terms import args_list
from rewrites.verify import params as P
from rewrites.verify.instantiate import Instance, NotInstantiable, candidate_dtypes, instantiate

SHAPES = ((), (3,), (3, 3), (3, 1), (2, 3, 4), (1, 1))  # (1, 1): rules on size-1 axes of two operands
LITERALS = (2.0, 0.5, -1.0, 3.0, 1.0, 0.0)
MAX_ATTEMPTS = 3  # literal values tried per dtype and shape before giving up on them
WITNESS_SKIPS = (D.uint32, D.bool_)  # int32 stands for the integers: each dtype tried costs egglog runs
LIMITS = Limits(iterations=2, seconds=5.0)
_LITERAL_CONDITION = re.compile(r"^(\w+) is a literal")


def literal_variables(rule: PatternRule) -> list[str]:
    return [m.group(1) for c in rule.conditions if c.kind == "engine" and c.args
            for m in [_LITERAL_CONDITION.match(c.args[0])] if m]


def _substitute(p, values: dict):
    if isinstance(p, Var) and p.name in values:
        return Lit(values[p.name])
    if isinstance(p, App):
        return dataclasses.replace(p, args=tuple(_substitute(a, values) for a in p.args))
    return p


def _left_side(rule: PatternRule, values: dict, dtype: D.DType, shape) -> Instance:
    """The left side alone (as both sides) with the literal variables set and engine conditions dropped."""
    lhs = _substitute(rule.lhs, values)
    kept = tuple(c for c in rule.conditions if c.kind != "engine" and not set(c.args) & set(values))
    return instantiate(dataclasses.replace(rule, lhs=lhs, rhs=lhs, conditions=kept, both_ways=False), dtype,
                       shape=shape)


def rewritten(closed: ClosedJaxpr, rule: Rule) -> list[ClosedJaxpr]:
    """The programs other than `closed` in its output's e-class after `rule` (and the analyses) ran."""
    with fresh_egraph([rule]) as prep:
        enc = encode(closed, prep.egraph)
        prep.egraph.let(ROOT_LET.lstrip("$"), args_list(enc.outputs))
        original = str(_only_program(view_of(prep.egraph), enc))  # as the e-graph gives it back
        saturate(prep, enc.n_eqns, LIMITS, Report([rule.name]))
        view = view_of(prep.egraph)
    avals = class_avals(view, enc)
    costs = node_costs(view, avals, enc, get_cost_model("flops"))
    [out] = args_classes(view, view.roots[0])
    members = view.classes[out]
    programs: dict[str, ClosedJaxpr] = {}
    for chosen in members:
        forced = [math.inf if i in members and i != chosen else c for i, c in enumerate(costs)]
        try:
            program = decode(view, extract(view, forced).choice, enc, avals)
        except UnextractableError:
            continue
        programs.setdefault(str(program), program)
    return [p for text, p in programs.items() if text != original]


def _only_program(view, enc) -> ClosedJaxpr:
    """The program of an e-graph with one node per class (before any rule ran)."""
    return decode(view, {cls: members[0] for cls, members in view.classes.items()}, enc)


def witness_groups(rule: PatternRule, compiled: Rule, max_groups: int = P.MAX_BINDINGS
                   ) -> list[tuple[tuple, list[Instance]]]:
    """(binding, instances) with a right side the engine built, per sampled param binding (up to
    `max_groups` at the first shape any fires on); raises NotInstantiable when the rule fires on none."""
    literals = literal_variables(rule)
    sampled = bool(P.param_uses(rule.rhs, P.param_uses(rule.lhs)))
    groups, reasons = [], []
    for shape in SHAPES:
        for binding in (P.bindings(rule, shape) if sampled else [{}]):
            instances = _witnessed(P.bind(rule, binding), compiled, literals, shape, reasons)
            if instances:
                groups.append((P.show(binding) + _shape_label(shape), instances))
            if len(groups) == max_groups:
                break
        if groups:
            return groups
    raise NotInstantiable("the engine never fired the rule on an instance of its left side"
                          + (f" ({reasons[0]})" if reasons else ""))


def _shape_label(shape) -> tuple:
    return (("shape", "x".join(map(str, shape)) or "scalar"),)


def _witnessed(rule: PatternRule, compiled: Rule, literals: list[str], shape, reasons: list) -> list[Instance]:
    """An instance per dtype the rule fires on; complex dtypes only where no other one fires (conj, real)."""
    dtypes = [d for d in candidate_dtypes(rule) if d not in WITNESS_SKIPS]
    out = _witnessed_at(rule, compiled, literals, shape, reasons, dtypes)
    complex_ = [D.complex128, D.complex64]
    return out or _witnessed_at(rule, compiled, literals, shape, reasons, complex_)


def _witnessed_at(rule: PatternRule, compiled: Rule, literals: list[str], shape, reasons: list, dtypes
                  ) -> list[Instance]:
    out = []
    for dtype in dtypes:
        combos = itertools.product(LITERALS, repeat=len(literals))
        for values in itertools.islice(combos, MAX_ATTEMPTS):
            try:
                left = _left_side(rule, dict(zip(literals, values, strict=True)), dtype, shape)
            except NotInstantiable as err:
                reasons.append(err.reason)
                continue
            rights = rewritten(left.lhs, compiled)
            if rights:
                out += [dataclasses.replace(left, rhs=r) for r in rights[:2]]
                break
    return out
