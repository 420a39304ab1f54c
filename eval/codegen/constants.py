"""Constant equations evaluated once, when a program is compiled.

An equation whose operands are all literals, constants of the program, or results of such equations
(an `iota`, a broadcast of a literal, the seed of a gradient) computes the same arrays at every call:
`fold` runs its implementation once, and the generated code names the result as a global. Such an
array is never written into (it is not an array the function allocated), and the program returns a copy
of it. Results above `MAX_ELEMENTS` stay computed at each call, so a program does not hold large
arrays between calls; higher-order equations (loops, branches, calls) are always run.
"""

from __future__ import annotations

import numpy as np

from eval.interpreter import _impl_of, literal_array
from ir.core import ClosedJaxpr, Literal, Var
from ir.primitives import get_primitive

MAX_ELEMENTS = 1 << 16


def fold(closed: ClosedJaxpr) -> tuple[dict[int, np.ndarray], dict[int, list[np.ndarray]]]:
    """The program's constant values by var id (its constvars and every folded result), and the folded
    results by equation index."""
    jaxpr = closed.jaxpr
    values: dict[int, np.ndarray] = {id(v): np.asarray(c) for v, c in zip(jaxpr.constvars, closed.consts, strict=True)}
    folded: dict[int, list[np.ndarray]] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        if get_primitive(eqn.primitive).higher_order:
            continue
        if not all(isinstance(x, Literal) or id(x) in values for x in eqn.invars):
            continue
        if sum(v.aval.size for v in eqn.outvars) > MAX_ELEMENTS:
            continue
        operands = [literal_array(x) if isinstance(x, Literal) else values[id(x)] for x in eqn.invars]
        try:
            fn, params = _impl_of(eqn)
            with np.errstate(all="ignore"):
                result = fn(*operands, **params)
        except Exception:  # noqa: BLE001 - an error is the run's to raise, as the interpreter would
            continue
        results = [np.asarray(r) for r in (result if get_primitive(eqn.primitive).multiple_results else [result])]
        folded[i] = results
        for v, r in zip(eqn.outvars, results, strict=True):
            if isinstance(v, Var):
                values[id(v)] = r
    return values, folded
