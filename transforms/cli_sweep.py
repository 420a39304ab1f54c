"""`eqjax sweep`: the optimizer over programs × rule sets × cost models × extractors (`rewrites.sweep`).

    eqjax sweep [--programs DIR|FILE]... [--rules default,fast] [--cost flops,latency]
                [--extractor greedy_dag,ilp] [--time-limit S] [--node-limit N] [--iter-limit N] [--per-program]
                [--jobs N] [--scheduler local|tcp://host:8786] [--json-lines PATH [--resume]] [--quiet]

One rich table, a row per combination: programs, failures, summed cost before and after and their ratio,
seconds, e-nodes (median and max) and the stop reasons; `--per-program` adds a table with a row per task. The
JSON lines hold every task's numbers. Programs: *.jaxpr files and fixture files (every case), default the
oracle's whole programs. In `--rules`, an item starting with + or - belongs to the rule set before
it: `default,-mul-comm,fast` is the two sets `default,-mul-comm` and `fast`.
"""

from __future__ import annotations

import sys

from transforms import cli_options
from transforms.cli_study import add_study_args, run_tasks


def add_sweep_parser(sub) -> None:
    s = sub.add_parser("sweep", help="optimize programs under every combination of rule sets, cost models and "
                       "extractors: one table, and JSON lines")
    s.add_argument("--programs", action="append", metavar="DIR|FILE",
                   help="*.jaxpr files, fixture *.json files or directories of them (default: the oracle programs)")
    s.add_argument("--rules", dest="rule_sets", default="default", help="comma-separated rule sets (default: default)")
    s.add_argument("--cost", dest="costs", default="flops", help="comma-separated cost models (default: flops)")
    s.add_argument("--extractor", dest="extractors", default="greedy_dag",
                   help="comma-separated extractors (default: greedy_dag)")
    s.add_argument("--time-limit", type=float, help="seconds of saturation at most, per task")
    s.add_argument("--node-limit", type=int, help="stop saturating past this many e-nodes")
    s.add_argument("--iter-limit", type=int, help="at most this many iterations")
    s.add_argument("--per-program", action="store_true", help="also a table with a row per program and combination")
    s.add_argument("--json", action="store_true", help="the combination rows as JSON instead of the table")
    add_study_args(s)
    s.set_defaults(func=cmd_sweep)


def rule_specs(text: str) -> list[str]:
    """`default,-mul-comm,fast` -> ["default,-mul-comm", "fast"]."""
    specs: list[str] = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        if item[0] in "+-" and specs:
            specs[-1] += f",{item}"
        else:
            specs.append(item)
    return specs


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def cmd_sweep(args) -> int:
    import json

    from eval.oracle import DEFAULT_ORACLE
    from eval.study.programs import program_specs
    from rewrites.sweep import combination_rows, sweep_tasks

    sets, costs, extractors = rule_specs(args.rule_sets), _names(args.costs), _names(args.extractors)
    if not (sets and costs and extractors):
        raise cli_options.UsageError("--rules, --cost and --extractor each name at least one choice")
    for spec in sets:
        cli_options.check_rules(spec)
    for cost in costs:
        cli_options.check_cost(cost)
    for extractor in extractors:
        cli_options.check_extractor(extractor)
    if not args.programs:
        cli_options.require_oracle(DEFAULT_ORACLE, "name the programs: --programs DIR|FILE")
    programs = program_specs(args.programs)
    limits = {"iterations": args.iter_limit, "nodes": args.node_limit, "seconds": args.time_limit}
    study = run_tasks(args, sweep_tasks(programs, sets, costs, extractors, limits), "optimizations")
    rows = combination_rows(study.records)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        _print_tables(args, rows, study)
    for r in study.failed:
        a = r["args"]
        print(f"failed: {a['program']['name']} ({a['rules']}, {a['cost']}, {a['extractor']}): "
              f"{r['error']['type']}: {r['error']['message']}", file=sys.stderr)
    return 1 if study.failed else 0


def _print_tables(args, rows: list[dict], study) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console() if sys.stdout.isatty() else Console(width=200)
    table = Table(title=f"sweep: {len(study.records)} optimizations on {study.executor} ({study.ran} run, "
                  f"{study.reused} from the file), {study.seconds:.1f} s", title_justify="left")
    heads = ("rules", "cost", "extractor", "programs", "failed", "cost before", "cost after", "after/before",
             "seconds", "e-nodes median", "e-nodes max", "stop reasons")
    for head in heads:
        table.add_column(head, justify="left" if head in ("rules", "cost", "extractor", "stop reasons") else "right")
    for r in rows:
        table.add_row(r["rules"], r["cost"], r["extractor"], str(r["programs"]), str(r["failed"]),
                      _number(r["cost_before"]), _number(r["cost_after"]),
                      "-" if r["ratio"] is None else f"{r['ratio']:.3f}", f"{r['seconds']:.1f}",
                      _number(r["enodes_median"]), _number(r["enodes_max"]),
                      ", ".join(f"{k} {n}" for k, n in r["stop_reasons"].items()) or "-")
    console.print(table)
    if args.per_program:
        detail = Table(title="per program", title_justify="left")
        for head in ("program", "rules", "cost", "extractor", "cost before", "cost after", "seconds", "e-nodes",
                     "stop"):
            detail.add_column(head, justify="left" if head in ("program", "rules", "cost", "extractor", "stop")
                              else "right")
        for r in study.records:
            a, x = r["args"], r["result"]
            if x is None:
                detail.add_row(a["program"]["name"], a["rules"], a["cost"], a["extractor"], "-", "-",
                               f"{r['seconds']:.2f}", "-", f"failed: {r['error']['type']}")
                continue
            detail.add_row(a["program"]["name"], a["rules"], a["cost"], a["extractor"], _number(x["cost_before"]),
                           _number(x["cost_after"]), f"{r['seconds']:.2f}", _number(x["enodes"]), x["stop_reason"])
        console.print(detail)


def _number(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not x.is_integer():
        return f"{x:.4g}"
    return f"{x:,.0f}"
