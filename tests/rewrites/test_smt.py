"""Exact rules proved or refuted by z3 (`rewrites.verify.smt`): true rules are proved at every dtype they
apply to, a false one is refuted with a counterexample NumPy confirms, integers wrap as bit-vectors,
transcendental functions are reported as not modelled, the time limit holds, and z3's model of each
primitive computes what eqjax's evaluator computes (the guard against a false proof).

z3 (`z3-solver`) is a core dependency, so nothing here is skipped.
"""

import itertools
import json
import time

import numpy as np
import pytest

from eval.interpreter import eval_jaxpr
from ir import dtypes as D
from rewrites.ruletext import parse_rules
from rewrites.verify import smt_jaxpr, verify_rule
from rewrites.verify.instantiate import NotInstantiable, applicable_instances, instantiate
from rewrites.verify.numeric import bits_differ, special_values
from rewrites.verify.smt import SmtVerdict, prove_rule
from rewrites.verify.smt_jaxpr import constant, to_z3
from tests.profile import NIGHTLY
from transforms.cli import main


def one_rule(text: str):
    [r] = parse_rules(text)
    return r


def applicable_dtypes(rule) -> list[str]:
    instances, _ = applicable_instances(rule)
    return [i.dtype.name for i in instances]


def differs_in_numpy(rule, cex) -> bool:
    """Evaluate both sides at the counterexample's inputs with eqjax's evaluator, independently of smt.py."""
    inst = instantiate(rule, D.from_name(cex.dtype), 1)
    given = dict(cex.inputs)
    arrays = []
    for name, aval in zip(inst.names, inst.in_avals, strict=True):
        text = given[name]
        value = text == "True" if aval.dtype.kind == "b" else float(text) if aval.dtype.kind == "f" else int(text)
        arrays.append(np.array([value], dtype=aval.dtype.numpy))
    with np.errstate(all="ignore"):
        lhs, rhs = (np.ascontiguousarray(np.asarray(eval_jaxpr(side, *arrays)[0]).reshape(1))
                    for side in (inst.lhs, inst.rhs))
    return bool(bits_differ(lhs, rhs)[0])


TRUE_RULES = [
    "mul-one exact mul(x, 1.0) => x",
    "neg-neg exact neg(neg(x)) => x",
    "add-comm exact add(x, y) => add(y, x)",
    "max-comm exact max(x, y) => max(y, x)  # nan-propagating, -0 < +0: commutes",
    "clamp-as-minmax exact clamp(lo, x, hi) => min(max(x, lo), hi)",
    "abs-neg exact abs(neg(x)) => abs(x)",
    "not-eq exact not(eq(x, y)) => ne(x, y)",
    "sub-neg exact sub(x, neg(y)) => add(x, y)",
    "sign-neg exact sign(neg(x)) => neg(sign(x)) if float(x)",
]


@pytest.mark.parametrize("text", TRUE_RULES, ids=lambda t: t.split()[0])
def test_true_exact_rules_are_proved_at_every_dtype(text):
    rule = one_rule(text)
    verdict = prove_rule(rule, timeout=60)
    assert verdict.status == "proved", str(verdict)
    assert [c.dtype for c in verdict.checks] == applicable_dtypes(rule)
    assert all(c.status == "proved" and c.counterexample is None for c in verdict.checks)


def test_add_zero_is_refuted_at_negative_zero_and_numpy_confirms():
    rule = one_rule("add-zero exact add(x, 0.0) => x")
    verdict = prove_rule(rule, timeout=60)
    assert verdict.status == "refuted"
    by_dtype = {c.dtype: c for c in verdict.checks}
    for dtype in ("float64", "float32"):
        check = by_dtype[dtype]
        assert check.status == "refuted"
        [(name, value)] = check.counterexample.inputs
        assert name == "x" and float(value) == 0.0 and np.signbit(float(value))  # only -0.0 + 0.0 is not -0.0
        assert differs_in_numpy(rule, check.counterexample)
    for dtype in ("int32", "uint32"):  # x + 0 is x on integers
        assert by_dtype[dtype].status == "proved"


