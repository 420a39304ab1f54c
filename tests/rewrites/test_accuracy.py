"""The accuracy report (`rewrites.accuracy`, `optimize(..., accuracy=True)`, `eqjax optimize --accuracy`) and the
verdict column of `eqjax rules effect`: bits of error on known cases, the warning when an unsafe rule changes
results and its silence under `strict`, unsupported primitives named, the CLI's text and JSON."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from ir import dtypes as D
from ir.errors import UnsupportedPrimitive
from ir.text import parse_jaxpr
from rewrites.accuracy import bits_of_error, bits_on, measure_accuracy, rounded
from rewrites.engine import optimize
from rewrites.verify.highprec import context
from transforms.cli import main

PLANTED = Path(__file__).parent / "data" / "planted.rules"

# x*0 + 1: `mul-zero` (unsafe) makes it 1.0 where x is ±inf or nan, which the original makes nan
TIMES_ZERO = """{ lambda ; a:f64[3]. let
    b:f64[3] = mul a 0.0:f64[]
    c:f64[3] = add b 1.0:f64[]
  in (c,) }"""
NAIVE_LOG1P = """{ lambda ; a:f64[]. let
    b:f64[] = add a 1.0:f64[]
    c:f64[] = log b
  in (c,) }"""
LOG1P = """{ lambda ; a:f64[]. let b:f64[] = log1p a in (b,) }"""


def _ulps_apart(x: float, n: int) -> float:
    for _ in range(n):
        x = float(np.nextafter(x, math.inf))
    return x


# --- bits of error ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("computed, exact, dtype, bits", [
    (1.0, 1.0, D.float64, 0.0),
    (1.0, _ulps_apart(1.0, 1), D.float64, 1.0),
    (1.0, _ulps_apart(1.0, 2), D.float64, math.log2(3)),  # two floats after 1.0: log2(1 + 2)
    (1.0, _ulps_apart(1.0, 7), D.float64, 3.0),
    (-5e-324, 5e-324, D.float64, math.log2(3)),  # across zero: -tiny, 0, +tiny
    (-0.0, 0.0, D.float64, 0.0),  # one value
    (np.float32(1.0), np.nextafter(np.float32(1.0), np.float32(2.0)), D.float32, 1.0),
    (np.nan, np.nan, D.float64, 0.0),  # undefined over the reals, and nan computed
    (0.0, np.nan, D.float64, 64.0),  # a number where the exact result is undefined
    (np.inf, 1.0, D.float64, 64.0),  # inf where the exact result is finite
    (np.nan, 1.0, D.float32, 32.0),
    (np.finfo(np.float64).max, np.inf, D.float64, 1.0),  # inf is the float after the largest finite
    (-np.inf, np.inf, D.float64, math.log2(1 + 2 * 0x7FF0000000000000)),  # inf's bits as an integer, twice
])
def test_bits_of_error_known_cases(computed, exact, dtype, bits):
    got = bits_of_error(np.array([computed], dtype.numpy), np.array([exact], dtype.numpy), dtype)
    assert got[0] == pytest.approx(bits)


def test_bits_of_error_of_ints_and_bools_count_the_width_where_wrong():
    ints = bits_of_error(np.array([3, 4], np.int32), np.array([3, 5], dtype=object), D.int32)
    assert list(ints) == [0.0, 32.0]
    bools = bits_of_error(np.array([True, False]), np.array([True, True], dtype=object), D.bool_)
    assert list(bools) == [0.0, 1.0]


def test_rounding_is_correct_at_ties_subnormals_and_overflow():
    ctx = context(80)
    one_ulp = 2.0 ** -52
    cases = [
        (1 + ctx.mpf(2) ** -53, 1.0),  # a tie rounds to even
        (1 + ctx.mpf(2) ** -53 + ctx.mpf(2) ** -200, 1.0 + one_ulp),  # just above the tie
        (1 + 3 * ctx.mpf(2) ** -53, 1.0 + 2 * one_ulp),  # a tie between 1+ulp and 1+2ulp: the even one
        (3 * ctx.mpf(2) ** -1075, 2 * 5e-324),  # 1.5 smallest subnormals: a tie, to 2
        (ctx.mpf(2) ** -1076, 0.0),  # a quarter of the smallest subnormal
        (ctx.mpf(2) ** 1024, math.inf),  # overflow
        (-ctx.mpf(2) ** 1024, -math.inf),
        (ctx.mpf(1) / 3, 1 / 3),
    ]
    exact = np.array([c for c, _ in cases], dtype=object)
    assert rounded(exact, D.float64).tolist() == [want for _, want in cases]
    assert rounded(np.array([ctx.mpf(1) / 3], dtype=object), D.float32)[0] == np.float32(1 / 3)


def test_naive_log_of_one_plus_x_loses_bits_that_log1p_keeps():
    naive, log1p = parse_jaxpr(NAIVE_LOG1P), parse_jaxpr(LOG1P)
    for x in (1e-10, 3e-17, 1e-200):  # (at 5e-324 the naive 0.0 is the float next to the exact value)
        args = (np.float64(x),)
        [naive_bits] = bits_on(naive, args)
        [log1p_bits] = bits_on(log1p, args, reference=naive)  # the same real function
        assert naive_bits > 25, x
        assert log1p_bits <= 1, x
    [bits] = bits_on(naive, (np.float64(1e-10),))
    exact = math.log1p(1e-10)  # correctly rounded in double here: the naive form is ~2^33 ulps off
    ulps = abs(np.log(1 + 1e-10) - exact) / math.ulp(exact)
    assert bits == pytest.approx(math.log2(1 + ulps), abs=0.01)


# --- the report and its warning ------------------------------------------------------------------------

def test_an_unsafe_rule_that_changes_results_is_named_and_strict_stays_silent():
    closed = parse_jaxpr(TIMES_ZERO)
    fast, report = optimize(closed, rules="fast", accuracy=True)
    acc = report.accuracy
    assert "mul" not in str(fast)  # mul-zero fired: the program is a constant
    [out] = acc["outputs"]
    assert out["specials_changed"] > 0 and out["optimized_max_bits"] == 64.0 and out["input_max_bits"] == 0.0
    assert out["worst"]["input_gives"] == "nan" and out["worst"]["optimized_gives"].startswith("1.0")
    assert acc["changed"] and "mul-zero (unsafe)" in acc["warning"]
    assert "WARNING: " in report.summary() and "accuracy (bits of error" in report.summary()

    strict, report = optimize(closed, rules="strict", accuracy=True)
    acc = report.accuracy
    [out] = acc["outputs"]
    assert acc["warning"] == "" and not acc["changed"]
    assert out["worse"] == out["specials_changed"] == 0 and out["worst"] is None
    assert out["elements"] + out["unresolved"] == 3 * acc["samples"]
    assert "WARNING" not in report.summary()


def test_the_report_is_deterministic_and_off_unless_asked():
    closed, optimized = parse_jaxpr(NAIVE_LOG1P), parse_jaxpr(LOG1P)
    first = measure_accuracy(closed, optimized, rules="strict")
    second = measure_accuracy(closed, optimized, rules="strict")
    assert {**first, "seconds": 0} == {**second, "seconds": 0}
    [out] = first["outputs"]
    assert out["input_max_bits"] > 50 and out["optimized_max_bits"] < out["input_max_bits"]
    assert out["better"] > 0
    assert first["warning"] == ""  # no rule fired
    assert optimize(closed, rules="strict")[1].accuracy is None


def test_a_primitive_without_a_high_precision_rule_is_named():
    closed = parse_jaxpr("""{ lambda ; a:f64[4]. let b:f64[4] = cumsum[axis=0 reverse=False] a in (b,) }""")
    with pytest.raises(UnsupportedPrimitive, match="cumsum"):
        measure_accuracy(closed, closed)
    _, report = optimize(closed, rules="strict", accuracy=True)
    assert "cumsum" in report.accuracy["unsupported"]
    assert "accuracy: not measured: " in report.summary() and "cumsum" in report.summary()


# --- the command line ------------------------------------------------------------------------------------

def test_optimize_accuracy_flag_prints_the_lines_and_json_holds_them(tmp_path, capsys):
    path = tmp_path / "prog.jaxpr"
    path.write_text(TIMES_ZERO)
    assert main(["optimize", str(path), "--rules", "fast", "--accuracy"]) == 0
    err = capsys.readouterr().err
    assert "accuracy (bits of error against the exact result" in err
    assert "WARNING: " in err and "mul-zero (unsafe)" in err
    assert main(["optimize", str(path), "--rules", "fast", "--accuracy", "--json"]) == 0
    acc = json.loads(capsys.readouterr().out)["report"]["accuracy"]
    assert acc["outputs"][0]["specials_changed"] > 0 and "mul-zero" in acc["warning"]
    assert main(["optimize", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["report"]["accuracy"] is None


def test_rules_effect_has_a_verdict_column(tmp_path, capsys):
    (tmp_path / "prog.jaxpr").write_text(TIMES_ZERO)
    rules = tmp_path / "two.rules"
    rules.write_text("\n".join(line for line in PLANTED.read_text().splitlines()
                               if line.startswith(("mul-zero-real ", "mul-one "))) + "\n")
    args = ["rules", "effect", str(rules), "--programs", str(tmp_path), "--base", "strict", "--budget", "20"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-1] == "verdict"
    assert any(line.startswith("! mul-zero-real") and line.endswith("misclassified") for line in lines)
    assert any(line.startswith("  mul-one") and line.endswith("ok") for line in lines)
    assert any(line.startswith("  mul-zero-real: misclassified: x=inf") for line in lines)
    assert main([*args, "--json"]) == 0
    effects = {e["name"]: e for e in json.loads(capsys.readouterr().out)["rules"]}
    assert effects["mul-zero-real"]["verdict"] == "misclassified" and "inf" in effects["mul-zero-real"]["verdict_note"]
    assert effects["mul-one"]["verdict"] == "ok" and effects["mul-one"]["verdict_note"] == ""


def test_sums_are_exact_and_integers_wrap():
    total = parse_jaxpr("""{ lambda ; a:f64[3]. let b:f64[] = reduce_sum[axes=(0,) out_sharding=None] a in (b,) }""")
    [bits] = bits_on(total, (np.array([1e300, 1.0, -1e300]),))  # exactly 1; NumPy's sum gives 0.0
    assert bits == pytest.approx(math.log2(1 + int(np.float64(1.0).view(np.int64))))
    dot = parse_jaxpr("""{ lambda ; a:f64[2,3] b:f64[3]. let
        c:f64[2] = dot_general[dimension_numbers=(([1], [0]), ([], [])) preferred_element_type=float64] a b
      in (c,) }""")
    [bits] = bits_on(dot, (np.array([[1e200, 1.0, -1e200], [0.5, 0.25, 2.0]]), np.array([1e100, 3.0, 1e100])))
    assert bits[0] > 60 and bits[1] == 0.0  # exactly 3 where the floats cancel to 0; exact elsewhere
    doubled = parse_jaxpr("""{ lambda ; a:i32[]. let b:i32[] = mul a 2:i32[] in (b,) }""")
    assert bits_on(doubled, (np.int32(2**30 + 5),))[0] == 0.0  # wraps like the program does


def test_a_big_program_gets_fewer_samples():
    from rewrites.accuracy import FINITE_SAMPLES, MIXED_SAMPLES, SPECIAL_SAMPLES, sample_counts

    assert sample_counts(parse_jaxpr(LOG1P)) == (FINITE_SAMPLES, SPECIAL_SAMPLES, MIXED_SAMPLES)
    matmul = parse_jaxpr("""{ lambda ; a:f64[64,64] b:f64[64,64]. let
        c:f64[64,64] = dot_general[dimension_numbers=(([1], [0]), ([], [])) preferred_element_type=float64] a b
      in (c,) }""")
    assert sample_counts(matmul) == (8, 4, 2)
