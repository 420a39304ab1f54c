"""Probes: the one-equation programs a latency calibration times, each with its operand values.

A probe comes from one of three sources:

| source          | primitives                                  | shapes and values                              |
|-----------------|---------------------------------------------|------------------------------------------------|
| `oracle:<case>` | every primitive of the oracle samples       | the oracle's small operands (`eval.samples`)   |
| `scaled:<case>` | elementwise (`ELEMENTWISE`)                 | an oracle sample resampled to n elements       |
| `grid:<family>` | reductions, dot_general, data movement      | traced with `ir.lax` at a grid of sizes        |

Scaled probes come in the grid's float dtypes (float32 and float64; int and bool samples in their own
dtypes); grid families (`GRID_FAMILIES`) in those and, for reductions, int32, with random values.

Resampling keeps values in each primitive's domain without knowing it: a scaled operand's elements are
drawn, jointly across operands (element i of every operand comes from the same oracle position), from
the values the oracle sample had, which JAX's inputs put in the domain (positive for log, >= 1 for
acosh, a > 0 for igamma). Grid families need no domain beyond "finite": their values are standard
normal, or random signs where a product over 2^20 elements must neither overflow nor underflow.

Primitives that run jaxprs (`cond`, `scan`, `while`, calls) get no probes: the latency model prices
them by their bodies (`rewrites.costs._nested_cost`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from eval.samples import Sample
from ir import dtypes
from ir.core import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.primitives import abstract_eval, get_primitive
from rewrites.costs import ELEMENTWISE_WEIGHTS

FLOAT_DTYPES = (dtypes.float32, dtypes.float64)


class Grid(NamedTuple):
    """The sizes scaled and grid probes are made at, and their float dtypes."""

    sizes: tuple[int, ...]  # elements
    sides: tuple[int, ...]  # dot_general: square matrices n x n
    floats: tuple[dtypes.DType, ...]

    def as_dict(self) -> dict:
        return {"sizes": list(self.sizes), "matrix_sides": list(self.sides), "floats": [str(d) for d in self.floats]}


FULL = Grid((1, 16, 256, 4096, 65536, 1 << 20), (2, 8, 32, 128, 512), FLOAT_DTYPES)
QUICK = Grid((16, 16384), (4, 64), (dtypes.float64,))  # on xla each probe compiles (~40 ms)

ELEMENTWISE = frozenset(ELEMENTWISE_WEIGHTS) | {"integer_pow", "copy", "real", "imag"}


@dataclass(frozen=True)
class Probe:
    primitive: str
    source: str  # "oracle:<case>", "scaled:<case>" or "grid:<family>"
    closed: ClosedJaxpr  # one equation
    args: tuple[np.ndarray, ...]

    @property
    def eqn(self) -> Eqn:
        return self.closed.jaxpr.eqns[0]

    @property
    def series(self) -> tuple:
        """Probes of one series differ only in size: (primitive, source family, operand dtypes, params)."""
        eqn = self.eqn
        kinds = tuple(str(getattr(x, "aval", x).dtype) for x in eqn.invars)
        family = self.source if self.source.startswith("grid") else self.source.split(":")[0]
        return self.primitive, family, kinds, _params_key(eqn.params)

    @property
    def size(self) -> int:
        """Elements of the largest operand or result."""
        eqn = self.eqn
        return max([getattr(x, "aval", x).size for x in (*eqn.invars, *eqn.outvars)] or [1])

    def __str__(self) -> str:
        avals = " ".join(str(v.aval) for v in self.closed.jaxpr.invars)
        return f"{self.primitive} {avals} ({self.source})"


def _params_key(params: dict) -> str:
    """Params without the shape-valued ones, so that one series spans its sizes."""
    return repr({k: v for k, v in sorted(params.items()) if k not in ("shape", "new_sizes", "dimensions",
                                                                       "start_indices", "limit_indices")})


def is_probed(primitive: str) -> bool:
    """Whether calibration times `primitive` itself (primitives that run jaxprs are priced by their bodies)."""
    return not get_primitive(primitive).higher_order


# --- oracle samples and their scaled versions --------------------------------------------------------------

def probes_for(primitive: str, samples: Sequence[Sample], grid: Grid, rng: np.random.Generator) -> Iterator[Probe]:
    """Every probe of `primitive`, made one at a time (the large ones hold megabytes): its oracle samples,
    their scaled versions, then its grid family, each series in increasing size. An equation whose
    operands are all literals is left out: backends fold it into a constant, so it times nothing."""
    samples = [s for s in samples if not s.closed.eqns[0].invars or s.closed.jaxpr.invars]
    for s in samples:
        yield Probe(primitive, f"oracle:{s.case}", s.closed, s.args)
    yield from scaled_probes(samples, grid, rng)
    yield from grid_probes(primitive, grid, rng)


def scaled_probes(samples: Sequence[Sample], grid: Grid, rng: np.random.Generator) -> Iterator[Probe]:
    """Elementwise samples resampled to each of the grid's sizes, once per dtype variant (module doc)."""
    seen: set[tuple] = set()
    for sample in samples:
        eqn = sample.closed.jaxpr.eqns[0]
        if eqn.primitive not in ELEMENTWISE or len(eqn.outvars) != 1:
            continue
        shape = eqn.outvars[0].aval.shape
        operands = [x for x in eqn.invars if isinstance(x, Var)]
        if any(v.aval.shape not in (shape, ()) for v in operands):
            continue  # implicit broadcasting of size-1 axes: not a plain elementwise shape
        for dtype in _dtype_variants(eqn, grid.floats):
            key = (eqn.primitive, dtype, _params_key(eqn.params), tuple(str(x.aval.dtype) for x in eqn.invars))
            if key in seen:
                continue
            seen.add(key)
            for n in grid.sizes:
                probe = _resampled(sample, dtype, n, rng)
                if probe is None:
                    break
                yield probe


