"""Batching rule of `fft` (transforms/batching/rules/fft.py): vmap against a loop over slices for the four
transform types (1 to 3 trailing axes, odd lengths, single precision, the `FftType.NAME` spelling) at every
batch-axis position and on random configurations; the batched program is one fft with the same params
(after moving the batch axis first); then the `fft` oracle family against jax.vmap."""

from __future__ import annotations

import numpy as np
import pytest

from ir import make_jaxpr
from tests.transforms.test_ad_fft import SPECS as AD_SPECS
from tests.transforms.vmap_helpers import Config, assert_oracle, batched_program, vmap_spec_tests

AD_ROWS = {s.name: s for s in AD_SPECS}
SPECS = [AD_ROWS[name] for name in (
    "fft/8", "fft/2x3x4", "ifft/3x5", "rfft/7", "rfft/4x6", "irfft/8", "irfft/7", "irfft/4x6", "fft-c64/8",
    "rfft-f32/6", "irfft-c64/5", "irfft-enum-name")]

test_axes, test_random = vmap_spec_tests(SPECS)


@pytest.mark.parametrize("name, axis, built", [
    ("rfft/4x6", 0, ["fft"]),
    ("irfft/4x6", 0, ["fft"]),
    ("fft/2x3x4", 2, ["transpose", "fft"]),  # the batch axis moved first, then the same transform
])
def test_batched_program_is_the_same_transform(name, axis, built):
    spec = AD_ROWS[name]
    example = [d.draw(np.random.default_rng(0)) for d in spec.domains]
    closed = make_jaxpr(spec.fn)(*example)
    program = batched_program(closed, Config((axis,), (0,), 3))
    assert [e.primitive for e in program.jaxpr.eqns] == built
    [eqn] = [e for e in program.jaxpr.eqns if e.primitive == "fft"]
    assert eqn.params == closed.jaxpr.eqns[0].params


def test_oracle():
    """Every case of the `fft` family, nothing skipped (JAX batches all of them)."""
    outcomes = assert_oracle("fft", ("vmap",), stride=1)
    assert len(outcomes) == 16
    assert [o for o in outcomes if o.status != "passed"] == []
