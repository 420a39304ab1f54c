"""The primitive catalogue: one typed row per primitive, and the queries every family list is made of.

A row (`Primitive`) says what a primitive is, as JAX prints it: its operands (a count, or `variadic(n)`
with a minimum), its results (likewise), its params schema (name -> `Param`: kind, default, whether
JAX prints it at its default, whether the e-graph holds it as a typed field; see
`ir.primitives.schema`), its traits (named properties from `TRAITS`: elementwise, reduction,
cumulative, zero_derivative, ...), the operands its result is linear in, and `gaps`: the properties
it deliberately lacks, each with its reason. The rows live in the family modules of this package
(elementwise, arrays, indexing, reductions, linalg, random, control) and are all defined on import.

Every other table is keyed by the same name: the shape/dtype rule (`SHAPE_RULES`, registered with
`@shape_rule("name", ...)` directly above the rule in `ir/shapes/*.py`), the NumPy implementation
(eval/impls), the cost (rewrites/costs.py), the e-graph term (rewrites/terms.py, derived from the
rows), JVP and VJP rules (transforms/ad/rules) and batching rules (transforms/batching/rules). A
family list anywhere is a query of the catalogue: `primitives_with("cumulative")`.

A shape rule has the uniform signature `rule(*in_avals, **params) -> list[ShapedArray]` and raises
`JaxprTypeError` (without the equation index; `typecheck` adds it) when the operands do not fit.

Adding a primitive:
1. its row: `define("name", operands=..., results=..., params={...}, traits={...})` in the family
   module it belongs to (a `Param` per param JAX prints; `field(...)` for a param rules compute with,
   a positional field of the e-graph constructor; a primitive that is not higher order takes the trait
   "term", its own constructor, where every other param is a keyword field with the row's default);
2. its shape rule in `ir/shapes/<family>.py` (`@shape_rule("name")`) and its NumPy implementation in
   `eval/impls/<family>.py` (`@impl("name")`);
3. its cost in rewrites/costs.py (a trait it has may already price it), JVP/VJP entries in
   transforms/ad/rules and a batching entry in transforms/batching/rules;
4. run `eqjax primitives` (or tests/ir/test_catalogue.py): it fails on every property the primitive
   lacks; add what is missing, or name it in the row's `gaps` with the reason it is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ir.core import ShapedArray
from ir.errors import UnsupportedPrimitive
from ir.primitives.schema import Param, check_schema


@dataclass(frozen=True)
class Variadic:
    """Any number of operands (or results) from `minimum` up."""

    minimum: int = 0

    def __str__(self) -> str:
        return f"{self.minimum}+"


def variadic(minimum: int = 0) -> Variadic:
    return Variadic(minimum)


Count = int | Variadic

# The traits a row may carry, and what each means.
TRAITS: dict[str, str] = {
    "elementwise": "applies one scalar function per element position (broadcasting scalars), result shape "
                   "= operand shape",
    "reduction": "an axis reduction with a monoid (`axes` param): the result drops those axes, same dtype",
    "arg_reduction": "the index of the extreme element along `axes` (argmax, argmin)",
    "cumulative": "a scan of a monoid along `axis` (`reverse` runs it backwards); result shape = operand shape",
    "data_movement": "does no arithmetic: its results are its operands' elements (or their real or imaginary "
                     "parts, or their bits seen as another dtype) rearranged, or constants",
    "metadata_only": "changes only how the data is seen (shape, dtype view, key wrapper); copies no bytes",
    "region_read": "reads only the region of its first operand that it copies out (slices, gathers)",
    "scalar_combiner": "its jaxpr param is a scalar combiner applied per element, not a body run as a program",
    "higher_order": "its params hold jaxprs it runs as programs (jit, cond, scan, while, custom rules, ...)",
    "control_flow": "a higher-order primitive whose jaxprs the e-graph holds as `Body` terms (scan, while, cond): "
                    "its own constructor `p_<name>(args, bodies, fields...)` gives a `Tup`, every param but its "
                    "jaxprs a field (rewrites/terms.py)",
    "call": "only calls its body: runs its jaxpr once on its operands, its results are the jaxpr's outputs (so "
            "inlining it changes nothing)",
    "random": "a PRNG primitive (keys, bits, key data)",
    "zero_derivative": "its results never carry a tangent: piecewise constant, integer- or key-valued",
    "term": "the e-graph holds it with its own constructor `p_<name>` and typed fields (rewrites/terms.py); every "
            "row but the higher-order ones has it. A variadic one holds its operands as one `Args` list, a "
            "multi-result one too, and its constructor gives a `Tup` whose results `get` reads",
}

# The properties the coverage matrix checks (`transforms.coverage`); a row's `gaps` names some of them.
PROPERTIES = ("shape", "eval", "cost", "jvp", "vjp", "batching")

# Reasons several rows give for a gap.
NO_DERIVATIVE_IN_JAX = "JAX defines no derivative for it either (tests/oracle/README.md lists what JAX refuses)"
NOT_DIFFERENTIABLE = {"jvp": NO_DERIVATIVE_IN_JAX, "vjp": NO_DERIVATIVE_IN_JAX}
NO_BATCHING_IN_JAX = "JAX cannot batch it either (the fixtures have no vmap of it)"
NO_OPERANDS = "it has no operands, so nothing to batch"


@dataclass(frozen=True)
class Primitive:
    """One catalogue row: what the primitive named as JAX prints it takes, returns and is (module docstring)."""

    name: str
    operands: Count
    results: Count = 1
    params: Mapping[str, Param] = field(default_factory=dict, hash=False)
    traits: frozenset[str] = frozenset()
    linear_in: tuple[int, ...] = ()  # operands the result is linear in (the others held fixed)
    gaps: Mapping[str, str] = field(default_factory=dict, hash=False)  # property -> why it is left out

    @property
    def multiple_results(self) -> bool:
        return self.results != 1

    @property
    def higher_order(self) -> bool:
        return "higher_order" in self.traits

    def typed_fields(self) -> list[tuple[str, Param]]:
        """The params marked `term_field`: the positional fields of the e-graph constructor, in schema order."""
        return [(name, p) for name, p in self.params.items() if p.term_field]

    def default_params(self, in_avals: Sequence[ShapedArray]) -> dict[str, Any]:
        """The params other than the positional fields that a rule-built node gets, in schema order."""
        return {name: p.default_for(in_avals) for name, p in self.params.items()
                if p.has_default and not p.term_field}


ShapeRule = Callable[..., list[ShapedArray]]

PRIMITIVES: dict[str, Primitive] = {}
SHAPE_RULES: dict[str, ShapeRule] = {}


def define(name: str, *, operands: Count, results: Count = 1, params: Mapping[str, Param] | None = None,
           traits: Iterable[str] = (), linear_in: Sequence[int] = (),
           gaps: Mapping[str, str] | None = None) -> Primitive:
    """Add a primitive's row to the catalogue (idempotent for an identical row)."""
    row = Primitive(name, operands, results, dict(params or {}), frozenset(traits), tuple(linear_in),
                    dict(gaps or {}))
    unknown = sorted(row.traits - set(TRAITS)) + sorted(set(row.gaps) - set(PROPERTIES))
    if unknown:
        raise ValueError(f"primitive {name!r}: unknown traits or gap properties {unknown}")
    old = PRIMITIVES.get(name)
    if old is not None and old != row:
        raise ValueError(f"primitive {name!r} defined twice with different properties: {old} vs {row}")
    PRIMITIVES[name] = row
    return row


