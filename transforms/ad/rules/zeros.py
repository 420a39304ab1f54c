"""Symbolic zeros: `zero(shape, dtype)` is a tangent or cotangent known to be 0 whatever the primal
values, so an op linear in it gives a zero even where its other operands are inf or nan (JAX's
`Zero`). The builder leaves most zeros out of the e-graph altogether; these rules clean up the ones a
JVP rule instantiates (the untaken branch of `select_n`, a multi-result op's unused cotangents)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from egglog import String, Vec, eq, i64, rule, union, var, vars_

from ir.primitives import PRIMITIVES, primitives_with
from rewrites.rule import EXACT, Rule
from rewrites.terms import CONSTRUCTORS, SPECS, Arr, T, args_list, dtype_of, shape_of
from transforms.ad.terms import ZEROS_PARAMS, zero

e, x, y, z = vars_("e x y z", Arr)
sh, sh2 = vars_("sh sh2", Vec[i64])
d, d2 = vars_("d d2", String)
EMPTY = Vec[i64].empty()
RULES: list[Rule] = []


def _rule(name: str, math: str, eggs: Callable[[], Iterable]) -> None:
    """A rule built when a program first holds a symbolic zero, which every one of them matches."""
    RULES.append(Rule.lazy(name, "zero", EXACT, math, lambda: tuple(eggs()), trigger="zero"))


_rule("zero-decodable", "a symbolic zero evaluates as a broadcast 0 (with no sharding param)", lambda: [
      rule(eq(z).to(zero(sh, d))).then(
          union(z).with_(T.broadcast_in_dim(Arr.scalar(0.0, d), sh, EMPTY, **ZEROS_PARAMS)))])

# Ops linear in the listed operand (the catalogue's `linear_in`, of the primitives with a typed constructor, which
# the rule's pattern needs): a zero there makes the result a zero of the result's aval.
LINEAR_IN = {p: PRIMITIVES[p].linear_in for p in primitives_with("term") if PRIMITIVES[p].linear_in}


def _linear_zero(prim: str, i: int):
    spec = SPECS[prim]
    fields = [var(f"f_{name}", kind.egg_type) for name, kind in spec.fields]
    xs = [var(f"x{j}", Arr) for j in range(spec.arity)]
    xs[i] = zero(sh, d)
    return rule(eq(e).to(CONSTRUCTORS[prim](*xs, *fields)), eq(sh2).to(shape_of(e)), eq(d2).to(dtype_of(e))
                ).then(union(e).with_(zero(sh2, d2)))


_rule("zero-through-linear", "f(.., 0, ..) = 0 for f linear in that operand (mul, dot, reduce_sum, ...)", lambda: [
      _linear_zero(prim, i) for prim, slots in sorted(LINEAR_IN.items()) for i in slots])
_rule("zero-add", "t + 0 = 0 + t = t (same shape)", lambda: [
      *(rule(eq(e).to(CONSTRUCTORS[p](x, zero(sh, d))), eq(shape_of(x)).to(sh)).then(union(e).with_(x))
        for p in ("add", "add_any", "sub")),
      *(rule(eq(e).to(CONSTRUCTORS[p](zero(sh, d), x)), eq(shape_of(x)).to(sh)).then(union(e).with_(x))
        for p in ("add", "add_any"))])
_rule("zero-sub-from", "0 - t = -t (same shape)", lambda: [
      rule(eq(e).to(T.sub(zero(sh, d), x)), eq(shape_of(x)).to(sh)).then(union(e).with_(T.neg(x)))])
_rule("zero-select", "select_n(p, 0, 0) = 0, select_n(p, 0, 0, 0) = 0", lambda: [
      rule(eq(e).to(T.select_n(args_list([x, *[zero(sh, d)] * n])))).then(union(e).with_(zero(sh, d)))
      for n in (2, 3)])
