"""The verdict on one rule: its soundness class from the evidence, against the declared one.

    verify_rule(rule, budget=None) -> Verdict(name, declared, evidenced, symbolic, numeric, verdict,
                                              counterexample, reason, dtypes, seconds)

Evidence per dtype (`numeric.check_dtype`) gives a class: `exact` (no bit difference), `real` (no real
difference and no kind difference; `guarded` when the rule has value conditions: the checks ran where
they hold), `unsafe` (a kind difference only), `unsound` (a real difference). The symbolic result
(`symbolic.prove`, float rules) joins the float64 real check: a disproof is a real difference, a proof
answers the real question where the high-precision interpreter cannot. The rule's class is the weakest
over its dtypes. Classes are ranked exact < real = guarded < unsafe (each implies the next holds), and

    ok             the evidenced class is at least as strong as the declared one (a rule declared `real`
                   that is in fact exact is ok: `reason` says it could be declared exact)
    misclassified  weaker than declared (an `exact` rule that changes the sign of a zero, a `real` one
                   that turns inf into nan), with the counterexample breaking the declared class
    unsound        false over the reals (or the right side is ill-typed where the left side is not)
    unknown        could not instantiate (param variables, engine conditions, primitives no check can
                   evaluate) or no conclusive evidence

A symbolic proof contradicted by a numeric difference where both sides are defined is `unknown` (one
of the two translations is wrong); a numeric point where only the left side is defined wins over a
generic symbolic proof (`x => (x*y)/y` is proved by SymPy, false at y = 0).

Deterministic: fixed seeds and derandomized hypothesis; `seconds` is not part of the comparison.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import sympy as sp
from hypothesis import settings as hypothesis_settings

from ir import dtypes as D
from rewrites.pattern import PatternRule
from rewrites.verify.instantiate import VALUE_CONDITIONS, NotInstantiable, applicable_instances
from rewrites.verify.numeric import Counterexample, Evidence, bits_at, check_dtype
from rewrites.verify.symbolic import Symbolic, prove

RANK = {"exact": 0, "real": 1, "guarded": 1, "unsafe": 2, "unsound": 3}
VERDICTS = ("ok", "misclassified", "unsound", "unknown")
REAL_CHECK_KINDS = "iub"  # float64 and these kinds run the real-number search


@dataclass(frozen=True)
class Verdict:
    name: str
    declared: str
    evidenced: str  # exact | real | guarded | unsafe | unsound | unknown
    symbolic: str
    numeric: str
    verdict: str  # ok | misclassified | unsound | unknown
    counterexample: Counterexample | None = None
    reason: str = ""
    dtypes: tuple[str, ...] = ()
    seconds: float = field(default=0.0, compare=False)

    def to_dict(self, timing: bool = False) -> dict:
        out = {"name": self.name, "declared": self.declared, "evidenced": self.evidenced,
               "verdict": self.verdict, "symbolic": self.symbolic, "numeric": self.numeric,
               "counterexample": self.counterexample.to_dict() if self.counterexample else None,
               "reason": self.reason, "dtypes": list(self.dtypes)}
        if timing:
            out["seconds"] = round(self.seconds, 3)
        return out

    def __str__(self) -> str:
        cex = f"; counterexample {self.counterexample}" if self.counterexample else ""
        return (f"{self.name}: {self.verdict} (declared {self.declared}, evidenced {self.evidenced}){cex}"
                + (f"; {self.reason}" if self.reason else ""))


def default_budget() -> int:
    """The hypothesis examples per rule: the active profile's `max_examples` (ci 100, nightly 5000)."""
    return int(hypothesis_settings.default.max_examples)


def verify_rules(rules: Iterable[PatternRule], *, budget: int | None = None,
                 sympy_seconds: float | None = 5.0) -> list[Verdict]:
    return [verify_rule(r, budget=budget, sympy_seconds=sympy_seconds) for r in rules]


