"""The rules every transform program saturates before the algebra: the AD and batching rules.

One prelude for all transforms, so a process registers the rules once (registering ~1,000 egglog
rules costs seconds; the rules of one transform never match the other's nodes)."""

from __future__ import annotations

from functools import cache

from rewrites.rule import Rule, check_rules


@cache
def transform_rules() -> tuple[Rule, ...]:
    """Every AD rule (JVP, VJP, symbolic zeros) and every batching rule, in module order."""
    from transforms.ad.rules import rule_list as ad_rule_list
    from transforms.batching.rules import rule_list as vmap_rule_list

    return tuple(check_rules([*ad_rule_list(), *vmap_rule_list()]))
