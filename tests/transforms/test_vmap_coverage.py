"""The batching rule table's own invariants. Which primitives have batching rules, and the reasons for those
that do not, is the catalogue's coverage test (tests/test_catalogue_coverage.py, `eqjax primitives`)."""

from transforms.batching.programs import vmap_rules
from transforms.batching.rule import BATCH, POLICY, PREPARE


def test_rules_are_named_described_and_every_entry_has_a_policy():
    rules = vmap_rules()
    assert len({r.name for r in rules}) == len(rules)
    # "lists": the expansions of the list functions variadic rules build with (a start matrix from the starts)
    assert all(r.math.strip() and r.category in ("vmap", "lists") for r in rules)
    assert set(BATCH) == set(POLICY)
    assert set(PREPARE) == {"lift:u", "lift:b", "fill:b", "materialize:u"}
