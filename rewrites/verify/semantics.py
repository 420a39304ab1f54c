"""Semantics preserved at scale: optimize programs under a rule set, compare both programs' results, and
blame the rules when they differ.

    check_program(closed, inputs, rules="default") -> Outcome     # agree | differ | error | skipped
    attribute(closed, sample, rules, judge) -> Blame               # the fewest fired rules that still differ
    run_semantics(n_programs, sets, seed, cases) -> SemanticsRun    # random programs + fixtures × rule sets

Each named rule set is judged by what its soundness classes promise, output by output, on every input
sample, by the judges of `rewrites.verify.judges` (which certificates use too): `strict` bit-identical,
`default` within the tolerance and with the same nan/inf pattern on special samples, `fast` within the
tolerance on finite samples.

Inputs (`Sample`s, each of a kind). A random program (`ir.strategies.programs`, drawn from a seeded
`ConjectureData`, so program `i` of seed `s` is the same in every run and process) runs on its own inputs
(finite, |x| <= 8), `FINITE_SAMPLES` more finite ones (`finite_arrays`), `SPECIAL_SAMPLES` where about half
the elements are ±0, ±inf or nan, and `RANGE_SAMPLES` where they are extreme magnitudes (subnormal, tiny,
huge, the largest finite): both from `rewrites.verify.numeric.special_values` of the input's dtype. A
fixture program runs on JAX's inputs only: they come from each primitive's valid domain (SPD matrices,
in-bounds indices), which random values break, and LAPACK can loop forever on non-finite matrices (issue 16);
the fixtures tagged `special-values` carry special inputs of their own.

Tolerance (rtol = atol): a fixture's own; for random programs `judges.DEFAULT_TOLERANCE` by dtype (see there).

Attribution. A difference is blamed on the rules that fired (the report's `rule_matches`): the program is
optimized again with only those (the analyses always run) and, if it still differs on the failing sample,
narrowed by delta debugging (drop chunks of the rules, halves first, while the difference persists) to a set
from which no single rule can be dropped.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from random import Random

import numpy as np

from eval.oracle import Case, parse_case
from ir.core import ClosedJaxpr
from ir.errors import EqjaxError, UnsupportedPrimitive
from ir.strategies import FINITE_BOUND, Program, programs
from rewrites.engine import optimize
from rewrites.rule import Rule
from rewrites.rulesets import RULE_SETS, resolve_rules
from rewrites.verify.arrays import MODERATE
from rewrites.verify.judges import (
    FINITE,
    INNER,
    JUDGES,
    RANGE,
    SPECIAL,
    makes_specials_inside,
    run,
    sample_kind,
    tolerance_for,
)
from rewrites.verify.numeric import special_values

RULE_SET_NAMES = ("strict", "default", "fast")
FINITE_SAMPLES, SPECIAL_SAMPLES, RANGE_SAMPLES = 2, 3, 2


# --- inputs --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sample:
    kind: str  # FINITE | SPECIAL | RANGE
    args: tuple[np.ndarray, ...]


def finite_arrays(rng: np.random.Generator, avals) -> tuple[np.ndarray, ...]:
    """One finite input per aval: half uniform in ±FINITE_BOUND (the strategy's domain), half the moderate
    values ±2, ±1, ±0.5, 0 of `rewrites.verify.arrays` (which make ties, exact products and zeros)."""
    moderate = MODERATE[~((MODERATE == 0) & np.signbit(MODERATE))]
    out = []
    for a in avals:
        values = np.where(rng.random(a.shape) < 0.5, rng.uniform(-FINITE_BOUND, FINITE_BOUND, a.shape),
                          rng.choice(moderate, a.shape))
        out.append(np.asarray(values).astype(a.dtype.numpy))
    return tuple(out)


def _is_ieee_special(v: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return ~np.isfinite(v) | (v == 0)


def mixed_arrays(rng: np.random.Generator, avals, kind: str) -> tuple[np.ndarray, ...]:
    """`finite_arrays` with about half the elements replaced by special values of the input's dtype
    (`rewrites.verify.numeric.special_values`): its ±0, ±inf, nan (SPECIAL) or its magnitudes that are
    neither those nor moderate, subnormal to the largest finite (RANGE)."""
    out = []
    for a, finite in zip(avals, finite_arrays(rng, avals), strict=True):
        values = special_values(a.dtype)
        ieee = _is_ieee_special(values.astype(np.float64))
        extreme = ~ieee & ~np.isin(np.abs(values.astype(np.float64)), np.abs(MODERATE))
        pool = values[ieee] if kind == SPECIAL else values[extreme]
        out.append(np.where(rng.random(a.shape) < 0.5, rng.choice(pool, a.shape), finite).astype(finite.dtype))
    return tuple(out)


def program_inputs(p: Program, seed: int) -> list[Sample]:
    """The program's own inputs, then FINITE_SAMPLES finite, SPECIAL_SAMPLES special and RANGE_SAMPLES
    extreme-magnitude samples drawn with `seed`."""
    rng = np.random.default_rng(seed)
    avals = p.closed.in_avals
    return ([Sample(sample_kind(p.args), p.args)]
            + [Sample(FINITE, finite_arrays(rng, avals)) for _ in range(FINITE_SAMPLES)]
            + [Sample(SPECIAL, mixed_arrays(rng, avals, SPECIAL)) for _ in range(SPECIAL_SAMPLES)]
            + [Sample(RANGE, mixed_arrays(rng, avals, RANGE)) for _ in range(RANGE_SAMPLES)])


def random_program(seed: int, index: int) -> Program:
    """Program `index` of `seed`: `ir.strategies.programs()` drawn from a ConjectureData seeded with both
    (hypothesis's own drawing path, without a test around it)."""
    from hypothesis.control import BuildContext
    from hypothesis.internal.conjecture.data import ConjectureData

    data = ConjectureData(random=Random(f"eqjax-semantics/{seed}/{index}"))
    with BuildContext(data, wrapped_test=None):
        return data.draw(programs())


# --- one program ---------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    status: str  # agree | differ | error | skipped
    reason: str = ""
    fired: list[str] = field(default_factory=list)
    optimized: ClosedJaxpr | None = None
    sample: int = -1  # the first input sample and output where the programs differ
    output: int = -1
    ref: np.ndarray | None = None
    got: np.ndarray | None = None


def inner_kind(closed: ClosedJaxpr, sample: Sample) -> Sample:
    """A FINITE sample as INNER when a top-level equation of `closed` makes a nan or ±inf from it."""
    if sample.kind == FINITE and makes_specials_inside(closed, sample.args):
        return Sample(INNER, sample.args)
    return sample


def _differs(judge: str, optimized: ClosedJaxpr, inputs: Sequence[Sample], refs, tol: float) -> Outcome | None:
    agree = JUDGES[judge]
    for k, (sample, ref) in enumerate(zip(inputs, refs, strict=True)):
        got = run(optimized, sample.args)
        for i, (r, g) in enumerate(zip(ref, got, strict=True)):
            problem = agree(r, g, sample.kind, tol)
            if problem:
                return Outcome("differ", f"output {i}: {problem}", sample=k, output=i, ref=r, got=g)
    return None


def check_program(closed: ClosedJaxpr, inputs: Sequence[Sample], rules: str | Sequence[Rule] = "default",
                  judge: str | None = None, tol: float | None = None,
                  refs: Sequence[list[np.ndarray]] | None = None) -> Outcome:
    """Optimize `closed` under `rules` and compare both programs on every sample of `inputs` by `judge`
    (default: the set `rules` names). `refs` are the original's results when already known."""
    judge = judge or (rules.split(",")[0] if isinstance(rules, str) else None)
    if judge not in JUDGES:
        raise ValueError(f"check_program: judge must be one of {', '.join(JUDGES)}, got {judge!r}")
    tol = tolerance_for(closed) if tol is None else tol
    try:
        refs = refs if refs is not None else [run(closed, sample.args) for sample in inputs]
        inputs = [inner_kind(closed, sample) for sample in inputs]
    except EqjaxError as e:
        return Outcome("skipped", f"the original does not evaluate: {type(e).__name__}: {e}")
    try:
        optimized, report = optimize(closed, rules=rules)
    except UnsupportedPrimitive as e:
        return Outcome("skipped", f"not optimizable: {e}")
    except Exception as e:  # noqa: BLE001  any crash of the optimizer is a finding of this run
        return Outcome("error", f"optimize: {type(e).__name__}: {e}")
    fired = sorted(name for name, n in report.rule_matches.items() if n)
    try:
        found = _differs(judge, optimized, inputs, refs, tol)
    except Exception as e:  # noqa: BLE001  so is an optimized program that does not evaluate
        return Outcome("error", f"the optimized program does not evaluate: {type(e).__name__}: {e}", fired,
                       optimized)
    if found is None:
        return Outcome("agree", fired=fired, optimized=optimized)
    found.fired, found.optimized = fired, optimized
    return found


# --- attribution ---------------------------------------------------------------------------------------------

@dataclass
class Blame:
    rules: list[str]  # the narrowed set of rules (all fired ones when `reproduced` is False)
    reproduced: bool  # whether the fired rules alone reproduce the difference
    tries: int  # optimize calls the narrowing made


def attribute(closed: ClosedJaxpr, sample: Sample, rules: str | Sequence[Rule], judge: str, fired: Sequence[str],
              tol: float | None = None) -> Blame:
    """The fewest of the `fired` rules (names, of the rule list `rules` resolves to) under which `closed`
    still differs on `sample`: delta debugging over the fired rules (Zeller's ddmin, complements only)."""
    tol = tolerance_for(closed) if tol is None else tol
    by_name = {r.name: r for r in resolve_rules(rules)}
    candidates = [by_name[n] for n in fired if n in by_name]
    ref = run(closed, sample.args)
    sample = inner_kind(closed, sample)
    tries = 0

    def fails(subset: list[Rule]) -> bool:
        nonlocal tries
        tries += 1
        try:
            optimized, _ = optimize(closed, rules=subset)
            return _differs(judge, optimized, [sample], [ref], tol) is not None
        except Exception:  # noqa: BLE001  a subset that breaks the optimizer does not reproduce the difference
            return False

    if not candidates or not fails(candidates):
        return Blame(sorted(r.name for r in candidates), False, tries)
    chunks = 2
    while len(candidates) >= 2:
        size = -(-len(candidates) // chunks)
        parts = [candidates[i:i + size] for i in range(0, len(candidates), size)]
        for part in parts:
            rest = [r for r in candidates if r not in part]
            if rest and fails(rest):
                candidates, chunks = rest, max(chunks - 1, 2)
                break
        else:
            if chunks >= len(candidates):
                break
            chunks = min(2 * chunks, len(candidates))
    return Blame(sorted(r.name for r in candidates), True, tries)


# --- the run -------------------------------------------------------------------------------------------------

@dataclass
class Finding:
    """One difference: where it came from, the rules blamed, and what the two programs gave."""

    rule_set: str
    source: str  # `random/SEED/INDEX` or the fixture case id
    blame: Blame
    fired: list[str]
    reason: str
    program: str
    optimized: str
    inputs: list[np.ndarray]
    output: int
    original_gives: np.ndarray
    optimized_gives: np.ndarray

    def as_dict(self) -> dict:
        def show(a):
            return np.array2string(np.asarray(a), floatmode="unique", separator=", ", threshold=64)

        return {"rule_set": self.rule_set, "source": self.source, "rules": self.blame.rules,
                "reproduced": self.blame.reproduced, "tries": self.blame.tries, "fired": self.fired,
                "reason": self.reason, "program": self.program, "optimized": self.optimized,
                "inputs": [show(a) for a in self.inputs], "output": self.output,
                "original_gives": show(self.original_gives), "optimized_gives": show(self.optimized_gives)}


@dataclass
class SetSummary:
    rule_set: str
    programs: int = 0
    agree: int = 0
    differ: int = 0
    errors: int = 0
    skipped: int = 0
    blamed: Counter = field(default_factory=Counter)  # rule name -> findings blaming it
    findings: list[Finding] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (source, reason) of errors

    def as_dict(self) -> dict:
        return {"rule_set": self.rule_set, "programs": self.programs, "agree": self.agree, "differ": self.differ,
                "errors": self.errors, "skipped": self.skipped, "blamed": dict(sorted(self.blamed.items())),
                "findings": [f.as_dict() for f in self.findings],
                "errors_seen": [{"source": s, "reason": r} for s, r in self.problems]}


@dataclass
class SemanticsRun:
    seed: int
    random_programs: int
    fixtures: int
    sets: dict[str, SetSummary]
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {"seed": self.seed, "random_programs": self.random_programs, "fixtures": self.fixtures,
                "seconds": round(self.seconds, 1), "sets": {k: s.as_dict() for k, s in self.sets.items()}}


@dataclass(frozen=True)
class Subject:
    """A program to check, its input samples and its tolerance."""

    source: str
    closed: ClosedJaxpr
    inputs: list[Sample]
    tol: float


def random_subject(seed: int, index: int) -> Subject:
    p = random_program(seed, index)
    return Subject(f"random/{seed}/{index}", p.closed, program_inputs(p, seed * 1_000_003 + index),
                   tolerance_for(p.closed))


def fixture_subject(case: Case) -> Subject | None:
    try:
        closed = parse_case(case)
    except EqjaxError:
        return None  # the conformance run reports texts that do not parse
    args = tuple(case.arrays("args"))
    return Subject(case.id, closed, [Sample(sample_kind(args), args)], max(case.rtol, case.atol))


@dataclass
class Verdict:
    """One subject under one rule set."""

    status: str  # agree | differ | error | skipped
    reason: str = ""
    finding: Finding | None = None


def check_subject(subject: Subject, sets: Sequence[str]) -> dict[str, Verdict]:
    """`subject` under each rule set of `sets`, every difference attributed."""
    try:
        refs = [run(subject.closed, sample.args) for sample in subject.inputs]
    except Exception as e:  # noqa: BLE001  a program the interpreter cannot run is skipped, as in conformance
        return {name: Verdict("skipped", f"the original does not evaluate: {type(e).__name__}: {e}") for name in sets}
    verdicts = {}
    for name in sets:
        outcome = check_program(subject.closed, subject.inputs, name, tol=subject.tol, refs=refs)
        if outcome.status != "differ":
            verdicts[name] = Verdict(outcome.status, outcome.reason)
            continue
        sample = subject.inputs[outcome.sample]
        blame = attribute(subject.closed, sample, name, name, outcome.fired, subject.tol)
        verdicts[name] = Verdict("differ", outcome.reason, Finding(
            name, subject.source, blame, outcome.fired, outcome.reason, str(subject.closed), str(outcome.optimized),
            list(sample.args), outcome.output, outcome.ref, outcome.got))
    return verdicts


def _check_one(job: tuple, sets: Sequence[str]) -> tuple[str, dict[str, Verdict]]:
    """A job is ("random", seed, index) or ("fixture", case): built in the process that checks it."""
    subject = random_subject(*job[1:]) if job[0] == "random" else fixture_subject(job[1])
    if subject is None:
        return job[1].id, {}
    return subject.source, check_subject(subject, sets)


def run_semantics(n_programs: int, sets: Sequence[str] = RULE_SET_NAMES, seed: int = 0,
                  cases: Sequence[Case] = (), jobs: int = 1,
                  progress: Callable[[int, int], None] | None = None) -> SemanticsRun:
    """`n_programs` random programs of `seed` and the fixture `cases`, each optimized under every rule set of
    `sets` and judged by it; every difference is attributed to rules. `jobs` > 1 checks programs in that
    many processes; the result is the same (gathered in program order)."""
    unknown = [s for s in sets if s not in RULE_SETS or s not in JUDGES]
    if unknown:
        raise ValueError(f"run_semantics: unknown rule sets {unknown}; choose from {', '.join(RULE_SET_NAMES)}")
    start = time.perf_counter()
    summaries = {s: SetSummary(s) for s in sets}
    work = [("random", seed, i) for i in range(n_programs)] + [("fixture", c) for c in cases]
    fixtures = 0
    for done, (job, (source, verdicts)) in enumerate(zip(work, _results(work, tuple(sets), jobs), strict=True), 1):
        fixtures += job[0] == "fixture" and bool(verdicts)
        for name, v in verdicts.items():
            _count(summaries[name], source, v)
        if progress is not None:
            progress(done, len(work))
    return SemanticsRun(seed, n_programs, fixtures, summaries, time.perf_counter() - start)


def _results(work: list[tuple], sets: tuple[str, ...], jobs: int):
    if jobs <= 1:
        yield from (_check_one(job, sets) for job in work)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    # spawn, not fork: a forked child inherits egglog's and hypothesis's state mid-use and can hang
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield from pool.map(partial(_check_one, sets=sets), work, chunksize=4)


def _count(summary: SetSummary, source: str, v: Verdict) -> None:
    summary.programs += 1
    if v.status == "agree":
        summary.agree += 1
    elif v.status == "skipped":
        summary.skipped += 1
    elif v.status == "error":
        summary.errors += 1
        summary.problems.append((source, v.reason))
    else:
        summary.differ += 1
        summary.blamed.update(v.finding.blame.rules)
        summary.findings.append(v.finding)
