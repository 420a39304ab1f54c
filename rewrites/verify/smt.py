"""Exact rules proved or refuted by an SMT solver: z3's IEEE floating-point and bit-vector theories.

    prove_rule(rule, timeout=10.0) -> SmtVerdict(status, checks, reason)   # one SmtCheck per dtype
    with_smt(verdict, smt) -> Verdict                                       # the verdict with the proof joined
    merge_smt(verdicts) -> SmtVerdict                                       # one per name (a rule's forms)

For each dtype the verifier instantiates the rule at (`instantiate.applicable_instances`, rank 0: float64,
float32, and the integers and bool for dtype-agnostic rules), both sides become z3 terms of the same inputs
(`smt_jaxpr`, which computes what eqjax's NumPy evaluator computes) and z3 is asked

    exists inputs where the rule's value conditions hold and not same(lhs, rhs)

`same` is SMT-LIB's `=`: equal bit patterns, except that all nans are one value (z3 has one nan), which
is the verifier's bit comparison (`numeric.bits_differ`: any nan matches any nan). `unsat` is a proof;
`sat` gives a counterexample, which is turned into NumPy inputs and evaluated by eqjax's evaluator: the
rule is `refuted` only when NumPy confirms that the bits differ there, else the check is `unconfirmed` (the
z3 model of a primitive and eval disagree: a bug to report, never a refutation); z3's `unknown` at the time
limit (`timeout` seconds per rule and dtype) is `timeout`. Rules with something z3 cannot model
(transcendental functions, reductions, complex values, param or literal variables) are `not modelled`, the
reason naming the primitive. A rule with a condition only the engine evaluates (a dtype test) is proved on
the rank-0 right sides the engine builds for it (`engine_instances`), at the dtypes the engine fires at.
Value conditions are assumed as the engine's facts mean them (`numeric.condition_mask`:
`x > 0` lets nan through, `finite(x)` excludes inf and nan).

A rule's status is the worst of its dtypes' (and forms'), in the order of `STATUSES`: it is `proved` only
when every dtype is. Deterministic but for `timeout`, which depends on the machine; `seconds` is not
compared.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ir import dtypes as D
from ir.errors import EqjaxError
from rewrites.pattern import PatternRule
from rewrites.verify import smt_jaxpr
from rewrites.verify.instantiate import Instance, NotInstantiable, applicable_instances
from rewrites.verify.numeric import Counterexample, bits_differ
from rewrites.verify.smt_jaxpr import NotModelled, constant, to_z3, variable

if TYPE_CHECKING:
    from rewrites.verify.classify import Verdict

DEFAULT_TIMEOUT = 10.0  # seconds per rule and dtype
STATUSES = ("refuted", "unconfirmed", "unknown", "timeout", "not modelled", "proved")  # worst first
INSTALL = "pip install z3-solver"


class SolverUnavailable(EqjaxError):
    """Proving rules needs z3 (the `z3-solver` package), which is not installed."""


def require_solver() -> None:
    if smt_jaxpr.z3 is None:
        raise SolverUnavailable(f"proving rules needs the SMT solver z3, which is not installed: {INSTALL}")


@dataclass(frozen=True)
class SmtCheck:
    """z3's answer at one dtype."""

    dtype: str
    status: str  # proved | refuted | unconfirmed | timeout | not modelled | unknown
    counterexample: Counterexample | None = None
    reason: str = ""
    seconds: float = field(default=0.0, compare=False)

    def to_dict(self) -> dict:
        return {"dtype": self.dtype, "status": self.status, "reason": self.reason,
                "counterexample": self.counterexample.to_dict() if self.counterexample else None}


