"""A literal -0.0 in the e-graph, as rules can see it.

egglog's f64 equates -0.0 with 0.0, so the encoder holds a literal -0.0 as an array constant
(`Arr.const(k)`), whose value rules cannot read. `negative_zero_unions` states what such a constant is:
its class is unioned with `neg(0.0)` of its dtype, which IEEE computes bit for bit as -0.0, so rules
such as `x + (-0.0) -> x` (`add-neg-zero` in `rewrites.rules.arith`) match it. Extraction keeps the
constant (a leaf costs nothing, `neg` is an equation).
"""

from __future__ import annotations

import math

import numpy as np
from egglog import bindings as eb

from rewrites.encode import Encoding, egg_call, egg_str

_SPAN = eb.PanicSpan()


def is_negative_zero(value: np.ndarray, aval) -> bool:
    """A rank-0 float -0.0 (float dtypes include bfloat16, which NumPy does not call a float)."""
    return aval.dtype.is_float and value.ndim == 0 and float(value) == 0.0 and math.copysign(1.0, float(value)) < 0


def negative_zero_unions(enc: Encoding) -> list:
    """Load actions: every literal constant of `enc` that is a float -0.0, unioned with `neg(0.0)`."""
    actions = []
    for k in sorted(enc.literal_consts):
        if is_negative_zero(enc.consts[k], enc.const_avals[k]):
            zero = egg_call("scalar", eb.Lit(_SPAN, eb.Float(0.0)), egg_str(enc.const_avals[k].dtype.name))
            const = egg_call("const", eb.Lit(_SPAN, eb.Int(k)))
            actions.append(eb.Union(_SPAN, const, egg_call("p_neg", zero)))
    return actions
