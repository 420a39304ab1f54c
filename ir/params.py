"""Param values as JAX prints them, as Python data that also prints back the same way.

| printed                                   | Python value                                     |
|-------------------------------------------|--------------------------------------------------|
| `1`, `-1`, `0.95`, `nan`, `True`, `None`  | int, float, bool, None                           |
| `(0, 1)` / `[1]`                          | tuple / list                                     |
| `np.int64(1)`                             | `NpScalar`: an `int` subclass that prints as such |
| `float64`, `bfloat16`                     | `ir.dtypes.DType`                                 |
| `relu`, `Precision.HIGHEST`, `<lambda>`   | `Symbol`: a `str` subclass printed bare           |
| `'mosaic'`                                | str (printed with quotes)                        |
| `GatherDimensionNumbers(offset_dims=...)` | `Record(type_name, fields)` with attribute access |
| `<function f at 0xXXXXXXXXXXXX>`          | `Opaque(text)`: kept verbatim                    |
| `{ lambda ; ... }`                        | `ir.core.ClosedJaxpr`                            |

Semantic code reads params as plain data: `int(v)` works on `NpScalar`, `rec.offset_dims` on a
`Record`, `sym == "relu"` on a `Symbol`. `as_ints` flattens any int-like tuple.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class NpScalar(int):
    """`np.int64(3)` in a param: behaves as the int 3, prints as JAX printed it."""

    np_type: str

    def __new__(cls, value: int, np_type: str = "int64"):
        obj = super().__new__(cls, value)
        obj.np_type = np_type
        return obj

    def __repr__(self) -> str:
        return f"np.{self.np_type}({int(self)})"

    __str__ = __repr__

    def __reduce__(self):
        return (NpScalar, (int(self), self.np_type))


class Symbol(str):
    """A bare name in a param (function names, enum members, `impl=fry`); prints without quotes."""

    def __repr__(self) -> str:
        return str.__str__(self)


class Opaque(str):
    """A Python repr eqjax does not interpret (`<function nothing_saveable at 0xXXXXXXXXXXXX>`)."""

    def __repr__(self) -> str:
        return str.__str__(self)


class Record:
    """A named record such as `GatherDimensionNumbers(offset_dims=(0,), ...)`, fields in order."""

    __slots__ = ("type_name", "fields")

    def __init__(self, type_name: str, fields: tuple[tuple[str, Any], ...] | dict[str, Any]):
        object.__setattr__(self, "type_name", type_name)
        object.__setattr__(self, "fields", tuple(fields.items()) if isinstance(fields, dict) else tuple(fields))

    def __getattr__(self, key: str) -> Any:
        for k, v in object.__getattribute__(self, "fields"):
            if k == key:
                return v
        raise AttributeError(f"{object.__getattribute__(self, 'type_name')} has no field {key!r}")

    def __setattr__(self, key, value):
        raise AttributeError("Record is immutable")

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.fields).get(key, default)

    def replace(self, **changes: Any) -> Record:
        return Record(self.type_name, tuple((k, changes.get(k, v)) for k, v in self.fields))

    def __eq__(self, other) -> bool:
        return isinstance(other, Record) and (self.type_name, self.fields) == (other.type_name, other.fields)

    def __hash__(self) -> int:
        return hash((self.type_name, self.fields))

    def __repr__(self) -> str:
        return f"{self.type_name}({', '.join(f'{k}={v!r}' for k, v in self.fields)})"


def walk_values(value: Any) -> Iterator[Any]:
    """Every value inside a param value (dicts, tuples, lists and Records are opened), pre-order."""
    if isinstance(value, dict):
        for v in value.values():
            yield from walk_values(v)
        return
    yield value
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from walk_values(v)
    elif isinstance(value, Record):
        for _, v in value.fields:
            yield from walk_values(v)


def as_ints(value: Any) -> tuple[int, ...]:
    """A tuple/list of int-likes (`(np.int64(1), 2)`) as plain ints; None gives ()."""
    if value is None:
        return ()
    return tuple(int(v) for v in value)
