"""Regenerates results/: bits of error of the naive numerical-stability programs, PyTensor's rewritten forms, and what
eqjax extracts under `flops` and under `flops+accuracy`, against the exact results (mpmath), for float64 and
float32.

    .venv/bin/python papers/accuracy/run.py            # results/accuracy.md, accuracy.json, one figure per dtype

Each row is a formula PyTensor's stability rewrites target (pytensor/tensor/rewriting/math.py: log1p/expm1,
log1mexp, sigmoid and softplus forms, logaddexp, logsumexp, log-softmax, erf/erfc complements; the last two over a
vector of 4); its PyTensor column is the form those
rewrites produce, written by hand with PyTensor's own definitions (its softplus is piecewise in x). Errors are
`rewrites.accuracy.measure_accuracy`'s: bits of error per element (0 = correctly rounded, 64 = nothing right
for float64) on its seeded samples (finite values across the whole range, then ±0, ±inf, nan, subnormals and
other special values). Deterministic: no timing is written; the seconds each optimization took are printed.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import ir.numpy as jnp  # noqa: E402
from ir import lax  # noqa: E402
from ir.core import ShapedArray  # noqa: E402
from ir.dtypes import float32, float64  # noqa: E402
from ir.tracing import make_jaxpr  # noqa: E402
from rewrites.accuracy import measure_accuracy  # noqa: E402
from rewrites.engine import optimize  # noqa: E402

exp, log, log1p, expm1, logistic = jnp.exp, jnp.log, jnp.log1p, jnp.expm1, lax.logistic
COLUMNS = ("naive", "PyTensor", "eqjax flops", "eqjax flops+accuracy")


def pytensor_softplus(x):
    """PyTensor's scalar softplus: exp(x) below -37, log1p(exp(x)) below 18, x + exp(-x) below 33.3, else x."""
    return lax.select_n(x < -37.0, lax.select_n(x < 18.0, lax.select_n(x < 33.3, x, x + exp(-x)), log1p(exp(x))),
                        exp(x))


def pytensor_log1mexp(x):
    """PyTensor's log1mexp: log(-expm1(x)) near 0, log1p(-exp(x)) below log(1/2)."""
    return lax.select_n(x < math.log(0.5), log(-expm1(x)), log1p(-exp(x)))


def pytensor_max_shift(x):
    """PyTensor's logsumexp shift: max(x), or 0 where it is infinite."""
    m = jnp.max(x)
    return lax.select_n(jnp.isinf(m), m, jnp.zeros_like(m))


def pytensor_logsumexp(x):
    m = pytensor_max_shift(x)
    return m + log(jnp.sum(exp(x - m)))


def pytensor_log_softmax(x):
    shifted = x - pytensor_max_shift(x)
    return shifted - log(jnp.sum(exp(shifted)))


# (name, naive form, PyTensor's form, operand shapes)
ROWS = [
    ("log(1-x)", lambda x: log(1.0 - x), lambda x: log1p(-x), [()]),
    ("1-exp(x)", lambda x: 1.0 - exp(x), lambda x: -expm1(x), [()]),
    ("log(1-exp(x))", lambda x: log(1.0 - exp(x)), pytensor_log1mexp, [()]),
    ("1-sigmoid(x)", lambda x: 1.0 - logistic(x), lambda x: logistic(-x), [()]),
    ("1/(1+exp(x))", lambda x: 1.0 / (1.0 + exp(x)), lambda x: logistic(-x), [()]),
    ("log(1+exp(x))", lambda x: log(1.0 + exp(x)), pytensor_softplus, [()]),
    ("log(sigmoid(x))", lambda x: log(logistic(x)), lambda x: -pytensor_softplus(-x), [()]),
    ("log(exp(x)+exp(y))", lambda x, y: log(exp(x) + exp(y)),
     lambda x, y: jnp.maximum(x, y) + log1p(exp(-jnp.abs(x - y))), [(), ()]),
    ("log(sum(exp(x)))", lambda x: log(jnp.sum(exp(x))), pytensor_logsumexp, [(4,)]),
    ("log(softmax(x))", lambda x: log(exp(x) / jnp.sum(exp(x))), pytensor_log_softmax, [(4,)]),
    ("1-erf(x)", lambda x: 1.0 - lax.erf(x), lax.erfc, [()]),
    ("1-erfc(x)", lambda x: 1.0 - lax.erfc(x), lax.erf, [()]),
]


def measure_row(name: str, naive, pytensor, shapes: list, dtype) -> dict:
    avals = [ShapedArray(shape, dtype) for shape in shapes]
    program = make_jaxpr(naive)(*avals)
    forms = {"naive": program, "PyTensor": make_jaxpr(pytensor)(*avals)}
    for cost in ("flops", "flops+accuracy"):
        start = time.perf_counter()
        forms[f"eqjax {cost}"], _ = optimize(program, rules="accurate", cost=cost)
        print(f"  {name} {dtype.name} {cost}: {time.perf_counter() - start:.2f} s")
    row = {"name": name, "dtype": dtype.name, "forms": {}}
    for column, form in forms.items():
        [out] = measure_accuracy(program, form)["outputs"]
        row["forms"][column] = {"mean_bits": out["optimized_mean_bits"], "max_bits": out["optimized_max_bits"],
                                "program": str(form)}
    return row


def table(rows: list[dict]) -> list[str]:
    lines = ["| formula | dtype | " + " | ".join(f"{c} mean / max" for c in COLUMNS) + " |",
             "|---|---|" + "---|" * len(COLUMNS)]
    for r in rows:
        cells = [f"{r['forms'][c]['mean_bits']:.2f} / {r['forms'][c]['max_bits']:.0f}" for c in COLUMNS]
        lines.append(f"| `{r['name']}` | {r['dtype']} | " + " | ".join(cells) + " |")
    return lines


def figure(rows: list[dict], dtype: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mine = [r for r in rows if r["dtype"] == dtype]
    fig, ax = plt.subplots(figsize=(11, 4.2))
    width = 0.2
    for k, column in enumerate(COLUMNS):
        ax.bar([i + (k - 1.5) * width for i in range(len(mine))], [r["forms"][column]["mean_bits"] for r in mine],
               width, label=column)
    ax.set_xticks(range(len(mine)), [r["name"] for r in mine], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("mean bits of error")
    ax.set_title(f"{dtype}: error against the exact result (mpmath), per form")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    rows = [measure_row(name, naive, pytensor, shapes, dtype) for dtype in (float64, float32)
            for name, naive, pytensor, shapes in ROWS]
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "accuracy.json").write_text(json.dumps(rows, indent=1) + "\n")
    (out / "accuracy.md").write_text("\n".join(["Bits of error (mean over elements and samples / max) of each form "
                                                "against the exact result; from papers/accuracy/run.py.", "",
                                                *table(rows)]) + "\n")
    for dtype in ("float64", "float32"):
        figure(rows, dtype, out / f"accuracy-{dtype}.png")
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
