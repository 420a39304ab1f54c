"""The batching rule table: one short entry per primitive and operand pattern, each an egglog rewrite of
a `vmap_of` node into primal-language terms with the batch axis first.

    V = VmapBook("reduce")
    V.elementwise("sin", "cos", math="f(x)[b] = f(x[b])")
    V.batch("reduce_sum", "b", lambda x, *, op: op(x), values=Values(lambda e: {
            "op": {**e.params, "axes": shifted(e.params["axes"])}}, op=node("reduce_sum")), math="sum over axes + 1")
    V.batch("dot_general", ("bu", "ub", "bb"), f, values=..., math=...)

How an equation's operands reach its rule (the primitive's policy, chosen by its entry):
    elementwise   the op is applied as it was (tag "prim:*") to operands prepared one by one: by
                  default (ops that broadcast size-1 axes) an unbatched operand of rank > 0 gets a
                  leading axis of size 1 (`lift:u`), a batched rank-0 operand among higher-rank ones
                  becomes (B, 1, ..., 1) (`lift:b`), unbatched scalars stay as they are, so unbatched
                  values are never broadcast to the batch size; ops that need equal shapes (select_n,
                  clamp, add_any) give their own `prepare(site, i)`.
    materialize   unbatched operands are broadcast to the batch size (`materialize:u`), all of them or
                  the leading ones the entry names (reduce: its operands, not its init values), then
                  the rule of the resulting pattern applies (tag "prim:bb..."): for variadic ops
                  (concatenate, sort, reduce), where a rule per operand pattern would not scale. A
                  letter and `*` stand for any number of such operands: an equation takes the rule of
                  its exact pattern ("bbub") if there is one, else "b*" (its broadcast operands) and
                  the runs of the others ("b*u*": reduce with unbatched init values)
    flags         one rule per operand pattern, `b` batched and `u` unbatched ("dot_general:bu"); a
                  pattern without a rule raises UnsupportedPrimitive naming it

A lambda gets the operands (batched ones with the batch axis at 0), then its values by keyword
(`transforms.rulebook.Values`, typed; `node(prim)` gives an `Op` building a `<prim>` node); it returns
the batched result, with the batch axis at 0 (a list of them for `results` > 1). A values function
gets a `Site`: the equation's params, its unbatched operand and result avals, which operands are
batched and the batch size.

Variadic primitives get one rule whatever their operand or result count, as the AD rules do: a
`variadic` rule matches the operands as one `Args` list and its lambda gets that list (`variadic_op`,
`variadic_result` build the op on it); an `each_result` rule serves every result, its tag ending
":out*": the node of result j holds j in front of the equation's values (one values list for all
results, so that they read one op node) and the lambda gets it as `index`; an `own` rule builds
result j from operand j alone (device_put), the node holding that operand only.

`V.cases(prim, flags, {name: f}, ...)` gives one pattern several rules, each guarded by the case its
values name (so no rule leaves an identity op behind); `V.variant(prim, flags, f, ...)` adds another
rewrite of an entry's nodes (a leaner form where a query can tell it applies); extraction picks among
the forms.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from egglog import String, eq, i64, i64Like, rewrite, var

from ir.core import ShapedArray
from ir.errors import UnsupportedPrimitive
from rewrites.rule import EXACT, Rule
from rewrites.terms import SPECS, Args, Arr, args_list, get
from transforms.batching.terms import vmap_of
from transforms.rulebook import (
    INT,
    INTS,
    STR,
    Op,
    Vals,
    Values,
    ValueType,
    collecting,
    dtype,
    node,
    params,
    require,
    shape,
    value_pattern,
)

__all__ = ["INT", "INTS", "STR", "Site", "Values", "VmapBook", "dtype", "moveaxis_perm", "node", "params", "require",
           "shape", "shifted", "variadic_op", "variadic_result"]


@dataclass(frozen=True)
class Site:
    """One batched equation, as a batching rule's values function sees it."""

    params: dict
    in_avals: list[ShapedArray]  # the operands' avals in the unbatched program
    out_avals: list[ShapedArray]
    batched: tuple[bool, ...]  # per operand
    size: int  # the batch size B

    @property
    def flags(self) -> str:
        return "".join("b" if b else "u" for b in self.batched)

    def batched_aval(self, i: int) -> ShapedArray:
        """Operand i's aval as the rule receives it (with the batch axis first if it is batched)."""
        a = self.in_avals[i]
        return with_batch(a, self.size) if self.batched[i] else a


