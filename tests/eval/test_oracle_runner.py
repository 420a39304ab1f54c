"""The conformance runner itself: comparison rules, and `out` over the foundation families."""

import json
import subprocess
import sys

import numpy as np
import pytest

from eval.oracle import (
    CHECKS,
    Outcome,
    decode_array,
    load_fixtures,
    mismatch,
    run_conformance,
    summarize,
)
from tests.oracle_paths import FOUNDATION_FAMILIES, ORACLE

F64 = np.float64


@pytest.mark.parametrize("got,want,ok", [
    (np.array([1.0, np.nan]), np.array([1.0, np.nan]), True),          # nan matches nan
    (np.array([np.inf]), np.array([np.inf]), True),
    (np.array([np.inf]), np.array([-np.inf]), False),                  # inf must match exactly
    (np.array([1e300]), np.array([np.inf]), False),
    (np.array([np.nan]), np.array([1.0]), False),
    (np.array([1.0 + 1e-13]), np.array([1.0]), True),                 # within rtol 1e-12
    (np.array([1.0 + 1e-9]), np.array([1.0]), False),
    (np.array([1.0], np.float32), np.array([1.0]), False),             # dtype must match
    (np.array([[1.0]]), np.array([1.0]), False),                       # shape must match
    (np.array([3], np.int32), np.array([3], np.int32), True),
    (np.array([3], np.int32), np.array([4], np.int32), False),
])
def test_mismatch_follows_fixture_rules(got, want, ok):
    assert (mismatch(got, want, 1e-12, 1e-12) is None) == ok


def test_decode_keeps_bits_and_special_values():
    d = {"dtype": "float64", "shape": [2, 2], "data": [-0.0, "nan", "inf", "-inf"]}
    a = decode_array(d)
    assert a.dtype == F64 and a.shape == (2, 2)
    assert np.signbit(a[0, 0]) and np.isnan(a[0, 1]) and a[1, 0] == np.inf and a[1, 1] == -np.inf
    c = decode_array({"dtype": "complex64", "shape": [1], "data": [[1.5, "-inf"]]})
    assert c.dtype == np.complex64 and c[0].imag == -np.inf
    b = decode_array({"dtype": "bfloat16", "shape": [], "data": [0.5]})
    assert b.dtype.name == "bfloat16" and float(b) == 0.5


def test_unimplemented_check_is_skipped_with_reason(monkeypatch):
    monkeypatch.delitem(CHECKS, "out")
    case = load_fixtures([ORACLE / "unary.json"])[0]
    [o] = run_conformance([case], ["out"])
    assert o.status == "skipped" and "not implemented" in o.reason


def test_summary_ends_with_counts_line():
    table, counts = summarize([Outcome("x", "fam", "out", "passed"), Outcome("y", "fam", "out", "failed", "r")])
    assert table.splitlines()[-1] == "1 passed, 1 failed, 0 skipped"
    assert counts == {"passed": 1, "failed": 1, "skipped": 0}


@pytest.mark.parametrize("family", FOUNDATION_FAMILIES)
def test_out_conformance(family):
    """Every case of the foundation families evaluates to JAX's output: nothing fails or is skipped."""
    cases = load_fixtures([ORACLE], [family])
    assert cases, f"no cases for {family}"
    outcomes = run_conformance(cases, ["out"])
    bad = [f"{o.status} {o.case}: {o.reason}" for o in outcomes if o.status != "passed"]
    assert not bad, "\n".join(bad)
    assert len(outcomes) == len(cases)


def test_cli_conformance_json_and_exit_status():
    proc = subprocess.run([sys.executable, "-m", "transforms.cli", "conformance", str(ORACLE / "shape.json"),
                           "--json"], capture_output=True, text=True, timeout=300)
    data = json.loads(proc.stdout)
    assert set(data["summary"]) == {"passed", "failed", "skipped"}
    assert proc.returncode == (1 if data["summary"]["failed"] else 0)
