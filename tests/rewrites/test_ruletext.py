"""The one-line rule format: parsing, printing, errors, compiling to egglog, and dumping the built-in rules.

Loaded rules are checked by what they do: they fire and prove equations (`prove_equal`), and the programs
`optimize` makes with them evaluate like the originals. Every built-in rule that dumps to reloadable text
is read back, compiled, and must prove what the original proves on the rows of the rule test modules.
"""

import importlib
import math
import os

import numpy as np
import pytest

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir import lax
from ir.core import ShapedArray
from ir.dtypes import int32
from ir.tracing import make_jaxpr
from rewrites.engine import optimize
from rewrites.pattern import App, Condition, Lit, Param, PatternRule, Var
from rewrites.prove import prove_equal, prove_jaxprs_equal
from rewrites.rule import RuleError, check_rules
from rewrites.rulecompile import compile_rules, load_rules, rules_from_text
from rewrites.ruledump import dump_builtin_rules, dump_rule
from rewrites.rulesets import all_rules, rules_in_set
from rewrites.ruletext import RuleSyntaxError, format_rule, parse_rules, reloadable
from tests.profile import NIGHTLY
from tests.rewrites.helpers import F64, F64_2D
from tests.rewrites.rule_checks import pos

EXAMPLE = "tests/rewrites/data/example.rules"
I32 = ShapedArray((3,), int32)


def parse_one(line: str) -> PatternRule:
    [r] = parse_rules(line)
    return r


# --- parsing ------------------------------------------------------------------------------------------


def test_the_issue_examples():
    text = """
# name            class    rule
mul-one          exact    mul(x, 1.0) => x
log-of-product   guarded  log(mul(x, y)) => add(log(x), log(y))   if x > 0, y > 0
transpose-twice  exact    transpose[permutation=(1, 0)](transpose[permutation=(1, 0)](x)) => x
"""
    x, y = Var("x"), Var("y")
    swap = (("permutation", (1, 0)),)
    assert parse_rules(text) == [
        PatternRule("mul-one", "exact", App("mul", (), (x, Lit(1.0))), x),
        PatternRule("log-of-product", "guarded", App("log", (), (App("mul", (), (x, y)),)),
                    App("add", (), (App("log", (), (x,)), App("log", (), (y,)))),
                    (Condition("positive", ("x",)), Condition("positive", ("y",)))),
        PatternRule("transpose-twice", "exact", App("transpose", swap, (App("transpose", swap, (x,)),)), x),
    ]
    assert parse_rules(text)[1].origin.line == 4


@pytest.mark.parametrize("text,value", [
    ("1", 1), ("-2", -2), ("1.0", 1.0), ("1e-3", 1e-3), ("2.5E+2", 250.0), ("inf", math.inf), ("-inf", -math.inf),
    ("-0.0", -0.0), ("True", True), ("False", False),
])
def test_literals(text, value):
    lit = parse_one(f"r exact mul(x, {text}) => x").lhs.args[1]
    assert lit == Lit(value) and type(lit.value) is type(value)
    assert math.copysign(1, lit.value) == math.copysign(1, value)


def test_nan_literal_reads_back_equal():
    r = parse_one("r unsafe mul(x, nan) => nan")
    assert math.isnan(r.rhs.value) and parse_one(format_rule(r)) == r


@pytest.mark.parametrize("text,kind,args", [
    ("x > 0", "positive", ("x",)), ("x >= 0", "nonneg", ("x",)), ("x != 0", "nonzero", ("x",)),
    ("x >= 0.0", "nonneg", ("x",)), ("-1 <= x <= 1", "within_one", ("x",)), ("abs(x) <= 1", "within_one", ("x",)),
    ("x >= -1", "above_minus_one", ("x",)), ("finite(x)", "finite", ("x",)), ("float(x)", "float", ("x",)),
    ("integer(x)", "integer", ("x",)), ("real(x)", "not_complex", ("x",)),
    ("shape(x) == shape(y)", "shape_eq", ("x", "y")),
])
def test_conditions(text, kind, args):
    assert parse_one(f"r guarded add(x, y) => x if {text}").conditions == (Condition(kind, args),)


