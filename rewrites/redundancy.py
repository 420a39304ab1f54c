"""The redundancy suite: hand-made programs with a known optimum, and how many of them the optimizer reaches.

Each case is a program with redundant work (an identity, a cancellation, a repeated or foldable computation, a
longer form of one primitive), the hand-written optimum computing the same function, and the weakest named rule
set whose soundness class allows the rewrite (`strict` for bit-exact rewrites, `default` for those exact over the
reals, `fast` for those that change what special values do). Both are traced with `ir.make_jaxpr` from Python
functions, so the optimum's size is measured, never typed in. A case is *reached* when the optimized program has
no more equations (`count_eqns`) and no more FLOPs (the `flops` cost model) than the optimum.

`eqjax bench optimizer` prints the share reached; `tests/rewrites/test_redundancy.py` checks every optimum against
its program numerically and pins which cases are reached (the misses are listed there with what is missing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ir import lax, make_jaxpr
from ir import numpy as jnp
from ir.core import ClosedJaxpr, ShapedArray
from ir.dtypes import float64


@dataclass(frozen=True)
class Redundant:
    name: str
    rules: str  # the weakest named rule set allowed to reach the optimum
    program: Callable
    optimum: Callable
    math: str
    shapes: tuple[tuple[int, ...], ...] = ((4,),)  # one f64 input per shape
    domain: tuple[float, float] = (-3.0, 3.0)  # where inputs are drawn to compare program and optimum

    def traced(self, f: Callable) -> ClosedJaxpr:
        return make_jaxpr(f)(*[ShapedArray(s, float64) for s in self.shapes])


def _c(name, rules, program, optimum, math, shapes=None, domain=(-3.0, 3.0)) -> Redundant:
    if shapes is None:
        shapes = ((4,),) * program.__code__.co_argcount
    return Redundant(name, rules, program, optimum, math, shapes, domain)


POS = (0.5, 3.0)  # inputs where a guarded identity holds (logs, square roots)
M = ((3, 4),)  # one matrix input

CASES: list[Redundant] = [
    # --- identities and cancellations of one operation ---------------------------------------------------------
    _c("add-zero", "default", lambda x: x + 0.0, lambda x: x, "x + 0 → x (not bit-exact: -0 + 0 = +0)"),
    _c("add-neg-zero", "strict", lambda x: x + (-0.0), lambda x: x, "x + (-0) → x, bit-exact"),
    _c("sub-zero", "strict", lambda x: x - 0.0, lambda x: x, "x - 0 → x"),
    _c("mul-one", "strict", lambda x: x * 1.0, lambda x: x, "x * 1 → x"),
    _c("div-one", "strict", lambda x: x / 1.0, lambda x: x, "x / 1 → x"),
    _c("neg-neg", "strict", lambda x: jnp.negative(-x), lambda x: x, "-(-x) → x"),
    _c("abs-abs", "strict", lambda x: jnp.abs(jnp.abs(x)), lambda x: jnp.abs(x), "|(|x|)| → |x|"),
    _c("abs-neg", "strict", lambda x: jnp.abs(-x), lambda x: jnp.abs(x), "|-x| → |x|"),
    _c("max-self", "strict", lambda x: jnp.maximum(x, x), lambda x: x, "max(x, x) → x"),
    _c("min-self", "strict", lambda x: jnp.minimum(x, x), lambda x: x, "min(x, x) → x"),
    _c("mul-neg-one", "strict", lambda x: x * -1.0, lambda x: -x, "x * -1 → -x"),
    _c("neg-times-neg", "strict", lambda x, y: (-x) * (-y), lambda x, y: x * y, "(-x)(-y) → xy"),
    _c("add-neg", "strict", lambda x, y: x + (-y), lambda x, y: x - y, "x + (-y) → x - y"),
    _c("neg-add", "strict", lambda x, y: (-x) + y, lambda x, y: y - x, "(-x) + y → y - x"),
    _c("sub-neg", "strict", lambda x, y: x - (-y), lambda x, y: x + y, "x - (-y) → x + y"),
    _c("abs-times-abs", "strict", lambda x: jnp.abs(x) * jnp.abs(x), lambda x: x * x, "|x||x| → x²"),
    _c("cos-neg", "strict", lambda x: jnp.cos(-x), lambda x: jnp.cos(x), "cos(-x) → cos x"),
    _c("pow-one", "strict", lambda x: lax.integer_pow(x, 1), lambda x: x, "x¹ → x"),
    _c("select-same", "strict", lambda x, y: jnp.where(x > y, x, x), lambda x, y: x, "select(c, x, x) → x"),
    _c("convert-same", "strict", lambda x: lax.convert_element_type(x, float64), lambda x: x, "f64(x) → x"),
    _c("x-minus-x", "fast", lambda x: x - x, lambda x: jnp.zeros_like(x), "x - x → 0 (not for inf/nan)"),
    _c("x-over-x", "fast", lambda x: x / x, lambda x: jnp.ones_like(x), "x / x → 1 (not for 0/inf/nan)"),
    _c("x-times-zero", "fast", lambda x: x * 0.0, lambda x: jnp.zeros_like(x), "x * 0 → 0 (not for inf/nan)"),
    _c("sign-times-abs", "default", lambda x: jnp.sign(x) * jnp.abs(x), lambda x: x, "sign(x)|x| → x"),
    _c("x-over-abs", "fast", lambda x: x / jnp.abs(x), lambda x: jnp.sign(x), "x/|x| → sign x (0/0 is nan)"),
    # --- sharing and dead code ----------------------------------------------------------------------------------
    _c("cse-sin", "strict", lambda x: jnp.sin(x) + jnp.sin(x), lambda x: (lambda s: s + s)(jnp.sin(x)),
       "sin x computed once"),
    _c("cse-product", "strict", lambda x, y: x * y + x * y, lambda x, y: (lambda p: p + p)(x * y), "xy once"),
    _c("dead-code", "strict", lambda x: (lambda _: x * 2.0)(jnp.exp(jnp.sin(x))), lambda x: x * 2.0,
       "an unused exp(sin x) is dropped"),
    _c("double-by-add", "default", lambda x: x * 2.0 + x * 2.0, lambda x: x * 4.0, "2x + 2x → 4x"),
    _c("x-plus-3x", "default", lambda x: x + 3.0 * x, lambda x: 4.0 * x, "x + 3x → 4x"),
    # --- constants folded and reassociated -----------------------------------------------------------------------
    _c("mul-consts", "default", lambda x: 2.0 * (3.0 * x), lambda x: 6.0 * x, "2(3x) → 6x"),
    _c("add-consts", "default", lambda x: (x + 1.0) + 2.0, lambda x: x + 3.0, "(x + 1) + 2 → x + 3"),
    _c("add-sub-cancel", "fast", lambda x, y: (x + y) - y, lambda x, y: x, "(x + y) - y → x (not for y = ±inf)"),
    _c("sub-reassoc", "fast", lambda x, y: (x + y) - x, lambda x, y: y, "(x + y) - x → y (not for x = ±inf)"),
    _c("scaled-quotient", "default", lambda x, y: (2.0 * x) / (4.0 * y), lambda x, y: 0.5 * x / y,
       "(2x)/(4y) → 0.5·x/y"),
    _c("distribute-factor", "fast", lambda x, y, z: x * y + x * z, lambda x, y, z: x * (y + z),
       "xy + xz → x(y + z) (not for x = ±inf: inf - inf is nan, inf·(y + z) is not)"),
    # --- exp, log, powers ---------------------------------------------------------------------------------------
    _c("exp-times-exp", "default", lambda x, y: jnp.exp(x) * jnp.exp(y), lambda x, y: jnp.exp(x + y),
       "eˣeʸ → eˣ⁺ʸ"),
    _c("exp-over-exp", "default", lambda x, y: jnp.exp(x) / jnp.exp(y), lambda x, y: jnp.exp(x - y),
       "eˣ/eʸ → eˣ⁻ʸ"),
    _c("log-exp", "default", lambda x: jnp.log(jnp.exp(x)), lambda x: x, "log eˣ → x"),
    _c("exp-log", "fast", lambda x: jnp.exp(jnp.log(x)), lambda x: x, "e^(log x) → x (x > 0)", domain=POS),
    _c("log-plus-log", "fast", lambda x, y: jnp.log(x) + jnp.log(y), lambda x, y: jnp.log(x * y),
       "log x + log y → log xy (x, y > 0)", domain=POS),
    _c("sqrt-squared", "fast", lambda x: jnp.sqrt(x) * jnp.sqrt(x), lambda x: x, "√x√x → x (x ≥ 0)", domain=POS),
    _c("sqrt-of-square", "default", lambda x: jnp.sqrt(x * x), lambda x: jnp.abs(x), "√(x²) → |x|"),
    _c("pow-half", "fast", lambda x: x ** 0.5, lambda x: jnp.sqrt(x), "x^0.5 → √x (pow(-inf, 0.5) = inf, √-inf nan)",
       domain=POS),
    _c("pow-two", "default", lambda x: x ** 2.0, lambda x: x * x, "x^2.0 → x·x"),
    _c("recip-sqrt", "default", lambda x: 1.0 / jnp.sqrt(x), lambda x: lax.rsqrt(x), "1/√x → rsqrt x",
       domain=POS),
    _c("log-one-plus", "default", lambda x: jnp.log(1.0 + x), lambda x: jnp.log1p(x), "log(1 + x) → log1p x",
       domain=POS),
    _c("exp-minus-one", "default", lambda x: jnp.exp(x) - 1.0, lambda x: jnp.expm1(x), "eˣ - 1 → expm1 x"),
    _c("logistic-by-hand", "default", lambda x: 1.0 / (1.0 + jnp.exp(-x)), lambda x: lax.logistic(x),
       "1/(1 + e⁻ˣ) → σ(x)"),
    _c("pow2-quotient", "default", lambda x, y: jnp.exp2(x) / jnp.exp2(y), lambda x, y: jnp.exp2(x - y),
       "2ˣ/2ʸ → 2ˣ⁻ʸ"),
    # --- reductions ---------------------------------------------------------------------------------------------
    _c("sum-scaled", "default", lambda x: jnp.sum(2.0 * x), lambda x: 2.0 * jnp.sum(x), "Σ 2x → 2 Σx"),
    _c("sum-of-sums", "default", lambda x: jnp.sum(jnp.sum(x, axis=0)), lambda x: jnp.sum(x), "Σ Σ → Σ", M),
    _c("sum-broadcast", "default", lambda x: jnp.sum(jnp.broadcast_to(jnp.sum(x), (5,))),
       lambda x: 5.0 * jnp.sum(x), "Σ broadcast(s) → 5s"),
    _c("max-broadcast", "strict", lambda x: jnp.max(jnp.broadcast_to(jnp.max(x), (5,))), lambda x: jnp.max(x),
       "max broadcast(s) → s"),
    _c("sum-of-stack", "default", lambda x, y: jnp.sum(jnp.stack([x, y]), axis=0), lambda x, y: x + y,
       "Σ over stack(x, y) → x + y"),
    _c("sum-products", "default", lambda x, y: jnp.sum(x * y), lambda x, y: jnp.dot(x, y), "Σ xy → x·y"),
    # --- data movement ------------------------------------------------------------------------------------------
    _c("transpose-transpose", "strict", lambda x: x.T.T, lambda x: x, "(xᵀ)ᵀ → x", M),
    _c("reshape-reshape", "strict", lambda x: x.reshape(2, 6).reshape(12), lambda x: x.reshape(12), "one reshape",
       M),
    _c("reshape-back", "strict", lambda x: x.reshape(12).reshape(3, 4), lambda x: x, "reshape there and back", M),
    _c("broadcast-broadcast", "strict", lambda x: jnp.broadcast_to(jnp.broadcast_to(x, (3, 4)), (2, 3, 4)),
       lambda x: jnp.broadcast_to(x, (2, 3, 4)), "one broadcast"),
    _c("squeeze-expand", "strict", lambda x: jnp.squeeze(jnp.expand_dims(x, 0), 0), lambda x: x,
       "squeeze(expand_dims x) → x"),
    _c("rev-rev", "strict", lambda x: jnp.flip(jnp.flip(x)), lambda x: x, "rev(rev x) → x"),
    _c("slice-slice", "strict", lambda x: x[1:][1:], lambda x: x[2:], "one slice"),
    _c("full-slice", "strict", lambda x: lax.slice(x, (0,), (4,)), lambda x: x, "x[0:4] → x"),
    _c("concat-of-slices", "strict", lambda x: jnp.concatenate([x[:2], x[2:]]), lambda x: x,
       "concat(x[:2], x[2:]) → x"),
]


@dataclass(frozen=True)
class Outcome:
    name: str
    rules: str
    reached: bool
    eqns: int
    optimum_eqns: int
    flops: float
    optimum_flops: float


def measure(case: Redundant, rules: str | None = None, cost="flops") -> tuple[Outcome, ClosedJaxpr]:
    """Optimize `case` under `rules` (default: its own set) and `cost`; the outcome and the optimized
    program (reached or not is judged by equations and flops whatever `cost` chose by)."""
    from rewrites.costs import get_cost_model, jaxpr_cost
    from rewrites.engine import count_eqns, optimize

    flops = get_cost_model("flops")
    program, optimum = case.traced(case.program), case.traced(case.optimum)
    optimized, _ = optimize(program, rules=rules or case.rules, cost=cost)
    got = (count_eqns(optimized), jaxpr_cost(flops, optimized))
    best = (count_eqns(optimum), jaxpr_cost(flops, optimum))
    reached = got[0] <= best[0] and got[1] <= best[1]
    return Outcome(case.name, rules or case.rules, reached, got[0], best[0], got[1], best[1]), optimized


def sample_inputs(case: Redundant, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(*case.domain, size=s) for s in case.shapes]


def measure_row(name: str, rules: str | None = None) -> dict:
    """The task of one row of `redundancy_table`: the outcome of the case named `name`, as a dict."""
    from dataclasses import asdict

    [case] = [c for c in CASES if c.name == name]
    return asdict(measure(case, rules)[0])


def redundancy_table(rules: str | None = None, run_rows=None) -> list[Outcome]:
    """Every case optimized (under its own rule set, or `rules`), printed as a table with the share reached.
    `run_rows` runs the cases' tasks (`eval.study.rows.RowRunner`; default: in this process); they time nothing,
    so they may run on any executor."""
    from eval.study import RowRunner, Task

    tasks = [Task("rewrites.redundancy:measure_row", {"name": case.name, "rules": rules}) for case in CASES]
    outcomes = [Outcome(**r) for r in (run_rows or RowRunner())(tasks, "redundancy cases", timed=False)]
    print(f"\nredundancy suite: {len(CASES)} hand-made programs with a known optimum"
          f"{'' if rules is None else f', all under rules={rules}'}")
    print(f"{'program':22}{'rules':>8}{'eqns':>6}{'best':>6}{'flops':>8}{'best':>8}  reached")
    for o in outcomes:
        print(f"{o.name:22}{o.rules:>8}{o.eqns:>6}{o.optimum_eqns:>6}{o.flops:>8g}{o.optimum_flops:>8g}  "
              f"{'yes' if o.reached else 'no'}")
    reached = sum(o.reached for o in outcomes)
    print(f"reached the optimum: {reached} of {len(outcomes)} ({reached / len(outcomes):.0%})")
    return outcomes
