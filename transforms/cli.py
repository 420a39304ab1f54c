"""The `eqjax` command line.

    eqjax demo                         trace a small MLP loss, optimize it through the e-graph, evaluate it
    eqjax optimize FILE|- [--rules R] [--cost C] [--extractor E] [--node-limit N] [--iter-limit N]
                   [--time-limit S] [--json]   optimized jaxpr on stdout, the report on stderr
                   (--cost: ops, flops, bytes, latency[-numpy|-xla], learned:PATH)
                   [--certificate run.json]      also write the run's certificate (rewrites/certificate.py)
    eqjax replay run.json [--json]     re-run a certificate's optimize run and confirm its output and verdict:
                                       exit 0 confirmed, 1 not confirmed (which field), 2 malformed certificate
    eqjax sample FILE|- [-k K] [--seed S] [optimize's options]
                                       up to K distinct equivalent programs from one saturated e-graph
    eqjax rules list [--set S] [--json]
    eqjax rules semantics [--programs N] [--sets strict,default,fast] [--family F] [--seed S] [--jobs J] [--json]
                                       random programs + fixtures optimized and compared, failures blamed on rules
    eqjax conformance PATH... [--check out,...] [--family F] [--optimize [--rules R]] [--json] [-v]
    eqjax grad FILE|- [--argnums 0,1]  the optimized gradient program of a scalar-output jaxpr
    eqjax jvp FILE|- / vjp FILE|-      the optimized JVP program (primals, tangents) / VJP program
      (conformance, grad, jvp, vjp: --custom-rules FILE.py runs a Python file that registers the custom
      derivative rules the jaxprs name, see ir/custom_rules.py; repeatable)
    eqjax explain FILE|-               the optimized program derived from the input, rule by rule, each step
                                       re-checked on sample inputs (transforms/cli_explain.py)
    eqjax show FILE|- --out X.html|X.svg  the saturated e-graph as an HTML page, or the program before and after
                                       optimization as an SVG (transforms/cli_show.py)
    eqjax primitives [--json]          the primitive catalogue: each primitive's shape rule, NumPy impl, cost, JVP,
                                       VJP and batching, and the named gaps (transforms/cli_primitives.py)
    eqjax check FILE|-                 parse + typecheck a jaxpr text, print it back and its fingerprint
    eqjax eval FILE|- [--args NPZ]     evaluate a jaxpr text (zeros, or arrays from an .npz file)
    eqjax measure FILE|- [--args NPZ] [--backend numpy,interpreter,xla] [--json]
                                       time a jaxpr text: median, IQR, count, machine fingerprint
    eqjax bench eval                   interpreter overhead per equation over the oracle programs
    eqjax bench optimizer              saturate/extract times; the redundancy suite's share reached
    eqjax bench grad                   reverse-mode growth on residual chains; FLOPs vs JAX's gradients
    eqjax bench runtime [--suite large|oracle] [--threads N] [--json]
                                       eqjax's programs timed beside jax.jit, op by op and XLA (ratios)
    eqjax bench extraction [--data DIR] [--timeout S] [--json]
                                       eqjax's extractors beside extraction-gym's on its e-graphs (default: the
                                       bundled subset; DIR: a checkout's data/), rewrites/extract/gym_bench.py
    eqjax bench ... [--json-lines PATH [--resume]] [--jobs N] [--scheduler ADDR] [--quiet]
                                       a row per task (transforms/cli_study.py); timed rows run one at a time here
    eqjax sweep [--programs DIR|FILE] [--rules default,fast] [--cost flops,latency] [--extractor greedy_dag,ilp]
                                       the optimizer over every combination: one table, and JSON lines
                                       (transforms/cli_sweep.py)
      (sweep, conformance, rules verify, rules effect: --jobs N, --scheduler local|tcp://host:8786,
      --json-lines PATH, --resume, --quiet run their tasks as a study, eval/study/, transforms/cli_study.py)
    eqjax calibrate --backend numpy|xla [--out PATH] [--quick] [--primitives a,b] [--json]
                                       measure this machine's latency profile (rewrites/latency); writes it
                                       to the user cache directory, where LatencyModel.for_backend finds it

User mistakes (malformed or ill-typed text, an unsupported primitive, an option value that names nothing:
that line lists the valid choices, transforms/cli_options.py) print one line naming the problem and exit
with status 2; conformance failures exit with status 1; Ctrl-C in a study keeps its finished tasks and exits
with status 130. The fixtures read by default (eval.oracle.DEFAULT_ORACLE)
are a checkout's tests/oracle/, or the copy an installed wheel carries.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from eval.oracle import DEFAULT_ORACLE
from eval.study import StudyInterrupted
from ir.errors import EqjaxError, clipped
from rewrites.options import DEFAULT_OPTIONS, Options
from transforms import cli_options
from transforms.cli_explain import add_explain_parser
from transforms.cli_options import UsageError
from transforms.cli_primitives import add_primitives_parser
from transforms.cli_show import add_show_parser
from transforms.cli_study import add_study_args, preparing, run_tasks
from transforms.cli_sweep import add_sweep_parser


def _read_text(path: str) -> str:
    """A file's (or stdin's, for '-') text, which must be UTF-8: a `JaxprSyntaxError` at the first bad byte."""
    from ir.text import decode_source

    return decode_source(sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes())


def cmd_conformance(args) -> int:
    from eval.oracle import ALL_CHECKS, load_fixtures, summarize
    from transforms.checks import register_checks
    from transforms.conformance_study import conformance_tasks, outcomes_of

    register_checks()

    checks = [c.strip() for c in args.check.split(",") if c.strip()]
    unknown = [c for c in checks if c not in ALL_CHECKS]
    if unknown or not checks:
        raise UsageError(f"--check: unknown check(s) {', '.join(unknown) or '(none given)'}; choose from "
                         f"{', '.join(ALL_CHECKS)}")
    if args.optimize:
        cli_options.check_rules(args.rules)
    if not args.paths:
        cli_options.require_oracle(DEFAULT_ORACLE, "name fixture files or directories: eqjax conformance PATH...")
    cases = load_fixtures(args.paths or [DEFAULT_ORACLE], _families(args))
    custom = [(path, Path(path).read_text(encoding="utf-8")) for path in args.custom_rules or []]
    tasks = conformance_tasks(cases, checks, args.rules if args.optimize else None, custom)
    outcomes = outcomes_of(run_tasks(args, tasks, "cases checked").records) + _checks_without_data(cases, checks)
    table, counts = summarize(outcomes)
    if args.json:
        print(json.dumps({"summary": counts, "outcomes": [o.__dict__ for o in outcomes]}, indent=1))
    else:
        for o in outcomes:
            if o.status == "failed" or (args.verbose and o.status == "skipped"):
                print(f"{o.status.upper():8} {o.check:10} {o.case}: {o.reason}")
        print(table)
    return 1 if counts["failed"] else 0


def _families(args) -> list[str]:
    """--family, repeatable or comma-separated."""
    return [f.strip() for spec in args.family or [] for f in spec.split(",") if f.strip()]


def _checks_without_data(cases, checks) -> list:
    """A check a case has no data for counts as skipped, with the reason: `--check grad` over the primitive
    families reports their cases skipped rather than nothing at all."""
    from eval.oracle import Outcome

    program_only = {"grad", "hessian", "vmap_grad", "grad_grad"}
    out = []
    for case in cases:
        for check in checks:
            if check in case.raw:
                continue
            if check in program_only and case.family != "programs":
                reason = f"no {check} data: the oracle records {check} for whole programs only (family programs)"
            else:
                reason = (f"no {check} data: JAX refuses that transform here, or the oracle records it only where it "
                          "applies (tests/oracle/README.md)")
            out.append(Outcome(case.id, case.family, check, "skipped", reason))
    return out


def _limits(args):
    from rewrites.engine import Limits

    base = Limits()  # an option left out keeps the default; 0 means 0

    def given(value, default):
        return default if value is None else value

    return Limits(iterations=given(args.iter_limit, base.iterations), nodes=given(args.node_limit, base.nodes),
                  seconds=given(args.time_limit, base.seconds))


def _options(args, **overrides):
    """The optimizer's `Options` from the options `_optimizer_args` declares (and `overrides`)."""
    return Options(rules=args.rules, cost=args.cost, extractor=args.extractor, limits=_limits(args),
                   loops=getattr(args, "loops", DEFAULT_OPTIONS.loops), **overrides)


