"""The JAX oracle conformance runner (fixture schema `jaxpr-oracle/1`, see tests/oracle/README.md).

A *check* compares one kind of result of a case with JAX's: `out` (evaluation) lives here; the
transform checks (`jvp`, `vjp`, `vmap`, `grad`, ...) are registered into `CHECKS` by the packages that
implement the transforms (`transforms.checks.register_checks()`), so this module depends on nothing above
`eval`. A check the project does not implement yet, or a case whose primitives lack a rule, is *skipped*
with the reason; a case without the fixture key for a check (JAX refuses that transform) is not counted.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from eval.interpreter import eval_jaxpr
from ir.core import ClosedJaxpr
from ir.dtypes import BY_NAME
from ir.errors import EqjaxError, UnsupportedPrimitive

# The JAX oracle fixtures: in a checkout the project's copy, tests/oracle/ (kept in sync with ../shared/oracle/);
# installed from a wheel, the copy it carries as data files, <prefix>/share/eqjax/oracle/ (pyproject.toml).
PACKAGED_ORACLE = Path(sys.prefix) / "share" / "eqjax" / "oracle"
CHECKOUT_ORACLE = Path(__file__).resolve().parents[1] / "tests" / "oracle"
DEFAULT_ORACLE = PACKAGED_ORACLE if PACKAGED_ORACLE.is_dir() else CHECKOUT_ORACLE
SCHEMA = "jaxpr-oracle/1"
# Each check's name is also the fixture key that holds JAX's results for it.
ALL_CHECKS = ("out", "jvp", "vjp", "vmap", "grad", "hessian", "vmap_grad", "grad_grad")


class FixtureError(EqjaxError):
    """A fixture file that does not follow the schema."""


def decode_array(d: dict | None) -> np.ndarray | None:
    """A fixture ARRAY object as a NumPy array with the exact stored dtype and bits."""
    if d is None:
        return None
    dt = np.dtype(BY_NAME[d["dtype"]].numpy)
    if dt.kind == "c":
        vals = [complex(float(re), float(im)) for re, im in d["data"]]
    elif dt.kind in "fV" or d["dtype"] == "bfloat16":
        vals = [float(v) for v in d["data"]]
    else:
        vals = d["data"]
    return np.array(vals, dtype=dt).reshape(d["shape"])


def encode_array(a) -> dict | None:
    """A NumPy array as a fixture ARRAY object, the inverse of `decode_array` (floats as Python floats,
    non-finite ones as "nan", "inf", "-inf"; complex numbers as [re, im]); None stays None."""
    if a is None:
        return None
    a = np.asarray(a)
    flat = a.reshape(-1)
    if a.dtype.kind == "c":
        data = [[_json_float(v.real), _json_float(v.imag)] for v in flat]
    elif a.dtype.kind in "fV":  # ml_dtypes' floats (bfloat16, ...) are of kind V
        data = [_json_float(v) for v in flat]
    elif a.dtype.kind == "b":
        data = [bool(v) for v in flat]
    else:
        data = [int(v) for v in flat]
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": data}


def _json_float(x) -> float | str:
    x = float(x)
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


@dataclass
class Case:
    id: str
    family: str
    tags: list[str]
    raw: dict = field(repr=False)

    @property
    def jaxpr_text(self) -> str:
        return self.raw["jaxpr"]

    @property
    def rtol(self) -> float:
        return float(self.raw["rtol"])

    @property
    def atol(self) -> float:
        return float(self.raw["atol"])

    def arrays(self, key: str) -> list[np.ndarray | None]:
        return [decode_array(a) for a in self.raw[key]]

    @property
    def primitives(self) -> list[str]:
        return [t.split(":", 1)[1] for t in self.tags if t.startswith("primitive:")]


def load_fixtures(paths: Iterable[str | Path], families: Sequence[str] = ()) -> list[Case]:
    """Cases of every fixture file under `paths` (files or directories), optionally by family."""
    files: list[Path] = []
    for p in map(Path, paths):
        files.extend(sorted(p.glob("*.json")) if p.is_dir() else [p])
    cases = []
    for f in files:
        try:
            data = json.loads(f.read_text())
        except json.JSONDecodeError as e:
            raise FixtureError(f"{f}: not JSON ({e})") from None
        if data.get("schema") != SCHEMA:
            raise FixtureError(f"{f}: not a {SCHEMA} fixture file (schema={data.get('schema')!r})")
        if families and data["family"] not in families:
            continue
        cases.extend(Case(c["id"], data["family"], c["tags"], c) for c in data["cases"])
    return cases


def program_case(case_id: str, oracle: str | Path = DEFAULT_ORACLE) -> Case:
    """The whole-program fixture case `case_id` ("program/mlp_tanh") of `oracle`; the family is read once per
    process (a bench reads one case per row)."""
    case = _program_cases(str(oracle)).get(case_id)
    if case is None:
        raise FixtureError(f"no program case {case_id!r} in {oracle}")
    return case


@cache
def _program_cases(oracle: str) -> dict[str, Case]:
    return {c.id: c for c in load_fixtures([oracle], ["programs"])}


def mismatch(got: Any, want: np.ndarray | None, rtol: float, atol: float) -> str | None:
    """None when `got` matches `want` under the fixture rules, else what differs."""
    if want is None:
        return None if got is None else "expected no value (float0/null)"
    if got is None:
        return f"expected {want.dtype}{list(want.shape)}, got no value"
    got = np.asarray(got)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"expected {want.dtype}{list(want.shape)}, got {got.dtype}{list(got.shape)}"
    if want.dtype.kind not in "fc" and want.dtype.name != "bfloat16":
        bad = got != want
    else:
        g, w = got.astype(np.complex128 if want.dtype.kind == "c" else np.float64), want.astype(
            np.complex128 if want.dtype.kind == "c" else np.float64)
        with np.errstate(invalid="ignore"):
            nan_ok = np.isnan(g) & np.isnan(w)
            inf_w = np.isinf(w)
            close = np.abs(g - w) <= atol + rtol * np.abs(w)
            bad = ~(nan_ok | np.where(inf_w, g == w, close & ~np.isnan(g)))
    if not np.any(bad):
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return (f"{int(np.sum(bad))} of {want.size} elements differ; "
            f"first at {list(idx)}: got {got[idx]!r}, want {want[idx]!r}")


def compare_lists(what: str, got: Sequence, want: Sequence, rtol: float, atol: float) -> None:
    if len(got) != len(want):
        raise CheckFailed(f"{what}: expected {len(want)} values, got {len(got)}")
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        problem = mismatch(g, w, rtol, atol)
        if problem:
            raise CheckFailed(f"{what}[{i}]: {problem}")


class CheckFailed(Exception):
    pass


class CheckSkipped(Exception):
    pass


# A check runs on a case and its (possibly optimized) program; raises CheckFailed or CheckSkipped.
Check = Callable[[Case, ClosedJaxpr], None]
CHECKS: dict[str, Check] = {}
# Prepares the program before checks (e.g. `--optimize`); identity by default.
Prepare = Callable[[ClosedJaxpr], ClosedJaxpr]


def check_out(case: Case, closed: ClosedJaxpr) -> None:
    got = eval_jaxpr(closed, *case.arrays("args"), check=True)
    compare_lists("out", got, case.arrays("out"), case.rtol, case.atol)


CHECKS["out"] = check_out


def parse_case(case: Case) -> ClosedJaxpr:
    from ir.text import parse_jaxpr

    closed = parse_jaxpr(case.jaxpr_text)
    if "consts" in case.raw:
        closed = ClosedJaxpr(closed.jaxpr, case.arrays("consts"))
    return closed


@dataclass
class Outcome:
    case: str
    family: str
    check: str
    status: str  # passed | failed | skipped
    reason: str = ""


def run_conformance(cases: Sequence[Case], checks: Sequence[str] = ("out",),
                    prepare: Prepare | None = None) -> list[Outcome]:
    outcomes = []
    for case in cases:
        wanted = [c for c in checks if c in case.raw]
        if not wanted:
            continue
        try:
            closed = parse_case(case)
            if prepare is not None:
                closed = prepare(closed)
        except UnsupportedPrimitive as e:
            outcomes += [Outcome(case.id, case.family, c, "skipped", str(e)) for c in wanted]
            continue
        except EqjaxError as e:
            outcomes += [Outcome(case.id, case.family, c, "failed", f"{type(e).__name__}: {e}") for c in wanted]
            continue
        for name in wanted:
            outcomes.append(_run_one(case, closed, name))
    return outcomes


def _run_one(case: Case, closed: ClosedJaxpr, name: str) -> Outcome:
    check = CHECKS.get(name)
    if check is None:
        return Outcome(case.id, case.family, name, "skipped", f"check {name!r} is not implemented yet")
    try:
        with np.errstate(all="ignore"):
            check(case, closed)
    except CheckSkipped as e:
        return Outcome(case.id, case.family, name, "skipped", str(e))
    except UnsupportedPrimitive as e:
        return Outcome(case.id, case.family, name, "skipped", str(e))
    except CheckFailed as e:
        return Outcome(case.id, case.family, name, "failed", str(e))
    except Exception as e:  # a crash in an implementation is a failure of this case, reported as such
        return Outcome(case.id, case.family, name, "failed", f"{type(e).__name__}: {e}")
    return Outcome(case.id, case.family, name, "passed")


def summarize(outcomes: Sequence[Outcome]) -> tuple[str, dict[str, int]]:
    """A per-family table and the totals, ending with `N passed, M failed, K skipped`."""
    by_family: dict[str, Counter] = {}
    for o in outcomes:
        by_family.setdefault(o.family, Counter())[o.status] += 1
    total = Counter(o.status for o in outcomes)
    lines = [f"{'family':<18}{'passed':>8}{'failed':>8}{'skipped':>9}"]
    for fam in sorted(by_family):
        c = by_family[fam]
        lines.append(f"{fam:<18}{c['passed']:>8}{c['failed']:>8}{c['skipped']:>9}")
    counts = {k: total[k] for k in ("passed", "failed", "skipped")}
    lines.append(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return "\n".join(lines), counts
