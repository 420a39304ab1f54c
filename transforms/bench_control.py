"""`eqjax bench control`: e-graph size and time of loops against trip count and body size.

A `scan` (a tanh recurrence, `depth` operations per step, over `length` rows) and a `while` (the same
step until a counter reaches `length`) are optimized, differentiated (the scan: grad; the while: JVP,
JAX having no reverse mode for it) and batched (vmap over the initial carry). Bodies are terms in the
e-graph, so its size should not depend on the trip count at all, and grow linearly with the body; the
fitted exponent in the body size says how far it is from linear.

Then the loop rewrites: a scan whose step also computes `invariant` operations of its const alone,
optimized and differentiated. It prints the equations left in loop bodies, how many were hoisted and how
many dead loop outputs were dropped, the flops cost (and with the loop-aware parts off, `loops=False`),
and NumPy's time for the original and the optimized program at 1024 trips.
"""

from __future__ import annotations

import time

import numpy as np

from ir import lax, make_jaxpr
from ir import numpy as jnp
from rewrites.bench import fitted_exponent
from rewrites.options import Options
from transforms.ad.programs import grad_program, jvp_program
from transforms.batching.programs import vmap_program

LENGTHS = (4, 64, 1024)
DEPTHS = (2, 8, 32, 128)


def _step(h, x, w, depth: int):
    for _ in range(depth // 2):
        h = jnp.tanh(h * w + x)
    return h


def scan_program(length: int, depth: int, width: int = 4):
    def f(h0, xs, w):
        def body(h, x):
            h = _step(h, x, w, depth)
            return h, jnp.sum(h)
        h, ys = lax.scan(body, h0, xs)
        return jnp.sum(h) + jnp.sum(ys)
    return make_jaxpr(f)(np.ones(width), np.ones((length, width)), np.ones(width))


def while_program(length: int, depth: int, width: int = 4):
    def f(h0, w):
        def body(state):
            i, h = state
            return i + 1, _step(h, w, w, depth)
        return jnp.sum(lax.while_loop(lambda s: s[0] < length, body, (0, h0))[1])
    return make_jaxpr(f)(np.ones(width), np.ones(width))


def _transforms(kind: str, options: Options) -> dict:
    if kind == "scan":
        return {"optimize": lambda c: jvp_program(c, [], options),
                "grad": lambda c: grad_program(c, [0, 1, 2], options=options),
                "vmap": lambda c: vmap_program(c, [0, None, None], 0, 8, options)}
    return {"optimize": lambda c: jvp_program(c, [], options),
            "jvp": lambda c: jvp_program(c, [0, 1], options),
            "vmap": lambda c: vmap_program(c, [0, None], 0, 8, options)}


def invariant_program(invariant: int, length: int = 1024, width: int = 16):
    def f(h0, xs, w):
        def body(h, x):
            g = w
            for k in range(invariant):
                g = jnp.sin(g) + float(k) if k % 2 else jnp.cos(g) * 0.5
            h = jnp.tanh(h * g + x)
            return h, jnp.sum(h)
        h, ys = lax.scan(body, h0, xs)
        return jnp.sum(h) + jnp.sum(ys)
    return make_jaxpr(f)(np.ones(width), np.ones((length, width)), np.ones(width))


def _body_eqns(closed) -> int:
    return sum(len(e.params["jaxpr"].jaxpr.eqns) for e in closed.jaxpr.eqns if e.primitive == "scan")


def _seconds(closed, args, repeats: int = 5) -> float:
    from eval.interpreter import eval_jaxpr

    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        eval_jaxpr(closed, *args)
        best = min(best, time.perf_counter() - start)
    return best


_BUILDS = {"optimize": lambda c, o: jvp_program(c, [], o),
           "grad": lambda c, o: grad_program(c, [0, 1, 2], options=o)}


def loop_rewrite_row(invariant: int, build: str, rules: str) -> list:
    """The task of one timed row of `bench_loop_rewrites`: body equations before and after, hoisted, pruned,
    flops before, after and with the loop-aware parts off, NumPy seconds before and after."""
    options, off = Options(rules=rules), Options(rules=rules, loops=False)
    closed = invariant_program(invariant)
    args = [np.full(a.shape, 0.1) for a in closed.in_avals]
    program, report = _BUILDS[build](closed, options)
    return [_body_eqns(closed), _body_eqns(program), report.loops_hoisted, report.loops_pruned,
            report.cost_before, report.cost_after, _BUILDS[build](closed, off)[1].cost_after,
            _seconds(closed, args), _seconds(program, args)]


def bench_loop_rewrites(rules: str = "default", invariants=(0, 4, 16), run_rows=None) -> dict:
    """`run_rows` runs the rows' tasks, timed, one at a time (`eval.study.rows.RowRunner`; default: in this process)."""
    from eval.study import RowRunner, Task

    tasks = [Task("transforms.bench_control:loop_rewrite_row", {"invariant": n, "build": name, "rules": rules})
             for n in invariants for name in _BUILDS]
    results = iter((run_rows or RowRunner())(tasks, "loop rewrites"))
    print(f"\nloop rewrites: scan of 1024 trips whose step has N operations on its const alone, rules={rules}")
    print(f"{'N':>4}{'program':>9}{'body eqns':>12}{'after':>7}{'hoisted':>9}{'pruned':>8}{'flops before':>14}"
          f"{'after':>12}{'loops off':>12}{'numpy s':>10}{'after':>9}")
    result = {}
    for n in invariants:
        for name in _BUILDS:
            row = tuple(next(results))
            result[(n, name)] = row
            print(f"{n:>4}{name:>9}{row[0]:>12}{row[1]:>7}{row[2]:>9}{row[3]:>8}{row[4]:>14,}{row[5]:>12,}"
                  f"{row[6]:>12,}{row[7]:>10.4f}{row[8]:>9.4f}")
    return result


def control_row(kind: str, length: int, depth: int, rules: str) -> list:
    """The task of one timed row of `bench_control`: [e-nodes, seconds] of each transform of the `kind` loop."""
    make = {"scan": scan_program, "while": while_program}[kind]
    closed = make(length, depth)
    return [_row(build, closed) for build in _transforms(kind, Options(rules=rules)).values()]


def _row(build, closed) -> tuple[int, float]:
    start = time.perf_counter()
    _, report = build(closed)
    return report.enodes, time.perf_counter() - start


def bench_control(rules: str = "default", lengths=LENGTHS, depths=DEPTHS, run_rows=None) -> dict:
    """`run_rows` runs the rows' tasks, timed, one at a time (`eval.study.rows.RowRunner`; default: in this process)."""
    from eval.study import RowRunner, Task

    run_rows = run_rows or RowRunner()
    options = Options(rules=rules)
    result = {}
    for kind, make in (("scan", scan_program), ("while", while_program)):
        transforms = _transforms(kind, options)
        for build in transforms.values():
            build(make(2, 2))  # warm up: rule registration
        names = list(transforms)
        header = "".join(f"{n + ' nodes':>16}{n + ' s':>12}" for n in names)
        sizes = [(length, 8) for length in lengths] + [(16, depth) for depth in depths]
        cells = iter(run_rows([Task("transforms.bench_control:control_row",
                                {"kind": kind, "length": length, "depth": depth, "rules": rules})
                           for length, depth in sizes], f"{kind} loops"))
        print(f"\n{kind}: trip count (body of 8 operations), rules={rules}")
        print(f"{'length':>8}{header}")
        for length in lengths:
            row = [tuple(cell) for cell in next(cells)]
            result[(kind, "length", length)] = row
            print(f"{length:>8}" + "".join(f"{nodes:>16}{seconds:>12.3f}" for nodes, seconds in row))
        print(f"{kind}: body size (trip count 16)")
        print(f"{'ops':>8}{header}")
        by_depth = []
        for depth in depths:
            row = [tuple(cell) for cell in next(cells)]
            by_depth.append(row)
            result[(kind, "depth", depth)] = row
            print(f"{depth:>8}" + "".join(f"{nodes:>16}{seconds:>12.3f}" for nodes, seconds in row))
        fits = [fitted_exponent(depths, [r[k][0] for r in by_depth]) for k in range(len(names))]
        print("fitted exponent of e-graph size in body size: "
              + ", ".join(f"{n} {e:.2f}" for n, e in zip(names, fits, strict=True)))
    result["loops"] = bench_loop_rewrites(rules, run_rows=run_rows)
    return result