def _non_negative(kind):
    """An argparse type: a number of `kind` that is at least 0."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value >= 0:  # also rejects nan
            raise argparse.ArgumentTypeError(f"must be at least 0: {text!r}")
        return value
    parse.__name__ = kind.__name__
    return parse


def cmd_optimize(args) -> int:
    from ir.text import parse_jaxpr
    from rewrites.engine import optimize

    closed = parse_jaxpr(_read_text(args.file))
    optimized, report = optimize(closed, options=_options(args), certificate=bool(args.certificate),
                                 trace=args.trace, accuracy=args.accuracy)
    if args.certificate:
        certificate, report.certificate = report.certificate, None  # written to its own file, not in the report
        Path(args.certificate).write_text(json.dumps(certificate, indent=1) + "\n")
        print(f"certificate: {args.certificate} (differential check: {certificate['differential']['verdict']})",
              file=sys.stderr)
    return _print_program(args, optimized, report)


def cmd_replay(args) -> int:
    """Exit 0 when the certificate is confirmed, 1 when not (or its rules changed), 2 when it is malformed."""
    from rewrites.certificate import CertificateError, RulesChanged, replay

    try:
        certificate = json.loads(Path(args.file).read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CertificateError(f"{args.file} is not JSON: {e}") from None
    try:
        result = replay(certificate)
    except RulesChanged as e:
        print(json.dumps({"confirmed": False, "error": str(e)}) if args.json else f"NOT confirmed: {e}")
        return 1
    print(json.dumps(result.as_dict(), indent=1) if args.json else result.summary())
    return 0 if result.confirmed else 1


def cmd_sample(args) -> int:
    """Up to k distinct equivalent programs of one saturated e-graph, each with its cost under --cost."""
    from ir.text import parse_jaxpr
    from rewrites.costs import get_cost_model, jaxpr_cost
    from rewrites.engine import saturated
    from rewrites.extract import sample_saturated

    closed = parse_jaxpr(_read_text(args.file))
    sat = saturated(closed, args.rules, _limits(args), loops=args.loops)
    programs = sample_saturated(sat, k=args.k, seed=args.seed, cost=args.cost)
    model = get_cost_model(args.cost)
    if args.json:
        print(json.dumps([{"jaxpr": str(p), "cost": jaxpr_cost(model, p)} for p in programs], indent=1))
        return 0
    for i, p in enumerate(programs):
        print(f"# sample {i}: {len(p.eqns)} equations, cost ({model.name}) {jaxpr_cost(model, p):,.6g}")
        print(p)
    return 0


def _print_program(args, program, report) -> int:
    """The program on stdout and the report on stderr, or both as one JSON object with --json."""
    if args.json:
        print(json.dumps({"jaxpr": str(program), "report": report.as_dict()}, indent=1))
    else:
        print(program)
        print(report.summary(), file=sys.stderr)
    return 0


def cmd_derivative(args) -> int:
    from ir.text import parse_jaxpr
    from transforms.ad.build import float_positions
    from transforms.ad.programs import grad_program, jvp_program, vjp_program

    closed = parse_jaxpr(_read_text(args.file))
    options = _options(args, measure_transformed=True)
    floats = float_positions(closed.jaxpr.invars)
    if args.command == "grad":
        outs = closed.jaxpr.outvars
        if len(outs) != 1 or outs[0].aval.shape != ():
            raise UsageError(f"the program must have one scalar output, not {', '.join(str(v.aval) for v in outs)}")
        argnums = cli_options.parse_argnums(args.argnums, closed.jaxpr.invars)
        program, report = grad_program(closed, argnums, options=options)
    elif args.command == "jvp":
        program, report = jvp_program(closed, floats, options)
    else:
        program, report = vjp_program(closed, floats, seed="inputs", options=options)
    return _print_program(args, program, report)


def _axes(text: str | None, n: int, what: str) -> list[int | None]:
    """`0,None,-1` (one per input/output) or one entry for all."""
    items = [t.strip() for t in (text or "0").split(",")]
    try:
        axes = [None if t.lower() == "none" else int(t) for t in items]
    except ValueError:
        raise UsageError(f"{what} must be comma-separated ints or None, got {text!r}") from None
    if len(axes) == 1:
        return axes * n
    if len(axes) != n:
        raise UsageError(f"{what} has {len(axes)} entries for {n} values")
    return axes


def cmd_vmap(args) -> int:
    from ir.text import parse_jaxpr
    from transforms.batching.programs import vmap_program

    closed = parse_jaxpr(_read_text(args.file))
    options = _options(args, measure_transformed=True)
    in_axes = _axes(args.in_axes, len(closed.jaxpr.invars), "--in-axes")
    out_axes = _axes(args.out_axes, len(closed.jaxpr.outvars), "--out-axes")
    program, report = vmap_program(closed, in_axes, out_axes, args.axis_size, options)
    return _print_program(args, program, report)


def cmd_rules(args) -> int:
    from rewrites.rulesets import rules_in_set

    cli_options.check_rule_set(args.set, "--set", ("ad", "vmap"))
    if args.set == "ad":
        from transforms.ad.programs import ad_rules

        rules = list(ad_rules())
    elif args.set == "vmap":
        from transforms.batching.programs import vmap_rules

        rules = list(vmap_rules())
    else:
        rules = rules_in_set(args.set)
    if args.json:
        print(json.dumps([{"name": r.name, "category": r.category, "soundness": r.soundness, "math": r.math}
                          for r in rules], indent=1))
    elif args.format == "text":
        from rewrites.ruledump import dump_rules

        print(dump_rules(rules, f"eqjax rule set {args.set!r}"))
    else:
        for r in rules:
            print(r)
        print(f"{len(rules)} rules in set {args.set!r}")
    return 0


def _read_rule_text(path: str) -> str:
    """A rule file's text: bytes that are not UTF-8 are a `RuleSyntaxError` at their place."""
    from ir.errors import JaxprSyntaxError
    from rewrites.ruletext import RuleSyntaxError

    try:
        return _read_text(path)
    except JaxprSyntaxError as e:
        raise RuleSyntaxError("the file is not valid UTF-8", path, e.line, e.column, "UTF-8 text") from None


