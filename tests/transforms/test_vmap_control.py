"""Batching of control flow built in the e-graph (transforms/batching/control.py): vmap of scan, cond
(unbatched and batched index) and while (unbatched and batched predicate) against a loop over slices, at
every batch-axis position, then the control_flow oracle family against JAX."""

from __future__ import annotations

import numpy as np

from eval.interpreter import eval_jaxpr
from ir import lax, make_jaxpr
from ir import numpy as jnp
from tests.transforms.ad_helpers import Dom, Spec
from tests.transforms.test_ad_control import CONTROL
from tests.transforms.test_ad_control import SPECS as AD_SPECS
from tests.transforms.vmap_helpers import Config, assert_oracle, batched_program, check_config, vmap_spec_tests


def _count_up(x, n):
    """A while loop whose trip count depends on the data: batched n makes the predicate batched."""
    def body(state):
        i, y = state
        return i + 1, y * 1.5 + jnp.sin(y)
    return lax.while_loop(lambda s: s[0] < n, body, (0, x))[1]


def _halve_until_small(x):
    """The predicate reads the batched carry itself."""
    return lax.while_loop(lambda y: jnp.sum(y * y) > 1.0, lambda y: y * 0.5, x)


def _cond_on_data(p, x):
    return lax.cond(p > 0.0, lambda v: jnp.exp(v) - 1.0, lambda v: v * v, x)


SPECS = [*AD_SPECS,
         Spec("while-count", _count_up, [Dom((3,), -1, 1), Dom((), values=(0, 1, 3, 4), dtype="int32")]),
         Spec("while-halve", _halve_until_small, [Dom((3,), -4, 4)]),
         Spec("cond-on-data", _cond_on_data, [Dom(()), Dom((2,))])]
test_axes, test_random = vmap_spec_tests(SPECS)


def test_a_batched_predicate_runs_until_every_element_is_done():
    n = np.array([0, 2, 5], np.int32)
    x = np.array([[0.1, 0.2, 0.3]] * 3)
    program = batched_program(make_jaxpr(_count_up)(x[0], n[0]), Config((0, 0), (0,), 3))
    got = np.asarray(eval_jaxpr(program, x, n)[0])
    for b in range(3):
        y = x[b]
        for _ in range(n[b]):
            y = y * 1.5 + np.sin(y)
        np.testing.assert_allclose(got[b], y, rtol=1e-14)


def test_an_unbatched_index_keeps_one_cond():
    closed = make_jaxpr(_cond_on_data)(np.float64(1.0), np.ones(2))
    program = batched_program(closed, Config((None, 0), (0,), 4))
    assert [e.primitive for e in program.jaxpr.eqns].count("cond") == 1
    check_config(SPECS[-1], Config((None, 0), (0,), 4))


def test_control_flow_oracle():
    outcomes = assert_oracle("control_flow", ("vmap",), stride=1, select=lambda case: CONTROL & set(case.primitives))
    skipped = {o.case for o in outcomes if o.status == "skipped"}
    assert not skipped, skipped
