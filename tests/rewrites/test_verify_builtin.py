"""Every built-in rule against the verifier (rewrites.verify): CI fails if a declared class is contradicted
by evidence. And the `eqjax rules verify` command on planted rules: each wrong one is reported with a
counterexample, the right ones pass."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from rewrites.rulecompile import dump_rule
from rewrites.rulesets import all_rules
from rewrites.verify import merge_verdicts, verify_rules
from transforms.cli import main

DATA = Path(__file__).parent / "data"

# Rules the verifier cannot instantiate yet (conditions only the engine evaluates, param variables it does
# not sample): their verdict is `unknown`. The bound keeps the number from growing unnoticed.
MAX_UNKNOWN = 80


def test_no_built_in_rule_is_contradicted_by_evidence():
    verdicts = merge_verdicts(verify_rules([p for r in all_rules() for p in dump_rule(r)]))
    assert len(verdicts) == len(all_rules())
    wrong = [str(v) for v in verdicts if v.verdict in ("misclassified", "unsound")]
    assert not wrong, "\n".join(wrong)
    counts = Counter(v.verdict for v in verdicts)
    assert counts["unknown"] <= MAX_UNKNOWN, counts
    assert all(v.reason for v in verdicts if v.verdict == "unknown")


def test_cli_reports_planted_rules(capsys):
    status = main(["rules", "verify", "--load", str(DATA / "planted.rules"), "--json", "--budget", "100"])
    verdicts = {v["name"]: v for v in json.loads(capsys.readouterr().out)}
    assert status == 1  # some rule is wrong
    expected = {"add-zero-exact": ("misclassified", "real"), "mul-zero-real": ("misclassified", "unsafe"),
                "log-product": ("unsound", "unsound"), "div-self-unguarded": ("misclassified", "unsafe"),
                "add-is-mul": ("unsound", "unsound"), "mul-one": ("ok", "exact"), "log-product-ok": ("ok", "guarded")}
    assert {n: (v["verdict"], v["evidenced"]) for n, v in verdicts.items()} == expected
    for name, (verdict, _) in expected.items():
        assert (verdicts[name]["counterexample"] is not None) == (verdict != "ok"), name
