"""The Jaxpr IR.

Grammar (JAX's printed form; every name below is a dataclass in this module):

    ClosedJaxpr ::= Jaxpr with `consts`, one array per constvar
    Jaxpr       ::= { lambda Binder* ; Binder* . let Eqn* in ( Atom* ) }
    Eqn         ::= Binder+ = primitive[param=value ...] Atom*
    Binder      ::= Var | DropVar            (DropVar prints as `_`)
    Atom        ::= Var | Literal            (`2.0:f64[]`)
    Var         ::= name:aval                (names are given by the printer, not stored)
    aval        ::= ShapedArray              (`f64[3,4]`; weak_type is not printed)

Variables are compared by identity. Param values are Python data as defined in `ir.params`;
nested jaxprs are `ClosedJaxpr` values inside params.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ir.dtypes import DType


@dataclass(frozen=True)
class ShapedArray:
    shape: tuple[int, ...]
    dtype: DType
    weak_type: bool = False

    def __post_init__(self):
        if type(self.shape) is not tuple:
            object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def strip_weak(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype) if self.weak_type else self

    def same_type(self, other: ShapedArray) -> bool:
        """Equal shape and dtype; weak_type is not part of a jaxpr's printed type."""
        return self.shape == other.shape and self.dtype == other.dtype

    def __str__(self) -> str:
        return f"{self.dtype.short}[{','.join(map(str, self.shape))}]"

    __repr__ = __str__


class Var:
    """A variable, identified by object identity. `hint` is a name the parser saw (for debugging)."""

    __slots__ = ("aval", "hint")

    def __init__(self, aval: ShapedArray, hint: str = ""):
        self.aval = aval
        self.hint = hint

    def __repr__(self) -> str:
        return f"Var({self.hint or hex(id(self))}:{self.aval})"


class DropVar:
    """An equation result nobody reads, printed `_`."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"_:{self.aval}"


@dataclass(frozen=True, eq=False)
class Literal:
    """A scalar constant operand. `value` is a NumPy scalar of `aval.dtype` (uint32 words for keys)."""

    value: Any
    aval: ShapedArray

    def __repr__(self) -> str:
        return f"Literal({self.value!r}:{self.aval})"


Atom = Var | Literal
Binder = Var | DropVar


@dataclass(eq=False)
class Eqn:
    primitive: str
    invars: list[Atom]
    outvars: list[Binder]
    params: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"Eqn({self.primitive}, {len(self.invars)} in, {len(self.outvars)} out)"


@dataclass(eq=False)
class Jaxpr:
    constvars: list[Var]
    invars: list[Var]
    outvars: list[Atom]
    eqns: list[Eqn]

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        from ir.text import print_jaxpr
        return print_jaxpr(self)


@dataclass(eq=False)
class ClosedJaxpr:
    jaxpr: Jaxpr
    consts: list[np.ndarray] = field(default_factory=list)

    def __post_init__(self):
        if len(self.consts) != len(self.jaxpr.constvars):
            raise ValueError(f"{len(self.jaxpr.constvars)} constvars but {len(self.consts)} consts")

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> list[Eqn]:
        return self.jaxpr.eqns

    def __str__(self) -> str:
        return str(self.jaxpr)


def subjaxprs(eqn: Eqn) -> list[ClosedJaxpr]:
    """Every ClosedJaxpr held in an equation's params, in param order, nested containers included."""
    from ir.params import walk_values
    return [v for v in walk_values(eqn.params) if isinstance(v, ClosedJaxpr)]


def new_vars(avals: Sequence[ShapedArray]) -> list[Var]:
    return [Var(a) for a in avals]