def merge_verdicts(verdicts: Iterable[Verdict]) -> list[Verdict]:
    """One verdict per rule name, for rules made of several patterns (a built-in family dumps as one
    PatternRule per form): the worst checked form's (unsound, misclassified, then ok), `unknown` only when
    no form could be checked; `reason` counts the forms left unchecked. Seconds add up."""
    groups: dict[str, list[Verdict]] = {}
    for v in verdicts:
        groups.setdefault(v.name, []).append(v)
    out = []
    for members in groups.values():
        worst = min(members, key=lambda v: MERGE_ORDER.index(v.verdict))
        unknown = sum(v.verdict == "unknown" for v in members)
        reason = worst.reason
        if len(members) > 1 and unknown and worst.verdict != "unknown":
            reason = "; ".join(r for r in [reason, f"{unknown} of {len(members)} forms not checked"] if r)
        dtypes = tuple(dict.fromkeys(d for v in members for d in v.dtypes))
        out.append(Verdict(**{**worst.__dict__, "reason": reason, "dtypes": dtypes,
                              "seconds": sum(v.seconds for v in members)}))
    return out


MERGE_ORDER = ("unsound", "misclassified", "ok", "unknown")


def verify_rule(rule: PatternRule, *, budget: int | None = None, sympy_seconds: float | None = 5.0) -> Verdict:
    start = time.perf_counter()
    budget = default_budget() if budget is None else budget
    try:
        verdict = _verify(rule, budget, sympy_seconds)
    except Exception as err:  # a rule the checks cannot handle gets a verdict, not a traceback in a listing
        verdict = Verdict(rule.name, rule.soundness, "unknown", "", "", "unknown",
                          reason=f"the verifier failed: {type(err).__name__}: {err}")
    return Verdict(**{**verdict.__dict__, "seconds": time.perf_counter() - start})


def _verify(rule: PatternRule, budget: int, sympy_seconds) -> Verdict:
    base = {"name": rule.name, "declared": rule.soundness}
    try:
        instances, skipped = applicable_instances(rule)
    except NotInstantiable as err:
        if err.ill_typed:
            return Verdict(**base, evidenced="unsound", symbolic="", numeric="", verdict="unsound",
                           reason=err.reason)
        return Verdict(**base, evidenced="unknown", symbolic="", numeric="", verdict="unknown",
                       reason=f"not instantiable: {err.reason}")
    dtypes = tuple(i.dtype.name for i in instances)
    f64 = next((i for i in instances if i.dtype == D.float64), None)
    symbolic = prove(f64, sympy_seconds) if f64 is not None else Symbolic("unknown", "no float64 instance")
    evidence: list[Evidence] = []
    for inst in instances:
        real = inst.dtype == D.float64 or inst.dtype.kind in REAL_CHECK_KINDS
        if inst.dtype == D.float64 and symbolic.status == "disproved":
            real = False  # already refuted over the reals
        evidence.append(check_dtype(rule, inst.dtype, budget, real))
    return _combine(rule, base, dtypes, symbolic, evidence)


def _guarded(rule: PatternRule) -> bool:
    return any(c.kind in VALUE_CONDITIONS for c in rule.conditions)


def _symbolic_cex(symbolic: Symbolic) -> Counterexample:
    return Counterexample("real", "float64", symbolic.point, symbolic.lhs, symbolic.rhs, "over the reals (SymPy)")


def _dtype_class(ev: Evidence, f64_real: tuple[bool, str]) -> tuple[str, str]:
    """(class, why unknown) at one dtype; `f64_real`: whether the float64 real question is answered."""
    if ev.bits is None:
        return "exact", ""  # bit-identical: whatever the reals say (atan2(-0.0, -1) = -pi = -atan2(0.0, -1))
    if ev.real is not None:
        return "unsound", ""
    if ev.kind is not None:
        return "unsafe", ""
    answered, why = f64_real
    if ev.dtype in ("float64", "float32"):
        return ("real", "") if answered else ("unknown", why)
    return ("real", "") if ev.real_checked else ("unknown", ev.real_unknown or "no real-number check")