def _rules_to_verify(args, text: str | None) -> dict[str, str]:
    """{name: declared class} of the rules `rules verify` checks: a file's (--load, its `text`), else the built-in
    ones (by name: the workers dump their patterns), named or all, in order."""
    if args.load:
        from rewrites.ruletext import parse_rules

        declared = {p.name: p.soundness for p in parse_rules(text, args.load)}
    else:
        from rewrites.rulesets import all_rules

        declared = {r.name: r.soundness for r in all_rules()}
    if args.names:
        unknown = sorted(set(args.names) - set(declared))
        if unknown:
            raise UsageError(f"no rule named {', '.join(unknown)} (`eqjax rules list` names them)")
        declared = {name: soundness for name, soundness in declared.items() if name in set(args.names)}
    return declared


def cmd_rules_verify(args) -> int:
    import time

    start = time.perf_counter()
    prove = args.prove_timeout if args.prove else None
    if prove is not None:
        from rewrites.verify.smt import require_solver

        if args.set != "algebra":
            raise UsageError("--prove checks the algebraic rules (--set algebra)")
        if not prove > 0:
            raise UsageError(f"--prove-timeout must be positive, got {prove:g}")
        require_solver()
    if args.set in ("ad", "vmap"):
        cli_options.require_oracle(DEFAULT_ORACLE, f"--set {args.set} checks its rules on the oracle's equations")
        verdicts = _verify_transforms(args)
    else:
        verdicts = _verify_algebra(args, prove)
    seconds = time.perf_counter() - start
    if args.json:
        print(json.dumps([v.to_dict() for v in verdicts], indent=1))
    else:
        smt_head = f"{'z3':<14}" if prove is not None else ""
        print(f"{'rule':<30}{'class':<9}{'evidence':<10}{'symbolic':<12}{'numeric':<12}{smt_head}{'verdict':<15}"
              "counterexample")
        for v in verdicts:
            cex = str(v.counterexample) if v.counterexample else (v.reason if v.verdict != "ok" else "")
            if prove is not None and v.smt is not None and v.smt.status not in ("proved", "refuted"):
                cex = "; ".join(t for t in [cex, f"z3: {v.smt}"] if t)
            smt = f"{v.smt.status if v.smt else '-':<14}" if prove is not None else ""
            print(f"{v.name:<30}{v.declared:<9}{v.evidenced:<10}{v.symbolic[:11]:<12}{v.numeric[:11]:<12}{smt}"
                  f"{v.verdict:<15}{cex}")
        counts = {k: sum(v.verdict == k for v in verdicts) for k in ("ok", "misclassified", "unsound", "unknown")}
        print(", ".join(f"{n} {k}" for k, n in counts.items()) + f" ({len(verdicts)} rules, {seconds:.1f} s)")
        if prove is not None:
            proofs = [v.smt.status for v in verdicts if v.smt is not None]
            print("z3 on the exact rules: " + ", ".join(f"{proofs.count(k)} {k}" for k in
                                                        ("proved", "refuted", "unconfirmed", "timeout", "unknown",
                                                         "not modelled") if proofs.count(k)))
    return 1 if any(v.verdict in ("misclassified", "unsound") for v in verdicts) else 0


