"""Catalogue rows of the reductions: axis reductions, arg-reductions, variadic `reduce`, cumulative scans and
windowed reductions (shape rules: ir/shapes/reductions.py)."""

from __future__ import annotations

from ir.primitives import define, variadic
from ir.primitives.schema import ANY, BOOL, DTYPE, INTS, JAXPR, NAT, PAIRS, Param, defaulting, field

# reduce_sum's rule-built nodes get out_sharding=None; the others' are built without it (as before the
# catalogue: giving them the default too would change the programs rules build).
_AXES = {"axes": field(INTS), "out_sharding": ANY}
_ARG_AXES = {"axes": field(INTS), "index_dtype": DTYPE}
_CUMULATIVE = {"axis": field(NAT), "reverse": defaulting(BOOL, False)}
_WINDOW = {"window_dimensions": INTS, "window_strides": INTS, "padding": PAIRS,
           "base_dilation": Param("ints", required=False), "window_dilation": Param("ints", required=False)}

define("reduce_sum", operands=1, params={**_AXES, "out_sharding": defaulting(ANY, None)},
       traits={"reduction", "term"}, linear_in=(0,))
define("reduce_max", operands=1, params=_AXES, traits={"reduction", "term"})
define("reduce_min", operands=1, params=_AXES, traits={"reduction", "term"})
define("reduce_prod", operands=1, params=_AXES, traits={"reduction", "term"})
define("reduce_and", operands=1, params=_AXES, traits={"reduction", "zero_derivative", "term"})
define("reduce_or", operands=1, params=_AXES, traits={"reduction", "zero_derivative", "term"})
define("reduce_xor", operands=1, params=_AXES, traits={"reduction", "zero_derivative", "term"})
define("argmax", operands=1, params=_ARG_AXES, traits={"arg_reduction", "zero_derivative", "term"})
define("argmin", operands=1, params=_ARG_AXES, traits={"arg_reduction", "zero_derivative", "term"})
define("reduce", operands=variadic(2), results=variadic(1),
       params={"computation": ANY, "jaxpr": JAXPR, "dimensions": INTS}, traits={"scalar_combiner", "term"})

define("cumsum", operands=1, params=_CUMULATIVE, traits={"cumulative", "term"}, linear_in=(0,))
define("cumprod", operands=1, params=_CUMULATIVE, traits={"cumulative", "term"})
define("cummax", operands=1, params=_CUMULATIVE, traits={"cumulative", "term"})
define("cummin", operands=1, params=_CUMULATIVE, traits={"cumulative", "term"})
define("cumlogsumexp", operands=1, params=_CUMULATIVE, traits={"cumulative", "term"})

define("reduce_window_sum", operands=1, params=_WINDOW, linear_in=(0,), traits={"term"})
define("reduce_window_max", operands=1, params=_WINDOW, traits={"term"})
define("reduce_window_min", operands=1, params=_WINDOW, traits={"term"})
define("reduce_window", operands=variadic(2), results=variadic(1), params={**_WINDOW, "jaxpr": JAXPR, "consts": ANY},
       traits={"scalar_combiner", "term"}, gaps={"vjp": "the generic reduce_window: JAX has no VJP either"})
define("select_and_scatter_add", operands=2, linear_in=(0,),
       params={"window_dimensions": INTS, "window_strides": INTS, "padding": PAIRS, "select_prim": ANY},
       traits={"term"})
define("select_and_gather_add", operands=2, params={**_WINDOW, "select_prim": ANY}, linear_in=(0,), traits={"term"})
