"""Catalogue rows of the array-building and reshaping primitives: iota, reshape, transpose, broadcasts,
concatenation, padding, splitting (shape rules: ir/shapes/arrays.py).

The operand counts are those of static shapes: iota, reshape and broadcast_in_dim also take dynamic
shape operands in JAX's dynamic-shape mode, which the shape rules accept and nothing else uses."""

from __future__ import annotations

from ir.primitives import NO_OPERANDS, define, variadic
from ir.primitives.schema import ANY, DTYPE, INTS, NAT, PAIRS, Param, defaulting, field

define("iota", operands=0, params={"dtype": DTYPE, "shape": INTS, "dimension": NAT, "sharding": ANY},
       traits={"data_movement", "zero_derivative", "term"}, gaps={"batching": NO_OPERANDS})
define("reshape", operands=1, traits={"data_movement", "metadata_only", "term"}, linear_in=(0,),
       params={"new_sizes": field(INTS), "dimensions": Param("ints", optional=True, default=None),
               "sharding": defaulting(ANY, None)})
define("transpose", operands=1, params={"permutation": field(INTS)}, traits={"data_movement", "term"},
       linear_in=(0,))
define("broadcast_in_dim", operands=1, traits={"data_movement", "term"}, linear_in=(0,),
       params={"shape": field(INTS), "broadcast_dimensions": field(INTS),
               "sharding": defaulting(ANY, None, printed=False)})
define("squeeze", operands=1, params={"dimensions": field(INTS)}, traits={"data_movement", "metadata_only", "term"},
       linear_in=(0,))
define("concatenate", operands=variadic(1), params={"dimension": NAT}, traits={"data_movement", "term"})
define("stack", operands=variadic(1), params={"axis": NAT}, traits={"data_movement", "term"})
define("tile", operands=1, params={"reps": INTS}, traits={"data_movement", "term"}, linear_in=(0,))
define("pad", operands=2, params={"padding_config": PAIRS}, traits={"data_movement", "term"})
define("rev", operands=1, params={"dimensions": field(INTS)}, traits={"data_movement", "term"}, linear_in=(0,))
define("split", operands=1, results=variadic(1), params={"sizes": INTS, "axis": NAT},
       traits={"data_movement", "term"})
define("unstack", operands=1, results=variadic(0), params={"axis": NAT}, traits={"data_movement", "term"})
define("device_put", operands=variadic(0), results=variadic(0),
       params={"devices": ANY, "srcs": ANY, "copy_semantics": ANY},
       traits={"data_movement", "metadata_only", "term"})