def _combine(rule: PatternRule, base: dict, dtypes, symbolic: Symbolic, evidence: list[Evidence]) -> Verdict:
    notes = []
    f64 = next((e for e in evidence if e.dtype == "float64"), None)
    if symbolic.status == "disproved" and f64 is not None:
        point = [float(sp.sympify(v)) for _, v in symbolic.point]
        bits = f64.bits or bits_at(rule, D.float64, point)
        if bits is None:
            notes.append(f"SymPy's counterexample {_symbolic_cex(symbolic)} is bit-identical in IEEE arithmetic "
                         "(a branch cut that signed zeros resolve)")
        evidence = [Evidence(**{**e.__dict__, "bits": bits, "real": _symbolic_cex(symbolic)}) if e is f64 else e
                    for e in evidence]
        f64 = next(e for e in evidence if e.dtype == "float64")
    conflict = (symbolic.status == "proved" and f64 is not None and f64.real is not None
                and "right to left" not in f64.real.note and _both_defined(f64.real))
    if conflict:
        notes.append(f"SymPy proves the sides equal, but they differ at {f64.real}")
    answered = (symbolic.status == "proved" or (f64 is not None and f64.real_checked),
                f64.real_unknown if f64 is not None and f64.real_unknown else f"SymPy: {symbolic}")
    classes = [_dtype_class(e, answered) for e in evidence]
    order = ["exact", "real", "unsafe", "unsound"]
    known = [c for c, _ in classes if c != "unknown"]
    unknown = [why for c, why in classes if c == "unknown"]
    worst = max(known, key=order.index) if known else "unknown"
    if conflict:
        evidenced = "unknown"
        unknown.append("SymPy and the numeric check disagree")
    elif worst == "unsound" or not unknown:
        evidenced = worst
    else:
        evidenced = "unknown"
    if evidenced == "real" and _guarded(rule):
        evidenced = "guarded"
    numeric = "; ".join(_describe(e) for e in evidence)
    verdict, cex, reason = _judge(rule, evidenced, evidence, unknown)
    reason = "; ".join([r for r in [reason, *notes] if r])
    return Verdict(**base, evidenced=evidenced, symbolic=str(symbolic), numeric=numeric, verdict=verdict,
                   counterexample=cex, reason=reason, dtypes=dtypes)


def _both_defined(cex: Counterexample) -> bool:
    return cex.lhs not in ("undefined", "nan") and cex.rhs not in ("undefined", "nan", "inf", "-inf")


def _first(evidence: list[Evidence], check: str) -> Counterexample | None:
    return next((getattr(e, check) for e in evidence if getattr(e, check) is not None), None)


def _judge(rule, evidenced: str, evidence, unknown: list[str]):
    declared = rule.soundness
    if evidenced == "unsound":
        return "unsound", _first(evidence, "real"), "false over the reals"
    if evidenced == "unknown":
        # a known difference can still contradict the declared class
        if declared == "exact" and _first(evidence, "bits"):
            return "misclassified", _first(evidence, "bits"), "declared exact, but the bits differ"
        if RANK[declared] <= 1 and _first(evidence, "kind"):
            return ("misclassified", _first(evidence, "kind"),
                    f"declared {declared}, but special values give another kind of result")
        return "unknown", None, "; ".join(dict.fromkeys(unknown)) or "inconclusive"
    if RANK[evidenced] <= RANK[declared]:
        reason = ""
        if RANK[evidenced] < RANK[declared]:
            reason = f"the evidence supports {evidenced}"
        return "ok", None, reason
    check = "bits" if declared == "exact" else "kind"
    cex = _first(evidence, check)
    return "misclassified", cex, f"declared {declared}, the evidence says {evidenced}"


def _describe(e: Evidence) -> str:
    parts = [f"{e.dtype}: {e.points} points"]
    parts.append("bits differ" if e.bits else "bit-identical")
    if e.bits:
        parts.append("kinds differ" if e.kind else "same kinds")
    if e.real:
        parts.append("reals differ")
    elif e.real_unknown:
        parts.append(f"reals unknown ({e.real_unknown})")
    elif e.real_points:
        parts.append(f"reals agree ({e.real_points} high-precision points)")
    return ", ".join(parts)