def with_batch(aval: ShapedArray, size: int) -> ShapedArray:
    """`aval` with a batch axis of `size` first (the canonical position)."""
    return ShapedArray((size, *aval.shape), aval.dtype)


def shifted(axes: Sequence[int], by: int = 1) -> tuple[int, ...]:
    """Axes of the unbatched operand, numbered in the batched one (the batch axis first)."""
    return tuple(int(a) + by for a in axes)


def moveaxis_perm(rank: int, source: int, destination: int) -> tuple[int, ...]:
    """The transpose permutation taking axis `source` to position `destination`."""
    order = [k for k in range(rank) if k != source]
    order.insert(destination, source)
    return tuple(order)


@dataclass(frozen=True)
class VmapRule:
    primitive: str
    flags: str  # "*" (elementwise), or one letter per operand (a letter and `*`: any number of such operands)
    results: int  # > 1: one rule per result j, the tag ending ":out<j>" (a bound: unused results cost nothing)
    values: Values | None
    rules: tuple[Rule, ...] = field(repr=False)  # one per result
    each_result: bool = False  # one rule for every result: the tag ends ":out*", the node holds the index
    own: bool = False  # result j's node holds operand j alone

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.rules]


# One registry per property: batching entries by primitive then operand pattern, and how each
# primitive's unbatched operands are prepared (`elementwise`, `materialize` or `flags`).
BATCH: dict[str, dict[str, VmapRule]] = {}
POLICY: dict[str, str] = {}
MATERIALIZED: dict[str, Callable[[int], int]] = {}  # how many leading operands a `materialize` op broadcasts (all)
OPERAND_PREPARATION: dict[str, Callable[[Site, int], str | None]] = {}  # elementwise ops' own, by primitive
PREPARE: dict[str, VmapRule] = {}  # the operand preparations: lift:u, lift:b, fill:b, materialize:u


def broadcasting_preparation(site: Site, i: int) -> str | None:
    """Operand i of an op that broadcasts rank-0 operands and size-1 axes (the default)."""
    rank, out_rank = site.in_avals[i].ndim, site.out_avals[0].ndim
    if site.batched[i]:
        return "lift:b" if rank == 0 and out_rank > 0 else None
    return "lift:u" if rank > 0 else None


def broadcast_count(prim: str, count: int) -> int:
    """How many leading operands of a `materialize` op of `count` operands are broadcast when unbatched."""
    return MATERIALIZED[prim](count) if prim in MATERIALIZED else count


def batch_rule(prim: str, flags: str) -> VmapRule:
    found = BATCH.get(prim)
    if not found:
        raise UnsupportedPrimitive(prim, "batching", "transforms/batching/rules")
    policy, any_count = POLICY[prim], None
    if policy == "elementwise":
        key = "*"
    elif policy == "materialize":
        k = broadcast_count(prim, len(flags))
        key, any_count = "b" * k + flags[k:], "b*" + re.sub(r"(.)\1*", r"\1*", flags[k:])
    else:
        key = flags
    entry = found.get(key) or found.get(any_count)
    if entry is None:
        raise UnsupportedPrimitive(prim, f"batching with operands {flags} (b batched, u unbatched)",
                                   "transforms/batching/rules")
    return entry


def variadic_op(op: Op, xs: Args) -> Arr:
    """`op` applied to a variadic rule's operand list."""
    return op.of_args(xs)


def variadic_result(op: Op, j: i64Like, xs: Args) -> Arr:
    """Result j of the multi-result `op` applied to a variadic rule's operand list."""
    return get(op.of_args(xs), j)


def tag(prim: str, flags: str, j: int | str | None) -> str:
    """The rule string of a `vmap_of` node (`j`: the result, "*" for any)."""
    return ":".join([prim, flags, *([f"out{j}"] if j is not None else [])])


