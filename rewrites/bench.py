"""`eqjax bench optimizer`: where the optimizer's time goes, on synthetic and on real programs.

Synthetic programs are random DAGs over f64[8,8] values: elementwise unary and binary ops, operands
drawn mostly from the last few values (long dependency chains, like real programs) and sometimes
from far back (sharing), with literals that give the rules something to do (x*1, x+0, -(-x), x/1),
and an occasional transpose pair and matmul. The same seed gives the same program.
"""

from __future__ import annotations

import math
import random
import time
from pathlib import Path

from ir.core import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.dtypes import float64
from ir.typecheck import typecheck

ORACLE = Path(__file__).resolve().parent.parent / "tests" / "oracle"
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


def _run(name: str, closed: ClosedJaxpr, rules: str) -> dict:
    from rewrites.engine import optimize

    t0 = time.perf_counter()
    _, report = optimize(closed, rules=rules)
    total = time.perf_counter() - t0
    s = report.seconds
    row = {"program": name, "eqns": report.eqns_before, "total_s": total, **{f"{k}_s": v for k, v in s.items()},
           "iterations": report.iterations, "stop": report.stop_reason, "enodes": report.enodes,
           "cost_before": report.cost_before, "cost_after": report.cost_after}
    print(f"{name:36}{row['eqns']:>7}{total:>8.2f}{s['encode']:>8.2f}{s['saturate']:>8.2f}"
          f"{s['serialize']:>8.2f}{s['release']:>8.2f}{s['costs']:>8.2f}{s['extract']:>8.2f}{s['decode']:>8.2f}"
          f"{report.enodes:>9}{report.iterations:>5} {report.stop_reason}")
    return row


def bench_optimizer(sizes=(100, 1000, 5000), rules: str = "default") -> list[dict]:
    from eval.oracle import load_fixtures, parse_case
    from rewrites.engine import optimize

    t0 = time.perf_counter()
    optimize(synthetic_program(10), rules=rules)  # registers the rules once per process (reused after)
    print(f"rules={rules}; seconds per phase; one-time rule registration {time.perf_counter() - t0:.2f} s")
    print(f"{'program':36}{'eqns':>7}{'total':>8}{'encode':>8}{'satur.':>8}{'serial.':>8}{'release':>8}"
          f"{'costs':>8}{'extract':>8}{'decode':>8}{'e-nodes':>9}{'iter':>5} stop")
    rows = [_run(f"synthetic/{n}", synthetic_program(n), rules) for n in sizes]
    oracle_total = 0.0
    for case in load_fixtures([ORACLE], ["programs"]):
        rows.append(_run(case.id, parse_case(case), rules))
        oracle_total += rows[-1]["total_s"]
    for i in range(len(sizes) - 1):
        (n0, n1), (t0, t1) = sizes[i:i + 2], (rows[i]["total_s"], rows[i + 1]["total_s"])
        k = math.log(t1 / t0) / math.log(n1 / n0)
        print(f"growth exponent {k:.2f} from {n0} to {n1} equations (time ∝ eqns^k)")
    print(f"oracle programs: {oracle_total:.2f} s in all")
    return rows
