"""What the AD and batching rule tables share: `Values`, the typed value list a node carries (`Vals`), and
the query helpers of a rule's lambda.

A transform's builder emits one node per equation (`jvp_of`, `vjp_of`, `vmap_of`); the rule rewriting it
often needs values computed in Python from the equation's params and avals (kept axes, a shifted
permutation, the params of a node it builds). `Values(fn, name=TYPE, ...)` declares them, each with its
type; the builder computes `fn(...)` and writes the values into the node as a `Vals` list, in declaration
order (`ValueStore`): `vints(Vec[i64], ..)`, `vint(i64, ..)`, `vstr(String, ..)`, ending with `vnil()`.
The rule's left-hand side matches that list with a pattern variable per value (`value_pattern`) and its
lambda gets the variables by name.

Types: `INTS`, `INT`, `STR`, `params(prim)` (a params dict held as a `<prim>` node's `extra` key) and
`node(prim)` (a whole `<prim>` node's params: its typed fields and its extra key; the rule gets an `Op`
that builds the node with its typed constructor).

Inside a rule's lambda, `shape(x)`, `dtype(x)` and `require(fact)` add facts to the rule's query.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from egglog import Expr, String, StringLike, Vec, eq, i64, i64Like, method, var
from egglog import bindings as eb

from rewrites.build_terms import B
from rewrites.terms import (
    CONSTRUCTORS,
    SPECS,
    Args,
    Arr,
    args_list,
    call,
    dtype_of,
    encode_fields,
    get,
    shape_of,
)


class Vals(Expr, egg_sort="Vals"):
    """A transform node's values: a typed list, in the order its rule declares them."""

    @method(egg_fn="vnil")
    @classmethod
    def nil(cls) -> Vals: ...

    @method(egg_fn="vints")
    @classmethod
    def of_ints(cls, value: Vec[i64], rest: Vals) -> Vals: ...

    @method(egg_fn="vint")
    @classmethod
    def of_int(cls, value: i64Like, rest: Vals) -> Vals: ...

    @method(egg_fn="vstr")
    @classmethod
    def of_str(cls, value: StringLike, rest: Vals) -> Vals: ...


# Per slot kind: the value's sort, its Vals constructor, and how the builder writes it.
_SLOTS = {"ints": (Vec[i64], Vals.of_ints, "vints", lambda v: B.ints(tuple(int(d) for d in v))),
          "int": (i64, Vals.of_int, "vint", lambda v: B.int(int(v))),
          "str": (String, Vals.of_str, "vstr", lambda v: B.string(v if isinstance(v, str) else str(v)))}
_FIELD_SLOT = {"int": "int", "ints": "ints", "dtype": "str", "dimension_numbers": "str"}


@dataclass(frozen=True)
class ValueType:
    """The egglog type of a value a rule reads: `INTS` (Vec[i64]), `INT` (i64), `STR` (String), `params(prim)`
    (a params dict, held as the `extra` key of a `<prim>` node the rule builds: a String) or `node(prim)` (a
    whole `<prim>` node's params, its typed fields and its extra key: the rule gets an `Op`). `slots` are the
    entries of the node's `Vals` list it occupies, by kind ("ints", "int", "str")."""

    name: str
    prim: str | None = None
    whole: bool = False

    @property
    def slots(self) -> list[str]:
        if self.whole:
            spec = SPECS.get(self.prim)
            return [*(_FIELD_SLOT[k.name] for _, k in (spec.fields if spec else ())), "str"]
        return ["str" if self.prim is not None else self.name]


INTS, INT, STR = ValueType("ints"), ValueType("int"), ValueType("str")


def params(prim: str) -> ValueType:
    return ValueType(f"params:{prim}", prim)


def node(prim: str) -> ValueType:
    return ValueType(f"node:{prim}", prim, whole=True)


class Values:
    """The values a rule computes in Python from its equation, by name: `Values(fn, inverse=INTS, pad=params("pad"))`.
    `fn` gets the transform's context (AD: `(params, in_avals, out_avals)`; batching: one
    `transforms.batching.rule.Site`) and returns a dict name -> Python value; the builder writes them into the
    node's `Vals` list and the rule's lambda receives them as keyword arguments of their types."""

    def __init__(self, fn: Callable[..., dict[str, Any]], **types: ValueType):
        self.fn, self.types = fn, types



# --- queries on the analyses, usable inside a rule's lambda -----------------------------------------

_conditions: list | None = None
_fresh = itertools.count()


@contextmanager
def collecting():
    """While a rule's right-hand side is built: the facts its lambda adds to the query. Their variables
    are numbered from 0 in each rule, whatever order rules are built in."""
    global _conditions, _fresh
    _conditions, _fresh = [], itertools.count()
    try:
        yield _conditions
    finally:
        _conditions = None


