"""Rules as data <-> rules in the engine: `PatternRule` -> `Rule` (egglog rewrites), and back for the
built-in rules, whose egglog declarations are read into patterns.

    load_rules("my.rules")                 the file's rules, compiled and checked (category "user", or the
                                           file's `@category NAME`, or the `category` argument)
    rules_from_text(text)                  the same for a rule file's text
    compile_rules(parse_rules(text))       one `Rule` per rule (consecutive lines with one name: a family)
    dump_rule(rule) -> [PatternRule]       one pattern rule per egglog object of a `Rule`
    dump_rules(rules) -> str               rules in the text format (`dump_builtin_rules()`: every built-in one)

Compiling. A variable is an `Arr` pattern variable; a literal is `Arr.scalar(v, d)` with one dtype variable
`d` shared by the rule's literals (as `rewrites.rules.common.lit`); when only the side being built holds
literals, `d` is bound to the dtype of the literal's nearest variable operand. A primitive is its typed
constructor (`rewrites.terms.CONSTRUCTORS`) when its params fit the typed fields, with `extra` "" when the
other params are the primitive's defaults (left-out params are defaults) and otherwise the key of those
params, registered in `rewrites.encode.RULE_EXTRAS` so that decoding finds them; else it is the `apply`
node `rewrites.encode` makes for such params. A literal that is the whole right-hand side becomes an array of
the left side's shape and dtype (`rewrites.rules.common.filled`); a variable that is the whole right-hand
side must have the left side's shape and dtype (added conditions, as `shaped_like` in `rules/arith.py`).
Conditions become the value analysis' relations, dtype tests on `dtype_of`, `shape_of` equalities; an
`integer(x)` condition gives one egglog rule per integer dtype.

Dumping. Typed field values become params, field variables `Param`s, `extra` variables `extra=NAME`,
`Arr.scalar(v, d)` a literal, `filled(v)` as the whole right-hand side a literal; dtype and shape facts
become `float`, `real` and `shape_eq` conditions or are dropped where compiling adds them back (the literal
dtype binding, the shape and dtype of a bare-variable or literal right-hand side). Anything else (a param
computed by egglog, a condition on a param or a rank, a literal of a fixed dtype) is kept as a
`Condition("engine", (text,))`. A literal variable (`Arr.scalar(a, d)`) becomes the array variable `a` with
an engine condition saying so; a term the patterns cannot hold (a computed literal) becomes a fresh variable
defined by an engine condition (`t1 = Arr.scalar(a + b, d)`), a computed param a fresh `Param` (`c1 = n / 2`).
A literal `Arr.scalar(v, "bool")` as the whole right-hand side is `True` or `False`.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from egglog import RewriteOrRule, String, Vec, birewrite, eq, f64, i64, rewrite, var
from egglog import declarations as ED
from egglog.pretty import pretty_decl

from ir import dtypes
from ir.core import ShapedArray
from rewrites.analyses.shapes import float_dtype
from rewrites.analyses.values import above_minus_one, finite, nonneg, nonzero, positive, within_one
from rewrites.encode import RULE_EXTRAS, register_rule_extra
from rewrites.pattern import App, Condition, Lit, Origin, Param, Pattern, PatternRule, Var, params, variables
from rewrites.rule import Rule, RuleError, check_rules
from rewrites.ruletext import (
    EXTRA,
    RuleSyntaxError,
    app_problem,
    format_condition,
    format_pattern,
    format_rule,
    parse_rule_file,
    reloadable,
)
from rewrites.terms import BY_EGG_NAME, CONSTRUCTORS, SPECS, Arr, apply, args_list, default_params, dtype_of, shape_of

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
            rhs = CONSTRUCTORS["broadcast_in_dim"](self.scalar(r.rhs.value, dtype, "rhs"), shape,
                                                  Vec[i64].empty(), "")
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
        spec = SPECS.get(p.prim)
        if spec is not None and spec.arity == len(args):
            fields = self.fields(spec, given)
            if fields is not None:
                values, rest = fields
                key = self.egg_var(extra.name, String) if extra is not None else self.leftover_key(p.prim, spec, rest)
                return CONSTRUCTORS[p.prim](*args, *values, key)
        key = self.egg_var(extra.name, String) if extra is not None else register_rule_extra(given)
        return apply(p.prim, key, args_list(args))

    def fields(self, spec, given: dict) -> tuple[list, dict] | None:
        values, rest = [], dict(given)
        for name, kind in spec.fields:
            value = rest.pop(name)
            if isinstance(value, Param):
                values.append(self.egg_var(value.name, kind.egg_type))
                continue
            encoded = kind.encode(value)
            if encoded is None:
                return None
            values.append(_egg_value(kind.name, encoded))
        return values, rest

    def leftover_key(self, prim: str, spec, rest: dict) -> str:
        """"" when the params besides the typed fields are the defaults, else their registered key."""
        fixed, varying = _defaults(prim, spec.arity)
        merged = {**fixed, **rest}
        if merged == fixed and not varying & rest.keys():
            return ""
        missing = sorted(varying - rest.keys())
        if missing:
            raise self.fail(f"{prim} has non-default params, so give {', '.join(missing)} too (its default "
                            "depends on the operands' dtypes)")
        return register_rule_extra(merged)

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
    return String(value)


def _defaults(prim: str, arity: int) -> tuple[dict, set]:
    """The default params that do not depend on the operands, and the names of those that do."""
    by_dtype = [default_params(prim, [ShapedArray((), dt)] * arity) or {} for dt in (dtypes.float32, dtypes.float64)]
    fixed = {k: v for k, v in by_dtype[0].items() if k in by_dtype[1] and by_dtype[1][k] == v}
    return fixed, set(by_dtype[0]) - set(fixed)


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


# --- dumping -----------------------------------------------------------------------------------------


def dump_rule(rule: Rule) -> list[PatternRule]:
    """One pattern rule per egglog object of `rule` (each a rewrite or birewrite)."""
    origin = _origins().get(rule.category)
    return [_Dumper(rule, egg, origin).pattern_rule() for egg in rule.egg]


@cache
def _origins() -> dict[str, Origin]:
    from rewrites.rules import CATEGORY_MODULES

    return {m.R.category: Origin(m.__name__.replace(".", "/") + ".py") for m in CATEGORY_MODULES}


def dump_builtin_rules() -> str:
    """Every built-in rule in the text format, by category; rules with engine conditions as comments."""
    from rewrites.rulesets import all_rules

    return dump_rules(all_rules(), "eqjax built-in rules")


def dump_rules(rules: Sequence[Rule], title: str = "eqjax rules") -> str:
    """Rules in the text format, a `@category` line before each category's rules."""
    dumped = [(r, dump_rule(r)) for r in rules]
    width = max((len(r.name) for r in rules), default=0)
    n_ok = sum(all(reloadable(p) for p in ps) for _, ps in dumped)
    lines = [f"# {title} in the one-line rule format (rewrites/ruletext.py), by category.",
             f"# {n_ok} of {len(rules)} rules read back as text; the lines starting '# not reloadable' hold the",
             "# others, with the conditions only the engine evaluates (see rewrites/rulecompile.py)."]
    category = None
    for r, patterns in dumped:
        if r.category != category:
            category = r.category
            lines += ["", f"@category {category}"]
        lines += [format_rule(p, width) for p in patterns]
    return "\n".join(lines) + "\n"


