"""A learned cost model: a linear model of measured program time over per-family equation features.

    model = fit(programs, seconds, backend="numpy")      # measured (program, time) pairs
    model.save("learned-numpy.json"); optimize(closed, cost="learned:learned-numpy.json")
    model.predict(program)                              # seconds, with the per-call intercept

Every equation is put in one of the `FAMILIES` (by its primitive) and contributes three features to
its family: 1 (the equation's fixed cost), its bytes moved and its flops (`rewrites.costs`). A program's
features are the sums over its equations, with control flow counted the way the other cost models count
it (a scan's body × its length, a while loop's body once, a cond's costliest branch, feature by
feature), and its predicted time is

    t = intercept + Σ_family (a_family + b_family · bytes + c_family · flops)

with non-negative coefficients fitted by least squares on relative error (each row divided by its
measured time, so a 10 µs program counts as much as a 10 ms one). Linear in equations, it prices one
equation alone, so it extracts like any other cost model; the intercept (the backend's call overhead)
is the same for every variant of a program and is left out of equation costs. 3 × 9 + 1 = 28 numbers,
each readable as "seconds per equation / per byte / per flop of this family".
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import numpy as np

from ir.core import ClosedJaxpr, Jaxpr, ShapedArray
from rewrites.costs import ELEMENTWISE_WEIGHTS, FREE_BYTES, REDUCTIONS, CostModel, body_runs, bytes_moved, flops

FORMAT = 1
FEATURES = ("eqns", "bytes", "flops")
FAMILIES = ("free", "elementwise", "divide", "transcendental", "reduction", "dot", "movement", "indexing",
            "other")
_MOVEMENT = frozenset({"transpose", "broadcast_in_dim", "concatenate", "pad", "rev", "copy", "copy_p", "tile",
                       "convert_element_type", "iota", "select_n", "split", "squeeze", "expand_dims"})
_INDEXING = frozenset({"slice", "dynamic_slice", "dynamic_update_slice", "gather", "scatter", "scatter-add",
                       "argsort", "sort", "cumsum", "cumprod", "cummax", "cummin"})


def family(primitive: str) -> str:
    """The feature family of a primitive."""
    if primitive in FREE_BYTES or primitive == "reshape":
        return "free"
    if primitive in ("dot_general", "conv_general_dilated", "ragged_dot_general"):
        return "dot"
    if primitive in _INDEXING:
        return "indexing"
    if primitive in REDUCTIONS or primitive.startswith("reduce_") or primitive in ("argmax", "argmin"):
        return "reduction"
    if primitive in _MOVEMENT:
        return "movement"
    weight = ELEMENTWISE_WEIGHTS.get(primitive)
    if primitive == "integer_pow" or weight == 1 or weight == 2:
        return "elementwise"
    if weight == 4:
        return "divide"
    if weight is not None:
        return "transcendental"
    return "other"


_COLUMN = {(f, k): i for i, (f, k) in enumerate((f, k) for f in FAMILIES for k in FEATURES)}
N_FEATURES = len(_COLUMN)


def equation_features(primitive: str, params: dict, ins: Sequence[ShapedArray],
                      outs: Sequence[ShapedArray]) -> np.ndarray:
    """The feature vector of one equation, its control-flow bodies included."""
    nested = _nested_features(primitive, params)
    if nested is not None:
        return nested
    row = np.zeros(N_FEATURES)
    fam = family(primitive)
    row[_COLUMN[fam, "eqns"]] = 1.0
    row[_COLUMN[fam, "bytes"]] = float(bytes_moved(primitive, params, ins, outs))
    row[_COLUMN[fam, "flops"]] = float(flops(primitive, params, ins, outs))
    return row


def program_features(jaxpr: Jaxpr | ClosedJaxpr) -> np.ndarray:
    """The sum of `equation_features` over a program's equations."""
    inner = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    total = np.zeros(N_FEATURES)
    for e in inner.eqns:
        total += equation_features(e.primitive, e.params, [v.aval for v in e.invars], [v.aval for v in e.outvars])
    return total