def test_integers_wrap_as_bit_vectors():
    # (2x)/2 = x over the integers, but 2x wraps: x = 2^30 in int32 gives -2^30
    halving = one_rule("double-halve exact div(mul(x, 2), 2) => x if integer(x)")
    verdict = prove_rule(halving, timeout=60)
    assert {c.dtype: c.status for c in verdict.checks} == {"int32": "refuted", "uint32": "refuted"}
    for check in verdict.checks:
        assert differs_in_numpy(halving, check.counterexample)
    # (x + y) - y = x holds modulo 2^n, overflow or not
    wrapping = one_rule("add-sub exact sub(add(x, y), y) => x if integer(x)")
    assert prove_rule(wrapping, timeout=60).status == "proved"
    # INT_MIN / -1 is INT_MIN in XLA (and eval), the same as -INT_MIN: the rule holds with wrap-around
    assert prove_rule(one_rule("div-neg-one exact div(x, -1) => neg(x) if integer(x)"), timeout=60).status == "proved"


def test_a_transcendental_rule_is_not_modelled_and_names_the_primitive():
    verdict = prove_rule(one_rule("sin-odd exact sin(neg(x)) => neg(sin(x)) if float(x)"), timeout=60)
    assert verdict.status == "not modelled"
    assert "sin" in verdict.reason and "transcendental" in verdict.reason
    assert {c.status for c in verdict.checks} == {"not modelled"}


def test_a_rule_with_param_variables_is_not_modelled_and_says_why():
    verdict = prove_rule(one_rule("t exact transpose[permutation=p](neg(x)) => neg(transpose[permutation=p](x))"))
    assert verdict.status == "not modelled" and "param variables p" in verdict.reason


def builtin_forms(name: str):
    from rewrites.ruledump import dump_rule
    from rewrites.rulesets import all_rules

    return next(dump_rule(r) for r in all_rules() if r.name == name)


def test_an_engine_conditioned_rule_is_proved_on_the_engines_right_sides():
    [form] = builtin_forms("max-as-select-int")  # max(x, y) -> select(x < y, x, y) where the dtype is an integer
    verdict = prove_rule(form, timeout=60)
    assert verdict.status == "proved" and "engine" in verdict.reason
    assert {c.dtype for c in verdict.checks} <= {"int32", "uint32", "int64"}
    [fold] = builtin_forms("div-pow2")  # the engine computes a literal: a proof would cover one value
    verdict = prove_rule(fold, timeout=60)
    assert verdict.status == "not modelled" and "literal variables" in verdict.reason


def test_the_time_limit_is_honoured():
    rule = one_rule("neg-div-neg exact div(neg(x), neg(y)) => div(x, y) if float(x)")
    start = time.perf_counter()
    verdict = prove_rule(rule, timeout=0.05)
    elapsed = time.perf_counter() - start
    f64 = next(c for c in verdict.checks if c.dtype == "float64")
    assert f64.status == "timeout" and "0.05 s" in f64.reason
    assert f64.seconds < 3.0  # the limit, plus building the terms and z3's reaction time on a busy machine
    assert elapsed < 10.0


def test_a_refutation_sampling_misses_makes_an_exact_rule_misclassified():
    # the two sides differ only at x = 123456789, which neither the special values nor the samples hit
    rule = one_rule("needle exact select_n(eq(x, 123456789), x, add(x, 1)) => x if integer(x)")
    plain = verify_rule(rule, budget=20)
    assert plain.verdict == "ok" and plain.smt is None
    proved = verify_rule(rule, budget=20, prove=60)
    assert proved.verdict == "misclassified" and proved.smt.status == "refuted"
    assert dict(proved.counterexample.inputs)["x"] == "123456789"
    assert differs_in_numpy(rule, proved.counterexample)
    assert proved.to_dict()["smt"]["status"] == "refuted"


def test_non_exact_rules_get_no_smt_check():
    verdict = verify_rule(one_rule("add-zero real add(x, 0.0) => x"), budget=20, prove=60)
    assert verdict.verdict == "ok" and verdict.smt is None


