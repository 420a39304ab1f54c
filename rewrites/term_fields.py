"""How a param of a term primitive is held in the e-graph: field kinds (`FieldKind`) and the markers a
textual field holds. `rewrites.terms` gives each param of a term primitive's constructor one of these.

| kind                | egglog sort | holds                                                           |
|---------------------|-------------|-----------------------------------------------------------------|
| `int`               | i64         | an int (param kinds int, nat)                                   |
| `ints`              | Vec[i64]    | a tuple of ints                                                 |
| `bool`              | Bool        | True or False                                                   |
| `dtype`             | String      | the dtype's name                                                |
| `dimension_numbers` | String      | dot_general's numbers as Python literal text                    |
| `text`              | String      | any other param's printed text, which reads back as its value   |
| `jaxpr`             | String      | a jaxpr param's printed jaxpr ("None" for none)                 |

A `text` field holds `value_text(v, nested=True)`, so a str and a bare name stay apart and nan, -0.0 and inf
compare as text; a value JAX's format cannot read back is held verbatim after `VERBATIM`.
A textual field holds `ABSENT` for a param the equation leaves out and `operand_dtype_marker(i)` for a param
whose catalogue default is operand i's dtype (`OperandDtype`), resolved when the node is decoded.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from egglog import Bool, StringLike, Vec, i64

from ir.errors import EqjaxError
from rewrites import egglog_fast  # noqa: F401  (before any expression is built)

# Every param of a term primitive but its jaxprs' is a field of the primitive's constructor. A field kind
# says how one param is held in the e-graph and read back: `encode` gives the field's value for a param
# value it holds exactly, `nearest` for one it holds up to spelling (a NumPy-spelled int `np.int64(1)` is
# held as 1, and prints as 1 after decoding).


@dataclass(frozen=True)
class FieldKind:
    """`encode`/`nearest` give the plain Python value the field holds (int, tuple of ints or str), or None."""

    name: str
    egg_type: Any
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]
    nearest: Callable[[Any], Any]

    @property
    def textual(self) -> bool:
        """Whether the field is a String (a name or a printed value), which can hold the markers below."""
        return self.egg_type is StringLike


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _encode_int(v):
    return int(v) if type(v) is int else None


def _nearest_int(v):
    return int(v) if _is_int(v) else None


def _encode_ints(v):
    return v if type(v) is tuple and all(type(d) is int for d in v) else None


def _nearest_ints(v):
    return tuple(int(d) for d in v) if isinstance(v, (tuple, list)) and all(map(_is_int, v)) else None


def _encode_dtype(v):
    from ir.dtypes import DType

    return v.name if isinstance(v, DType) else None


def _decode_dtype(s: str):
    from ir.dtypes import from_name

    return from_name(s)


INT = FieldKind("int", i64, _encode_int, int, _nearest_int)
BOOL = FieldKind("bool", Bool, lambda v: v if type(v) is bool else None, bool, lambda v: v if type(v) is bool else None)
INTS = FieldKind("ints", Vec[i64], _encode_ints, lambda v: tuple(int(d) for d in v), _nearest_ints)
DTYPE = FieldKind("dtype", StringLike, _encode_dtype, _decode_dtype, _encode_dtype)


def _encode_literal_text(v):
    """Nested tuples/lists of ints as their printed text, e.g. `(([1], [0]), ([], []))`."""
    text = repr(v)
    try:
        return text if ast.literal_eval(text) == v and _same_structure(ast.literal_eval(text), v) else None
    except (ValueError, SyntaxError):
        return None


def _plain_ints(v):
    """`v` with its NumPy-spelled ints as Python ints (containers kept)."""
    if isinstance(v, (tuple, list)):
        return type(v)(_plain_ints(x) for x in v)
    return int(v) if _is_int(v) else v


def _same_structure(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same_structure(x, y) for x, y in zip(a, b, strict=True))
    return True


# dot_general's dimension_numbers, matched by rules as text (the matmul form is `(([1], [0]), ([], []))`).
DIMENSION_NUMBERS = FieldKind("dimension_numbers", StringLike, _encode_literal_text, ast.literal_eval,
                              lambda v: _encode_literal_text(_plain_ints(v)))


def _encode_value_text(v):
    """A param value as the text JAX's format prints it in a container (`repr` of strings, so a str and a
    bare name stay apart), if it reads back as the same text: bools, floats (`nan`, `-0.0`, `inf`: text
    equality is what a field needs, where nan != nan), names, padding pairs, records, shardings."""
    from ir.text.printer import value_text

    if _holds_jaxpr(v):
        return None
    text = value_text(v, nested=True)
    try:
        back = _decode_value_text(text)
    except EqjaxError:
        return None
    return text if value_text(back, nested=True) == text and type(back) is type(v) else None


# A value whose printed text does not read back as a param value (a repr JAX's format has no syntax for) is
# held verbatim after this prefix, and decodes to an `Opaque` that prints the same text.
VERBATIM = "<verbatim> "


@cache
def _decode_value_text(text: str):
    from ir.params import Opaque
    from ir.text.parser import parse_param_value

    if text.startswith(VERBATIM):
        return Opaque(text[len(VERBATIM):])
    return parse_param_value(text)


def _nearest_value_text(v):
    from ir.text.printer import value_text

    if _holds_jaxpr(v):
        return None
    text = value_text(v, nested=True)
    try:
        _decode_value_text(text)
    except EqjaxError:
        return VERBATIM + text
    return text


# Any other param, as its printed text: the field of a value rules copy but do not compute with.
VALUE_TEXT = FieldKind("text", StringLike, _encode_value_text, _decode_value_text, _nearest_value_text)


def _encode_jaxpr(v):
    from ir.core import ClosedJaxpr
    from ir.text import print_jaxpr

    if v is None:
        return "None"
    if not isinstance(v, ClosedJaxpr) or v.consts:
        return None
    text = print_jaxpr(v)
    return text if print_jaxpr(_decode_jaxpr(text)) == text else None


@cache
def _decode_jaxpr(text: str):
    from ir.text import parse_jaxpr_untyped

    return None if text == "None" else parse_jaxpr_untyped(text)


# A jaxpr param of a term primitive (a scatter's `update_jaxpr`, a scalar combiner without constants): its
# printed text, which parses back to the same jaxpr ("None" for none).
JAXPR_TEXT = FieldKind("jaxpr", StringLike, _encode_jaxpr, _decode_jaxpr, _encode_jaxpr)


def _holds_jaxpr(value: Any) -> bool:
    from ir.core import ClosedJaxpr, Jaxpr
    from ir.params import walk_values

    return any(isinstance(v, (ClosedJaxpr, Jaxpr)) for v in walk_values(value))


# A textual field's value when the param is left out of the equation (a param the schema does not require),
# and when it is the dtype of an operand (`OperandDtype`, resolved on decoding).
ABSENT = "<absent>"


def operand_dtype_marker(index: int) -> str:
    return f"<dtype of operand {index}>"


# The field kind of each param kind a catalogue row marks `term_field` (ir/primitives/schema.py), and of the
# other params that always hold a value of their kind (required, not optional).
FIELD_KINDS: dict[str, FieldKind] = {"int": INT, "nat": INT, "ints": INTS, "dtype": DTYPE, "bool": BOOL,
                                     "dot_dims": DIMENSION_NUMBERS}


def field_kind(param) -> FieldKind:
    """The field kind of a param of a term primitive (`ir.primitives.schema.Param`)."""
    if param.term_field:
        return FIELD_KINDS[param.kind]
    if param.kind in ("jaxpr", "jaxprs"):
        return JAXPR_TEXT
    if param.kind in FIELD_KINDS and param.required and not param.optional and param.kind != "dot_dims":
        return FIELD_KINDS[param.kind]
    return VALUE_TEXT


