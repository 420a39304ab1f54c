"""The AD rule tables, one module per primitive family (see `transforms.ad.rule` for the entry kinds).
Each family module holds an `ADBook` named `A`; `zeros` holds the symbolic-zero rules."""

from importlib import import_module
from pathlib import Path

from transforms.ad.rules import zeros

_NAMES = ("unary", "binary", "shape", "reduce", "indexing", "dot_conv", "linalg", "linalg_decomp", "fft", "random",
          "control")
FAMILIES = [import_module(f"transforms.ad.rules.{n}") for n in _NAMES if (Path(__file__).parent / f"{n}.py").exists()]


def rule_list() -> list:
    return [*zeros.RULES, *(r for module in FAMILIES for r in module.A.rules)]
