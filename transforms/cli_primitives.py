"""`eqjax primitives`: the primitive catalogue's coverage matrix (transforms/coverage.py).

    eqjax primitives [--json]

Prints one line per catalogue row (ir/primitives) with how each property is provided (shape rule, NumPy
implementation, cost, JVP, VJP, batching), then the named gaps with their reasons, then the problems:
a property missing without a named gap, a named gap that is provided now, a registry entry for a
primitive without a row. Exit 0 when there are none, 1 otherwise. `--json` prints one object with the
rows (operands, results, params, traits, gaps), the matrix and the problems.
"""

from __future__ import annotations

import argparse
import json


def add_primitives_parser(sub) -> None:
    p = sub.add_parser("primitives", help="the primitive catalogue and which properties each primitive has")
    p.add_argument("--json", action="store_true", help="one JSON object: rows, matrix and problems")
    p.set_defaults(func=cmd_primitives)


def _row_json(row) -> dict:
    return {"operands": str(row.operands), "results": str(row.results),
            "params": {name: p.kind for name, p in row.params.items()}, "traits": sorted(row.traits),
            "linear_in": list(row.linear_in), "gaps": dict(row.gaps)}


def cmd_primitives(args: argparse.Namespace) -> int:
    from ir.primitives import PRIMITIVES
    from transforms.coverage import coverage_matrix, format_matrix, problems

    matrix = coverage_matrix()
    found = problems(matrix)
    if args.json:
        print(json.dumps({"primitives": {name: {**_row_json(row), "coverage": matrix[name]}
                                         for name, row in PRIMITIVES.items()},
                          "problems": found}, indent=1))
    else:
        print(format_matrix(matrix))
        if found:
            print("\nproblems:\n" + "\n".join(f"  {line}" for line in found))
    return 1 if found else 0
