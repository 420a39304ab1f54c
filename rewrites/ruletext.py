"""The one-line text rule format: parser and printer (text <-> `rewrites.pattern.PatternRule`).

    # name            class    rule                                              side conditions
    mul-one          exact    mul(x, 1.0) => x
    log-of-product   guarded  log(mul(x, y)) => add(log(x), log(y))             if x > 0, y > 0
    transpose-twice  exact    transpose[permutation=(1, 0)](transpose[permutation=(1, 0)](x)) => x
    add-self         exact    add(x, x) <=> mul(x, 2.0)  if real(x)  # x+x <=> x*2

A line is `NAME CLASS LHS (=> | <=>) RHS [if COND, ...] [# math]`:
- NAME is kebab-case, CLASS one of `rewrite.rule.SOUNDNESS`; `<=>` holds both ways.
- A pattern is a number (`1.0`, `-2`, `1e-3`, `inf`, `-inf`, `nan`, `-0.0`, `True`, `False`: a scalar
  literal of its context's dtype), an identifier (an array variable), or `prim[params](args, ...)` with
  the primitive and its params as JAX prints them (`ir.text.parser` reads the params; params equal to
  the primitive's defaults may be left out). A bare identifier as a param value is a param variable
  (`transpose[permutation=p](x)`) of a positional field (`rewrites.terms.TermSpec.positional_fields`);
  `extra=s` binds all the other params (the keyword fields), so a rule can carry them over to a node of
  the same primitive (`reduce_sum[axes=a, extra=s](x)`).
- Conditions: `x > 0`, `x >= 0`, `x != 0`, `-1 <= x <= 1` (or `abs(x) <= 1`), `x >= -1`, `finite(x)`,
  `float(x)`, `integer(x)`, `real(x)` (no complex dtype), `shape(x) == shape(y)`.
- The rest of a line after `#` is the rule's math comment; a line starting with `#` is a comment.
- Several consecutive lines with one name (and one class) form one rule, as a built-in family does;
  a name used again elsewhere is an error.
- `@category NAME` sets the category of the rules after it (`rewrites.rulecompile.load_rules`).

Identifiers starting with `__` are reserved (the compiler's own pattern variables). A param value JAX
prints as a bare name (`impl=fry`) reads as a param variable, so such a param cannot be written.
"""

from __future__ import annotations

import difflib
import inspect
import math
import re
from dataclasses import dataclass
from typing import Any

from ir.errors import EqjaxError, JaxprSyntaxError, JaxprTypeError, UnsupportedPrimitive, located
from ir.params import Symbol
from ir.primitives import Primitive, Variadic
from rewrites.pattern import App, Condition, Lit, Origin, Param, Pattern, PatternRule, Var, variables
from rewrites.rule import SOUNDNESS

EXTRA = "extra"  # the param name that binds a node's remaining params (see the module docstring)
_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_INT = re.compile(r"-?\d+")
_TOKEN = re.compile(
    r"(?P<number>-?(?:inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)(?![\w.]))"
    r"|(?P<op><=>|=>|<=|>=|!=|==|<|>)"
    r"|(?P<name>[A-Za-z_]\w*(?:-[A-Za-z_]\w*)*)"
    r"|(?P<punct>[(),])"
)
_RESERVED = frozenset({"if", "inf", "nan", "True", "False"})
# Side conditions as token templates (X, Y: array variables; numbers compare by value) and their kinds.
_CONDITION_TEMPLATES = (
    ("X > 0", "positive"), ("X >= 0", "nonneg"), ("X != 0", "nonzero"), ("-1 <= X <= 1", "within_one"),
    ("abs ( X ) <= 1", "within_one"), ("X >= -1", "above_minus_one"), ("finite ( X )", "finite"),
    ("float ( X )", "float"), ("integer ( X )", "integer"), ("real ( X )", "not_complex"),
    ("shape ( X ) == shape ( Y )", "shape_eq"),
)


MAX_NUMBER_CHARS = 400


