"""The latency cost model: a calibrated profile's prediction, in seconds, of one equation on one backend.

    model = LatencyModel.for_backend("numpy")            # this machine's profile (`default_profile`)
    model = LatencyModel("numpy-0288.json")              # a file, or a profile dict
    optimize(closed, cost=model)                         # a CostModel like "flops": name "latency-numpy"
    model.program_seconds(closed)                        # call overhead + the sum over its equations
    model.fell_back                                      # primitives priced by the fallback so far

An equation costs its primitive's fitted piecewise model at the equation's features (output elements,
`flops`, `bytes_moved`; the segment by the size of its largest operand or result: `rewrites.latency.fit`),
the model of the equation's variant (its dtypes and scalar params, `f64,f64->f64`) where the profile
has one. A primitive the profile does not name costs the profile's fallback (fixed cost + per byte) and
is recorded in `fell_back`. Control flow and calls are priced by their bodies, as every cost model
prices them (`rewrites.costs._nested_cost`): `scan` length × body, `cond` its costliest branch, `while`
one trip. The per-call overhead of a whole program is not part of any equation's price:
`program_seconds` adds it. Not modelled: a loop body's per-trip overhead (the numpy backend calls the
body's compiled function each trip), and what equations gain from running together (the numpy
backend's buffer reuse, XLA's fusion): prices are of each equation run alone.

A profile measured on another machine (its `machine_key` differs) is refused with `ProfileMachineError`
unless `allow_other_machine=True`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ir.core import ClosedJaxpr, ShapedArray
from rewrites.costs import CostModel, _nested_cost, bytes_moved, flops, jaxpr_cost
from rewrites.latency.fit import predict, segments_for, variant_of
from rewrites.latency.profile import check_backend, check_machine, default_profile, load_profile, validate_profile


class LatencyModel(CostModel):
    """A `CostModel` (name "latency-<backend>", fn pricing one equation in seconds) built from a profile."""

    profile: dict
    source: str
    fell_back: set[str]
    allow_other_machine: bool

    def __new__(cls, path_or_profile: str | os.PathLike | dict, *, allow_other_machine: bool = False):
        if isinstance(path_or_profile, dict):
            source = "the given profile"
            profile = validate_profile(path_or_profile, source)
        else:
            source = f"latency profile {os.fspath(path_or_profile)}"
            profile = load_profile(path_or_profile)
        if not allow_other_machine:
            check_machine(profile, source)
        self = super().__new__(cls, f"latency-{profile['backend']}", _Pricer(profile))
        self.fn.model = self  # control flow is priced by this model over the bodies
        self.profile, self.source, self.allow_other_machine = profile, source, allow_other_machine
        self.fell_back = self.fn.fell_back
        return self

    @classmethod
    def for_backend(cls, backend: str, *, allow_other_machine: bool = False) -> LatencyModel:
        """This machine's profile for `backend`, from where `default_profile` finds it."""
        return cls(default_profile(check_backend(backend)), allow_other_machine=allow_other_machine)

    @property
    def backend(self) -> str:
        return self.profile["backend"]

    def covers(self, primitive: str) -> bool:
        """Whether the profile has a model of `primitive` itself (else the fallback prices it)."""
        return primitive in self.profile["primitives"]

    def overhead_seconds(self, n_inputs: int, n_outputs: int) -> float:
        """The backend's per-call cost of a program with that many inputs and outputs."""
        extra = max(n_inputs + n_outputs - 2, 0)
        return self.profile["call_overhead_s"] + self.profile["per_operand_overhead_s"] * extra

    def program_seconds(self, closed: ClosedJaxpr) -> float:
        """Predicted seconds per call of `closed`: the call overhead plus every equation's price."""
        jaxpr = closed.jaxpr
        return self.overhead_seconds(len(jaxpr.invars), len(jaxpr.outvars)) + float(jaxpr_cost(self, closed))

    def __repr__(self) -> str:
        return f"LatencyModel({self.name}, {len(self.profile['primitives'])} primitives, {self.source})"

    def __reduce__(self):  # a NamedTuple would pickle as (name, fn); rebuild from the profile instead
        return _rebuild, (self.profile, self.allow_other_machine)


def _rebuild(profile: dict, allow_other_machine: bool) -> LatencyModel:
    return LatencyModel(profile, allow_other_machine=allow_other_machine)


class _Pricer:
    """The model's `fn(primitive, params, in_avals, out_avals) -> seconds`."""

    def __init__(self, profile: dict):
        self.primitives = profile["primitives"]
        self.fallback = profile["fallback"]["segments"]
        self.fell_back: set[str] = set()
        self.model: CostModel | None = None

    def __call__(self, primitive: str, params: dict, ins: Sequence[ShapedArray],
                 outs: Sequence[ShapedArray]) -> float:
        nested = _nested_cost(self.model, primitive, params)
        if nested is not None:
            return float(nested)
        ins, outs = list(ins), list(outs)
        entry = self.primitives.get(primitive)
        if entry is None:
            self.fell_back.add(primitive)
            segments = self.fallback
        else:
            segments = segments_for(entry, variant_of(params, ins, outs))
        size = max([a.size for a in (*ins, *outs)] or [1])
        return predict(segments, size, sum(a.size for a in outs), flops.fn(primitive, params, ins, outs),
                       bytes_moved.fn(primitive, params, ins, outs))
