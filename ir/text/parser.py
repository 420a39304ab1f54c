"""Parser of the text `str(jax.make_jaxpr(f)(*args))` prints (JAX 0.10.2), into `ir.core` objects.

Grammar (`{...}`-scoped; whitespace, including newlines, separates tokens and is otherwise free):

    toplevel  ::= (let NAME = jaxpr in)* jaxpr
    jaxpr     ::= { lambda binder* ; binder* . let eqns in ( atoms ) }
    eqns      ::= (eqn (;)?)*                        flat layouts separate equations with `;`
    eqn       ::= binder+ = PRIMITIVE params? atom*
    binder    ::= NAME : type                        `_` is a dropped result
    type      ::= DTYPE [ INT,* ]                    `f64[3,4]`, `key<fry>[]`
    atom      ::= NAME | VALUE : type                 `a`, `2.0:f64[]`, `(1+0j):c128[]`, `nan:f64[]`
    params    ::= [ (KEY = value)* ]
    value     ::= toplevel | NAME | ( jaxpr-or-name* ) | python-repr

Names that look like keywords are ordinary variables where a variable can stand (JAX names its
222nd variable `in`): `in` ends the equations only when the output tuple follows it, and `nan:f64[]`
is a literal operand unless it starts a line at the equations' indentation (see `at_operand`).

Shared jaxprs (`let NAME = {...} in`) may be referenced before their definition within one `let`
chain, so definitions are parsed on first use. A name resolves to a shared jaxpr anywhere a param
value stands, except as the value of `name` (JAX names shared jaxprs after the `name` param:
`jit[name=_uniform jaxpr=_uniform]`). A definition nothing refers to stands for a jaxpr JAX printed
inside a repr (see `_adopt_orphans`).
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import Any

import numpy as np

from ir import dtypes
from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.params import NpScalar, Opaque, Record, Symbol
from ir.text.eqn_rules import complete_params
from ir.text.lexer import Source, Token, iter_tokens

MAX_DEPTH = 100  # nested jaxprs and param values; deeper text is rejected well before Python's stack limit
MAX_RANK = 64  # NumPy's limit on the number of dimensions
MAX_DIM = 2**63 - 1  # dimension sizes are int64 in JAX and NumPy
# Operands of one equation, binders, outputs, elements of one param tuple: ten times the widest program
# eqjax is meant to handle (10,000 outputs); a longer list is rejected where it passes the bound.
MAX_ITEMS = 100_000
_LITERAL_NAMES = frozenset({"nan", "inf", "nanj", "infj", "True", "False"})
_VAR_NAME = re.compile(r"[A-Za-z_]\w*")
_INT = re.compile(r"-?\d+")


class _Pending:
    """A `let` definition not parsed yet: where its `{` is, and whether it is being parsed."""

    __slots__ = ("index", "busy")

    def __init__(self, index: int):
        self.index, self.busy = index, False


class _Lets:
    """Shared-jaxpr names visible at a point: one `let` chain plus the chains around it."""

    def __init__(self, parent: _Lets | None = None):
        self.parent = parent
        self.defs: dict[str, _Pending | ClosedJaxpr] = {}
        self.referenced: set[str] = set()

    def find(self, name: str) -> _Lets | None:
        scope = self
        while scope is not None and name not in scope.defs:
            scope = scope.parent
        return scope


class _Scope:
    """Variables of one `{ lambda ... }`: nested jaxprs are closed, so scopes do not nest."""

    def __init__(self):
        self.vars: dict[str, Var] = {}
        self.underscores: list[Var] = []  # `_` binders; those never read become DropVars
        self.read: set[int] = set()


class Parser:
    def __init__(self, text: str):
        self.src = Source(text)
        self._pending_tokens = iter_tokens(self.src)
        self.toks: list[Token] = []  # the tokens read so far; the parser may jump back to a `let` definition
        self.i = 0
        self.depth = 0

    # --- tokens ------------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token:
        toks = self.toks
        while len(toks) <= self.i + k and not (toks and toks[-1].kind == "eof"):
            toks.append(next(self._pending_tokens))
        return toks[min(self.i + k, len(toks) - 1)]

    def take(self) -> Token:
        tok = self.peek()
        if tok.kind != "eof":  # eof is taken forever
            self.i += 1
        return tok

    def at(self, text: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.kind in ("punct", "name") and tok.text == text

    def error(self, message: str, tok: Token | None = None, expected: str = ""):
        tok = tok or self.peek()
        return self.src.error(message, tok.start, expected)

    def unexpected(self, expected: str, tok: Token | None = None):
        tok = tok or self.peek()
        return self.error(f"unexpected {_describe(tok)}", tok, expected)

    def expect(self, text: str, context: str) -> Token:
        if not self.at(text):
            raise self.unexpected(f"{text!r} {context}")
        return self.take()

    def count(self, items: list, what: str) -> None:
        if len(items) >= MAX_ITEMS:
            raise self.error(f"more than {MAX_ITEMS:,} {what}", expected=f"at most {MAX_ITEMS:,} {what}")

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"nesting deeper than {MAX_DEPTH} levels")

    # --- jaxprs ------------------------------------------------------------------------------
    def parse(self) -> ClosedJaxpr:
        closed = self.toplevel(None, top=True)
        if self.peek().kind != "eof":
            raise self.unexpected("end of text after the jaxpr")
        return closed

    def toplevel(self, outer: _Lets | None, top: bool = False) -> ClosedJaxpr:
        """`(let NAME = jaxpr in)* jaxpr`: definitions are skipped now and parsed on first use."""
        lets = _Lets(outer)
        while self.at("let") and self.peek(1).kind == "name" and self.at("=", 2):
            self.take()
            name_tok = self.take()
            self.take()
            if name_tok.text in lets.defs:
                raise self.error(f"shared jaxpr {name_tok.text!r} is defined twice", name_tok)
            lets.defs[name_tok.text] = _Pending(self.i)
            self.skip_braces()
            self.expect("in", f"after the definition of {name_tok.text!r}")
        closed = self.jaxpr(lets, top=top)
        for name in list(lets.defs):
            self.resolve(lets, name)  # definitions nobody references must still be well formed
        orphans = [lets.defs[name] for name in lets.defs if name not in lets.referenced]
        if orphans:
            _adopt_orphans([closed, *lets.defs.values()], orphans)
        return closed

    def skip_braces(self) -> None:
        if not self.at("{"):
            raise self.unexpected("'{' to start a jaxpr")
        depth = 0
        while True:
            tok = self.take()
            if tok.kind == "eof":
                raise self.error("unterminated jaxpr", tok, "'}'")
            if tok.is_("punct", "{"):
                depth += 1
            elif tok.is_("punct", "}"):
                depth -= 1
                if depth == 0:
                    return

    def resolve(self, lets: _Lets, name: str) -> ClosedJaxpr:
        entry = lets.defs[name]
        if isinstance(entry, ClosedJaxpr):
            return entry
        if entry.busy:
            raise self.error(f"shared jaxpr {name!r} refers to itself", self.toks[entry.index])
        entry.busy, saved = True, self.i
        self.i = entry.index
        closed = self.jaxpr(lets)
        self.i = saved
        lets.defs[name] = closed
        return closed

    def jaxpr(self, lets: _Lets, top: bool = False) -> ClosedJaxpr:
        self.enter()
        start = self.expect("{", "to start a jaxpr")
        self.expect("lambda", "after '{'")
        scope = _Scope()
        constvars = self.binders(scope, ";", "constvars")
        self.expect(";", "after the constvars")
        invars = self.binders(scope, ".", "input variables")
        self.expect(".", "after the input variables")
        self.expect("let", "after the input variables")
        eqns = self.eqns(scope, lets)
        self.expect("in", "after the equations")
        outvars = self.out_atoms(scope)
        self.expect("}", "to close the jaxpr")
        _drop_unread(scope, eqns)
        if constvars and not top:
            raise self.error("a nested jaxpr with constvars cannot be parsed: the text does not hold "
                             "the constant values", start)
        self.depth -= 1
        jaxpr = Jaxpr(constvars, invars, outvars, eqns)
        return ClosedJaxpr(jaxpr, [placeholder_const(v.aval) for v in constvars])

    def binders(self, scope: _Scope, end: str, what: str) -> list[Var]:
        out = []
        while not self.at(end):
            self.count(out, what)
            name_tok, aval = self.binder(f"a binder `name:type` or {end!r} in the {what}")
            out.append(self.bind(scope, name_tok, aval))
        return out

    def binder(self, expected: str) -> tuple[Token, ShapedArray]:
        name_tok = self.peek()
        if name_tok.kind != "name" or not self.at(":", 1):
            raise self.unexpected(expected)
        if not _VAR_NAME.fullmatch(name_tok.text):
            raise self.error(f"{name_tok.text!r} is not a variable name", name_tok, "a variable name")
        self.take()
        self.take()
        return name_tok, self.aval()

    def bind(self, scope: _Scope, name_tok: Token, aval: ShapedArray) -> Var:
        var = Var(aval, name_tok.text)
        if name_tok.text == "_":
            scope.underscores.append(var)
        elif name_tok.text in scope.vars:
            raise self.error(f"variable {name_tok.text!r} is bound twice", name_tok)
        scope.vars[name_tok.text] = var
        return var

    def aval(self) -> ShapedArray:
        tok = self.take()
        dtype = dtypes.BY_SHORT.get(tok.text) if tok.kind == "name" else None
        if dtype is None:
            raise self.error(f"unknown dtype {tok.text!r}", tok, "a dtype such as f64, i32, bool, key<fry>")
        self.expect("[", "after the dtype")
        dims = []
        while not self.at("]"):
            if dims:
                self.expect(",", "between dimensions")
            tok = self.take()
            if tok.kind != "number" or not tok.text.isdigit():
                raise self.unexpected("a dimension size (a non-negative integer)", tok)
            if int(tok.text) > MAX_DIM:
                raise self.error(f"dimension size of {len(tok.text)} digits", tok, f"a size of at most {MAX_DIM}")
            if len(dims) == MAX_RANK:
                raise self.error(f"more than {MAX_RANK} dimensions", tok, f"at most {MAX_RANK} dimensions")
            dims.append(int(tok.text))
        self.take()
        return ShapedArray(tuple(dims), dtype)

    # --- equations ---------------------------------------------------------------------------
    def eqns(self, scope: _Scope, lets: _Lets) -> list[Eqn]:
        eqns: list[Eqn] = []
        while not self.at_outputs():
            if self.at(";") and eqns:
                self.take()
            eqns.append(self.eqn(scope, lets))
        return eqns

    def at_outputs(self) -> bool:
        """At the `in` that ends the equations: it is followed by the output tuple."""
        return self.at("in") and self.peek(1).is_("punct", "(")

    def eqn(self, scope: _Scope, lets: _Lets) -> Eqn:
        column = self.src.position(self.peek().start)[1]
        pending = [self.binder("a binder `name:type` or 'in ('")]
        while not self.at("="):
            self.count(pending, "results of one equation")
            pending.append(self.binder("'=' after binders"))
        self.take()
        prim = self.take()
        if prim.kind != "name":
            raise self.unexpected("a primitive name after '='", prim)
        params = self.params(lets) if self.at("[") else {}
        invars = []
        while self.at_operand(column):
            self.count(invars, "operands of one equation")
            invars.append(self.atom(scope))
        outvars = [self.bind(scope, tok, aval) for tok, aval in pending]  # bound after the operands
        return Eqn(prim.text, invars, outvars, complete_params(prim.text, params, outvars))

    def at_operand(self, eqn_column: int) -> bool:
        """Whether the next token is an operand of the equation that starts at `eqn_column`.

        `nan:f64[]` may be a literal operand or the first binder of the next equation. JAX starts
        every equation on a new line (or after `;`) at the equations' indentation, while a wrapped
        operand list continues further right, so the layout decides.
        """
        tok = self.peek()
        if tok.kind in ("number", "complex"):
            return True
        if tok.kind != "name" or self.at_outputs():
            return False
        if not self.at(":", 1):
            return True
        return tok.text in _LITERAL_NAMES and (
            not tok.line_start or self.src.position(tok.start)[1] > eqn_column)

    def atom(self, scope: _Scope) -> Var | Literal:
        tok = self.take()
        if tok.kind == "name" and not (tok.text in _LITERAL_NAMES and self.at(":")):
            var = scope.vars.get(tok.text)
            if var is None:
                raise self.error(f"undefined variable {tok.text!r}", tok, "a bound variable")
            scope.read.add(id(var))
            return var
        if tok.kind not in ("name", "number", "complex"):
            raise self.unexpected("a variable or literal", tok)
        self.expect(":", "between a literal and its type")
        aval = self.aval()
        return Literal(self.literal_value(tok, aval), aval)

    def literal_value(self, tok: Token, aval: ShapedArray):
        if aval.shape:
            raise self.error(f"literal of shape {aval} has no printed value", tok, "a scalar type")
        dt, text = aval.dtype, tok.text
        try:
            if dt.kind in ("b", "float0") and text in ("True", "False"):
                return dt.numpy.type(text == "True")
            if dt.kind in ("i", "u") and _INT.fullmatch(text):
                info = np.iinfo(dt.numpy)
                if info.min <= int(text) <= info.max:
                    return dt.numpy.type(int(text))
            elif dt.kind == "f" and not text.endswith("j"):
                with np.errstate(over="ignore"):
                    return dt.numpy.type(float(text))
            elif dt.kind == "c":
                return dt.numpy.type(complex(text))
        except ValueError:
            pass
        raise self.error(f"{text!r} is not a {dt.short} value", tok, f"a {dt.short} literal")

    def out_atoms(self, scope: _Scope) -> list[Var | Literal]:
        self.expect("(", "to start the output tuple")
        out = []
        while not self.at(")"):
            self.count(out, "outputs")
            out.append(self.atom(scope))
            if not self.at(")"):
                self.expect(",", "between outputs")
        self.take()
        return out

    # --- params ------------------------------------------------------------------------------
    def params(self, lets: _Lets) -> dict[str, Any]:
        self.take()
        params: dict[str, Any] = {}
        while not self.at("]"):
            key = self.take()
            if key.kind != "name" or not _VAR_NAME.fullmatch(key.text):
                raise self.unexpected("a param name or ']'", key)
            if key.text in params:
                raise self.error(f"param {key.text!r} given twice", key)
            self.expect("=", f"after the param name {key.text!r}")
            params[key.text] = self.value(key.text, lets)
        self.take()
        return params

    def value(self, key: str, lets: _Lets) -> Any:
        self.enter()
        tok = self.peek()
        if tok.is_("punct", "{") or (self.at("let") and self.peek(1).kind == "name" and self.at("=", 2)):
            out = self.toplevel(lets)
        elif tok.is_("punct", "("):
            out = self.tuple_value(key, lets)
        elif tok.is_("punct", "["):
            out = self.sequence(key, lets, "]")
        elif tok.kind == "name":
            out = self.name_value(key, lets)
        else:
            self.take()
            out = self.scalar_value(tok)
        self.depth -= 1
        return out

    def scalar_value(self, tok: Token) -> Any:
        if tok.kind == "number":
            if tok.text.endswith("j"):
                return complex(tok.text)
            return int(tok.text) if _INT.fullmatch(tok.text) else float(tok.text)
        if tok.kind == "complex":
            return complex(tok.text)
        if tok.kind == "string":
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # invalid escapes such as '\q' warn
                    return ast.literal_eval(tok.text)
            except (ValueError, SyntaxError):
                raise self.error(f"malformed string {tok.text}", tok, "a Python string literal") from None
        if tok.kind == "angle":
            return Opaque(tok.text) if " at 0x" in tok.text else Symbol(tok.text)
        raise self.unexpected("a param value", tok)

    def name_value(self, key: str, lets: _Lets) -> Any:
        tok = self.take()
        name = tok.text
        if self.at("(") and not self.peek().space_before:
            return self.call(tok, lets)
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        if name in ("nan", "inf"):
            return float(name)
        scope = lets.find(name) if key != "name" else None
        if scope is not None:
            scope.referenced.add(name)
            return self.resolve(scope, name)
        if key != "name" and name in dtypes.BY_NAME:
            return dtypes.BY_NAME[name]
        return Symbol(name)

    def call(self, name_tok: Token, lets: _Lets) -> Any:
        """`np.int64(3)` → NpScalar; `Name(k=v, ...)` → Record; any other call is kept verbatim."""
        self.take()
        fields, positional = [], []
        while not self.at(")"):
            if fields or positional:
                self.expect(",", "between arguments")
                if self.at(")"):
                    break
            self.count(positional + fields, "arguments of one call")
            if self.peek().kind == "name" and self.at("=", 1):
                key = self.take().text
                self.take()
                fields.append((key, self.value(key, lets)))
            else:
                positional.append(self.value("", lets))
        end = self.take()
        name = name_tok.text
        if name.startswith("np.") and not fields and len(positional) == 1 and type(positional[0]) is int:
            return NpScalar(positional[0], name[3:])
        if positional:
            return Opaque(self.src.text[name_tok.start:end.end])
        return Record(name, tuple(fields))

    def tuple_value(self, key: str, lets: _Lets) -> tuple:
        """A Python tuple `(1, 2)`, `(x,)`, or JAX's tuple of jaxprs `( {...} name )` (no commas)."""
        open_tok = self.take()
        if self.at(")"):
            self.take()
            return ()
        first = self.value(key, lets)
        if self.at(","):
            return tuple(self.sequence(key, lets, ")", [first]))
        items = [first]
        while not self.at(")"):
            if self.peek().kind == "eof":
                raise self.error("unterminated tuple", open_tok, "')'")
            self.count(items, "elements of one param value")
            items.append(self.value(key, lets))
        self.take()
        for item in items:
            if not isinstance(item, ClosedJaxpr):
                raise self.error("a tuple without commas must hold jaxprs only", open_tok,
                                 "',' between tuple elements")
        return tuple(items)

    def sequence(self, key: str, lets: _Lets, close: str, items: list | None = None) -> list:
        """Comma-separated values up to `close` (a trailing comma is allowed)."""
        if items is None:
            self.take()
            items = []
        while not self.at(close):
            if items:
                self.expect(",", f"between elements or {close!r} to close")
                if self.at(close):
                    break
            self.count(items, "elements of one param value")
            items.append(self.value(key, lets))
        self.take()
        return items


