"""`eqjax bench optimizer`: where the optimizer's time goes, on synthetic and on real programs.

Synthetic programs are random DAGs over f64[8,8] values: elementwise unary and binary ops, operands
drawn mostly from the last few values (long dependency chains, like real programs) and sometimes
from far back (sharing), with literals that give the rules something to do (x*1, x+0, -(-x), x/1),
and an occasional transpose pair and matmul. The same seed gives the same program. Last, the redundancy
suite (`rewrites.redundancy`): how many hand-made programs reach their known optimum.
"""

from __future__ import annotations

import math
import random
import time
from pathlib import Path

from ir.core import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.dtypes import float64
from ir.typecheck import typecheck

_UNARY = ("sin", "cos", "exp", "tanh", "neg", "abs", "log1p")
_BINARY = ("add", "sub", "mul", "max")
_MATMUL = {"dimension_numbers": (([1], [0]), ([], [])), "precision": None, "preferred_element_type": float64,
           "out_sharding": None}


def synthetic_program(n_eqns: int, seed: int = 0, n_inputs: int = 4) -> ClosedJaxpr:
    rng = random.Random(seed)
    aval = ShapedArray((8, 8), float64)
    invars = [Var(aval) for _ in range(n_inputs)]
    values: list[Var] = list(invars)
    eqns: list[Eqn] = []

    def pick() -> Var:
        return values[-1 - min(int(rng.expovariate(0.3)), len(values) - 1)] if rng.random() < 0.9 \
            else rng.choice(values)

    def emit(prim: str, operands: list, params: dict | None = None) -> None:
        out = Var(aval)
        eqns.append(Eqn(prim, operands, [out], params or {}))
        values.append(out)

    while len(eqns) < n_eqns:
        r = rng.random()
        if r < 0.08:
            lit = Literal(float64.numpy.type(rng.choice([0.0, 1.0])), ShapedArray((), float64))
            emit("add" if float(lit.value) == 0.0 else "mul", [pick(), lit])
        elif r < 0.12:
            emit("neg", [pick()])
            emit("neg", [values[-1]])
        elif r < 0.15:
            emit("transpose", [pick()], {"permutation": (1, 0)})
            emit("transpose", [values[-1]], {"permutation": (1, 0)})
        elif r < 0.19:
            emit("dot_general", [pick(), pick()], dict(_MATMUL))
        elif r < 0.55:
            emit(rng.choice(_UNARY), [pick()])
        else:
            emit(rng.choice(_BINARY), [pick(), pick()])
    eqns = eqns[:n_eqns]
    closed = ClosedJaxpr(Jaxpr([], invars, [eqns[-1].outvars[0], eqns[-2].outvars[0]], eqns))
    typecheck(closed)
    return closed


def optimizer_row(name: str, rules: str, synthetic: int | None = None) -> dict:
    """The task of one timed row: `optimize` of `synthetic_program(synthetic)`, or of the oracle case `name`."""
    from rewrites.engine import optimize

    if synthetic is not None:
        closed = synthetic_program(synthetic)
    else:
        from eval.oracle import parse_case, program_case

        case = program_case(name)
        closed = parse_case(case)
    t0 = time.perf_counter()
    _, report = optimize(closed, rules=rules)
    total = time.perf_counter() - t0
    return {"program": name, "eqns": report.eqns_before, "total_s": total,
            **{f"{k}_s": v for k, v in report.seconds.items()}, "iterations": report.iterations,
            "stop": report.stop_reason, "enodes": report.enodes, "cost_before": report.cost_before,
            "cost_after": report.cost_after}


def _print_row(row: dict) -> None:
    print(f"{row['program']:36}{row['eqns']:>7}{row['total_s']:>8.2f}"
          + "".join(f"{row[f'{p}_s']:>8.2f}" for p in ("encode", "saturate", "serialize", "release", "costs",
                                                       "extract", "decode"))
          + f"{row['enodes']:>9}{row['iterations']:>5} {row['stop']}")


