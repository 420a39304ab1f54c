"""Fitting a primitive's measured times to a small explainable model.

    seconds = c0 + c_elem * elements + c_flops * flops + c_bytes * bytes

`elements` counts the equation's output elements, `flops` and `bytes` are `rewrites.costs.flops` and
`rewrites.costs.bytes_moved` of the equation. Output elements and bytes separate what a reduction's
input size alone cannot: NumPy sums 2^14 numbers in rows of 16 six times slower than in one row.
The coefficients are non-negative (scipy's NNLS), fitted to rows weighted by 1 / measured time, so that
what is minimised is the sum of squared *relative* errors: a 2 µs op mispredicted by 2 µs is as wrong as
a 20 ms op mispredicted by 20 ms. Below the noise floor (`floor`, a fraction of the backend's call
overhead, which the subtraction of that overhead cannot resolve) a time weighs as if it were the floor:
there the error is absolute, so that a 20 ns reshape cannot outweigh the rest.

A feature column proportional to an earlier one over the rows (flops of an elementwise op, always
weight × elements) is left out rather than split arbitrarily between the two. Columns are scaled to a
maximum of 1 before NNLS, for conditioning, and the coefficients scaled back.

Piecewise: small and large arrays often cost differently per element (caches, a library switching to
threads or blocking), so the rows may be split at a size of the grid into two segments, each with its
own coefficients. Segments are chosen by `size`, the elements of the equation's largest operand or
result (a reduction's input, a broadcast's output). The split that minimises the summed squared
relative error is taken if it lowers the one-segment error by at least `SPLIT_GAIN` (an extra segment
doubles the parameters) and leaves `MIN_SEGMENT_ROWS` rows on each side. A segment serves sizes up to
its `max_elements` (the geometric mean of the sizes either side of the split; None for the last).
Within a segment the price grows with every feature; across the split it may step down (the two
segments are fitted independently).

Variants: one primitive may run different code by dtype or mode (generated NumPy computes an int `max`
with `np.maximum` but a float one through its NaN-propagating implementation, 4x slower at small sizes;
`round` to nearest even is 4x faster than away from zero), so rows are also grouped by `variant`, the
dtypes of operands and results and the scalar params (`f64,f64->f64`, `f32->f32 rounding_method=0`),
and each variant gets a model of its own when a primitive has several; the primitive's model over all
its rows prices variants calibration did not see.

The fallback, for primitives a profile does not name, is one fixed cost and one cost per byte over the
elementwise probes of every primitive, fitted in log space (`fit_fallback`): across primitives whose
costs per byte differ a hundredfold, relative-error weights would pull it to the cheapest ones (an
overestimate by 10x is an error of 900%, an underestimate by 10x one of 90%); the log error treats a
factor either way alike.

A primitive (or variant) measured only over a narrow range of sizes (oracle samples: `NARROW_RANGE`)
cannot tell a fixed cost from a per-element one, so it keeps the size coefficients of a wider model
(its primitive's, else the fallback's) and fits only its own fixed cost `c0`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares, nnls

from ir.dtypes import DType
from ir.params import Symbol

FEATURES = ("c0", "c_elem", "c_flops", "c_bytes")  # coefficient names, in column order
SPLIT_GAIN = 0.25
MIN_SEGMENT_ROWS = 3  # a variant's series often has 6 sizes: split 3 | 3 where XLA starts threading
NARROW_RANGE = 16  # largest / smallest elements below this: sizes come from the fallback


@dataclass(frozen=True)
class Row:
    source: str  # "oracle", "scaled" or "grid:<family>" (`rewrites.latency.probes`)
    variant: str  # dtypes and mode params, `variant_of`
    size: int  # elements of the largest operand or result: chooses the segment
    elements: int  # output elements
    flops: float
    bytes: float
    seconds: float  # measured, net of the call overhead

    def features(self) -> tuple[float, float, float, float]:
        return 1.0, float(self.elements), float(self.flops), float(self.bytes)

    def as_list(self) -> list:
        return [self.source, self.variant, self.size, self.elements, self.flops, self.bytes, self.seconds]


SIZE_PARAMS = frozenset({"k", "permutation_size", "reduction_input_size_override"})  # scalar, yet sizes


def variant_of(params: dict, ins: Sequence, outs: Sequence) -> str:
    """`f64,f64->f64`, then its mode params: ` rounding_method=0`. Mode params are the scalar ones (bools,
    ints, dtypes, names; not None, not sizes `SIZE_PARAMS`): they choose code paths, while tuples
    (axes, shapes, dimension numbers) describe shapes, which the features price."""
    modes = [f"{k}={v!r}" for k, v in sorted(params.items())
             if k not in SIZE_PARAMS and type(v) in (bool, int, float, str, Symbol, DType)]
    signature = ",".join(a.dtype.short for a in ins) + "->" + ",".join(a.dtype.short for a in outs)
    return " ".join([signature, *modes])


def predict(segments: Sequence[dict], size: int, elements: int, flops: float, nbytes: float) -> float:
    """Seconds under a fitted piecewise model (the segment whose `max_elements` covers `size`)."""
    for segment in segments:
        if segment["max_elements"] is None or size <= segment["max_elements"]:
            c = segment["coef"]
            return c["c0"] + c["c_elem"] * elements + c["c_flops"] * flops + c["c_bytes"] * nbytes
    raise ValueError("a piecewise latency model's last segment must have max_elements None")


def segments_for(entry: dict, variant: str) -> list[dict]:
    """The segments that price `variant` under a primitive's profile entry: its variant's, else the entry's."""
    return entry.get("variants", {}).get(variant, entry)["segments"]


