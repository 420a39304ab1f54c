"""Loop-aware rewrites: loop-invariant code motion (bodies close over their consts in the e-graph, and
decoding computes what does not depend on a body's own inputs before the loop) and dead loop outputs
(rewrites/loops.py). Each program must keep its values; each test also checks where the work went."""

from __future__ import annotations

import numpy as np
import pytest

from eval.interpreter import eval_jaxpr
from ir import lax, make_jaxpr
from ir import numpy as jnp
from ir.core import ClosedJaxpr
from rewrites.engine import optimize
from rewrites.loops import prune_loops
from rewrites.options import Options


def _prims(closed: ClosedJaxpr) -> list[str]:
    return [e.primitive for e in closed.jaxpr.eqns]


def _body_prims(closed: ClosedJaxpr, prim: str = "scan", param: str = "jaxpr") -> list[str]:
    return [q for e in closed.jaxpr.eqns if e.primitive == prim for q in _prims(e.params[param])]


def _assert_same_values(a: ClosedJaxpr, b: ClosedJaxpr, args) -> None:
    for x, y in zip(eval_jaxpr(a, *args), eval_jaxpr(b, *args), strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def _rnn(w, h0, xs):
    def step(h, x):
        gain = jnp.sin(w) * 3.0 + jnp.exp(w)  # reads only the const w
        h = jnp.tanh(gain * h + x)
        return h, jnp.sum(h)
    return lax.scan(step, h0, xs)


RNN_ARGS = [np.array([0.3, -0.2, 0.9]), np.array([0.1, 0.5, -0.4]), np.linspace(-1, 1, 15).reshape(5, 3)]


def test_invariant_work_leaves_the_scan_body():
    closed = make_jaxpr(_rnn)(*RNN_ARGS)
    out, report = optimize(closed)
    assert {"sin", "exp"} <= set(_body_prims(closed))
    assert not {"sin", "exp"} & set(_body_prims(out))
    assert {"sin", "exp"} <= set(_prims(out))
    assert report.loops_hoisted >= 3 and "hoisted out of bodies" in report.summary()
    _assert_same_values(closed, out, RNN_ARGS)


def test_the_gradient_scans_compute_the_invariants_once():
    """The backward scan recomputes the step from the stacked carries: its invariant part too, unless hoisted."""
    from transforms.ad.programs import grad_program

    def loss(w, h0, xs):
        h, ys = _rnn(w, h0, xs)
        return jnp.sum(ys) + jnp.sum(h * h)

    closed = make_jaxpr(loss)(*RNN_ARGS)
    program, report = grad_program(closed, [0])
    scans = [e for e in program.jaxpr.eqns if e.primitive == "scan"]
    assert scans
    for scan in scans:
        assert not {"sin", "exp"} & set(_prims(scan.params["jaxpr"]))
    # The forward scan (which also stacks the carries) serves the primal results too: the primal scan ties with
    # it (a subset of its work at the same cost), which greedy alone cannot see; its sharing pass and the optimal
    # extractor take the forward scan alone.
    for extractor in ("greedy_dag", "ilp"):
        shared, _ = grad_program(closed, [0], options=Options(extractor=extractor))
        assert sum(e.primitive == "scan" for e in shared.jaxpr.eqns) == 2, extractor
    [g] = eval_jaxpr(program, *RNN_ARGS)
    eps, u = 1e-6, np.array([0.2, -0.7, 0.5])
    fd = (eval_jaxpr(closed, RNN_ARGS[0] + eps * u, *RNN_ARGS[1:])[0]
          - eval_jaxpr(closed, RNN_ARGS[0] - eps * u, *RNN_ARGS[1:])[0]) / (2 * eps)
    np.testing.assert_allclose(g @ u, fd, rtol=1e-7)


def test_nested_loops_hoist_each_value_to_the_scope_it_depends_on():
    def f(w, xs):
        def outer(c, row):
            def inner(d, x):
                return d * jnp.cos(c) + jnp.sum(jnp.sin(w)) * x, None  # cos(c): outer body; sin(w): the program
            d, _ = lax.scan(inner, c, row)
            return d, None
        return lax.scan(outer, jnp.sum(w), xs)[0]

    args = [np.array([0.4, 1.1]), np.linspace(0.1, 1.2, 12).reshape(3, 4)]
    closed = make_jaxpr(f)(*args)
    out, _ = optimize(closed)
    assert "sin" in _prims(out)
    [outer] = [e for e in out.jaxpr.eqns if e.primitive == "scan"]
    assert "cos" in _prims(outer.params["jaxpr"])
    assert not {"sin", "cos"} & set(_body_prims(outer.params["jaxpr"]))
    _assert_same_values(closed, out, args)


def test_invariant_work_stays_inside_a_cond_branch():
    """Hoisting out of a branch would run work the taken branch does not need."""
    def f(p, x):
        return lax.cond(p > 0, lambda v: v * jnp.exp(jnp.sin(p)), lambda v: v - 1.0, x)

    args = [np.float64(0.5), np.array([1.0, 2.0])]
    closed = make_jaxpr(f)(*args)
    out, _ = optimize(closed)
    [cond] = [e for e in out.jaxpr.eqns if e.primitive == "cond"]
    assert any("exp" in _prims(b) for b in cond.params["branches"])
    assert "exp" not in _prims(out)
    for p in (0.5, -0.5):
        _assert_same_values(closed, out, [np.float64(p), args[1]])


def test_a_while_condition_and_body_close_over_their_consts():
    def f(a, x):
        def body(s):
            i, y = s
            return i + 1, y * jnp.cos(a) + 1.0
        return lax.while_loop(lambda s: s[1] < jnp.exp(a) * 10.0, body, (0, x))

    args = [np.float64(0.3), np.float64(0.5)]
    closed = make_jaxpr(f)(*args)
    out, _ = optimize(closed)
    [loop] = [e for e in out.jaxpr.eqns if e.primitive == "while"]
    assert not {"cos", "exp"} & set(_prims(loop.params["body_jaxpr"]) + _prims(loop.params["cond_jaxpr"]))
    _assert_same_values(closed, out, args)


# --- dead loop outputs ------------------------------------------------------------------------------


def _scan_with_dead_parts(a, xs):
    def step(carry, x):
        live, dead, feeds = carry
        return (live + feeds * x, dead * 2.0 + x, feeds + 1.0), (jnp.sin(x) * live, jnp.cos(dead))
    (live, _, _), (ys, _) = lax.scan(step, (a, a, a), xs)
    return live + jnp.sum(ys)


def _while_with_dead_parts(a):
    def body(s):
        i, y, unused = s
        return i + 1, y * 0.5 + 1.0, unused * y
    return lax.while_loop(lambda s: s[0] < 5, body, (0, a, a))[1]


def _cond_with_dead_parts(p, x, y):
    first, _ = lax.cond(p > 0, lambda u, v: (u * 2.0, v * 3.0), lambda u, v: (u - 1.0, jnp.sin(v)), x, y)
    return first


@pytest.mark.parametrize("fn, args, prim, dropped", [
    (_scan_with_dead_parts, [np.float64(0.7), np.linspace(0, 1, 4)], "scan", 2),   # carry `dead`, ys cos
    (_while_with_dead_parts, [np.float64(2.0)], "while", 1),                       # carry `unused`
    (_cond_with_dead_parts, [np.float64(-1.0), np.float64(0.3), np.float64(0.8)], "cond", 1),
], ids=["scan", "while", "cond"])
def test_dead_loop_outputs_are_dropped(fn, args, prim, dropped):
    closed = make_jaxpr(fn)(*args)
    pruned, count = prune_loops(closed)
    assert count == dropped
    [before] = [e for e in closed.jaxpr.eqns if e.primitive == prim]
    [after] = [e for e in pruned.jaxpr.eqns if e.primitive == prim]
    assert len(after.outvars) == len(before.outvars) - dropped
    _assert_same_values(closed, pruned, args)


def test_a_carry_the_condition_reads_stays():
    def f(a):
        return lax.while_loop(lambda s: s[1] < 10.0, lambda s: (s[0] * 2.0, s[1] + 1.0), (a, a))[0]

    closed = make_jaxpr(f)(np.float64(1.0))
    pruned, count = prune_loops(closed)
    assert count == 0 and pruned.jaxpr is closed.jaxpr


def test_the_gradient_program_drops_the_primal_outputs_of_the_forward_scan():
    from transforms.ad.programs import grad_program

    def loss(w, h0, xs):
        return jnp.sum(_rnn(w, h0, xs)[1])

    program, report = grad_program(make_jaxpr(loss)(*RNN_ARGS), [0])
    assert report.loops_pruned >= 1
    forward = next(e for e in program.jaxpr.eqns if e.primitive == "scan")
    assert "reduce_sum" not in _prims(forward.params["jaxpr"])  # the primal ys, which grad does not read


def test_extraction_prices_loop_work_by_trip_count():
    """h * w * 3 and h * (w * 3) cost the same counted once; counted per trip, the second is cheaper, and
    its invariant w * 3 is hoisted: one multiply per trip instead of two."""
    def f(w, h0, xs):
        return lax.scan(lambda h, x: (jnp.tanh(h * w * 3.0 + x), None), h0, xs)[0]

    args = [np.array([0.5, -1.0, 2.0]), np.zeros(3), np.linspace(-1, 1, 150).reshape(50, 3)]
    closed = make_jaxpr(f)(*args)
    out, report = optimize(closed)
    assert _body_prims(out).count("mul") == 1
    assert "mul" in _prims(out)
    assert report.cost_after < report.cost_before
    _assert_same_values(closed, out, args)


def test_loops_false_turns_the_loop_aware_parts_off():
    """The comparison a study of loop-aware extraction needs: the same program, bodies taking their consts
    as inputs, no trip-count weights, dead loop outputs kept."""
    closed = make_jaxpr(_rnn)(*RNN_ARGS)
    off, report = optimize(closed, loops=False)
    on, report_on = optimize(closed)
    assert {"sin", "exp"} <= set(_body_prims(off))
    assert report.loops_hoisted == report.loops_pruned == 0
    assert report.cost_after > report_on.cost_after
    _assert_same_values(off, on, RNN_ARGS)
