"""Regenerates results/: the verdict of every built-in rule (rewrites.verify) as a table and as JSON.

    .venv/bin/python papers/rule-soundness/run.py

Every `exact` rule is also put to the SMT solver z3 (`rewrites.verify.smt`, `PROVE_SECONDS` per rule and
dtype): the `z3` column, and a summary per dtype. Deterministic: the verifier's seeds are fixed, the rules
come in module order, and no timing is written, so running it twice gives identical files (a `timeout`
verdict depends on the machine; with this limit none occurs here). The slowest proofs are printed, not
written.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from rewrites.ruledump import dump_rule  # noqa: E402
from rewrites.rulesets import all_rules  # noqa: E402
from rewrites.verify import merge_verdicts, verify_rules  # noqa: E402

BUDGET = 1000  # hypothesis examples per rule and dtype, as `eqjax rules verify` uses
PROVE_SECONDS = 120.0  # z3's limit per rule and dtype: far above the slowest proof (about 10 s)
SMT_STATUSES = ("proved", "refuted", "unconfirmed", "timeout", "unknown", "not modelled")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main() -> None:
    rules = all_rules()
    verdicts = merge_verdicts(verify_rules([p for r in rules for p in dump_rule(r)], budget=BUDGET,
                                           prove=PROVE_SECONDS))
    category = {r.name: r.category for r in rules}
    out = HERE / "results"
    out.mkdir(exist_ok=True)
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
    checks = sorted(((c.seconds, v.name, c.dtype) for v in verdicts if v.smt for c in v.smt.checks), reverse=True)
    print("slowest z3 checks: " + ", ".join(f"{name} {dtype} {s:.1f} s" for s, name, dtype in checks[:8]))
    print(f"z3 in all: {sum(v.smt.seconds for v in verdicts if v.smt):.0f} s")


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
    main()
