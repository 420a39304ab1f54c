"""One-equation programs cut out of the oracle programs, with the operand values JAX's inputs give them.

    samples = equation_samples(load_fixtures([DEFAULT_ORACLE]), per_primitive=2)
    samples["cumsum"][0].closed, samples["cumsum"][0].args   # { lambda ; a:f64[5]. let b = cumsum[...] a in (b,) }

A rule about one primitive (its JVP, VJP or batching rule) is best checked on that primitive alone, at
realistic operands: the oracle's inputs come from each primitive's valid domain (SPD matrices for cholesky,
in-bounds indices for gather, values > 0 for log). Each oracle program is evaluated once with every
intermediate value kept; every top-level equation (calls inlined) becomes a program of its own whose inputs
are the equation's non-literal operands. Equations of one primitive are kept while their signatures
(operand types and params) differ, up to `per_primitive`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from eval.interpreter import eval_jaxpr
from eval.oracle import Case, parse_case
from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, Var
from ir.inline import inline_calls


@dataclass(frozen=True)
class Sample:
    case: str  # the oracle case it was cut from
    closed: ClosedJaxpr  # one equation; its invars are the equation's non-literal operands
    args: tuple[np.ndarray, ...]

    def __str__(self) -> str:
        return f"{self.case}: {self.closed.jaxpr.eqns[0].primitive}" + "".join(
            f" {v.aval}" for v in self.closed.jaxpr.invars)


def equation_samples(cases: Iterable[Case], per_primitive: int = 2) -> dict[str, list[Sample]]:
    samples: dict[str, list[Sample]] = {}
    seen: set[str] = set()
    for case in cases:
        try:
            closed = inline_calls(parse_case(case))
            values = _all_values(closed, case.arrays("args"))
        except Exception:  # noqa: BLE001  a program the interpreter cannot run gives no samples (as in conformance)
            continue
        for eqn in closed.jaxpr.eqns:
            kept = samples.setdefault(eqn.primitive, [])
            signature = f"{eqn.primitive} {[str(getattr(x, 'aval', x)) for x in eqn.invars]} {eqn.params}"
            if len(kept) >= per_primitive or signature in seen:
                continue
            seen.add(signature)
            kept.append(_cut(case.id, eqn, values))
    return {p: s for p, s in samples.items() if s}


def _all_values(closed: ClosedJaxpr, args) -> dict[Var, np.ndarray]:
    """Every variable's value when the program runs on `args`."""
    jaxpr = closed.jaxpr
    kept = [v for e in jaxpr.eqns for v in e.outvars if not isinstance(v, DropVar)]
    every = Jaxpr(jaxpr.constvars, jaxpr.invars, kept, jaxpr.eqns)
    with np.errstate(all="ignore"):
        outs = eval_jaxpr(ClosedJaxpr(every, closed.consts), *args)
    return dict(zip(jaxpr.constvars, closed.consts, strict=True)) | dict(
        zip(jaxpr.invars, args, strict=True)) | dict(zip(kept, outs, strict=True))


def _cut(case: str, eqn: Eqn, values: dict[Var, np.ndarray]) -> Sample:
    invars, operands, args = [], [], []
    for x in eqn.invars:
        if isinstance(x, Literal):
            operands.append(x)
            continue
        v = Var(x.aval)
        invars.append(v)
        operands.append(v)
        args.append(np.asarray(values[x]))
    outvars = [Var(v.aval) for v in eqn.outvars]
    one = Jaxpr([], invars, list(outvars), [Eqn(eqn.primitive, operands, outvars, dict(eqn.params))])
    return Sample(case, ClosedJaxpr(one, []), tuple(args))
