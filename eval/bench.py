"""`eqjax bench eval`: the interpreter's and the generated code's own cost per equation on small arrays.

For every oracle program, the time of `eval_jaxpr` is compared with the time of making exactly the
same NumPy implementation calls directly (recorded once, nested jaxprs included, replayed in a plain
loop): the difference divided by the number of equations run is the interpreter's overhead per
equation, control flow (jit, scan, while, cond) included. The same difference for the program compiled
by `compile_numpy` is the generated code's; it is below zero where its inline NumPy expressions do less
than the implementations they replace (no dispatch, widening or re-casting).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from eval.codegen import compile_numpy
from eval.interpreter import _PLANS, eval_jaxpr
from eval.oracle import DEFAULT_ORACLE, load_fixtures, parse_case, program_case
from eval.registry import IMPLS
from ir.errors import EqjaxError
from ir.primitives import PRIMITIVES


def _record_leaf_calls(closed, args) -> list:
    """Every (impl, operands, params) call of a primitive that is not higher order, in run order,
    nested jaxprs included: exactly the NumPy work of one evaluation."""
    calls = []

    def recording(fn):
        def run(*operands, **params):
            calls.append((fn, operands, params))
            return fn(*operands, **params)
        return run

    saved = dict(IMPLS)
    try:
        for name, fn in saved.items():
            if name in PRIMITIVES and not PRIMITIVES[name].higher_order:
                IMPLS[name] = recording(fn)
        _PLANS.clear()
        eval_jaxpr(closed, *args)
    finally:
        IMPLS.update(saved)
        _PLANS.clear()
    return calls


def _best_time(run, repeats: int) -> float:
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(repeats):
            run()
        times.append((time.perf_counter() - t0) / repeats)
    return min(times)


def eval_row(case_id: str, repeats: int) -> dict:
    """The task of one row: the oracle program `case_id` timed in the interpreter, as generated NumPy and as its
    leaf calls replayed; {"case", "skipped"} for a program the interpreter cannot run."""
    case = program_case(case_id)
    try:
        closed = parse_case(case)
        args = case.arrays("args")
        eval_jaxpr(closed, *args)
    except EqjaxError as e:
        return {"case": case.id, "skipped": str(e)}
    calls = _record_leaf_calls(closed, args)

    def direct():
        for fn, operands, params in calls:
            fn(*operands, **params)

    compiled = compile_numpy(closed)
    with np.errstate(all="ignore"):
        t_interp = _best_time(lambda: eval_jaxpr(closed, *args), repeats)
        t_numpy = _best_time(lambda: compiled(*args), repeats)
        t_direct = _best_time(direct, repeats)
    n = len(calls)
    return {"case": case.id, "eqns": n, "interp_us": t_interp * 1e6, "numpy_us": t_numpy * 1e6,
            "direct_us": t_direct * 1e6, "overhead_us_per_eqn": (t_interp - t_direct) * 1e6 / max(n, 1),
            "numpy_overhead_us_per_eqn": (t_numpy - t_direct) * 1e6 / max(n, 1)}


def bench_eval(repeats: int = 200, run_rows=None) -> list[dict]:
    """`run_rows` runs the rows' tasks, timed, one at a time (`eval.study.rows.RowRunner`; default: in this process)."""
    from eval.study import RowRunner, Task

    tasks = [Task("eval.bench:eval_row", {"case_id": case.id, "repeats": repeats})
             for case in load_fixtures([DEFAULT_ORACLE], ["programs"])]
    results = (run_rows or RowRunner())(tasks, "programs timed")
    for row in results:
        if "skipped" in row:
            print(f"{row['case']:40} skipped: {row['skipped']}")
    rows = [row for row in results if "skipped" not in row]
    print(f"{'program':40}{'eqns':>6}{'eval µs':>10}{'numpy µs':>10}{'direct µs':>11}{'eval µs/eqn':>13}"
          f"{'numpy µs/eqn':>14}")
    for r in rows:
        print(f"{r['case']:40}{r['eqns']:>6}{r['interp_us']:>10.1f}{r['numpy_us']:>10.1f}{r['direct_us']:>11.1f}"
              f"{r['overhead_us_per_eqn']:>13.2f}{r['numpy_overhead_us_per_eqn']:>14.2f}")
    if rows:
        eqns = sum(r["eqns"] for r in rows)
        for label, key, col in (("interpreter", "overhead_us_per_eqn", "interp_us"),
                                ("generated NumPy", "numpy_overhead_us_per_eqn", "numpy_us")):
            per = [r[key] for r in rows]
            total = sum(r[col] - r["direct_us"] for r in rows) / eqns
            print(f"{label}: median overhead {statistics.median(per):.2f} µs/eqn, pooled {total:.2f} µs/eqn "
                  f"over {len(rows)} programs ({eqns} equations)")
    return rows