def test_cli_prove_reports_z3_and_misclassifies_a_refuted_exact_rule(tmp_path, capsys):
    rules = tmp_path / "t.rules"
    rules.write_text("add-zero exact add(x, 0.0) => x\nmul-one exact mul(x, 1.0) => x\n")
    status = main(["rules", "verify", "--load", str(rules), "--budget", "20", "--prove", "--prove-timeout", "60",
                   "--json"])
    out = {v["name"]: v for v in json.loads(capsys.readouterr().out)}
    assert status == 1
    assert out["add-zero"]["verdict"] == "misclassified" and out["add-zero"]["smt"]["status"] == "refuted"
    assert out["mul-one"]["verdict"] == "ok" and out["mul-one"]["smt"]["status"] == "proved"
    assert set(out["mul-one"]["smt"]["dtypes"]) == set(applicable_dtypes(one_rule("m exact mul(x, 1.0) => x")))


def test_cli_without_z3_names_the_package(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(smt_jaxpr, "z3", None)
    rules = tmp_path / "t.rules"
    rules.write_text("mul-one exact mul(x, 1.0) => x\n")
    status = main(["rules", "verify", "--load", str(rules), "--prove"])
    err = capsys.readouterr().err
    assert status == 2 and "z3-solver" in err and "SolverUnavailable" in err


def test_merged_families_take_the_worst_form():
    from rewrites.verify.smt import merge_smt

    proved = prove_rule(one_rule("f exact neg(neg(x)) => x"))
    refuted = prove_rule(one_rule("f exact add(x, 0.0) => x"))
    merged = merge_smt([proved, refuted])
    assert isinstance(merged, SmtVerdict) and merged.status == "refuted"
    assert {c.dtype: c.status for c in merged.checks}["float64"] == "refuted"
    assert "1 of 2 forms" in merged.reason


# --- z3's model of each primitive against eqjax's evaluator -----------------------------------------

UNARY = ["neg", "abs", "sqrt", "square", "floor", "ceil", "round", "round[rounding_method=1]", "sign", "not",
         "is_finite", "integer_pow[y=3]", "integer_pow[y=-2]", "integer_pow[y=0]",
         *(f"convert_element_type[new_dtype={d}]" for d in ("float32", "float64", "int32", "uint32", "bool",
                                                             "int8", "int64"))]
BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "and", "or", "xor", "eq", "ne", "lt", "le", "gt", "ge",
          "shift_left", "shift_right_logical", "shift_right_arithmetic", "select_n"]
DTYPES = [D.float64, D.float32, D.int32, D.uint32, D.bool_]


def _values(dtype: D.DType, arity: int) -> np.ndarray:
    values = special_values(dtype)
    if dtype.kind in "iu":
        values = np.concatenate([values, np.array([31, 32, 33, 7], dtype=dtype.numpy)])  # shift amounts
    if not NIGHTLY and dtype.kind == "f" and arity > 1:
        values = values[::2]  # ci: every other special value (0.0, 1.0, 2.0, 0.5, inf, nan, ...)
    if not NIGHTLY and arity > 2:
        values = values[::2]
    return values


def _z3_value(term, dtype: D.DType) -> np.ndarray:
    z3 = smt_jaxpr.z3
    value = z3.simplify(term)
    if dtype.kind == "f":
        if value.isNaN():
            return np.array(np.nan, dtype=dtype.numpy)
        word = z3.simplify(z3.fpToIEEEBV(value)).as_long()
        return np.array(word, dtype=f"u{dtype.itemsize}").view(dtype.numpy)
    if dtype.kind in "iu":
        return np.array(value.as_long(), dtype=f"u{dtype.itemsize}").view(dtype.numpy)
    return np.array(smt_jaxpr.z3.is_true(value))


