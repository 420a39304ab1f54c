"""Numeric evidence about one elementwise rule at one dtype: bits, result kinds, and values over the reals.

    check_dtype(rule, dtype, budget, real) -> Evidence(bits, kind, real: Counterexample | None, ...)

Points: every combination of the special values of each input's dtype (`special_values`: ±0, ±1, ±2, ±0.5,
±inf, nan, the smallest subnormal, the largest finite, tiny and huge magnitudes; integer extremes;
False/True), then random points (mixed magnitudes, fixed seed), both restricted to where the rule's value
conditions hold (as the engine's facts mean them: `positive` is x > 0 or nan, `finite` excludes inf and
nan). Both sides run vectorized in NumPy (`eval.interpreter`), n points per call.

- bits: the first point where the results differ bit for bit (any nan matches any nan).
- kind: a point where the results differ in kind (nan, +inf, -inf, a number; a bool or integer result by
  value) and the difference is no artifact of float rounding or overflow: the high-precision interpreter
  (`highprec`: extended reals, unbounded exponents) reproduces both kinds, reliably (no step decided by
  rounding). At finite inputs that counts only where the left side is undefined over the reals (0/0,
  log(-1): a nan that becomes a number); where it is a real number the point goes to the real check.
- real: a point with finite inputs where one side is a real number and the other is not the same number
  (another value, or undefined): evaluated at 30 digits and confirmed at 400 (a cancellation's remainder
  shrinks with the precision, a real difference does not; a result rounding could have decided is no
  evidence). Candidates: the points the other checks flagged, the finite special combinations whose float
  results are not already nearly identical, then a hypothesis search (`hypothesis.find`, `budget`
  examples, derandomized) over finite inputs drawn where the conditions hold. It runs at float64 and the
  integer dtypes (Python ints, no wrapping, division truncating), and only where the bits differ.
- complex dtypes (opt-in): bits, kinds, and complex128 values at moderate inputs (`_complex_evidence`).
`both_ways` rules are checked in both directions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

from eval.interpreter import eval_jaxpr
from ir import dtypes as D
from ir.errors import UnsupportedPrimitive
from rewrites.pattern import PatternRule
from rewrites.verify import highprec as hp
from rewrites.verify.instantiate import Instance, instantiate

LOW_DPS, HIGH_DPS = 30, 400
MAX_GRID = 60_000  # special-value combinations per dtype (more inputs: an evenly spaced subset)
MAX_REAL_GRID = 600  # finite combinations evaluated in high precision
MAX_ARBITRATED = 300  # flagged points evaluated in high precision
SEED = 20240611


@dataclass(frozen=True)
class Counterexample:
    check: str  # bits | kind | real
    dtype: str
    inputs: tuple[tuple[str, str], ...]
    lhs: str
    rhs: str
    note: str = ""

    def __str__(self) -> str:
        point = ", ".join(f"{k}={v}" for k, v in self.inputs) or "no inputs"
        return f"{point} ({self.dtype}): {self.lhs} vs {self.rhs}" + (f" ({self.note})" if self.note else "")

    def to_dict(self) -> dict:
        return {"check": self.check, "dtype": self.dtype, "inputs": dict(self.inputs), "lhs": self.lhs,
                "rhs": self.rhs, "note": self.note}

    @classmethod
    def from_dict(cls, d: dict) -> Counterexample:
        return cls(d["check"], d["dtype"], tuple(d["inputs"].items()), d["lhs"], d["rhs"], d["note"])


@dataclass(frozen=True)
class Evidence:
    dtype: str
    points: int  # points of the bit and kind checks
    bits: Counterexample | None
    kind: Counterexample | None
    real: Counterexample | None
    real_points: int = 0  # points evaluated in high precision (0: the real check did not run here)
    real_unknown: str = ""  # why the real check could not run
    real_how: str = "high-precision points"  # what the real check evaluated
    params: str = ""  # the array shape and sampled param values, for array rules

    @property
    def real_checked(self) -> bool:
        return self.real_points > 0 and not self.real_unknown


# --- points ---------------------------------------------------------------------------------------------

def special_values(dtype: D.DType) -> np.ndarray:
    if dtype.kind == "f":
        info = ml_dtypes.finfo(dtype.numpy)
        tiny, huge = (1e-300, 1e300) if dtype.bits == 64 else (1e-30, 1e30)
        sub, big = float(info.smallest_subnormal), float(info.max)
        values = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, np.inf, -np.inf, np.nan, sub, -sub, big, -big,
                  tiny, -tiny, huge, -huge]
        return np.array(values, dtype=dtype.numpy)
    if dtype.kind in "iu":
        info = np.iinfo(dtype.numpy)
        small = [0, 1, 2, 3] + ([-1, -2] if info.min < 0 else [])
        values = sorted(set(small), key=lambda v: (abs(v), v)) + [int(info.max), int(info.max) - 1,
                                                                    int(info.min), int(info.min) + 1]
        return np.array(list(dict.fromkeys(values)), dtype=dtype.numpy)
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind == "c":
        parts = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, np.inf, -np.inf, np.nan]
        return np.array([complex(re, im) for re in parts for im in parts], dtype=dtype.numpy)
    raise ValueError(f"no special values for {dtype.name}")


def random_values(rng: np.random.Generator, dtype: D.DType, m: int) -> np.ndarray:
    if dtype.kind == "b":
        return rng.integers(0, 2, m).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype.numpy)
        wide = rng.integers(int(info.min), int(info.max), m // 2, endpoint=True, dtype=np.int64)
        small = np.clip(rng.integers(-8, 9, m - m // 2), int(info.min), int(info.max))
        return np.concatenate([wide, small]).astype(dtype.numpy)
    if dtype.kind == "c":
        part = D.float64 if dtype.bits == 128 else D.float32
        out = np.empty(m, dtype.numpy)
        out.real, out.imag = random_values(rng, part, m), random_values(rng, part, m)[::-1]
        return out
    info = ml_dtypes.finfo(dtype.numpy)
    k = m // 4
    lo, hi = math.log2(float(info.smallest_subnormal)), math.log2(float(info.max))
    signs = rng.choice([-1.0, 1.0], k)
    with np.errstate(over="ignore"):
        mags = signs * np.minimum(2.0 ** rng.uniform(lo, hi, k), float(info.max))
    parts = [mags, rng.uniform(-4, 4, k), rng.integers(-8, 9, k).astype(float), rng.uniform(-1, 1, m - 3 * k)]
    return np.concatenate(parts).astype(dtype.numpy)


def _subset(n: int, limit: int) -> np.ndarray:
    return np.arange(n) if n <= limit else np.unique(np.linspace(0, n - 1, limit).round().astype(np.int64))


def grid(in_avals) -> list[np.ndarray]:
    if not in_avals:
        return []
    lists = [special_values(a.dtype) for a in in_avals]
    total = math.prod(len(v) for v in lists)
    picks = _subset(total, MAX_GRID)
    index = np.array(np.unravel_index(picks, [len(v) for v in lists]))
    return [values[i] for values, i in zip(lists, index, strict=True)]


def condition_mask(rule: PatternRule, names, arrays) -> np.ndarray:
    """Where every value condition holds, as the engine's facts mean it (sign facts let nan through)."""
    by_name = dict(zip(names, arrays, strict=True))
    mask = np.ones(len(arrays[0]) if arrays else 1, dtype=bool)
    with np.errstate(invalid="ignore"):
        for c in rule.conditions:
            if c.kind not in CONDITION_TESTS:
                continue
            v = by_name[c.args[0]]
            nan = np.isnan(v) if v.dtype.kind == "f" else np.zeros(v.shape, bool)
            mask &= CONDITION_TESTS[c.kind](v) | (nan & (c.kind != "finite"))
    return mask


