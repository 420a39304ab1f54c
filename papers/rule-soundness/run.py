"""Regenerates results/: the verdict of every built-in rule (rewrites.verify) as a table and as JSON.

    .venv/bin/python papers/rule-soundness/run.py

Deterministic: the verifier's seeds are fixed, the rules come in module order, and no timing is written,
so running it twice gives identical files.
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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main() -> None:
    rules = all_rules()
    verdicts = merge_verdicts(verify_rules([p for r in rules for p in dump_rule(r)], budget=BUDGET))
    category = {r.name: r.category for r in rules}
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "verdicts.json").write_text(json.dumps([v.to_dict() for v in verdicts], indent=1) + "\n")
    lines = ["| rule | category | declared | evidenced | symbolic | numeric | verdict | counterexample / reason |",
             "|---|---|---|---|---|---|---|---|"]
    for v in verdicts:
        why = str(v.counterexample) if v.counterexample else v.reason
        lines.append(f"| {v.name} | {category[v.name]} | {v.declared} | {v.evidenced} | {_cell(v.symbolic)} | "
                     f"{_cell(v.numeric)} | {v.verdict} | {_cell(why)} |")
    counts = Counter(v.verdict for v in verdicts)
    by_class = Counter((v.declared, v.verdict) for v in verdicts)
    summary = [f"{len(verdicts)} built-in rules: " + ", ".join(f"{counts[k]} {k}" for k in
                                                                   ("ok", "misclassified", "unsound", "unknown")),
               "", "| declared | ok | misclassified | unsound | unknown |", "|---|---|---|---|---|"]
    for cls in ("exact", "real", "guarded", "unsafe"):
        summary.append(f"| {cls} | " + " | ".join(str(by_class[(cls, k)]) for k in
                                                  ("ok", "misclassified", "unsound", "unknown")) + " |")
    (out / "verdicts.md").write_text("\n".join(summary + ["", *lines]) + "\n")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
