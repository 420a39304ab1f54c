"""Control flow in the e-graph: `scan`, `while` and `cond` bodies are terms over their own inputs
(`Arr.barg`), so the algebra rewrites inside them, and extraction rebuilds each body as a closed jaxpr."""

from __future__ import annotations

import numpy as np
import pytest

from eval.interpreter import eval_jaxpr
from eval.oracle import load_fixtures, parse_case
from ir.text import parse_jaxpr
from rewrites.engine import count_eqns, optimize
from tests.oracle_paths import ORACLE

SCAN = """{ lambda ; a:f64[3,4]. let
    b:f64[1,4] = slice[limit_indices=(1, 4) start_indices=(0, 0) strides=None] a
    c:f64[4] = squeeze[dimensions=(0,)] b
    d:f64[4] e:f64[3] = scan[
      jaxpr={ lambda ; f:f64[4] g:f64[4]. let
          h:f64[4] = mul f 1.0:f64[]
          k:f64[4] = add h 0.0:f64[]
          l:f64[4] = exp g
          m:f64[4] = log l
          i:f64[4] = add k m
          j:f64[] = reduce_sum[axes=(0,) out_sharding=None] f
        in (i, j) }
      length=3
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] c a
  in (d, e) }"""

COND_IN_WHILE = """{ lambda ; a:f64[4] b:i32[]. let
    c:i32[] d:f64[4] = while[
      body_jaxpr={ lambda ; e:i32[] f:f64[4]. let
          g:i32[] = add e 1:i32[]
          h:i32[] = rem e 2:i32[]
          i:f64[4] = cond[
            branches=(
              { lambda ; j:f64[4]. let k:f64[4] = mul j 1.0:f64[] in (k,) }
              { lambda ; l:f64[4]. let m:f64[4] = neg l; n:f64[4] = neg m; o:f64[4] = mul n 2.0:f64[] in (o,) }
            )
          ] h f
        in (g, i) }
      body_nconsts=0
      cond_jaxpr={ lambda ; p:i32[] q:i32[] r:f64[4]. let s:bool[] = lt q p in (s,) }
      cond_nconsts=1
    ] b 0:i32[] a
  in (d,) }"""


def _body_primitives(closed) -> list[str]:
    """The primitives inside every body of the program's control-flow equations, nested ones included."""
    from ir.core import subjaxprs

    out = []
    for eqn in closed.jaxpr.eqns:
        for body in subjaxprs(eqn):
            out += [e.primitive for e in body.jaxpr.eqns] + _body_primitives(body)
    return out


def test_the_algebra_rewrites_inside_a_scan_body():
    closed = parse_jaxpr(SCAN)
    optimized, report = optimize(closed)
    assert sorted(_body_primitives(optimized)) == ["add", "reduce_sum"]  # x*1+0 -> x, log(exp y) -> y
    assert count_eqns(optimized) < count_eqns(closed)
    x = np.random.default_rng(0).normal(size=(3, 4))
    for got, want in zip(eval_jaxpr(optimized, x), eval_jaxpr(closed, x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    assert report.rule_matches["log-exp"] > 0


def test_nested_bodies_are_rewritten_and_stay_closed():
    closed = parse_jaxpr(COND_IN_WHILE)
    optimized, _ = optimize(closed)
    # the branches: j*1 -> j, and 2*(-(-l)) -> l + l
    assert sorted(_body_primitives(optimized)) == ["add", "add", "cond", "lt", "rem"]
    x = np.arange(4.0)
    for n in (0, 1, 4):
        np.testing.assert_array_equal(eval_jaxpr(optimized, x, np.int32(n))[0], eval_jaxpr(closed, x, np.int32(n))[0])


def test_count_eqns_counts_bodies():
    closed = parse_jaxpr(COND_IN_WHILE)
    # while, then its body (add, rem, cond and the branches' 1 + 3), then its condition (lt)
    assert count_eqns(closed) == 1 + (2 + 1 + 1 + 3) + 1


CONTROL_CASES = [c for c in load_fixtures([ORACLE], ["control_flow", "programs"])
                 if any(p in c.primitives for p in ("scan", "while", "cond"))]


@pytest.mark.parametrize("case", CONTROL_CASES, ids=lambda c: c.id)
def test_optimized_control_flow_matches_the_oracle(case):
    optimized, _ = optimize(parse_case(case))
    got = eval_jaxpr(optimized, *case.arrays("args"), check=True)
    for g, w in zip(got, case.arrays("out"), strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=case.rtol, atol=case.atol, equal_nan=True)
