"""The batching checks against JAX on whole programs: vmap and vmap_grad (per-example gradients) of
the oracle programs. A case is skipped only when one of its primitives has a batching or AD gap named in its
catalogue row (control flow, linalg, fft, custom_vjp in reverse mode); every other case must pass."""

import pytest

from ir.primitives import primitives_lacking
from tests.profile import NIGHTLY
from tests.transforms.vmap_helpers import ORACLE_STRIDE, assert_oracle


def _known_gap(reason: str) -> bool:
    """A batching or AD gap named in the catalogue row, or (vmap_grad) a custom_vjp whose bwd is Python code the
    text does not hold (it has reverse mode once the bwd is registered, `ir.custom_rules.defvjp`)."""
    return (any(f"primitive {p!r}" in reason for p in primitives_lacking("batching", "jvp", "vjp"))
            or "is a Python function the text does not hold" in reason)


# Under `ci`, every `keep_every`-th oracle program (`ci_share`), and the fewest that must pass: vmap every 2nd
# (21 of 42); vmap_grad, which builds a gradient program through the e-graph and then batches it, every 4th
# (11 of 42, of which 9 pass and 2 are known gaps). Every program nightly, where as many times more must pass.
SHARES = {"vmap": (ORACLE_STRIDE, 10), "vmap_grad": (4, 5)}


@pytest.mark.parametrize("check", list(SHARES))
def test_programs(check):
    keep_every, least = SHARES[check]
    outcomes = assert_oracle("programs", (check,), stride=keep_every)
    ran = [o for o in outcomes if o.status == "passed"]
    unexplained = [f"{o.case}: {o.reason}" for o in outcomes if o.status == "skipped" and not _known_gap(o.reason)]
    assert not unexplained, "\n".join(unexplained)
    least *= keep_every if NIGHTLY else 1  # every program nightly
    assert len(ran) >= least, f"only {len(ran)} program cases ran the {check} check"