class RuleSyntaxError(EqjaxError):
    """A malformed rule: `file`, 1-based `line` and `column`, what was `expected` there."""

    def __init__(self, message: str, file: str, line: int, column: int, expected: str = "",
                 source_line: str = ""):
        self.file, self.line, self.column, self.expected, self.source_line = file, line, column, expected, source_line
        self.detail = message
        super().__init__(located(f"{file}:{line}:{column}", message, column, expected, source_line))


# --- printing ---------------------------------------------------------------------------------------


def format_number(value: float | int | bool) -> str:
    if isinstance(value, bool) or type(value) is int:
        return str(value)
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def format_value(value: Any) -> str:
    """A param value as JAX prints it (strings quoted so they read back as strings)."""
    from ir.text.printer import value_text

    return value.name if isinstance(value, Param) else value_text(value, nested=True)


def format_pattern(p: Pattern) -> str:
    if isinstance(p, Var):
        return p.name
    if isinstance(p, Lit):
        return format_number(p.value)
    text = p.prim
    if p.params:
        text += "[" + " ".join(f"{k}={format_value(v)}" for k, v in p.params) + "]"
    return text + "(" + ", ".join(format_pattern(a) for a in p.args) + ")"


def format_condition(c: Condition) -> str:
    if c.kind == "engine":
        return f"engine: {c.args[0]}"
    template = next(t for t, kind in _CONDITION_TEMPLATES if kind == c.kind)
    return _template_text(template, c.args)


def _template_text(template: str, args: tuple[str, ...] = ("x", "y")) -> str:
    pieces = [args[0] if p == "X" else args[1] if p == "Y" else p for p in template.split()]
    return " ".join(pieces).replace(" ( ", "(").replace(" )", ")")


def engine_conditions(r: PatternRule) -> list[Condition]:
    return [c for c in r.conditions if c.kind == "engine"]


def reloadable(r: PatternRule) -> bool:
    """Whether the rule's text reads back as the same rule (no condition only the engine evaluates)."""
    return not engine_conditions(r)


def format_rule(r: PatternRule, name_width: int = 24) -> str:
    """The rule's line; a rule with an engine condition prints as a comment saying why it cannot be reloaded."""
    arrow = "<=>" if r.both_ways else "=>"
    text = f"{r.name:<{name_width}} {r.soundness:<8} {format_pattern(r.lhs)} {arrow} {format_pattern(r.rhs)}"
    stated = [format_condition(c) for c in r.conditions if c.kind != "engine"]
    if stated:
        text += "  if " + ", ".join(stated)
    if r.math:
        text += "  # " + r.math.replace("\n", " ")
    engine = engine_conditions(r)
    if engine:
        why = "; ".join(" ".join(c.args[0].split()) for c in engine)
        return f"# not reloadable (only the engine evaluates: {why}): {text}"
    return text


# --- tokens -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    kind: str  # number | op | name | punct | params | eof
    text: str
    col: int  # 0-based offset in the line


