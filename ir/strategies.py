"""Hypothesis strategies for random, well-typed Jaxprs together with inputs to run them on.

    programs(max_eqns=12, dtypes=("float64", "float32"), shapes=((), (3,), (2, 3)),
             primitives=DEFAULT_PRIMS, special_values=False, literals=LITERALS) -> SearchStrategy[Program]

A `Program` holds `closed` (a `ClosedJaxpr`) and `args` (one NumPy array per input); its repr is the
jaxpr text and the inputs, so a failing hypothesis example prints as a readable program.

Programs are traced with `ir.lax` (so params are exactly what JAX prints and the parser restores),
with hypothesis drawing each step while the trace runs: the operation, then its operands from the
values computed so far (newest first, so programs shrink towards chains; any earlier value can be
picked again, giving DAGs with sharing), and rank-0 `literals` (0.0, 1.0, 2.0, -1.0, 0.5 by default)
as operands of binary ops and comparisons. The covered primitives are `DEFAULT_PRIMS`: elementwise
unary and binary float ops, `integer_pow`, `select_n` on a comparison, `transpose`, `reshape`,
`broadcast_in_dim`, `reduce_sum`/`reduce_max`/`reduce_min` over axes, `dot_general` (vector/matrix
products) and `convert_element_type` between the float dtypes allowed. A program has 1 to 3 inputs,
at most `max_eqns` equations (at least one unless no allowed primitive applies to the inputs, e.g.
only `transpose` on vectors) and 1 to 3 outputs, the newest value among them.

Inputs are finite (magnitudes up to 8, no -0.0) by default; `special_values=True` mixes in 0.0, -0.0,
±inf, nan and huge and tiny magnitudes of the input's dtype.

A user property test, for instance that optimizing never changes an output's type (one optimize
call takes a fraction of a second, more than hypothesis's default deadline):

    from hypothesis import given, settings
    from ir.strategies import programs
    from rewrites.engine import optimize

    @settings(deadline=None, max_examples=30)
    @given(programs(max_eqns=6, dtypes=("float32",)))
    def test_optimize_keeps_output_types(p):
        optimized, _ = optimize(p.closed)
        assert [str(a) for a in optimized.out_avals] == [str(a) for a in p.closed.out_avals]

Pass `primitives=` a subset of `DEFAULT_PRIMS` to aim at some rules (the comparisons only appear as
the predicate of a `select_n`, so they need it too).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import combinations, permutations, product

import numpy as np
from hypothesis import strategies as st

from ir import dtypes as D
from ir import lax
from ir.core import ClosedJaxpr, ShapedArray
from ir.tracing import Tracer, current_builder, trace_flat

UNARY_PRIMS = ("neg", "sin", "cos", "exp", "log", "tanh", "abs", "sqrt", "log1p", "expm1", "logistic",
               "square", "rsqrt", "sign")
BINARY_PRIMS = ("add", "sub", "mul", "div", "max", "min", "pow")
COMPARISON_PRIMS = ("lt", "le", "gt", "ge", "eq", "ne")
OTHER_PRIMS = ("integer_pow", "select_n", "transpose", "reshape", "broadcast_in_dim", "reduce_sum",
               "reduce_max", "reduce_min", "dot_general", "convert_element_type")
DEFAULT_PRIMS = UNARY_PRIMS + BINARY_PRIMS + COMPARISON_PRIMS + OTHER_PRIMS
LITERALS = (0.0, 1.0, 2.0, -1.0, 0.5)
INTEGER_POWERS = (2, 3, -1, -2, 0, 1, 4)
FINITE_BOUND = 8.0
MAX_RANK = 3


@dataclass(frozen=True, eq=False)
class Program:
    """A random program and the inputs to run it on."""

    closed: ClosedJaxpr
    args: tuple[np.ndarray, ...]

    def __repr__(self) -> str:
        args = "\n".join(f"{_array_text(a)}," for a in self.args)
        return f"Program(args=(\n{args}\n), jaxpr=\n{self.closed})"

    __str__ = __repr__

    def _repr_pretty_(self, printer, cycle) -> None:
        """Hypothesis's failure report pretty-prints with this hook, not with `__repr__`."""
        printer.text(repr(self))


