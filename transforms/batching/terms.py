"""The batching part of the term language: one node per batched equation result.

    vmap_of(rule, values, operands)   the batched value of one equation result: `rule` names the
                                   primitive, which operands carry the batch axis and the result
                                   ("add:*", "dot_general:bu", "sort:bb:out1"), `operands` are the
                                   operand terms (batched ones with the batch axis at 0, the others
                                   as in the unbatched program), `values` the rule's values
                                   (`transforms.rulebook.Vals`)

A batched value always has the batch axis first (the canonical position): rules move axes in and out
as a primitive needs, and the algebra removes transposes that cancel. Nodes are keyed by operand
values, as the AD nodes are, and are unextractable: one rule per primitive and operand pattern
rewrites each into primal-language terms (`transforms.batching.rules`).
"""

from __future__ import annotations

from functools import cache

from egglog import StringLike, function

from rewrites.terms import Args, Arr, args_list, declare
from transforms.rulebook import Vals


@function(egg_fn="vmap_of", unextractable=True)
def vmap_of(rule: StringLike, values: Vals, operands: Args) -> Arr: ...


def declare_vmap_terms(egraph) -> None:
    """Declare the batching constructor to `egraph` without adding nodes."""
    declare(egraph, _uses, "_eqjax_vmap_declared")


@cache
def _uses() -> tuple:
    return (vmap_of("", Vals.nil(), args_list([Arr.inp(0)])),)
