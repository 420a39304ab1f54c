"""The AD rule tables: one short entry per primitive, each an egglog rewrite of a `jvp_of`/`vjp_of` node.

    A = ADBook("elementwise")
    A.linear("sin", 0, lambda g, x, ans: T.mul(g, T.cos(x)), math="d sin x = cos x dx")
    A.vjp("reduce_sum", 0, lambda ct, x, ans, shape, dims: T.broadcast_in_dim(ct, shape, dims),
          aux=Aux("ints ints", lambda p, ins, outs: (ins[0].shape, kept_axes(...))), math="...")

Entry kinds (the lambda's arguments: the seed, the operands, the result(s), then the aux values):
    linear(prim, i, f)   operand i's share of the tangent is f(g, ...), linear in g; f is its own
                         transpose (elementwise: a diagonal map), so it is also the VJP of operand i
    jvp(prim, i, f)      operand i's share of the tangent only
    vjp(prim, i, f)      operand i's cotangent contribution from the result's cotangent
    jvp_whole(prim, f)   all results' tangents from all operand tangents (zero ones instantiated as
                         `zero`), for JVPs that do not split by operand (select_n, sort, ...);
                         f(tangents, primals, outs, aux) returns one term per result
    vjp_whole(prim, i, f) operand i's contribution from every result's cotangent (multi-result ops),
                         f(cts, primals, outs, aux)
    jvp_linear(prim, is)  the op is linear in those operands: the op itself applied to the tangent
    zero_derivative(prims) results never carry a tangent (floor, sign, comparisons, argmax, ...)
    add(...)             the general form the others are made of (several results, several seeds)
Keywords: `when=` (facts a rule's query adds: a dispatch on dtypes), `arities=` (variadic primitives:
one rule per operand count), `variant=` (several rules of one slot); inside a lambda `require(fact)`.

Params a rule needs beyond the operands' values (a kept-axes list, an inverse permutation, the params
of a node it builds) come from `Aux`: a Python function of (params, operand avals, result avals)
whose values the builder stores in the `aux_*` tables under a key; the rule reads them in its query.
`shape(x)`, `dtype(x)` and `zeros_like(x)` read the shape analysis the same way, for a rule's operands,
results and seeds only: on a term the rule itself builds they add a fact that never holds (the
analysis has not seen that term when the query runs), and the rule silently never fires.

Which way reverse mode goes: the builder (`transforms.ad.build`) makes one `vjp_of` node per use of a
value from the program's def-use structure and sums a value's contributions once (JAX's
`backward_pass`); the per-primitive VJP entries here rewrite each node. Top-down `vjp(e, ct)` rules
re-derive shared values along every path and explode on chains of diamonds (EGGLOG-NOTES.md).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from egglog import String, eq, rewrite, var

from ir.errors import UnsupportedPrimitive
from rewrites.rule import EXACT, Rule
from rewrites.terms import CONSTRUCTORS, SPECS, Arr, apply, args_list
from transforms.ad.terms import jvp_of, vjp_of, zero
from transforms.rulebook import Aux, aux_values, collecting, dtype, require, shape, value_vars

__all__ = ["ADBook", "Aux", "dtype", "require", "shape", "zeros_like"]


@dataclass(frozen=True)
class ADRule:
    """One AD table entry: `mode` jvp|vjp, `slot` the operand index ("0") or result ("out0")."""

    mode: str
    primitive: str
    slot: str
    whole: bool
    aux: Aux | None
    rule: Rule = field(repr=False)

    @property
    def name(self) -> str:
        return self.rule.name

    @property
    def tag(self) -> str:
        """The rule string held in the `jvp_of`/`vjp_of` node."""
        return f"{self.primitive}:{self.slot}"


# One registry per property: JVP entries by primitive then slot, VJP the same, and the primitives
# whose results have zero derivative everywhere they are defined.
JVP: dict[str, dict[str, ADRule]] = {}
VJP: dict[str, dict[str, ADRule]] = {}
ZERO_DERIVATIVE: set[str] = set()


def jvp_rules(prim: str) -> dict[str, ADRule]:
    found = JVP.get(prim)
    if not found:
        raise UnsupportedPrimitive(prim, "JVP", "transforms/ad/rules")
    return found


def vjp_rule(prim: str, operand: int) -> ADRule:
    found = VJP.get(prim, {}).get(str(operand))
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

    @property
    def rules(self) -> list[Rule]:
        return [e.rule for e in self.entries]

    # Keywords of the per-operand entries: `when(*operands, ans)` returns extra facts for the rule's query (a
    # dispatch on dtypes, say); `arities` makes one rule per operand count for variadic primitives
    # (f then takes the operands as *args); `variant` names one of several rules for the same slot.

    def linear(self, prim: str, i: int, f: Callable, *, math: str, aux: Aux | None = None, **kw) -> None:
        self._per_operand("jvp", prim, i, f, math, aux, **kw)
        self._per_operand("vjp", prim, i, f, math + " (diagonal: its own transpose)", aux, **kw)

    def jvp(self, prim: str, i: int, f: Callable, *, math: str, aux: Aux | None = None, **kw) -> None:
        self._per_operand("jvp", prim, i, f, math, aux, **kw)

    def vjp(self, prim: str, i: int, f: Callable, *, math: str, aux: Aux | None = None, **kw) -> None:
        self._per_operand("vjp", prim, i, f, math, aux, **kw)

    def jvp_whole(self, prim: str, f: Callable, *, arity: int, results: int = 1, math: str,
                  aux: Aux | None = None, arities: Sequence[int] = ()) -> None:
        for n in arities or (arity,):
            for j in range(results):
                self.add("jvp", prim, f"out{j}", True, aux, math, n, results, n,
                          lambda seeds, xs, outs, vals, j=j: f(seeds, xs, outs, *vals)[j],
                          suffix=f"-{n}" if arities else "")

    def vjp_whole(self, prim: str, i: int, f: Callable, *, arity: int, results: int, math: str,
                  aux: Aux | None = None) -> None:
        self.add("vjp", prim, str(i), True, aux, math, arity, results, results,
                  lambda seeds, xs, outs, vals: f(seeds, xs, outs, *vals))

    def jvp_linear(self, prim: str, operands: Sequence[int], *, arity: int | None = None, math: str) -> None:
        """The op is linear in each operand listed: its tangent share is the op itself (same params)
        with the tangent in that operand's place (`reduce_sum(t)`, `gather(t, idx)`, `dot(t, y)`)."""
        spec = SPECS.get(prim)
        n = spec.arity if spec is not None and arity is None else arity
        if n is None:
            raise ValueError(f"jvp_linear({prim!r}) needs the arity of an `apply`-held primitive")
        fields = [var(f"f_{name}", kind.egg_type) for name, kind in spec.fields] if spec is not None else []
        extra = var("s", String)

        def typed(xs):
            return CONSTRUCTORS[prim](*xs, *fields, extra)

        def held(xs):
            return apply(String(prim), extra, args_list(xs))

        # A typed primitive whose params do not fit its fields (np.int64 values, say) is held by `apply`.
        forms = [(typed, ""), (held, "apply")] if spec is not None and arity is None else [(held, "")]
        for i in operands:
            for node, variant in forms:
                def f(g, *rest, i=i, node=node):
                    xs, ans = list(rest[:n]), rest[n]
                    require(eq(ans).to(node(xs)))
                    return node([*xs[:i], g, *xs[i + 1:]])

                names = ["g", *(f"x{j}" for j in range(n)), "ans"]
                f.__signature__ = inspect.Signature([inspect.Parameter(p, inspect.Parameter.POSITIONAL_ONLY)
                                                     for p in names])
                self._per_operand("jvp", prim, i, f, math, None, variant=variant)

    def zero_derivative(self, *prims: str) -> None:
        ZERO_DERIVATIVE.update(prims)

    def _per_operand(self, mode, prim, i, f, math, aux, *, when: Callable | None = None,
                     arities: Sequence[int] = (), variant: str = "") -> None:
        n_aux = len(aux.slots) if aux else 0
        counts = arities or (len(inspect.signature(f).parameters) - 2 - n_aux,)

        def build(seeds, xs, outs, vals):
            if when is not None:
                for fact in when(*xs, outs[0]):
                    require(fact)
            return f(seeds[0], *xs, outs[0], *vals)

        for n in counts:
            suffix = "".join(f"-{part}" for part in (variant, str(n) if arities else "") if part)
            self.add(mode, prim, str(i), False, aux, math, n, 1, 1, build, suffix=suffix)

    def add(self, mode, prim, slot, whole, aux, math, n_primals, n_outs, n_seeds, build, suffix="") -> None:
        """The general entry the others are made of: a rule rewriting `<mode>_of("prim:slot", key,
        primals, outs, seeds)` with `n_primals`, `n_outs`, `n_seeds` pattern variables into
        `build(seeds, xs, outs, aux_values)`; `suffix` tells apart several rules of one slot. The rule is
        built when a program first needs it (`Rule.lazy`)."""
        def egg():
            values = value_vars()
            xs = [var(f"x{j}", Arr) for j in range(n_primals)]
            outs = [var(f"o{j}", Arr) for j in range(n_outs)]
            seeds = [var(f"g{j}", Arr) for j in range(n_seeds)]
            node = (jvp_of if mode == "jvp" else vjp_of)(
                String(f"{prim}:{slot}"), *values, args_list(xs), args_list(outs), args_list(seeds))
            with collecting() as conditions:
                rhs = build(seeds, xs, outs, aux_values(values, aux))
            return (rewrite(node).to(rhs, *conditions),)

        name = f"{mode}-{prim}-{slot}{suffix}".replace("_", "-").lower()
        rule = Rule.lazy(name, mode, EXACT, math, egg, trigger=f"{mode}_of:{prim}:{slot}")
        entry = ADRule(mode, prim, slot, whole, aux, rule)
        table = JVP if mode == "jvp" else VJP
        if slot in table.get(prim, {}) and not suffix:
            raise ValueError(f"{mode} rule for {prim} slot {slot} is defined twice")
        table.setdefault(prim, {}).setdefault(slot, entry)
        self.entries.append(entry)
