"""Unread equation results: JAX prints `_` for them only in the top-level jaxpr of `make_jaxpr`; nested
jaxprs (loop and branch bodies, reduce computations, custom_jvp bodies) keep their names.

Each fixture case below shows one side of that in JAX's own text; the traced program must print that text
and hold the same binders (a DropVar at the top level, a named unread Var in the nested body).
"""

import numpy as np
import pytest

import ir.numpy as jnp
from eval.oracle import load_fixtures
from ir import lax
from ir.core import DropVar, Jaxpr, subjaxprs
from ir.text import parse_jaxpr
from ir.tracing import make_jaxpr
from tests.ir.test_control_tracing import _multi_carry, _nested_scan
from tests.oracle_paths import ORACLE

CASES = {c.id: c for c in load_fixtures([ORACLE], families=("control_flow",))}


def _unread(jaxpr: Jaxpr, depth: int = 0) -> list[tuple[int, str]]:
    """(nesting depth, "_" or "named") for every equation result nobody reads, nested jaxprs included."""
    read = {id(a) for e in jaxpr.eqns for a in e.invars} | {id(a) for a in jaxpr.outvars}
    found = []
    for eqn in jaxpr.eqns:
        found += [(depth, "_" if isinstance(v, DropVar) else "named") for v in eqn.outvars
                  if isinstance(v, DropVar) or id(v) not in read]
        for sub in subjaxprs(eqn):
            found += _unread(sub.jaxpr, depth + 1)
    return found


@pytest.mark.parametrize("case_id, fn, expected", [
    ("scan/nested/f64[3,4]", _nested_scan, [(1, "named")]),  # the inner scan's ys are never read
    ("scan/multi_carry/f64[3,4]", _multi_carry, [(0, "_"), (0, "_")]),  # a[0] is read for its shape only
])
def test_unread_results_are_named_only_when_nested(case_id, fn, expected):
    case = CASES[case_id]
    assert _unread(parse_jaxpr(case.jaxpr_text).jaxpr) == expected  # what JAX's text shows
    closed = make_jaxpr(fn)(*case.arrays("args"))
    assert str(closed) == case.jaxpr_text
    assert _unread(closed.jaxpr) == expected


def test_reduce_computation_keeps_unread_results_named():
    # The rule the cases above show, for a `reduce` computation (traced by ir.lax): its dead
    # intermediate keeps its name, the top level's dead `sin` prints `_`.
    def computation(a, b):
        jnp.sin(a[0])
        return a[0] + b[0], jnp.maximum(a[1], b[1])

    def f(x, y):
        jnp.sin(x)
        return lax.reduce((x, y), (0.0, -np.inf), computation, (0,))

    closed = make_jaxpr(f)(np.ones(3), np.ones(3))
    assert [e.primitive for e in closed.jaxpr.eqns] == ["sin", "reduce"]
    assert _unread(closed.jaxpr) == [(0, "_"), (1, "named")]
