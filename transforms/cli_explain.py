"""`eqjax explain FILE`: how the optimized program follows from the input, step by step (rewrites/explain).

    eqjax explain FILE|- [--rules R] [--cost C] [--extractor E] [--samples N] [--json]

Prints one block per step (rule, soundness class, where it applied, the subterm before and after as jaxprs,
the re-check's verdict) and the rules on the derivation. Exit 0 when every step names a rule and agrees on
the samples, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json


def add_explain_parser(sub) -> None:
    from transforms.cli import _non_negative, _optimizer_args

    e = sub.add_parser("explain", help="derive the optimized program from the input, rule by rule, each step "
                                       "re-checked on sample inputs")
    e.add_argument("file", help="a file with jaxpr text, or - for stdin")
    _optimizer_args(e)
    e.add_argument("--samples", type=_non_negative(int), default=6, help="inputs each step is re-checked on")
    e.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    from ir.text import parse_jaxpr
    from rewrites.explain import explain
    from transforms.cli import _limits, _read_text

    closed = parse_jaxpr(_read_text(args.file))
    derivation = explain(closed, rules=args.rules, cost=args.cost, extractor=args.extractor, limits=_limits(args),
                         samples=args.samples)
    if args.json:
        print(json.dumps({"input": str(derivation.program), "optimized": str(derivation.optimized),
                          "complete": derivation.complete, "shaping_rules": dict(derivation.shaping_rules),
                          "steps": [s.as_dict() for s in derivation.steps]}, indent=1))
    else:
        print(derivation)
    return 0 if derivation.complete else 1
