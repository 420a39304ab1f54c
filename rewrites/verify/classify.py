"""The verdict on one rule: its soundness class from the evidence, against the declared one.

    verify_rule(rule, budget=None) -> Verdict(name, declared, evidenced, symbolic, numeric, verdict,
                                              counterexample, reason, dtypes, details, seconds)

`symbolic` is SymPy's verdict (proved / disproved at a point / unknown and why), `numeric` the class the
numeric evidence alone supports (exact / real / guarded / unsafe / unsound / unknown), `details` what each
dtype's checks saw.

Evidence per dtype (`numeric.check_dtype` for elementwise rules, `arrays.check_array_dtype` for the others)
gives a class: `exact` (no bit difference: it wins over a real-number counterexample, which then lies on a
branch cut that signed zeros resolve, atan2(-0.0, -1) = -pi = -atan2(0.0, -1)), `unsound` (a real
difference), `unsafe` (a kind difference only), else `real` (`guarded` when the rule has value conditions:
every check ran where they hold) once the real question is answered. The symbolic result (`symbolic.prove`,
elementwise float rules) joins the float64 evidence: a disproof is a real difference (unless the point is
bit-identical in IEEE arithmetic), a proof answers the real question where the high-precision interpreter
cannot. The rule's class is the weakest over its dtypes. Classes rank exact < real = guarded < unsafe (each
implies the next holds), and

    ok             the evidenced class is at least as strong as the declared one (`reason` says when the
                   evidence supports a stronger class than declared)
    misclassified  weaker than declared (an `exact` rule that changes the sign of a zero, a `real` one that
                   turns inf into nan), with the counterexample breaking the declared class
    unsound        false over the reals: a side is a real number where the other is another number or
                   undefined (no class allows that), or the right side is ill-typed where the left is not
    unknown        not instantiable (param variables, engine conditions), or the real question has no
                   answer (no SymPy proof, no high-precision form), or SymPy and the numbers disagree

A `guarded` rule without its guard is judged like any other: `log(x*y) => log x + log y` is false at
x = y = -1 (0 against an undefined sum), hence unsound; `x/x => 1` is true wherever the left side is
defined but turns 0/0 = nan into 1, hence unsafe, so misclassified.

Deterministic: fixed seeds and derandomized hypothesis; `seconds` is not part of the comparison.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy as sp
from hypothesis import settings as hypothesis_settings

from ir import dtypes as D
from rewrites.pattern import PatternRule
from rewrites.rule import Rule
from rewrites.verify.arrays import array_instances, check_array_dtype
from rewrites.verify.instantiate import VALUE_CONDITIONS, NotInstantiable, applicable_instances
from rewrites.verify.numeric import Counterexample, Evidence, bits_at, check_dtype
from rewrites.verify.params import MAX_BINDINGS
from rewrites.verify.symbolic import Symbolic, prove
from rewrites.verify.witness import witness_groups

if TYPE_CHECKING:
    from rewrites.verify.smt import SmtVerdict

RANK = {"exact": 0, "real": 1, "guarded": 1, "unsafe": 2, "unsound": 3}
VERDICTS = ("ok", "misclassified", "unsound", "unknown")
REAL_CHECK_KINDS = "iubc"  # float64 and these kinds run the real-number check
WITNESS_FULL_BUDGET = 1000  # from this budget (the CLI's default) a witnessed rule gets every param binding


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
    details: str = ""
    seconds: float = field(default=0.0, compare=False)
    smt: SmtVerdict | None = None  # z3's proof or refutation of an `exact` rule (`rewrites.verify.smt`)

    def to_dict(self, timing: bool = False) -> dict:
        out = {"name": self.name, "declared": self.declared, "evidenced": self.evidenced,
               "verdict": self.verdict, "symbolic": self.symbolic, "numeric": self.numeric,
               "counterexample": self.counterexample.to_dict() if self.counterexample else None,
               "reason": self.reason, "dtypes": list(self.dtypes), "details": self.details}
        if self.smt is not None:
            out["smt"] = self.smt.to_dict(timing)
        if timing:
            out["seconds"] = round(self.seconds, 3)
        return out

    @classmethod
    def from_dict(cls, d: dict, seconds: float = 0.0) -> Verdict:
        """The verdict `to_dict` gave, e.g. read back from a study's JSON lines (`rewrites.verify.study`)."""
        smt = None
        if "smt" in d:
            from rewrites.verify.smt import SmtVerdict

            smt = SmtVerdict.from_dict(d["smt"])
        cex = Counterexample.from_dict(d["counterexample"]) if d["counterexample"] else None
        return cls(d["name"], d["declared"], d["evidenced"], d["symbolic"], d["numeric"], d["verdict"], cex,
                   d["reason"], tuple(d["dtypes"]), d["details"], seconds, smt)

    def __str__(self) -> str:
        cex = f"; counterexample {self.counterexample}" if self.counterexample else ""
        return (f"{self.name}: {self.verdict} (declared {self.declared}, evidenced {self.evidenced}){cex}"
                + (f"; {self.reason}" if self.reason else "") + (f"; z3: {self.smt}" if self.smt else ""))