def relative_errors(segments: Sequence[dict], rows: Sequence[Row], floor: float) -> list[float]:
    """|predicted - measured| / measured of each row, a measured time under `floor` counting as `floor`."""
    return [abs(predict(segments, r.size, r.elements, r.flops, r.bytes) - r.seconds) / max(r.seconds, floor)
            for r in rows]


def _independent_columns(a: np.ndarray, allowed: Sequence[int]) -> list[int]:
    """The allowed columns with any non-zero entry, leaving out those proportional to an earlier kept one."""
    kept: list[int] = []
    for j in allowed:
        col = a[:, j]
        if not np.any(col):
            continue
        if any(_proportional(a[:, k], col) for k in kept):
            continue
        kept.append(j)
    return kept


def _proportional(x: np.ndarray, y: np.ndarray) -> bool:
    if not np.any(x) or np.any((x == 0) != (y == 0)):
        return False
    ratio = y[x != 0] / x[x != 0]
    return bool(np.allclose(ratio, ratio[0], rtol=1e-9))


def _nnls(rows: Sequence[Row], allowed: Sequence[int], floor: float) -> tuple[dict[str, float], float]:
    """Non-negative coefficients minimising the summed squared relative error, and that error."""
    a = np.array([r.features() for r in rows], dtype=np.float64)
    t = np.array([r.seconds for r in rows], dtype=np.float64)
    scale_t = np.maximum(t, floor)
    cols = _independent_columns(a, allowed)
    scale = np.abs(a[:, cols]).max(axis=0)
    weighted = a[:, cols] / scale / scale_t[:, None]
    solution, _ = nnls(weighted, t / scale_t, maxiter=50 * len(cols))
    coef = dict.fromkeys(FEATURES, 0.0)
    for j, x in zip(cols, solution / scale, strict=True):
        coef[FEATURES[j]] = float(x)
    predicted = a @ np.array([coef[f] for f in FEATURES])
    return coef, float(np.sum(((predicted - t) / scale_t) ** 2))


def fit_segments(rows: Sequence[Row], floor: float, features: Sequence[str] = FEATURES) -> list[dict]:
    """One or two segments fitted to `rows` with the named coefficients (see the module doc)."""
    allowed = [FEATURES.index(f) for f in features]
    coef, error = _nnls(rows, allowed, floor)
    best: list[dict] = [{"max_elements": None, "coef": coef}]
    sizes = sorted({r.size for r in rows})
    best_error = error
    for small_max, large_min in zip(sizes, sizes[1:], strict=False):
        small = [r for r in rows if r.size <= small_max]
        large = [r for r in rows if r.size > small_max]
        if len(small) < MIN_SEGMENT_ROWS or len(large) < MIN_SEGMENT_ROWS:
            continue
        (c_small, e_small), (c_large, e_large) = _nnls(small, allowed, floor), _nnls(large, allowed, floor)
        if e_small + e_large < best_error and e_small + e_large <= (1 - SPLIT_GAIN) * error:
            best_error = e_small + e_large
            best = [{"max_elements": round(math.sqrt(small_max * large_min)), "coef": c_small},
                    {"max_elements": None, "coef": c_large}]
    return best


