"""`rewrites.extract.sample`: distinct equivalent programs from one saturated e-graph, deterministic for a
seed. Checked on the oracle programs (every sampled program computes JAX's outputs) and on random
e-graphs (every sampled choice is a valid extraction)."""

import math

import numpy as np
import pytest

from eval.oracle import check_out, load_fixtures, parse_case
from ir.typecheck import fingerprint, typecheck
from rewrites.engine import optimize
from rewrites.extract import extract_greedy_dag, sample, sample_choices, validate
from rewrites.extract.bench import random_egraph
from rewrites.extract.sampling import perturbed_costs
from tests.oracle_paths import ORACLE
from tests.profile import NIGHTLY

# Under ci every 3rd program of the "programs" family and every 12th case of the rest; nightly all of them.
PROGRAMS = load_fixtures([ORACLE], ["programs"])[::1 if NIGHTLY else 3]
OTHERS = [c for c in load_fixtures([ORACLE]) if c.family != "programs"][::1 if NIGHTLY else 12]


@pytest.mark.parametrize("case", [*PROGRAMS, *OTHERS], ids=lambda c: c.id)
def test_sampled_programs_are_distinct_typed_and_compute_the_oracle_outputs(case):
    if "out" not in case.raw:
        pytest.skip(f"{case.id} has no expected outputs")
    closed = parse_case(case)
    programs = sample(closed, k=6, seed=1)
    assert 1 <= len(programs) <= 6
    assert len({fingerprint(p) for p in programs}) == len(programs)
    for p in programs:
        typecheck(p)
        assert [v.aval for v in p.jaxpr.invars] == [v.aval for v in closed.jaxpr.invars]
        with np.errstate(all="ignore"):
            check_out(case, p)


def test_draw_zero_is_what_optimize_extracts_and_a_seed_gives_the_same_programs():
    case = next(c for c in PROGRAMS if c.id == "program/mlp_tanh")
    closed = parse_case(case)
    first = [fingerprint(p) for p in sample(closed, k=8, seed=3)]
    again = [fingerprint(p) for p in sample(closed, k=8, seed=3)]
    other = [fingerprint(p) for p in sample(closed, k=8, seed=4)]
    assert first == again
    assert len(first) == 8, "mlp_tanh's e-graph holds more than 8 programs"
    assert first[0] == other[0] == fingerprint(optimize(closed)[0])
    assert first != other
    by_bytes = sample(closed, k=1, cost="bytes")
    assert fingerprint(by_bytes[0]) == fingerprint(optimize(closed, cost="bytes")[0])


@pytest.mark.parametrize("seed", range(3))
def test_sampled_choices_of_a_random_egraph_are_valid_and_pairwise_different(seed):
    view, base = random_egraph(400, seed=seed)
    choices = list(sample_choices(view, base, k=10, seed=seed))
    assert 2 <= len(choices) <= 10
    keys = {frozenset(c.choice.items()) for c in choices}
    assert len(keys) == len(choices)
    for c in choices:
        validate(view, c.choice)
    assert choices[0].choice == extract_greedy_dag(view, base).choice
    assert [frozenset(c.choice.items()) for c in sample_choices(view, base, k=10, seed=seed)] == \
        [frozenset(c.choice.items()) for c in choices]


def test_perturbed_costs_keep_forbidden_nodes_forbidden_and_price_free_nodes():
    rng = np.random.default_rng(0)
    costs = perturbed_costs([0, 5, math.inf, 10], rng, sigma=1.0)
    assert costs[2] == math.inf
    assert all(c > 0 for c in costs)


def test_bad_k_is_refused():
    with pytest.raises(ValueError, match="k must be at least 1"):
        list(sample_choices(*random_egraph(20), k=0))
