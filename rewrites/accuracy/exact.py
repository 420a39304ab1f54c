"""Exact results of a program over the extended reals, for `rewrites.accuracy`: the high-precision interpreter's
elementwise rules (`rewrites.verify.highprec`) applied element by element to arrays of mpmath numbers, data
movement by eval's own functions, sums without rounding; the precision grows (`LEVELS`) until each element,
correctly rounded to its dtype, is settled (the package docstring says when).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import ml_dtypes
import numpy as np

from eval.impls.arrays import broadcast_in_dim, concatenate, reshape, squeeze, transpose
from eval.impls.indexing import slice_
from eval.registry import get_impl
from ir.core import ClosedJaxpr, Literal
from ir.errors import UnsupportedPrimitive
from ir.inline import CALLS, inline_calls
from rewrites.verify import highprec as hp

LEVELS = (30, 80, 300, 1000)  # decimal digits: 1000 covers a float64 sum of the largest and smallest values
MAX_EXACT_SPREAD = 10_000  # bits between the magnitudes of two terms a sum adds without rounding
WHERE = "rewrites/accuracy/exact.py"


# --- exact results ---------------------------------------------------------------------------------------
# A value is three arrays of one shape: the mpmath numbers, whether each is exact (no operation rounded it),
# and whether rounding could have decided it somewhere on its way (`highprec.significance`).

def _objects(x) -> np.ndarray:
    if isinstance(x, np.ndarray) and x.dtype == object:
        return x
    out = np.empty((), dtype=object)
    out[()] = x
    return out


def _flags(shape, value: bool) -> np.ndarray:
    return np.full(shape, value, dtype=bool)


def exact_input(a: np.ndarray, dtype, dps: int) -> tuple:
    """An input array as an exact value: (its mpmath numbers, all exact, none decided by rounding)."""
    with np.errstate(all="ignore"):
        values = _objects(np.frompyfunc(lambda x: hp.input_value(x, dtype, dps), 1, 1)(np.asarray(a)))
    return values, _flags(values.shape, True), _flags(values.shape, False)


def _literal(lit: Literal, dps: int) -> tuple:
    value = hp.literal_value(lit, dps)
    exact = not hp.is_float(value) or not hp.context(dps).isfinite(value) or value == float(value)
    return _objects(value), np.array(exact), np.array(False)


def _sums(ctx, rows: np.ndarray, float_: bool) -> tuple[np.ndarray, np.ndarray]:
    """The sums along the last axis and whether each is exact. A float sum is accumulated without rounding
    (mpmath's exact=True) and rounded once, so rounding never decides a cancellation inside it."""
    values, exact = np.empty(rows.shape[:-1], dtype=object), np.empty(rows.shape[:-1], dtype=bool)
    for index in np.ndindex(values.shape):
        if not float_:
            values[index], exact[index] = sum(rows[index]), True
            continue
        total, whole = ctx.zero, True
        for term in rows[index]:
            if total and term and ctx.isfinite(total) and ctx.isfinite(term) and \
                    abs(ctx.mag(total) - ctx.mag(term)) > MAX_EXACT_SPREAD:
                total, whole = ctx.fadd(total, term), False  # exp(1e300) + 1 has no exact form in memory
            else:
                total = ctx.fadd(total, term, exact=True)
        values[index] = ctx.fadd(total, ctx.zero)
        exact[index] = whole and (bool(values[index] == total) or not ctx.isfinite(total))
    return values, exact


def _reduce(op: str):
    def f(interp, eqn, x):
        values, exact, unreliable = x
        out = eqn.outvars[0].aval
        axes = tuple(eqn.params["axes"])
        if op == "add":
            rows = np.moveaxis(values, axes, tuple(range(-len(axes), 0)))
            rows = rows.reshape(*rows.shape[:values.ndim - len(axes)], -1)
            sums, sums_exact = _sums(interp.ctx, rows, out.dtype.kind == "f")
            return _objects(sums), sums_exact & exact.all(axis=axes), unreliable.any(axis=axes)
        ufunc = np.frompyfunc(lambda a, b: interp.apply_named(op, [a, b], out), 2, 1)
        for axis in sorted(axes, reverse=True):
            values = _objects(ufunc.reduce(values, axis=axis))
        return values, exact.all(axis=axes), unreliable.any(axis=axes)

    return f


def _dot_general(interp, eqn, lhs, rhs):
    out = eqn.outvars[0].aval
    if eqn.invars[0].aval.dtype != out.dtype or eqn.invars[1].aval.dtype != out.dtype:
        raise UnsupportedPrimitive("dot_general", "high-precision evaluation with a dtype change", WHERE)
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    (lhs, lhs_exact, lhs_bad), (rhs, rhs_exact, rhs_bad) = lhs, rhs
    lf = [d for d in range(lhs.ndim) if d not in (*lc, *lb)]
    rf = [d for d in range(rhs.ndim) if d not in (*rc, *rb)]
    batch = tuple(lhs.shape[d] for d in lb)
    k = math.prod(lhs.shape[d] for d in lc)
    if k == 0:
        raise UnsupportedPrimitive("dot_general", "high-precision evaluation of an empty contraction", WHERE)
    a = np.transpose(lhs, (*lb, *lf, *lc)).reshape(*batch, -1, k)
    b = np.transpose(rhs, (*rb, *rc, *rf)).reshape(*batch, k, -1)
    ctx, float_ = interp.ctx, out.dtype.kind == "f"
    mul = np.frompyfunc((lambda x, y: ctx.fmul(x, y, exact=True)) if float_ else (lambda x, y: x * y), 2, 1)
    products = np.swapaxes(mul(a[..., :, :, None], b[..., None, :, :]), -1, -2)  # batch, m, n, k
    values, exact = _sums(ctx, products, float_)
    inputs_exact = bool(lhs_exact.all() and rhs_exact.all())  # coarse: any inexact operand element taints
    bad = bool(lhs_bad.any() or rhs_bad.any())
    return _objects(values.reshape(out.shape)), exact.reshape(out.shape) & inputs_exact, _flags(out.shape, bad)


def _moved(fn):
    """A data-movement primitive: eval's own implementation (which never casts) on each of the three arrays."""
    return lambda interp, eqn, *xs: tuple(_objects(fn(*parts, **eqn.params)) if k == 0 else fn(*parts, **eqn.params)
                                          for k, parts in enumerate(zip(*xs, strict=True)))


STRUCTURAL = {
    "reshape": _moved(reshape), "transpose": _moved(transpose), "broadcast_in_dim": _moved(broadcast_in_dim),
    "squeeze": _moved(squeeze), "concatenate": _moved(concatenate), "slice": _moved(slice_),
    "reduce_sum": _reduce("add"), "reduce_max": _reduce("max"), "reduce_min": _reduce("min"),
    "dot_general": _dot_general,
}


def _elementwise(interp, eqn, *xs) -> tuple:
    n, prim = len(xs), eqn.primitive

    def one(*parts):
        values, exacts = list(parts[:n]), [bool(e) for e in parts[n:]]
        r = interp.apply(eqn, values)
        if prim in ("add", "sub", "add_any") and any(v == 0 and e for v, e in zip(values, exacts, strict=True)):
            return r, all(exacts), False  # adding an exact zero cancels nothing
        return (r, *hp.significance(interp.ctx, prim, values, exacts, r))

    shape = eqn.outvars[0].aval.shape
    values, exact, bad = np.frompyfunc(one, 2 * n, 3)(*[x[0] for x in xs], *[x[1] for x in xs])
    unreliable = np.logical_or.reduce([np.broadcast_to(x[2], shape) for x in xs]) | np.asarray(bad, dtype=bool)
    return (_objects(np.broadcast_to(values, shape).copy()), np.broadcast_to(np.asarray(exact, bool), shape).copy(),
            np.broadcast_to(unreliable, shape).copy())


def _elementwise_names(interp) -> set[str]:
    """The primitives `highprec.Interpreter.apply` evaluates element by element."""
    return {*interp.unary, *interp.binary, *hp.INT_UNARY, *hp.INT_BINARY, *hp.COMPARE, *hp.IDENTITY, "select_n",
            "clamp", "is_finite", "convert_element_type", "integer_pow", "round", "not", "and", "or", "xor"}


def _broadcasts(shape, out) -> bool:
    """An elementwise operand: the result's shape, or one it broadcasts to (a scalar, size-1 dimensions)."""
    try:
        return np.broadcast_shapes(shape, out) == tuple(out)
    except ValueError:
        return False


# Calls whose result is their body's (the custom-derivative calls' primal body, as evaluation runs it)
PRIMAL_CALLS = CALLS | {"remat2", "checkpoint", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"}


def exact_outputs(closed: ClosedJaxpr, args: Sequence[np.ndarray], dps: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The outputs of `closed` on `args` over the extended reals at `dps` digits: per output, an array of
    mpmath numbers (bools and ints for those dtypes) and a mask of the elements rounding could have decided."""
    closed = inline_calls(closed, PRIMAL_CALLS)
    interp = hp.Interpreter(dps, domain=False)
    jaxpr = closed.jaxpr
    env: dict[int, tuple] = {}
    for v, x in zip([*jaxpr.constvars, *jaxpr.invars], [*closed.consts, *args], strict=True):
        env[id(v)] = exact_input(x, v.aval.dtype, dps)

    def read(atom) -> tuple:
        return _literal(atom, dps) if isinstance(atom, Literal) else env[id(atom)]

    for eqn in jaxpr.eqns:
        env[id(eqn.outvars[0])] = exact_eqn(interp, eqn, [read(a) for a in eqn.invars])
    return [(read(v)[0], read(v)[2]) for v in jaxpr.outvars]


def exact_eqn(interp: hp.Interpreter, eqn, operands: Sequence[tuple]) -> tuple:
    """The exact value of a one-result equation from its operands' exact values (the three arrays of a value:
    the numbers, whether each is exact, whether rounding could have decided it); raises
    UnsupportedPrimitive for a primitive the high-precision evaluation does not have."""
    prim = eqn.primitive
    if len(eqn.outvars) != 1:
        raise UnsupportedPrimitive(prim, "high-precision evaluation (one result)", WHERE)
    if not operands:  # iota and other constants: NumPy's values are exact
        aval = eqn.outvars[0].aval
        return exact_input(np.asarray(get_impl(prim)(**eqn.params)), aval.dtype, interp.ctx.dps)
    if prim in STRUCTURAL:
        return STRUCTURAL[prim](interp, eqn, *operands)
    shape = eqn.outvars[0].aval.shape
    if prim not in _elementwise_names(interp) or any(not _broadcasts(x[0].shape, shape) for x in operands):
        raise UnsupportedPrimitive(prim, "high-precision evaluation", "rewrites/verify/highprec.py for an "
                                   f"elementwise primitive, {WHERE} for another")
    return _elementwise(interp, eqn, *operands)


def rounded(exact: np.ndarray, dtype) -> np.ndarray:
    """`exact` (mpmath numbers, or ints and bools) correctly rounded to `dtype` (to nearest, ties to even,
    subnormals and overflow to ±inf included); an undefined integer (None) stays None in an object array."""
    if dtype.kind != "f":
        if any(x is None for x in exact.flat):
            return exact.copy()
        if dtype.kind in "iu":  # integer arithmetic wraps: the exact result modulo 2^bits
            span = 1 << dtype.bits
            wrapped = [int(x) % span for x in exact.flat]
            values = [x - span if dtype.kind == "i" and x >= span // 2 else x for x in wrapped]
            return np.asarray(values, dtype=dtype.numpy).reshape(exact.shape)
        return np.asarray(exact.tolist(), dtype=dtype.numpy).reshape(exact.shape)
    info = ml_dtypes.finfo(dtype.numpy)
    p, lowest = int(info.nmant) + 1, int(info.minexp) - int(info.nmant)
    biggest = float(info.max)

    def one(v) -> float:
        ctx = v.context
        if not ctx.isfinite(v) or v == 0:
            return float(v)
        _, e = ctx.frexp(v)  # v = m * 2^e with 1/2 <= |m| < 1
        k = max(int(e) - p, lowest)
        r = float(ctx.ldexp(ctx.nint(ctx.ldexp(v, -k)), k)) if abs(v) < 2 * biggest else math.inf * ctx.sign(v)
        return r if abs(r) <= biggest else math.copysign(math.inf, r)

    return np.asarray([one(v) for v in exact.flat], dtype=np.float64).astype(dtype.numpy).reshape(exact.shape)


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == object or b.dtype == object:
        return np.array([x == y for x, y in zip(a.flat, b.flat, strict=True)], dtype=bool).reshape(a.shape)
    if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
        w = a.astype(np.float64), b.astype(np.float64)
        return (w[0] == w[1]) | (np.isnan(w[0]) & np.isnan(w[1]))
    return a == b


def ground_truth(closed: ClosedJaxpr, args, levels: Sequence[int] = LEVELS) -> tuple[list, list]:
    """(the exact outputs correctly rounded, per output a mask of the elements not settled at the last
    precision), the precision growing along `levels` until every element is settled: the same rounded value
    at two consecutive precisions, and no step that rounding could have decided; at the last, one of the two
    (module docstring)."""
    avals = closed.out_avals
    before = None
    for level, dps in enumerate(levels):
        outs = exact_outputs(closed, args, dps)
        now = [rounded(x, a.dtype) for (x, _), a in zip(outs, avals, strict=True)]
        if before is not None:
            last = level == len(levels) - 1
            unsettled = [(bad & ~_same(b, n)) if last else (bad | ~_same(b, n))
                         for b, n, (_, bad) in zip(before, now, outs, strict=True)]
            if last or not any(u.any() for u in unsettled):
                return now, unsettled
        before = now
    raise ValueError(f"ground_truth needs at least two precisions, got {list(levels)}")


