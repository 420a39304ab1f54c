"""Rules as data -> rules in the engine: `PatternRule` -> `Rule` (egglog rewrites); `rewrites.ruledump`
reads them back.

    load_rules("my.rules")                 the file's rules, compiled and checked (category "user", or the
                                           file's `@category NAME`, or the `category` argument)
    rules_from_text(text)                  the same for a rule file's text
    compile_rules(parse_rules(text))       one `Rule` per rule (consecutive lines with one name: a family)

Compiling. A variable is an `Arr` pattern variable; a literal is `Arr.scalar(v, d)` with one dtype variable
`d` shared by the rule's literals (as `rewrites.rules.common.lit`); when only the side being built holds
literals, `d` is bound to the dtype of the literal's nearest variable operand. A primitive is its typed
constructor (`rewrites.terms.CONSTRUCTORS`; a variadic primitive's operands are one `Args` list), its
positional fields given (a param that does not fit its field is refused), its keyword fields the params
given (a variable for a typed one, as concatenate's `dimension`) or else their defaults
(`rewrites.terms.default_value`), or with `extra=s` the variables `s_<field>` (the primitives given one `s`
must have the same keyword fields, so that they carry params over). A literal that is
the whole right-hand side becomes an array of the left side's shape and dtype (`rewrites.rules.common.
filled`); a variable that is the whole right-hand side must have the left side's shape and dtype (added
conditions, as `shaped_like` in `rules/arith.py`).
Conditions become the value analysis' relations, dtype tests on `dtype_of`, `shape_of` equalities; an
`integer(x)` condition gives one egglog rule per integer dtype.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from egglog import Bool, RewriteOrRule, String, Vec, birewrite, eq, f64, i64, rewrite, var

from ir import dtypes
from rewrites.analyses.shapes import float_dtype
from rewrites.analyses.values import above_minus_one, finite, nonneg, nonzero, positive, within_one
from rewrites.pattern import App, Condition, Lit, Param, Pattern, PatternRule, Var, params, variables
from rewrites.rule import Rule, RuleError, check_rules
from rewrites.ruletext import (
    EXTRA,
    RuleSyntaxError,
    app_problem,
    format_condition,
    format_pattern,
    parse_rule_file,
)
from rewrites.terms import (
    CONSTRUCTORS,
    SPECS,
    Arr,
    T,
    args_list,
    default_value,
    dtype_of,
    field_value,
    has_default,
    shape_of,
)

RELATIONS = {"positive": positive, "nonneg": nonneg, "nonzero": nonzero, "within_one": within_one,
             "above_minus_one": above_minus_one, "finite": finite}
INTEGER_DTYPES = tuple(dt.name for dt in dtypes.ALL if dt.kind in "iu")
DEFAULT_CATEGORY = "user"
_MAX_EXACT_INT = 2 ** 53


# --- loading and compiling ----------------------------------------------------------------------------


def load_rules(path: str | Path, category: str | None = None) -> list[Rule]:
    """The rules of a rule file, compiled and checked. Their category is `category` if given, else the
    file's last `@category NAME` line before them, else "user"."""
    path = Path(path)
    return rules_from_text(path.read_text(), str(path), category)


def rules_from_text(text: str, file: str = "<text>", category: str | None = None) -> list[Rule]:
    """`load_rules` of a rule file's text."""
    rules = []
    for _, lines in itertools.groupby(parse_rule_file(text, file), key=lambda parsed: parsed.rule.name):
        lines = list(lines)
        rules.append(compile_rule([p.rule for p in lines], category or lines[0].category or DEFAULT_CATEGORY))
    return check_rules(rules)


def compile_rules(patterns: Sequence[PatternRule], category: str = DEFAULT_CATEGORY) -> list[Rule]:
    """One `Rule` per rule; consecutive pattern rules with one name make one rule (a family)."""
    return check_rules(compile_rule(list(family), category)
                       for _, family in itertools.groupby(patterns, key=lambda p: p.name))


def compile_rule(family: Sequence[PatternRule], category: str = DEFAULT_CATEGORY) -> Rule:
    """The `Rule` of one or more pattern rules sharing a name and a class."""
    first = family[0]
    for p in family[1:]:
        if (p.name, p.soundness) != (first.name, first.soundness):
            raise _error(p, f"a rule's lines must share name and class ({first.name} {first.soundness})")
    eggs = [egg for p in family for egg in _Compiler(p).eggs()]
    math = next((p.math for p in family if p.math), "") or rule_text(first)
    return Rule(first.name, category, first.soundness, math, tuple(eggs))


def rule_text(r: PatternRule) -> str:
    """`lhs => rhs if conditions`: the rule without name, class and math."""
    text = f"{format_pattern(r.lhs)} {'<=>' if r.both_ways else '=>'} {format_pattern(r.rhs)}"
    if r.conditions:
        text += " if " + ", ".join(format_condition(c) for c in r.conditions)
    return text