class _Line:
    """One rule line: its tokens, math comment, and errors at a column."""

    def __init__(self, text: str, file: str, lineno: int, start: int):
        self.text, self.file, self.lineno = text, file, lineno
        self.tokens, self.math = self._tokenize(start)
        self.i = 0

    def error(self, message: str, col: int, expected: str = "") -> RuleSyntaxError:
        return RuleSyntaxError(message, self.file, self.lineno, col + 1, expected, self.text)

    def _tokenize(self, pos: int) -> tuple[list[Token], str]:
        text, tokens = self.text, []
        while True:
            while pos < len(text) and text[pos] in " \t\r":
                pos += 1
            if pos == len(text) or text[pos] == "#":
                math_text = text[pos + 1:].strip() if pos < len(text) else ""
                tokens.append(Token("eof", "", pos))
                return tokens, math_text
            if text[pos] == "[":
                end = self._bracket_end(pos)
                tokens.append(Token("params", text[pos:end], pos))
                pos = end
                continue
            m = _TOKEN.match(text, pos)
            if m is None:
                raise self.error(f"unexpected character {text[pos]!r}", pos,
                                 "a pattern, '=>', '<=>', 'if', a condition or '#'")
            if m.lastgroup == "number" and m.end() - pos > MAX_NUMBER_CHARS:  # int() refuses > 4,300 digits
                raise self.error(f"number of {m.end() - pos} characters", pos,
                                 f"a number of at most {MAX_NUMBER_CHARS} characters")
            tokens.append(Token(m.lastgroup, m.group(), pos))
            pos = m.end()

    def _bracket_end(self, start: int) -> int:
        """The offset after the `]` closing the `[` at `start` (nested brackets and quoted strings skipped)."""
        depth, pos, text = 0, start, self.text
        while pos < len(text):
            c = text[pos]
            if c in "'\"":
                close = text.find(c, pos + 1)
                if close < 0:
                    raise self.error("unterminated string", pos, f"a closing {c}")
                pos = close
            elif c in "[({":
                depth += 1
            elif c in "])}":
                depth -= 1
                if depth == 0:
                    return pos + 1
            pos += 1
        raise self.error("unterminated '['", start, "']' to close the params")

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok.kind != "eof" and tok.text == text

    def expect(self, text: str, expected: str) -> Token:
        if not self.at(text):
            raise self.unexpected(expected)
        return self.take()

    def unexpected(self, expected: str, tok: Token | None = None) -> RuleSyntaxError:
        tok = tok or self.peek()
        what = "end of line" if tok.kind == "eof" else repr(tok.text)
        return self.error(f"unexpected {what}", tok.col, expected)


# --- parsing ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedRule:
    rule: PatternRule
    category: str | None  # from the last `@category` line before it


def parse_rules(text: str, file: str = "<text>") -> list[PatternRule]:
    """The rules of a rule file's text, in order (a family's lines are consecutive rules with one name)."""
    return [p.rule for p in parse_rule_file(text, file)]


def parse_rule_file(text: str, file: str = "<text>") -> list[ParsedRule]:
    out: list[ParsedRule] = []
    category: str | None = None
    first_line: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("@"):
            category = _directive(line, file, lineno)
            continue
        r = _RuleParser(line, file, lineno).rule()
        previous = out[-1].rule if out else None
        if r.name in first_line and (previous is None or previous.name != r.name):
            col = line.index(r.name) + 1
            raise RuleSyntaxError(f"rule {r.name!r} is already defined at line {first_line[r.name]} (the lines of one "
                                  "rule must be consecutive)", file, lineno, col, "a new rule name", line)
        if previous is not None and previous.name == r.name and previous.soundness != r.soundness:
            col = line.index(r.soundness, line.index(r.name) + len(r.name)) + 1
            raise RuleSyntaxError(f"rule {r.name!r} continues with class {r.soundness!r} but was declared "
                                  f"{previous.soundness!r}", file, lineno, col, repr(previous.soundness), line)
        first_line.setdefault(r.name, lineno)
        out.append(ParsedRule(r, category))
    return out


def _directive(line: str, file: str, lineno: int) -> str:
    m = re.fullmatch(r"(\s*)@category\s+(\S+)\s*(#.*)?", line)
    if m is None:
        raise RuleSyntaxError("unknown directive", file, lineno, line.index("@") + 1, "'@category NAME'", line)
    name = m.group(2)
    if not _NAME.fullmatch(name):
        raise RuleSyntaxError(f"bad category name {name!r}", file, lineno, line.index(name) + 1,
                              "a kebab-case name", line)
    return name


