"""Shape/dtype rules, one module per primitive family; importing this registers them all."""

import importlib

_MODULES = ("elementwise", "arrays", "reductions", "indexing", "dot_conv", "control", "linalg", "fft", "random")

for _name in _MODULES:
    try:
        importlib.import_module(f"ir.shapes.{_name}")
    except ModuleNotFoundError as e:  # a family module not written yet
        if e.name != f"ir.shapes.{_name}":
            raise
