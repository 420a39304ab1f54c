"""The rule verifier (`rewrites.verify`): planted wrong rules are caught with a counterexample that really
shows the difference, correct ones (and hand-written copies of built-in rules) pass, and the parts behave
as documented: instantiation, the high-precision interpreter's significance tracking, SymPy, determinism.

The hypothesis budget follows the active profile (tests/conftest.py: `ci` 100 examples, `nightly` 5000).
"""

import json
import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from eval.interpreter import eval_jaxpr
from ir import dtypes as D
from rewrites.pattern import App, Condition, Lit, Param, PatternRule, Var
from rewrites.verify import NotInstantiable, instantiate, verify_rule, verify_rules
from rewrites.verify import highprec as hp
from rewrites.verify.numeric import float_kind
from rewrites.verify.symbolic import prove
from rewrites.verify.sympy_jaxpr import to_sympy

x, y, z, p = Var("x"), Var("y"), Var("z"), Var("p")


def A(prim, *args, **params):
    return App(prim, tuple(sorted(params.items())), args)


def C(kind, *names):
    return Condition(kind, names)


def rule(name, soundness, lhs, rhs, *conditions, both_ways=False):
    return PatternRule(name, soundness, lhs, rhs, tuple(conditions), both_ways)


LOG_MUL = (A("log", A("mul", x, y)), A("add", A("log", x), A("log", y)))

# name, rule, verdict, evidenced class
PLANTED = [
    (rule("add-zero-exact", "exact", A("add", x, Lit(0.0)), x), "misclassified", "real"),
    (rule("mul-zero-real", "real", A("mul", x, Lit(0.0)), Lit(0.0)), "misclassified", "unsafe"),
    # Without its guard the rule is false over the reals: log((-1)*(-1)) = 0, log(-1) + log(-1) is not a
    # real number. A class cannot repair that (unsafe rules are true over the reals), so it is unsound.
    (rule("log-mul-no-guard", "guarded", *LOG_MUL), "unsound", "unsound"),
    # x/x = 1 wherever the left side is defined over the reals, but 0/0 and inf/inf are nan: unsafe.
    (rule("div-self-no-guard", "guarded", A("div", x, x), Lit(1.0)), "misclassified", "unsafe"),
    (rule("add-is-mul", "real", A("add", x, y), A("mul", x, y)), "unsound", "unsound"),
]

CORRECT = [
    (rule("mul-one", "exact", A("mul", x, Lit(1.0)), x), "exact"),
    (rule("neg-neg", "exact", A("neg", A("neg", x)), x), "exact"),
    (rule("add-zero", "real", A("add", x, Lit(0.0)), x), "real"),
    (rule("log-mul", "guarded", *LOG_MUL, C("positive", "x"), C("positive", "y")), "guarded"),
    # exact for floats (x/x rounds to exactly 1); guarded is the declared, weaker, class
    (rule("div-self", "guarded", A("div", x, x), Lit(1.0), C("nonzero", "x"), C("finite", "x")), "exact"),
    (rule("exp-add", "real", A("exp", A("add", x, y)), A("mul", A("exp", x), A("exp", y))), "real"),
]