def bind(value, sort):
    """A fresh pattern variable equal to `value` in the query of the rule being built."""
    if _conditions is None:
        raise RuntimeError("shape()/dtype()/require() are for use inside a rule's lambda")
    v = var(f"q{next(_fresh)}", sort)
    _conditions.append(eq(v).to(value))
    return v


def shape(x: Arr) -> Vec[i64]:
    """x's shape (a Vec[i64] pattern variable bound by the rule's query). Only for terms the rule
    matched: on a term it builds, the fact never holds and the rule silently never fires."""
    return bind(shape_of(x), Vec[i64])


def dtype(x: Arr) -> String:
    return bind(dtype_of(x), String)


def require(fact) -> None:
    """Adds `fact` to the query of the rule being built: the rule fires only where it holds."""
    if _conditions is None:
        raise RuntimeError("require() is for use inside a rule's lambda")
    _conditions.append(fact)


class Op:
    """A `<prim>` node whose params are a `node(prim)` value: `op(x, y)` builds it on those operands (its typed
    constructor; `op.of_args(xs)` on an operand list); `op.result(j, xs)` is result j of a multi-result
    primitive (`call`)."""

    def __init__(self, prim: str, fields: list, extra):
        self.prim, self.fields, self.extra = prim, fields, extra

    def __call__(self, *operands: Arr) -> Arr:
        if SPECS[self.prim].arity is None:
            return self.of_args(args_list(list(operands)))
        return CONSTRUCTORS[self.prim](*operands, *self.fields, self.extra)

    def of_args(self, xs: Args) -> Arr:
        """The variadic `<prim>` node on the operand list `xs`."""
        return CONSTRUCTORS[self.prim](xs, *self.fields, self.extra)

    def result(self, j: int, *operands: Arr) -> Arr:
        return get(call(String(self.prim), self.extra, args_list(list(operands))), j)


def value_pattern(values: Values | None) -> tuple[Vals, dict[str, Any]]:
    """The `Vals` pattern a rule reading `values` matches, and the rule's values by name: its pattern variables
    (an `Op` for a `node(prim)` value)."""
    out, slots = {}, []
    for name, kind in (values.types.items() if values else ()):
        bound = []
        for k, slot in enumerate(kind.slots):
            bound.append(var(f"value_{name}_{k}" if kind.whole else f"value_{name}", _SLOTS[slot][0]))
            slots.append((slot, bound[-1]))
        out[name] = Op(kind.prim, bound[:-1], bound[-1]) if kind.whole else bound[0]
    pattern = Vals.nil()
    for slot, v in reversed(slots):
        pattern = _SLOTS[slot][1](v, pattern)
    return pattern, out


class ValueStore:
    """The builder's side: computes a node's values and writes them as its `Vals` list. Equal values of one
    rule give the same list, that of their first node: a params dict holding a jaxpr gets a new
    numbered `extra` key each time (`Encoding.extra_key`), and nodes that differ only by such keys would
    not merge. A transform's builders for the bodies of control flow share their program's store."""

    def __init__(self, loader):
        self.loader, self.enc = loader, loader.enc
        self._first: dict[str, eb.Call] = {}

    def list_of(self, rule: str, values: Values | None, *context, avals: list | None = None) -> eb.Call:
        """The `Vals` list of a node of `rule` (its tag) whose rule reads `values`, for `context`. `avals`: the
        operand avals a `node` value's node gets, so that its default params print as ""."""
        if values is None:
            return _NO_VALUES
        computed = values.fn(*context)
        if set(computed) != set(values.types):
            raise ValueError(f"values gave {sorted(computed)}, the rule reads {sorted(values.types)}")
        rows = []
        for name, kind in values.types.items():
            value = computed[name]
            if kind.whole:
                prim, given = kind.prim, dict(value)
                spec = SPECS.get(prim)
                if spec is None:
                    rows.append(("str", self.enc.extra_key(prim, given)))
                else:
                    fields, rest = encode_fields(spec, given)
                    rows += list(zip(kind.slots[:-1], fields, strict=True))
                    rows.append(("str", self.enc.extra_key(prim, rest, avals)))
            elif kind.prim is not None:
                rows.append(("str", self.enc.extra_key(kind.prim, dict(value))))
            else:
                rows.append((kind.name, value))
        text = f"{rule}|{tuple(computed[name] for name in values.types)!r}"
        return self._first.setdefault(text, _vals_list(rows))


_NO_VALUES = B.function("vnil")()


def _vals_list(rows: list[tuple[str, Any]]) -> eb.Call:
    """The `Vals` list of a node holding `rows` (slot kind, Python value), in order."""
    out = _NO_VALUES
    for slot, value in reversed(rows):
        _, _, name, write = _SLOTS[slot]
        out = B.function(name)(write(value), out)
    return out
