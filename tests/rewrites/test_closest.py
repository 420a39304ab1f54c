"""A failed proof says why saturation stopped and how close it got: per output that did not merge, the pair
of terms (one from each side) that differ in the fewest places; a proof fills in the e-graph's size."""

import ir.numpy as jnp
from ir.core import ShapedArray
from ir.dtypes import float64
from rewrites.closest import Terms, closest
from rewrites.egraph_view import EGraphView, ENode
from rewrites.engine import Limits
from rewrites.prove import prove_equal

A = ShapedArray((3,), float64)


def test_a_failed_proof_names_the_smallest_difference():
    proof = prove_equal(lambda x, y: jnp.exp(x) * jnp.sin(y), lambda x, y: jnp.exp(x) * jnp.cos(y), A, A)
    assert not proof and proof.stop_reason == "saturated"
    [gap] = proof.closest.values()
    assert [(d.left, d.right) for d in gap.differences] == [("sin(in1)", "cos(in1)")]
    assert gap.distance == 4 and "sin(in1)   vs   cos(in1)" in str(proof)
    assert proof.report.enodes >= proof.report.eclasses > 0


def test_a_proof_has_no_gap_and_says_its_size():
    proof = prove_equal(lambda x: x * 1.0 + 0.0, lambda x: x, A)
    assert proof and not proof.closest and proof.report.eclasses > 0 and str(proof).startswith("proved")


def test_the_stop_reason_of_a_bounded_run():
    proof = prove_equal(lambda x, y: (x + y) * (x + y), lambda x, y: x * x + 2.0 * x * y + y * y, A, A,
                        limits=Limits(iterations=1))
    assert not proof and proof.stop_reason == "iterations" and proof.closest


def _view(classes, roots):
    return EGraphView.from_classes({c: [ENode(op, tuple(kids), tuple(payload)) for op, kids, payload in nodes]
                                    for c, nodes in classes.items()}, roots)


def test_distance_prefers_agreeing_tops_and_survives_cycles():
    # f(a, b) and f(a, c) differ only below: one difference b vs c; class X = {g(X), a} is a cycle
    view = _view({"a": [("inp", [], [0])], "b": [("inp", [], [1])], "c": [("inp", [], [2])],
                  "x": [("g", ["x"], []), ("neg", ["a"], [])],
                  "l": [("f", ["x", "b"], [])], "r": [("f", ["x", "c"], []), ("h", ["c"], [])]}, ["l", "r"])
    gap = closest(view, "l", "r", Terms(view))
    assert gap.distance == 2 and [(d.left, d.right) for d in gap.differences] == [("in1", "in2")]
    assert closest(view, "a", "a").distance == 0