# hand-written copies of built-in rules (rewrites/rules/*.py), with their declared classes
BUILTIN = [
    (rule("neg-sub", "real", A("neg", A("sub", x, y)), A("sub", y, x)), "real"),
    (rule("mul-recip", "real", A("mul", x, A("div", Lit(1.0), y)), A("div", x, y), C("float", "x")), "real"),
    (rule("abs-of-nonneg", "guarded", A("abs", x), x, C("nonneg", "x")), "guarded"),
    (rule("div-neg-one", "exact", A("div", x, Lit(-1.0)), A("neg", x)), "exact"),  # no unsigned -1 literal
    (rule("log1p-expm1", "real", A("log1p", A("expm1", x)), x, C("float", "x")), "real"),
    (rule("atanh-tanh", "real", A("atanh", A("tanh", x)), x, C("float", "x")), "real"),
    (rule("cosh-sq-sinh-sq-finite", "guarded",
          A("sub", A("integer_pow", A("cosh", x), y=2), A("integer_pow", A("sinh", x), y=2)), Lit(1.0),
          C("float", "x"), C("finite", "x")), "guarded"),
    (rule("sin-sq-cos-sq", "unsafe",
          A("add", A("integer_pow", A("sin", x), y=2), A("integer_pow", A("cos", x), y=2)), Lit(1.0),
          C("float", "x")), "unsafe"),
    (rule("atan2-neg", "exact", A("atan2", A("neg", y), x), A("neg", A("atan2", y, x)), C("float", "x")), "exact"),
    (rule("logistic-def", "real", A("div", Lit(1.0), A("add", Lit(1.0), A("exp", A("neg", x)))),
          A("logistic", x), C("float", "x")), "real"),
    (rule("le-self", "unsafe", A("le", x, x), Lit(True)), "unsafe"),
    (rule("select-same", "exact", A("select_n", p, x, x), x), "exact"),
    (rule("max-as-select-int", "exact", A("select_n", A("lt", x, y), x, y), A("max", x, y), C("integer", "x")),
     "exact"),
    (rule("add-self", "exact", A("add", x, x), A("mul", x, Lit(2.0)), C("not_complex", "x"), both_ways=True),
     "exact"),
    (rule("exp-log", "guarded", A("exp", A("log", x)), x, C("nonneg", "x")), "guarded"),
]


def _point(cex) -> list[float]:
    return [float(v) if v not in ("True", "False") else v == "True" for _, v in cex.inputs]


def _float_outputs(r, cex):
    inst = instantiate(r, D.from_name(cex.dtype), 1)
    args = [np.array([v], dtype=a.dtype.numpy) for v, a in zip(_point(cex), inst.in_avals, strict=True)]
    with np.errstate(all="ignore"):
        return [np.broadcast_to(np.asarray(eval_jaxpr(side, *args)[0]), (1,)) for side in (inst.lhs, inst.rhs)]


def _assert_shows_difference(r, cex):
    """The counterexample, evaluated independently of the verifier's own evaluation, shows its check failing."""
    assert cex is not None and cex.inputs
    if cex.check == "real":
        inst = instantiate(r, D.float64)
        symbols = [sp.Symbol(name, real=True) for name in inst.names]
        [lhs], [rhs] = to_sympy(inst.lhs, *symbols), to_sympy(inst.rhs, *symbols)
        subs = dict(zip(symbols, [sp.nsimplify(v) for v in _point(cex)], strict=True))
        left, right = sp.N(lhs.subs(subs), 30), sp.N(rhs.subs(subs), 30)
        assert left.is_real and left.is_finite, f"left side not a real number at {cex}: {left}"
        assert not (right.is_real and abs(left - right) < 1e-20), f"no real difference at {cex}: {left} = {right}"
        return
    lhs, rhs = _float_outputs(r, cex)
    if cex.check == "bits":
        assert lhs.tobytes() != rhs.tobytes() and not (np.isnan(lhs) & np.isnan(rhs)).all(), cex
    else:
        assert float_kind(lhs)[0] != float_kind(rhs)[0], cex


@pytest.mark.parametrize("r,verdict,evidenced", PLANTED, ids=[c[0].name for c in PLANTED])
def test_planted_wrong_rules_are_caught(r, verdict, evidenced):
    v = verify_rule(r)
    assert (v.verdict, v.evidenced) == (verdict, evidenced), str(v)
    _assert_shows_difference(r, v.counterexample)


def test_planted_counterexamples_are_the_textbook_ones():
    by_name = {v.name: v for v in verify_rules([r for r, _, _ in PLANTED])}
    assert dict(by_name["add-zero-exact"].counterexample.inputs) == {"x": "-0.0"}
    mul_zero = by_name["mul-zero-real"].counterexample
    assert dict(mul_zero.inputs)["x"] in ("inf", "-inf", "nan") and (mul_zero.lhs, mul_zero.rhs) == ("nan", "0.0")
    log_mul = by_name["log-mul-no-guard"].counterexample
    assert all(float(v) < 0 for _, v in log_mul.inputs), log_mul
    div_self = by_name["div-self-no-guard"].counterexample
    assert (div_self.lhs, div_self.rhs) == ("nan", "1.0") and dict(div_self.inputs)["x"] in ("0.0", "-0.0", "inf")


