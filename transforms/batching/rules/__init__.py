"""The batching rule tables, one module per primitive family (see `transforms.batching.rule` for the entry
kinds). Each module holds a `VmapBook` named `V`; `prepare` holds the operand preparations."""

from importlib import import_module
from pathlib import Path

_NAMES = ("prepare", "elementwise", "shape", "reduce", "indexing", "dot_conv", "linalg", "fft", "random", "control")
FAMILIES = [import_module(f"transforms.batching.rules.{n}") for n in _NAMES
            if (Path(__file__).parent / f"{n}.py").exists()]


def rule_list() -> list:
    return [r for module in FAMILIES for r in module.V.rules]
