"""The AD part of the term language: linearization nodes and symbolic zeros.

    jvp_of(rule, values, primals, outs, seeds)   the tangent of one equation result, or one operand's
                                              share of it (`rule` = "sin:0", "select_n:out0", ...)
    vjp_of(rule, values, primals, outs, seeds)   one operand's cotangent contribution ("mul:1")
    zero(shape, dtype)                        a symbolic zero: a tangent or cotangent known to be 0
                                              whatever the primal values (not the literal 0)

`primals` are the equation's operand terms, `outs` its result terms, `seeds` the incoming tangents
(JVP) or output cotangents (VJP). The nodes are keyed by these values, never by the primal equation
node: once algebra merges two primal classes (`a*b` with `b*a`), a node saying "operand 0 of this
class" would merge unrelated contributions (EGGLOG-NOTES.md). Both kinds are unextractable; one
rule per primitive rewrites each into primal-language terms.

`values` (a `transforms.rulebook.Vals` list) are the values the node's rule computes in Python from the
equation's params and avals (`transforms.rulebook.Values`), typed, in the order the rule declares them:
the rule's left-hand side matches them, and equal values make equal nodes.

A `zero` is unioned with its decodable form, a broadcast of 0 whose `sharding` is left out (`ZEROS_PARAMS`:
distinct from any broadcast a program writes or a rule builds, which hold its default, so symbolic-zero
rules never see a literal 0; it prints the same, JAX's printer hides the sharding).
"""

from __future__ import annotations

from functools import cache

from egglog import StringLike, Vec, function, i64

from rewrites.terms import ABSENT, Args, Arr, args_list, declare
from transforms.rulebook import Vals

ZEROS_PARAMS = {"sharding": ABSENT}


@function(egg_fn="jvp_of", unextractable=True)
def jvp_of(rule: StringLike, values: Vals, primals: Args, outs: Args, seeds: Args) -> Arr: ...


@function(egg_fn="vjp_of", unextractable=True)
def vjp_of(rule: StringLike, values: Vals, primals: Args, outs: Args, seeds: Args) -> Arr: ...


@function(egg_fn="zero", unextractable=True)
def zero(shape: Vec[i64], dtype: StringLike) -> Arr: ...



def declare_ad_terms(egraph) -> None:
    """Declare the AD constructors to `egraph` without adding nodes. Idempotent."""
    declare(egraph, _uses, "_eqjax_ad_declared")


@cache
def _uses() -> tuple:
    xs = args_list([Arr.inp(0)])
    return jvp_of("", Vals.nil(), xs, xs, xs), vjp_of("", Vals.nil(), xs, xs, xs), zero(Vec[i64].empty(), "")