@pytest.mark.parametrize("r,evidenced", CORRECT + BUILTIN, ids=[c[0].name for c in CORRECT + BUILTIN])
def test_correct_rules_pass(r, evidenced):
    v = verify_rule(r)
    assert (v.verdict, v.evidenced) == ("ok", evidenced), str(v)
    assert v.counterexample is None


def test_misdeclared_builtins_are_misclassified():
    sin_cos = BUILTIN[7][0]
    wrong = [rule("neg-sub-exact", "exact", A("neg", A("sub", x, y)), A("sub", y, x)),
             rule("sin-sq-cos-sq-real", "real", sin_cos.lhs, sin_cos.rhs, C("float", "x")),
             rule("exp-log-no-guard", "guarded", A("exp", A("log", x)), x)]
    verdicts = verify_rules(wrong)
    assert [v.verdict for v in verdicts] == ["misclassified"] * 3, [str(v) for v in verdicts]
    sub = verdicts[0].counterexample
    assert sub.check == "bits" and sub.lhs in ("-0.0", "0.0") and {sub.lhs, sub.rhs} == {"-0.0", "0.0"}
    assert verdicts[1].counterexample.check == "kind"
    assert verdicts[2].evidenced == "unsafe"  # exp(log(-1)) is nan, not -1: a kind change, true where defined


def test_both_ways_rules_are_checked_right_to_left():
    # forward: sqrt(x)*sqrt(x) is undefined for x < 0 (unsafe); backward: x => sqrt(x)*sqrt(x) loses -1
    v = verify_rule(rule("sqrt-square-both", "real", A("mul", A("sqrt", x), A("sqrt", x)), x, both_ways=True))
    assert v.verdict == "unsound" and "right to left" in v.counterexample.note, str(v)


def test_integer_rules_use_integer_semantics():
    # true over the reals, false for integers: integer division truncates (3/2*2 = 2)
    v = verify_rule(rule("div-two-times-two", "real", A("mul", A("div", x, Lit(2)), Lit(2)), x))
    assert v.verdict == "unsound" and v.counterexample.dtype in ("int32", "uint32"), str(v)


def test_not_instantiable_rules_are_unknown_with_a_reason():
    with_param = rule("slice-param", "exact",
                      A("slice", A("neg", x), start_indices=(0,), limit_indices=(2,), strides=Param("q")),
                      A("neg", A("slice", x, start_indices=(0,), limit_indices=(2,), strides=Param("q"))))
    engine = rule("engine-only", "exact", A("mul", x, Lit(1.0)), x, C("engine", "eq(dtype_of(x)).to(d)"))
    verdicts = verify_rules([with_param, engine])
    assert [v.verdict for v in verdicts] == ["unknown", "unknown"]
    assert "param variables q (strides): no values to sample" in verdicts[0].reason
    assert "engine condition" in verdicts[1].reason


def test_keyword_fields_without_default_are_sampled():
    """concatenate's `dimension` has no default: carried by `extra=c` it is the variable `c_dimension`, given as a
    variable it is that variable; either is sampled at every axis, and a wrong rule is caught at some axis."""
    inner = A("concatenate", x, y, extra=Param("c"))
    v = verify_rule(rule("concat-of-one", "exact", A("concatenate", inner, extra=Param("c")), inner), budget=20)
    assert v.verdict == "ok" and v.evidenced == "exact" and "c_dimension=1" in v.details, str(v)
    k = Param("k")
    swapped = rule("concat-swap", "exact", A("concatenate", x, y, dimension=k), A("concatenate", y, x, dimension=k))
    v = verify_rule(swapped, budget=20)
    assert v.verdict == "unsound" and v.counterexample is not None, str(v)