@dataclass(frozen=True)
class SmtVerdict:
    """z3's answer on a rule: the worst status over its dtypes, the checks, and why when not `proved`."""

    status: str
    checks: tuple[SmtCheck, ...] = ()
    reason: str = ""
    seconds: float = field(default=0.0, compare=False)

    @property
    def counterexample(self) -> Counterexample | None:
        return next((c.counterexample for c in self.checks if c.status == self.status and c.counterexample), None)

    @property
    def slowest(self) -> SmtCheck | None:
        return max(self.checks, key=lambda c: c.seconds, default=None)

    def __str__(self) -> str:
        if self.status == "proved":
            return f"proved ({', '.join(c.dtype for c in self.checks)})"
        cex = self.counterexample
        return f"{self.status}: {cex}" if cex else f"{self.status}: {self.reason}"

    def to_dict(self, timing: bool = False) -> dict:
        cex = self.counterexample
        out = {"status": self.status, "reason": self.reason, "counterexample": cex.to_dict() if cex else None,
               "dtypes": {c.dtype: c.status for c in self.checks}}
        if timing:
            out["seconds"] = round(self.seconds, 3)
        return out

    @classmethod
    def from_dict(cls, d: dict, seconds: float = 0.0) -> SmtVerdict:
        """The verdict `to_dict` gave (per dtype its status; the counterexample goes to the first check of the
        verdict's status, where `counterexample` finds it)."""
        cex = Counterexample.from_dict(d["counterexample"]) if d["counterexample"] else None
        first = next((dtype for dtype, status in d["dtypes"].items() if status == d["status"]), None)
        checks = tuple(SmtCheck(dtype, status, cex if dtype == first else None)
                       for dtype, status in d["dtypes"].items())
        return cls(d["status"], checks, d["reason"], seconds)


def _worst(statuses: Iterable[str]) -> str:
    return min(statuses, key=STATUSES.index, default="not modelled")


def _summary(checks: tuple[SmtCheck, ...], status: str) -> str:
    """The reasons of the checks with `status`, each with the dtypes it holds for."""
    by_reason: dict[str, list[str]] = {}
    for c in checks:
        if c.status == status and c.reason:
            by_reason.setdefault(c.reason, []).append(c.dtype)
    return "; ".join(f"{why} ({', '.join(dts)})" for why, dts in by_reason.items())


def prove_rule(rule: PatternRule, timeout: float = DEFAULT_TIMEOUT) -> SmtVerdict:
    """z3's verdict on `rule` being bit-exact, at each dtype it applies to; `timeout` seconds per dtype.
    A rule with engine conditions is proved on the right sides the engine builds (`engine_instances`)."""
    require_solver()
    start = time.perf_counter()
    note = ""
    try:
        instances, _ = applicable_instances(rule)
    except NotInstantiable as err:
        if not any(c.kind == "engine" for c in rule.conditions):
            return SmtVerdict("not modelled", (), f"not instantiable: {err.reason}", time.perf_counter() - start)
        try:
            instances = engine_instances(rule)
        except NotInstantiable as engine_err:
            why = f"{err.reason}; {engine_err.reason}"
            return SmtVerdict("not modelled", (), f"not instantiable: {why}", time.perf_counter() - start)
        note = "on the right sides the engine builds"
    checks = _worst_per_dtype([prove_instance(inst, timeout) for inst in instances])
    status = _worst(c.status for c in checks)
    reason = "; ".join(r for r in [note, _summary(checks, status)] if r)
    return SmtVerdict(status, checks, reason, time.perf_counter() - start)


def engine_instances(rule: PatternRule) -> list[Instance]:
    """Rank-0 instances of a rule whose conditions only the engine evaluates (a dtype test, `div-pow2`'s
    literal), with the right sides the engine built (`witness`): a proof on them proves the rule at their
    dtype only if the rule has no literal and no param variables, so that the engine builds one right side
    for every value of the inputs. Raises `NotInstantiable` otherwise, and where the engine fires at no
    rank-0 instance."""
    from rewrites.verify.classify import compiled_rule
    from rewrites.verify.params import param_uses
    from rewrites.verify.witness import literal_variables, witness_groups

    literals = literal_variables(rule)
    if literals:
        raise NotInstantiable(f"literal variables {', '.join(literals)}: the engine's instances prove one value")
    if param_uses(rule.rhs, param_uses(rule.lhs)):
        raise NotInstantiable("param variables: the engine's instances prove sampled values only")
    engine_rule = compiled_rule(rule)
    if engine_rule is None:
        raise NotInstantiable("the rule does not compile")
    instances = [i for _, group in witness_groups(rule, engine_rule, 1) for i in group
                 if all(a.shape == () for a in i.in_avals)]
    if not instances:
        raise NotInstantiable("the engine fires it on arrays only")
    return instances


def _worst_per_dtype(checks: list[SmtCheck]) -> tuple[SmtCheck, ...]:
    """One check per dtype (several right sides the engine built at one dtype: the worst), seconds added."""
    by_dtype: dict[str, SmtCheck] = {}
    for c in checks:
        held = by_dtype.get(c.dtype)
        if held is None:
            by_dtype[c.dtype] = c
            continue
        worse = c if STATUSES.index(c.status) < STATUSES.index(held.status) else held
        by_dtype[c.dtype] = dataclasses.replace(worse, seconds=held.seconds + c.seconds)
    return tuple(by_dtype.values())


