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

MAPPINGS = {"x batched, weights shared": lambda n: [0] + [None] * (n - 1),
            "every input batched": lambda n: [0] * n}


def vmap_row(label: str, depth: int, size: int, rules: str) -> dict:
    """The task of one timed row of `bench_vmap`: the residual chain of `depth` layers batched as `label` says."""
    closed = residual_chain(depth)
    start = time.perf_counter()
    program, report = vmap_program(closed, MAPPINGS[label](len(closed.jaxpr.invars)), 0, size, Options(rules=rules))
    seconds = time.perf_counter() - start
    return {"depth": depth, "eqns": count_eqns(closed), "prelude_enodes": report.prelude_enodes,
            "enodes": report.enodes, "seconds": seconds, "prelude_s": report.seconds.get("prelude", 0),
            "batched_eqns": count_eqns(program)}


def bench_vmap(rules: str = "default", depths=DEPTHS, size: int = 8, run_rows=None) -> dict:
    """`run_rows` runs the rows' tasks, timed, one at a time (`eval.study.rows.RowRunner`; default: in this process)."""
    from eval.study import RowRunner, Task

    run_rows = run_rows or RowRunner()
    vmap_program(residual_chain(2), [0, None, None], 0, size, Options(rules=rules))  # warm up: rule registration
    result = {}
    for label in MAPPINGS:
        print(f"\nresidual chains, vmap with {label}, batch size {size}, rules={rules}")
        results = run_rows([Task("transforms.batching.bench:vmap_row",
                             {"label": label, "depth": depth, "size": size, "rules": rules}) for depth in depths],
                       "chains batched")
        print(f"{'L':>5}{'eqns':>7}{'vmap nodes':>12}{'e-nodes':>10}{'vmap s':>9}{'prelude s':>11}{'batched eqns':>14}")
        for r in results:
            print(f"{r['depth']:>5}{r['eqns']:>7}{r['prelude_enodes']:>12}{r['enodes']:>10}{r['seconds']:>9.3f}"
                  f"{r['prelude_s']:>11.3f}{r['batched_eqns']:>14}")
        ls = [r["depth"] for r in results]
        exps = (fitted_exponent(ls, [r["prelude_enodes"] for r in results]),
                fitted_exponent(ls, [r["seconds"] for r in results]))
        print(f"fitted exponent in L: e-graph after batching {exps[0]:.2f}, vmap time {exps[1]:.2f}")
        result[label] = {"enodes_exponent": exps[0], "seconds_exponent": exps[1]}
    return result


def vs_loop_row(oracle: str, case_id: str, size: int, rules: str) -> dict:
    """The task of one row of `bench_vs_loop` (it times nothing): the case batched at its in_axes, FLOPs and
    bytes over `size` times the unbatched program's; {"case", "skipped"} for a program we cannot batch."""
    from eval.oracle import parse_case, program_case
    from ir.errors import EqjaxError
    from rewrites.costs import get_cost_model, jaxpr_cost

    case = program_case(case_id, oracle)
    closed = parse_case(case)
    try:
        batched, _ = vmap_program(closed, case.raw["vmap"]["in_axes"], 0, size, Options(rules=rules))
    except EqjaxError as e:
        return {"case": case.id, "skipped": str(e)}
    models = [get_cost_model("flops"), get_cost_model("bytes")]
    return {"case": case.id, "ratios": [jaxpr_cost(m, batched) / max(size * jaxpr_cost(m, closed), 1) for m in models],
            "eqns": count_eqns(closed), "batched_eqns": count_eqns(batched)}


def bench_vs_loop(rules: str = "default", oracle=None, size: int = 3, run_rows=None) -> dict:
    """Every oracle program with a vmap fixture, batched at its in_axes: FLOPs and bytes of the batched
    program over B times those of the unbatched one (1 = no work beyond the loop's). `run_rows` runs the rows' tasks,
    on any executor (`eval.study.rows.RowRunner`; default: in this process)."""
    import numpy as np

    from eval.oracle import DEFAULT_ORACLE as ORACLE
    from eval.oracle import load_fixtures
    from eval.study import RowRunner, Task

    oracle = str(oracle or ORACLE)
    tasks = [Task("transforms.batching.bench:vs_loop_row", {"oracle": oracle, "case_id": case.id, "size": size,
                                                            "rules": rules})
             for case in load_fixtures([oracle], ["programs"]) if "vmap" in case.raw]
    results = (run_rows or RowRunner())(tasks, "programs batched", timed=False)
    print(f"\nbatched programs vs a loop of {size} (cost of the batched program / {size} x the unbatched one)")
    print(f"{'program':<36}{'flops':>8}{'bytes':>8}{'eqns':>6}{'batched':>9}")
    ratios = [r["ratios"] for r in results if "skipped" not in r]
    skipped = [r for r in results if "skipped" in r]
    for r in results:
        if "skipped" not in r:
            print(f"{r['case']:<36}{r['ratios'][0]:>8.3f}{r['ratios'][1]:>8.3f}{r['eqns']:>6}{r['batched_eqns']:>9}")
    medians = np.median(np.array(ratios), axis=0)
    print(f"median over {len(ratios)} programs: flops {medians[0]:.3f}, bytes {medians[1]:.3f}; "
          f"skipped {len(skipped)} (control flow, linalg, fft)")
    return {"flops_median": float(medians[0]), "bytes_median": float(medians[1]), "programs": len(ratios)}