_VALUE_RELATIONS = frozenset(RELATIONS)


class _Dumper:
    """Reads one egglog rewrite's declarations into a pattern rule."""

    def __init__(self, rule: Rule, egg: RewriteOrRule, origin: Origin | None):
        self.rule, self.decl, self.decls, self.origin = rule, egg.decl, egg.__egg_decls__, origin
        if not isinstance(self.decl, (ED.RewriteDecl, ED.BiRewriteDecl)):
            raise RuleError(f"rule {rule.name!r}: only rewrites can be dumped, not {type(self.decl).__name__}")
        self.engine: list[str] = []  # conditions the patterns needed (computed params, literal variables)
        self.taken = _var_names(self.decl)
        self.field_vars: set[str] = set()  # names the patterns use as params
        self.filled_shape: str | None = None  # the shape and dtype variables of a `filled` right-hand side
        self.filled_dtype: str | None = None
        self.literal_vars: set[str] = set()

    def text(self, decl) -> str:
        return " ".join(pretty_decl(self.decls, decl).split())

    def fresh(self, prefix: str) -> str:
        k = 1
        while f"{prefix}{k}" in self.taken:
            k += 1
        self.taken.add(f"{prefix}{k}")
        return f"{prefix}{k}"

    def defined(self, decl, prefix: str) -> str:
        """A fresh variable standing for a term the patterns cannot hold, defined by an engine condition."""
        name = self.fresh(prefix)
        self.engine.append(f"{name} = {self.text(decl)}")
        return name

    def pattern_rule(self) -> PatternRule:
        decl = self.decl
        lhs = self.pattern(decl.lhs)
        rhs = self.standalone_literal(decl.rhs)
        if rhs is None:
            rhs = self.pattern(decl.rhs)
        conditions = [Condition("engine", (t,)) for t in self.engine] + self.conditions(rhs)
        unique = list(dict.fromkeys(conditions))
        return PatternRule(self.rule.name, self.rule.soundness, lhs, rhs, tuple(unique),
                           isinstance(decl, ED.BiRewriteDecl), self.origin, self.rule.math)

    # --- patterns ------------------------------------------------------------------------------------
    def pattern(self, expr) -> Pattern:
        if isinstance(expr, ED.TypedExprDecl):
            expr = expr.expr
        if isinstance(expr, ED.UnboundVarDecl):
            return Var(expr.name)
        if isinstance(expr, ED.CallDecl):
            ref = expr.callable
            if isinstance(ref, ED.FunctionRef) and ref.ident.name in BY_EGG_NAME:
                return self.constructor(BY_EGG_NAME[ref.ident.name], expr.args)
            if isinstance(ref, ED.FunctionRef) and ref.ident.name == "apply":
                return self.application(expr)
            if isinstance(ref, ED.ClassMethodRef) and ref.method_name == "scalar":
                return self.literal(expr)
        return Var(self.defined(expr, "t"))

    def constructor(self, spec, args) -> App:
        operands = [self.pattern(a) for a in args[:spec.arity]]
        found = {name: self.field(a, kind.name) for (name, kind), a in zip(spec.fields, args[spec.arity:-1],
                                                                             strict=True)}
        found.update(self.extra(args[-1]))
        return App(spec.primitive, tuple(sorted(found.items())), tuple(operands))

    def application(self, call: ED.CallDecl) -> Pattern:
        prim, extra, operands = call.args
        if not isinstance(prim.expr, ED.LitDecl):
            return Var(self.defined(call, "t"))
        found = self.extra(extra)
        return App(prim.expr.value, tuple(sorted(found.items())), tuple(self.pattern(a) for a in _cons_items(operands)))

    def field(self, typed, kind: str) -> Any:
        expr = typed.expr
        if isinstance(expr, ED.UnboundVarDecl):
            self.field_vars.add(expr.name)
            return Param(expr.name)
        value = _field_literal(expr, kind)
        if value is not None:
            return value
        name = self.defined(expr, "c")
        self.field_vars.add(name)
        return Param(name)

    def extra(self, typed) -> dict:
        """The params an `extra` value stands for: none for the defaults, `extra=NAME` for a variable."""
        expr = typed.expr
        if isinstance(expr, ED.UnboundVarDecl):
            self.field_vars.add(expr.name)
            return {EXTRA: Param(expr.name)}
        if isinstance(expr, ED.LitDecl) and expr.value in ("", "-"):
            return {}
        if isinstance(expr, ED.LitDecl) and expr.value in RULE_EXTRAS:
            return dict(RULE_EXTRAS[expr.value])
        name = self.defined(expr, "c")
        self.field_vars.add(name)
        return {EXTRA: Param(name)}

    def literal(self, call: ED.CallDecl, standalone: bool = False) -> Pattern:
        value, dtype = (a.expr for a in call.args)
        if isinstance(dtype, ED.UnboundVarDecl):
            if standalone:
                self.filled_dtype = dtype.name
        elif not (standalone and isinstance(dtype, ED.LitDecl) and dtype.value == "bool"):
            self.engine.append(f"the literal {self.text(call)} has a fixed dtype")
        if isinstance(value, ED.LitDecl):
            v = value.value
            return Lit(bool(v) if isinstance(dtype, ED.LitDecl) and dtype.value == "bool" else v)
        if isinstance(value, ED.UnboundVarDecl):
            if value.name not in self.literal_vars:
                self.literal_vars.add(value.name)
                self.engine.append(f"{value.name} is a literal: {self.text(call)}")
            return Var(value.name)
        return Var(self.defined(call, "t"))

    def standalone_literal(self, expr) -> Pattern | None:
        """`filled(v)` as the whole right-hand side (a literal broadcast to a shape variable) as a literal."""
        if isinstance(expr, ED.CallDecl) and isinstance(expr.callable, ED.ClassMethodRef) \
                and expr.callable.method_name == "scalar":
            self.engine.append("the right-hand side is a rank-0 literal, not one of the left side's shape")
            return self.literal(expr)
        if not (isinstance(expr, ED.CallDecl) and isinstance(expr.callable, ED.FunctionRef)
                and expr.callable.ident.name == SPECS["broadcast_in_dim"].constructor_name):
            return None
        value, shape, dims, extra = (a.expr for a in expr.args)
        if not (isinstance(value, ED.CallDecl) and isinstance(value.callable, ED.ClassMethodRef)
                and value.callable.method_name == "scalar" and isinstance(value.args[0].expr, ED.LitDecl)
                and isinstance(shape, ED.UnboundVarDecl) and _field_literal(dims, "ints") == ()
                and isinstance(extra, ED.LitDecl) and extra.value == ""):
            return None
        self.filled_shape = shape.name
        return self.literal(value, standalone=True)

    # --- conditions ----------------------------------------------------------------------------------
    def conditions(self, rhs: Pattern) -> list[Condition]:
        facts = list(self.decl.conditions)
        lhs = self.decl.lhs
        rhs_var = rhs.name if isinstance(rhs, Var) else None
        mapped: dict[int, list[Condition]] = {}
        engine: set[int] = set()
        dtype_bind: dict[str, list[tuple[int, Any]]] = {}
        dtype_use: dict[str, list[tuple[int, str]]] = {}
        shape_bind: dict[str, list[tuple[int, Any]]] = {}
        for i, fact in enumerate(facts):
            kind, args = _classify(fact)
            if kind in _VALUE_RELATIONS and isinstance(args[0], ED.UnboundVarDecl):
                mapped[i] = [Condition(kind, (args[0].name,))]
            elif kind == "dtype_of":
                dtype_bind.setdefault(args[1], []).append((i, args[0]))
            elif kind == "shape_of":
                shape_bind.setdefault(args[1], []).append((i, args[0]))
            elif kind in ("float", "not_complex"):
                dtype_use.setdefault(args[0], []).append((i, kind))
            elif kind in ("same_shape", "same_dtype"):
                if rhs_var is not None and lhs in args and set(_names(args)) == {rhs_var}:
                    mapped[i] = []  # compiling a bare-variable right-hand side states it
                elif kind == "same_shape" and all(isinstance(a, ED.UnboundVarDecl) for a in args):
                    mapped[i] = [Condition("shape_eq", tuple(a.name for a in args))]
                else:
                    engine.add(i)
            else:
                engine.add(i)
        blocked = self.field_vars | {n for i in engine for n in _var_names(facts[i])}
        for name in set(dtype_bind) | set(dtype_use):
            binds, uses = dtype_bind.get(name, []), dtype_use.get(name, [])
            terms = self.implicit(binds, lhs, rhs_var, name == self.filled_dtype)
            held = sorted({t.name for t in terms if isinstance(t, ED.UnboundVarDecl)})
            # a dtype shared by two variables, or tested without a variable, has no condition kind
            if name in blocked or len(held) > 1 or (uses and not held) \
                    or any(not isinstance(t, ED.UnboundVarDecl) for t in terms):
                engine.update(i for i, _ in binds + uses)
                continue
            for i, _ in binds:
                mapped[i] = []
            for i, use in uses:
                mapped[i] = [Condition(use, (held[0],))]
        for name, binds in shape_bind.items():
            terms = self.implicit(binds, lhs, rhs_var, name == self.filled_shape)
            if name in blocked or any(not isinstance(t, ED.UnboundVarDecl) for t in terms):
                engine.update(i for i, _ in binds)
                continue
            held = list(dict.fromkeys(t.name for t in terms))
            for i, _ in binds:
                mapped[i] = []
            if len(held) > 1:
                mapped[binds[0][0]] = [Condition("shape_eq", (held[0], other)) for other in held[1:]]
        out: list[Condition] = []
        for i, fact in enumerate(facts):
            if i in engine:
                out.append(Condition("engine", (self.text(fact),)))
            else:
                out.extend(mapped.get(i, []))
        return out

    def implicit(self, binds: list, lhs, rhs_var: str | None, filled: bool) -> list:
        """The bound terms, without the left side where compiling states its shape or dtype anyway."""
        terms = [t for _, t in binds]
        names = {t.name for t in terms if isinstance(t, ED.UnboundVarDecl)}
        if filled or (rhs_var is not None and rhs_var in names):
            terms = [t for t in terms if t != lhs]
        return terms