def default_budget() -> int:
    """The hypothesis examples per rule: the active profile's `max_examples` (ci 100, nightly 5000)."""
    return int(hypothesis_settings.default.max_examples)


def verify_rules(rules: Iterable[PatternRule], *, budget: int | None = None, sympy_seconds: float | None = 5.0,
                 complex_dtypes: bool = False, compiled: Mapping[str, Rule] | None = None,
                 prove: float | None = None) -> list[Verdict]:
    return [verify_rule(r, budget=budget, sympy_seconds=sympy_seconds, complex_dtypes=complex_dtypes,
                        compiled=compiled, prove=prove) for r in rules]


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
        smt = [v.smt for v in members if v.smt is not None]
        out.append(Verdict(**{**worst.__dict__, "reason": reason, "dtypes": dtypes,
                              "seconds": sum(v.seconds for v in members),
                              "smt": _merge_smt(smt) if smt else None}))
    return out


MERGE_ORDER = ("unsound", "misclassified", "ok", "unknown")


def _merge_smt(verdicts: list[SmtVerdict]) -> SmtVerdict:
    from rewrites.verify.smt import merge_smt

    return merge_smt(verdicts)


def verify_rule(rule: PatternRule, *, budget: int | None = None, sympy_seconds: float | None = 5.0,
                complex_dtypes: bool = False, compiled: Mapping[str, Rule] | None = None,
                prove: float | None = None) -> Verdict:
    """The verdict on `rule`: `budget` hypothesis examples (None: the active profile's), SymPy limited to
    `sympy_seconds`; `complex_dtypes` also checks complex128/complex64 (bits, kinds, and complex128 values
    at moderate inputs), which judges eval's complex arithmetic as much as the rule. A rule the patterns
    cannot instantiate (engine conditions) is run by the engine as `compiled[rule.name]` (default: the
    built-in rule of that name, or the pattern compiled) on instances of its left side (`witness`).
    `prove`: also ask z3 to prove an `exact` rule bit-exact, `prove` seconds per dtype (`smt`; None: not)."""
    start = time.perf_counter()
    budget = default_budget() if budget is None else budget
    try:
        verdict = _verify(rule, budget, sympy_seconds, complex_dtypes, compiled)
    except Exception as err:  # a rule the checks cannot handle gets a verdict, not a traceback in a listing
        verdict = Verdict(rule.name, rule.soundness, "unknown", "", "", "unknown",
                          reason=f"the verifier failed: {type(err).__name__}: {err}")
    verdict = Verdict(**{**verdict.__dict__, "seconds": time.perf_counter() - start})
    if prove is not None and rule.soundness == "exact":
        from rewrites.verify.smt import prove_rule, with_smt

        verdict = with_smt(verdict, prove_rule(rule, prove))
    return verdict


def _verify(rule: PatternRule, budget: int, sympy_seconds, complex_dtypes: bool, compiled) -> Verdict:
    base = {"name": rule.name, "declared": rule.soundness}
    groups = None
    try:
        try:
            instances, _ = applicable_instances(rule, complex_dtypes=complex_dtypes)
        except NotInstantiable as err:
            if not (err.shape_problem or err.param_vars):
                raise
            try:
                groups = array_instances(rule, complex_dtypes)
            except NotInstantiable as array_err:
                if array_err.ill_typed:
                    raise
                raise (array_err if err.param_vars else err) from None
    except NotInstantiable as err:
        if err.ill_typed:
            return Verdict(**base, evidenced="unsound", symbolic="", numeric="", verdict="unsound",
                           reason=err.reason)
        engine_rule = compiled[rule.name] if compiled and rule.name in compiled else compiled_rule(rule)
        if engine_rule is None:
            return Verdict(**base, evidenced="unknown", symbolic="", numeric="", verdict="unknown",
                           reason=f"not instantiable: {err.reason}")
        try:
            groups = witness_groups(rule, engine_rule, 2 if budget < WITNESS_FULL_BUDGET else MAX_BINDINGS)
        except NotInstantiable as witness_err:
            return Verdict(**base, evidenced="unknown", symbolic="", numeric="", verdict="unknown",
                           reason=f"not instantiable: {err.reason}; {witness_err.reason}")
        verdict = _verify_arrays(rule, base, groups, budget)
        return dataclasses.replace(verdict, details=f"right sides built by the engine; {verdict.details}")
    if groups is not None:
        return _verify_arrays(rule, base, groups, budget)
    dtypes = tuple(i.dtype.name for i in instances)
    f64 = next((i for i in instances if i.dtype == D.float64), None)
    symbolic = prove(f64, sympy_seconds) if f64 is not None else Symbolic("unknown", "no float64 instance")
    evidence: list[Evidence] = []
    for inst in instances:
        real = _runs_real_check(inst) and not (inst.dtype == D.float64 and symbolic.status == "disproved")
        evidence.append(check_dtype(rule, inst.dtype, budget, real))
    return _combine(rule, base, dtypes, symbolic, evidence)


