"""eqjax's Jaxpr IR: dtypes, avals, the Jaxpr dataclasses, primitives, JAX's text format, tracing.

Stable names: `parse_jaxpr`, `print_jaxpr` (also `str(jaxpr)`), `make_jaxpr`, `numpy`, `lax`,
`typecheck`, `fingerprint`, `from_jax` (live JAX in, the `jax` extra: `ir.jax_convert`).
"""

from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.errors import EqjaxError, JaxprSyntaxError, JaxprTypeError, UnsupportedPrimitive
from ir.lazy import lazy_exports

_LAZY = {
    "parse_jaxpr": "ir.text", "print_jaxpr": "ir.text",
    "typecheck": "ir.typecheck", "fingerprint": "ir.typecheck",
    "make_jaxpr": "ir.tracing", "from_jax": "ir.jax_convert",
    "numpy": None, "lax": None, "dtypes": None, "params": None, "primitives": None,
    "nn": None, "scipy": None, "random": None,
}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = ["ClosedJaxpr", "DropVar", "Eqn", "Jaxpr", "Literal", "ShapedArray", "Var", "EqjaxError",
           "JaxprSyntaxError", "JaxprTypeError", "UnsupportedPrimitive", *_LAZY]
