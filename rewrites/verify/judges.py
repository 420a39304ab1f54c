"""How an optimized program's results must agree with the original's, by rule set: the judges that the
semantics run (`rewrites.verify.semantics`) and each run's certificate (`rewrites.certificate`) share.

Each named rule set promises what its soundness classes allow (DESIGN.md), and is judged by that promise,
output by output, on every input sample of a kind (`JUDGES`; `JUDGED` names the kinds each judges):

    strict   bit-identical on every sample: a nan matches any nan, zeros keep their sign
    default  within the tolerance wherever the original's result is finite, on finite and special samples;
             on special samples also the same nan and infinity pattern (`eval.oracle.mismatch`, the rule the
             oracle fixtures are compared by), an infinity's sign excepted where it follows a zero's sign,
             which `real` rules may change (`_unsigned_infinities`)
    fast     within the tolerance wherever the original's result is finite, on finite samples only
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from eval.interpreter import eval_jaxpr
from eval.oracle import mismatch
from ir.core import ClosedJaxpr, DropVar, Jaxpr

# Random programs: real rules (reassociation, exp/log identities) change the rounding of intermediates, and an
# f64 program may pass through f32 (convert_element_type). f64: 1e-6 leaves room for a dozen f32 roundings;
# f32: ~1.2e-7 per rounding amplified by cancellation and up to 12 later operations needs 1e-3 (the values of
# tests/rewrites/test_optimize_properties.py); f16 and bf16 scale with their epsilon.
DEFAULT_TOLERANCE = {"float64": 1e-6, "complex128": 1e-6, "float32": 1e-3, "complex64": 1e-3,
                     "float16": 1e-2, "bfloat16": 1e-1}
OTHER_FLOAT_TOLERANCE = 0.25  # 8-bit floats (ml_dtypes)


# The kinds of input sample: moderate finite values; IEEE special values (±0, ±inf, nan) among moderate ones;
# extreme magnitudes (subnormal, tiny, huge, the largest finite) among moderate ones; finite values on which
# the original program makes a special value inside (pow(-4.4, -4.4) is nan), see `inner_kind`.
FINITE, SPECIAL, RANGE, INNER = "finite", "special", "range", "inner"


def _as_float(a: np.ndarray) -> np.ndarray | None:
    """The array as float64/complex128 (exact for every float width), None for integers and bools."""
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind in "fV":
        return a.astype(np.float64)
    return None


def _same_type(ref: np.ndarray, got: np.ndarray) -> str | None:
    if ref.dtype != got.dtype or ref.shape != got.shape:
        return f"type changed: {ref.dtype}{list(ref.shape)} became {got.dtype}{list(got.shape)}"
    return None


def agree_strict(ref: np.ndarray, got: np.ndarray, kind: str, tol: float) -> str | None:
    """Bit-identical on every sample, a nan matching any nan (IEEE gives a nan's sign and payload no meaning)."""
    problem = _same_type(ref, got)
    if problem:
        return problem
    r, g = _as_float(ref), _as_float(got)
    if r is None:
        return None if np.array_equal(ref, got) else "values differ"
    pairs = [(r.real, g.real), (r.imag, g.imag)] if r.dtype.kind == "c" else [(r, g)]
    for x, y in pairs:
        same = (x == y) & (np.signbit(x) == np.signbit(y)) | (np.isnan(x) & np.isnan(y))
        if not same.all():
            return f"bits differ at {int((~same).sum())} of {same.size} elements"
    return None


def agree_default(ref: np.ndarray, got: np.ndarray, kind: str, tol: float) -> str | None:
    """Within `tol` wherever the original's result is finite; on special samples also the same nan and ±inf
    pattern. `real` promises agreement where the left side is defined over the reals, and the same kind of
    result at IEEE special inputs: at finite inputs, a non-finite original result is a singularity (no
    promise) or an intermediate that overflowed or underflowed, which `real` rules may change (log(exp(x))
    -> x gives -874.6 where the original's exp underflows to 0 and its log to -inf). Extreme magnitudes are
    left to `strict` for the same reason: telling such a change from a false rule needs a real-number
    evaluation of the whole program."""
    problem = _same_type(ref, got)
    if problem or kind == RANGE:
        return problem
    if kind != SPECIAL:
        return _close_where_finite(ref, got, tol)
    return mismatch(_unsigned_infinities(got, ref), ref, tol, tol)


def _unsigned_infinities(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """`got` with each infinity whose sign alone differs from the original's given the original's sign.

    A `real` rule may change the sign of a zero (0 and -0 are one real number: `0 - x -> -x` at x = +0,
    `x - x -> x * 0` at x = -1.5), and a later division or rsqrt turns that zero into an infinity of the
    other sign (1/(x - x) is +inf, 1/(x * 0) is -inf): the result keeps its kind, an infinity, and only its
    sign follows the zero's. `strict` is the set whose results keep the sign of every zero."""
    g, r = _as_float(got), _as_float(ref)
    if g is None or g.dtype.kind == "c":
        return got
    flipped = np.isinf(g) & np.isinf(r) & (np.sign(g) != np.sign(r))
    return np.where(flipped, ref, got).astype(got.dtype) if flipped.any() else got


def agree_fast(ref: np.ndarray, got: np.ndarray, kind: str, tol: float) -> str | None:
    """On finite samples only: within `tol` wherever the original's result is finite. `unsafe` rules change
    what special values do, also those a program makes inside from finite inputs (an INNER sample: le-self
    makes le(nan, nan) True where pow(-4.4, -4.4) is nan), so those samples are not judged."""
    problem = _same_type(ref, got)
    if problem or kind != FINITE:
        return problem
    return _close_where_finite(ref, got, tol)


def _close_where_finite(ref: np.ndarray, got: np.ndarray, tol: float) -> str | None:
    r = _as_float(ref)
    if r is None:
        return mismatch(got, ref, tol, tol)
    finite = np.isfinite(r)
    return mismatch(got[finite], ref[finite], tol, tol)


JUDGES: dict[str, Callable[[np.ndarray, np.ndarray, str, float], str | None]] = {
    "strict": agree_strict, "default": agree_default, "fast": agree_fast}

# The sample kinds each judge judges; on the others a rule set promises nothing (a certificate counts a
# difference there, found by `observed_difference`, as tolerated).
JUDGED = {"strict": frozenset({FINITE, SPECIAL, RANGE, INNER}), "default": frozenset({FINITE, SPECIAL, INNER}),
          "fast": frozenset({FINITE})}


def observed_difference(ref: np.ndarray, got: np.ndarray, tol: float) -> str | None:
    """A difference in kind or beyond `tol` (the default judge's rule for special samples), whatever the
    sample's kind: what a certificate reports on samples its rule set does not judge."""
    return agree_default(ref, got, SPECIAL, tol)



def sample_kind(args: Sequence[np.ndarray]) -> str:
    """SPECIAL when an input holds nan, ±inf or -0.0 (the values `fast` may treat differently), else FINITE."""
    for a in args:
        v = _as_float(np.asarray(a))
        if v is None:
            continue
        for part in (v.real, v.imag) if v.dtype.kind == "c" else (v,):
            if not np.isfinite(part).all() or ((part == 0) & np.signbit(part)).any():
                return SPECIAL
    return FINITE


def run(closed: ClosedJaxpr, args) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return [np.asarray(o) for o in eval_jaxpr(closed, *args)]


def tolerance_for(closed: ClosedJaxpr) -> float:
    """The loosest of `DEFAULT_TOLERANCE` over the program's input and output dtypes (8-bit floats:
    `OTHER_FLOAT_TOLERANCE`; integers and bools: exact)."""
    return max([_tolerance(a.dtype) for a in (*closed.in_avals, *closed.out_avals)] or [0.0])


def _tolerance(dtype) -> float:
    if dtype.name in DEFAULT_TOLERANCE:
        return DEFAULT_TOLERANCE[dtype.name]
    return OTHER_FLOAT_TOLERANCE if dtype.kind in "fc" else 0.0


def makes_specials_inside(closed: ClosedJaxpr, args) -> bool:
    """Whether a top-level equation of `closed` makes a nan or ±inf from `args` (a FINITE sample that does
    is judged as INNER)."""
    return has_specials(run(with_every_result(closed), args)[len(closed.jaxpr.outvars):])


def with_every_result(closed: ClosedJaxpr) -> ClosedJaxpr:
    """`closed` with the result of every top-level equation as outputs after its own."""
    jaxpr = closed.jaxpr
    kept = [v for e in jaxpr.eqns for v in e.outvars if not isinstance(v, DropVar)]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, [*jaxpr.outvars, *kept], jaxpr.eqns), closed.consts)


def has_specials(values: Sequence[np.ndarray]) -> bool:
    """Whether a float or complex array among `values` holds a nan or ±inf."""
    for value in values:
        v = _as_float(np.asarray(value))
        if v is not None and not np.isfinite(v).all():
            return True
    return False