def bench_optimizer(sizes=(100, 1000, 5000), rules: str = "default", run_rows=None) -> list[dict]:
    """`run_rows` runs the rows' tasks (`eval.study.rows.RowRunner`; default: in this process): the timed rows one at
    a time in this process, the redundancy suite (it times nothing) on the runner's executor."""
    from eval.oracle import DEFAULT_ORACLE, load_fixtures
    from eval.study import RowRunner, Task
    from rewrites.engine import optimize
    from rewrites.redundancy import redundancy_table

    run_rows = run_rows or RowRunner()
    t0 = time.perf_counter()
    optimize(synthetic_program(10), rules=rules)  # registers the rules once per process (reused after)
    print(f"rules={rules}; seconds per phase; one-time rule registration {time.perf_counter() - t0:.2f} s")
    tasks = [Task("rewrites.bench:optimizer_row", {"name": f"synthetic/{n}", "rules": rules, "synthetic": n})
             for n in sizes]
    tasks += [Task("rewrites.bench:optimizer_row", {"name": case.id, "rules": rules})
              for case in load_fixtures([DEFAULT_ORACLE], ["programs"])]
    results = run_rows(tasks, "programs optimized")
    print(f"{'program':36}{'eqns':>7}{'total':>8}{'encode':>8}{'satur.':>8}{'serial.':>8}{'release':>8}"
          f"{'costs':>8}{'extract':>8}{'decode':>8}{'e-nodes':>9}{'iter':>5} stop")
    for row in results:
        _print_row(row)
    for i in range(len(sizes) - 1):
        (n0, n1), (t0, t1) = sizes[i:i + 2], (results[i]["total_s"], results[i + 1]["total_s"])
        k = math.log(t1 / t0) / math.log(n1 / n0)
        print(f"growth exponent {k:.2f} from {n0} to {n1} equations (time ∝ eqns^k)")
    print(f"oracle programs: {sum(r['total_s'] for r in results[len(sizes):]):.2f} s in all")
    bench_scale(run_rows=run_rows)
    redundancy_table(run_rows=run_rows)
    return results


# --- scale: per size, phases, peak memory, extraction growth -------------------------------------------------
SCALE_SIZES = (1_000, 3_000, 10_000)


def repeated(closed: ClosedJaxpr, copies: int) -> ClosedJaxpr:
    """`copies` copies of `closed` side by side over the same inputs, copy i reading its float inputs
    times (1 + i/1024), so that no two copies share a term; the outputs of every copy."""
    jaxpr = closed.jaxpr
    invars = [Var(v.aval) for v in jaxpr.invars]
    eqns: list[Eqn] = []
    outvars: list = []
    for i in range(copies):
        env = {}
        for v, x in zip(jaxpr.invars, invars, strict=True):
            env[id(v)] = x
            if v.aval.dtype.kind == "f":
                scaled = Var(v.aval)
                factor = Literal(v.aval.dtype.numpy.type(1 + i / 1024), ShapedArray((), v.aval.dtype))
                eqns.append(Eqn("mul", [x, factor], [scaled], {}))
                env[id(v)] = scaled
        env.update({id(v): c for v, c in zip(jaxpr.constvars, closed.consts, strict=True)})
        for e in jaxpr.eqns:
            ins = [x if isinstance(x, Literal) else env[id(x)] for x in e.invars]
            outs = [Var(o.aval) for o in e.outvars]
            env.update({id(o): n for o, n in zip(e.outvars, outs, strict=True)})
            eqns.append(Eqn(e.primitive, ins, outs, e.params))
        outvars += [x if isinstance(x, Literal) else env[id(x)] for x in jaxpr.outvars]
    program = ClosedJaxpr(Jaxpr([], invars, outvars, eqns), [])
    typecheck(program)
    return program


def jax_gradient(n_eqns: int, fixture: str = "program/mlp_tanh") -> ClosedJaxpr:
    """JAX's own gradient program of an oracle fixture (`grad.jaxpr`), repeated to about `n_eqns` equations."""
    from eval.oracle import program_case
    from ir.text import parse_jaxpr
    from rewrites.engine import count_eqns

    case = program_case(fixture)
    layer = parse_jaxpr(case.raw["grad"]["jaxpr"])
    return repeated(layer, max(1, round(n_eqns / (count_eqns(layer) + len(layer.jaxpr.invars)))))


