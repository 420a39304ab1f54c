"""The AD rule tables, one module per primitive family (see `transforms.ad.rule` for the entry kinds).
Each family module holds an `ADBook` named `A`; `zeros` holds the symbolic-zero rules."""

from transforms.ad.rules import binary, unary, zeros

FAMILIES = [unary, binary]


def rule_list() -> list:
    return [*zeros.RULES, *(r for module in FAMILIES for r in module.A.rules)]