def _error(r: PatternRule, message: str) -> Exception:
    if r.origin is not None and r.origin.line:
        return RuleSyntaxError(f"rule {r.name!r}: {message}", r.origin.file, r.origin.line, r.origin.column or 1)
    return RuleError(f"rule {r.name!r}: {message}")


class _Compiler:
    """The egglog rewrites of one pattern rule (several for `integer` conditions)."""

    def __init__(self, r: PatternRule):
        self.r = r
        self.egg_vars: dict[str, tuple[str, Any]] = {}  # name -> (its sort, the egglog variable)
        self.extra_prims: dict[str, tuple] = {}  # `extra=` variable -> (first primitive, its keyword fields)
        self.lit_dtype = var("__d", String)

    def fail(self, message: str) -> Exception:
        return _error(self.r, message)

    def eggs(self) -> list[RewriteOrRule]:
        r = self.r
        self.check()
        lhs = self.term(r.lhs, "lhs")
        conditions: list = []
        if isinstance(r.rhs, Lit):
            shape, dtype = var("__shape", Vec[i64]), var("__out_dtype", String)
            rhs = T.broadcast_in_dim(self.scalar(r.rhs.value, dtype, "rhs"), shape, Vec[i64].empty())
            conditions += [eq(shape_of(lhs)).to(shape), eq(dtype_of(lhs)).to(dtype)]
        elif isinstance(r.rhs, Var):
            rhs = self.term(r.rhs, "rhs")
            conditions += [eq(shape_of(lhs)).to(shape_of(rhs)), eq(dtype_of(lhs)).to(dtype_of(rhs))]
        else:
            rhs = self.term(r.rhs, "rhs")
        conditions += self.literal_dtype()
        conditions += [c for cond in r.conditions if cond.kind != "integer" for c in self.condition(cond)]
        integers = [self.array(c.args[0]) for c in r.conditions if c.kind == "integer"]
        alternatives = [[eq(dtype_of(x)).to(String(name)) for x, name in zip(integers, names, strict=True)]
                        for names in itertools.product(INTEGER_DTYPES, repeat=len(integers))]
        make = birewrite if r.both_ways else rewrite
        return [make(lhs).to(rhs, *conditions, *alternative) for alternative in alternatives]

    # --- checks --------------------------------------------------------------------------------------
    def check(self) -> None:
        r = self.r
        for c in r.conditions:
            if c.kind == "engine":
                raise self.fail(f"its condition `{c.args[0]}` is one only the engine evaluates; it cannot be compiled")
            if not set(c.args) <= set(variables(r.lhs)):
                raise self.fail(f"condition {format_condition(c)} names a variable the left-hand side does not bind")
        if not isinstance(r.lhs, (App, Lit)):
            raise self.fail("the left-hand side is a bare variable: it would match every term")
        if r.both_ways and not (isinstance(r.lhs, App) and isinstance(r.rhs, App)):
            raise self.fail("`<=>` needs a primitive application on both sides")
        sides = [(r.rhs, r.lhs)] + ([(r.lhs, r.rhs)] if r.both_ways else [])
        for used, binding in sides:
            unbound = set(variables(used)) - set(variables(binding))
            unbound |= set(params(used)) - set(params(binding))
            if unbound:
                raise self.fail(f"{', '.join(sorted(unbound))} not bound by the other side")
        for app in _apps(r.lhs, r.rhs):
            problem = app_problem(app.prim, dict(app.params), len(app.args))
            if problem is not None:
                raise self.fail(problem[0])

    # --- terms ---------------------------------------------------------------------------------------
    def array(self, name: str):
        return self.egg_var(name, Arr)

    def egg_var(self, name: str, sort):
        kind, found = self.egg_vars.get(name, (repr(sort), None))
        if kind != repr(sort):
            raise self.fail(f"{name!r} names values of two kinds ({kind} and {sort!r})")
        if found is None:
            found = var(name, sort)
            self.egg_vars[name] = (kind, found)
        return found

    def scalar(self, value, dtype, side: str):
        if isinstance(value, bool):
            value = 1.0 if value else 0.0
        elif isinstance(value, int):
            if abs(value) > _MAX_EXACT_INT:
                raise self.fail(f"literal {value} is not exactly a float64, which the e-graph holds literals as")
        value = float(value)
        if value == 0.0 and math.copysign(1.0, value) < 0:
            raise self.fail("literal -0.0 cannot be held in the e-graph (egglog's f64 equates -0.0 with 0.0); "
                            "the rule can be verified but not loaded")
        if value != value and side == "lhs":
            raise self.fail("literal nan on the left-hand side never matches (the encoder holds nan as a constant)")
        return Arr.scalar(f64(value), dtype)

    def term(self, p: Pattern, side: str):
        if isinstance(p, Var):
            return self.array(p.name)
        if isinstance(p, Lit):
            return self.scalar(p.value, self.lit_dtype, side)
        args = [self.term(a, side) for a in p.args]
        given = dict(p.params)
        extra = given.pop(EXTRA, None)
        spec = SPECS[p.prim]
        values, rest = self.fields(spec, given)
        if extra is not None:
            values += self.carried(spec, extra.name)
        else:
            values += [self.keyword_field(spec, name, kind, rest) for name, kind in spec.keyword_fields]
        children = [args_list(args)] if spec.arity is None else args
        return CONSTRUCTORS[p.prim](*children, *values)

    def keyword_field(self, spec, name: str, kind, given: dict):
        """A keyword field's value: the param given (a variable of a typed field, or a value), else its default."""
        value = given.get(name)
        if isinstance(value, Param):
            return self.egg_var(value.name, kind.egg_type)
        if name in given:
            return _egg_value(kind.name, field_value(spec, name, value))
        if not has_default(spec, name):
            raise self.fail(f"{spec.primitive} needs param {name!r} (it has no default)")
        return _egg_value(kind.name, default_value(spec, name))

    def fields(self, spec, given: dict) -> tuple[list, dict]:
        """The positional fields' values (variables or constants) and the params left."""
        values, rest = [], dict(given)
        for name, kind in spec.positional_fields:
            value = rest.pop(name)
            if isinstance(value, Param):
                values.append(self.egg_var(value.name, kind.egg_type))
                continue
            encoded = kind.encode(value)
            if encoded is None:
                raise self.fail(f"param {name}={value!r} of {spec.primitive} does not fit its typed field "
                                f"({kind.name})")
            values.append(_egg_value(kind.name, encoded))
        return values, rest

    def carried(self, spec, name: str) -> list:
        """The variables `extra=name` stands for: one per keyword field of `spec`'s primitive; every primitive
        `name` is given to must have the same keyword fields (`reduce_max` and `reduce_min` do)."""
        fields = tuple((field, kind.name) for field, kind in spec.keyword_fields)
        prim, first = self.extra_prims.setdefault(name, (spec.primitive, fields))
        if first != fields:
            raise self.fail(f"{EXTRA}={name} binds the params of {prim}, so it cannot give those of "
                            f"{spec.primitive} (other params)")
        return [self.egg_var(f"{name}_{field}", String if kind.textual else kind.egg_type)
                for field, kind in spec.keyword_fields]

    def literal_dtype(self) -> list:
        """Bind the literals' dtype when a side being built holds literals its matched side does not bind."""
        r = self.r
        lhs_lits, rhs_lits = _has_literal(r.lhs), not isinstance(r.rhs, Lit) and _has_literal(r.rhs)
        if rhs_lits and not lhs_lits:
            building = r.rhs
        elif r.both_ways and lhs_lits and not rhs_lits:
            building = r.lhs
        else:
            return []
        anchor = _nearest_variable(building)
        if anchor is not None:
            return [eq(dtype_of(self.array(anchor))).to(self.lit_dtype)]
        if building is r.rhs:
            return [eq(dtype_of(self.term(r.lhs, "lhs"))).to(self.lit_dtype)]
        raise self.fail("cannot tell the dtype of its literals: give them a variable operand")

    def condition(self, c: Condition) -> list:
        if c.kind in RELATIONS:
            return [RELATIONS[c.kind](self.array(c.args[0]))]
        x = self.array(c.args[0])
        if c.kind == "shape_eq":
            return [eq(shape_of(x)).to(shape_of(self.array(c.args[1])))]
        dtype = var(f"__dtype_{c.args[0]}", String)
        if c.kind == "float":
            return [eq(dtype_of(x)).to(dtype), float_dtype(dtype)]
        if c.kind == "not_complex":
            return [eq(dtype_of(x)).to(dtype), eq(dtype.replace("complex", "")).to(dtype)]
        raise self.fail(f"condition kind {c.kind!r} cannot be compiled")


def _egg_value(kind: str, value):
    if kind == "int":
        return i64(value)
    if kind == "ints":
        return Vec[i64](*map(i64, value)) if value else Vec[i64].empty()
    if kind == "bool":
        return Bool(value)
    return String(value)


def _apps(*patterns: Pattern) -> Iterable[App]:
    for p in patterns:
        if isinstance(p, App):
            yield p
            yield from _apps(*p.args)


def _has_literal(p: Pattern) -> bool:
    return isinstance(p, Lit) or (isinstance(p, App) and any(_has_literal(a) for a in p.args))


def _nearest_variable(p: Pattern) -> str | None:
    """The variable closest to the first literal of `p`: among its sibling operands, then its parent's, ..."""
    path: list[App] = []

    def find(q: Pattern) -> bool:
        if isinstance(q, Lit):
            return True
        if isinstance(q, App):
            path.append(q)
            if any(find(a) for a in q.args):
                return True
            path.pop()
        return False

    find(p)
    for app in reversed(path):
        names = variables(app)
        if names:
            return names[0]
    return None