def test_params_as_jax_prints_them():
    r = parse_one("r real dot_general[dimension_numbers=(([1], [0]), ([], [])) preferred_element_type=float64]"
                  "(x, y) => x  # math")
    assert r.lhs.param("dimension_numbers") == (([1], [0]), ([], []))
    assert r.lhs.param("preferred_element_type").name == "float64"
    assert r.math == "math"


def test_param_variables_and_extra():
    r = parse_one("r exact neg[extra=s](transpose[permutation=p extra=s2](x)) => "
                  "transpose[permutation=p extra=s2](neg[extra=s](x))")
    assert r.lhs.params == (("extra", Param("s")),)
    assert r.lhs.args[0].params == (("extra", Param("s2")), ("permutation", Param("p")))


def test_both_ways_and_family():
    rules = parse_rules("a exact add(x, x) <=> mul(x, 2.0) if real(x)\n"
                        "b exact sin(neg(x)) => neg(sin(x))\n# comment between\nb exact tan(neg(x)) => neg(tan(x))\n")
    assert rules[0].both_ways and [r.name for r in rules] == ["a", "b", "b"]


def test_example_file_round_trips():
    rules = parse_rules(open(EXAMPLE).read(), EXAMPLE)
    assert len(rules) == 12
    for r in rules:
        assert parse_one(format_rule(r)) == r


# --- errors: file, line, column, what was expected ------------------------------------------------------

ERRORS = [
    # (text, line, column, words of the message)
    ("Mul-one exact mul(x, 1.0) => x", 1, 1, "bad rule name"),
    ("mul_one exact mul(x, 1.0) => x", 1, 1, "bad rule name"),
    ("mul-one exacto mul(x, 1.0) => x", 1, 9, "unknown class"),
    ("mul-one exact mull(x, 1.0) => x", 1, 15, "unknown primitive 'mull'; did you mean mul"),
    ("mul-one exact mul(x) => x", 1, 18, "mul takes 2 operands, got 1"),
    ("r exact exp(x, y) => x", 1, 12, "exp takes 1 operand, got 2"),
    ("r exact transpose(x) => x", 1, 18, "transpose needs param 'permutation'"),
    ("r exact transpose[permutation=(1, 0](x) => x", 1, 18, "unterminated '['"),
    ("r exact transpose[permutation=(1, 0) permutation=(0, 1)](x) => x", 1, 38, "given twice"),
    ("r exact cumsum[axis=0 reverse=b](x) => x", 1, 15, "param 'reverse' of cumsum cannot be a variable"),
    ("r exact mul(x, 1.0) => y", 1, 24, "variable 'y' is not bound by the left-hand side"),
    ("r exact mul(x, y) <=> neg(x)", 1, 16, "variable 'y' is not bound by the right-hand side"),
    ("r exact mul(x, 1.0) => x if x > 1", 1, 29, "unknown condition"),
    ("r exact mul(x, 1.0) => x if z > 0", 1, 29, "condition on 'z', which the left-hand side does not bind"),
    ("r exact mul(x, 1.0) => x if", 1, 28, "missing condition"),
    ("r exact mul(x, 1.0) x", 1, 21, "expected '=>' or '<=>'"),
    ("r exact mul(x, 1.0) => neg(-x)", 1, 28, "unexpected character '-'"),
    ("r exact", 1, 8, "incomplete rule"),
    ("r exact mul(x, __t) => x", 1, 16, "reserved"),
    ("r exact a(x) => x\n\nr exact neg(x) => x", 1, 9, "unknown primitive"),
    ("r exact neg(x) => x\ns exact neg(x) => x\nr exact abs(x) => x", 3, 1, "already defined at line 1"),
    ("r exact neg(x) => x\nr real abs(x) => x", 2, 3, "continues with class 'real'"),
    ("@categry x", 1, 1, "unknown directive"),
    ("r exact transpose[permutation=p](x) => integer_pow[y=p](x)", 1, 54, "holds an int here and ints"),
]