def _array_text(a: np.ndarray) -> str:
    prefix = "  np.array("
    body = np.array2string(np.asarray(a), floatmode="unique", separator=", ", prefix=prefix)
    return f"{prefix}{body}, dtype=np.{a.dtype})"


# --- the generation context ------------------------------------------------------------------------

@dataclass
class _Gen:
    """What one program's steps draw from: hypothesis's `draw`, the values so far, the options."""

    draw: Callable
    pool: list[Tracer]
    dtypes: tuple[D.DType, ...]
    prims: frozenset[str]
    literals: tuple[float, ...]

    def pick(self, candidates: Sequence):
        """One of `candidates`, which are in creation order; shrinks towards the newest."""
        return candidates[-1 - self.draw(st.integers(0, len(candidates) - 1))]

    def choose(self, options: Sequence):
        """One of `options`; shrinks towards the first."""
        return self.draw(st.sampled_from(list(options)))

    def values(self, keep: Callable[[Tracer], bool]) -> list[Tracer]:
        return [v for v in self.pool if keep(v)]

    def partner(self, x: Tracer):
        """A second operand for `x` in a broadcasting binary op: a literal or a value of x's dtype
        whose shape broadcasts with x's (equal, or one of them rank 0)."""
        if self.literals and self.draw(st.booleans()):
            return self.choose(self.literals)
        return self.pick(self.values(lambda v: v.dtype == x.dtype and _broadcastable(v.shape, x.shape)))

    def ordered(self, x, y) -> tuple:
        """(x, y) or (y, x): literals and other operands appear on both sides."""
        return (y, x) if self.draw(st.booleans()) else (x, y)


def _broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return a == b or a == () or b == ()


def _always(g: _Gen, x: Tracer) -> bool:
    return True


# --- the operations ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Op:
    """How to add an equation of one primitive (`cost` equations in all, with the comparison a
    select_n needs) to a program, on a value x where `applies(g, x)`."""

    cost: int
    applies: Callable[[_Gen, Tracer], bool]
    build: Callable[[_Gen, Tracer], Tracer]


def _unary(name: str, g: _Gen, x: Tracer) -> Tracer:
    return getattr(lax, name)(x)


def _binary(name: str, g: _Gen, x: Tracer) -> Tracer:
    return getattr(lax, name)(*g.ordered(x, g.partner(x)))


def _integer_pow(g: _Gen, x: Tracer) -> Tracer:
    return lax.integer_pow(x, g.choose(INTEGER_POWERS))


def _select_n_applies(g: _Gen, x: Tracer) -> bool:
    """select_n needs a comparison among the allowed primitives for its predicate."""
    return bool(g.prims & set(COMPARISON_PRIMS))


def _select_n(g: _Gen, x: Tracer) -> Tracer:
    """select_n(cmp(a, b), x, y): y has x's type; the predicate is rank 0 or has x's shape."""
    y = g.pick(g.values(lambda v: v.shape == x.shape and v.dtype == x.dtype))
    a = g.pick(g.values(lambda v: v.shape in ((), x.shape)))
    if a.shape == ():
        b = g.pick(g.values(lambda v: v.dtype == a.dtype and v.shape in ((), x.shape)))
    else:
        b = g.partner(a)
    compare = g.choose([c for c in COMPARISON_PRIMS if c in g.prims])
    predicate = getattr(lax, compare)(*g.ordered(a, b))
    return lax.select_n(predicate, *g.ordered(x, y))


def _transpose(g: _Gen, x: Tracer) -> Tracer:
    moved = [p for p in permutations(range(x.ndim)) if p != tuple(range(x.ndim))]
    return lax.transpose(x, g.choose(moved))


