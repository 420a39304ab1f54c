"""Rules as patterns, matched on a saturated e-graph's view and on concrete terms of it.

    Term(node, kids)          a concrete term: a node of the view with one concrete term per child class
    match_class(view, p, c)   every way pattern p matches a term of class c: (bindings, nodes), where
                              `nodes` gives the node each App or literal position of p matched
                              (positions are paths of kid indices in a `Term` from the pattern's root:
                              a variadic node's operands sit in its cons list, `operand_path`)

Bindings map an array variable to a class and a param variable to its payload value. Params of a pattern
are compared with the node's fields (`rewrites.terms.SPECS`); `extra=s` binds the values of its keyword
fields (an opaque `call` node's `extra` text), and a keyword field a pattern does not name accepts any value. Side
conditions are not evaluated here: an explanation only cites a rule between two nodes that the saturated
e-graph already holds in one class, which egglog put there after checking them.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ir.errors import JaxprTypeError
from rewrites.decode import args_classes, holds_args, operand_classes
from rewrites.egraph_view import EGraphView
from rewrites.pattern import App, Lit, Param, Pattern, PatternRule, Var
from rewrites.ruletext import EXTRA
from rewrites.terms import SPECS, field_value

Bindings = dict  # variable name -> class id (array variables) or "param:NAME" -> payload value
Position = tuple[int, ...]
VAR = "var"  # a match's `nodes` also holds (VAR, position) -> the array variable that occurs there


@dataclass(frozen=True, eq=False)
class Term:
    """A concrete term of the view: node `node` with the concrete terms `kids` of its child classes.
    Equal structure compares equal (a hash is kept, so deep shared terms stay cheap)."""

    node: int
    kids: tuple[Term, ...] = ()
    _hash: int = field(default=0, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_hash", hash((self.node, self.kids)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return self is other or (isinstance(other, Term) and self._hash == other._hash and self.node == other.node
                                 and self.kids == other.kids)

    def at(self, path: Position) -> Term:
        t = self
        for i in path:
            t = t.kids[i]
        return t

    def replace(self, path: Position, new: Term) -> Term:
        if not path:
            return new
        kids = list(self.kids)
        kids[path[0]] = kids[path[0]].replace(path[1:], new)
        return Term(self.node, tuple(kids))

    def size(self) -> int:
        return 1 + sum(k.size() for k in self.kids)


def operands(view: EGraphView, node_ix: int) -> tuple[str, list[str]]:
    """A node's primitive and operand classes as a pattern sees them (`call`'s and a variadic or multi-result
    node's operands are its cons list)."""
    node = view.nodes[node_ix]
    if node.op == "call":
        return node.payload[0], args_classes(view, node.children[0])
    return node.op, operand_classes(view, node)


def operand_path(view: EGraphView, node_ix: int, k: int) -> Position:
    """Where operand k of a node sits among a term's kids: kid k, or inside a cons list (`holds_args`)."""
    return (0, *(1,) * k, 0) if holds_args(view.nodes[node_ix]) else (k,)


def _params_match(app: App, view: EGraphView, node_ix: int, bound: Bindings) -> Bindings | None:
    node = view.nodes[node_ix]
    spec = SPECS.get(app.prim)
    if node.op == "call":
        fields, extra = {}, node.payload[1]
    elif spec is not None:
        fields = {name: (kind, v) for (name, kind), v in zip(spec.fields, node.payload, strict=True)}
        extra = tuple(v for (_, _), v in zip(spec.keyword_fields, node.payload[spec.positional:], strict=True))
    else:
        return None
    out = dict(bound)
    for name, want in app.params:
        if name == EXTRA:
            have = extra
        elif name in fields:
            kind, have = fields[name]
            if not isinstance(want, Param):
                try:
                    want = field_value(spec, name, want)
                except JaxprTypeError:
                    return None
        else:
            return None  # a param the node does not hold as a field: not this node's form
        if isinstance(want, Param):
            key = "param:" + want.name
            if key in out and out[key] != have:
                return None
            out[key] = have
        elif want != have:
            return None
    return out


