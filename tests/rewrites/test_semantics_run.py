"""The semantics run at scale (`rewrites.verify.semantics`): random programs and fixtures optimized under
strict, default and fast agree with the originals by each set's promise, and a difference is blamed on
exactly the rule that causes it.

Budget: `ci` checks `SEMANTICS_PROGRAMS` (16) random programs and a few fixtures (about 20 s);
`HYPOTHESIS_PROFILE=nightly` checks 2,000 random programs and every fixture (the run `eqjax rules semantics`
prints; its numbers are on issue 16). A failure message lists each finding: the rules blamed, the program,
the input and both outputs.
"""

import numpy as np
import pytest

from eval.oracle import load_fixtures
from ir import parse_jaxpr
from rewrites.rulecompile import rules_from_text
from rewrites.rulesets import rules_in_set
from rewrites.verify.semantics import (
    FINITE,
    INNER,
    JUDGES,
    RANGE,
    SPECIAL,
    Sample,
    attribute,
    check_program,
    inner_kind,
    program_inputs,
    random_program,
    run_semantics,
)
from tests.oracle_paths import ORACLE
from tests.profile import NIGHTLY, SEMANTICS_PROGRAMS

CI_FIXTURES = ("program/layernorm", "program/logsumexp", "reduce_max/special/f64[3,4]", "lt/special/f64[3,4]")


def _fixtures():
    cases = load_fixtures([ORACLE])
    return cases if NIGHTLY else [c for c in cases if c.id in CI_FIXTURES]


def _explain(run) -> str:
    lines = []
    for s in run.sets.values():
        lines += [f"{s.rule_set} {f['source']}: rules {f['rules']}: {f['reason']}\n{f['program']}\n"
                  f"inputs {f['inputs']}\noriginal {f['original_gives']}\noptimized {f['optimized_gives']}"
                  for f in s.as_dict()["findings"]]
        lines += [f"{s.rule_set} {src}: error: {why}" for src, why in s.problems]
    return "\n".join(lines)


def test_random_programs_and_fixtures_keep_their_semantics_under_every_rule_set():
    cases = _fixtures()
    run = run_semantics(SEMANTICS_PROGRAMS, ("strict", "default", "fast"), seed=0, cases=cases)
    assert run.fixtures == len(cases)
    for s in run.sets.values():
        assert s.programs == SEMANTICS_PROGRAMS + len(cases)
        assert s.agree + s.differ + s.errors + s.skipped == s.programs
    assert not any(s.differ or s.errors for s in run.sets.values()), _explain(run)


def test_programs_and_inputs_are_determined_by_the_seed():
    first, again, other = random_program(3, 7), random_program(3, 7), random_program(4, 7)
    assert str(first.closed) == str(again.closed)
    assert str(first.closed) != str(other.closed) or any(
        not np.array_equal(a, b, equal_nan=True) for a, b in zip(first.args, other.args, strict=True))
    for x, y in zip(program_inputs(first, 11), program_inputs(again, 11), strict=True):
        assert x.kind == y.kind
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(x.args, y.args, strict=True))
    kinds = [s.kind for s in program_inputs(first, 11)]
    assert {FINITE, SPECIAL, RANGE} <= set(kinds)


def test_a_nan_made_inside_from_finite_inputs_makes_the_sample_inner():
    closed = parse_jaxpr("{ lambda ; a:f32[2]. let b:f32[2] = pow a a; c:f32[2] = abs b in (c,) }")
    assert inner_kind(closed, Sample(FINITE, (np.array([-4.4, 2.0], np.float32),))).kind == INNER
    assert inner_kind(closed, Sample(FINITE, (np.array([4.4, 2.0], np.float32),))).kind == FINITE


