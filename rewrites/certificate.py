"""A certificate per optimize run, and its replay: what a run did, recorded so that anyone can re-check it.

    optimized, report = optimize(closed, rules="default", certificate=True)
    report.certificate                     # a JSON-able dict (below)
    replay(report.certificate)             # ReplayResult: re-runs it and says which fields differ

Schema `eqjax-certificate/1` (keys in this order):

    schema        "eqjax-certificate/1"
    input         {"text": the program as eqjax prints it, "fingerprint": ir.typecheck.fingerprint,
                   "consts": [ARRAY, ...] (the constvars' values, which the text does not hold)}
    rules         {"spec": the spec as given (a string, whose `+FILE.rules` items replay resolves from its
                   current directory; or null for a list of Rule objects, which replay finds by name),
                   "comparison": strict | default | fast (the weakest soundness class in the set, below),
                   "rules": [{"name", "category", "soundness", "hash"}, ...] in the set's order}
    settings      {"cost": the model's name, "cost_source": the profile digest of a latency/learned model
                   (rewrites.costs.cost_source) or null, "extractor", "limits": every `Limits` field, "loops"}
    versions      {"eqjax", "egglog", "numpy", "python", "platform"}
    report        {"iterations", "stop_reason", "enodes", "eclasses", "extraction_status", "cost_before",
                   "cost_after", "eqns_before", "eqns_after", "rules_fired": {name: matches} (rules that fired)}
    output        like `input`: the optimized program
    differential  the output checked against the input (below)

An ARRAY is {"dtype": NumPy name, "shape": [...], "base64": the C-order bytes}. A rule's hash is the SHA-256
of its name, soundness class, explosive flag and the egglog declaration of each of its egglog rules (the
patterns and conditions, as egglog holds them; egglog is pinned): it changes when the rule's definition does
and not when unrelated code does.

The differential check evaluates both programs with eqjax's interpreter on the same inputs: `finite` ones
(seeded; floats in [-4, 4] mixed with ±0, ±0.5, ±1, ±2; integers in [-8, 8], unsigned in [0, 8]), `special`
ones (every float input 0, -0, inf, -inf or nan in turn, then two mixes of those with ordinary values) and
`range` ones (every float input the dtype's smallest normal, smallest subnormal or largest finite value,
either sign; integer inputs at their extremes), each where the dtype has it; a finite sample on which the
input program makes a nan or an infinity inside is `inner`. Outputs are judged by the rule set's weakest
soundness class (`comparison`) with the judges the semantics run uses (`rewrites.verify.judges`): `strict`
bit-identical on every sample; `default` within the program's tolerance with the same nan/inf pattern on
special samples, range samples not judged; `fast` finite samples only. On a sample its comparison does not
judge, a difference in kind or beyond the tolerance is counted as `tolerated` and the first one recorded.

The verdict is `agree`, `differ` (with the first difference: the sample, its inputs, the output, both values)
or `unchecked` (no sample could be evaluated). A sample the input program cannot evaluate (an error, or more
than `WHILE_FUEL` nested evaluations in a program with a `while`) is skipped and counted.

`replay` re-parses the input and checks its fingerprint (a changed input ends the replay there), resolves the
rules (`RulesChanged` names every rule missing, new or defined differently), checks a profiled cost model's
digest, re-runs `optimize` with the recorded settings and compares `CONFIRMED_FIELDS`: the report's essentials,
the output's text, fingerprint and consts, and the differential verdict. Other differences (library versions,
the differential check's details) are warnings. A run stopped by its time limit need not replay exactly.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import platform
import sys
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

import ml_dtypes
import numpy as np

from eval.interpreter import eval_jaxpr
from ir.core import ClosedJaxpr, subjaxprs
from ir.errors import EqjaxError
from ir.text import parse_jaxpr
from ir.typecheck import fingerprint
from rewrites.rule import GUARDED, REAL, UNSAFE, Rule
from rewrites.verify.judges import (
    FINITE,
    INNER,
    JUDGED,
    JUDGES,
    RANGE,
    SPECIAL,
    has_specials,
    observed_difference,
    tolerance_for,
    with_every_result,
)

SCHEMA = "eqjax-certificate/1"
SEED = 0
SAMPLED = 6  # random samples
MIXED = 2  # samples mixing special values with ordinary ones
WHILE_FUEL = 2_000  # nested jaxpr evaluations a program with a `while` may make per sample (1,000 trips)


class CertificateError(EqjaxError):
    """A certificate that cannot be made or replayed as it is: names the field and what is wrong."""


class RulesChanged(EqjaxError):
    """The rules a certificate names are not the rules this eqjax has: names each rule and how it differs."""

    def __init__(self, changes: list[str]):
        self.changes = changes
        super().__init__("the rules differ from the certificate's: " + "; ".join(changes))


# --- making a certificate -------------------------------------------------------------------------------


def make_certificate(closed: ClosedJaxpr, optimized: ClosedJaxpr, report, *, rules, cost, extractor: str,
                     limits, loops: bool) -> dict:
    """The certificate of one plain `optimize` run (see the module docstring; `optimize` refuses a
    transform's run, whose output is not the input's equal)."""
    from rewrites.costs import cost_source, get_cost_model
    from rewrites.engine import Limits
    from rewrites.rulesets import resolve_rules

    rule_list = resolve_rules(rules)
    comparison = comparison_of(rule_list)
    return {
        "schema": SCHEMA,
        "input": program_record(closed),
        "rules": {"spec": rules if isinstance(rules, str) else None, "comparison": comparison,
                  "rules": [rule_record(r) for r in rule_list]},
        "settings": {"cost": get_cost_model(cost).name, "cost_source": cost_source(cost), "extractor": extractor,
                     "limits": asdict(limits or Limits()), "loops": loops},
        "versions": versions(),
        "report": report_record(report),
        "output": program_record(optimized),
        "differential": differential_check(closed, optimized, comparison),
    }


def program_record(closed: ClosedJaxpr) -> dict:
    return {"text": str(closed), "fingerprint": fingerprint(closed),
            "consts": [array_record(np.asarray(c)) for c in closed.consts]}


def array_record(a: np.ndarray) -> dict:
    return {"dtype": a.dtype.name, "shape": list(a.shape), "base64": base64.b64encode(a.tobytes()).decode()}


@cache
def rule_hash(rule: Rule) -> str:
    h = hashlib.sha256(f"{rule.name}\n{rule.soundness}\n{rule.explosive}\n".encode())
    for egg in rule.egg:
        # The declaration's repr, not egglog's pretty text of it (`str(egg)`), which says the same but takes
        # 3.5 s for the default set against 0.04 s; it is stable across processes (no ids, no hash order).
        h.update(repr(egg.decl).encode() + b"\n")
    return h.hexdigest()


def rule_record(rule: Rule) -> dict:
    return {"name": rule.name, "category": rule.category, "soundness": rule.soundness, "hash": rule_hash(rule)}


def comparison_of(rules: list[Rule]) -> str:
    """The named set whose promise the rules keep: the weakest soundness class among them."""
    classes = {r.soundness for r in rules}
    if UNSAFE in classes:
        return "fast"
    return "default" if classes & {REAL, GUARDED} else "strict"


def versions() -> dict:
    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    return {"eqjax": version("eqjax"), "egglog": version("egglog"), "numpy": np.__version__,
            "python": platform.python_version(), "platform": platform.platform()}


REPORT_FIELDS = ("iterations", "stop_reason", "enodes", "eclasses", "extraction_status", "cost_before",
                 "cost_after", "eqns_before", "eqns_after")


def report_record(report) -> dict:
    fired = {name: n for name, n in sorted(report.rule_matches.items()) if n}
    return {**{f: getattr(report, f) for f in REPORT_FIELDS}, "rules_fired": fired}


# --- the differential check ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    kind: str  # judges.FINITE | SPECIAL | RANGE (INNER is found when the sample is evaluated)
    label: str
    args: tuple[np.ndarray, ...]


def differential_check(original: ClosedJaxpr, optimized: ClosedJaxpr, comparison: str, seed: int = SEED) -> dict:
    """Both programs evaluated on the same samples and compared as `comparison` says (module docstring)."""
    avals = [v.aval for v in original.jaxpr.invars]
    unsupported = sorted({str(a.dtype) for a in avals if a.dtype.kind in ("key", "float0")})
    result: dict[str, Any] = {"comparison": comparison, "seed": seed, "samples": 0, "skipped": 0,
                              "first_skipped": None, "tolerated": 0, "first_tolerated": None}
    if unsupported:
        return {**result, "verdict": "unchecked", "first_difference": None,
                "reason": f"inputs of dtype {', '.join(unsupported)} are not sampled"}
    fuel = WHILE_FUEL if _has_while(original) or _has_while(optimized) else None
    tol, judged, n_outputs = tolerance_for(original), JUDGED[comparison], len(original.jaxpr.outvars)
    first = None
    for i, sample in enumerate(samples(avals, seed)):
        result["samples"] += 1
        expected, why = _evaluate(with_every_result(original), sample.args, fuel)
        if expected is None:
            result["skipped"] += 1
            result["first_skipped"] = result["first_skipped"] or f"sample {i} ({sample.label}): {why}"
            continue
        expected, inside = expected[:n_outputs], expected[n_outputs:]
        kind = INNER if sample.kind == FINITE and has_specials(inside) else sample.kind
        got, why = _evaluate(optimized, sample.args, fuel)
        k, problem = _first_problem(expected, got, why, _judge(comparison, kind, tol))
        if not problem:
            continue
        described = _describe(i, sample, kind, k, expected, got, problem)
        if kind not in judged:
            result["tolerated"] += 1
            result["first_tolerated"] = result["first_tolerated"] or described
        else:
            first = described
            break
    evaluated = result["samples"] - result["skipped"]
    verdict = "differ" if first else "agree" if evaluated else "unchecked"
    return {**result, "verdict": verdict, "first_difference": first,
            "reason": "" if evaluated else "no sample could be evaluated"}


def samples(avals, seed: int = SEED) -> list[Sample]:
    rng = np.random.default_rng(seed)
    if not avals:
        return [Sample(FINITE, "no inputs", ())]
    out = [Sample(FINITE, f"random {k}", tuple(_random(rng, a) for a in avals)) for k in range(SAMPLED)]
    for value in (0.0, -0.0, np.inf, -np.inf, np.nan):
        out.append(Sample(SPECIAL, f"every float input {value}",
                          tuple(_filled(rng, a, value, extreme=False) for a in avals)))
    for k in range(MIXED):
        out.append(Sample(SPECIAL, f"mixed special values {k}", tuple(_mixed(rng, a) for a in avals)))
    for name in ("smallest_normal", "smallest_subnormal", "max"):
        for sign in (1, -1):
            label = f"every float input {'-' if sign < 0 else ''}{name}"
            out.append(Sample(RANGE, label, tuple(_filled(rng, a, (name, sign), extreme=True) for a in avals)))
    return out


def _float_parts(dtype) -> np.dtype:
    """The real dtype of a float or complex dtype's values."""
    np_dtype = np.dtype(dtype.numpy)
    return np.dtype(np.float64 if np_dtype == np.complex128 else np.float32) if dtype.kind == "c" else np_dtype


