"""Catalogue rows of the indexing primitives: slices, gathers, scatters, sort and top-k
(shape rules: ir/shapes/indexing.py)."""

from __future__ import annotations

from ir.primitives import define, variadic
from ir.primitives.schema import ANY, BOOL, ENUM, INT, INTS, NAT, RECORD, Param, field

_SCATTER = {"dimension_numbers": RECORD, "indices_are_sorted": BOOL, "unique_indices": BOOL, "mode": ENUM,
            "update_jaxpr": Param("jaxpr", optional=True, required=False), "update_consts": ANY}

define("slice", operands=1, traits={"data_movement", "region_read", "term"}, linear_in=(0,),
       params={"start_indices": field(INTS), "limit_indices": field(INTS),
               "strides": Param("ints", optional=True, default=None)})
define("dynamic_slice", operands=variadic(1), params={"slice_sizes": INTS},
       traits={"data_movement", "region_read", "term"})
define("dynamic_update_slice", operands=variadic(2), traits={"data_movement", "term"})
define("gather", operands=2, traits={"data_movement", "region_read", "term"},
       params={"dimension_numbers": RECORD, "slice_sizes": INTS, "indices_are_sorted": BOOL, "unique_indices": BOOL,
               "mode": ENUM, "fill_value": Param("float", optional=True)})
define("scatter", operands=3, params=_SCATTER, traits={"data_movement", "scalar_combiner", "term"})
define("scatter-add", operands=3, params=_SCATTER, traits={"scalar_combiner", "term"})
define("scatter-sub", operands=3, params=_SCATTER, traits={"scalar_combiner", "term"})
define("scatter-mul", operands=3, params=_SCATTER, traits={"scalar_combiner", "term"})
define("scatter-min", operands=3, params=_SCATTER, traits={"scalar_combiner", "term"})
define("scatter-max", operands=3, params=_SCATTER, traits={"scalar_combiner", "term"})
define("sort", operands=variadic(1), results=variadic(1), params={"dimension": NAT, "is_stable": BOOL, "num_keys": NAT},
       traits={"term"})
define("top_k", operands=1, results=2, params={"k": NAT, "axis": Param("int", required=False)}, traits={"term"})
define("approx_top_k", operands=1, results=2,
       params={"k": NAT, "reduction_dimension": INT, "recall_target": Param("finite"), "is_max_k": BOOL,
               "reduction_input_size_override": INT, "aggregate_to_topk": BOOL}, traits={"term"})