def prove_instance(inst: Instance, timeout: float = DEFAULT_TIMEOUT) -> SmtCheck:
    """z3's answer on `inst`'s two sides being the same bits for every input (rank-0 instance)."""
    z3 = smt_jaxpr.z3
    start = time.perf_counter()
    dtype = inst.dtype.name
    try:
        inputs = [variable(name, aval.dtype) for name, aval in zip(inst.names, inst.in_avals, strict=True)]
        [lhs] = to_z3(inst.lhs, *inputs)
        [rhs] = to_z3(inst.rhs, *inputs)
        by_name = dict(zip(inst.names, zip(inputs, inst.in_avals, strict=True), strict=True))
        assumptions = [_condition(c.kind, by_name[c.args[0]][0], by_name[c.args[0]][1].dtype)
                       for c in inst.rule.conditions if c.kind in CONDITIONS]
    except NotModelled as err:
        return SmtCheck(dtype, "not modelled", None, str(err), time.perf_counter() - start)
    solver = bit_blasting_solver()
    solver.set("timeout", max(1, int(timeout * 1000)))
    solver.add(*assumptions, z3.Not(lhs == rhs))  # `==` is SMT-LIB's `=`: bit equality, one nan
    answer = solver.check()
    seconds = time.perf_counter() - start
    if answer == z3.unsat:
        return SmtCheck(dtype, "proved", None, "", seconds)
    if answer == z3.unknown:
        why = solver.reason_unknown()
        if why in ("timeout", "canceled"):
            return SmtCheck(dtype, "timeout", None, f"no answer within {timeout:g} s", seconds)
        return SmtCheck(dtype, "unknown", None, f"z3: {why}", seconds)
    return _confirm(inst, solver.model(), inputs, seconds)


def bit_blasting_solver():
    """z3's floating-point operations as bit-vector circuits, then SAT: on the division rules 4 to 10 times
    faster than z3's default solver (neg-of-div in float64: 5.5 s against no answer in 40 s)."""
    z3 = smt_jaxpr.z3
    return z3.Then("simplify", "fpa2bv", "simplify", "bit-blast", "sat").solver()


# as `numeric.CONDITION_TESTS`, nan let through by all but `finite` (the engine's sign facts)
CONDITIONS = ("positive", "nonneg", "nonzero", "within_one", "above_minus_one", "finite")


def _condition(kind: str, x, dtype: D.DType):
    z3 = smt_jaxpr.z3
    if dtype.kind == "b":
        return z3.BoolVal(True) if kind != "positive" and kind != "nonzero" else x
    if dtype.kind in "iu":
        zero, one = constant(0, dtype), constant(1, dtype)
        unsigned = dtype.kind == "u"
        gt = (lambda a, b: z3.UGT(a, b)) if unsigned else (lambda a, b: a > b)
        ge = (lambda a, b: z3.UGE(a, b)) if unsigned else (lambda a, b: a >= b)
        le = (lambda a, b: z3.ULE(a, b)) if unsigned else (lambda a, b: a <= b)
        minus_one = None if unsigned else constant(-1, dtype)
        return {"positive": gt(x, zero), "nonneg": ge(x, zero), "nonzero": x != zero, "finite": z3.BoolVal(True),
                "within_one": le(x, one) if unsigned else z3.And(ge(x, minus_one), le(x, one)),
                "above_minus_one": z3.BoolVal(True) if unsigned else ge(x, minus_one)}[kind]
    zero, one, minus_one = (constant(v, dtype) for v in (0.0, 1.0, -1.0))
    if kind == "finite":
        return z3.Not(z3.Or(z3.fpIsInf(x), z3.fpIsNaN(x)))
    holds = {"positive": z3.fpGT(x, zero), "nonneg": z3.fpGEQ(x, zero), "nonzero": z3.Not(z3.fpIsZero(x)),
             "within_one": z3.And(z3.fpGEQ(x, minus_one), z3.fpLEQ(x, one)),
             "above_minus_one": z3.fpGEQ(x, minus_one)}[kind]
    return z3.Or(holds, z3.fpIsNaN(x))