def test_slice_rules_are_checked_at_sampled_bounds():
    """Slice bounds are sampled (the whole array, its first row, the rest), so rules over adjacent or nested
    slices are checked, and a bare-variable right side of another shape (`slice(x) => x` where the slice is not
    the whole array) is a place the rule does not apply, not an ill-typed rule."""
    s, l, s2, l2 = Param("s"), Param("l"), Param("s2"), Param("l2")
    whole = rule("slice-whole", "exact", A("slice", x, start_indices=s, limit_indices=l), x)
    v = verify_rule(whole, budget=20)
    assert v.verdict == "ok" and v.evidenced == "exact", str(v)
    # concat(x[:1], x[1:]) is x, but concat(x[1:], x[:1]) is a rotation: the unordered rule is caught
    unordered = rule("concat-any-slices", "exact",
                     A("concatenate", A("slice", x, start_indices=s, limit_indices=l),
                       A("slice", x, start_indices=s2, limit_indices=l2), dimension=0), x)
    v = verify_rule(unordered, budget=20)
    assert v.verdict == "unsound", str(v)
    # a transpose keeps a square matrix's shape: transpose(x, p) => x applies there, and is caught
    v = verify_rule(rule("transpose-any", "exact", A("transpose", x, permutation=Param("p")), x), budget=20)
    assert v.verdict == "unsound" and "3x3" in str(v.counterexample.inputs), str(v)
    # a right side of another shape at every sample is an ill-typed rule
    v = verify_rule(rule("sum-is-x", "real", A("reduce_sum", x, axes=(0,)), x), budget=20)
    assert v.verdict == "unsound" and "the right side gives" in v.reason, str(v)


def test_real_domain_follows_jax_x64():
    """log and sqrt of a negative are nan (JAX x64), not SymPy's complex values: exp(log(-1)) is nan, so a
    select-guarded rule whose other case is nan there verifies as `real`; genuinely wrong rules are still caught."""
    exp_log = A("exp", A("log", x))
    guarded = rule("exp-log-guarded", "real", exp_log, A("select_n", A("ge", x, Lit(0.0)), A("log", x), x))
    v = verify_rule(guarded)
    assert (v.verdict, v.evidenced) == ("ok", "real") and v.symbolic.startswith("unknown"), str(v)
    root = rule("sqrt-sq-guarded", "real", A("mul", A("sqrt", x), A("sqrt", x)),
                A("select_n", A("ge", x, Lit(0.0)), A("sqrt", x), x))
    assert verify_rule(root).verdict == "ok"
    wrong_case = rule("exp-log-wrong", "real", exp_log, A("select_n", A("ge", x, Lit(0.0)), A("log", x), A("neg", x)))
    v = verify_rule(wrong_case)
    assert v.verdict == "unsound" and v.counterexample is not None, str(v)
    wrong_guard = rule("exp-log-wrong-guard", "real", A("exp", A("log1p", x)),
                       A("select_n", A("ge", x, Lit(0.0)), A("log", x), A("add", x, Lit(1.0))))
    v = verify_rule(wrong_guard)  # at x = -1/2 the left side is 1/2, the right side nan
    assert v.verdict == "unsound", str(v)
    v = verify_rule(rule("exp-log-unguarded", "real", exp_log, x))  # nan becomes a number: unsafe
    assert v.verdict == "misclassified" and v.evidenced == "unsafe", str(v)


def test_ill_typed_right_side_is_unsound():
    v = verify_rule(rule("lt-to-x", "exact", A("lt", x, y), x))
    assert v.verdict == "unsound" and "right side" in v.reason, str(v)


def test_instantiate_literals_take_their_context_dtype():
    inst = instantiate(rule("mul-half", "real", A("mul", x, Lit(0.5)), Lit(0.0)), D.float32, 4)
    [eqn] = inst.lhs.jaxpr.eqns
    assert eqn.invars[1].aval.dtype == D.float32 and inst.rhs.jaxpr.outvars[0].aval.shape == (4,)
    assert str(inst.lhs).count("f32") >= 2
    with pytest.raises(NotInstantiable, match="no exact float32 value"):
        instantiate(rule("mul-tenth", "real", A("mul", x, Lit(0.1)), x), D.float32)
    pred = instantiate(rule("select-same", "exact", A("select_n", p, x, x), x), D.int32)
    assert [a.dtype for a in pred.in_avals] == [D.bool_, D.int32]


