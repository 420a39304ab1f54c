"""Dtypes and JAX's x64 type-promotion lattice, weak types included.

A `DType` is identified by its JAX short name (`f64`, `bf16`, `key<fry>`); `DType.name` is the
NumPy-style long name JAX prints in params (`float64`, `bfloat16`). The lattice is JAX's
(`jax._src.dtypes._type_lattice`) with `jax_enable_x64` on: Python scalars are the weak nodes
`i*`, `f*`, `c*`, and a result that lands on a weak node takes the default 64-bit dtype of its kind
and stays weak.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import ml_dtypes
import numpy as np

from ir.errors import JaxprTypeError


@dataclass(frozen=True)
class DType:
    short: str  # as in avals: f64, i32, bool, key<fry>
    name: str  # as in params: float64, int32, bool, key<fry>
    kind: str  # 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex, 'key', 'float0'
    bits: int

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype that holds values of this dtype (uint32 pairs for threefry keys)."""
        return _NUMPY[self.short]

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_inexact(self) -> bool:
        return self.kind in ("f", "c")

    @property
    def is_integer(self) -> bool:
        return self.kind in ("i", "u")

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def itemsize(self) -> int:
        return max(self.bits // 8, 1)


def _d(short: str, name: str, kind: str, bits: int) -> DType:
    return DType(short, name, kind, bits)


bool_ = _d("bool", "bool", "b", 8)
int8, int16, int32, int64 = (_d(f"i{b}", f"int{b}", "i", b) for b in (8, 16, 32, 64))
uint8, uint16, uint32, uint64 = (_d(f"u{b}", f"uint{b}", "u", b) for b in (8, 16, 32, 64))
bfloat16 = _d("bf16", "bfloat16", "f", 16)
float16, float32, float64 = (_d(f"f{b}", f"float{b}", "f", b) for b in (16, 32, 64))
complex64 = _d("c64", "complex64", "c", 64)
complex128 = _d("c128", "complex128", "c", 128)
float0 = _d("float0", "float0", "float0", 8)  # JAX's tangent dtype of integer and bool values
key_fry = _d("key<fry>", "key<fry>", "key", 64)  # a threefry key: two uint32 words

ALL: tuple[DType, ...] = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                          bfloat16, float16, float32, float64, complex64, complex128, float0, key_fry)
BY_SHORT: dict[str, DType] = {d.short: d for d in ALL}
BY_NAME: dict[str, DType] = {d.name: d for d in ALL}

_NUMPY: dict[str, np.dtype] = {
    "bool": np.dtype(np.bool_), "i8": np.dtype(np.int8), "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32), "i64": np.dtype(np.int64), "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16), "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64),
    "bf16": np.dtype(ml_dtypes.bfloat16), "f16": np.dtype(np.float16), "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64), "c64": np.dtype(np.complex64), "c128": np.dtype(np.complex128),
    "float0": np.dtype(np.bool_), "key<fry>": np.dtype(np.uint32),
}
_FROM_NUMPY: dict[np.dtype, DType] = {v: BY_SHORT[k] for k, v in _NUMPY.items()
                                      if k not in ("float0", "key<fry>")}


def from_short(short: str) -> DType:
    try:
        return BY_SHORT[short]
    except KeyError:
        raise KeyError(f"unknown dtype {short!r}") from None


def from_name(name: str) -> DType:
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown dtype name {name!r}") from None


def from_numpy(dt) -> DType:
    """The DType of a NumPy dtype (or anything `np.dtype` accepts)."""
    try:
        return _FROM_NUMPY[np.dtype(dt)]
    except (KeyError, TypeError):
        raise KeyError(f"no eqjax dtype for numpy dtype {dt!r}") from None