class _RuleParser:
    def __init__(self, line: str, file: str, lineno: int):
        self.text, self.file, self.lineno = line, file, lineno
        words = list(re.finditer(r"\S+", line))
        self.name_match = words[0]
        if len(words) < 3:
            raise RuleSyntaxError("incomplete rule", file, lineno, len(line.rstrip()) + 1,
                                  "NAME CLASS LHS => RHS", line)
        self.class_match = words[1]
        self.line = _Line(line, file, lineno, words[1].end())
        self.var_cols: dict[str, list[tuple[str, int]]] = {"lhs": [], "rhs": []}  # (name, col) per side
        self.param_cols: dict[str, list[tuple[str, int]]] = {"lhs": [], "rhs": []}
        self.param_kinds: dict[str, str] = {}  # param variable -> the kind of value it holds

    def error(self, message: str, col: int, expected: str = "") -> RuleSyntaxError:
        return self.line.error(message, col, expected)

    def rule(self) -> PatternRule:
        name, soundness = self.name_match.group(), self.class_match.group()
        if not _NAME.fullmatch(name):
            raise self.error(f"bad rule name {name!r}", self.name_match.start(),
                             "a kebab-case name ([a-z0-9] words joined by '-')")
        if soundness not in SOUNDNESS:
            raise self.error(f"unknown class {soundness!r}", self.class_match.start(),
                             f"one of {', '.join(SOUNDNESS)}")
        line = self.line
        lhs = self.pattern("lhs")
        arrow = line.peek()
        if arrow.text not in ("=>", "<=>"):
            raise line.unexpected("'=>' or '<=>' after the left-hand side")
        line.take()
        rhs = self.pattern("rhs")
        conditions: list[Condition] = []
        if line.at("if"):
            line.take()
            conditions.append(self.condition())
            while line.at(","):
                line.take()
                conditions.append(self.condition())
        if line.peek().kind != "eof":
            raise line.unexpected("'if' and conditions, ',' between conditions, '#' or the end of the line")
        self.check_binding(lhs, rhs, arrow.text == "<=>")
        origin = Origin(self.file, self.lineno, self.name_match.start() + 1)
        return PatternRule(name, soundness, lhs, rhs, tuple(conditions), arrow.text == "<=>", origin, line.math)

    # --- patterns ---------------------------------------------------------------------------------
    def pattern(self, side: str) -> Pattern:
        line = self.line
        tok = line.take()
        if tok.kind == "number":
            return Lit(_number(tok.text))
        if tok.kind == "name":
            if tok.text in ("True", "False"):
                return Lit(tok.text == "True")
            if tok.text == "nan":
                return Lit(math.nan)
            if line.peek().kind == "params" or line.at("("):
                return self.application(tok, side)
            self.check_identifier(tok.text, tok.col, "a variable")
            self.var_cols[side].append((tok.text, tok.col))
            return Var(tok.text)
        raise line.unexpected("a pattern: a variable, a number or prim(args)", tok)

    def application(self, prim_tok: Token, side: str) -> App:
        line = self.line
        found: dict[str, Any] = {}
        params_tok = None
        if line.peek().kind == "params":
            params_tok = line.take()
            found = self.params(params_tok, prim_tok.text, side)
        open_tok = line.expect("(", f"'(' and the operands of {prim_tok.text}")
        args: list[Pattern] = []
        while not line.at(")"):
            if args:
                line.expect(",", "',' between operands or ')'")
            args.append(self.pattern(side))
        line.take()
        problem = app_problem(prim_tok.text, found, len(args))
        if problem is not None:
            message, expected, where = problem
            col = {"prim": prim_tok.col, "params": (params_tok or open_tok).col, "args": open_tok.col}[where]
            raise self.error(message, col, expected)
        return App(prim_tok.text, tuple(sorted(found.items())), tuple(args))

    def params(self, tok: Token, prim: str, side: str) -> dict[str, Any]:
        """`[k=v ...]` read by the jaxpr parser; bare names become param variables."""
        from ir.text.parser import Parser, _Lets
        from rewrites.terms import SPECS

        padded = " " * tok.col + tok.text  # so that the jaxpr parser's columns are the line's
        try:
            parser = Parser(padded)
            found = parser.params(_Lets())
            if parser.peek().kind != "eof":
                raise parser.unexpected("']' to end the params")
        except JaxprSyntaxError as err:
            message = str(err).split("\n")[0].split(": ", 1)[-1].split(" (expected")[0]
            raise self.error(message, err.column - 1, err.expected) from None
        spec = SPECS.get(prim)
        field_kinds = {name: kind.name for name, kind in spec.variable_fields} if spec else {}
        out = {}
        for key, value in found.items():
            if isinstance(value, Symbol) and _IDENT.fullmatch(value):
                col = tok.col + re.search(rf"(?<![\w]){key}\s*=\s*", tok.text).end()
                self.check_identifier(str(value), col, "a param variable")
                self.param_cols[side].append((str(value), col))
                kind = "extra" if key == EXTRA else field_kinds.get(key)
                old = self.param_kinds.setdefault(str(value), kind) if kind else None
                if old is not None and old != kind:
                    raise self.error(f"param variable {value!r} holds {_KIND_NAMES[kind]} here and "
                                     f"{_KIND_NAMES[old]} elsewhere", col, "one kind of value per param variable")
                value = Param(str(value))
            out[key] = value
        return out

    def check_identifier(self, name: str, col: int, what: str) -> None:
        if not _IDENT.fullmatch(name):
            raise self.error(f"{name!r} is not an identifier", col, what)
        if name.startswith("__"):
            raise self.error(f"names starting with '__' are reserved: {name!r}", col, what)
        if name in _RESERVED:
            raise self.error(f"{name!r} is a keyword, not a variable", col, what)

    # --- conditions -------------------------------------------------------------------------------
    def condition(self) -> Condition:
        line = self.line
        start = line.peek()
        toks = []
        while line.peek().kind != "eof" and not line.at(","):
            toks.append(line.take())
        for template, kind in _CONDITION_TEMPLATES:
            slots = _match_template(template, toks)
            if slots is not None:
                return Condition(kind, tuple(self.condition_var(t) for t in slots))
        raise self.error("unknown condition" if toks else "missing condition", start.col,
                         "a condition: " + ", ".join(_template_text(t) for t, _ in _CONDITION_TEMPLATES))

    def condition_var(self, tok: Token) -> str:
        if tok.text not in {name for name, _ in self.var_cols["lhs"]}:
            raise self.error(f"condition on {tok.text!r}, which the left-hand side does not bind", tok.col,
                             "an array variable of the left-hand side")
        return tok.text

    def check_binding(self, lhs: Pattern, rhs: Pattern, both_ways: bool) -> None:
        sides = (("rhs", "lhs"), ("lhs", "rhs")) if both_ways else (("rhs", "lhs"),)
        for used, binding in sides:
            bound_vars = {n for n, _ in self.var_cols[binding]}
            bound_params = {n for n, _ in self.param_cols[binding]}
            for name, col in self.var_cols[used]:
                if name not in bound_vars:
                    raise self.error(f"variable {name!r} is not bound by the {_SIDE[binding]}", col,
                                     f"a variable of the {_SIDE[binding]}")
            for name, col in self.param_cols[used]:
                if name not in bound_params:
                    raise self.error(f"param variable {name!r} is not bound by the {_SIDE[binding]}", col,
                                     f"a param variable of the {_SIDE[binding]}")
        arrays = set(variables(lhs)) | set(variables(rhs))
        for name, col in self.param_cols["lhs"] + self.param_cols["rhs"]:
            if name in arrays:
                raise self.error(f"{name!r} is both an array variable and a param variable", col, "another name")


