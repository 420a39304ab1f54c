"""`eqjax bench vmap`: how batching scales with program size, and what batched programs cost.

1. Residual chains h <- h + tanh(h * w_l), l = 1..L, batched over x with the weights shared
   (in_axes 0, None...) and over everything: equations of the program, e-graph size once the batching
   rules are saturated, final e-graph size, equations of the batched program and time, for
   L = 8 ... 256, with the exponent of a log-log least-squares fit in L (1 = linear).
2. Every oracle program with a vmap fixture: FLOPs and bytes of the batched program over B times the
   unbatched program's (a loop), and the medians.
"""

from __future__ import annotations

import time

from rewrites.bench import DEPTHS, fitted_exponent, residual_chain
from rewrites.engine import count_eqns
from rewrites.options import Options
from transforms.batching.programs import vmap_program


def bench_vmap(rules: str = "default", depths=DEPTHS, size: int = 8) -> dict:
    options = Options(rules=rules)
    vmap_program(residual_chain(2), [0, None, None], 0, size, options)  # warm up: rule registration
    result = {}
    for label, mapped in (("x batched, weights shared", lambda n: [0] + [None] * (n - 1)),
                          ("every input batched", lambda n: [0] * n)):
        print(f"\nresidual chains, vmap with {label}, batch size {size}, rules={rules}")
        print(f"{'L':>5}{'eqns':>7}{'vmap nodes':>12}{'e-nodes':>10}{'vmap s':>9}{'prelude s':>11}{'batched eqns':>14}")
        rows = []
        for depth in depths:
            closed = residual_chain(depth)
            start = time.perf_counter()
            program, report = vmap_program(closed, mapped(len(closed.jaxpr.invars)), 0, size, options)
            seconds = time.perf_counter() - start
            rows.append((depth, report.prelude_enodes, seconds))
            print(f"{depth:>5}{count_eqns(closed):>7}{report.prelude_enodes:>12}{report.enodes:>10}{seconds:>9.3f}"
                  f"{report.seconds.get('prelude', 0):>11.3f}{count_eqns(program):>14}")
        ls = [r[0] for r in rows]
        exps = (fitted_exponent(ls, [r[1] for r in rows]), fitted_exponent(ls, [r[2] for r in rows]))
        print(f"fitted exponent in L: e-graph after batching {exps[0]:.2f}, vmap time {exps[1]:.2f}")
        result[label] = {"enodes_exponent": exps[0], "seconds_exponent": exps[1]}
    return result


def bench_vs_loop(rules: str = "default", oracle=None, size: int = 3) -> dict:
    """Every oracle program with a vmap fixture, batched at its in_axes: FLOPs and bytes of the batched
    program over B times those of the unbatched one (1 = no work beyond the loop's)."""
    import numpy as np

    from eval.oracle import DEFAULT_ORACLE as ORACLE
    from eval.oracle import load_fixtures, parse_case
    from ir.errors import EqjaxError
    from rewrites.costs import get_cost_model, jaxpr_cost

    models = [get_cost_model("flops"), get_cost_model("bytes")]
    print(f"\nbatched programs vs a loop of {size} (cost of the batched program / {size} x the unbatched one)")
    print(f"{'program':<36}{'flops':>8}{'bytes':>8}{'eqns':>6}{'batched':>9}")
    ratios, skipped = [], []
    for case in load_fixtures([oracle or ORACLE], ["programs"]):
        if "vmap" not in case.raw:
            continue
        closed = parse_case(case)
        try:
            batched, _ = vmap_program(closed, case.raw["vmap"]["in_axes"], 0, size, Options(rules=rules))
        except EqjaxError as e:
            skipped.append((case.id, str(e)))
            continue
        row = [jaxpr_cost(m, batched) / max(size * jaxpr_cost(m, closed), 1) for m in models]
        ratios.append(row)
        print(f"{case.id:<36}{row[0]:>8.3f}{row[1]:>8.3f}{count_eqns(closed):>6}{count_eqns(batched):>9}")
    medians = np.median(np.array(ratios), axis=0)
    print(f"median over {len(ratios)} programs: flops {medians[0]:.3f}, bytes {medians[1]:.3f}; "
          f"skipped {len(skipped)} (control flow, linalg, fft)")
    return {"flops_median": float(medians[0]), "bytes_median": float(medians[1]), "programs": len(ratios)}
