"""The batching rule tables, one module per primitive family (see `transforms.batching.rule` for the entry
kinds). Each module holds a `VmapBook` named `V`; `prepare` holds the operand preparations. A new family module
is added here, to the imports and to `FAMILIES`, in rule order."""

# Imported in rule order: each family fills the tables of transforms.batching.rule as it loads.
# isort: off
from transforms.batching.rules import prepare, elementwise, shape, reduce, indexing, dot_conv, linalg, fft, random
# isort: on

FAMILIES = (prepare, elementwise, shape, reduce, indexing, dot_conv, linalg, fft, random)


def rule_list() -> list:
    return [r for module in FAMILIES for r in module.V.rules]