_SIDE = {"lhs": "left-hand side", "rhs": "right-hand side"}
_KIND_NAMES = {"int": "an int", "ints": "ints", "dtype": "a dtype", "dimension_numbers": "dimension numbers",
               "extra": "params (extra=)"}


def _match_template(template: str, toks: list[Token]) -> list[Token] | None:
    pieces = template.split()
    if len(pieces) != len(toks):
        return None
    slots = []
    for piece, tok in zip(pieces, toks, strict=True):
        if piece in ("X", "Y"):
            if tok.kind != "name":
                return None
            slots.append(tok)
        elif _TOKEN.fullmatch(piece) and _TOKEN.fullmatch(piece).lastgroup == "number":
            if tok.kind != "number" or _number(tok.text) != _number(piece):
                return None
        elif tok.text != piece:
            return None
    return slots


def _number(text: str) -> float | int:
    if _INT.fullmatch(text):
        return int(text)
    return float(text)


# --- primitive checks (shared with the compiler) ------------------------------------------------------


def app_problem(prim: str, found: dict[str, Any], n_args: int) -> tuple[str, str, str] | None:
    """What is wrong with `prim[found](n_args operands)`: (message, expected, where), where is one of
    prim | params | args; None if nothing."""
    from ir.primitives import PRIMITIVES, SHAPE_RULES, get_primitive
    from rewrites.terms import SPECS

    try:
        row = get_primitive(prim)
    except UnsupportedPrimitive:
        close = difflib.get_close_matches(prim, sorted(PRIMITIVES), n=3)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        return f"unknown primitive {prim!r}{hint}", "a primitive name as JAX prints it", "prim"
    if row.multiple_results:
        return f"{prim} has several results; rules rewrite single-result primitives", "another primitive", "prim"
    spec = SPECS.get(prim)
    low, high = _arity(row)
    if not low <= n_args <= high:
        want = str(low) if low == high else f"at least {low}" if high == _MANY else f"{low} to {high}"
        return f"{prim} takes {want} operand{'s' if want != '1' else ''}, got {n_args}", f"{want} operands", "args"
    fields = dict(spec.positional_fields)
    extra = found.get(EXTRA)
    if EXTRA in found and not isinstance(extra, Param):
        return f"{EXTRA}= binds the other params of a node: its value must be a variable", f"{EXTRA}=NAME", "params"
    variable = dict(spec.variable_fields)
    for key, value in found.items():
        if isinstance(value, Param) and key not in variable and key != EXTRA:
            typed = ", ".join(variable) or "none"
            return (f"param {key!r} of {prim} cannot be a variable (typed fields: {typed}; {EXTRA}=NAME "
                    "binds the others)", "a value as JAX prints it", "params")
    missing = [k for k in fields if k not in found]
    if missing:
        return f"{prim} needs param {missing[0]!r}", f"{missing[0]}=VALUE or {missing[0]}=VARIABLE", "params"
    others = [k for k in found if k not in fields and k != EXTRA]
    if extra is not None and others:
        return f"{EXTRA}={extra.name} binds every other param; {others[0]!r} cannot be given too", \
            f"either {EXTRA}= or the params", "params"
    unfit = [k for k, kind in fields.items() if not isinstance(found[k], Param) and kind.encode(found[k]) is None]
    unfit += [k for k in others if not isinstance(found[k], Param) and not _fits(spec, k, found[k])]
    if unfit:
        return f"param {unfit[0]!r} of {prim} does not fit its field", "a value of the field's kind", "params"
    if extra is None:
        given = set(found) | set(fields) | set(_default_keys(prim, spec))
        required = _required_params(SHAPE_RULES.get(prim))
        absent = [k for k in required if k not in given]
        if absent:
            return f"{prim} needs param {absent[0]!r}", f"{absent[0]}=VALUE", "params"
    return None


def _fits(spec, name: str, value) -> bool:
    """Whether `value` fits the field `name` (False for a param the primitive does not have)."""
    from rewrites.terms import field_value

    if name not in spec.field_names:
        return False
    try:
        field_value(spec, name, value)
    except JaxprTypeError:
        return False
    return True


_MANY = 1 << 30


def _arity(row: Primitive) -> tuple[int, int]:
    """The fewest and most operands the primitive's catalogue row allows."""
    count = row.operands
    return (count.minimum, _MANY) if isinstance(count, Variadic) else (count, count)


def _required_params(rule) -> list[str]:
    if rule is None:
        return []
    try:
        sig = inspect.signature(rule)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY and p.default is p.empty]


def _default_keys(prim: str, spec) -> list[str]:
    """The params a node of `prim` gets without the rule giving them (`rewrites.terms.default_value`)."""
    if spec is None:
        return []
    from ir.primitives import PRIMITIVES

    params = PRIMITIVES[prim].params
    return [name for name, _ in spec.keyword_fields if params[name].has_default]
