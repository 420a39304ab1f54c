"""The primitive registry: one row per primitive, and the shape/dtype rule table.

Each primitive is a `Primitive` row (its name as JAX prints it and whether it returns several
results). Its shape/dtype rule lives in `SHAPE_RULES`, registered with `@shape_rule("name", ...)`
directly above the rule in `ir/shapes/*.py`. Other properties (NumPy implementation, e-graph
encoding, JVP, transpose, batching) are tables of their own in their own packages, keyed by the
same name.

A shape rule has the uniform signature `rule(*in_avals, **params) -> list[ShapedArray]` and raises
`JaxprTypeError` (without the equation index; `typecheck` adds it) when the operands do not fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ir.core import ShapedArray
from ir.errors import UnsupportedPrimitive


@dataclass(frozen=True)
class Primitive:
    name: str
    multiple_results: bool = False
    # Primitives whose params hold jaxprs that are run (jit, cond, scan, ...).
    higher_order: bool = False


ShapeRule = Callable[..., list[ShapedArray]]

PRIMITIVES: dict[str, Primitive] = {}
SHAPE_RULES: dict[str, ShapeRule] = {}


def define(name: str, *, multiple_results: bool = False, higher_order: bool = False) -> Primitive:
    """Add a primitive to the registry (idempotent for an identical row)."""
    row = Primitive(name, multiple_results, higher_order)
    old = PRIMITIVES.get(name)
    if old is not None and old != row:
        raise ValueError(f"primitive {name!r} defined twice with different properties: {old} vs {row}")
    PRIMITIVES[name] = row
    return row


def shape_rule(*names: str, multiple_results: bool = False, higher_order: bool = False):
    """Register the decorated function as the shape/dtype rule of each named primitive."""

    def register(rule: ShapeRule) -> ShapeRule:
        for name in names:
            define(name, multiple_results=multiple_results, higher_order=higher_order)
            if name in SHAPE_RULES:
                raise ValueError(f"primitive {name!r} already has a shape rule")
            SHAPE_RULES[name] = rule
        return rule

    return register


def get_primitive(name: str) -> Primitive:
    _load_rules()
    try:
        return PRIMITIVES[name]
    except KeyError:
        raise UnsupportedPrimitive(name, "shape/dtype", "ir/shapes") from None


def abstract_eval(name: str, in_avals: Sequence[ShapedArray], params: dict) -> list[ShapedArray]:
    """The output avals of primitive `name` applied to `in_avals` with `params`."""
    _load_rules()
    rule = SHAPE_RULES.get(name)
    if rule is None:
        raise UnsupportedPrimitive(name, "shape/dtype", "ir/shapes")
    return rule(*in_avals, **params)


_loaded = False


def _load_rules() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        import ir.shapes  # noqa: F401  (registers every rule)