def _verify_transforms(args) -> list:
    """One study task per JVP, VJP or batching verdict name (`transforms.transform_verify_study`)."""
    from rewrites.verify import Verdict
    from transforms.transform_verify_study import transform_verify_tasks

    verdicts = []
    for r in run_tasks(args, transform_verify_tasks(args.set, args.names), f"{args.set} rules verified").records:
        if r["error"] is None:
            verdicts += [Verdict.from_dict(v, seconds=r["seconds"]) for v in r["result"]]
        else:
            verdicts.append(Verdict(r["args"]["name"], "exact", "unknown", "-", "unknown", "unknown",
                                    reason=f"the verification task failed: {r['error']['type']}: "
                                           f"{r['error']['message']}"))
    return verdicts


def _verify_algebra(args, prove: float | None) -> list:
    """One study task per rule name (`rewrites.verify.study`), on the executor the study flags choose."""
    from rewrites.verify.study import verdict_of, verify_tasks

    text = _read_rule_text(args.load) if args.load else None
    with preparing(args, "collecting the rules"):
        declared = _rules_to_verify(args, text)
    study = run_tasks(args, verify_tasks(list(declared), args.budget, prove, text, args.load), "rules verified")
    return [verdict_of(r, declared[r["args"]["name"]]) for r in study.records]


def cmd_rules_effect(args) -> int:
    """One study: a task per program (its optimization with and without each rule), a task per rule (its
    verdict); their sums make the table."""
    from eval.study.programs import program_specs
    from rewrites.effect import effect_tasks, format_effects, set_verdicts, sum_effects
    from rewrites.rulecompile import rules_from_text
    from rewrites.ruletext import parse_rules
    from rewrites.verify.study import verdict_of, verify_tasks

    cli_options.check_rules(args.base, "--base")
    cli_options.check_cost(args.cost)
    if not args.programs:
        cli_options.require_oracle(DEFAULT_ORACLE, "name the programs: --programs FILE|DIR")
    text = _read_rule_text(args.file)
    rules = rules_from_text(text, args.file)
    patterns = parse_rules(text, args.file)
    programs = program_specs(args.programs)
    tasks = effect_tasks(programs, text, args.file, args.base, args.cost)
    tasks += verify_tasks(list(dict.fromkeys(p.name for p in patterns)), args.budget, None, text, args.file)
    records = run_tasks(args, tasks, "programs and rules").records
    outcomes = [(r["args"]["program"]["name"], r["result"] if r["error"] is None else
                 {"skipped": f"the task failed: {r['error']['type']}: {r['error']['message']}"})
                for r in records if "program" in r["args"]]
    effects, skipped = sum_effects([r.name for r in rules], outcomes)
    declared = {p.name: p.soundness for p in patterns}
    set_verdicts(effects, [verdict_of(r, declared[r["args"]["name"]]) for r in records if "program" not in r["args"]])
    if args.json:
        print(json.dumps({"rules": [e.as_dict() for e in effects], "programs": len(programs),
                          "skipped": [{"program": n, "reason": why} for n, why in skipped]}, indent=1))
    else:
        print(format_effects(effects, len(programs)))
        for name, why in skipped:
            print(f"skipped {name}: {why}", file=sys.stderr)
    return 0


