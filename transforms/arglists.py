"""List functions on operand lists (`Args`), for transform rules whose right-hand side is a list as long as
the equation's operand list, whatever its length:

    snoc(xs, y)              xs ++ [y]                     (sort's JVP: the operands and an iota, sorted together)
    onehot(xs, k, hot, cold) [cold, .., hot at k, .., cold], as long as xs   (select_n's transpose)

A rule's pattern matches an operand list as one `Args` variable (or its first operands and the rest); these
functions let its right-hand side build from that list. Each is an unextractable egglog function that its rules
expand into `cons`/`nil` one element per iteration, in the same prelude that runs the transform rules, so the
e-class of `snoc(xs, y)` ends up holding the plain list, which is what extraction and the e-graph view read
(they never see these functions). A transform adds `RULES` to its own rule list.
"""

from __future__ import annotations

from egglog import function, i64, i64Like, ne, rewrite, var

from rewrites.rule import EXACT, Rule
from rewrites.terms import Args, Arr


@function(egg_fn="args_snoc", unextractable=True)
def snoc(xs: Args, last: Arr) -> Args: ...


@function(egg_fn="args_onehot", unextractable=True)
def onehot(xs: Args, k: i64Like, hot: Arr, cold: Arr) -> Args: ...


def _snoc_rules() -> tuple:
    x, y = var("x", Arr), var("y", Arr)
    rest = var("rest", Args)
    return (rewrite(snoc(Args.nil(), y)).to(Args.cons(y, Args.nil())),
            rewrite(snoc(Args.cons(x, rest), y)).to(Args.cons(x, snoc(rest, y))))


def _onehot_rules() -> tuple:
    x, hot, cold = var("x", Arr), var("hot", Arr), var("cold", Arr)
    rest, k = var("rest", Args), var("k", i64)
    return (rewrite(onehot(Args.nil(), k, hot, cold)).to(Args.nil()),
            rewrite(onehot(Args.cons(x, rest), i64(0), hot, cold)).to(Args.cons(hot, onehot(rest, i64(-1), hot, cold))),
            rewrite(onehot(Args.cons(x, rest), k, hot, cold)).to(Args.cons(cold, onehot(rest, k - 1, hot, cold)),
                                                                 ne(k).to(i64(0))))


RULES: tuple[Rule, ...] = (
    Rule.lazy("args-snoc", "lists", EXACT, "snoc([], y) = [y]; snoc(x : xs, y) = x : snoc(xs, y)", _snoc_rules,
              trigger="args_snoc"),
    Rule.lazy("args-onehot", "lists", EXACT,
              "onehot(xs, k, h, c) = [c if j != k else h for j, _ in enumerate(xs)]", _onehot_rules,
              trigger="args_onehot"),
)