class VmapBook:
    """Builds the batching entries of one module; `rules` are its egglog rules (for the engine)."""

    def __init__(self, category: str):
        self.category = category
        self.entries: list[VmapRule] = []
        self.expansions: list[Rule] = []

    @property
    def rules(self) -> list[Rule]:
        return [*(r for e in self.entries for r in e.rules), *self.expansions]

    def expansion(self, name: str, math: str, eggs: Callable[[], tuple], *, trigger: str) -> None:
        """The rules expanding a list function this module's right-hand sides build with (a start matrix from a
        list of start indices, say), built once `trigger` (an egglog name their queries need) is present."""
        self.expansions.append(Rule.lazy(name, "lists", EXACT, math, eggs, trigger=trigger))

    def elementwise(self, *prims: str, math: str, arity: int | None = None, results: int = 1,
                    variadic: bool = False, prepare: Callable[[Site, int], str | None] | None = None) -> None:
        """The op applied as it was to the prepared operands (see the module docstring), with `arity`
        operands (default the primitive's typed-term arity, which a multi-result primitive lacks: it names
        its count) or any count (`variadic`), one rule per result (`results` > 1: result j of the op).
        `prepare(site, i)` names operand i's preparation (a `PREPARE` entry) or None, for ops that do not
        broadcast size-1 axes."""
        def same(*operands, op):
            if variadic:
                return variadic_op(op, operands[0])
            return op(*operands) if results == 1 else [op.result(j, *operands) for j in range(results)]

        for prim in prims:
            n = None if variadic else arity or SPECS[prim].arity
            self._policy(prim, "elementwise")
            if prepare is not None:
                OPERAND_PREPARATION[prim] = prepare
            same_op = Values(lambda e: {"op": e.params}, op=node(prim))
            rules = self._rules(prim, "*", n, results, same_op, same, math, "")
            self._enter(VmapRule(prim, "*", results, same_op, tuple(rules)))

    def batch(self, prim: str, flags: str | Sequence[str] | None, f: Callable, *, math: str,
              values: Values | None = None, results: int = 1, each_result: bool = False,
              materialize: bool | Callable[[int], int] = False, arity: int | None = None, variadic: bool = False,
              own: bool = False) -> None:
        """`f(*operands, **values)` for each operand pattern in `flags`. With `materialize`, the unbatched
        operands (or the first `materialize(count)` of `count`) are broadcast first; `flags` None: one
        rule with every operand batched, `arity` operands (default the lambda's operand count) or any
        count ("b*"). `variadic`: f gets the operands as one `Args` list (patterns with a `*`); `own`: f
        gets result j's own operand j. `each_result`: one rule for every result, f gives result `index`
        (a keyword argument)."""
        self._policy(prim, "materialize" if materialize else "flags")
        if callable(materialize):
            MATERIALIZED[prim] = materialize
        if flags is None and (variadic or own):
            patterns = ["b*"]
        elif flags is None:
            positional = [p for p in inspect.signature(f).parameters.values()
                          if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            patterns = ["b" * (arity or len(positional))]
        else:
            patterns = [flags] if isinstance(flags, str) else list(flags)
        for pattern in patterns:
            n = 1 if own else None if variadic else len(pattern)
            rules = self._rules(prim, pattern, n, "*" if each_result else results, values, f, math, "")
            self._enter(VmapRule(prim, pattern, results, values, tuple(rules), each_result, own))

    def cases(self, prim: str, flags: str, cases: dict[str, Callable], *, fn: Callable, math: str,
              arity: int | None = None, **types: ValueType) -> None:
        """Several rules for one operand pattern, one per case: `fn(site)` returns the values of `types` by
        name and the case's name under "case"; the rule of case `name` fires only where the site's case is
        `name` and builds `cases[name](*operands, **values)` (so that no rule leaves an identity op behind)."""
        names = list(cases)

        def computed(e: Site):
            found = fn(e)
            if found["case"] not in cases:
                raise UnsupportedPrimitive(prim, f"batching case {found['case']!r} of operands {flags}",
                                           "transforms/batching/rules")
            return {**found, "case": names.index(found["case"])}

        values = Values(computed, case=INT, **types)
        n = arity or len(flags)
        rules = []
        for k, (name, f) in enumerate(cases.items()):
            def build(*xs, case, f=f, k=k, **vals):
                require(eq(case).to(i64(k)))
                return f(*xs, **vals)

            rules += self._rules(prim, flags, n, 1, values, build, f"{math} ({name})", f"-{name}")
        self._policy(prim, "flags")
        self._enter(VmapRule(prim, flags, 1, values, tuple(rules)))

    def variant(self, prim: str, flags: str, f: Callable, *, name: str, math: str) -> None:
        """Another rewrite of the nodes an existing entry rewrites (same tag, same values): a leaner
        form where a query can tell it applies (e.g. an operand that only materializes an unbatched
        value). The e-graph holds both forms; extraction picks."""
        entry = BATCH[prim][flags]
        n = 1 if entry.own else None if flags.endswith("*") else len(flags)
        more = self._rules(prim, flags, n, "*" if entry.each_result else entry.results, entry.values, f, math,
                           f"-{name}")
        grown = replace(entry, rules=entry.rules + tuple(more))
        BATCH[prim][flags] = grown
        self.entries = [grown if e is entry else e for e in self.entries]

    def prepare(self, name: str, f: Callable, *, values: Values, math: str) -> None:
        """An operand preparation (`lift:u`, ...): a one-operand rule applied before the primitive's."""
        prim, flags = name.split(":")
        entry = VmapRule(prim, flags, 1, values, tuple(self._rules(prim, flags, 1, 1, values, f, math, "")))
        PREPARE[name] = entry
        self.entries.append(entry)

    def _policy(self, prim: str, policy: str) -> None:
        if POLICY.setdefault(prim, policy) != policy:
            raise ValueError(f"{prim}: batching entries disagree on the policy ({POLICY[prim]} vs {policy})")

    def _enter(self, entry: VmapRule) -> None:
        slots = BATCH.setdefault(entry.primitive, {})
        if entry.flags in slots:
            raise ValueError(f"batching rule for {entry.primitive} with operands {entry.flags} is defined twice")
        slots[entry.flags] = entry
        self.entries.append(entry)

    def _rules(self, prim, flags, n, results, values, f, math, suffix) -> list[Rule]:
        """The rules of one entry: per result j (`results` a count, or "*": one rule for any result). `n`
        operands, or None: one `Args` list of any length."""
        slots = ["*"] if results == "*" else list(range(results)) if results > 1 else [None]
        return [self._rule(prim, flags, n, values, f, math, j, suffix) for j in slots]

    def _rule(self, prim, flags, n, values, f, math, j, suffix) -> Rule:
        """One rule, built when a program first needs it (`Rule.lazy`)."""
        node_tag = tag(prim, flags, j)

        def egg():
            pattern, vals = value_pattern(values)
            if j == "*":
                vals["index"] = var("index", i64)
                pattern = Vals.of_int(vals["index"], pattern)
            xs = [var("xs", Args)] if n is None else [var(f"x{i}", Arr) for i in range(n)]
            node = vmap_of(String(node_tag), pattern, xs[0] if n is None else args_list(xs))
            with collecting() as conditions:
                rhs = f(*xs, **vals)
                if isinstance(rhs, (list, tuple)):
                    rhs = rhs[j]
            return (rewrite(node).to(rhs, *conditions),)

        parts = [prim, _pattern_name(flags), *([{"*": "out-any"}.get(j, f"out{j}")] if j is not None else [])]
        name = ("vmap-" + "-".join(parts) + suffix).replace("_", "-").lower()
        return Rule.lazy(name, "vmap", EXACT, math, egg, trigger=f"vmap_of:{node_tag}")


def _pattern_name(flags: str) -> str:
    """A rule name's part for an operand pattern: "any" ("*"), "all-b-all-u" ("b*u*"), or the letters."""
    if flags == "*":
        return "any"
    return "-".join(f"all-{kind}" for kind in flags[::2]) if flags.endswith("*") else flags