CONDITION_TESTS = {
    "positive": lambda v: v > 0, "nonneg": lambda v: v >= 0, "nonzero": lambda v: v != 0,
    "within_one": lambda v: (v >= -1) & (v <= 1), "above_minus_one": lambda v: v >= -1,
    "finite": lambda v: np.isfinite(v) if v.dtype.kind == "f" else np.ones(v.shape, bool),
}


# --- displays and comparisons ------------------------------------------------------------------------

def show(v) -> str:
    if hp.is_float(v):
        if not hp.context(LOW_DPS).isfinite(v):
            return hp.kind(v)
        if v != 0 and abs(hp.context(LOW_DPS).mag(v)) > 4000:  # printing a 300-digit exponent takes seconds
            return f"{'-' if v < 0 else ''}2^{int(hp.context(LOW_DPS).mag(v))} (about)"
        return hp.mpmath.nstr(v, 17)
    if v is None:
        return "undefined"
    return str(v)


def _point_inputs(names, arrays, i) -> tuple[tuple[str, str], ...]:
    return tuple((name, str(a[i])) for name, a in zip(names, arrays, strict=True))


def float_kind(v: np.ndarray) -> np.ndarray:
    """"nan", "inf", "-inf", "num" per element (floats; both parts of a complex number); the values
    themselves otherwise."""
    if v.dtype.kind == "c":  # a nan part makes a complex nan, an inf part (no nan) a complex infinity
        return np.where(np.isnan(v), "nan", np.where(np.isinf(v), "inf", "num"))
    if v.dtype.kind != "f" and v.dtype != ml_dtypes.bfloat16:
        return v
    w = v.astype(np.float64)
    return np.where(np.isnan(w), "nan", np.where(w == np.inf, "inf", np.where(w == -np.inf, "-inf", "num")))


