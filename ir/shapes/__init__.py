"""Shape/dtype rules, one module per primitive family; importing this registers them all."""

from ir.shapes import arrays, control, dot_conv, elementwise, fft, indexing, linalg, random, reductions  # noqa: F401