@pytest.mark.parametrize("text,line,column,words", ERRORS, ids=[e[3] for e in ERRORS])
def test_errors_name_file_line_column(text, line, column, words):
    with pytest.raises(RuleSyntaxError) as info:
        parse_rules(text, "my.rules")
    err = info.value
    assert words in str(err)
    assert (err.file, err.line, err.column) == ("my.rules", line, column), str(err)
    assert str(err).startswith(f"my.rules:{line}:{column}: ")


@pytest.mark.parametrize("text,words", [
    ("r exact mul(x, -0.0) => x", "-0.0 cannot be held"),
    ("r exact mul(x, nan) => x", "never matches"),
    ("r exact x => mul(x, 1.0)", "bare variable"),
    ("r exact neg(x) <=> x", "both sides"),
    ("r exact mul(x, 9007199254740993) => x", "not exactly a float64"),
])
def test_rules_that_parse_but_cannot_be_compiled(text, words):
    rules = parse_rules(text, "my.rules")
    with pytest.raises(RuleSyntaxError, match=words) as info:
        compile_rules(rules)
    assert (info.value.file, info.value.line) == ("my.rules", 1)


def test_engine_condition_cannot_be_compiled():
    r = PatternRule("r", "exact", App("neg", (), (Var("x"),)), Var("x"), (Condition("engine", ("x is odd",)),))
    with pytest.raises(RuleError, match="only the engine"):
        compile_rules([r])


# --- compiled rules in the engine -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example():
    return {r.name: r for r in load_rules(EXAMPLE)}


def test_load_rules_compiles_and_checks(example):
    assert len(example) == 11 and check_rules(example.values())
    assert {r.category for r in example.values()} == {"example"}
    assert len(example["neg-of-odd"].egg) == 2
    assert len(example["le-self-integer"].egg) == 8  # one per integer dtype
    assert example["mul-by-one"].math == "x*1 -> x"
    assert example["transpose-twice"].math.startswith("transpose[permutation=(1, 0)]")
    assert {r.category for r in load_rules(EXAMPLE, category="mine")} == {"mine"}
    assert rules_from_text("r exact neg(neg(x)) => x")[0].category == "user"


PROVES = [
    # (rule, f, g, avals)
    ("mul-by-one", lambda x: x * 1.0, lambda x: x, (F64,)),
    ("log-of-product", lambda x, y: jnp.log(pos(x) * pos(y)), lambda x, y: jnp.log(pos(x)) + jnp.log(pos(y)),
     (F64, F64)),
    ("transpose-twice", lambda x: x.T.T, lambda x: x, (F64_2D,)),
    ("times-zero", lambda x: x * 0.0, jnp.zeros_like, (F64_2D,)),
    ("double-is-add", lambda x: x + x, lambda x: x * 2.0, (F64,)),
    ("double-is-add", lambda x: x * 2.0, lambda x: x + x, (F64,)),
    ("exp-of-log", lambda x: jnp.exp(jnp.log(jnp.exp(x))), jnp.exp, (F64,)),
    ("sin-of-asin", lambda x: jnp.sin(jnp.arcsin(jnp.tanh(x))), jnp.tanh, (F64,)),
    ("neg-through-transpose", lambda x: (-x).T, lambda x: -(x.T), (F64_2D,)),
    ("reverse-cumsum", lambda x: lax.rev(jnp.cumsum(lax.rev(x, (0,)), axis=0), (0,)),
     lambda x: lax.rev(jnp.cumsum(lax.rev(x, (0,)), axis=0), (0,)), (F64,)),
    ("le-self-integer", lambda x: x <= x, lambda x: jnp.ones_like(x, dtype=bool), (I32,)),
    ("neg-of-odd", lambda x: jnp.tanh(-x), lambda x: -jnp.tanh(x), (F64,)),
]