def _random(rng, aval) -> np.ndarray:
    dtype, shape = aval.dtype, aval.shape
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -8, 9, shape).astype(dtype.numpy)
    moderate = np.array([-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0])

    def part():
        return np.where(rng.random(shape) < 0.5, rng.uniform(-4, 4, shape), rng.choice(moderate, shape))

    values = part() + 1j * part() if dtype.kind == "c" else part()
    return np.asarray(values).astype(dtype.numpy)


def _filled(rng, aval, value, extreme: bool) -> np.ndarray:
    """Float and complex inputs filled with `value` (a special value, or (finfo attribute, sign) when
    `extreme`) where the dtype has it, else sampled; integers at their extremes (`extreme`) or 0, ±1."""
    dtype, shape = aval.dtype, aval.shape
    if dtype.kind in "fc":
        real = _float_parts(dtype)
        if extreme:
            name, sign = value
            value = sign * float(getattr(ml_dtypes.finfo(real), name))
        cast = np.asarray(value).astype(real)
        if not np.isnan(value) and float(cast) != value:
            return _random(rng, aval)  # the dtype has no such value (no inf in float8_e4m3fn)
        return np.full(shape, value, dtype.numpy)
    if dtype.kind in "iu":
        info = np.iinfo(dtype.numpy)
        choices = [info.min, info.max] if extreme else [0, 1, -1 if dtype.kind == "i" else 2]
        return rng.choice(np.array(choices), shape).astype(dtype.numpy)
    return _random(rng, aval)