def _adopt_orphans(roots: list[ClosedJaxpr], orphans: list[ClosedJaxpr]) -> None:
    """Make jaxprs printed inside a repr the `let` definitions nobody refers to by name.

    JAX prints a jaxpr held in a record (`_LinearSolveTuple(matvec={...})`) as its repr: a separate
    text with fresh names. When the same Jaxpr object is held twice, JAX still counts it as shared
    and prints its `let` at the top, where nothing refers to it. Such an unreferenced definition
    therefore is the object behind the repr texts that print the same, and it takes their place.
    """
    from ir.text.printer import print_jaxpr

    by_text: dict[str, list[ClosedJaxpr]] = {}
    for orphan in orphans:
        by_text.setdefault(print_jaxpr(orphan), []).append(orphan)
    taken: dict[str, int] = {}
    seen: set[tuple[int, bool]] = set()

    def adopt(closed: ClosedJaxpr) -> ClosedJaxpr | None:
        text = print_jaxpr(closed)
        candidates = by_text.get(text)
        if not candidates:
            return None
        # Several definitions print alike when JAX held alike copies: hand them out in order.
        n = taken[text] = taken.get(text, -1) + 1
        return candidates[min(n, len(candidates) - 1)]

    def visit_jaxpr(closed: ClosedJaxpr, in_repr: bool) -> None:
        if (id(closed), in_repr) in seen:
            return
        seen.add((id(closed), in_repr))
        for eqn in closed.jaxpr.eqns:
            eqn.params = {k: visit_value(v, in_repr) for k, v in eqn.params.items()}

    def visit_value(value: Any, in_repr: bool) -> Any:
        if isinstance(value, ClosedJaxpr):
            match = adopt(value) if in_repr else None
            if match is not None:
                return match
            visit_jaxpr(value, in_repr)
            return value
        if isinstance(value, Record):
            return Record(value.type_name, tuple((k, visit_value(v, True)) for k, v in value.fields))
        if isinstance(value, tuple):
            jaxprs_only = all(isinstance(v, ClosedJaxpr) for v in value)
            return tuple(visit_value(v, in_repr or not jaxprs_only) for v in value)
        if isinstance(value, list):
            return [visit_value(v, True) for v in value]
        return value

    for root in roots:
        visit_jaxpr(root, False)


def _drop_unread(scope: _Scope, eqns: list[Eqn]) -> None:
    """Turn `_` results nobody reads into DropVars (JAX's `_` may also name a read variable)."""
    unread = {id(v) for v in scope.underscores if id(v) not in scope.read}
    if not unread:
        return
    for eqn in eqns:
        eqn.outvars = [DropVar(v.aval) if id(v) in unread else v for v in eqn.outvars]


def placeholder_const(aval: ShapedArray) -> np.ndarray:
    """Zeros standing for a top-level constvar's value, which the text does not show."""
    shape = aval.shape + (2,) if aval.dtype.kind == "key" else aval.shape
    return np.zeros(shape, aval.dtype.numpy)


def _describe(tok: Token) -> str:
    return "end of text" if tok.kind == "eof" else repr(tok.text)


def parse_param_value(text: str) -> Any:
    """One param value from its printed text (`ir.text.printer.value_text(v, nested=True)`), read as the
    value of a param in brackets is."""
    parser = Parser(text)
    value = parser.value("", _Lets())
    if parser.peek().kind != "eof":
        raise parser.unexpected("the end of the param value")
    return value
