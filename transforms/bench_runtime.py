"""`eqjax bench runtime`: eqjax's programs timed side by side with JAX's, in one run.

For every workload of `transforms.runtime_suite` (realistic sizes) and every oracle program:

| column        | what runs                                                                          |
|---------------|------------------------------------------------------------------------------------|
| jax.jit       | `jax.jit` of the original program rebuilt with JAX (`eval.to_jax`); a gradient is `jax.grad` of it |
| numpy         | eqjax's optimized program as generated NumPy (`eval.compile_numpy`)                |
| numpy fused   | the same with elementwise chains fused by numexpr (`compile_numpy(fuse=True)`)     |
| interpreter   | eqjax's optimized program in the reference interpreter                             |
| op by op      | the original under `jax.disable_jit()` (JAX dispatching one primitive at a time)   |
| xla opt       | `jax.jit` of eqjax's optimized program                                             |

eqjax's optimized program is `optimize(original)` for a function and the program `ir.make_jaxpr(grad(f))`
extracts for a gradient. Times are medians over interleaved rounds of wall-clock calls that wait for their results
(`eval.measure.time_side_by_side`: every system measured in each round, so load changes touch all alike),
printed as ratios to jax.jit; first-call times (trace + optimize + compile + run against trace +
compile + run) are measured in fresh processes. Every system runs with the same thread settings
(`--threads N` pins BLAS, numexpr and XLA's pools; the default leaves each at all cores).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import partial

SYSTEMS = ("numpy", "numpy fused", "interpreter", "op by op", "xla opt")
TARGETS = {"large": ("numpy", 1.0), "oracle": ("numpy", 2.0)}


@dataclass
class Row:
    name: str
    suite: str  # "large" or "oracle"
    eqns_before: int
    eqns_after: int
    jax_jit: float  # seconds
    ratios: dict[str, float | None] = field(default_factory=dict)  # system -> time / jax.jit
    notes: list[str] = field(default_factory=list)


def _systems(original, optimized, args, argnums, min_time: float) -> tuple[float, dict[str, float | None], list]:
    """jax.jit's seconds, and each system's time as a ratio to it (measured side by side, interleaved)."""
    import jax

    from eval.backends import block, runner
    from eval.codegen import compile_numpy
    from eval.measure import time_side_by_side
    from eval.xla import to_jax

    rebuilt = to_jax(original)
    jax_fn = rebuilt if argnums is None else jax.grad(lambda *a: rebuilt(*a)[0], argnums)
    device_args = [jax.device_put(a) for a in args]
    jitted = jax.jit(jax_fn)

    def op_by_op():
        with jax.disable_jit():
            return jax_fn(*device_args)

    makers = {"jax.jit": lambda: (lambda: jitted(*device_args)),
              "numpy": lambda: partial(runner(optimized, "numpy"), *args),
              "numpy fused": lambda: partial(compile_numpy(optimized, fuse=True), *args),
              "interpreter": lambda: partial(runner(optimized, "interpreter"), *args),
              "op by op": lambda: op_by_op,
              "xla opt": lambda: partial(runner(optimized, "xla"), *device_args)}
    runs, notes = {}, []
    for system, make in makers.items():
        try:
            run = make()
            block(run())  # a system that cannot run a program is reported, not hidden
            runs[system] = lambda run=run: block(run())
        except Exception as e:
            notes.append(f"{system}: {type(e).__name__}: {e}")
    times = {name: statistics.median(t) for name, t in time_side_by_side(runs, min_time).items()}
    base = times.pop("jax.jit")
    return base, {s: (times[s] / base if s in times else None) for s in SYSTEMS}, notes


def runtime_row(suite: str, name: str, min_time: float, threads: int | None) -> dict:
    """The task of one timed row: the `runtime_suite` workload (suite "large") or oracle program (suite "oracle")
    `name`, optimized and timed on every system beside jax.jit with `threads` (`pin_threads`); the `Row`'s fields."""
    import ir
    from rewrites.engine import optimize

    pin_threads(threads)
    if suite == "large":
        from transforms import grad
        from transforms.runtime_suite import workloads

        [w] = [w for w in workloads() if w.name == name]
        original = ir.make_jaxpr(w.fun)(*w.args)
        if w.is_grad:
            optimized = ir.make_jaxpr(grad(w.fun, argnums=w.argnums))(*w.args)
        else:
            optimized = optimize(original)[0]
        args, argnums = w.args, w.argnums
    else:
        from eval.oracle import parse_case, program_case

        case = program_case(f"program/{name}")
        original = parse_case(case)
        optimized = optimize(original)[0]
        args, argnums = case.arrays("args"), None
    base, ratios, notes = _systems(original, optimized, args, argnums, min_time)
    return Row(name, suite, len(original.eqns), len(optimized.eqns), base, ratios, notes).__dict__