@pytest.mark.parametrize("prim", UNARY + BINARY + ["clamp"])
def test_z3_model_of_each_primitive_agrees_with_eval(prim):
    arity = 1 if prim in UNARY else 3 if prim == "clamp" else 2
    args = ", ".join(["x", "y", "z"][:arity])
    checked = 0
    for dtype in DTYPES:
        if prim == "select_n" and dtype.kind == "b":
            continue
        lhs = "select_n(p, x, y)" if prim == "select_n" else f"{prim}({args})"
        try:
            inst = instantiate(one_rule(f"t exact {lhs} => {lhs}"), dtype)
        except NotInstantiable:
            continue  # the primitive does not take this dtype
        if prim == "rem" and dtype.kind == "f":
            with pytest.raises(smt_jaxpr.NotModelled, match="fmod"):
                to_z3(inst.lhs, *[constant(0, a.dtype) for a in inst.in_avals])
            continue
        avals = inst.in_avals
        points = itertools.product(*[_values(a.dtype, len(avals)) for a in avals])
        for point in points:
            arrays = [np.array(v, dtype=a.dtype.numpy) for v, a in zip(point, avals, strict=True)]
            [term] = to_z3(inst.lhs, *[constant(a, av.dtype) for a, av in zip(arrays, avals, strict=True)])
            with np.errstate(all="ignore"):
                [want] = eval_jaxpr(inst.lhs, *arrays)
            want = np.ascontiguousarray(np.asarray(want).reshape(1))
            got = np.ascontiguousarray(_z3_value(term, D.from_numpy(want.dtype)).reshape(1))
            assert not bits_differ(want, got)[0], f"{prim} {dtype.name} at {point}: eval {want[0]}, z3 {got[0]}"
            checked += 1
    assert checked > 0


# --- a wrong z3 model is caught, never reported as a refutation or a proof ---------------------------

def test_a_counterexample_numpy_does_not_confirm_is_unconfirmed(monkeypatch):
    monkeypatch.setitem(smt_jaxpr.FLOAT_OPS, "abs", lambda a, dt, out, p: a[0])  # a wrong model: abs(x) = x
    rule = one_rule("abs-neg exact abs(neg(x)) => abs(x)")
    verdict = verify_rule(rule, budget=20, prove=60)
    assert verdict.smt.status == "unconfirmed"
    assert "NOT confirmed" in verdict.smt.counterexample.note
    assert verdict.verdict == "ok"  # the evidence stands: an unconfirmed counterexample refutes nothing


def test_a_proof_numpy_contradicts_is_no_proof(monkeypatch):
    monkeypatch.setitem(smt_jaxpr.FLOAT_OPS, "add", lambda a, dt, out, p: a[0])  # a wrong model: x + y = x
    verdict = verify_rule(one_rule("add-zero exact add(x, 0.0) => x"), budget=20, prove=60)
    assert verdict.verdict == "misclassified" and verdict.counterexample.check == "bits"
    contradicted = next(c for c in verdict.smt.checks if c.dtype == verdict.counterexample.dtype)
    assert contradicted.status == "unknown" and "differs from eval" in contradicted.reason
    assert verdict.smt.status != "proved"


def test_value_conditions_are_assumed_as_the_engine_means_them():
    # x/x = 1 holds bit for bit for finite nonzero x (in float32 quickly; float64 division is slow)
    rule = one_rule("div-self exact div(x, x) => 1.0 if x != 0, finite(x)")
    [f32] = [i for i in applicable_instances(rule)[0] if i.dtype == D.float32]
    from rewrites.verify.smt import prove_instance

    assert prove_instance(f32, timeout=60).status == "proved"
    # without `finite`, x = inf (inf/inf) or nan (`x > 0` lets nan through, as the engine's sign facts do)
    unguarded = one_rule("div-self exact div(x, x) => 1.0 if x > 0")
    [f32] = [i for i in applicable_instances(unguarded)[0] if i.dtype == D.float32]
    check = prove_instance(f32, timeout=60)
    assert check.status == "refuted" and not np.isfinite(float(dict(check.counterexample.inputs)["x"]))
    assert differs_in_numpy(unguarded, check.counterexample)