def _nested_features(primitive: str, params: dict) -> np.ndarray | None:
    """Control flow's features, by `rewrites.costs.body_runs` (a cond takes each feature's costliest branch)."""
    runs = body_runs(primitive, params)
    if runs is None:
        return None
    how, bodies = runs
    rows = [times * program_features(body) for times, body in bodies] or [np.zeros(N_FEATURES)]
    return np.maximum.reduce(rows) if how == "max" else np.sum(rows, axis=0)


class LearnedModel:
    """A fitted linear time model (see the module doc); `cost_model()` is its per-equation CostModel."""

    def __init__(self, coef: np.ndarray, intercept: float, backend: str, machine: dict, machine_key: str,
                 training: dict | None = None):
        self.coef, self.intercept = np.asarray(coef, dtype=float), float(intercept)
        self.backend, self.machine, self.machine_key = backend, machine, machine_key
        self.training = training or {}

    def predict(self, program: ClosedJaxpr) -> float:
        return self.intercept + float(program_features(program) @ self.coef)

    def equation_cost(self, primitive: str, params: dict, ins, outs) -> float:
        return max(float(equation_features(primitive, params, ins, outs) @ self.coef), 0.0)

    def cost_model(self, name: str | None = None) -> CostModel:
        return CostModel(name or f"learned-{self.backend}", self.equation_cost)

    def as_dict(self) -> dict:
        coef = {f: {k: float(self.coef[_COLUMN[f, k]]) for k in FEATURES} for f in FAMILIES}
        return {"format": FORMAT, "kind": "learned", "backend": self.backend, "machine_key": self.machine_key,
                "machine": self.machine, "intercept_s": self.intercept, "coef": coef, "training": self.training}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.as_dict(), indent=1, sort_keys=True) + "\n")

    @classmethod
    def from_dict(cls, d: dict) -> LearnedModel:
        if d.get("format") != FORMAT or d.get("kind") != "learned":
            raise ValueError(f"not a learned cost model of format {FORMAT}: format={d.get('format')!r}, "
                             f"kind={d.get('kind')!r}")
        coef = np.zeros(N_FEATURES)
        for f, row in d["coef"].items():
            for k, v in row.items():
                coef[_COLUMN[f, k]] = float(v)
        return cls(coef, d["intercept_s"], d["backend"], d.get("machine", {}), d["machine_key"], d.get("training"))

    @classmethod
    def load(cls, path: str | Path) -> LearnedModel:
        return cls.from_dict(json.loads(Path(path).read_text()))


def fit(programs: Sequence[ClosedJaxpr], seconds: Sequence[float], backend: str,
        machine: dict | None = None) -> LearnedModel:
    """Fit on measured pairs (see the module doc). Features are scaled to unit range before the
    non-negative least squares so that bytes and flops (~10^6) and counts (~10) are fitted alike."""
    from scipy.optimize import nnls

    from eval import machine as machine_info

    if len(programs) != len(seconds) or not programs:
        raise ValueError(f"fit needs as many times as programs (got {len(programs)} and {len(seconds)}), "
                         "and at least one")
    t = np.asarray(seconds, dtype=float)
    if not np.all(t > 0):
        raise ValueError("measured times must be positive")
    x = np.stack([np.append(program_features(p), 1.0) for p in programs])
    scale = np.where(x.max(axis=0) > 0, x.max(axis=0), 1.0)
    a = (x / scale) / t[:, None]
    solution, _ = nnls(a, np.ones_like(t), maxiter=50 * a.shape[1])
    beta = solution / scale
    fp = machine if machine is not None else machine_info.fingerprint()
    relative = np.abs(x @ beta - t) / t
    training = {"programs": len(programs), "median_rel_error": float(np.median(relative)),
                "p90_rel_error": float(np.quantile(relative, 0.9)), "created": date.today().isoformat()}
    return LearnedModel(beta[:-1], beta[-1], backend, fp, machine_info.machine_key(fp), training)


def relative_errors(model: LearnedModel, programs: Sequence[ClosedJaxpr], seconds: Sequence[float]) -> list[float]:
    return [abs(model.predict(p) - t) / t for p, t in zip(programs, seconds, strict=True) if t > 0 and math.isfinite(t)]
