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

from eval.oracle import load_fixtures, parse_case, program_case
from ir.errors import EqjaxError
from ir.text import parse_jaxpr
from rewrites.bench import DEPTHS, fitted_exponent, residual_chain
from rewrites.costs import get_cost_model, jaxpr_cost
from rewrites.engine import count_eqns
from rewrites.options import Options
from transforms.ad.programs import grad_program


def chain_row(depth: int, rules: str) -> dict:
    """The task of one timed row of `bench_chains`: `grad` of the residual chain of `depth` layers."""
    closed = residual_chain(depth)
    start = time.perf_counter()
    program, report = grad_program(closed, list(range(len(closed.jaxpr.invars))), options=Options(rules=rules))
    seconds = time.perf_counter() - start
    return {"depth": depth, "eqns": count_eqns(closed), "prelude_enodes": report.prelude_enodes,
            "enodes": report.enodes, "seconds": seconds, "prelude_s": report.seconds.get("prelude", 0),
            "grad_eqns": count_eqns(program)}


def bench_chains(rules: str = "default", depths=DEPTHS, run_rows=None) -> dict:
    """`run_rows` runs the rows' tasks, timed, one at a time (`eval.study.rows.RowRunner`; default: in this process)."""
    from eval.study import RowRunner, Task

    print(f"residual chains, grad with respect to every input, rules={rules}")
    grad_program(residual_chain(2), [0, 1], options=Options(rules=rules))  # warm up
    results = (run_rows or RowRunner())([Task("transforms.ad.bench:chain_row", {"depth": depth, "rules": rules})
                                     for depth in depths], "chains differentiated")
    print(f"{'L':>5}{'eqns':>7}{'AD nodes':>10}{'e-nodes':>10}{'grad s':>9}{'prelude s':>11}{'grad eqns':>11}")
    for r in results:
        print(f"{r['depth']:>5}{r['eqns']:>7}{r['prelude_enodes']:>10}{r['enodes']:>10}{r['seconds']:>9.3f}"
              f"{r['prelude_s']:>11.3f}{r['grad_eqns']:>11}")
    ls = [r["depth"] for r in results]
    result = {"enodes_exponent": fitted_exponent(ls, [r["prelude_enodes"] for r in results]),
              "seconds_exponent": fitted_exponent(ls, [r["seconds"] for r in results])}
    print(f"fitted exponent in L: e-graph after AD expansion {result['enodes_exponent']:.2f}, "
          f"grad time {result['seconds_exponent']:.2f} (the algebra after it is bounded by the node limit)")
    return result


def vs_jax_row(oracle: str, case_id: str, rules: str) -> dict:
    """The task of one row of `bench_vs_jax` (it times nothing): FLOPs and equations of our gradient program of
    the case and of JAX's; {"case", "skipped"} for a program we cannot differentiate."""
    case = program_case(case_id, oracle)
    spec = case.raw["grad"]
    try:
        ours, _ = grad_program(parse_case(case), spec["argnums"], options=Options(rules=rules))
    except EqjaxError as e:
        return {"case": case.id, "skipped": str(e)}
    theirs = parse_jaxpr(spec["jaxpr"])
    flops = get_cost_model("flops")
    return {"case": case.id, "ours": jaxpr_cost(flops, ours), "jax": jaxpr_cost(flops, theirs),
            "eqns": count_eqns(ours), "jax_eqns": count_eqns(theirs)}


def bench_vs_jax(rules: str = "default", oracle=None, run_rows=None) -> dict:
    """`run_rows` runs the rows' tasks, on any executor (`eval.study.rows.RowRunner`; default: in this process)."""
    from eval.oracle import DEFAULT_ORACLE as ORACLE
    from eval.study import RowRunner, Task

    oracle = str(oracle or ORACLE)
    tasks = [Task("transforms.ad.bench:vs_jax_row", {"oracle": oracle, "case_id": case.id, "rules": rules})
             for case in load_fixtures([oracle], ["programs"]) if "grad" in case.raw]
    results = (run_rows or RowRunner())(tasks, "gradients compared", timed=False)
    print(f"\ngradient programs vs JAX's (flops cost model), rules={rules}")
    print(f"{'program':<36}{'ours':>12}{'jax':>12}{'ratio':>8}{'eqns':>6}{'jax':>6}")
    ratios, eqn_ratios, skipped, plain = [], [], [], []
    for r in results:
        if "skipped" in r:
            skipped.append((r["case"], r["skipped"]))
            continue
        a, b = r["ours"], r["jax"]
        ratio = a / b if b else float("nan")
        ratios.append(ratio)
        if "redundant" not in r["case"]:  # the programs written with algebraic redundancy to remove
            plain.append(ratio)
        eqn_ratios.append(r["eqns"] / max(1, r["jax_eqns"]))
        print(f"{r['case'][:35]:<36}{a:>12,.0f}{b:>12,.0f}{ratio:>8.3f}{r['eqns']:>6}{r['jax_eqns']:>6}")
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


def bench_grad(rules: str = "default", run_rows=None) -> None:
    from rewrites.bench import bench_scale

    bench_chains(rules, run_rows=run_rows)
    bench_vs_jax(rules, run_rows=run_rows)
    # grad of 1k/3k/10k-equation programs, fresh processes
    bench_scale(kinds=("grad:mlp", "grad:residual"), run_rows=run_rows)