def _dtype_variants(eqn: Eqn, floats: Sequence[dtypes.DType]) -> list[dtypes.DType | None]:
    """`floats` for an equation whose float operands share float32 or float64; its own dtypes (None)
    for one without float operands; none for other float dtypes (f16, bf16: NumPy emulates them in
    software, at a price per byte unlike the rest of a primitive's series; their oracle samples remain)."""
    operand_floats = {getattr(x, "aval", x).dtype for x in eqn.invars if getattr(x, "aval", x).dtype.is_float}
    if not operand_floats:
        return [None]
    if len(operand_floats) == 1 and next(iter(operand_floats)) in FLOAT_DTYPES:
        return list(floats)
    return []


def _cast(aval: ShapedArray, dtype: dtypes.DType | None, shape: tuple[int, ...]) -> ShapedArray:
    new_dtype = dtype if dtype is not None and aval.dtype.is_float else aval.dtype
    return ShapedArray(shape, new_dtype, aval.weak_type)


def _resampled(sample: Sample, dtype: dtypes.DType | None, n: int, rng: np.random.Generator) -> Probe | None:
    """The sample at shape (n,): every full-shape operand's elements drawn jointly from the sample's values;
    scalar operands and literals kept (cast to `dtype` where floating). None if the shape rule refuses."""
    eqn = sample.closed.jaxpr.eqns[0]
    shape = eqn.outvars[0].aval.shape
    size = math.prod(shape)
    if size == 0:
        return None
    picks = rng.integers(0, max(size, 1), n)
    invars, operands, args = [], [], []
    values = iter(sample.args)
    for x in eqn.invars:
        if isinstance(x, Literal):
            aval = _cast(x.aval, dtype, ())
            operands.append(Literal(np.asarray(x.value).astype(aval.dtype.numpy)[()], aval))
            continue
        value = np.asarray(next(values))
        full = x.aval.shape == shape and shape != ()
        aval = _cast(x.aval, dtype, (n,) if full or shape == () else ())
        v = Var(aval)
        invars.append(v)
        operands.append(v)
        flat = value.reshape(-1)[picks] if full else np.broadcast_to(value, aval.shape)
        args.append(np.ascontiguousarray(flat).astype(aval.dtype.numpy))
    try:
        outs = abstract_eval(eqn.primitive, [getattr(o, "aval", o) for o in operands], eqn.params)
    except Exception:  # noqa: BLE001  a dtype the primitive does not take gives no variant
        return None
    outvars = [Var(a) for a in outs]
    jaxpr = Jaxpr([], invars, list(outvars), [Eqn(eqn.primitive, operands, outvars, dict(eqn.params))])
    return Probe(eqn.primitive, f"scaled:{sample.case}", ClosedJaxpr(jaxpr, []), tuple(args))


# --- grid families: traced with ir.lax at scaled shapes ----------------------------------------------------

def _split2(n: int) -> tuple[int, int]:
    """(rows, cols) with rows * cols == n (n a power of two) and the two as equal as possible."""
    cols = 1 << (max(n.bit_length() - 1, 0) + 1) // 2
    return n // cols, cols


def _normal(rng, shape, dtype, signs: bool = False) -> np.ndarray:
    if dtype.is_float:
        x = rng.choice([-1.0, 1.0], shape) if signs else rng.standard_normal(shape)
    else:
        x = rng.integers(-100, 100, shape)
    return np.asarray(x, dtype.numpy)


Build = Callable[[int, dtypes.DType, np.random.Generator], tuple[Callable, list[np.ndarray]] | None]