@pytest.mark.parametrize(("ref", "got", "kind", "fails"), [
    # strict: the sign of a zero counts, a nan matches any nan
    ("strict", (np.array([0.0, np.nan]), np.array([-0.0, np.nan])), FINITE, True),
    ("strict", (np.array([1.0, np.nan]), np.array([1.0, -np.nan])), SPECIAL, False),
    # default: rounding passes, a nan for a number does not; on special samples neither does another kind,
    # but an infinity's sign may follow a zero's (see the sub-self test below)
    ("default", (np.array([1.0, np.inf]), np.array([1.0 + 1e-9, np.inf])), SPECIAL, False),
    ("default", (np.array([1.0, np.inf]), np.array([1.0, -np.inf])), SPECIAL, False),
    ("default", (np.array([1.0, np.inf]), np.array([1.0, np.nan])), SPECIAL, True),
    ("default", (np.array([1.0]), np.array([np.nan])), FINITE, True),
    ("default", (np.array([-np.inf]), np.array([-874.5])), FINITE, False),  # the original's exp underflowed
    ("default", (np.array([-np.inf]), np.array([-874.5])), SPECIAL, True),
    ("default", (np.array([0.0]), np.array([1.0])), RANGE, False),  # extreme magnitudes: strict only
    # fast: anything goes on a special sample, and where the original overflowed
    ("fast", (np.array([1.0]), np.array([np.nan])), SPECIAL, False),
    ("fast", (np.array([np.inf, 2.0]), np.array([np.nan, 2.0])), FINITE, False),
    ("fast", (np.array([np.inf, 2.0]), np.array([np.nan, 3.0])), FINITE, True),
    ("fast", (np.array([-8.88]), np.array([np.nan])), INNER, False),  # a nan made inside from finite inputs
    ("default", (np.array([-8.88]), np.array([np.nan])), INNER, True),
])
def test_judges_keep_each_sets_promise(ref, got, kind, fails):
    judge, (r, g) = ref, got
    assert (JUDGES[judge](r, g, kind, 1e-6) is not None) == fails


UNSOUND = "mul-two-drop  real  mul(x, 2.0) => x  # false: x*2 is not x"
PROGRAM = """{ lambda ; a:f64[3] b:f64[3]. let
    c:f64[3] = mul a 1.0:f64[]
    d:f64[3] = neg c
    e:f64[3] = neg d
    f:f64[3] = add e b
    g:f64[3] = mul f 2.0:f64[]
  in (g,) }"""


def test_attribution_names_exactly_the_unsound_rule_among_the_fired_ones():
    closed = parse_jaxpr(PROGRAM)
    (bad,) = rules_from_text(UNSOUND)
    rules = [*rules_in_set("default"), bad]
    sample = Sample(FINITE, (np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 4.0])))
    outcome = check_program(closed, [sample], rules, judge="default")
    assert outcome.status == "differ"
    assert bad.name in outcome.fired and len(outcome.fired) > 1  # other rules fired too (mul-one, neg-neg, ...)
    blame = attribute(closed, sample, rules, "default", outcome.fired)
    assert blame.reproduced
    assert blame.rules == [bad.name]


def test_default_lets_a_real_rule_choose_the_sign_of_a_zero_and_of_the_infinity_it_makes():
    """`sub-self` (real): x - x -> x * 0 is -0.0 at x = -1.5, so 1/(x - x) becomes -inf where it was +inf;
    `default` accepts that (0 and -0 are one real number), `strict` does not hold the rule at all."""
    closed = parse_jaxpr("{ lambda ; a:f64[2]. let b:f64[2] = sub a a; c:f64[2] = div 1.0:f64[] b in (c,) }")
    sample = Sample(SPECIAL, (np.array([-1.5, np.nan]),))
    outcome = check_program(closed, [sample], "default")
    assert outcome.status == "agree" and "sub-self" in outcome.fired, outcome
    assert JUDGES["default"](np.array([np.inf]), np.array([-np.inf]), SPECIAL, 1e-6) is None
    assert JUDGES["default"](np.array([np.inf]), np.array([np.nan]), SPECIAL, 1e-6) is not None
    assert JUDGES["default"](np.array([np.inf]), np.array([1.0]), SPECIAL, 1e-6) is not None
    assert JUDGES["strict"](np.array([np.inf]), np.array([-np.inf]), SPECIAL, 1e-6) is not None