# --- promotion ---------------------------------------------------------------------------------
# Nodes are dtype short names plus the weak Python-scalar nodes.
_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"
_LATTICE: dict[str, tuple[str, ...]] = {
    "bool": (_WEAK_INT,),
    _WEAK_INT: ("u8", "i8"),
    "u8": ("i16", "u16"), "u16": ("i32", "u32"), "u32": ("i64", "u64"), "u64": (_WEAK_FLOAT,),
    "i8": ("i16",), "i16": ("i32",), "i32": ("i64",), "i64": (_WEAK_FLOAT,),
    _WEAK_FLOAT: ("bf16", "f16", _WEAK_COMPLEX),
    "bf16": ("f32",), "f16": ("f32",), "f32": ("f64", "c64"), "f64": ("c128",),
    _WEAK_COMPLEX: ("c64",), "c64": ("c128",), "c128": (),
}
_WEAK_DEFAULT = {_WEAK_INT: int64, _WEAK_FLOAT: float64, _WEAK_COMPLEX: complex128}
_WEAK_NODE = {"b": _WEAK_INT, "i": _WEAK_INT, "u": _WEAK_INT, "f": _WEAK_FLOAT, "c": _WEAK_COMPLEX}


@cache
def _upper_bounds(node: str) -> frozenset[str]:
    out = {node}
    for nxt in _LATTICE[node]:
        out |= _upper_bounds(nxt)
    return frozenset(out)


@cache
def _join(nodes: frozenset[str]) -> str:
    common = frozenset.intersection(*(_upper_bounds(n) for n in nodes))
    # The least upper bound is the common bound that every other common bound is above.
    least = [c for c in common if common <= _upper_bounds(c)]
    if len(least) != 1:
        raise JaxprTypeError(f"no unique promotion for {sorted(nodes)}")
    return least[0]


def promote(*types: tuple[DType, bool]) -> tuple[DType, bool]:
    """Join `(dtype, weak_type)` pairs on JAX's x64 lattice; returns `(dtype, weak_type)`.

    A weak bool does not exist in JAX (Python bools are strong), so weak is ignored for bool.
    """
    if not types:
        raise ValueError("promote() needs at least one dtype")
    for dt, _ in types:
        if dt.kind in ("key", "float0"):
            if all(t[0] == dt for t in types):
                return dt, False
            raise JaxprTypeError(f"{dt} does not promote with other dtypes")
    dts = {dt for dt, _ in types}
    if len(types) == 1:
        dt, weak = types[0]
        return dt, weak and dt.kind != "b"
    if len(dts) == 1 and not all(weak for _, weak in types):
        return types[0][0], False
    if all(weak for _, weak in types):
        # All weak: join the strong counterparts, the result stays weak (JAX does the same).
        dt = BY_SHORT[_join(frozenset(d.short for d in dts))]
        return dt, dt.kind != "b"
    node = _join(frozenset(_WEAK_NODE[dt.kind] if weak and dt.kind != "b" else dt.short
                           for dt, weak in types))
    if node in _WEAK_DEFAULT:
        return _WEAK_DEFAULT[node], True
    return BY_SHORT[node], False


def result_type(*dtypes: DType) -> DType:
    """Promotion of strong dtypes only."""
    return promote(*((d, False) for d in dtypes))[0]


def canonical_scalar_dtype(value) -> DType:
    """The x64 dtype JAX gives a Python scalar: bool, int64, float64 or complex128."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return from_numpy(value.dtype) if isinstance(value, np.integer) else int64
    if isinstance(value, (float, np.floating)):
        return from_numpy(value.dtype) if isinstance(value, np.floating) else float64
    if isinstance(value, (complex, np.complexfloating)):
        return from_numpy(value.dtype) if isinstance(value, np.complexfloating) else complex128
    raise TypeError(f"not a scalar: {value!r}")


def finfo(dt: DType):
    return ml_dtypes.finfo(dt.numpy) if dt.is_float else np.finfo(dt.numpy)


def iinfo(dt: DType):
    return np.iinfo(dt.numpy)