def _is_literal(view: EGraphView, node_ix: int, value) -> bool:
    node = view.nodes[node_ix]
    if node.op != "scalar":
        return False
    have = node.payload[0]
    want = float(value)
    return have == want and math.copysign(1.0, have) == math.copysign(1.0, want)


@dataclass(frozen=True)
class Literal:
    """An array variable the rule's conditions require to be a literal (constant folding's operands and
    results): it matches a class holding a `scalar` node, and binds its value."""

    name: str


_LITERAL_CONDITION = re.compile(r"^(\w+) (?:is a literal: |= Arr\.scalar\()")


def literal_form(rule: PatternRule) -> PatternRule:
    """`rule` with its literal variables (engine conditions `a is a literal: ...`, `t1 = Arr.scalar(...)`) as
    `Literal`s, so that matching honours them."""
    names = {m.group(1) for c in rule.conditions if c.kind == "engine"
             for m in [_LITERAL_CONDITION.match(c.args[0])] if m}
    if not names:
        return rule

    def sub(p):
        if isinstance(p, Var) and p.name in names:
            return Literal(p.name)
        if isinstance(p, App):
            return App(p.prim, p.params, tuple(sub(a) for a in p.args))
        return p

    return dataclasses.replace(rule, lhs=sub(rule.lhs), rhs=sub(rule.rhs))


def _is_filled(view: EGraphView, node_ix: int, value) -> bool:
    """An array filled with the literal: `broadcast_in_dim` of it to no dimensions (`rules.common.filled`)."""
    node = view.nodes[node_ix]
    return (node.op == "broadcast_in_dim" and node.payload[1] == ()
            and any(_is_literal(view, i, value) for i in view.classes[node.children[0]]))


def match_class(view: EGraphView, pattern: Pattern, cls: str, bound: Bindings | None = None,
                at: Position = ()) -> Iterator[tuple[Bindings, dict[Position, int]]]:
    """Every match of `pattern` on a term of class `cls`, extending `bound`: (bindings, nodes), `nodes`
    mapping each App or literal position to the node matched there and each (VAR, position) to its variable."""
    bound = bound or {}
    if isinstance(pattern, Var):
        have = bound.get(pattern.name)
        if have is None or have == cls:
            yield {**bound, pattern.name: cls}, {(VAR, at): pattern.name}
        return
    if isinstance(pattern, Lit):
        for i in view.classes[cls]:
            if _is_literal(view, i, pattern.value) or _is_filled(view, i, pattern.value):
                yield bound, {at: i}
                return
        return
    if isinstance(pattern, Literal):
        key = "literal:" + pattern.name  # the value: a folded conversion keeps it in another dtype's class
        for i in view.classes[cls]:
            node = view.nodes[i]
            if node.op == "scalar" and bound.get(key, node.payload[0]) == node.payload[0]:
                yield {**bound, key: node.payload[0]}, {at: i}
                return
        return
    for i in view.classes[cls]:
        yield from match_node(view, pattern, i, bound, at)


def match_node(view: EGraphView, pattern: App, node_ix: int, bound: Bindings,
               at: Position = ()) -> Iterator[tuple[Bindings, dict[Position, int]]]:
    """Every match of the App `pattern` rooted at node `node_ix`."""
    prim, kids = operands(view, node_ix)
    if prim != pattern.prim or len(kids) != len(pattern.args):
        return
    start = _params_match(pattern, view, node_ix, bound)
    if start is None:
        return

    def args_from(k: int, b: Bindings, nodes: dict) -> Iterator[tuple[Bindings, dict]]:
        if k == len(kids):
            yield b, nodes
            return
        for b2, n2 in match_class(view, pattern.args[k], kids[k], b, at + operand_path(view, node_ix, k)):
            yield from args_from(k + 1, b2, {**nodes, **n2})

    yield from args_from(0, start, {at: node_ix})