def cmd_rules_semantics(args) -> int:
    """Random programs and every fixture optimized under each rule set, judged by its promise (a rich table:
    programs, agree, differ, errors, skipped, the rules blamed), each difference listed with its rules."""
    from rich.console import Console
    from rich.table import Table

    from eval.oracle import load_fixtures
    from rewrites.verify.semantics import run_semantics

    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    for name in sets or [""]:
        cli_options.check_rule_set(name, "--sets")
    if not (args.fixtures or args.no_fixtures):
        cli_options.require_oracle(DEFAULT_ORACLE, "name them: --fixtures DIR, or random programs only: --no-fixtures")
    cases = [] if args.no_fixtures else load_fixtures(args.fixtures or [DEFAULT_ORACLE], _families(args))
    result = run_semantics(args.programs, sets, args.seed, cases, jobs=args.jobs)
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
        return 1 if any(s.differ or s.errors for s in result.sets.values()) else 0
    table = Table(title=f"semantics: {result.random_programs} random programs (seed {result.seed}) + "
                  f"{result.fixtures} fixtures, {result.seconds:.0f} s", title_justify="left")
    for column in ("rule set", "programs", "agree", "differ", "errors", "skipped", "rules blamed"):
        table.add_column(column, justify="left" if column in ("rule set", "rules blamed") else "right")
    for s in result.sets.values():
        blamed = ", ".join(f"{name} ×{n}" for name, n in sorted(s.blamed.items(), key=lambda kv: (-kv[1], kv[0])))
        table.add_row(s.rule_set, str(s.programs), str(s.agree), str(s.differ), str(s.errors), str(s.skipped),
                      blamed or "-")
    console = Console() if sys.stdout.isatty() else Console(width=140)
    console.print(table)
    for s in result.sets.values():
        for f in s.findings:
            console.print(f"{s.rule_set} {f.source}: {', '.join(f.blame.rules) or '(no rule fired)'}"
                          f"{'' if f.blame.reproduced else ' (not reproduced by the fired rules alone)'}: {f.reason}"
                          f"\n  inputs {[str(a) for a in f.inputs]}\n  original gives {f.original_gives!r}, "
                          f"optimized gives {f.optimized_gives!r}", markup=False)
        for source, reason in s.problems:
            console.print(f"{s.rule_set} {source}: error: {reason}", markup=False)
    return 1 if any(s.differ or s.errors for s in result.sets.values()) else 0


def cmd_check(args) -> int:
    from ir.text import parse_jaxpr
    from ir.typecheck import fingerprint

    closed = parse_jaxpr(_read_text(args.file))
    print(closed)
    print(f"fingerprint {fingerprint(closed)}", file=sys.stderr)
    return 0


def _inputs(closed, path: str | None) -> list:
    """The arrays arr_0, arr_1, ... of an .npz file, or zeros of the program's input avals."""
    import numpy as np

    if path:
        data = np.load(path)
        return [data[k] for k in sorted(data.files, key=lambda k: int(k.split("_")[-1]))]
    return [np.zeros(v.aval.shape, v.aval.dtype.numpy) for v in closed.jaxpr.invars]


def cmd_eval(args) -> int:
    import numpy as np

    from eval.interpreter import eval_jaxpr
    from ir.text import parse_jaxpr

    closed = parse_jaxpr(_read_text(args.file))
    for out in eval_jaxpr(closed, *_inputs(closed, args.args)):
        print(np.array2string(out, precision=6))
    return 0


def cmd_measure(args) -> int:
    from eval.measure import measure
    from ir.text import parse_jaxpr

    closed = parse_jaxpr(_read_text(args.file))
    inputs = _inputs(closed, args.args)
    results = [measure(closed, *inputs, backend=b.strip(), warmup=args.warmup, repeats=args.repeats)
               for b in args.backend.split(",")]
    if args.json:
        print(json.dumps([m.as_dict() for m in results], indent=1))
    else:
        for m in results:
            print(m.summary())
    return 0


# the benches whose every row is a wall-clock timing, and why: `--jobs N` and `--scheduler` are refused
TIMED_BENCHES = {"eval": "as every row is a timing of a program",
                 "control": "as every row times the transforms (and NumPy) on a loop",
                 "runtime": "as every row times eqjax's programs beside jax.jit",
                 "extraction": "as its seconds and the extractors' timeouts are wall clock (load on shared cores "
                               "turns a near timeout into a failure and changes the cost ratios)"}


def cmd_bench(args) -> int:
    from eval.bench import bench_eval
    from transforms.cli_study import row_runner

    if args.what in ("optimizer", "grad", "vmap", "control"):
        cli_options.check_rules(args.rules)
    run_rows = row_runner(args, args.what, TIMED_BENCHES.get(args.what))
    if args.what == "extraction":
        from rewrites.extract.gym_bench import bench_extraction

        bench_extraction(args.data, timeout=args.timeout, as_json=args.json, run_rows=run_rows)
        return 0
    if args.what != "control" and not (args.what == "runtime" and args.suite == "large"):
        cli_options.require_oracle(DEFAULT_ORACLE, "this benchmark times the oracle programs")
    if args.what == "eval":
        bench_eval(repeats=args.repeats, run_rows=run_rows)
    elif args.what == "grad":
        from transforms.ad.bench import bench_grad

        bench_grad(rules=args.rules, run_rows=run_rows)
    elif args.what == "vmap":
        from transforms.batching.bench import bench_vmap, bench_vs_loop

        bench_vmap(rules=args.rules, run_rows=run_rows)
        bench_vs_loop(rules=args.rules, run_rows=run_rows)
    elif args.what == "control":
        from transforms.bench_control import bench_control

        bench_control(rules=args.rules, run_rows=run_rows)
    elif args.what == "runtime":
        from eval.xla import EXTRA, BackendUnavailable, jax

        if jax is None:  # the benchmark's baseline is jax.jit
            raise BackendUnavailable(f"it times jax.jit beside eqjax and needs JAX, which is not installed: {EXTRA}")
        from transforms.bench_runtime import bench_runtime

        only = set(args.only.split(",")) if args.only else None
        bench_runtime(suite=args.suite, threads=args.threads, min_time=args.min_time, as_json=args.json,
                      only=only, first=not args.no_first_call, run_rows=run_rows)
    else:
        from rewrites.bench import bench_optimizer

        bench_optimizer(rules=args.rules, run_rows=run_rows)
    return 0