def primitives_with(*traits: str, operands: Count | None = None) -> tuple[str, ...]:
    """The names of the primitives with every one of `traits` (and that operand count, if given), in
    catalogue order."""
    unknown = [t for t in traits if t not in TRAITS]
    if unknown:
        raise ValueError(f"unknown traits {unknown}; known: {', '.join(TRAITS)}")
    return tuple(name for name, row in PRIMITIVES.items()
                 if row.traits.issuperset(traits) and (operands is None or row.operands == operands))


def primitives_lacking(*properties: str) -> frozenset[str]:
    """The primitives whose rows name a gap in any of `properties` (`PROPERTIES`): what a test may see refused."""
    unknown = [p for p in properties if p not in PROPERTIES]
    if unknown:
        raise ValueError(f"unknown properties {unknown}; known: {', '.join(PROPERTIES)}")
    return frozenset(name for name, row in PRIMITIVES.items() if set(row.gaps) & set(properties))


def shape_rule(*names: str):
    """Register the decorated function as the shape/dtype rule of each named primitive (rows must exist)."""

    def register(rule: ShapeRule) -> ShapeRule:
        for name in names:
            if name not in PRIMITIVES:
                raise ValueError(f"primitive {name!r} has no catalogue row; define it in ir/primitives first")
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


def check_params(primitive: str, params: dict[str, Any]) -> None:
    """Raise `JaxprTypeError` (naming the param) if `params` do not fit `primitive`'s row; a primitive
    without a row keeps its params unchecked."""
    row = PRIMITIVES.get(primitive)
    if row is not None:
        check_schema(primitive, row.params, params)


_loaded = False


def _load_rules() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        import ir.shapes  # noqa: F401  (registers every rule)


# The rows, family by family (after the definitions above, which the family modules use).
from ir.primitives import (  # noqa: E402, F401
    arrays,
    control,
    elementwise,
    indexing,
    linalg,
    random,
    reductions,
)
