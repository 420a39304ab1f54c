"""Rules in the engine -> rules as data: the egglog declarations of a `Rule` read into `PatternRule`s
(`rewrites.rulecompile` goes the other way).

    dump_rule(rule) -> [PatternRule]       one pattern rule per egglog object of a `Rule`
    dump_rules(rules) -> str               rules in the text format (`dump_builtin_rules()`: every built-in one)

Dumping. Field values become params (keyword fields at their defaults left out), positional field
variables `Param`s, the keyword fields' variables `NAME_<field>` `extra=NAME`,
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
from collections.abc import Sequence
from functools import cache
from typing import Any

from egglog import RewriteOrRule
from egglog import declarations as ED
from egglog.pretty import pretty_decl

from ir import dtypes
from rewrites.pattern import App, Condition, Lit, Origin, Param, Pattern, PatternRule, Var
from rewrites.rule import Rule, RuleError
from rewrites.rulecompile import RELATIONS
from rewrites.ruletext import (
    EXTRA,
    format_rule,
    reloadable,
)
from rewrites.terms import BY_EGG_NAME, SPECS, default_value, has_default


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
             "# others, with the conditions only the engine evaluates (see rewrites/ruledump.py)."]
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
            if isinstance(ref, ED.ClassMethodRef) and ref.method_name == "scalar":
                return self.literal(expr)
        return Var(self.defined(expr, "t"))

    def constructor(self, spec, args) -> App:
        held = _cons_items(args[0]) if spec.arity is None else args[:spec.children]
        operands = [self.pattern(a) for a in held]
        fields = args[spec.children:]
        found = {name: self.field(a, kind.name) for (name, kind), a in zip(spec.positional_fields, fields,
                                                                             strict=False)}
        found.update(self.keyword_params(spec, fields[spec.positional:]))
        return App(spec.primitive, tuple(sorted(found.items())), tuple(operands))

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

    def keyword_params(self, spec, typed: Sequence) -> dict:
        """The params a node's keyword fields stand for: `extra=NAME` when they are the variables `NAME_<field>`
        (`rewrites.rulecompile`), else each field's value unless it is the default."""
        exprs = [t.expr for t in typed]
        names = [field for field, _ in spec.keyword_fields]
        if exprs and all(isinstance(e, ED.UnboundVarDecl) for e in exprs):
            prefixes = {e.name[:-len(field) - 1] for e, field in zip(exprs, names, strict=True)
                        if e.name.endswith("_" + field)}
            if len(prefixes) == 1 and all(e.name.endswith("_" + f) for e, f in zip(exprs, names, strict=True)):
                [prefix] = prefixes
                self.field_vars.update(e.name for e in exprs)
                return {EXTRA: Param(prefix)}
        found = {}
        for (field, kind), expr in zip(spec.keyword_fields, exprs, strict=True):
            value = expr.value if isinstance(expr, ED.LitDecl) else _field_literal(expr, kind.name)
            if value is not None and has_default(spec, field) and value == default_value(spec, field):
                continue
            if value is not None and not (kind.textual and str(value).startswith("<")):  # not a marker
                found[field] = kind.decode(value) if kind.textual else value
                continue
            name = self.defined(expr, "c") if not isinstance(expr, ED.UnboundVarDecl) else expr.name
            self.field_vars.add(name)
            found[field] = Param(name)
        return found

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
        value, shape, dims, sharding = (a.expr for a in expr.args)
        default = default_value(SPECS["broadcast_in_dim"], "sharding")
        if not (isinstance(value, ED.CallDecl) and isinstance(value.callable, ED.ClassMethodRef)
                and value.callable.method_name == "scalar" and isinstance(value.args[0].expr, ED.LitDecl)
                and isinstance(shape, ED.UnboundVarDecl) and _field_literal(dims, "ints") == ()
                and isinstance(sharding, ED.LitDecl) and sharding.value == default):
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
        if kind == "bool" and type(expr.value) is bool:
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
