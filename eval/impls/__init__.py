"""NumPy implementations, one module per primitive family; importing this registers them all."""

from eval.impls import arrays, control, conversions, dot_conv, elementwise, indexing, reductions  # noqa: F401