def row_tasks(suite: str, min_time: float, threads: int | None, only: set[str] | None = None) -> list:
    """A task per row of the suite ("all", "large" or "oracle"), in the report's order."""
    from eval.oracle import DEFAULT_ORACLE, load_fixtures
    from eval.study import Task
    from transforms.runtime_suite import workloads

    names = []
    if suite in ("all", "large"):
        names += [("large", w.name) for w in workloads()]
    if suite in ("all", "oracle"):
        names += [("oracle", c.id.removeprefix("program/")) for c in load_fixtures([DEFAULT_ORACLE], ["programs"])]
    return [Task("transforms.bench_runtime:runtime_row", {"suite": part, "name": name, "min_time": min_time,
                                                          "threads": threads})
            for part, name in names if not only or name in only]


# --- first calls, each in a fresh process ----------------------------------------------------------------

_FIRST_CALL = """
import json, time
t0 = time.perf_counter()
import numpy as np
from transforms.runtime_suite import workloads
work = [w for w in workloads() if w.name == WORKLOAD][0]
if SYSTEM == "eqjax":
    from transforms import grad, jit
    t1 = time.perf_counter()
    f = jit(grad(work.fun, argnums=work.argnums) if work.is_grad else work.fun)
    np.asarray(f(*work.args)[0])
else:
    import ir, jax
    from eval.xla import to_jax
    rebuilt = to_jax(ir.make_jaxpr(work.fun)(*work.args))
    t1 = time.perf_counter()
    f = jax.grad(lambda *a: rebuilt(*a)[0], work.argnums) if work.is_grad else rebuilt
    jax.block_until_ready(jax.jit(f)(*work.args))
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_call_s": t2 - t1}))
"""