def _reshape_targets(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Shapes of rank ≤ MAX_RANK with the same size (at most one unit dimension), other than `shape`."""
    size = math.prod(shape)
    dims = [d for d in range(1, size + 1) if size % d == 0]
    found = []
    for rank in range(MAX_RANK + 1):
        for target in product(dims, repeat=rank):
            if math.prod(target) == size and target.count(1) <= 1 and target != shape:
                found.append(target)
    return found


def _reshape(g: _Gen, x: Tracer) -> Tracer:
    return lax.reshape(x, g.choose(_reshape_targets(x.shape)))


def _embeddings(shape: tuple[int, ...], target: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The broadcast_dimensions placing `shape` inside `target` (a unit dimension may grow)."""
    return [dims for dims in combinations(range(len(target)), len(shape))
            if all(d == 1 or d == target[i] for d, i in zip(shape, dims, strict=True))]


def _broadcast_targets(g: _Gen, shape: tuple[int, ...]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    grown = {(2, *shape), (*shape, 2)} if len(shape) < MAX_RANK else set()
    targets = sorted({v.shape for v in g.pool} | grown, key=lambda s: (len(s), s))
    return [(t, dims) for t in targets if len(t) >= len(shape) and t != shape and len(t) <= MAX_RANK
            for dims in _embeddings(shape, t)]


def _broadcast_in_dim(g: _Gen, x: Tracer) -> Tracer:
    shape, dims = g.choose(_broadcast_targets(g, x.shape))
    return lax.broadcast_in_dim(x, shape, dims)


def _reduce(name: str, g: _Gen, x: Tracer) -> Tracer:
    axes = g.draw(st.sets(st.integers(0, x.ndim - 1), min_size=1))
    return getattr(lax, name)(x, tuple(sorted(axes)))


def _contractions(x: Tracer, y: Tracer) -> list[tuple[int, int]]:
    return [(i, j) for i in range(x.ndim) for j in range(y.ndim) if x.shape[i] == y.shape[j]]


def _matrix_like(v: Tracer) -> bool:
    return 1 <= v.ndim <= 2


def _dot_general(g: _Gen, x: Tracer) -> Tracer:
    """A vector/matrix product contracting one axis of each side (x with itself always fits)."""
    y = g.pick(g.values(lambda v: v.dtype == x.dtype and _matrix_like(v) and bool(_contractions(x, v))))
    i, j = g.choose(_contractions(x, y))
    lhs, rhs, (i, j) = (x, y, (i, j)) if not g.draw(st.booleans()) else (y, x, (j, i))
    return lax.dot_general(lhs, rhs, (((i,), (j,)), ((), ())), preferred_element_type=x.dtype)


def _convert(g: _Gen, x: Tracer) -> Tracer:
    return lax.convert_element_type(x, g.choose([d for d in g.dtypes if d != x.dtype]))


OPS: dict[str, _Op] = {
    **{name: _Op(1, _always, partial(_unary, name)) for name in UNARY_PRIMS},
    **{name: _Op(1, _always, partial(_binary, name)) for name in BINARY_PRIMS},
    "integer_pow": _Op(1, _always, _integer_pow),
    "select_n": _Op(2, _select_n_applies, _select_n),
    "transpose": _Op(1, lambda g, x: x.ndim >= 2, _transpose),
    "reshape": _Op(1, lambda g, x: bool(_reshape_targets(x.shape)), _reshape),
    "broadcast_in_dim": _Op(1, lambda g, x: bool(_broadcast_targets(g, x.shape)), _broadcast_in_dim),
    **{name: _Op(1, lambda g, x: x.ndim >= 1, partial(_reduce, name))
       for name in ("reduce_sum", "reduce_max", "reduce_min")},
    "dot_general": _Op(1, lambda g, x: _matrix_like(x), _dot_general),
    "convert_element_type": _Op(1, lambda g, x: len(g.dtypes) > 1, _convert),
}


# --- programs ----------------------------------------------------------------------------------------

def programs(max_eqns: int = 12, dtypes: Sequence[str] = ("float64", "float32"),
             shapes: Sequence[tuple[int, ...]] = ((), (3,), (2, 3)), primitives: Sequence[str] = DEFAULT_PRIMS,
             special_values: bool = False, literals: Sequence[float] = LITERALS) -> st.SearchStrategy[Program]:
    """Random well-typed programs of 1 to `max_eqns` equations over `primitives`, with 1 to 3 inputs
    of the given float `dtypes` (names) and `shapes`, and inputs to run them on."""
    if max_eqns < 1:
        raise ValueError(f"programs: max_eqns must be at least 1, got {max_eqns}")
    float_dtypes = tuple(_float_dtype(name) for name in dtypes)
    if not float_dtypes or not shapes:
        raise ValueError("programs: needs at least one dtype and one shape")
    unknown = sorted(set(primitives) - set(DEFAULT_PRIMS))
    if unknown:
        raise ValueError(f"programs: primitives {unknown} are not generated; choose from {DEFAULT_PRIMS}")
    if not set(primitives) & set(OPS):
        raise ValueError("programs: primitives has no primitive that makes an equation of its own "
                         f"(comparisons need select_n); choose from {tuple(OPS)}")
    return _programs(max_eqns, tuple(d.name for d in float_dtypes), tuple(tuple(s) for s in shapes),
                     tuple(primitives), bool(special_values), tuple(float(v) for v in literals))


def _float_dtype(name: str) -> D.DType:
    dtype = D.BY_NAME.get(name) or D.BY_SHORT.get(name)
    if dtype is None:
        raise ValueError(f"programs: unknown dtype {name!r}")
    if not dtype.is_float:
        raise ValueError(f"programs: only float dtypes are generated, not {name}")
    return dtype


@st.composite
def _programs(draw, max_eqns, dtype_names, shapes, primitives, special_values, literals) -> Program:
    dtypes = tuple(D.from_name(name) for name in dtype_names)
    ops = [op for name, op in OPS.items() if name in primitives]
    in_avals = [ShapedArray(draw(st.sampled_from(shapes)), draw(st.sampled_from(dtypes)))
                for _ in range(draw(st.integers(1, 3)))]
    steps = draw(st.integers(1, max_eqns))

    def body(*inputs):
        g = _Gen(draw, list(inputs), dtypes, frozenset(primitives), literals)
        builder = current_builder()
        for _ in range(steps):
            room = max_eqns - len(builder.eqns)
            usable = [op for op in ops if op.cost <= room and any(op.applies(g, v) for v in g.pool)]
            if not usable:
                break
            op = g.choose(usable)
            g.pool.append(op.build(g, g.pick(g.values(partial(op.applies, g)))))
        extra = draw(st.integers(0, min(2, len(g.pool) - 1)))
        return [g.pool[-1], *(g.pick(g.pool) for _ in range(extra))]

    closed, _ = trace_flat(body, in_avals)
    args = tuple(draw(_arrays(aval, special_values)) for aval in in_avals)
    return Program(closed, args)


def _arrays(aval: ShapedArray, special_values: bool) -> st.SearchStrategy[np.ndarray]:
    finite = st.floats(-FINITE_BOUND, FINITE_BOUND)
    elements = st.one_of(finite, st.sampled_from(_special_values(aval.dtype))) if special_values else finite

    def array(values: list[float]) -> np.ndarray:
        a = np.asarray(values, np.float64).astype(aval.dtype.numpy).reshape(aval.shape)
        if not special_values:
            a[a == 0] = 0  # a signed zero (drawn, or a tiny negative rounded by the cast) is special
        return a

    return st.lists(elements, min_size=aval.size, max_size=aval.size).map(array)


def _special_values(dtype: D.DType) -> list[float]:
    info = D.finfo(dtype)
    huge, tiny, subnormal = float(info.max), float(info.smallest_normal), float(info.smallest_subnormal)
    return [0.0, -0.0, math.inf, -math.inf, math.nan, huge, -huge, math.sqrt(huge), tiny, -subnormal]
