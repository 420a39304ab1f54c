"""The batching checks against JAX on whole programs: vmap and vmap_grad (per-example gradients) of
the oracle programs. A case is skipped only when one of its primitives is a listed known gap of
batching or AD (control flow, linalg, fft, custom_vjp in reverse mode); every other case must pass."""

import pytest

from tests.transforms.test_ad_coverage import KNOWN_GAPS as AD_GAPS
from tests.transforms.test_vmap_coverage import KNOWN_GAPS
from tests.transforms.vmap_helpers import assert_oracle


def _known_gap(reason: str) -> bool:
    """A batching gap, or (vmap_grad) an AD gap such as custom_vjp's reverse mode."""
    return any(f"primitive {p!r}" in reason for gaps in (KNOWN_GAPS, AD_GAPS) for gap in gaps.values() for p in gap)


@pytest.mark.parametrize("check", ["vmap", "vmap_grad"])
def test_programs(check):
    outcomes = assert_oracle("programs", (check,))
    ran = [o for o in outcomes if o.status == "passed"]
    unexplained = [f"{o.case}: {o.reason}" for o in outcomes if o.status == "skipped" and not _known_gap(o.reason)]
    assert not unexplained, "\n".join(unexplained)
    assert len(ran) >= 10, f"only {len(ran)} program cases ran the {check} check"
