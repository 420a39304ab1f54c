"""Regenerates results/: bits of error of the naive numerical-stability programs, PyTensor's rewritten forms, and what
eqjax extracts under `flops` and under `flops+accuracy`, against the exact results (mpmath), for float64 and
float32.

    .venv/bin/python papers/accuracy/run.py [--jobs N] [--scheduler local|tcp://host:8786]
                                            [--json-lines PATH [--resume]] [--out DIR]

writes results/accuracy.md, accuracy.json and one figure per dtype. One `eval.study` task per row and dtype
(`rewrites.accuracy.stability_rows`): `--jobs N` measures on N worker processes, `--scheduler` on Dask,
`--json-lines` keeps each finished row so `--resume` continues a stopped run; the files are the same whichever
ran it.

Each row is a formula PyTensor's stability rewrites target (pytensor/tensor/rewriting/math.py: log1p/expm1,
log1mexp, sigmoid and softplus forms, logaddexp, logsumexp, log-softmax, erf/erfc complements; logsumexp and
log-softmax over a vector of 4); its PyTensor column is the form those rewrites produce, written by hand with
PyTensor's own definitions (its softplus is piecewise in x). Errors are
`rewrites.accuracy.measure_accuracy`'s: bits of error per element (0 = correctly rounded, 64 = nothing right
for float64) on its seeded samples (finite values across the whole range, then ±0, ±inf, nan, subnormals and
other special values). Deterministic: no timing is written; the seconds each row took are printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from eval.study import Task  # noqa: E402
from rewrites.accuracy.stability_rows import COLUMNS, ROWS  # noqa: E402
from transforms.cli_options import UsageError  # noqa: E402
from transforms.cli_study import add_study_args, run_tasks, script_main  # noqa: E402


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
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_study_args(p)
    p.add_argument("--out", type=Path, default=HERE / "results", help="where the results go (default results/)")
    args = p.parse_args()
    tasks = [Task("rewrites.accuracy.stability_rows:measure_row", {"name": name, "dtype": dtype})
             for dtype in ("float64", "float32") for name, *_ in ROWS]
    try:
        study = run_tasks(args, tasks, "rows measured")
    except UsageError as e:
        p.error(str(e))
    for record in study.failed:
        raise SystemExit(f"{record['args']}: {record['error']}")
    for record in study.records:
        print(f"  {record['args']['name']} {record['args']['dtype']}: {record['seconds']:.2f} s")
    rows = [record["result"] for record in study.records]
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "accuracy.json").write_text(json.dumps(rows, indent=1) + "\n")
    (out / "accuracy.md").write_text("\n".join(["Bits of error (mean over elements and samples / max) of each form "
                                                "against the exact result; from papers/accuracy/run.py.", "",
                                                *table(rows)]) + "\n")
    for dtype in ("float64", "float32"):
        figure(rows, dtype, out / f"accuracy-{dtype}.png")
    print("\n".join(table(rows)))


if __name__ == "__main__":
    script_main(main)
