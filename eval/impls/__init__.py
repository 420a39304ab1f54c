"""NumPy implementations, one module per primitive family; importing this registers them all."""

from importlib import import_module
from pathlib import Path

_NAMES = ("arrays", "control", "conversions", "dot_conv", "elementwise", "indexing", "reductions", "linalg", "fft",
          "random", "keys")
FAMILIES = [import_module(f"eval.impls.{n}") for n in _NAMES if (Path(__file__).parent / f"{n}.py").exists()]
