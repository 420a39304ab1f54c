"""`rules verify` as a sweep (`eval.study`): one task per rule name, run wherever the executor puts it.

    verify_tasks(names, budget=1000, prove=None, text=None, file=None) -> list[Task]
    verdict_of(record, declared) -> Verdict        # a finished task's verdict, also when the task failed

A built-in rule is named (the worker dumps its patterns from its own rule tables); a rule of a text file
travels as the file's text, so a worker on another machine needs nothing but eqjax. Each task verifies every
form of its rule and merges them (`merge_verdicts`), and returns `Verdict.to_dict()`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from eval.study import Task
from rewrites.pattern import PatternRule
from rewrites.verify.classify import Verdict, merge_verdicts, verify_rules

MODULE = "rewrites.verify.study"


def verify_tasks(names: Sequence[str], budget: int, prove: float | None = None, text: str | None = None,
                 file: str | None = None) -> list[Task]:
    """One task per rule name, in order: built-in rules, or (`text` given) rules of that rule file's text."""
    settings = {"budget": budget, "prove": prove}
    if text is None:
        return [Task(f"{MODULE}:verify_builtin_rule", {"name": n, **settings}) for n in names]
    return [Task(f"{MODULE}:verify_text_rule", {"name": n, "text": text, "file": file or "<text>", **settings})
            for n in names]


def verify_builtin_rule(name: str, budget: int, prove: float | None) -> dict:
    return _verify(_builtin_patterns()[name], budget, prove)


def verify_text_rule(name: str, text: str, file: str, budget: int, prove: float | None) -> dict:
    return _verify([p for p in _text_patterns(text, file) if p.name == name], budget, prove)


def _verify(patterns: list[PatternRule], budget: int, prove: float | None) -> dict:
    [verdict] = merge_verdicts(verify_rules(patterns, budget=budget, prove=prove))
    return verdict.to_dict()


@cache
def _builtin_patterns() -> dict[str, list[PatternRule]]:
    from rewrites.ruledump import dump_rule
    from rewrites.rulesets import all_rules

    out: dict[str, list[PatternRule]] = {}
    for rule in all_rules():
        for p in dump_rule(rule):
            out.setdefault(p.name, []).append(p)
    return out


@cache
def _text_patterns(text: str, file: str) -> tuple[PatternRule, ...]:
    from rewrites.ruletext import parse_rules

    return tuple(parse_rules(text, file))


def verdict_of(record: dict, declared: str) -> Verdict:
    """The verdict a finished task returned, or `unknown` with the task's error as the reason."""
    if record["error"] is None:
        return Verdict.from_dict(record["result"], seconds=record["seconds"])
    error = record["error"]
    return Verdict(record["args"]["name"], declared, "unknown", "", "", "unknown",
                   reason=f"the verification task failed: {error['type']}: {error['message']}",
                   seconds=record["seconds"])