def _mixed(rng, aval) -> np.ndarray:
    dtype, shape = aval.dtype, aval.shape
    if dtype.kind not in "fc":
        return _filled(rng, aval, 0.0, extreme=False)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.5])
    out = np.empty(shape, dtype.numpy)
    if dtype.kind == "c":  # part by part: `inf * 1j` would put a nan in the real part
        out.real, out.imag = rng.choice(specials, shape), rng.choice(specials, shape)
    else:
        out[...] = rng.choice(specials, shape)
    return out


def _has_while(closed: ClosedJaxpr) -> bool:
    stack = [closed.jaxpr]
    while stack:
        jaxpr = stack.pop()
        for eqn in jaxpr.eqns:
            if eqn.primitive == "while":
                return True
            stack.extend(sub.jaxpr for sub in subjaxprs(eqn))
    return False


class _OutOfFuel(Exception):
    pass


def _evaluate(closed: ClosedJaxpr, args, fuel: int | None) -> tuple[list[np.ndarray] | None, str]:
    """The program's outputs on `args`, or None and why it could not be evaluated.

    With `fuel`, at most that many nested jaxpr evaluations (each trip of a `while` makes two): a sampled
    value can make a loop's trip count unbounded (a carry driven to -inf never reaches its bound), and the
    interpreter has no trip limit of its own. The count is kept by a profile hook on `eval_jaxpr` calls, so
    the bound is the same on every machine (a time limit would not be)."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event == "call" and frame.f_code is eval_jaxpr.__code__:
            calls += 1
            if calls > fuel:
                raise _OutOfFuel

    previous = sys.getprofile()
    if fuel is not None:
        sys.setprofile(count)
    try:
        with np.errstate(all="ignore"):
            return [np.asarray(o) for o in eval_jaxpr(closed, *args)], ""
    except _OutOfFuel:
        return None, f"more than {fuel} nested evaluations (a loop that may not end on this input)"
    except Exception as e:  # noqa: BLE001  any failure on a sample: outside the program's domain, or a bug to report
        return None, f"{type(e).__name__}: {e}".splitlines()[0]
    finally:
        if fuel is not None:
            sys.setprofile(previous)


def _judge(comparison: str, kind: str, tol: float):
    """`agree(ref, got)` for a sample of `kind`: the comparison's judge where it judges that kind, else any
    difference in kind or beyond `tol` (counted as tolerated)."""
    if kind in JUDGED[comparison]:
        return lambda ref, got: JUDGES[comparison](ref, got, kind, tol)
    return lambda ref, got: observed_difference(ref, got, tol)


def _first_problem(expected: list, got: list | None, why: str, agree) -> tuple[int, str]:
    """The first output where `got` disagrees with `expected` by `agree(ref, got)`, and how ('' when none does)."""
    if got is None:
        return 0, f"the optimized program fails where the input does not: {why}"
    if len(got) != len(expected):
        return 0, f"{len(got)} outputs instead of {len(expected)}"
    for k, (ref, out) in enumerate(zip(expected, got, strict=True)):
        problem = agree(ref, out)
        if problem:
            return k, problem
    return 0, ""


def _show(a) -> str:
    text = np.array2string(np.asarray(a), separator=", ", threshold=12, edgeitems=2).replace("\n", "")
    return text if len(text) <= 200 else text[:197] + "..."


def _describe(i: int, sample: Sample, kind: str, k: int, expected, got, problem: str) -> dict:
    return {"sample": i, "kind": kind, "label": sample.label,
            "inputs": [_show(a) for a in sample.args], "output": k, "problem": problem,
            "input_gives": _show(expected[k]) if expected and k < len(expected) else None,
            "output_gives": _show(got[k]) if got and k < len(got) else None}


# --- replay -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    field: str  # a dotted path into the certificate: "output.text", "report.enodes", "differential.verdict"
    recorded: Any
    replayed: Any

    def __str__(self) -> str:
        return f"{self.field}: recorded {_short(self.recorded)}, replayed {_short(self.replayed)}"


@dataclass
class ReplayResult:
    """`confirmed` when every compared field matches; `warnings` name what differs but does not count
    (library versions, the differential check's details)."""

    mismatches: list[Mismatch] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    replayed: dict | None = None  # the replayed run's certificate (None when replay stopped at the input)

    @property
    def confirmed(self) -> bool:
        return not self.mismatches

    def summary(self) -> str:
        verdict = (self.replayed or {}).get("differential", {}).get("verdict", "-")
        lines = [f"{'confirmed' if self.confirmed else 'NOT confirmed'}: differential verdict {verdict}"]
        lines += [f"mismatch {m}" for m in self.mismatches]
        lines += [f"warning {w}" for w in self.warnings]
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {"confirmed": self.confirmed, "mismatches": [asdict(m) for m in self.mismatches],
                "warnings": self.warnings, "replayed": self.replayed}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


# What must match for a replay to confirm, as dotted paths; a differing field not listed here is a warning.
CONFIRMED_FIELDS = ("input.fingerprint", *(f"report.{f}" for f in (*REPORT_FIELDS, "rules_fired")),
                    "output.text", "output.fingerprint", "output.consts", "differential.verdict")
_SECTIONS = {"input": dict, "rules": dict, "settings": dict, "versions": dict, "report": dict, "output": dict,
             "differential": dict}


def replay(certificate: dict) -> ReplayResult:
    """Re-run the certificate's optimize run here and compare (see `CONFIRMED_FIELDS`).

    Raises `CertificateError` for a malformed certificate and `RulesChanged` when a rule it names is missing
    here or defined differently (by its hash); a changed input (its fingerprint) ends the replay there."""
    from rewrites.engine import Limits, optimize

    _check_shape(certificate)
    result = ReplayResult()
    closed = program_from_record(certificate["input"], "input")
    recorded_input = certificate["input"]["fingerprint"]
    if fingerprint(closed) != recorded_input:
        result.mismatches.append(Mismatch("input.fingerprint", recorded_input, fingerprint(closed)))
        return result
    rules = resolve_recorded_rules(certificate["rules"])
    settings = certificate["settings"]
    try:
        limits = Limits(**settings["limits"])
    except TypeError as e:
        raise CertificateError(f"settings.limits: {e}") from None
    _check_cost_source(settings, result)
    try:
        _, report = optimize(closed, rules=rules, cost=settings["cost"], extractor=settings["extractor"],
                             limits=limits, loops=bool(settings["loops"]), certificate=True)
    except (ValueError, KeyError) as e:  # an unknown cost model or extractor name
        raise CertificateError(f"settings: {e}".splitlines()[0]) from None
    replayed = result.replayed = report.certificate
    for path, recorded, now in _leaves(certificate, replayed):
        if recorded == now or path.split(".")[0] in ("schema", "rules", "settings"):
            continue  # the rules and settings were checked above and replayed as recorded
        if any(path == f or path.startswith(f + ".") for f in CONFIRMED_FIELDS):
            result.mismatches.append(Mismatch(path, recorded, now))
        else:
            result.warnings.append(f"{path} differs: recorded {_short(recorded)}, here {_short(now)}")
    return result


def _check_shape(certificate: Any) -> None:
    if not isinstance(certificate, dict):
        raise CertificateError(f"a certificate is a JSON object, not {type(certificate).__name__}")
    if certificate.get("schema") != SCHEMA:
        raise CertificateError(f"schema: expected {SCHEMA!r}, got {certificate.get('schema')!r}")
    for key, kind in _SECTIONS.items():
        if not isinstance(certificate.get(key), kind):
            raise CertificateError(f"{key}: missing or not a JSON object")
    required = {"input": ("text", "fingerprint", "consts"), "output": ("text", "fingerprint", "consts"),
                "rules": ("spec", "comparison", "rules"), "settings": ("cost", "cost_source", "extractor",
                                                                       "limits", "loops"),
                "differential": ("verdict",)}
    for section, keys in required.items():
        missing = [k for k in keys if k not in certificate[section]]
        if missing:
            raise CertificateError(f"{section}: missing {', '.join(missing)}")
    if not isinstance(certificate["input"]["text"], str) or not isinstance(certificate["rules"]["rules"], list):
        raise CertificateError("input.text must be a string and rules.rules a list")


def program_from_record(record: dict, where: str) -> ClosedJaxpr:
    try:
        parsed = parse_jaxpr(record["text"])
        consts = [array_from_record(c) for c in record["consts"]]
        return ClosedJaxpr(parsed.jaxpr, consts)
    except EqjaxError as e:
        raise CertificateError(f"{where}.text: {type(e).__name__}: {str(e).splitlines()[0]}") from None
    except (TypeError, ValueError, KeyError) as e:
        raise CertificateError(f"{where}.consts: {type(e).__name__}: {e}") from None


def array_from_record(record: dict) -> np.ndarray:
    data = base64.b64decode(record["base64"], validate=True)
    return np.frombuffer(data, np.dtype(record["dtype"])).reshape(record["shape"]).copy()


def resolve_recorded_rules(recorded: dict) -> str | list[Rule]:
    """The rules to replay with: the recorded spec resolved here, or the named built-in rules; raises
    `RulesChanged` naming every rule whose definition (hash) differs, that is missing or that is new."""
    from rewrites.rule import RuleError
    from rewrites.rulesets import all_rules, resolve_rules

    try:
        wanted = {r["name"]: r["hash"] for r in recorded["rules"]}
    except (TypeError, KeyError) as e:
        raise CertificateError(f"rules.rules: each rule needs a name and a hash ({e})") from None
    spec = recorded["spec"]
    try:
        if isinstance(spec, str):
            here = resolve_rules(spec)
        else:
            by_name = {r.name: r for r in all_rules()}
            here = [by_name[n] for n in wanted if n in by_name]
    except (RuleError, OSError) as e:
        raise CertificateError(f"rules.spec {spec!r}: {e}") from None
    hashes = {r.name: rule_hash(r) for r in here}
    changes = [f"{n}: {'definition changed' if n in hashes else 'missing here'}"
               for n, h in wanted.items() if hashes.get(n) != h]
    changes += [f"{n}: not in the certificate" for n in hashes if n not in wanted]
    if not changes and list(hashes) != list(wanted):
        changes.append("the rules are in another order")
    if changes:
        raise RulesChanged(changes)
    return spec if isinstance(spec, str) else here


def _check_cost_source(settings: dict, result: ReplayResult) -> None:
    from rewrites.costs import cost_source

    try:
        here = cost_source(settings["cost"])
    except (ValueError, OSError) as e:
        raise CertificateError(f"settings.cost: {e}".splitlines()[0]) from None
    if here != settings["cost_source"]:
        result.mismatches.append(Mismatch("settings.cost_source", settings["cost_source"], here))


def _leaves(recorded: Any, replayed: Any, path: str = ""):
    """(dotted path, recorded, replayed) for every leaf of either dict; lists compare whole."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in [*recorded, *(k for k in replayed if k not in recorded)]:
            yield from _leaves(recorded.get(key), replayed.get(key), f"{path}.{key}" if path else key)
    else:
        yield path, recorded, replayed