def _numpy_value(model, term, dtype: D.DType) -> np.ndarray:
    """The model's value of `term` as a rank-0 array of `dtype` (z3's one nan as NumPy's nan)."""
    z3 = smt_jaxpr.z3
    value = model.eval(term, model_completion=True)
    if dtype.kind == "f":
        if value.isNaN():
            return np.array(np.nan, dtype=dtype.numpy)
        word = z3.simplify(z3.fpToIEEEBV(value)).as_long()  # a number's bits are defined (a nan's are not)
        return np.array(word, dtype=f"u{dtype.itemsize}").view(dtype.numpy)
    if dtype.kind in "iu":
        return np.array(value.as_long(), dtype=f"u{dtype.itemsize}").view(dtype.numpy)
    return np.array(z3.is_true(value))


def _confirm(inst: Instance, model, inputs, seconds: float) -> SmtCheck:
    """z3's counterexample evaluated by eqjax's evaluator: `refuted` if the bits differ there."""
    from eval.interpreter import eval_jaxpr

    arrays = [_numpy_value(model, term, aval.dtype) for term, aval in zip(inputs, inst.in_avals, strict=True)]
    with np.errstate(all="ignore"):
        lhs, rhs = (np.ascontiguousarray(np.asarray(eval_jaxpr(side, *arrays)[0]).reshape(1))
                    for side in (inst.lhs, inst.rhs))
    point = tuple((name, str(a[()])) for name, a in zip(inst.names, arrays, strict=True))
    dtype = inst.dtype.name
    if bits_differ(lhs, rhs)[0]:
        cex = Counterexample("bits", dtype, point, str(lhs[0]), str(rhs[0]), "found by z3, confirmed by NumPy")
        return SmtCheck(dtype, "refuted", cex, "the bits differ", seconds)
    cex = Counterexample("bits", dtype, point, str(lhs[0]), str(rhs[0]), "found by z3, NOT confirmed by NumPy")
    return SmtCheck(dtype, "unconfirmed", cex, "z3's counterexample gives identical bits in NumPy: z3's model "
                    "of a primitive differs from eval (a bug in rewrites/verify/smt_jaxpr.py)", seconds)


def merge_smt(verdicts: Iterable[SmtVerdict]) -> SmtVerdict:
    """One verdict for a rule made of several forms: per dtype the worst form's check, the worst status."""
    verdicts = list(verdicts)
    checks = _worst_per_dtype([c for v in verdicts for c in v.checks])
    status = _worst(v.status for v in verdicts)
    worst = next(v for v in verdicts if v.status == status)
    reason = worst.reason
    count = sum(v.status == status for v in verdicts)
    if len(verdicts) > 1 and status != "proved":
        reason = f"{count} of {len(verdicts)} forms: {reason}"
    return SmtVerdict(status, checks, reason, sum(v.seconds for v in verdicts))


def with_smt(verdict: Verdict, smt: SmtVerdict) -> Verdict:
    """`verdict` with z3's answer joined: a confirmed refutation of an `exact` rule makes it misclassified;
    a proof at every dtype the evidence covers settles an `unknown` one. A proof the evidence contradicts
    (bits NumPy found different at that dtype) is no proof: the check becomes `unknown`, and says why."""
    cex = verdict.counterexample
    if cex is not None and cex.check == "bits" and any(c.dtype == cex.dtype and c.status == "proved"
                                                        for c in smt.checks):
        checks = tuple(dataclasses.replace(c, status="unknown", reason=f"z3 proves it, but NumPy's bits differ at "
                                           f"{cex}: z3's model of a primitive differs from eval")
                       if c.dtype == cex.dtype and c.status == "proved" else c for c in smt.checks)
        status = _worst(c.status for c in checks)
        smt = SmtVerdict(status, checks, _summary(checks, status), smt.seconds)
    out = dataclasses.replace(verdict, smt=smt, seconds=verdict.seconds + smt.seconds)
    if verdict.declared != "exact":
        return out
    if smt.status == "refuted" and verdict.verdict in ("ok", "unknown"):
        return dataclasses.replace(out, evidenced="unknown" if verdict.evidenced == "exact" else verdict.evidenced,
                                   verdict="misclassified", counterexample=smt.counterexample,
                                   reason="declared exact, but z3 finds inputs where the bits differ "
                                          "(confirmed by NumPy)")
    proved = {c.dtype for c in smt.checks if c.status == "proved"}
    if verdict.verdict == "unknown" and smt.status == "proved" and set(verdict.dtypes) <= proved:
        return dataclasses.replace(out, evidenced="exact", verdict="ok",
                                   reason=f"proved bit-exact by z3; {verdict.reason}".rstrip("; "))
    return out
