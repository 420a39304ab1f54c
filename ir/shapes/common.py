"""Checking helpers shared by the shape-rule modules, and JAX's dtype classes (`_float`, `_num`, ...)."""

from __future__ import annotations

from typing import NoReturn

from ir import dtypes as D
from ir.core import ShapedArray
from ir.dtypes import DType
from ir.errors import JaxprTypeError
from ir.params import as_ints


def fail(prim: str, message: str, expected=None, actual=None) -> NoReturn:
    raise JaxprTypeError(message, primitive=prim, expected=expected, actual=actual)


def weak(dtype: DType, *avals: ShapedArray) -> bool:
    """JAX's standard weak-type rule: weak iff every operand is weak (never for bool)."""
    return dtype.kind != "b" and bool(avals) and all(a.weak_type for a in avals)


def dtype_param(prim: str, name: str, value) -> DType:
    """A dtype-valued param (`float64` printed; a DType, NumPy dtype or dtype name when traced)."""
    if isinstance(value, DType):
        return value
    try:
        return D.from_name(str(value)) if isinstance(value, str) else D.from_numpy(value)
    except KeyError:
        fail(prim, f"param {name} is not a dtype", expected="a dtype name such as float64",
             actual=repr(value))


def same_dtypes(prim: str, *avals: ShapedArray, what: str = "operands") -> DType:
    """The common dtype of `avals`; a type error naming all dtypes if they differ."""
    dts = [a.dtype for a in avals]
    if any(d != dts[0] for d in dts[1:]):
        fail(prim, f"{what} must have the same dtype", expected="equal dtypes",
             actual=", ".join(str(a) for a in avals))
    return dts[0]


def broadcast_shapes(prim: str, *avals: ShapedArray) -> tuple[int, ...]:
    """JAX's broadcasting rule for n-ary elementwise primitives."""
    shapes = [a.shape for a in avals if a.shape]
    if not shapes:
        return ()
    if len({len(s) for s in shapes}) != 1:
        fail(prim, "operands must be scalars or have equal rank",
             expected="equal ranks (or rank 0)", actual=", ".join(str(a) for a in avals))
    out = []
    for dims in zip(*shapes, strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            fail(prim, "operand shapes do not broadcast (each dimension must be equal or 1)",
                 expected="compatible shapes", actual=", ".join(str(a) for a in avals))
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def check_axis(prim: str, axis: int, ndim: int, what: str = "axis", allow_end: bool = False) -> int:
    """`axis` as an int in [0, ndim) (or [0, ndim] when `allow_end`)."""
    axis, bound = int(axis), ndim + 1 if allow_end else ndim
    if not 0 <= axis < bound:
        fail(prim, f"{what} {axis} out of range for an operand of rank {ndim}",
             expected=f"0 <= {what} {'<=' if allow_end else '<'} {ndim}", actual=axis)
    return axis


def check_axes(prim: str, axes, ndim: int, what: str = "axes") -> tuple[int, ...]:
    """Distinct axes in [0, ndim)."""
    axes = as_ints(axes)
    for a in axes:
        check_axis(prim, a, ndim, what)
    if len(set(axes)) != len(axes):
        fail(prim, f"{what} must be distinct", expected="distinct axes", actual=axes)
    return axes


def check_arity(prim: str, avals, n: int) -> None:
    if len(avals) != n:
        fail(prim, f"takes {n} operand(s)", expected=n, actual=len(avals))


# --- dtype classes, as in JAX's lax.py (`_float`, `_num`, `_ordered`, ...) ---------------------

FLOAT = frozenset("f")
COMPLEX = frozenset("c")
INT = frozenset("iu")
SIGNED = frozenset("i")
BOOL = frozenset("b")
NUM = INT | FLOAT | COMPLEX
ANY = NUM | BOOL
ORDERED = INT | FLOAT | BOOL
BOOL_OR_INT = INT | BOOL
COMPLEX_PARTS = frozenset({"f32", "f64"})  # dtypes `complex` and `conj` accept besides complex
_TOKEN_NAMES = {"f": "floating", "c": "complex", "i": "signed integer", "u": "unsigned integer",
                "b": "bool", "key": "key", "f32": "float32", "f64": "float64"}


def _describe(accepted: frozenset[str]) -> str:
    return " or ".join(_TOKEN_NAMES[t] for t in sorted(accepted, key=list(_TOKEN_NAMES).index))


def check_dtype(prim: str, aval: ShapedArray, accepted: frozenset[str], position: int | None = None) -> None:
    """`aval.dtype` is of a kind (or a named dtype) in `accepted`."""
    if aval.dtype.kind in accepted or aval.dtype.short in accepted:
        return
    where = "" if position is None else f" at position {position}"
    fail(prim, f"does not accept dtype {aval.dtype}{where}", expected=_describe(accepted), actual=str(aval))
