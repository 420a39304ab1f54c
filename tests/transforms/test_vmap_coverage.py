"""Which primitives have batching rules: a walk over the primitive registry that fails listing every
primitive lacking one, except the listed known gaps. The lists are checked both ways: a listed gap
that has gained its rule must leave the list."""

import ir.shapes  # noqa: F401  (registers every primitive)
from ir.inline import CALLS
from ir.primitives import SHAPE_RULES
from transforms.batching.build import INLINED
from transforms.batching.control import BATCH_RULES as CONTROL
from transforms.batching.programs import vmap_rules
from transforms.batching.rule import BATCH, POLICY, PREPARE

# JAX cannot batch these either (the fixtures have no vmap of them), or they have no operands to batch
# (iota, empty2, platform_index), or they are stateful (rng_uniform).
NOT_BATCHABLE_IN_JAX = {"ragged_dot_general", "composite", "cholesky_update", "iota", "rng_uniform", "empty2",
                        "platform_index"}

# Primitives still without a batching rule, by reason: none left (control flow, linalg, fft and random
# have theirs); a new primitive without one must be listed here with the reason.
KNOWN_GAPS: dict[str, set[str]] = {}


def _gaps() -> set[str]:
    return set().union(*KNOWN_GAPS.values())


def _lacking() -> list[str]:
    vmap_rules()  # imports every rule module
    return [p for p in sorted(SHAPE_RULES) if p not in BATCH and p not in CALLS | INLINED | set(CONTROL)]


def test_every_primitive_has_a_batching_rule_or_is_a_listed_gap():
    unexpected = [p for p in _lacking() if p not in _gaps() | NOT_BATCHABLE_IN_JAX]
    assert not unexpected, f"primitives without a batching rule: {unexpected}"


def test_known_gap_lists_are_current():
    lacking = set(_lacking())
    stale = sorted(p for p in _gaps() | NOT_BATCHABLE_IN_JAX if p not in lacking)
    assert not stale, f"these have batching rules now; remove them from the gap lists: {stale}"


def test_rules_are_named_described_and_every_entry_has_a_policy():
    rules = vmap_rules()
    assert len({r.name for r in rules}) == len(rules)
    assert all(r.math.strip() and r.category == "vmap" for r in rules)
    assert set(BATCH) == set(POLICY)
    assert set(PREPARE) == {"lift:u", "lift:b", "fill:b", "materialize:u"}
