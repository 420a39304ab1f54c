"""A catalogue row's params schema: `Param` (kind, default, ...) and the check `typecheck` runs with it.

`check_params(primitive, params)` is what `typecheck` runs on every equation before its shape rule: an
unknown param name, a missing required param, a value of the wrong kind or out of its range raises
`JaxprTypeError` naming the param (typecheck adds the equation and primitive). A primitive without a
catalogue row keeps its params unchecked; `typecheck` refuses it first with `UnsupportedPrimitive`.

The schemas are derived from every param the oracle fixtures print (`tests/oracle/*.json`, JAX 0.10.2)
and from what the shape rules and NumPy implementations read; `tests/ir/test_param_schemas.py` checks
that each fixture program passes.

| kind       | accepted values                                                         |
|------------|-------------------------------------------------------------------------|
| `int`      | an int (not a bool) within int64                                        |
| `nat`      | an int ≥ 0 within int64                                                 |
| `ints`     | a tuple or list of `int`                                                |
| `pairs`    | a tuple or list of `(int, int)` or `(int, int, int)` (padding configs)  |
| `float`    | an int or float (±inf and nan included)                                 |
| `finite`   | a finite int or float                                                   |
| `bool`     | True or False                                                           |
| `dtype`    | an `ir.dtypes.DType`                                                    |
| `symbol`   | a bare name or string (`Symbol`, `str`)                                 |
| `record`   | an `ir.params.Record` (dimension numbers)                               |
| `dot_dims` | `((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))`, each `ints`   |
| `jaxpr`    | a `ClosedJaxpr`                                                          |
| `jaxprs`   | a non-empty tuple of `ClosedJaxpr`                                      |
| `any`      | anything (shardings, layouts, callables JAX prints as reprs, ...)      |

`Param(kind, optional=True)` also accepts None; `required=False` lets the param be absent. `default` is
the value a node built by a rewrite rule gets when the rule does not set the param (`NO_DEFAULT`: the
param is left out; `OperandDtype(i)`: operand i's dtype); `printed_when_default=False` marks the params
JAX's printer leaves out while they hold their default (ir/text/eqn_rules.py); `term_field=True` marks
the params rules compute with, the positional fields of the primitive's own e-graph constructor
(rewrites/terms.py; every other param is a keyword field there).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ir.core import ClosedJaxpr
from ir.dtypes import DType
from ir.errors import JaxprTypeError, clipped
from ir.params import Record

INT64 = (-(2**63), 2**63 - 1)


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True)
class OperandDtype:
    """A default that is the dtype of operand `index` (dot_general's `preferred_element_type`)."""

    index: int = 0


@dataclass(frozen=True)
class Param:
    kind: str
    optional: bool = False  # None is accepted
    required: bool = True  # the param must be present
    default: Any = NO_DEFAULT  # what a rule-built node gets (see the module docstring)
    printed_when_default: bool = True  # False: JAX's printer hides the param while it holds its default
    term_field: bool = False  # a positional field of the primitive's e-graph constructor (rules compute with it)

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    def default_for(self, in_avals: Sequence) -> Any:
        """The default, resolved against the operands' avals."""
        return in_avals[self.default.index].dtype if isinstance(self.default, OperandDtype) else self.default


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and INT64[0] <= v <= INT64[1]


def _is_ints(v: Any) -> bool:
    return isinstance(v, (tuple, list)) and all(_is_int(x) for x in v)


def _is_pairs(v: Any) -> bool:
    return isinstance(v, (tuple, list)) and all(
        isinstance(p, (tuple, list)) and len(p) in (2, 3) and _is_ints(p) for p in v)


def _is_dot_dims(v: Any) -> bool:
    try:
        (lc, rc), (lb, rb) = v
    except (TypeError, ValueError):
        return False
    return all(_is_ints(x) for x in (lc, rc, lb, rb))


KINDS = {
    "int": _is_int,
    "nat": lambda v: _is_int(v) and v >= 0,
    "ints": _is_ints,
    "pairs": _is_pairs,
    "float": lambda v: (_is_int(v) or isinstance(v, float)) and not isinstance(v, bool),
    "finite": lambda v: (_is_int(v) or (isinstance(v, float) and math.isfinite(v))) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "dtype": lambda v: isinstance(v, DType),
    "symbol": lambda v: isinstance(v, str),
    "record": lambda v: isinstance(v, Record),
    "dot_dims": _is_dot_dims,
    "jaxpr": lambda v: isinstance(v, ClosedJaxpr),
    "jaxprs": lambda v: isinstance(v, tuple) and len(v) > 0 and all(isinstance(x, ClosedJaxpr) for x in v),
    "any": lambda v: True,
}
_WHAT = {"int": "an integer", "nat": "a non-negative integer", "ints": "a tuple of integers",
         "pairs": "a tuple of (low, high[, interior]) integer pairs", "float": "a number",
         "finite": "a finite number", "bool": "True or False", "dtype": "a dtype such as float64",
         "symbol": "a name", "record": "a record such as GatherDimensionNumbers(...)",
         "dot_dims": "((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))", "jaxpr": "a jaxpr",
         "jaxprs": "a tuple of jaxprs", "any": "any value"}

ANY = Param("any", optional=True, required=False)  # a param JAX prints that nothing in eqjax reads
INT, NAT, INTS, BOOL, DTYPE = Param("int"), Param("nat"), Param("ints"), Param("bool"), Param("dtype")
SYMBOL, RECORD, JAXPR, JAXPRS, PAIRS = Param("symbol"), Param("record"), Param("jaxpr"), Param("jaxprs"), Param("pairs")
ENUM = Param("symbol", optional=True)  # an enum member JAX prints bare (`GatherScatterMode.CLIP`) or None


def field(param: Param) -> Param:
    """`param` as a positional field of its primitive's e-graph constructor (one rules compute with)."""
    return replace(param, term_field=True)


def defaulting(param: Param, default: Any, *, printed: bool = True) -> Param:
    """`param` with the value a rule-built node gets, and whether JAX prints it at that value."""
    return replace(param, default=default, printed_when_default=printed)


def check_schema(primitive: str, schema: dict[str, Param], params: dict[str, Any]) -> None:
    """Raise `JaxprTypeError` (naming the param) if `params` do not fit `primitive`'s `schema`."""
    for name, value in params.items():
        spec = schema.get(name)
        if spec is None:
            known = ", ".join(sorted(schema)) or "none"
            raise JaxprTypeError(f"unknown param {clipped(name, 60)!r} (params of {primitive}: {known})",
                                 primitive=primitive)
        if value is None and spec.optional:
            continue
        if not KINDS[spec.kind](value):
            raise JaxprTypeError(f"param {name}={clipped(repr(value), 80)} is not {_WHAT[spec.kind]}",
                                 primitive=primitive)
    missing = [name for name, spec in schema.items() if spec.required and name not in params]
    if missing:
        raise JaxprTypeError(f"missing param{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                             primitive=primitive)
