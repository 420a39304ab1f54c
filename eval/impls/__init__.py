"""NumPy implementations, one module per primitive family; importing this registers them all (each family
module registers its primitives into `eval.registry` as it loads, in the order of `FAMILIES`). A new family
module is added here, to the imports and to `FAMILIES`."""

# Imported in registration order.
# isort: off
from eval.impls import (arrays, control, conversions, dot_conv, elementwise, indexing, reductions, linalg, fft,
                        random, keys)
# isort: on

FAMILIES = (arrays, control, conversions, dot_conv, elementwise, indexing, reductions, linalg, fft, random, keys)