def _reduction(name: str, rows: bool) -> Build:
    """A full reduction of (n,) or a row reduction of (n/16, 16) over its last axis."""
    from ir import lax

    def build(n, dtype, rng):
        if rows and n < 16:
            return None
        shape = (n // 16, 16) if rows else (n,)
        axis = len(shape) - 1
        x = _normal(rng, shape, dtype, signs=name in ("reduce_prod", "cumprod"))
        if name in ("argmax", "argmin"):
            return (lambda a: getattr(lax, name)(a, axis, np.int32)), [x]
        if name.startswith("cum"):
            return (lambda a: getattr(lax, name)(a, axis)), [x]
        return (lambda a: getattr(lax, name)(a, (axis,))), [x]
    return build


def _matmul(batch: int, vector: bool) -> Build:
    from ir import lax

    def build(n, dtype, rng):
        lhs = _normal(rng, (batch, n, n) if batch else (n, n), dtype)
        rhs = _normal(rng, (batch, n, 1 if vector else n) if batch else (n, 1 if vector else n), dtype)
        dims = (((2,), (1,)), ((0,), (0,))) if batch else (((1,), (0,)), ((), ()))
        return (lambda a, b: lax.dot_general(a, b, dims, preferred_element_type=dtype)), [lhs, rhs]
    return build


def _movement(name: str) -> Build:
    from ir import lax

    def build(n, dtype, rng):
        rows, cols = _split2(n)
        if name == "broadcast_in_dim":
            x = _normal(rng, (cols,), dtype)
            return (lambda a: lax.broadcast_in_dim(a, (rows, cols), (1,))), [x]
        if name == "transpose":
            return (lambda a: lax.transpose(a, (1, 0))), [_normal(rng, (rows, cols), dtype)]
        if name == "reshape":
            return (lambda a: lax.reshape(a, (n,))), [_normal(rng, (rows, cols), dtype)]
        if name == "slice":
            start = n // 4
            return (lambda a: lax.slice(a, (start,), (start + max(n // 2, 1),))), [_normal(rng, (n,), dtype)]
        if name == "concatenate":
            half = max(n // 2, 1)
            parts = [_normal(rng, (half,), dtype), _normal(rng, (half,), dtype)]
            return (lambda a, b: lax.concatenate([a, b], 0)), parts
        if name == "pad":
            return (lambda a: lax.pad(a, 0.0 if dtype.is_float else 0, [(1, 1, 0)])), [_normal(rng, (n,), dtype)]
        if name == "rev":
            return (lambda a: lax.rev(a, (0,))), [_normal(rng, (n,), dtype)]
        raise ValueError(f"no grid probe for {name!r}")
    return build


_REDUCTIONS = ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "argmax", "argmin",
               "cumsum", "cumprod", "cummax", "cummin")
_INT_REDUCTIONS = frozenset(_REDUCTIONS) - {"reduce_prod", "cumprod"}
_MOVEMENT = ("broadcast_in_dim", "transpose", "reshape", "slice", "concatenate", "pad", "rev")


class Family(NamedTuple):
    label: str
    build: Build
    by_side: bool  # sized by the grid's matrix sides instead of its element counts
    dtypes: tuple[dtypes.DType, ...]


GRID_FAMILIES: dict[str, list[Family]] = {
    **{name: [Family(label, _reduction(name, rows), False,
                     FLOAT_DTYPES + ((dtypes.int32,) if name in _INT_REDUCTIONS else ()))
              for label, rows in (("all", False), ("rows", True))] for name in _REDUCTIONS},
    "dot_general": [Family("matmul", _matmul(0, False), True, FLOAT_DTYPES),
                    Family("matvec", _matmul(0, True), True, FLOAT_DTYPES),
                    Family("batched", _matmul(8, False), True, FLOAT_DTYPES)],
    **{name: [Family(name, _movement(name), False, FLOAT_DTYPES)] for name in _MOVEMENT},
}


def grid_probes(primitive: str, grid: Grid, rng: np.random.Generator) -> Iterator[Probe]:
    """The grid family's probes of `primitive` (none if it has no family)."""
    from ir.tracing import make_jaxpr

    for family in GRID_FAMILIES.get(primitive, ()):
        for dtype in [d for d in family.dtypes if not d.is_float or d in grid.floats]:
            for n in grid.sides if family.by_side else grid.sizes:
                made = family.build(n, dtype, rng)
                if made is None:
                    continue
                fn, args = made
                closed = make_jaxpr(fn)(*args)
                if [e.primitive for e in closed.eqns] != [primitive]:
                    raise AssertionError(f"grid probe of {primitive} traced to {[e.primitive for e in closed.eqns]}")
                yield Probe(primitive, f"grid:{family.label}", closed, tuple(args))