def _classify(fact) -> tuple[str, tuple]:
    """What kind of fact an egglog condition is: ("positive", (x,)), ("dtype_of", (term, D)), ("shape_of",
    (term, S)), ("float", (D,)), ("not_complex", (D,)), ("same_shape", (t, u)), or ("other", ())."""
    if isinstance(fact, ED.ExprFactDecl):
        call = fact.typed_expr.expr
        if isinstance(call, ED.CallDecl) and isinstance(call.callable, ED.FunctionRef) and len(call.args) == 1:
            name, arg = call.callable.ident.name, call.args[0].expr
            if name in _VALUE_RELATIONS:
                return name, (arg,)
            if name == "float_dtype" and isinstance(arg, ED.UnboundVarDecl):
                return "float", (arg.name,)
        return "other", ()
    if not isinstance(fact, ED.EqDecl):
        return "other", ()
    left, right = fact.left, fact.right
    of_left, of_right = _function_of(left), _function_of(right)
    if of_left is not None and isinstance(right, ED.UnboundVarDecl) and of_left[0] in ("dtype_of", "shape_of"):
        return of_left[0], (of_left[1], right.name)
    if of_left is not None and of_right is not None and of_left[0] == of_right[0] in ("shape_of", "dtype_of"):
        return "same_" + of_left[0][:-3], (of_left[1], of_right[1])
    if isinstance(right, ED.UnboundVarDecl) and isinstance(left, ED.CallDecl) \
            and isinstance(left.callable, ED.MethodRef) and left.callable.method_name == "replace":
        target, old, new = (a.expr for a in left.args)
        if isinstance(target, ED.UnboundVarDecl) and target.name == right.name and isinstance(old, ED.LitDecl) \
                and old.value == "complex" and isinstance(new, ED.LitDecl) and new.value == "":
            return "not_complex", (right.name,)
    return "other", ()


