"""Regenerates results/: the verdict of every built-in rule (rewrites.verify) as a table and as JSON.

    .venv/bin/python papers/rule-soundness/run.py [--jobs N] [--scheduler local|tcp://host:8786]
                                                  [--json-lines PATH [--resume]] [--only NAME,...] [--out DIR]

One `eval.study` task per rule (`rewrites.verify.study`): `--jobs N` verifies on N worker processes, `--scheduler`
on Dask, `--json-lines` keeps each finished rule's verdict so `--resume` continues a stopped run; the files are
the same whichever ran it. `--only` verifies the named rules and `--out` writes elsewhere (a quick look).
Every `exact` rule is also put to the SMT solver z3 (`rewrites.verify.smt`, `PROVE_SECONDS` per rule and
dtype): the `z3` column, and a summary per dtype. Deterministic: the verifier's seeds are fixed, the rules
come in module order, and no timing is written, so running it twice gives identical files (a `timeout`
verdict depends on the machine; with this limit none occurs here). The slowest proofs are printed, not
written.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from rewrites.rulesets import all_rules  # noqa: E402
from rewrites.verify.study import verdict_of, verify_tasks  # noqa: E402
from transforms.cli_options import UsageError  # noqa: E402
from transforms.cli_study import add_study_args, run_tasks, script_main  # noqa: E402

BUDGET = 1000  # hypothesis examples per rule and dtype, as `eqjax rules verify` uses
PROVE_SECONDS = 120.0  # z3's limit per rule and dtype: far above the slowest proof (about 10 s)
SMT_STATUSES = ("proved", "refuted", "unconfirmed", "timeout", "unknown", "not modelled")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_study_args(p)
    p.add_argument("--only", help="comma-separated rule names (default: every built-in rule)")
    p.add_argument("--out", type=Path, default=HERE / "results", help="where the tables go (default results/)")
    args = p.parse_args()
    rules = all_rules()
    if args.only:
        names = {n.strip() for n in args.only.split(",") if n.strip()}
        if names - {r.name for r in rules}:
            p.error(f"no built-in rule named {', '.join(sorted(names - {r.name for r in rules}))}")
        rules = tuple(r for r in rules if r.name in names)
    try:
        study = run_tasks(args, verify_tasks([r.name for r in rules], BUDGET, PROVE_SECONDS), "rules verified")
    except UsageError as e:
        p.error(str(e))
    declared = {r.name: r.soundness for r in rules}
    verdicts = [verdict_of(record, declared[record["args"]["name"]]) for record in study.records]
    category = {r.name: r.category for r in rules}
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "verdicts.json").write_text(json.dumps([v.to_dict() for v in verdicts], indent=1) + "\n")
    lines = ["| rule | category | declared | evidenced | symbolic | numeric | z3 | verdict | counterexample / reason |",
             "|---|---|---|---|---|---|---|---|---|"]
    for v in verdicts:
        why = str(v.counterexample) if v.counterexample else v.reason
        smt = str(v.smt) if v.smt else ""
        lines.append(f"| {v.name} | {category[v.name]} | {v.declared} | {v.evidenced} | {_cell(v.symbolic)} | "
                     f"{_cell(v.numeric)} | {_cell(smt)} | {v.verdict} | {_cell(why)} |")
    counts = Counter(v.verdict for v in verdicts)
    by_class = Counter((v.declared, v.verdict) for v in verdicts)
    summary = [f"{len(verdicts)} built-in rules: " + ", ".join(f"{counts[k]} {k}" for k in
                                                                   ("ok", "misclassified", "unsound", "unknown")),
               "", "| declared | ok | misclassified | unsound | unknown |", "|---|---|---|---|---|"]
    for cls in ("exact", "real", "guarded", "unsafe"):
        summary.append(f"| {cls} | " + " | ".join(str(by_class[(cls, k)]) for k in
                                                  ("ok", "misclassified", "unsound", "unknown")) + " |")
    summary += ["", *_smt_summary(verdicts)]
    (out / "verdicts.md").write_text("\n".join(summary + ["", *lines]) + "\n")
    print("\n".join(summary))
    slowest = sorted(study.records, key=lambda r: -r["seconds"])[:8]
    print("slowest rules (verification and z3): " + ", ".join(f"{r['args']['name']} {r['seconds']:.1f} s"
                                                               for r in slowest))
    kept = f", {study.reused} from {args.json_lines}" if args.json_lines else ""
    print(f"{study.ran} rules verified now{kept}, on {study.executor}, {study.seconds:.0f} s")


def _smt_summary(verdicts) -> list[str]:
    """z3 on the exact rules: per rule, per dtype (the dtypes a rule is instantiated at), and why not modelled."""
    exact = [v for v in verdicts if v.smt is not None]
    rule_counts = Counter(v.smt.status for v in exact)
    lines = [f"z3 on the {len(exact)} exact rules: " + ", ".join(f"{rule_counts[k]} {k}" for k in SMT_STATUSES),
             "", "| dtype | " + " | ".join(SMT_STATUSES) + " |", "|---|" + "---|" * len(SMT_STATUSES)]
    by_dtype = Counter((c.dtype, c.status) for v in exact for c in v.smt.checks)
    for dtype in dict.fromkeys(c.dtype for v in exact for c in v.smt.checks):
        lines.append(f"| {dtype} | " + " | ".join(str(by_dtype[(dtype, k)]) for k in SMT_STATUSES) + " |")
    uninstantiable = sum(not v.smt.checks for v in exact)
    lines.append(f"| no instance | {' | '.join('0' for _ in SMT_STATUSES[:-1])} | {uninstantiable} |")
    return lines


if __name__ == "__main__":
    script_main(main)
