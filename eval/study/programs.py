"""Programs as task arguments: {"name", "jaxpr": text, "consts": [fixture ARRAY objects]} (consts only when the
program has constants), so a worker anywhere parses the program itself.

    program_specs(["progs/", "tests/oracle/programs.json"])   # *.jaxpr files and fixture cases, sorted by file
    program_specs()                                             # the oracle's whole programs (family programs)
    load_program(spec) -> ClosedJaxpr
    program_spec(name, closed) -> spec     # the inverse: a program made in memory, as a task argument or result

These are the programs `rewrites.effect.corpus` reads, in the same order and with the same names.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ir.core import ClosedJaxpr
from ir.errors import EqjaxError


class NoPrograms(EqjaxError):
    """The paths named hold no program (no *.jaxpr file, no fixture case)."""


def program_specs(paths: Iterable[str | Path] | None = None) -> list[dict[str, Any]]:
    from eval.oracle import DEFAULT_ORACLE, load_fixtures

    if paths is None:
        return [_case_spec(c) for c in load_fixtures([DEFAULT_ORACLE], ["programs"])]
    specs = []
    for p in map(Path, paths):
        files = sorted(p.glob("*.jaxpr")) + sorted(p.glob("*.json")) if p.is_dir() else [p]
        for f in files:
            if f.suffix == ".json":
                specs += [_case_spec(c) for c in load_fixtures([f])]
            else:
                specs.append({"name": f.stem, "jaxpr": f.read_text(encoding="utf-8")})
    if not specs:
        raise NoPrograms(f"no *.jaxpr file or fixture case under {', '.join(map(str, paths)) or '(no path)'}")
    return specs


def _case_spec(case) -> dict[str, Any]:
    spec = {"name": case.id, "jaxpr": case.jaxpr_text}
    if "consts" in case.raw:
        spec["consts"] = case.raw["consts"]
    return spec


def load_program(spec: dict[str, Any]) -> ClosedJaxpr:
    from eval.oracle import decode_array
    from ir.text import parse_jaxpr

    closed = parse_jaxpr(spec["jaxpr"])
    if "consts" in spec:
        closed = ClosedJaxpr(closed.jaxpr, [decode_array(a) for a in spec["consts"]])
    return closed


def program_spec(name: str, closed: ClosedJaxpr) -> dict[str, Any]:
    """`closed` as a spec `load_program` reads back (its text, and its constants as fixture ARRAY objects)."""
    from eval.oracle import encode_array
    from ir.text import print_jaxpr

    spec = {"name": name, "jaxpr": print_jaxpr(closed)}
    if closed.consts:
        spec["consts"] = [encode_array(c) for c in closed.consts]
    return spec