def cmd_calibrate(args) -> int:
    import time

    from rewrites.latency.calibrate import calibrate
    from rewrites.latency.profile import dumps, profile_filename, save_profile, user_profile_dir

    cli_options.require_oracle(DEFAULT_ORACLE, "calibration probes the oracle's equations")
    start = time.perf_counter()
    primitives = [p.strip() for p in args.primitives.split(",") if p.strip()] if args.primitives else None
    profile = calibrate(args.backend, primitives, quick=args.quick, progress=not args.json)
    out = Path(args.out) if args.out else user_profile_dir()
    if out.is_dir() or not out.suffix:
        out = out / profile_filename(args.backend, profile["machine_key"])
    save_profile(profile, out)
    if args.json:
        print(dumps(profile), end="")
    else:
        _print_calibration(profile, out, time.perf_counter() - start)
    return 0


def _print_calibration(profile: dict, out: Path, seconds: float) -> None:
    """The per-primitive fit as a rich table, then the overhead, the fallback and where the profile went."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{profile['backend']} latency profile: c0 of the smallest sizes' segment, "
                  "per-unit costs of the largest sizes'", title_justify="left")
    for column in ("primitive", "points", "variants", "segs", "c0 µs", "ns/elem", "ps/flop", "ps/byte", "med.err",
                   "sizes"):
        table.add_column(column, justify="left" if column in ("primitive", "sizes") else "right", no_wrap=True)
    entries = [*sorted(profile["primitives"].items()), ("(fallback)", profile["fallback"])]
    for name, entry in entries:
        first, last = entry["segments"][0]["coef"], entry["segments"][-1]["coef"]
        table.add_row(name, str(entry["points"]), str(len(entry.get("variants", ()))), str(len(entry["segments"])),
                      f"{first['c0'] * 1e6:.3g}",
                      f"{last['c_elem'] * 1e9:.3g}", f"{last['c_flops'] * 1e12:.3g}", f"{last['c_bytes'] * 1e12:.3g}",
                      f"{entry['median_rel_error']:.1%}", entry.get("size_terms", "fitted"))
    console = Console()
    if not console.is_terminal:
        console = Console(width=130)  # piped or captured: rich's default of 80 columns would cut the table
    console.print(table)
    console.print(f"fallback fitted on {profile['fallback']['fitted_on']}; call overhead "
                  f"{profile['call_overhead_s'] * 1e6:.3g} µs, "
                  f"+{profile['per_operand_overhead_s'] * 1e6:.3g} µs per further input or output")
    for name, reason in sorted(profile["skipped"].items()):
        console.print(f"skipped {name}: {reason}", markup=False)
    console.print(f"{len(profile['primitives'])} primitives in {seconds:.1f} s; wrote {out}", markup=False)


def cmd_demo(args) -> int:
    from transforms.demo import run_demo

    run_demo()
    return 0


COST_HELP = ("cost model: ops, flops, bytes, latency, latency-numpy, latency-xla, learned:PATH; NAME+accuracy adds "
             "the bits of local error (e.g. flops+accuracy, flops+accuracy:16 for another weight per bit)")


def _optimizer_args(o: argparse.ArgumentParser, output: bool = True) -> None:
    """The optimizer's knobs (their defaults `DEFAULT_OPTIONS`'s; `_options` reads them back as an `Options`); with
    `output`, also --no-loop-rewrites and --json."""
    o.add_argument("--rules", default=DEFAULT_OPTIONS.rules,
                   help="rule set: strict, default, accurate, fast (+NAME/-NAME items)")
    o.add_argument("--cost", default=DEFAULT_OPTIONS.cost, help=COST_HELP)
    o.add_argument("--extractor", default=DEFAULT_OPTIONS.extractor, help="tree, greedy_dag or ilp")
    o.add_argument("--node-limit", type=_non_negative(int), help="stop saturating past this many e-nodes")
    o.add_argument("--iter-limit", type=_non_negative(int), help="at most this many iterations (0: none)")
    o.add_argument("--time-limit", type=_non_negative(float), help="seconds of saturation at most")
    if output:
        o.add_argument("--no-loop-rewrites", dest="loops", action="store_false",
                       help="turn off loop-invariant hoisting, trip-count weights and dead loop outputs (comparison)")
        o.add_argument("--json", action="store_true", help="one JSON object with the jaxpr and the report")


def _custom_rules_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--custom-rules", action="append", metavar="FILE.py",
                   help="a Python file registering custom_jvp/custom_vjp rules by name (ir/custom_rules.py)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="eqjax", description="Jaxprs through equality saturation.")
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("conformance", help="compare against the JAX oracle fixtures")
    c.add_argument("paths", nargs="*", help=f"fixture files or directories (default {DEFAULT_ORACLE})")
    c.add_argument("--check", default="out", help="comma-separated checks: out,jvp,vjp,vmap,grad,...")
    c.add_argument("--family", action="append", help="only these families (repeatable, or comma-separated)")
    c.add_argument("--json", action="store_true", help="one JSON object with every outcome")
    c.add_argument("-v", "--verbose", action="store_true", help="also list skipped checks with the reason")
    c.add_argument("--optimize", action="store_true", help="run every program through the e-graph first")
    c.add_argument("--rules", default="default", help="rule set for --optimize (strict, default, accurate, fast)")
    _custom_rules_arg(c)
    add_study_args(c)
    c.set_defaults(func=cmd_conformance)

    o = sub.add_parser("optimize", help="optimize a jaxpr text through the e-graph")
    o.add_argument("file", help="a file with jaxpr text, or - for stdin")
    _optimizer_args(o)
    o.add_argument("--certificate", metavar="RUN.json", help="write the run's certificate (eqjax replay checks it)")
    o.add_argument("--trace", action="store_true",
                   help="one iteration per run of the saturation loop, e-nodes and e-classes counted after each")
    o.add_argument("--accuracy", action="store_true", help="bits of error of the input and the optimized program "
                   "against exact (high-precision) results on sampled and special inputs, per output; warns when "
                   "real or unsafe rules changed results")
    o.set_defaults(func=cmd_optimize)

    rp = sub.add_parser("replay", help="re-run a certificate's optimize run; confirm its output and verdict")
    rp.add_argument("file", help="a certificate written by eqjax optimize --certificate")
    rp.add_argument("--json", action="store_true", help="the result (mismatches, warnings, replayed certificate)")
    rp.set_defaults(func=cmd_replay)

    sp = sub.add_parser("sample", help="up to K distinct equivalent programs from one saturated e-graph")
    sp.add_argument("file", help="a file with jaxpr text, or - for stdin")
    sp.add_argument("-k", type=int, default=8, help="how many programs (default 8)")
    sp.add_argument("--seed", type=int, default=0, help="the draws' seed (same seed, same programs)")
    _optimizer_args(sp)
    sp.set_defaults(func=cmd_sample)

    for name, what in (("grad", "the optimized gradient program of a scalar-output jaxpr text"),
                       ("jvp", "the optimized JVP program: inputs primals then tangents"),
                       ("vjp", "the optimized VJP program: inputs primals then output cotangents")):
        g = sub.add_parser(name, help=what)
        g.add_argument("file", help="a file with jaxpr text, or - for stdin")
        if name == "grad":
            g.add_argument("--argnums", help="comma-separated inputs to differentiate (default 0)")
        _optimizer_args(g)
        _custom_rules_arg(g)
        g.set_defaults(func=cmd_derivative)

    v = sub.add_parser("vmap", help="the optimized batched program of a jaxpr text")
    v.add_argument("file", help="a file with jaxpr text, or - for stdin")
    v.add_argument("--in-axes", help="comma-separated batch axis or None per input, or one for all (default 0)")
    v.add_argument("--out-axes", help="comma-separated batch axis per output, or one for all (default 0)")
    v.add_argument("--axis-size", type=int, default=8, help="the batch size (default 8)")
    _optimizer_args(v)
    v.set_defaults(func=cmd_vmap)

    r = sub.add_parser("rules", help="the rule sets")
    r_sub = r.add_subparsers(dest="rules_command", required=True)
    rl = r_sub.add_parser("list", help="list the rules of a set")
    rl.add_argument("--set", default="fast", help="strict, default or fast (default: fast, every rule); "
                    "ad: the JVP, VJP and symbolic-zero rules; vmap: the batching rules")
    rl.add_argument("--json", action="store_true")
    rl.add_argument("--format", choices=["table", "text"], default="table",
                    help="text: the one-line rule format a rule file holds (algebraic sets)")
    rl.set_defaults(func=cmd_rules)
    rv = r_sub.add_parser("verify", help="verify each rule's soundness class: sympy and numeric evidence")
    rv.add_argument("names", nargs="*", help="rule names (default: every rule)")
    rv.add_argument("--load", help="verify the rules of this text rule file instead of the built-in ones")
    rv.add_argument("--set", choices=["algebra", "ad", "vmap"], default="algebra",
                    help="ad: each scalar elementwise primitive's JVP rules against sympy.diff, and each VJP "
                         "rule against its JVP rule by the transpose identity on oracle equations; vmap: each "
                         "batching rule against a loop over slices on oracle equations")
    rv.add_argument("--json", action="store_true", help="a list of {name, declared, verdict, counterexample, ...}")
    rv.add_argument("--budget", type=int, default=1000, help="hypothesis examples per rule and dtype (default 1000)")
    rv.add_argument("--prove", action="store_true", help="also prove or refute each exact rule bit-exact with the "
                    "SMT solver z3 (IEEE float32/float64, integers as bit-vectors); a refutation NumPy confirms makes "
                    "the rule misclassified")
    rv.add_argument("--prove-timeout", type=float, default=10.0, metavar="S",
                    help="seconds z3 may take per rule and dtype (default 10)")
    add_study_args(rv)
    rv.set_defaults(func=cmd_rules_verify)
    re_ = r_sub.add_parser("effect", help="how often each rule of a file fires over a set of programs, and "
                           "the cost of the extracted programs with and without it")
    re_.add_argument("file", help="a text rule file (FILE.rules)")
    re_.add_argument("--programs", action="append", help="jaxpr files, directories of *.jaxpr / fixture "
                     "*.json (default: the oracle programs)")
    re_.add_argument("--base", default="default", help="the rule set the file's rules are added to")
    re_.add_argument("--cost", default="flops", help=COST_HELP)
    re_.add_argument("--budget", type=int, default=100, help="hypothesis examples per rule and dtype for the "
                     "verdict column, the check of `rules verify` (default 100)")
    re_.add_argument("--json", action="store_true")
    add_study_args(re_)
    re_.set_defaults(func=cmd_rules_effect)
    rs = r_sub.add_parser("semantics", help="random programs and every fixture optimized under each rule set and "
                          "compared with the original by the set's promise; differences blamed on rules")
    rs.add_argument("--programs", type=int, default=2000, help="random programs (ir.strategies; default 2000)")
    rs.add_argument("--sets", default="strict,default,fast", help="comma-separated rule sets")
    rs.add_argument("--seed", type=int, default=0, help="the random programs' and inputs' seed")
    rs.add_argument("--fixtures", action="append", help=f"fixture files or directories (default {DEFAULT_ORACLE})")
    rs.add_argument("--family", action="append", help="only these fixture families (repeatable, or comma-separated)")
    rs.add_argument("--no-fixtures", action="store_true", help="random programs only")
    rs.add_argument("--jobs", type=int, default=1, help="worker processes (the result does not depend on it)")
    rs.add_argument("--json", action="store_true", help="the counts, blamed rules, findings and errors as JSON")
    rs.set_defaults(func=cmd_rules_semantics)

    k = sub.add_parser("check", help="parse and typecheck a jaxpr text, print it back")
    k.add_argument("file", help="a file with jaxpr text, or - for stdin")
    k.set_defaults(func=cmd_check)

    e = sub.add_parser("eval", help="evaluate a jaxpr text")
    e.add_argument("file", help="a file with jaxpr text, or - for stdin")
    e.add_argument("--args", help="an .npz file with arrays arr_0, arr_1, ... (default: zeros)")
    e.set_defaults(func=cmd_eval)

    m = sub.add_parser("measure", help="time a jaxpr text on a backend (median, IQR, machine fingerprint)")
    m.add_argument("file", help="a file with jaxpr text, or - for stdin")
    m.add_argument("--args", help="an .npz file with arrays arr_0, arr_1, ... (default: zeros)")
    m.add_argument("--backend", default="numpy", help="numpy, interpreter or xla (comma-separated for several)")
    m.add_argument("--warmup", type=int, default=1, help="untimed calls first")
    m.add_argument("--repeats", type=int, help="timed calls (default: as many as fill 0.2 s, at least 5)")
    m.add_argument("--json", action="store_true", help="the measurements and the machine as JSON")
    m.set_defaults(func=cmd_measure)

    b = sub.add_parser("bench", help="benchmarks that print numbers")
    b.add_argument("what", choices=["eval", "optimizer", "grad", "vmap", "control", "runtime", "extraction"])
    b.add_argument("--repeats", type=int, default=200, help="eval: timing repeats")
    b.add_argument("--rules", default="default", help="optimizer: rule set")
    b.add_argument("--suite", default="all", choices=["all", "large", "oracle"], help="runtime: which programs")
    b.add_argument("--only", help="runtime: comma-separated program names")
    b.add_argument("--threads", type=int, help="runtime: pin BLAS, numexpr and XLA to N threads")
    b.add_argument("--min-time", type=float, default=0.2, help="runtime: seconds of timed calls per system")
    b.add_argument("--no-first-call", action="store_true", help="runtime: skip the fresh-process first calls")
    b.add_argument("--json", action="store_true", help="runtime, extraction: the results as JSON")
    b.add_argument("--data", help="extraction: a folder of data sets (an extraction-gym checkout's data/)")
    b.add_argument("--timeout", type=float, default=10.0, help="extraction: seconds per extractor and file")
    add_study_args(b)  # a row per task; timed rows run one at a time in this process (cli_study.row_runner)
    b.set_defaults(func=cmd_bench)

    cal = sub.add_parser("calibrate", help="measure this machine's latency profile for a backend (cost models "
                         "in seconds, rewrites/latency)")
    cal.add_argument("--backend", required=True, choices=["numpy", "xla"])
    cal.add_argument("--out", help="the profile's file, or a directory for {backend}-{machine key}.json "
                     "(default: the user cache directory, ~/.cache/eqjax/profiles/)")
    cal.add_argument("--quick", action="store_true", help="fewer, smaller probes and shorter timings (seconds)")
    cal.add_argument("--primitives", help="comma-separated primitives to calibrate (default: all)")
    cal.add_argument("--json", action="store_true", help="print the profile as JSON instead of the table")
    cal.set_defaults(func=cmd_calibrate)

    d = sub.add_parser("demo", help="trace, print and evaluate a small MLP loss")
    d.set_defaults(func=cmd_demo)
    add_show_parser(sub)  # eqjax show: pictures (transforms/cli_show.py)
    add_explain_parser(sub)  # eqjax explain: derivations (transforms/cli_explain.py)
    add_primitives_parser(sub)  # eqjax primitives: the catalogue's coverage (transforms/cli_primitives.py)
    add_sweep_parser(sub)  # eqjax sweep: programs x rule sets x costs x extractors (transforms/cli_sweep.py)
    return p


def main(argv: list[str] | None = None) -> int:
    import runpy

    args = build_parser().parse_args(argv)
    command = " ".join(filter(None, (args.command, getattr(args, "rules_command", None))))
    try:
        if hasattr(args, "extractor"):  # the optimizer's options (_optimizer_args)
            cli_options.check_optimizer_options(args)
        for path in getattr(args, "custom_rules", None) or []:
            runpy.run_path(path)
        return args.func(args)
    except StudyInterrupted as e:  # Ctrl-C in a sweep: what finished is kept
        print(f"eqjax {command}: {e}", file=sys.stderr)
        return 130
    except UsageError as e:  # a value that names nothing: one line with the valid choices
        print(f"eqjax {command}: {clipped(str(e))}", file=sys.stderr)
        return 2
    except EqjaxError as e:  # one line: the error's first line, cut short and with escapes shown
        print(f"eqjax {args.command}: {type(e).__name__}: {clipped(str(e).split(chr(10))[0])}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"eqjax {args.command}: {clipped(str(e))}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as e:  # a file read by a library helper rather than by _read_text
        print(f"eqjax {args.command}: a file is not valid UTF-8 (byte {e.start}: {e.reason})", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