def deep_mlp(n_eqns: int, width: int = 8, loss_only: bool = False) -> ClosedJaxpr:
    """A tanh MLP's loss sum(out^2) (`loss_only`) or its gradient with respect to every weight, the backward
    pass written out as JAX would emit it; about `n_eqns` equations (9 per layer with the gradient)."""
    import numpy as np

    import ir.numpy as jnp
    from ir import make_jaxpr

    layers = max(1, n_eqns // (3 if loss_only else 9))

    def forward(x, ws):
        hs = [x]
        for w in ws:
            hs.append(jnp.tanh(hs[-1] @ w))
        return hs

    def loss(x, ws):
        return jnp.sum(forward(x, ws)[-1] ** 2)

    def gradient(x, ws):
        hs = forward(x, ws)
        g, grads = 2.0 * hs[-1], []
        for layer in reversed(range(len(ws))):
            g = g * (1.0 - hs[layer + 1] * hs[layer + 1])
            grads.append(hs[layer].T @ g)
            g = g @ ws[layer].T
        return grads[::-1]

    x, ws = np.ones((4, width)), [np.ones((width, width)) / width] * layers
    return make_jaxpr(loss if loss_only else gradient)(x, ws)


DEPTHS = (8, 16, 32, 64, 128, 256)  # the residual chains' depths of `eqjax bench grad` and `bench vmap`


def residual_chain(depth: int, width: int = 4) -> ClosedJaxpr:
    """h <- h + tanh(h * w_l) for l = 1..depth, loss sum(h): the program of the AD and batching scaling benches."""
    import numpy as np

    import ir.numpy as jnp
    from ir import make_jaxpr

    def loss(x, ws):
        h = x
        for l in range(depth):
            h = h + jnp.tanh(h * ws[l])
        return jnp.sum(h)

    return make_jaxpr(loss)(np.ones(width), [np.ones(width)] * depth)


def fitted_exponent(sizes, values) -> float:
    """The exponent of a log-log least-squares fit of `values` in `sizes` (1: linear)."""
    import numpy as np

    return float(np.polyfit(np.log(sizes), np.log(values), 1)[0])


def residual(n_eqns: int) -> ClosedJaxpr:
    return residual_chain(max(1, n_eqns // 3))


SCALE_CASES = {"mlp_gradient": deep_mlp, "jax_gradient": jax_gradient, "residual_chain": residual}


def scale_case(kind: str, n_eqns: int) -> dict:
    """One case, in this process: `optimize` (kind in SCALE_CASES) or `grad` ("grad:<kind>") of a program of
    about `n_eqns` equations; seconds per phase, CPU seconds, peak resident memory."""
    import resource

    from rewrites.engine import Limits, count_eqns, optimize

    limits = Limits(seconds=600)  # the work itself: on a loaded machine the default 20 s (wall) would cut it
    if kind.startswith("grad:"):
        from rewrites.options import Options
        from transforms.ad.programs import grad_program

        base = kind.split(":", 1)[1]
        closed = deep_mlp(n_eqns, loss_only=True) if base == "mlp" else residual(n_eqns)
        cpu = time.process_time()
        _, report = grad_program(closed, list(range(len(closed.jaxpr.invars))), options=Options(limits=limits))
    else:
        closed = SCALE_CASES[kind](n_eqns)
        cpu = time.process_time()
        _, report = optimize(closed, limits=limits)
    return {"kind": kind, "eqns": count_eqns(closed), "cpu_s": time.process_time() - cpu,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "seconds": report.seconds,
            "enodes": report.enodes, "stop": report.stop_reason, "kept_input": report.kept_input,
            "cost_before": report.cost_before, "cost_after": report.cost_after}


def scale_row(kind: str, n_eqns: int) -> dict:
    """The task of one row of `bench_scale`: `scale_case` in a fresh process (peak memory is per process)."""
    import json
    import subprocess
    import sys

    code = ("import json, sys; from rewrites.bench import scale_case; "
            "print(json.dumps(scale_case(sys.argv[1], int(sys.argv[2]))))")
    out = subprocess.run([sys.executable, "-c", code, kind, str(n_eqns)], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent, check=False)
    if out.returncode != 0:
        return {"kind": kind, "eqns": n_eqns, "error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_scale(kinds=tuple(SCALE_CASES), sizes=SCALE_SIZES, run_rows=None) -> list[dict]:
    """Each case at each size in a fresh process (peak memory is per process): seconds per phase (wall),
    CPU seconds of the whole call, peak RSS, and the fitted growth exponent of extraction time. `run_rows` runs the
    cases' tasks, timed, one at a time (`eval.study.rows.RowRunner`; default: in this process)."""
    import numpy as np

    from eval.study import RowRunner, Task

    tasks = [Task("rewrites.bench:scale_row", {"kind": kind, "n_eqns": n}) for kind in kinds for n in sizes]
    results = iter((run_rows or RowRunner())(tasks, "scale cases"))
    phases = ("encode", "prelude", "saturate", "serialize", "release", "costs", "extract", "decode")
    print("\nscale: one fresh process per case; phases in wall seconds, cpu = the whole call's CPU seconds")
    print(f"{'case':24}{'eqns':>7}{'cpu':>8}{'peak MB':>9}" + "".join(f"{p[:7]:>9}" for p in phases)
          + f"{'e-nodes':>9} stop")
    out = []
    for kind in kinds:
        mine = []
        for _ in sizes:
            row = next(results)
            out.append(row)
            if "error" in row:
                print(f"{kind:24}{row['eqns']:>7}  failed: {row['error']}")
                continue
            if "extract" in row["seconds"]:  # not when the input was kept for lack of time
                mine.append(row)
            s = row["seconds"]
            print(f"{kind:24}{row['eqns']:>7}{row['cpu_s']:>8.2f}{row['peak_mb']:>9.0f}"
                  + "".join(f"{s.get(p, 0):>9.2f}" for p in phases)
                  + f"{row['enodes']:>9} {row['stop']}{' (kept input)' if row['kept_input'] else ''}")
        if len(mine) >= 2:
            k = np.polyfit(np.log([r["eqns"] for r in mine]),
                           np.log([max(r["seconds"]["extract"], 1e-6) for r in mine]), 1)[0]
            print(f"{kind:24}extraction time grows as eqns^{k:.2f}")
    return out