def test_symbolic_proves_disproves_and_gives_up():
    exp_add = instantiate(CORRECT[5][0], D.float64)
    assert prove(exp_add).status == "proved"
    wrong = prove(instantiate(PLANTED[4][0], D.float64))
    assert wrong.status == "disproved" and wrong.point
    rem = prove(instantiate(rule("rem-self", "real", A("rem", x, x), Lit(0.0)), D.float64))
    assert rem.status == "unknown" and "rem" in rem.reason


def test_high_precision_flags_results_rounding_decided():
    log1p_expm1 = instantiate(BUILTIN[4][0], D.float64)
    left, right, reliable = hp.evaluate(log1p_expm1, [-1.7976931348623157e308], 30, domain=True)
    assert not reliable  # expm1(-1e308) rounds to -1 at any feasible precision; log1p(-1) = -inf
    cosh_sinh = instantiate(BUILTIN[6][0], D.float64)
    assert not hp.evaluate(cosh_sinh, [1e300], 400, domain=True)[2]
    sub_self = instantiate(rule("sub-self", "unsafe", A("sub", x, x), A("mul", x, Lit(0.0))), D.float64)
    left, right, reliable = hp.evaluate(sub_self, [1e300], 30, domain=True)
    assert reliable and left == right == 0
    exp_add = instantiate(CORRECT[5][0], D.float64)
    left, right, reliable = hp.evaluate(exp_add, [1.7976931348623157e308, -2.0], 400, domain=True)
    assert reliable and hp.close(left, right, 400) and mpmath.mag(left) > 1000  # no overflow over the reals
    with np.errstate(over="ignore"):
        assert math.isinf(float(np.exp(1.7976931348623157e308 - 2.0)))  # while float64 overflows


def test_verdicts_are_deterministic_and_serializable():
    rules = [r for r, _, _ in PLANTED[:2]] + [CORRECT[5][0]]
    first, second = verify_rules(rules), verify_rules(rules)
    assert first == second
    text = json.dumps([v.to_dict() for v in first])
    assert json.loads(text)[0]["verdict"] == "misclassified" and json.loads(text)[0]["counterexample"]["inputs"]
    assert all(v.seconds > 0 for v in first)
    assert [v.numeric for v in first] == ["real", "unsafe", "real"] and "float64" in first[0].details


def T(a, perm=(1, 0)):
    return A("transpose", a, permutation=perm)


@pytest.mark.parametrize("r,verdict,evidenced", [
    (rule("transpose-twice", "exact", T(T(x)), x), "ok", "exact"),
    (rule("transpose-is-identity", "exact", T(x), x), "unsound", "unsound"),
    (rule("reduce-sum-neg", "real", A("reduce_sum", A("neg", x), axes=(0,)),
          A("neg", A("reduce_sum", x, axes=(0,)))), "ok", "real"),
    # sum([2, 0, -2]) is +0, -sum([-2, -0, 2]) is -0
    (rule("reduce-sum-neg-exact", "exact", A("reduce_sum", A("neg", x), axes=(0,)),
          A("neg", A("reduce_sum", x, axes=(0,)))), "misclassified", "real"),
], ids=["transpose-twice", "transpose-is-identity", "reduce-sum-neg", "reduce-sum-neg-exact"])
def test_array_rules_are_checked_on_arrays(r, verdict, evidenced):
    v = verify_rule(r)
    assert (v.verdict, v.evidenced) == (verdict, evidenced), str(v)
    assert "not elementwise" in v.symbolic
    if verdict != "ok":
        lhs, rhs = v.counterexample.lhs, v.counterexample.rhs
        assert lhs != rhs and v.counterexample.inputs[0][1].startswith("[")