def bits_differ(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    if lhs.dtype.kind == "c":  # part by part; any nan (a nan in either part) matches any nan
        parts = [bits_differ(np.ascontiguousarray(part(lhs)), np.ascontiguousarray(part(rhs)))
                 for part in (np.real, np.imag)]
        return (parts[0] | parts[1]) & ~(np.isnan(lhs) & np.isnan(rhs))
    width = lhs.dtype.itemsize
    same = (lhs.view(np.uint8).reshape(-1, width) == rhs.view(np.uint8).reshape(-1, width)).all(1)
    if lhs.dtype.kind == "f":
        same |= np.isnan(lhs) & np.isnan(rhs)
    return ~same


def _defined(v) -> bool:
    """A real number (finite float), or a defined bool or integer."""
    if hp.is_float(v):
        return bool(hp.context(LOW_DPS).isfinite(v))
    return v is not None


def real_difference(inst: Instance, point, both_ways: bool) -> tuple | None:
    """(left, right, note) where a side defined over the reals at `point` differs from the other, else None
    (also when rounding could have decided the difference: see `highprec`'s significance tracking)."""
    lo = hp.evaluate(inst, point, LOW_DPS, domain=True)
    if hp.close(lo[0], lo[1], LOW_DPS) or not (_defined(lo[0]) or (both_ways and _defined(lo[1]))):
        return None
    left, right, reliable = hi = hp.evaluate(inst, point, HIGH_DPS, domain=True)
    if not reliable or hp.close(left, right, HIGH_DPS):
        return None
    forward = _defined(left)
    if not forward and not (both_ways and _defined(right)):
        return None
    if all(hp.is_float(v) and _defined(v) for v in (*lo[:2], *hi[:2])):
        shrink = abs(hi[0] - hi[1]) / abs(lo[0] - lo[1])
        if shrink < hp.context(HIGH_DPS).mpf(10) ** (-(HIGH_DPS - LOW_DPS) // 2):
            return None  # a cancellation's remainder: it shrank with the precision
    return left, right, "over the reals" + ("" if forward else ", right to left")


def _float_point(point) -> bool:
    return all(not isinstance(x, (float, np.floating)) or math.isfinite(x) for x in point)


# --- the checks ------------------------------------------------------------------------------------------

def check_dtype(rule: PatternRule, dtype: D.DType, budget: int, real: bool) -> Evidence:
    """Evidence about `rule` at `dtype`; `real`: also run the real-number search (float64, integers)."""
    scalar = instantiate(rule, dtype)
    names = scalar.names
    rng = np.random.default_rng(SEED)
    special = grid(scalar.in_avals)
    m = int(min(50_000, max(1000, 10 * budget)))
    rand = [random_values(rng, a.dtype, m) for a in scalar.in_avals]
    arrays = [np.concatenate([s, r]) for s, r in zip(special, rand, strict=True)]
    keep = condition_mask(rule, names, arrays)
    arrays = [a[keep] for a in arrays]
    n = len(arrays[0]) if arrays else 1  # a rule without variables (on literals) has one point
    if n == 0:
        return Evidence(dtype.name, 0, None, None, None, 0, "no point satisfies the conditions")
    vector = instantiate(rule, dtype, n)
    with np.errstate(all="ignore"):
        [lhs] = eval_jaxpr(vector.lhs, *arrays)
        [rhs] = eval_jaxpr(vector.rhs, *arrays)
    lhs, rhs = np.broadcast_to(np.asarray(lhs), (n,)), np.broadcast_to(np.asarray(rhs), (n,))
    bits_cex = None
    differ = bits_differ(np.ascontiguousarray(lhs), np.ascontiguousarray(rhs))
    if differ.any():
        i = int(np.argmax(differ))
        bits_cex = Counterexample("bits", dtype.name, _point_inputs(names, arrays, i), str(lhs[i]), str(rhs[i]))
    if dtype.kind == "c":
        return _complex_evidence(scalar, arrays, lhs, rhs, bits_cex)
    floating = dtype.kind == "f"
    flagged = np.flatnonzero(float_kind(lhs) != float_kind(rhs) if floating else differ)
    flagged = flagged[np.argsort(_extremeness(arrays)[flagged], kind="stable")][:MAX_ARBITRATED]
    kind_cex, real_cex, unknown, evaluated = None, None, "", 0
    try:
        for i in flagged:
            point = [a[i] for a in arrays]
            evaluated += 1
            verdict = _arbitrate(scalar, point, str(lhs[i]), str(rhs[i]), floating, rule.both_ways)
            if verdict is None:
                continue
            cex = Counterexample(verdict[0], dtype.name, _point_inputs(names, arrays, int(i)), *verdict[1:])
            if verdict[0] == "real" and real_cex is None:
                real_cex = cex
            elif verdict[0] == "kind" and kind_cex is None:
                kind_cex = cex
            if kind_cex and real_cex:
                break
        if real and real_cex is None and differ.any():  # bit-identical results need no real-number search
            real_cex, count = _real_search(rule, scalar, special, lhs, rhs, budget)
            evaluated += count
    except UnsupportedPrimitive as err:
        unknown = f"no high-precision form: {err}"
    return Evidence(dtype.name, n, bits_cex, kind_cex, real_cex, evaluated if real else 0, unknown)


def _extremeness(arrays) -> np.ndarray:
    """How many inputs of each point are finite but not among 0, ±0.5, ±1, ±2: points made of the simple
    special values are arbitrated first, before those whose overflow artifacts abound."""
    count = np.zeros(len(arrays[0]) if arrays else 1, dtype=np.int64)
    for a in arrays:
        if a.dtype.kind == "f":
            with np.errstate(invalid="ignore"):
                count += np.isfinite(a) & ~np.isin(np.abs(a), [0.0, 0.5, 1.0, 2.0])
    return count


def _complex_evidence(scalar: Instance, arrays, lhs, rhs, bits_cex) -> Evidence:
    """Complex values have no high-precision interpreter: kinds (nan if a part is nan, else inf if a part
    is inf) at the special values, which have no extremes, so nothing overflows; complex128 values at
    moderate inputs (|z| <= 8) must agree within 1e-9 * max(1, |inputs|)^3, far above rounding."""
    dtype, names = scalar.dtype.name, scalar.names
    kind_cex = real_cex = None
    differ = np.flatnonzero(float_kind(lhs) != float_kind(rhs))
    if differ.size:
        i = int(differ[0])
        kind_cex = Counterexample("kind", dtype, _point_inputs(names, arrays, i), str(lhs[i]), str(rhs[i]))
    moderate = np.ones(len(lhs), dtype=bool)
    scale = np.ones(len(lhs))
    for a in arrays:
        if a.dtype.kind in "fc":
            moderate &= np.isfinite(a) & (np.abs(a) <= 8)
            scale = np.maximum(scale, np.abs(a))
    if scalar.dtype.bits < 128:  # complex64 rounds too coarsely for a value check: bits and kinds only
        moderate[:] = False
    with np.errstate(all="ignore"):
        far = ~np.isfinite(rhs) | (np.abs(lhs - rhs) > 1e-9 * scale ** 3)
    bad = np.flatnonzero(moderate & np.isfinite(lhs) & far)
    if bad.size:
        i = int(bad[0])
        real_cex = Counterexample("real", dtype, _point_inputs(names, arrays, i), str(lhs[i]), str(rhs[i]),
                                  f"{dtype} values at moderate inputs")
    return Evidence(dtype, len(lhs), bits_cex, kind_cex, real_cex, int(moderate.sum()),
                    real_how=f"{dtype} points at moderate inputs")


def bits_at(rule: PatternRule, dtype: D.DType, point) -> Counterexample | None:
    """A bit difference of the two sides at one point, or None."""
    vector = instantiate(rule, dtype, 1)
    arrays = [np.array([x], dtype=a.dtype.numpy) for x, a in zip(point, vector.in_avals, strict=True)]
    with np.errstate(all="ignore"):
        lhs, rhs = (np.broadcast_to(np.asarray(eval_jaxpr(side, *arrays)[0]), (1,)) for side in (vector.lhs,
                                                                                                 vector.rhs))
    if not bits_differ(np.ascontiguousarray(lhs), np.ascontiguousarray(rhs))[0]:
        return None
    return Counterexample("bits", dtype.name, _point_inputs(vector.names, arrays, 0), str(lhs[0]), str(rhs[0]))


def _arbitrate(inst: Instance, point, lhs_float: str, rhs_float: str, floating: bool, both_ways: bool):
    """Whether a point where the float results differ in kind (or, for integers, in bits) shows a real
    difference ("real", ...), a difference in special-value behaviour ("kind", ...), or an artifact (None)."""
    if _float_point(point):
        d = real_difference(inst, point, both_ways)
        if d is not None:
            return ("real", show(d[0]), show(d[1]), d[2])
        left, right, reliable = hp.evaluate(inst, point, LOW_DPS, domain=True)
        if _defined(left) or (both_ways and _defined(right)) or not reliable:
            return None  # equal over the reals: rounding or overflow (or integer wrapping), or undecided
        if not floating:
            return ("kind", lhs_float, rhs_float, "the left side is undefined over the integers")
    left, right, reliable = hp.evaluate(inst, point, LOW_DPS, domain=False)
    lk, rk = _float_kind_text(lhs_float), _float_kind_text(rhs_float)
    if reliable and hp.kind(left) == lk and hp.kind(right) == rk:
        return ("kind", lhs_float, rhs_float, "")
    return None


def _float_kind_text(s: str):
    if s in ("True", "False"):
        return s == "True"
    v = float(s)
    return "nan" if math.isnan(v) else "inf" if v == math.inf else "-inf" if v == -math.inf else "num"


def _real_search(rule, scalar: Instance, special, lhs, rhs, budget: int) -> tuple[Counterexample | None, int]:
    names = scalar.names
    finite = np.ones(len(special[0]) if special else 1, dtype=bool)
    for a in special:
        if a.dtype.kind == "f":
            finite &= np.isfinite(a) & ~((a == 0) & np.signbit(a))
    finite &= condition_mask(rule, names, special)
    idx = np.flatnonzero(finite)
    # the special points are the first rows of the evaluated vectors (the mask keeps their order)
    full_mask = condition_mask(rule, names, special)
    pos = np.cumsum(full_mask) - 1
    suspicious = [i for i in idx if not _nearly_equal(lhs[pos[i]], rhs[pos[i]])]
    count = 0
    for i in _subset_list(suspicious, MAX_REAL_GRID):
        point = [a[i] for a in special]
        count += 1
        d = real_difference(scalar, point, rule.both_ways)
        if d is not None:
            return Counterexample("real", scalar.dtype.name, _point_inputs(names, special, i), show(d[0]),
                                  show(d[1]), d[2]), count
    return _hypothesis_search(rule, scalar, budget, count)


def _nearly_equal(a, b) -> bool:
    if np.asarray(a).dtype.kind != "f":
        return bool(a == b)
    a, b = float(a), float(b)
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def _subset_list(items: list, limit: int) -> list:
    return [items[i] for i in _subset(len(items), limit)]


def strategy(rule: PatternRule, name: str, dtype: D.DType):
    """Finite values of `dtype` where the rule's conditions on `name` hold."""
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype.numpy)
        return st.integers(int(info.min), int(info.max))
    lo, hi, exclude_lo, nonzero = None, None, False, False
    for c in rule.conditions:
        if c.args[:1] != (name,):
            continue
        if c.kind == "positive":
            lo, exclude_lo = max(lo or 0.0, 0.0), True
        elif c.kind == "nonneg":
            lo = max(lo or 0.0, 0.0)
        elif c.kind == "within_one":
            lo, hi = max(lo if lo is not None else -1.0, -1.0), min(hi if hi is not None else 1.0, 1.0)
        elif c.kind == "above_minus_one":
            lo = max(lo if lo is not None else -1.0, -1.0)
        elif c.kind == "nonzero":
            nonzero = True
    s = st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False, exclude_min=exclude_lo,
                  width=dtype.bits)
    return s.filter(lambda v: v != 0) if nonzero else s


def _hypothesis_search(rule, scalar: Instance, budget: int, count: int) -> tuple[Counterexample | None, int]:
    strategies = st.tuples(*[strategy(rule, name, a.dtype) for name, a in zip(scalar.names, scalar.in_avals,
                                                                             strict=True)])
    calls = [0]

    def differs(point) -> bool:
        calls[0] += 1
        return real_difference(scalar, point, rule.both_ways) is not None

    config = settings(max_examples=budget, derandomize=True, database=None, deadline=None,
                      suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink])
    try:
        point = find(strategies, differs, settings=config)
    except (NoSuchExample, Unsatisfiable):
        return None, count + calls[0]
    d = real_difference(scalar, point, rule.both_ways)
    inputs = tuple((name, repr(v)) for name, v in zip(scalar.names, point, strict=True))
    return Counterexample("real", scalar.dtype.name, inputs, show(d[0]), show(d[1]), d[2]), count + calls[0]

