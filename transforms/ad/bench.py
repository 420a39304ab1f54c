"""`eqjax bench grad`: how reverse mode scales, and how our gradient programs compare with JAX's.

1. Residual chains h <- h + tanh(h * w_l), l = 1..L, loss sum(h): the e-graph size once the AD rules
   are saturated, the final e-graph size, and the time of `grad` for L = 8 ... 256, with the exponent
   of a log-log least-squares fit (1 = linear).
2. Every oracle program with a `grad` fixture: FLOPs and equation count of our extracted gradient
   program vs the gradient jaxpr JAX produced (`grad.jaxpr`, parsed and costed by our own cost model),
   and the median ratio.
"""

from __future__ import annotations

import time

import numpy as np

from eval.oracle import load_fixtures, parse_case
from ir.errors import EqjaxError
from ir.text import parse_jaxpr
from rewrites.bench import DEPTHS, fitted_exponent, residual_chain
from rewrites.costs import get_cost_model, jaxpr_cost
from rewrites.engine import count_eqns
from rewrites.options import Options
from transforms.ad.programs import grad_program


def bench_chains(rules: str = "default", depths=DEPTHS) -> dict:
    print(f"residual chains, grad with respect to every input, rules={rules}")
    print(f"{'L':>5}{'eqns':>7}{'AD nodes':>10}{'e-nodes':>10}{'grad s':>9}{'prelude s':>11}{'grad eqns':>11}")
    rows = []
    options = Options(rules=rules)
    grad_program(residual_chain(2), [0, 1], options=options)  # warm up
    for depth in depths:
        closed = residual_chain(depth)
        start = time.perf_counter()
        program, report = grad_program(closed, list(range(len(closed.jaxpr.invars))), options=options)
        seconds = time.perf_counter() - start
        rows.append((depth, report.prelude_enodes, seconds))
        print(f"{depth:>5}{count_eqns(closed):>7}{report.prelude_enodes:>10}{report.enodes:>10}{seconds:>9.3f}"
              f"{report.seconds.get('prelude', 0):>11.3f}{count_eqns(program):>11}")
    ls = [r[0] for r in rows]
    result = {"enodes_exponent": fitted_exponent(ls, [r[1] for r in rows]),
              "seconds_exponent": fitted_exponent(ls, [r[2] for r in rows])}
    print(f"fitted exponent in L: e-graph after AD expansion {result['enodes_exponent']:.2f}, "
          f"grad time {result['seconds_exponent']:.2f} (the algebra after it is bounded by the node limit)")
    return result


def bench_vs_jax(rules: str = "default", oracle=None) -> dict:
    from eval.oracle import DEFAULT_ORACLE as ORACLE

    flops = get_cost_model("flops")
    print(f"\ngradient programs vs JAX's (flops cost model), rules={rules}")
    print(f"{'program':<36}{'ours':>12}{'jax':>12}{'ratio':>8}{'eqns':>6}{'jax':>6}")
    ratios, eqn_ratios, skipped, plain = [], [], [], []
    for case in load_fixtures([oracle or ORACLE], ["programs"]):
        if "grad" not in case.raw:
            continue
        spec = case.raw["grad"]
        try:
            ours, _ = grad_program(parse_case(case), spec["argnums"], options=Options(rules=rules))
        except EqjaxError as e:
            skipped.append((case.id, str(e)))
            continue
        theirs = parse_jaxpr(spec["jaxpr"])
        a, b = jaxpr_cost(flops, ours), jaxpr_cost(flops, theirs)
        ratio = a / b if b else float("nan")
        ratios.append(ratio)
        if "redundant" not in case.id:  # the programs written with algebraic redundancy to remove
            plain.append(ratio)
        eqn_ratios.append(count_eqns(ours) / max(1, count_eqns(theirs)))
        print(f"{case.id[:35]:<36}{a:>12,.0f}{b:>12,.0f}{ratio:>8.3f}{count_eqns(ours):>6}{count_eqns(theirs):>6}")
    for cid, why in skipped:
        print(f"skipped {cid}: {why}")
    result = {"median_flops_ratio": float(np.median(ratios)) if ratios else float("nan"),
              "median_flops_ratio_without_redundant": float(np.median(plain)) if plain else float("nan"),
              "median_eqns_ratio": float(np.median(eqn_ratios)) if eqn_ratios else float("nan"),
              "compared": len(ratios), "skipped": len(skipped)}
    print(f"median FLOPs ratio ours/JAX {result['median_flops_ratio']:.3f}, median equation-count ratio "
          f"{result['median_eqns_ratio']:.3f} over {len(ratios)} programs ({len(skipped)} skipped); "
          f"without the redundant_* programs {result['median_flops_ratio_without_redundant']:.3f}")
    return result


def bench_grad(rules: str = "default") -> None:
    from rewrites.bench import bench_scale

    bench_chains(rules)
    bench_vs_jax(rules)
    bench_scale(kinds=("grad:mlp", "grad:residual"))  # grad of 1k/3k/10k-equation programs, fresh processes
