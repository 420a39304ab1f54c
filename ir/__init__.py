"""eqjax's Jaxpr IR: dtypes, avals, the Jaxpr dataclasses, primitives, JAX's text format, tracing.

Stable names: `parse_jaxpr`, `print_jaxpr` (also `str(jaxpr)`), `make_jaxpr`, `numpy`, `lax`,
`typecheck`, `fingerprint`.
"""

from importlib import import_module

from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.errors import EqjaxError, JaxprSyntaxError, JaxprTypeError, UnsupportedPrimitive

_LAZY = {
    "parse_jaxpr": "ir.text", "print_jaxpr": "ir.text",
    "typecheck": "ir.typecheck", "fingerprint": "ir.typecheck",
    "make_jaxpr": "ir.tracing",
    "numpy": None, "lax": None, "dtypes": None, "params": None, "primitives": None,
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'ir' has no attribute {name!r}")
    module = import_module(_LAZY[name] or f"ir.{name}")
    return module if _LAZY[name] is None else getattr(module, name)


__all__ = ["ClosedJaxpr", "DropVar", "Eqn", "Jaxpr", "Literal", "ShapedArray", "Var", "EqjaxError",
           "JaxprSyntaxError", "JaxprTypeError", "UnsupportedPrimitive", *_LAZY]
