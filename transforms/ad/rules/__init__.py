"""The AD rule tables, one module per primitive family (see `transforms.ad.rule` for the entry kinds).
Each family module holds an `ADBook` named `A`; `zeros` holds the symbolic-zero rules. A new family module is
added here, to the imports and to `FAMILIES`, in rule order."""

# Imported in rule order: each family fills the JVP/VJP tables of transforms.ad.rule as it loads.
# isort: off
from transforms.ad.rules import zeros
from transforms.ad.rules import (unary, binary, shape, reduce, reduce_generic, indexing, dot_conv, linalg,
                                 linalg_decomp, fft, random)
# isort: on
from transforms import arglists

FAMILIES = (unary, binary, shape, reduce, reduce_generic, indexing, dot_conv, linalg, linalg_decomp, fft, random)


def rule_list() -> list:
    """The symbolic-zero rules, every family's rules, then the list functions some of them build with."""
    return [*zeros.RULES, *(r for module in FAMILIES for r in module.A.rules), *arglists.RULES]
