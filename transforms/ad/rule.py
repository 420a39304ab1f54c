"""The AD rule tables: one short entry per primitive, each an egglog rewrite of a `jvp_of`/`vjp_of` node.

    A = ADBook("elementwise")
    A.linear("sin", 0, lambda g, x, ans: T.mul(g, T.cos(x)), math="d sin x = cos x dx")
    A.vjp("transpose", 0, lambda ct, x, ans, *, inverse: T.transpose(ct, inverse),
          values=Values(lambda p, ins, outs: {"inverse": argsort(p["permutation"])}, inverse=INTS), math="...")

Entry kinds (the lambda's arguments: the seed, the operands, the result(s), then the values by keyword):
    linear(prim, i, f)   operand i's share of the tangent is f(g, ...), linear in g; f is its own
                         transpose (elementwise: a diagonal map), so it is also the VJP of operand i
    jvp(prim, i, f)      operand i's share of the tangent only
    vjp(prim, i, f)      operand i's cotangent contribution from the result's cotangent
    jvp_whole(prim, f)   all results' tangents from all operand tangents (zero ones instantiated as
                         `zero`), for JVPs that do not split by operand (select_n, sort, ...);
                         f(tangents, primals, outs, **values) returns one term per result
    vjp_whole(prim, i, f) operand i's contribution from every result's cotangent (multi-result ops),
                         f(cts, primals, outs, **values)
    jvp_linear(prim, is)  the op is linear in those operands: the op itself applied to the tangent
    add(...)             the general form the others are made of (several results, several seeds, any
                         operand "*" or result "out*" of a variadic primitive, lists matched whole or
                         as their first elements and the rest, `Leading(k)`)
Results that never carry a tangent (floor, sign, comparisons, argmax, ...) need no entry: the builder skips
the primitives with the catalogue trait `zero_derivative` (ir/primitives).
Keywords: `when=` (facts a rule's query adds: a dispatch on dtypes), `variant=` (several rules of one
slot); inside a lambda `require(fact)`. A variadic primitive's entries are `add`s matching its lists whole or
by their first elements (`Leading`), one rule whatever the count; where a right-hand side needs a list as long
as the operands', it builds it with list functions the prelude expands (`transforms.arglists`, `expansion`).

What a rule needs beyond the operands' values (a kept-axes list, an inverse permutation, the params of a
node it builds) the builder computes from the equation and the node carries as typed children: `values=`
declares each value's type once (`INTS` Vec[i64], `INT` i64, `STR` String, `params(prim)` a params dict
for a `<prim>` node the rule builds, one value per keyword field, passed on as `**value`) with a function
of (params, operand avals, result avals) giving them by name (and the slot's index for a "*"/"out*"
entry); the rule's left-hand side matches them and its lambda takes them as keyword arguments. Every rule
of one slot reads the same values (one node serves them). The node of a "*"/"out*" entry holds the slot's
index in front of its values, and the lambda gets it as `index`: results that read the same values then
share one values list, so a params value holding a jaxpr (reduce's) is written once, not once per result.
`shape(x)`, `dtype(x)` and `zeros_like(x)` read the shape analysis in the rule's query, for a rule's
operands, results and seeds only: on a term the rule itself builds they add a fact that never holds (the
analysis has not seen that term when the query runs), and the rule silently never fires; what such a term
needs comes from the values.

Which way reverse mode goes: the builder (`transforms.ad.build`) makes one `vjp_of` node per use of a
value from the program's def-use structure and sums a value's contributions once (JAX's
`backward_pass`); the per-primitive VJP entries here rewrite each node. Top-down `vjp(e, ct)` rules
re-derive shared values along every path and explode on chains of diamonds (EGGLOG-NOTES.md).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from egglog import String, eq, i64, rewrite, var

from ir.errors import UnsupportedPrimitive
from ir.primitives import primitives_with
from rewrites.rule import EXACT, Rule
from rewrites.terms import CONSTRUCTORS, SPECS, Args, Arr, args_list
from transforms.ad.terms import jvp_of, vjp_of, zero
from transforms.rulebook import (
    INT,
    INTS,
    STR,
    Vals,
    Values,
    collecting,
    dtype,
    params,
    require,
    shape,
    value_pattern,
)

__all__ = ["INT", "INTS", "STR", "ADBook", "Leading", "Values", "dtype", "params", "require", "shape", "zeros_like"]


@dataclass(frozen=True)
class ADRule:
    """One AD table entry: `mode` jvp|vjp, `slot` the operand index ("0") or result ("out0"), or any operand
    ("*") or result ("out*") of a variadic primitive (its values get the index); `seeds` which seeds the
    builder gives the node: "one" (the operand's tangent, the result's cotangent), "all" (every result's
    cotangent or operand's tangent, zeros instantiated) or "own" (the tangent of the operand, or cotangent of
    the result, with the slot's index: an op that passes each operand through to the same result)."""

    mode: str
    primitive: str
    slot: str
    seeds: str
    values: Values | None
    rule: Rule = field(repr=False)

    @property
    def name(self) -> str:
        return self.rule.name

    @property
    def tag(self) -> str:
        """The rule string held in the `jvp_of`/`vjp_of` node."""
        return f"{self.primitive}:{self.slot}"


# One registry per property: JVP entries by primitive then slot, VJP the same. The primitives whose results
# have zero derivative everywhere they are defined are the catalogue's trait.
JVP: dict[str, dict[str, ADRule]] = {}
VJP: dict[str, dict[str, ADRule]] = {}
ZERO_DERIVATIVE: frozenset[str] = frozenset(primitives_with("zero_derivative"))


def jvp_rules(prim: str) -> dict[str, ADRule]:
    found = JVP.get(prim)
    if not found:
        raise UnsupportedPrimitive(prim, "JVP", "transforms/ad/rules")
    return found


def by_result(slots: dict[str, ADRule]) -> bool:
    """Whether a primitive's JVP entries (`slots`) give each result's tangent from all operand tangents
    ("out0", or "out*" for any result) rather than each operand's share."""
    return "out0" in slots or "out*" in slots


def vjp_rule(prim: str, operand: int) -> ADRule:
    slots = VJP.get(prim, {})
    found = slots.get(str(operand)) or slots.get("*")
    if found is None:
        raise UnsupportedPrimitive(prim, f"VJP (operand {operand})", "transforms/ad/rules")
    return found


def zeros_like(x: Arr) -> Arr:
    """A symbolic zero of x's shape and dtype."""
    return zero(shape(x), dtype(x))


# --- the book ---------------------------------------------------------------------------------------


class ADBook:
    """Builds the AD entries of one module; `rules` are its egglog rules as `Rule`s (for the engine)."""

    def __init__(self, category: str):
        self.category = category
        self.entries: list[ADRule] = []
        self.expansions: list[Rule] = []

    @property
    def rules(self) -> list[Rule]:
        return [*(e.rule for e in self.entries), *self.expansions]

    def expansion(self, name: str, math: str, eggs: Callable[[], tuple], *, trigger: str) -> None:
        """The rules expanding a list function this module's right-hand sides build with (as
        `transforms.arglists` does for the common ones), built once `trigger` (its egglog name) is present."""
        self.expansions.append(Rule.lazy(name, "lists", EXACT, math, eggs, trigger=trigger))

    # Keywords of the per-operand entries: `when(*operands, ans)` returns extra facts for the rule's query (a
    # dispatch on dtypes, say); `variant` names one of several rules for the same slot.

    def linear(self, prim: str, i: int, f: Callable, *, math: str, values: Values | None = None, **kw) -> None:
        self._per_operand("jvp", prim, i, f, math, values, **kw)
        self._per_operand("vjp", prim, i, f, math + " (diagonal: its own transpose)", values, **kw)

    def jvp(self, prim: str, i: int, f: Callable, *, math: str, values: Values | None = None, **kw) -> None:
        self._per_operand("jvp", prim, i, f, math, values, **kw)

    def vjp(self, prim: str, i: int, f: Callable, *, math: str, values: Values | None = None, **kw) -> None:
        self._per_operand("vjp", prim, i, f, math, values, **kw)

    def jvp_whole(self, prim: str, f: Callable, *, arity: int, results: int = 1, math: str,
                  values: Values | None = None) -> None:
        for j in range(results):
            self.add("jvp", prim, f"out{j}", "all", values, math, arity, results, arity,
                     lambda seeds, xs, outs, vals, j=j: f(seeds, xs, outs, **vals)[j])

    def vjp_whole(self, prim: str, i: int, f: Callable, *, arity: int, results: int, math: str,
                  values: Values | None = None) -> None:
        self.add("vjp", prim, str(i), "all", values, math, arity, results, results,
                  lambda seeds, xs, outs, vals: f(seeds, xs, outs, **vals))

    def jvp_linear(self, prim: str, operands: Sequence[int], *, math: str) -> None:
        """The op is linear in each operand listed: its tangent share is the op itself (same params)
        with the tangent in that operand's place (`reduce_sum(t)`, `gather(t, idx)`, `dot(t, y)`)."""
        spec = SPECS[prim]
        n = spec.arity
        fields = [var(f"f_{name}", kind.egg_type) for name, kind in spec.fields]

        def node(xs):
            return CONSTRUCTORS[prim](*xs, *fields)

        for i in operands:
            def f(g, *rest, i=i):
                xs, ans = list(rest[:n]), rest[n]
                require(eq(ans).to(node(xs)))
                return node([*xs[:i], g, *xs[i + 1:]])

            names = ["g", *(f"x{j}" for j in range(n)), "ans"]
            f.__signature__ = inspect.Signature([inspect.Parameter(p, inspect.Parameter.POSITIONAL_ONLY)
                                                 for p in names])
            self._per_operand("jvp", prim, i, f, math, None)

    def _per_operand(self, mode, prim, i, f, math, values, *, when: Callable | None = None,
                     variant: str = "") -> None:
        positional = [p for p in inspect.signature(f).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

        def build(seeds, xs, outs, vals):
            if when is not None:
                for fact in when(*xs, outs[0]):
                    require(fact)
            return f(seeds[0], *xs, outs[0], **vals)

        self.add(mode, prim, str(i), "one", values, math, len(positional) - 2, 1, 1, build,
                 suffix=f"-{variant}" if variant else "")

    def add(self, mode, prim, slot, seeds, values, math, n_primals, n_outs, n_seeds, build, suffix="") -> None:
        """The general entry the others are made of: a rule rewriting `<mode>_of("prim:slot", values...,
        primals, outs, seeds)` into `build(seeds, xs, outs, vals)`, `vals` the values by name. Each of
        `n_primals`, `n_outs`, `n_seeds` is a count (that many pattern variables, a list) or None (the whole
        list as one `Args` variable, any length: variadic primitives). `seeds`: see `ADRule`; `suffix`
        tells apart several rules of one slot. A count may also be `Leading(k)`: k pattern variables, then the rest
        of the list as one `Args` variable (dynamic_slice's operand and its start indices, select_n's predicate and
        its cases), whatever the list's length. The rule is built when a program first needs it (`Rule.lazy`)."""
        def egg():
            pattern, vals = value_pattern(values)
            if slot.endswith("*"):  # the node holds the slot's index in front of the values
                vals["index"] = var("index", i64)
                pattern = Vals.of_int(vals["index"], pattern)
            xs, outs, gs = (_operands(name, n) for name, n in (("x", n_primals), ("o", n_outs), ("g", n_seeds)))
            node = (jvp_of if mode == "jvp" else vjp_of)(
                String(f"{prim}:{slot}"), pattern, *(_as_args(v) for v in (xs, outs, gs)))
            with collecting() as conditions:
                rhs = build(gs, xs, outs, vals)
            return (rewrite(node).to(rhs, *conditions),)

        slot_name = {"*": "any", "out*": "out-any"}.get(slot, slot)
        name = f"{mode}-{prim}-{slot_name}{suffix}".replace("_", "-").lower()
        rule = Rule.lazy(name, mode, EXACT, math, egg, trigger=f"{mode}_of:{prim}:{slot}")
        entry = ADRule(mode, prim, slot, seeds, values, rule)
        table = JVP if mode == "jvp" else VJP
        first = table.get(prim, {}).get(slot)
        if first is not None and not suffix:
            raise ValueError(f"{mode} rule for {prim} slot {slot} is defined twice")
        if first is not None and first.values is not values:
            raise ValueError(f"{mode} rules for {prim} slot {slot} read different values (one node serves them all)")
        table.setdefault(prim, {}).setdefault(slot, entry)
        self.entries.append(entry)


@dataclass(frozen=True)
class Leading:
    """A list pattern of any length: its first `count` elements named, the rest one `Args` variable; the rule's
    lambda gets `[x0, .., x<count-1>, rest]`."""

    count: int


def _operands(name: str, n: int | Leading | None) -> list | Args:
    """`n` pattern variables, one `Args` variable for the whole list (n None), or the first `n.count` and the rest."""
    if n is None:
        return var(f"{name}s", Args)
    if isinstance(n, Leading):
        return [*(var(f"{name}{j}", Arr) for j in range(n.count)), var(f"{name}_rest", Args)]
    return [var(f"{name}{j}", Arr) for j in range(n)]


def _as_args(xs: list | Args) -> Args:
    if isinstance(xs, Args):
        return xs
    if xs and isinstance(xs[-1], Args):
        out = xs[-1]
        for x in reversed(xs[:-1]):
            out = Args.cons(x, out)
        return out
    return args_list(xs)
