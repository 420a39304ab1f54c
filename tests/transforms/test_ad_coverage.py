"""The AD rule table's own invariants. Which primitives have JVP and VJP rules, and the reasons for those
that do not, is the catalogue's coverage test (tests/test_catalogue_coverage.py, `eqjax primitives`)."""

from transforms.ad.programs import ad_rules


def test_rules_are_named_and_described():
    rules = ad_rules()
    assert len({r.name for r in rules}) == len(rules)
    # "lists": the expansions of the list functions variadic rules build with (transforms/arglists.py)
    assert all(r.math.strip() and r.category in ("jvp", "vjp", "zero", "lists") for r in rules)
