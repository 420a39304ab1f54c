"""The redundancy suite (`rewrites.redundancy`): every hand optimum computes its program's function, every
optimized program still does, and which cases reach their optimum is pinned: a case that stops reaching it fails,
and so does a listed miss that starts reaching it (then remove it from `MISSES`)."""

import pytest

from eval import eval_jaxpr
from eval.oracle import compare_lists
from rewrites.redundancy import CASES, measure, sample_inputs

# The cases the optimizer does not reach yet, with what is missing (issue 20's rule families): none now.
MISSES: dict[str, str] = {}


def test_the_suite_holds_at_least_60_programs_over_every_rule_set():
    assert len(CASES) >= 60
    assert len({c.name for c in CASES}) == len(CASES)
    assert {c.rules for c in CASES} == {"strict", "default", "fast"}
    assert set(MISSES) <= {c.name for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_optimum_and_optimized_compute_the_program(case):
    program, optimum = case.traced(case.program), case.traced(case.optimum)
    outcome, optimized = measure(case)
    for seed in range(3):
        args = sample_inputs(case, seed)
        want = eval_jaxpr(program, *args)
        compare_lists(f"the hand optimum of {case.name}", eval_jaxpr(optimum, *args), want, 1e-12, 1e-12)
        compare_lists(f"{case.name} optimized:\n{optimized}\n", eval_jaxpr(optimized, *args), want, 1e-12, 1e-12)
    assert outcome.reached == (case.name not in MISSES), (
        f"{case.name} under {case.rules}: {outcome.eqns} equations and {outcome.flops} flops against the optimum's "
        f"{outcome.optimum_eqns} and {outcome.optimum_flops}\n{optimized}")