def _function_of(expr) -> tuple[str, Any] | None:
    """("shape_of", term) for `shape_of(term)` (likewise dtype_of), else None."""
    if isinstance(expr, ED.CallDecl) and isinstance(expr.callable, ED.FunctionRef) and len(expr.args) == 1:
        return expr.callable.ident.name, expr.args[0].expr
    return None


def _names(args) -> list[str]:
    return [a.name for a in args if isinstance(a, ED.UnboundVarDecl)]


def _field_literal(expr, kind: str) -> Any:
    """A typed field's value as JAX prints it, if `expr` is a constant of the field's kind, else None."""
    if isinstance(expr, ED.LitDecl):
        if kind == "int" and type(expr.value) is int:
            return expr.value
        if kind == "dtype" and isinstance(expr.value, str) and expr.value in dtypes.BY_NAME:
            return dtypes.BY_NAME[expr.value]
        if kind == "dimension_numbers" and isinstance(expr.value, str):
            try:
                return ast.literal_eval(expr.value)
            except (ValueError, SyntaxError):
                return None
        return None
    if kind == "ints" and isinstance(expr, ED.CallDecl):
        ref = expr.callable
        if isinstance(ref, ED.ClassMethodRef) and ref.method_name == "empty" and not expr.args:
            return ()
        if isinstance(ref, ED.InitRef) and all(isinstance(a.expr, ED.LitDecl) for a in expr.args):
            return tuple(int(a.expr.value) for a in expr.args)
    return None


def _cons_items(typed) -> list:
    out, expr = [], typed.expr
    while isinstance(expr, ED.CallDecl) and isinstance(expr.callable, ED.ClassMethodRef) \
            and expr.callable.method_name == "cons":
        head, tail = expr.args
        out.append(head)
        expr = tail.expr
    return out


def _var_names(node: Any) -> set[str]:
    """Names of the pattern variables anywhere inside an egglog declaration."""
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ED.UnboundVarDecl):
            found.add(n.name)
        elif isinstance(n, (tuple, list)):
            stack.extend(n)
        elif hasattr(n, "__dataclass_fields__"):
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__)
    return found