def first_calls(workload: str = "mlp_grad") -> dict[str, dict]:
    """A workload's first call in fresh processes: eqjax `jit(grad(f))` (cold, then with its on-disk cache
    warm) and `jax.jit(jax.grad(f))` (for a function, `jit(f)` and `jax.jit(f)`)."""
    out = {}
    with tempfile.TemporaryDirectory() as cache_dir:
        env = {**os.environ, "EQJAX_CACHE_DIR": cache_dir, "EQJAX_CACHE": "on"}
        for label, system in (("eqjax cold", "eqjax"), ("eqjax cached", "eqjax"), ("jax.jit", "jax")):
            script = f"SYSTEM = {system!r}\nWORKLOAD = {workload!r}\n" + _FIRST_CALL
            done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
            if done.returncode != 0:
                out[label] = {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
            else:
                out[label] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


# --- the report -------------------------------------------------------------------------------------------


def pin_threads(n: int | None) -> None:
    """The same thread count for BLAS, numexpr, generated NumPy's elementwise splitting and XLA (XLA's
    must be set before JAX starts)."""
    if n is None:
        return
    flags = f"--xla_cpu_multi_thread_eigen={'true' if n > 1 else 'false'} intra_op_parallelism_threads={n}"
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()
    os.environ["NUMEXPR_NUM_THREADS"] = str(n)
    import numexpr
    from threadpoolctl import threadpool_limits

    from eval.codegen import runtime

    numexpr.set_num_threads(n)
    threadpool_limits(n)
    runtime.set_num_threads(n)


def summary(rows: list[Row]) -> dict:
    """Median ratios per suite and system, and the targets checked."""
    out: dict = {}
    for suite in ("large", "oracle"):
        chosen = [r for r in rows if r.suite == suite]
        if not chosen:
            continue
        medians = {}
        for system in SYSTEMS:
            values = [r.ratios[system] for r in chosen if r.ratios.get(system) is not None]
            medians[system] = statistics.median(values) if values else None
        out[suite] = medians
    xla = [r.ratios["xla opt"] for r in rows if r.ratios.get("xla opt") is not None]
    out["xla opt worst"] = max(xla) if xla else None
    redundant = [r.ratios["xla opt"] for r in rows if r.name.startswith("redundant_") and r.ratios.get("xla opt")]
    out["xla opt redundant median"] = statistics.median(redundant) if redundant else None
    return out


def _ratio(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def print_report(rows: list[Row], firsts: dict, stats: dict, machine: dict, workload: str = "mlp_grad") -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 120))
    table = Table(title="eqjax bench runtime: time / jax.jit (lower is faster)")
    for col in ("program", "eqns", "jax.jit", *SYSTEMS):
        table.add_column(col, justify="left" if col == "program" else "right")
    for r in rows:
        table.add_row(f"{r.name}", f"{r.eqns_before}->{r.eqns_after}", f"{r.jax_jit * 1e6:,.0f} µs",
                      *(_ratio(r.ratios.get(s)) for s in SYSTEMS))
    console.print(table)
    for r in rows:
        for note in r.notes:
            console.print(f"[yellow]{r.name}[/yellow] {note}")
    for suite, (system, target) in TARGETS.items():
        if suite in stats:
            got = stats[suite][system]
            console.print(f"{suite} suite: median {system} / jax.jit = {_ratio(got)} (target <= {target}); "
                          + ", ".join(f"{s} {_ratio(v)}" for s, v in stats[suite].items()))
    console.print(f"xla opt / jax.jit: worst {_ratio(stats['xla opt worst'])} (target <= 1.0 within noise), "
                  f"redundant_* median {_ratio(stats['xla opt redundant median'])} (target <= 0.8)")
    for label, result in firsts.items():
        if "error" in result:
            console.print(f"first call, {label}: {result['error']}")
        else:
            console.print(f"first call of {workload}, {label}: {result['first_call_s']:.2f} s "
                          f"(imports {result['import_s']:.2f} s)")
    pools = sorted({f"{p['internal_api']} {p['num_threads']} threads" for p in machine["blas"]})
    console.print(f"machine: {machine['cpu']}, {machine['cores']} cores, {', '.join(pools)}")


def bench_runtime(suite: str = "all", threads: int | None = None, min_time: float = 0.2, as_json: bool = False,
                  only: set[str] | None = None, first: bool = True, run_rows=None) -> dict:
    """`run_rows` runs the rows' tasks, timed, one at a time (`eval.study.rows.RowRunner`; default: in this process),
    the first calls' too (each a fresh process)."""
    pin_threads(threads)
    from eval import machine
    from eval.study import RowRunner, Task

    run_rows = run_rows or RowRunner()
    measured = [Row(**r) for r in run_rows(row_tasks(suite, min_time, threads, only), "programs timed")]
    firsts = run_rows([Task("transforms.bench_runtime:first_calls", {})], "first calls")[0] if first else {}
    stats = summary(measured)
    fp = machine.fingerprint()
    result = {"rows": [r.__dict__ for r in measured], "first_calls": firsts, "summary": stats, "machine": fp,
              "threads": threads}
    if as_json:
        print(json.dumps(result, indent=1))
    else:
        print_report(measured, firsts, stats, fp)
    return result