def compiled_rule(rule: PatternRule) -> Rule | None:
    """The egglog rule a pattern stands for: the built-in of its name (a dumped built-in rule), else the
    pattern compiled (a rule from a text file); None when it does not compile."""
    from rewrites.rulecompile import compile_rules
    from rewrites.rulesets import all_rules

    builtin = {r.name: r for r in all_rules()}
    if rule.name in builtin and rule.origin is not None and not rule.origin.file.endswith(".rules"):
        return builtin[rule.name]
    try:
        [compiled] = compile_rules([rule])
    except Exception:  # noqa: BLE001  a rule the compiler refuses has no witness
        return None
    return compiled


def _runs_real_check(inst) -> bool:
    return inst.dtype == D.float64 or inst.dtype.kind in REAL_CHECK_KINDS


def _verify_arrays(rule: PatternRule, base: dict, groups, budget: int) -> Verdict:
    evidence = [check_array_dtype(rule, inst, budget, _runs_real_check(inst), binding)
                for binding, instances in groups for inst in instances]
    dtypes = tuple(dict.fromkeys(i.dtype.name for _, instances in groups for i in instances))
    symbolic = Symbolic("unknown", "not elementwise")
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
    if ev.dtype.startswith("complex") and not ev.real_checked:
        return ("real", "") if answered else ("unknown", why)  # complex64: as complex128 and the floats
    return ("real", "") if ev.real_checked else ("unknown", ev.real_unknown or "no real-number check")


def _combine(rule: PatternRule, base: dict, dtypes, symbolic: Symbolic, evidence: list[Evidence]) -> Verdict:
    notes = []
    numeric_evidence = evidence
    f64 = next((e for e in evidence if e.dtype == "float64"), None)
    if symbolic.status == "disproved" and f64 is not None:
        bits = f64.bits or bits_at(rule, D.float64, [_number(v) for _, v in symbolic.point])
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
    details = "; ".join(_describe(e) for e in evidence)
    numeric = _numeric_class(rule, numeric_evidence)
    verdict, cex, reason = _judge(rule, evidenced, evidence, unknown)
    reason = "; ".join([r for r in [reason, *notes] if r])
    return Verdict(**base, evidenced=evidenced, symbolic=str(symbolic), numeric=numeric, verdict=verdict,
                   counterexample=cex, reason=reason, dtypes=dtypes, details=details)


def _numeric_class(rule: PatternRule, evidence: list[Evidence]) -> str:
    """The class the numeric checks alone support (without SymPy's proof or disproof)."""
    f64 = next((e for e in evidence if e.dtype == "float64"), None)
    answered = (f64 is not None and f64.real_checked, f64.real_unknown if f64 is not None else "")
    classes = [_dtype_class(e, answered)[0] for e in evidence]
    if "unsound" in classes:
        return "unsound"
    if "unknown" in classes:
        return "unknown"
    worst = max(classes, key=["exact", "real", "unsafe"].index) if classes else "unknown"
    return "guarded" if worst == "real" and _guarded(rule) else worst


def _number(text: str):
    value = sp.sympify(text)
    return bool(value) if isinstance(value, sp.logic.boolalg.BooleanAtom) else float(value)


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
    where = f" ({e.params})" if e.params else ""
    parts = [f"{e.dtype}{where}: {e.points} {'samples' if e.real_how != 'high-precision points' else 'points'}"]
    parts.append("bits differ" if e.bits else "bit-identical")
    if e.bits:
        parts.append("kinds differ" if e.kind else "same kinds")
    if e.real:
        parts.append("reals differ")
    elif e.real_unknown:
        parts.append(f"reals unknown ({e.real_unknown})")
    elif e.real_points:
        parts.append(f"reals agree ({e.real_points} {e.real_how})")
    return ", ".join(parts)
