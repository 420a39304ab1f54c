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

from egglog import String, StringLike, Vec, eq, function, i64, i64Like, var
from egglog import bindings as eb

from rewrites.encode import egg_int, egg_ints, egg_str
from rewrites.terms import CONSTRUCTORS, SPECS, Arr, apply, args_list, call, dtype_of, encode_fields, get, shape_of


@function(egg_fn="aux_ints", merge=lambda old, new: old)
def aux_ints(key: StringLike, j: i64Like) -> Vec[i64]: ...


@function(egg_fn="aux_int", merge=lambda old, new: old)
def aux_int(key: StringLike, j: i64Like) -> i64: ...


@function(egg_fn="aux_str", merge=lambda old, new: old)
def aux_str(key: StringLike, j: i64Like) -> StringLike: ...


AUX_TABLES = (aux_ints("", 0), aux_int("", 0), aux_str("", 0))
AUX_KINDS = {"ints": (Vec[i64], aux_ints), "int": (i64, aux_int), "str": (String, aux_str)}
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


def aux_values(key, aux: Aux | None, held: bool = False) -> list:
    """The values of `aux`'s slots as pattern variables bound by the query (inside `collecting`):
    one per kind, an `Op` for an `op:` kind."""
    values, j = [], 0
    for kind in aux.slots if aux else ():
        bound, slots = [], table_slots(kind)
        for k, slot in enumerate(slots):
            sort, table = AUX_KINDS[slot]
            if not (held and kind.startswith("op:") and k < len(slots) - 1):  # the apply form reads only extra
                bound.append(bind(table(key, j), sort))
            j += 1
        values.append(Op(kind[3:], bound[:-1], bound[-1], held) if kind.startswith("op:") else bound[0])
    return values


def has_typed_form(aux: Aux | None) -> bool:
    """Whether a rule with `aux` needs a second, `apply`-held variant: an `op:` of a primitive with typed
    fields, whose params may not fit them (np.int64 values, say). Without fields they always fit."""
    return aux is not None and any(k.startswith("op:") and k[3:] in SPECS and SPECS[k[3:]].fields
                                   for k in aux.slots)


class AuxStore:
    """The builder's side: computes aux values, stores each distinct set once, returns its key."""

    def __init__(self, loader):
        self.loader, self.enc = loader, loader.enc
        self._seen: set[str] = set()

    def key(self, prefix: str, aux: Aux | None, *context, avals: list | None = None) -> tuple[eb.Lit, bool]:
        """The key of `aux`'s values for `context`, and whether an `op:` value needs the apply form.
        `avals`: the operand avals an `op:` node gets, so that its default params print as ""."""
        if aux is None:
            return egg_str(""), False
        values = tuple(aux.fn(*context))
        kinds = aux.slots
        if len(values) != len(kinds):
            raise ValueError(f"{prefix}: aux gave {len(values)} values for kinds {aux.kinds!r}")
        rows, held = [], False
        for kind, value in zip(kinds, values, strict=True):
            if kind.startswith("op:"):
                prim, params = kind[3:], dict(value)
                spec = SPECS.get(prim)
                fitted = encode_fields(spec, params) if spec is not None else None
                if fitted is None:
                    held = held or spec is not None
                    rows += [("str", None)] * (len(table_slots(kind)) - 1)
                    rows.append(("str", self.enc.extra_key(prim, params)))
                else:
                    fields, rest = fitted
                    rows += list(zip(table_slots(kind)[:-1], fields, strict=True))
                    rows.append(("str", self.enc.extra_key(prim, rest, avals)))
            elif kind.startswith("extra:"):
                rows.append(("str", self.enc.extra_key(kind[6:], dict(value))))
            else:
                rows.append((kind, value))
        text = f"{prefix}|{values!r}"
        if text not in self._seen:
            self._seen.add(text)
            for j, (slot, value) in enumerate(rows):
                if value is not None:
                    self.loader.actions.append(_aux_set(text, j, slot, value))
        return egg_str(text), held


def _aux_set(key: str, j: int, slot: str, value) -> eb.Set:
    if slot == "ints":
        table, lit = "aux_ints", egg_ints(tuple(int(v) for v in value))
    elif slot == "int":
        table, lit = "aux_int", egg_int(int(value))
    else:
        table, lit = "aux_str", egg_str(value if isinstance(value, str) else str(value))
    return eb.Set(eb.PanicSpan(), table, [egg_str(key), egg_int(j)], lit)
