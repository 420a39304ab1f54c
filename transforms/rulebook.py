"""What the AD and batching rule tables share: `Values`, the typed value list a node carries (`Vals`), and
the query helpers of a rule's lambda.

A transform's builder emits one node per equation (`jvp_of`, `vjp_of`, `vmap_of`); the rule rewriting it
often needs values computed in Python from the equation's params and avals (kept axes, a shifted
permutation, the params of a node it builds). `Values(fn, name=TYPE, ...)` declares them, each with its
type; the builder computes `fn(...)` and writes the values into the node as a `Vals` list, in declaration
order (`ValueStore`): `vints(Vec[i64], ..)`, `vint(i64, ..)`, `vstr(String, ..)`, `vbool(Bool, ..)`, ending
with `vnil()`.
The rule's left-hand side matches that list with a pattern variable per value (`value_pattern`) and its
lambda gets the variables by name.

Types: `INTS`, `INT`, `STR`, `params(prim)` (a params dict for a `<prim>` node the rule builds: its keyword
fields, one value each, which the rule gets as a dict to pass on, `T.gather(g, i, **read)`,
`get(T.sort(xs, **own), 0)`) and `node(prim)` (a whole `<prim>` node's params, every field; the rule gets an
`Op` that builds the node with its constructor, `op.result(j, x)` for result j of a multi-result one).

Inside a rule's lambda, `shape(x)`, `dtype(x)` and `require(fact)` add facts to the rule's query.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from egglog import Bool, BoolLike, Expr, String, StringLike, Vec, eq, i64, i64Like, method, var
from egglog import bindings as eb

from rewrites.build_terms import B
from rewrites.terms import (
    CONSTRUCTORS,
    LEFT_OUT,
    SPECS,
    Args,
    Arr,
    Tup,
    args_list,
    dtype_of,
    encode_fields,
    field_value,
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

    @method(egg_fn="vbool")
    @classmethod
    def of_bool(cls, value: BoolLike, rest: Vals) -> Vals: ...


# Per slot kind: the value's sort, its Vals constructor, and how the builder writes it.
_SLOTS = {"ints": (Vec[i64], Vals.of_ints, "vints", lambda v: B.ints(tuple(int(d) for d in v))),
          "int": (i64, Vals.of_int, "vint", lambda v: B.int(int(v))),
          "str": (String, Vals.of_str, "vstr", lambda v: B.string(v if isinstance(v, str) else str(v))),
          "bool": (Bool, Vals.of_bool, "vbool", lambda v: B.bool(v))}
_FIELD_SLOT = {"int": "int", "ints": "ints", "bool": "bool"}  # any other field kind is a String


@dataclass(frozen=True)
class ValueType:
    """The egglog type of a value a rule reads: `INTS` (Vec[i64]), `INT` (i64), `STR` (String), `params(prim)`
    (a params dict for a `<prim>` node the rule builds: the values of its keyword fields, `TermSpec.
    keyword_fields`; a param the dict leaves out is left out of the node) or `node(prim)` (a whole `<prim>`
    node's params, every field: the rule gets an `Op`). `slots` are the entries of the node's `Vals` list
    it occupies, by kind ("ints", "int", "str")."""

    name: str
    prim: str | None = None
    whole: bool = False

    @property
    def fields(self) -> tuple:
        """The fields of a `params`/`node` value, in order."""
        spec = SPECS[self.prim]
        return spec.fields if self.whole else spec.keyword_fields

    @property
    def slots(self) -> list[str]:
        if self.prim is None:
            return [self.name]
        return [_FIELD_SLOT.get(k.name, "str") for _, k in self.fields]


INTS, INT, STR = ValueType("ints"), ValueType("int"), ValueType("str")


def params(prim: str) -> ValueType:
    _check_term(prim)
    return ValueType(f"params:{prim}", prim)


def node(prim: str) -> ValueType:
    _check_term(prim)
    return ValueType(f"node:{prim}", prim, whole=True)


def _check_term(prim: str) -> None:
    if prim not in SPECS:
        raise ValueError(f"{prim} has no term constructor (rewrites/terms.py): a rule cannot build it")


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
    """A `<prim>` node whose params are a `node(prim)` value: `op(x, y)` builds it on those operands (its
    constructor; `op.of_args(xs)` on an operand list); `op.result(j, x, y)` is result j of a multi-result
    primitive (its constructor's `Tup`, read by `get`)."""

    def __init__(self, prim: str, fields: list):
        self.prim, self.fields = prim, fields

    def result(self, j: int, *operands: Arr) -> Arr:
        return get(self.of_args(args_list(list(operands))), j)

    def __call__(self, *operands: Arr) -> Arr:
        if SPECS[self.prim].multiple_results:
            raise TypeError(f"{self.prim} has several results: read one with op.result(j, ...)")
        if SPECS[self.prim].arity is None:
            return self.of_args(args_list(list(operands)))
        return CONSTRUCTORS[self.prim](*operands, *self.fields)

    def of_args(self, xs: Args) -> Arr | Tup:
        """The variadic or multi-result `<prim>` node on the operand list `xs`."""
        return CONSTRUCTORS[self.prim](xs, *self.fields)


def value_pattern(values: Values | None) -> tuple[Vals, dict[str, Any]]:
    """The `Vals` pattern a rule reading `values` matches, and the rule's values by name: its pattern variables
    (a dict field name -> variable for a `params(prim)` value, an `Op` for a `node(prim)` value)."""
    out, slots = {}, []
    for name, kind in (values.types.items() if values else ()):
        if kind.prim is None:
            out[name] = var(f"value_{name}", _SLOTS[kind.name][0])
            slots.append((kind.name, out[name]))
            continue
        bound = {}
        for k, ((field_name, _), slot) in enumerate(zip(kind.fields, kind.slots, strict=True)):
            bound[field_name] = var(f"value_{name}_{k}", _SLOTS[slot][0])
            slots.append((slot, bound[field_name]))
        out[name] = Op(kind.prim, list(bound.values())) if kind.whole else bound
    pattern = Vals.nil()
    for slot, v in reversed(slots):
        pattern = _SLOTS[slot][1](v, pattern)
    return pattern, out


class ValueStore:
    """The builder's side: computes a node's values and writes them as its `Vals` list. Equal values of one
    rule give the same list, that of their first node. A transform's builders for the bodies of control
    flow share their program's store."""

    def __init__(self, loader):
        self.loader, self.enc = loader, loader.enc
        self._first: dict[str, eb.Call] = {}

    def list_of(self, rule: str, values: Values | None, *context, avals: list | None = None) -> eb.Call:
        """The `Vals` list of a node of `rule` (its tag) whose rule reads `values`, for `context`. `avals`: the
        operand avals a `node` value's node gets, so that an operand-dtype default is held as such."""
        if values is None:
            return _NO_VALUES
        computed = values.fn(*context)
        if set(computed) != set(values.types):
            raise ValueError(f"values gave {sorted(computed)}, the rule reads {sorted(values.types)}")
        rows = []
        for name, kind in values.types.items():
            value = computed[name]
            if kind.prim is None:
                rows.append((kind.name, value))
                continue
            given = dict(value)
            spec = SPECS[kind.prim]
            names = [field for field, _ in kind.fields]
            outside = sorted(set(given) - set(names))
            if outside:
                raise ValueError(f"value {name!r} of rule {rule} gives {outside}, not among the fields it holds "
                                 f"({', '.join(names)}; a positional field is passed to the constructor directly)")
            held = encode_fields(spec, given, avals) if kind.whole else [
                field_value(spec, field, given.get(field, LEFT_OUT))
                for field in names]
            rows += list(zip(kind.slots, held, strict=True))
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
