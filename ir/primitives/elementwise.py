"""Catalogue rows of the elementwise primitives: unary and n-ary math, comparisons, bitwise ops, select, clamp
and dtype conversions (shape rules: ir/shapes/elementwise.py, with the dtypes each one accepts)."""

from __future__ import annotations

from ir.primitives import NOT_DIFFERENTIABLE, define, variadic
from ir.primitives.schema import ANY, BOOL, DTYPE, INT, NAT, Param, defaulting, field

_MATH = {"elementwise", "term"}
_PIECEWISE_CONSTANT = {*_MATH, "zero_derivative"}  # integer-, bool-valued or piecewise constant
_COPY = {*_MATH, "data_movement"}

# --- unary ---------------------------------------------------------------------------------------------
define("neg", operands=1, traits=_MATH, linear_in=(0,))
for _name in ("square", "cbrt", "exp", "exp2", "log", "expm1", "log1p", "tanh", "logistic", "sin", "cos", "tan",
              "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "lgamma",
              "digamma", "erf", "erfc", "erf_inv", "bessel_i0e", "bessel_i1e", "abs"):
    define(_name, operands=1, traits=_MATH)
for _name in ("sign", "floor", "ceil", "is_finite", "not", "population_count", "clz"):
    define(_name, operands=1, traits=_PIECEWISE_CONSTANT)
define("round", operands=1, params={"rounding_method": ANY}, traits=_PIECEWISE_CONSTANT)
define("real", operands=1, traits=_COPY, linear_in=(0,))
define("imag", operands=1, traits=_COPY, linear_in=(0,))
define("conj", operands=1, params={"input_dtype": Param("dtype", required=False)}, traits=_MATH, linear_in=(0,))
define("copy", operands=1, traits=_COPY, linear_in=(0,))
define("copy_p", operands=1, traits=_COPY)  # jnp.array's copy
define("stop_gradient", operands=1, traits={*_COPY, "metadata_only", "zero_derivative"})
define("integer_pow", operands=1, params={"y": field(INT)}, traits=_MATH)
define("reduce_precision", operands=1, params={"exponent_bits": NAT, "mantissa_bits": NAT}, traits=_MATH,
       linear_in=(0,))

# --- n-ary, broadcasting ---------------------------------------------------------------------------------
define("mul", operands=2, traits=_MATH, linear_in=(0, 1))
define("div", operands=2, traits=_MATH, linear_in=(0,))
for _name in ("add", "sub", "rem", "max", "min", "atan2", "complex", "igamma", "igammac", "polygamma", "pow",
              "add_any"):
    define(_name, operands=2, traits=_MATH)
for _name in ("nextafter", "zeta", "igamma_grad_a", "random_gamma_grad"):
    define(_name, operands=2, traits=_MATH, gaps=NOT_DIFFERENTIABLE)
for _name in ("and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical", "eq", "ne", "eq_to",
              "lt", "le", "gt", "ge", "lt_to", "le_to"):
    define(_name, operands=2, traits=_PIECEWISE_CONSTANT)
define("regularized_incomplete_beta", operands=3, traits=_MATH)
define("clamp", operands=3, traits=_MATH)
define("select_n", operands=variadic(2), traits={"elementwise", "term"})  # the predicate, then one or more cases

# --- conversions -------------------------------------------------------------------------------------------
define("convert_element_type", operands=1, traits=_MATH, linear_in=(0,),
       params={"new_dtype": field(DTYPE), "sharding": defaulting(ANY, None, printed=False),
               "weak_type": defaulting(BOOL, False)})
define("bitcast_convert_type", operands=1, params={"new_dtype": DTYPE},
       traits={"data_movement", "metadata_only", "term"}, gaps=NOT_DIFFERENTIABLE)
