"""List functions on operand lists (`Args`), for transform rules whose right-hand side is a list as long as
the equation's operand list, whatever its length:

    snoc(xs, y)              xs ++ [y]                     (sort's JVP: the operands and an iota, sorted together)
    onehot(xs, k, hot, cold) [cold, .., hot at k, .., cold], as long as xs   (select_n's transpose)
    concat(xs, ys)           xs ++ ys
    take(xs, n), drop(xs, n) the first n elements, the others (reduce's JVP: operands, tangents, inits, theirs)

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


@function(egg_fn="args_concat", unextractable=True)
def concat(xs: Args, ys: Args) -> Args: ...


@function(egg_fn="args_take", unextractable=True)
def take(xs: Args, n: i64Like) -> Args: ...


@function(egg_fn="args_drop", unextractable=True)
def drop(xs: Args, n: i64Like) -> Args: ...


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


def _concat_rules() -> tuple:
    x, rest, ys = var("x", Arr), var("rest", Args), var("ys", Args)
    return (rewrite(concat(Args.nil(), ys)).to(ys),
            rewrite(concat(Args.cons(x, rest), ys)).to(Args.cons(x, concat(rest, ys))))


def _take_rules() -> tuple:
    x, xs, rest, n = var("x", Arr), var("xs", Args), var("rest", Args), var("n", i64)
    return (rewrite(take(xs, i64(0))).to(Args.nil()),
            rewrite(take(Args.cons(x, rest), n)).to(Args.cons(x, take(rest, n - 1)), ne(n).to(i64(0))))


def _drop_rules() -> tuple:
    x, xs, rest, n = var("x", Arr), var("xs", Args), var("rest", Args), var("n", i64)
    return (rewrite(drop(xs, i64(0))).to(xs),
            rewrite(drop(Args.cons(x, rest), n)).to(drop(rest, n - 1), ne(n).to(i64(0))))


RULES: tuple[Rule, ...] = (
    Rule.lazy("args-snoc", "lists", EXACT, "snoc([], y) = [y]; snoc(x : xs, y) = x : snoc(xs, y)", _snoc_rules,
              trigger="args_snoc"),
    Rule.lazy("args-onehot", "lists", EXACT,
              "onehot(xs, k, h, c) = [c if j != k else h for j, _ in enumerate(xs)]", _onehot_rules,
              trigger="args_onehot"),
    Rule.lazy("args-concat", "lists", EXACT, "concat([], ys) = ys; concat(x : xs, ys) = x : concat(xs, ys)",
              _concat_rules, trigger="args_concat"),
    Rule.lazy("args-take", "lists", EXACT, "take(xs, 0) = []; take(x : xs, n) = x : take(xs, n - 1)", _take_rules,
              trigger="args_take"),
    Rule.lazy("args-drop", "lists", EXACT, "drop(xs, 0) = xs; drop(x : xs, n) = drop(xs, n - 1)", _drop_rules,
              trigger="args_drop"),
)