def fit_fallback(rows: Sequence[Row], floor: float) -> list[dict]:
    """One segment `c0 + c_bytes * bytes` minimising the squared log error over `rows` (times under the
    floor count as the floor), both coefficients non-negative."""
    t = np.maximum([r.seconds for r in rows], floor)
    nbytes = np.array([r.bytes for r in rows], dtype=np.float64)
    scale = max(float(nbytes.max()), 1.0)

    def residuals(x):  # x = (c0 / floor, c_bytes * scale / floor): order 1 for the solver
        return np.log(np.maximum(floor * (x[0] + x[1] * nbytes / scale), 1e-300)) - np.log(t)

    start = [float(np.median(t)) / floor, 1.0]
    x = least_squares(residuals, start, bounds=([0.0, 0.0], [np.inf, np.inf])).x
    coef = {**dict.fromkeys(FEATURES, 0.0), "c0": float(x[0] * floor), "c_bytes": float(x[1] * floor / scale)}
    return [{"max_elements": None, "coef": coef}]


def fallback_entry(rows: Sequence[Row], floor: float) -> dict:
    """The profile's fallback: `fit_fallback` over the scaled elementwise rows (every row if none)."""
    scaled = [r for r in rows if r.source == "scaled"]
    fitted_on = scaled or list(rows)
    segments = fit_fallback(fitted_on, floor)
    return {"segments": segments, "points": len(fitted_on),
            "median_rel_error": statistics.median(relative_errors(segments, fitted_on, floor)),
            "fitted_on": "scaled elementwise probes" if scaled else "every probe"}


def fit_fixed_cost(rows: Sequence[Row], size_model: Sequence[dict], floor: float) -> list[dict]:
    """`size_model`'s segments with their size coefficients kept and one `c0` fitted to `rows` (the
    weighted least-squares fixed cost, at least 0)."""
    no_fixed = [{**s, "coef": {**s["coef"], "c0": 0.0}} for s in size_model]
    weights = [1 / max(r.seconds, floor) ** 2 for r in rows]
    residuals = [r.seconds - predict(no_fixed, r.size, r.elements, r.flops, r.bytes) for r in rows]
    c0 = sum(w * x for w, x in zip(weights, residuals, strict=True)) / sum(weights)
    return [{**s, "coef": {**s["coef"], "c0": max(c0, 0.0)}} for s in size_model]


def _fit(rows: Sequence[Row], wider: Sequence[dict], floor: float) -> dict:
    """Segments fitted to `rows`, or only their fixed cost on `wider`'s size terms for a narrow range."""
    smallest, largest = min(r.size for r in rows), max(r.size for r in rows)
    if largest < NARROW_RANGE * max(smallest, 1):
        segments, size_terms = fit_fixed_cost(rows, wider, floor), "borrowed"
    else:
        segments, size_terms = fit_segments(rows, floor), "fitted"
    return {"segments": segments, "points": len(rows), "size_terms": size_terms,
            "median_rel_error": statistics.median(relative_errors(segments, rows, floor)),
            "max_elements_measured": largest}


def fit_primitive(rows: Sequence[Row], fallback: Sequence[dict], floor: float) -> dict:
    """A primitive's profile entry: its model over all rows (segments, points, median relative error, and
    `size_terms`: "fitted", or "borrowed" from the fallback for a narrow range of sizes), a model per
    variant if it has several (`variants`, their narrow ones borrowing the primitive's size terms), and
    the rows fitted (`measured`: `Row.as_list()`, for studies and refits).
    The entry's `median_rel_error` is that of the rows priced as the model prices them (by variant)."""
    entry = _fit(rows, fallback, floor)
    by_variant: dict[str, list[Row]] = {}
    for r in rows:
        by_variant.setdefault(r.variant, []).append(r)
    if len(by_variant) > 1:
        wider = entry["segments"] if entry["size_terms"] == "fitted" else fallback
        entry["variants"] = {v: _fit(vrows, wider, floor) for v, vrows in sorted(by_variant.items())}
        errors = [e for v, vrows in by_variant.items() for e in relative_errors(segments_for(entry, v), vrows, floor)]
        entry["median_rel_error"] = statistics.median(errors)
    entry["measured"] = sorted(r.as_list() for r in rows)
    return entry