@pytest.mark.parametrize("name,f,g,avals", PROVES, ids=[p[0] for p in PROVES])
def test_loaded_rule_fires_and_proves(example, name, f, g, avals):
    proof = prove_equal(f, g, *avals, rules=[example[name]])
    assert proof.equal and proof.report.rule_matches[name] > 0, proof.report.summary()


@pytest.mark.parametrize("name,f,g,avals", [
    ("log-of-product", lambda x, y: jnp.log(x * y), lambda x, y: jnp.log(x) + jnp.log(y), (F64, F64)),
    ("exp-of-log", lambda x: jnp.exp(jnp.log(x)), lambda x: x, (F64,)),
    ("le-self-integer", lambda x: x <= x, lambda x: jnp.ones_like(x, dtype=bool), (F64,)),
    ("sin-of-asin", lambda x: jnp.sin(jnp.arcsin(x)), lambda x: x, (F64,)),
])
def test_loaded_rule_keeps_its_guard(example, name, f, g, avals):
    assert not prove_equal(f, g, *avals, rules=[example[name]]).equal


def optimized(f, avals, rules):
    closed = make_jaxpr(f)(*avals)
    out, report = optimize(closed, rules=rules)
    rng = np.random.default_rng(0)
    args = [rng.uniform(0.5, 2.0, a.shape) for a in avals]
    for a, b in zip(eval_jaxpr(closed, *args), eval_jaxpr(out, *args), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    return out, report


def test_rule_built_node_with_non_default_params_decodes(example):
    """The program holds only `reverse=False` cumsums; the rule builds a `reverse=True` one (its `reverse`
    field), which decodes with the default of every param the rule does not give."""
    out, report = optimized(lambda x: lax.rev(jnp.cumsum(lax.rev(x, (0,)), axis=0), (0,)), (F64,),
                            [example["reverse-cumsum"]])
    [eqn] = out.jaxpr.eqns
    assert eqn.primitive == "cumsum" and eqn.params == {"axis": 0, "reverse": True}


def test_literal_right_side_takes_the_left_side_shape(example):
    out, _ = optimized(lambda x: x * 0.0 + 1.0, (F64_2D,), [example["times-zero"]])
    assert "mul" not in {e.primitive for e in out.jaxpr.eqns}
    assert out.out_avals[0].shape == (2, 3)


def test_optimize_with_loaded_and_builtin_rules(example):
    rules = rules_in_set("default") + [example["transpose-twice"]]
    out, report = optimized(lambda x: (x.T.T * 1.0) + 0.0, (F64_2D,), rules)
    assert out.jaxpr.eqns == [] and report.rule_matches["transpose-twice"] > 0


def test_extra_carries_the_params_of_one_primitive_only():
    [rule] = parse_rules("carry exact reduce_sum[axes=(0,) extra=s](x) => reduce_max[axes=(0,) extra=s](x)")
    compile_rules([rule])  # the same keyword fields (out_sharding)
    [rule] = parse_rules("carry exact cumsum[axis=0 extra=s](x) => reduce_sum[axes=(0,) extra=s](x)")
    with pytest.raises(RuleSyntaxError, match="extra=s binds the params of cumsum, so it cannot give those of"):
        compile_rules([rule])


def test_a_keyword_field_without_default_is_a_variable_or_a_value():
    """concatenate's `dimension` and stack's `axis` have no default: a rule gives them as a variable (matched on
    one side, built on the other) or a value; both compile, fire, dump back and verify (the verifier samples
    the variable); leaving one out is refused, naming it."""
    by_variable, by_value = rules_from_text(
        "concat-neg exact neg(concatenate[dimension=k](x, y)) => concatenate[dimension=k](neg(x), neg(y))\n"
        "stack-sum real reduce_sum[axes=(0,)](stack[axis=0](x, y)) => add(x, y)")
    proof = prove_equal(lambda a, b: -jnp.concatenate([a, b], axis=1),
                        lambda a, b: jnp.concatenate([-a, -b], axis=1), F64_2D, F64_2D, rules=[by_variable])
    assert proof.equal and proof.report.rule_matches["concat-neg"] > 0, proof.report.summary()
    proof = prove_equal(lambda a, b: jnp.sum(jnp.stack([a, b]), axis=0), lambda a, b: a + b, F64, F64,
                        rules=[by_value])
    assert proof.equal, proof.report.summary()
    for r in (by_variable, by_value):
        [p] = dump_rule(r)
        assert reloadable(p) and parse_one(format_rule(p)) == p
    assert "concatenate[dimension=k](x, y)" in format_rule(dump_rule(by_variable)[0])
    assert "stack[axis=0](x, y)" in format_rule(dump_rule(by_value)[0])
    from rewrites.verify import verify_rule

    v = verify_rule(dump_rule(by_variable)[0], budget=20)
    assert v.verdict == "ok" and v.evidenced == "exact" and "k=0" in v.details and "k=1" in v.details, str(v)
    with pytest.raises(RuleSyntaxError, match="concatenate needs param 'dimension'"):
        compile_rules(parse_rules("r exact neg(concatenate(x, y)) => x"))


# --- dumping the built-in rules ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dumped():
    return {r.name: dump_rule(r) for r in all_rules()}


def test_every_builtin_rule_dumps(dumped):
    assert len(dumped) == len(all_rules()) == 306
    assert sum(len(ps) for ps in dumped.values()) == sum(len(r.egg) for r in all_rules())
    for r in all_rules():
        for p in dumped[r.name]:
            assert (p.name, p.soundness, p.math) == (r.name, r.soundness, r.math)
            assert p.origin.file == f"rewrites/rules/{r.category}.py"


def test_dumped_examples(dumped):
    def line(name, i=0):
        return format_rule(dumped[name][i], 0)

    assert line("mul-one") == "mul-one exact    mul(x, 1.0) => x  # x*1 -> x"
    assert line("div-self").startswith("div-self guarded  div(x, x) => 1.0  if x != 0, finite(x)")
    assert line("lt-self").startswith("lt-self exact    lt(x, x) => False")
    assert line("mul-div-cancel").startswith("mul-div-cancel guarded  div(mul(x, y), y) => x  if float(x), y != 0")
    assert line("transpose-unary").startswith(
        "transpose-unary exact    neg(transpose[permutation=p](x)) => transpose[permutation=p](neg(x))")
    assert line("reduce-sum-neg").startswith(
        "reduce-sum-neg real     reduce_sum[axes=p extra=s](neg(x)) => neg(reduce_sum[axes=p extra=s](x))")
    assert line("real-complex").startswith("real-complex exact    real(complex(x, y)) => x  if shape(x) == shape(y)")
    assert line("transpose-identity") == (
        "# not reloadable (only the engine evaluates: eq(p).to(p.length().range())): transpose-identity exact    "
        "transpose[permutation=p](x) => x  # transpose(x, iota) -> x")


def test_engine_rules_print_as_comments(dumped):
    engine = [p for ps in dumped.values() for p in ps if not reloadable(p)]
    assert engine and all(parse_rules(format_rule(p)) == [] for p in engine)
    fold = dumped["fold-add-f64"][0]
    assert any("a + b <= inf" in c.args[0] for c in fold.conditions if c.kind == "engine")


def test_reloadable_count(dumped):
    """206 of the 306 built-in rules read back from text (the others compute params or literals in egglog,
    test ranks, dtype classes or dtype equalities no condition kind states)."""
    ok = {name for name, ps in dumped.items() if all(reloadable(p) for p in ps)}
    assert len(ok) == 206
    by_category = {r.category: 0 for r in all_rules()}
    for r in all_rules():
        by_category[r.category] += r.name in ok
    assert by_category == {"arith": 50, "fold": 0, "strength": 12, "inverse": 19, "domain": 0, "explog": 18,
                           "trig": 24, "stability": 9, "distrib": 17, "assoc": 17, "compare": 23, "tensor": 14,
                           "structure": 3}


@pytest.fixture(scope="module")
def reloaded():
    text = dump_builtin_rules()
    return {r.name: r for r in rules_from_text(text, "<builtin>")}


def test_dump_reloads_and_checks(reloaded, dumped):
    originals = {r.name: r for r in all_rules()}
    assert len(reloaded) == 206 and check_rules(reloaded.values())
    for name, r in reloaded.items():
        assert (r.category, r.soundness, r.math) == (originals[name].category, originals[name].soundness,
                                                     originals[name].math)
        assert len(r.egg) == len(originals[name].egg)
        assert dump_rule(r) == dumped[name]  # compiling then dumping gives the same patterns back
        for p in dumped[name]:
            assert parse_one(format_rule(p)) == p


def test_dump_is_deterministic():
    assert dump_builtin_rules() == dump_builtin_rules()


_MODULES = ("arith", "trig", "inverse", "explog", "stability", "strength", "distrib", "compare", "assoc", "tensor",
            "structure")


# Every third row under `ci` (each original rule proves its rows in tests/rewrites/test_rules_*; the text
# round trip itself is checked rule by rule above), every row nightly.
STRIDE = 1 if NIGHTLY else 3


def _rows(kind: str, only: set[str] | None = None, stride: int = 1):
    """The rule modules' table rows of `kind` (every `stride`-th); with `only`, those about a rule named
    in it."""
    rows = []
    for category in _MODULES:
        module = importlib.import_module(f"tests.rewrites.test_rules_{category}")
        for row in getattr(module, kind, []):
            if len(row) == 5 and (only is None or row[0] in only):
                rows.append(pytest.param(*row, id=f"{category}:{row[0]}"))
    return rows[::stride]


# The built-in rules that read back from text (the others hold conditions only the engine evaluates).
RELOADABLE = {r.name for r in rules_from_text(dump_builtin_rules(), "<builtin>")}


def _with_reloaded(rule_set: str, reloaded: dict, name: str | None = None) -> list:
    """The rule set with every built-in rule that reads back from text replaced by its reloaded twin."""
    return [reloaded.get(r.name, r) for r in rules_in_set(rule_set)]


@pytest.mark.parametrize("name,f,g,avals,rule_set", _rows("PROVES", RELOADABLE, STRIDE))
def test_reloaded_rule_proves_what_the_original_proves(reloaded, name, f, g, avals, rule_set):
    left, right = make_jaxpr(f)(*avals), make_jaxpr(g)(*avals)
    proof = prove_jaxprs_equal(left, right, rules=_with_reloaded(rule_set, reloaded))
    assert proof.equal, proof.report.summary()
    assert proof.report.rule_matches[name] > 0


@pytest.mark.parametrize("why,f,g,avals,rule_set", _rows("NOT_PROVES", stride=STRIDE))
def test_reloaded_rules_prove_nothing_more(reloaded, why, f, g, avals, rule_set):
    left, right = make_jaxpr(f)(*avals), make_jaxpr(g)(*avals)
    assert not prove_jaxprs_equal(left, right, rules=_with_reloaded(rule_set, reloaded)).equal


def test_a_rule_file_in_a_rule_spec_is_compiled_once_per_version(tmp_path):
    """The engine caches prepared e-graphs by rule identity: the same spec must give the same Rule objects,
    and an edited file new ones."""
    from rewrites.rulesets import resolve_rules

    path = tmp_path / "mine.rules"
    path.write_text("twice-is-sum  exact  mul(x, 2.0) => add(x, x)\n")
    spec = f"strict,+{path}"
    first, again = resolve_rules(spec)[-1], resolve_rules(spec)[-1]
    assert first is again and first.name == "twice-is-sum"
    path.write_text("twice-is-sum  exact  mul(2.0, x) => add(x, x)\n")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert resolve_rules(spec)[-1] is not first
