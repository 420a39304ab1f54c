"""Every check of every library fixture case (tests/library/fixtures: jax.nn, jax.scipy, jax.numpy, jnp.linalg,
jax.random, flax, optax, equinox, ODE integrators, whole programs; captured by capture.py) through eqjax, as
the oracle conformance tests run them: `out` evaluates the program optimized in the e-graph with the `default`
rules (tests/rewrites/test_conformance_optimized.py), the transform checks build their programs through the
e-graph (transforms/ad/checks.py, transforms/batching/checks.py, transforms/checks.py).

A check that does not pass today is a row of `KNOWN_FAILURES` (case, check, cause) and is marked
`xfail(strict=True)`: when the cause is fixed the test fails until its row is removed. A `skipped` outcome of
the runner (a primitive without a rule) counts as not passing. Every other check must pass.

Budget: a check takes 0.3-30 s (about 1.5 s on average; the hessians of the flax and ODE programs are the
slowest), so under the `ci` profile every `STRIDE`-th (case, check) pair runs, spread over every family (~40
checks, ~30 s); `HYPOTHESIS_PROFILE=nightly` runs all of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.oracle import ALL_CHECKS, SCHEMA, load_fixtures, run_conformance
from rewrites.engine import optimize
from tests.library.known_failures import KNOWN_FAILURES
from tests.oracle_paths import ORACLE
from tests.profile import NIGHTLY
from transforms.checks import register_checks

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CASES = load_fixtures([FIXTURES])
STRIDE = 1 if NIGHTLY else 25
TOLERANCE_CLASSES = {"f32-internal": 1e-5}
register_checks()


def _optimized(closed):
    return optimize(closed, rules="default")[0]


def _pairs() -> list:
    rows = [(case, check) for case in CASES for check in ALL_CHECKS if check in case.raw]
    params = []
    for k, (case, check) in enumerate(rows):
        if k % STRIDE:
            continue
        cause = KNOWN_FAILURES.get((case.id, check))
        marks = [pytest.mark.xfail(strict=True, reason=cause)] if cause else []
        params.append(pytest.param(case, check, id=f"{case.id}:{check}", marks=marks))
    return params


@pytest.mark.parametrize("case, check", _pairs())
def test_library_check(case, check):
    [outcome] = run_conformance([case], [check], prepare=_optimized if check == "out" else None)
    assert outcome.status == "passed", f"{outcome.status}: {outcome.reason}"


def test_known_failures_name_real_checks():
    """Every row of the table names a case and a check that the fixtures hold."""
    present = {(case.id, check) for case in CASES for check in ALL_CHECKS if check in case.raw}
    stale = sorted(set(KNOWN_FAILURES) - present)
    assert not stale, stale


def test_fixture_files_follow_the_schema():
    """Header keys in order, one case per line, ids unique here and against the oracle, ≥ 120 cases,
    and a case's `tolerance` object names a documented class whose value is its rtol = atol."""
    for path in sorted(FIXTURES.glob("*.json")):
        lines = path.read_text().splitlines()
        assert lines[:6] == ["{", f'"schema": "{SCHEMA}",', '"jax_version": "0.10.2",', '"x64": true,',
                             f'"family": "{path.stem}",', '"cases": ['], path.name
        assert lines[-1] == "]}", path.name
        assert len(lines) - 7 == len(json.loads(path.read_text())["cases"]), path.name
    ids = [case.id for case in CASES]
    assert len(ids) >= 120 and len(set(ids)) == len(ids)
    assert not set(ids) & {case.id for case in load_fixtures([ORACLE])}
    for case in CASES:
        assert case.rtol == case.atol, case.id
        tolerance = case.raw.get("tolerance")
        if tolerance is not None:
            assert TOLERANCE_CLASSES[tolerance["class"]] == case.rtol and tolerance["reason"], case.id
