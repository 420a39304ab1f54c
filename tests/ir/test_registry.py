"""Which property tables each fixture primitive has (DESIGN.md: one primitive, one place per property).

The primitives are every `primitive:NAME` tag of the oracle fixtures plus the names used in the
grad / grad_grad texts of programs.json (those are not tagged). Every one must have a shape/dtype
rule. NumPy implementations are required for the primitives of the foundation families and for
`jit` and `custom_jvp_call`; the other gaps are printed as known (run with `-s` to see the table).
A new property table (JVP, transpose, batching, ...) is one more row of TABLES.
"""

from __future__ import annotations

import importlib
import json
import re

from tests.oracle_paths import ALL_FAMILIES, FOUNDATION_FAMILIES, ORACLE

# (column label, module holding the table, table name, package whose import fills the table)
TABLES = [
    ("shape", "ir.primitives", "SHAPE_RULES", "ir.shapes"),
    ("eval", "eval.registry", "IMPLS", "eval.impls"),
]
EVAL_REQUIRED_EXTRA = {"jit", "custom_jvp_call"}
# An equation line: `binders = name[params] operands` or `binders = name operands`.
EQN_PRIMITIVE = re.compile(r" = ([A-Za-z_][\w\-]*)(?=[\[\s])")


def _cases(family: str) -> list[dict]:
    return json.loads((ORACLE / f"{family}.json").read_text())["cases"]


def fixture_primitives(families=ALL_FAMILIES) -> set[str]:
    names = set()
    for family in families:
        for case in _cases(family):
            names |= {t.removeprefix("primitive:") for t in case["tags"] if t.startswith("primitive:")}
            for key in ("grad", "grad_grad"):
                if key in case:
                    names |= set(EQN_PRIMITIVE.findall(case[key]["jaxpr"]))
    return names


def tables() -> dict[str, dict]:
    loaded = {}
    for label, module, table, filler in TABLES:
        importlib.import_module(filler)
        loaded[label] = getattr(importlib.import_module(module), table)
    return loaded


def registry_table(names: set[str]) -> str:
    columns = tables()
    width = max(map(len, names))
    lines = [f"{'primitive':<{width}}  " + "  ".join(columns)]
    for name in sorted(names):
        marks = (f"{'yes' if name in table else '-':<{len(label)}}" for label, table in columns.items())
        lines.append(f"{name:<{width}}  " + "  ".join(marks))
    return "\n".join(lines)


def test_eqn_regex_finds_the_tagged_primitives():
    # The regex that reads grad texts, checked on texts whose primitives are tagged.
    for case in _cases("control_flow") + _cases("linalg"):
        tagged = {t.removeprefix("primitive:") for t in case["tags"] if t.startswith("primitive:")}
        assert set(EQN_PRIMITIVE.findall(case["jaxpr"])) == tagged, case["id"]


def test_every_fixture_primitive_has_a_shape_rule():
    names = fixture_primitives()
    print("\n" + registry_table(names))
    missing = sorted(n for n in names if n not in tables()["shape"])
    assert missing == []


def test_foundation_primitives_have_numpy_implementations():
    required = fixture_primitives(FOUNDATION_FAMILIES) | EVAL_REQUIRED_EXTRA
    impls = tables()["eval"]
    gaps = sorted(n for n in fixture_primitives() - required if n not in impls)
    print(f"\nknown eval gaps outside the foundation families ({len(gaps)}): {', '.join(gaps)}")
    assert sorted(n for n in required if n not in impls) == []
