"""Mutated fixture texts through decode → parse → typecheck → eval (some also through optimize): each case
either succeeds or raises a typed error (an EqjaxError: JaxprSyntaxError, JaxprTypeError, JaxprEvalError,
UnsupportedPrimitive), within its time bound. The mutations and the runner are in ir/text/mutations.py and
tests/ir/fuzz_pipeline.py (`python -m tests.ir.fuzz_pipeline --n 10000` prints the table of outcomes).

`ci` runs a few hundred seeded cases, `nightly` ten thousand; a failing case prints its seed and its input.
"""

import pytest

from ir.text.mutations import MUTATIONS, mutate
from tests.ir.fuzz_pipeline import fixture_texts, run_case
from tests.profile import NIGHTLY

CASES = 10_000 if NIGHTLY else 240
CHUNK = 40  # seeds per test item, so a failure names a small range and xdist spreads the work
SOURCES = fixture_texts()


@pytest.mark.parametrize("first", range(0, CASES, CHUNK))
def test_mutated_texts_give_typed_errors_and_never_hang(first):
    bad = [o for o in (run_case(seed, SOURCES) for seed in range(first, first + CHUNK)) if o.bad]
    assert not bad, "\n\n".join(o.describe() for o in bad)


def test_mutations_are_deterministic_and_all_used():
    assert [mutate(SOURCES, seed) for seed in range(50)] == [mutate(SOURCES, seed) for seed in range(50)]
    used = {name for seed in range(CASES) for name in mutate(SOURCES, seed)[1]}
    assert used == set(MUTATIONS)

