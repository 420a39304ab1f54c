"""What the AD and batching rule tables share: aux tables, `Aux`, and the query helpers of a rule's lambda.

A transform's builder emits one node per equation (`jvp_of`, `vjp_of`, `vmap_of`); the rule rewriting
it often needs values computed in Python from the equation's params and avals (kept axes, a shifted
permutation, the params of a node it builds). `Aux(kinds, fn)` declares them; the builder computes
`fn(...)` once per distinct value and stores the results in the `aux_*` tables under a key that is
their text (`AuxStore`); the rule reads them in its query through the key held in the node.

    aux_ints(key, j) -> Vec[i64]     aux_int(key, j) -> i64     aux_str(key, j) -> String

Slot kinds: `ints`, `int`, `str`, `extra:<prim>` (a params dict held as a `<prim>` node's `extra`
key) and `op:<prim>` (a whole `<prim>` node's params: its typed fields and its extra key; the rule
gets an `Op` that builds the node, in typed form, or held by `apply` when the params do not fit the
typed fields, which the builder tells apart by a ":apply" suffix of the rule's tag).

Inside a rule's lambda, `shape(x)`, `dtype(x)` and `require(fact)` add facts to the rule's query.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from egglog import String, Vec, eq, i64, var
from egglog import bindings as eb

from rewrites.encode import egg_call, egg_int, egg_ints, egg_str
from rewrites.terms import CONSTRUCTORS, SPECS, Arr, apply, args_list, call, dtype_of, encode_fields, get, shape_of

# A transform node's values, as three typed children: every `ints` value, every `int` value, every `str` value
# (and params key), each in the order of its rule's slots.
VALUE_SORTS = (Vec[Vec[i64]], Vec[i64], Vec[String])
NO_VALUES = (Vec[Vec[i64]].empty(), Vec[i64].empty(), Vec[String].empty())
_SLOT_CHILD = {"ints": 0, "int": 1, "str": 2}
_ELEMENT_SORTS = (Vec[i64], i64, String)
_FIELD_SLOT = {"int": "int", "ints": "ints", "dtype": "str", "dimension_numbers": "str"}


@dataclass(frozen=True)
class Aux:
    """Values a rule computes in Python: `kinds` is a space-separated list of slot kinds (see the module
    docstring); `fn` returns one value per kind (its arguments are the transform's: AD passes
    `(params, in_avals, out_avals)`, batching one `transforms.batching.rule.Site`)."""

    kinds: str
    fn: Callable[..., Sequence[Any]]

    @property
    def slots(self) -> list[str]:
        return self.kinds.split()

    @property
    def has_op(self) -> bool:
        return any(k.startswith("op:") for k in self.slots)


def table_slots(kind: str) -> list[str]:
    """The aux table slots one kind occupies: `op:<prim>` one per typed field, then its extra."""
    if kind.startswith("op:"):
        spec = SPECS.get(kind[3:])
        return [*(_FIELD_SLOT[k.name] for _, k in (spec.fields if spec else ())), "str"]
    return ["str" if kind.startswith("extra:") else kind]


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
    """A `<prim>` node whose params come from the aux tables: `op(x, y)` builds it on those operands
    (a typed constructor, or `apply` in the rule's apply variant); `op.result(j, xs)` is result j of a
    multi-result primitive (`call`)."""

    def __init__(self, prim: str, fields: list, extra, held: bool):
        self.prim, self.fields, self.extra, self.held = prim, fields, extra, held

    def __call__(self, *operands: Arr) -> Arr:
        if self.held or self.prim not in CONSTRUCTORS:
            return apply(String(self.prim), self.extra, args_list(list(operands)))
        return CONSTRUCTORS[self.prim](*operands, *self.fields, self.extra)

    def result(self, j: int, *operands: Arr) -> Arr:
        return get(call(String(self.prim), self.extra, args_list(list(operands))), j)


def value_vars() -> tuple:
    """Pattern variables for a node's three value children (see `VALUE_SORTS`)."""
    return tuple(var(name, sort) for name, sort in zip(("vs_ints", "vs_int", "vs_str"), VALUE_SORTS, strict=True))


def aux_values(children: tuple, aux: Aux | None, held: bool = False) -> list:
    """The values of `aux`'s slots, read from the node's value `children` (`value_vars`) as pattern
    variables bound by the query (inside `collecting`): one per kind, an `Op` for an `op:` kind. The
    apply form (`held`) holds only an `op:` kind's extra, as `AuxStore.values` stores it."""
    values, counts = [], [0, 0, 0]
    for kind in aux.slots if aux else ():
        bound, slots = [], table_slots(kind)
        for k, slot in enumerate(slots):
            if held and kind.startswith("op:") and k < len(slots) - 1:
                continue
            child = _SLOT_CHILD[slot]
            bound.append(bind(children[child][counts[child]], _ELEMENT_SORTS[child]))
            counts[child] += 1
        values.append(Op(kind[3:], bound[:-1], bound[-1], held) if kind.startswith("op:") else bound[0])
    return values


def has_typed_form(aux: Aux | None) -> bool:
    """Whether a rule with `aux` needs a second, `apply`-held variant: an `op:` of a primitive with typed
    fields, whose params may not fit them (np.int64 values, say). Without fields they always fit."""
    return aux is not None and any(k.startswith("op:") and k[3:] in SPECS and SPECS[k[3:]].fields
                                   for k in aux.slots)


class AuxStore:
    """The builder's side: computes a node's aux values and writes them as its value children."""

    def __init__(self, loader):
        self.loader, self.enc = loader, loader.enc

    def values(self, aux: Aux | None, *context, avals: list | None = None) -> tuple[list[eb.Call], bool]:
        """The value children of a node whose rule reads `aux`, for `context`, and whether an `op:` value
        needs the apply form. `avals`: the operand avals an `op:` node gets, so that its default params
        print as ""."""
        if aux is None:
            return _children([]), False
        values = tuple(aux.fn(*context))
        kinds = aux.slots
        if len(values) != len(kinds):
            raise ValueError(f"aux gave {len(values)} values for kinds {aux.kinds!r}")
        rows, held = [], False
        for kind, value in zip(kinds, values, strict=True):
            if kind.startswith("op:"):
                prim, params = kind[3:], dict(value)
                spec = SPECS.get(prim)
                fitted = encode_fields(spec, params) if spec is not None else None
                if fitted is None:
                    held = held or spec is not None
                    rows.append(("str", self.enc.extra_key(prim, params), False))
                else:
                    fields, rest = fitted
                    rows += [(slot, v, True) for slot, v in zip(table_slots(kind)[:-1], fields, strict=True)]
                    rows.append(("str", self.enc.extra_key(prim, rest, avals), False))
            elif kind.startswith("extra:"):
                rows.append(("str", self.enc.extra_key(kind[6:], dict(value)), False))
            else:
                rows.append((kind, value, False))
        if held:  # the apply form reads no typed field
            rows = [row for row in rows if not row[2]]
        return _children([(slot, value) for slot, value, _ in rows]), held


def _children(rows: list[tuple[str, Any]]) -> list[eb.Call]:
    """The three value children of a node holding `rows` (slot kind, value), in order."""
    groups: list[list] = [[], [], []]
    for slot, value in rows:
        if slot == "ints":
            groups[0].append(egg_ints(tuple(int(v) for v in value)))
        elif slot == "int":
            groups[1].append(egg_int(int(value)))
        else:
            groups[2].append(egg_str(value if isinstance(value, str) else str(value)))
    return [egg_call("vec-of", *g) if g else egg_call("vec-empty") for g in groups]