def test_complex_dtypes_are_opt_in():
    # distrib's `neg-of-mul` has no not_complex condition: -(0j*0j) is -0-0j, (-0j)*0j is +0-0j
    neg_of_mul = rule("neg-of-mul", "exact", A("neg", A("mul", x, y)), A("mul", A("neg", x), y))
    assert verify_rule(neg_of_mul).verdict == "ok"
    v = verify_rule(neg_of_mul, complex_dtypes=True)
    assert v.verdict == "misclassified" and v.counterexample.dtype.startswith("complex"), str(v)
    assert "complex128" in v.dtypes
    guarded = rule("neg-mul", "exact", A("mul", A("neg", x), y), A("neg", A("mul", x, y)), C("not_complex", "x"))
    assert "complex128" not in verify_rule(guarded, complex_dtypes=True).dtypes


def test_param_variables_are_checked_at_sampled_values():
    q = Param("q")
    through = rule("neg-through-transpose", "exact", A("transpose", A("neg", x), permutation=q),
                   A("neg", A("transpose", x, permutation=q)))
    v = verify_rule(through)
    assert (v.verdict, v.evidenced) == ("ok", "exact"), str(v)
    assert "q=(1, 0)" in v.details and ("q=(2, 0, 1)" in v.details or "q=(1, 2, 0)" in v.details)
    # the built-in reduce-max-neg has no float condition: max(-x) = -min(x) fails where -INT_MIN wraps
    max_neg = rule("reduce-max-neg", "real", A("reduce_max", A("neg", x), axes=q),
                   A("neg", A("reduce_min", x, axes=q)))
    v = verify_rule(max_neg)
    assert v.verdict == "unsound" and v.counterexample.dtype in ("int32", "uint32"), str(v)
    assert dict(v.counterexample.inputs)["q"].startswith("(")
    dn = rule("dot-param", "real", A("dot_general", x, y, dimension_numbers=Param("dn")), x)
    v = verify_rule(dn)  # dimension numbers are sampled (x·y, x·yᵀ, batched); x·yᵀ keeps a square matrix's shape
    assert v.verdict == "unsound" and "shape=3x3" in str(v.counterexample), str(v)
    starts = rule("slice-param", "real", A("slice", x, start_indices=Param("s"), limit_indices=Param("l")), x)
    assert verify_rule(starts).verdict == "ok"  # checked where the slice is the whole array


def test_rules_with_engine_conditions_are_checked_on_what_the_engine_builds():
    """A rule whose condition only the engine evaluates (here: the operand's rank) is run alone on instances
    of its left side; the right sides it builds are judged like any other (`rewrites.verify.witness`)."""
    from egglog import eq, i64

    from rewrites.rule import EXACT, RuleBook
    from rewrites.ruledump import dump_rule
    from rewrites.rules.common import T, shape_of
    from rewrites.rules.common import x as ex

    book = RuleBook("witness-test")
    vector = eq(shape_of(ex).length()).to(i64(1))
    rules = [book.rw("neg-neg-vector", EXACT, T.neg(T.neg(ex)), ex, vector, math="-(-x) -> x"),
             book.rw("sign-drop-vector", EXACT, T.sign(T.neg(ex)), T.sign(ex), vector,
                     math="sign(-x) -> sign x (false)")]
    patterns = [p for r in rules for p in dump_rule(r)]
    assert all(any(c.kind == "engine" for c in p.conditions) for p in patterns)
    verdicts = {v.name: v for v in verify_rules(patterns, budget=50, compiled={r.name: r for r in rules})}
    assert verdicts["neg-neg-vector"].verdict == "ok", str(verdicts["neg-neg-vector"])
    assert "built by the engine" in verdicts["neg-neg-vector"].details
    assert "shape=3" in verdicts["neg-neg-vector"].details  # the rank-1 instance is the one it fired on
    wrong = verdicts["sign-drop-vector"]
    assert wrong.verdict == "unsound" and wrong.counterexample is not None, str(wrong)
