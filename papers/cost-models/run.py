"""Cost models against the clock: regenerates results/ (tables, JSON, figures).

    make cost-models              # everything: ~80 programs, up to 32 variants each (see README for the time)
    make cost-models SMALL=1      # 13 programs, up to 8 variants each: ~2 minutes
    .venv/bin/python papers/cost-models/run.py --small --no-measure   # only programs.json (deterministic)
    .venv/bin/python papers/cost-models/run.py --jobs 2 --json-lines variants.jsonl [--resume]

The deterministic part is a study task per program (`rewrites.variants`, `eval.study`): `--jobs N` runs it on N
worker processes, `--scheduler` on Dask, `--json-lines` keeps each finished program so `--resume` continues a
stopped run. The clock (every measurement, the learned models' extractions and theirs) runs afterwards, serially
in this process, so that nothing else this run starts competes with it for the cores.

For every program of the population (`population.py`) the e-graph is saturated once under the default
rules; from it come up to K sampled equivalent programs (`rewrites.extract.sample_saturated`) and the
program each cost model extracts, greedily and by ILP. Every distinct program is measured on generated
NumPy and on XLA, its variants side by side in interleaved rounds, RUNS times. Each cost model is then
judged per program by Kendall's τ between its predicted costs and the measured times, and by regret:
the measured time of the program it extracts over the fastest program measured for that subject.

The learned model is fitted by 2-fold cross-validation over programs: fitted on the measured variants
of one half of the programs and judged on the other half, and the other way round.

Outputs: results/programs.json (the population, every variant's fingerprint and every deterministic
cost; bit-identical between runs), results/measured.json (times, machine fingerprint), results/tables.md,
results/*.png.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from population import SMALL_RUNTIME, Subject, population  # noqa: E402

from eval import machine  # noqa: E402
from eval.backends import block, runner  # noqa: E402
from eval.measure import time_side_by_side  # noqa: E402
from eval.study import StudyInterrupted, Task  # noqa: E402
from eval.study.programs import load_program, program_spec  # noqa: E402
from ir.typecheck import fingerprint  # noqa: E402
from rewrites.costs import get_cost_model, jaxpr_cost  # noqa: E402
from rewrites.engine import extract_program, saturated  # noqa: E402
from transforms.cli_options import UsageError  # noqa: E402
from transforms.cli_study import add_study_args, run_tasks  # noqa: E402

BACKENDS = ("numpy", "xla")
FIXED_MODELS = ("ops", "flops", "bytes", "latency-numpy", "latency-xla")
EXTRACTORS = ("greedy_dag", "ilp")


@dataclass
class Study:
    subject: Subject
    programs: dict = field(default_factory=dict)  # fingerprint -> ClosedJaxpr
    sampled: list = field(default_factory=list)  # fingerprints, in draw order
    extracted: dict = field(default_factory=dict)  # "model/extractor" -> fingerprint
    predicted: dict = field(default_factory=dict)  # model -> {fingerprint: cost}
    times: dict = field(default_factory=dict)  # backend -> {fingerprint: [seconds per run]}

    def add(self, program) -> str:
        fp = fingerprint(program)
        self.programs.setdefault(fp, program)
        return fp

    def time(self, backend: str, fp: str) -> float:
        return statistics.median(self.times[backend][fp])


def variant_task(subject: Subject, k: int, models=FIXED_MODELS) -> Task:
    """The deterministic part of a subject as a study task: saturate, sample, extract, predict (`rewrites.variants`)."""
    return Task("rewrites.variants:variants", {"program": program_spec(subject.name, subject.closed), "k": k,
                                               "models": list(models), "extractors": list(EXTRACTORS)})


def build(subject: Subject, variants: dict) -> Study:
    """A subject's study from its task's result: its variants (read back from their text) and predicted costs."""
    study = Study(subject)
    study.extracted["original/-"] = study.add(subject.closed)
    if study.extracted["original/-"] not in next(iter(variants["predicted"].values())):
        raise ValueError(f"{subject.name} does not read back from its text as itself")
    for fp, spec in variants["programs"].items():
        study.programs[fp] = load_program(spec)
    study.sampled = variants["sampled"]
    study.extracted.update(variants["extracted"])
    study.predicted = variants["predicted"]
    return study


def predict(study: Study, models: dict) -> None:
    for name, model in models.items():
        study.predicted[name] = {fp: float(jaxpr_cost(model, p)) for fp, p in study.programs.items()}


def measure(study: Study, backend: str, min_time: float, runs: int, only: list[str] | None = None) -> None:
    """Time the programs (or `only` these) side by side; each run is one interleaved `time_side_by_side`."""
    runs_of = {fp: runner(study.programs[fp], backend) for fp in only or list(study.programs)}
    args = study.subject.args
    if backend == "xla":  # after the runners: building one switches JAX to x64
        import jax
        args = [jax.device_put(a) for a in args]
    calls = {fp: (lambda run=run: block(run(*args))) for fp, run in runs_of.items()}
    times = study.times.setdefault(backend, {})
    for _ in range(runs):
        for fp, t in time_side_by_side(calls, min_time=min_time, rounds=5).items():
            times.setdefault(fp, []).append(statistics.median(t))


def kendall_tau(predicted: list[float], measured: list[float]) -> float:
    """Kendall's τ-b; 0 when a side is constant (a model that rates every variant alike ranks nothing)."""
    from scipy.stats import kendalltau

    if len(set(predicted)) < 2 or len(set(measured)) < 2:
        return 0.0
    return float(kendalltau(predicted, measured).statistic)


def separated_tau(predicted: list[float], runs: list[list[float]]) -> tuple[float, int]:
    """τ over the pairs of variants the clock tells apart: those whose ranges of run times do not overlap
    (every run of one is faster than every run of the other). A pair the model ranks the same way counts
    +1, the other way -1, a predicted tie 0; returns (mean, pairs)."""
    score, pairs = 0.0, 0
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            if max(runs[i]) < min(runs[j]):
                faster, slower = i, j
            elif max(runs[j]) < min(runs[i]):
                faster, slower = j, i
            else:
                continue
            pairs += 1
            score += (predicted[faster] < predicted[slower]) - (predicted[faster] > predicted[slower])
    return (score / pairs if pairs else math.nan), pairs


def fold_of(name: str) -> int:
    return hashlib.sha256(name.encode()).digest()[0] % 2


def fit_learned(studies: list[Study], backend: str, saturations: dict, min_time: float, runs: int) -> dict:
    """2-fold cross-validated learned models: each fold's programs are extracted under the model fitted on
    the other fold, and any program not measured yet is measured beside that subject's fastest variant.
    `saturations` holds each subject's saturated e-graph once made (the tasks' stayed in their workers)."""
    from rewrites.latency.learned import fit

    report = {}
    for fold in (0, 1):
        train = [s for s in studies if fold_of(s.subject.name) != fold]
        test = [s for s in studies if fold_of(s.subject.name) == fold]
        pairs = [(s.programs[fp], s.time(backend, fp)) for s in train for fp in s.times[backend]]
        if not pairs or not test:
            continue
        model = fit([p for p, _ in pairs], [t for _, t in pairs], backend)
        report[f"fold{fold}"] = {"train_programs": len(train), "train_pairs": len(pairs), **model.training,
                                 "intercept_s": model.intercept}
        cost = model.cost_model(f"learned-{backend}")
        for s in test:
            s.predicted[f"learned-{backend}"] = {fp: model.predict(p) for fp, p in s.programs.items()}
            for extractor in EXTRACTORS:
                if s.subject.name not in saturations:
                    saturations[s.subject.name] = saturated(s.subject.closed)
                program, _ = extract_program(saturations[s.subject.name], cost, extractor)
                fp = s.add(program)
                s.extracted[f"learned-{backend}/{extractor}"] = fp
                s.predicted[f"learned-{backend}"][fp] = model.predict(program)
                if fp not in s.times[backend]:
                    _measure_beside_fastest(s, backend, fp, min_time, runs)
    return report


def _measure_beside_fastest(study: Study, backend: str, fp: str, min_time: float, runs: int) -> None:
    """Measure a new program beside the fastest measured one, and scale its time to the first measurement."""
    fastest = min(study.times[backend], key=lambda f: study.time(backend, f))
    before = study.time(backend, fastest)
    saved = study.times[backend].pop(fastest)
    measure(study, backend, min_time, runs, only=[fastest, fp])
    scale = before / study.time(backend, fastest)
    study.times[backend][fp] = [t * scale for t in study.times[backend][fp]]
    study.times[backend][fastest] = saved


# --- judging the models ----------------------------------------------------------------------------------

def models_of(backend: str) -> list[str]:
    return [*FIXED_MODELS, f"learned-{backend}"]


def judge(studies: list[Study], backend: str) -> dict:
    """Per model: per-program τ and regrets (greedy and ILP), and their summaries."""
    out = {}
    for model in [*models_of(backend), "original"]:
        taus, separated, regrets = [], [], {e: [] for e in EXTRACTORS}
        for s in studies:
            measured = s.times.get(backend, {})
            if not measured:
                continue
            best = min(s.time(backend, fp) for fp in measured)
            for extractor in EXTRACTORS:
                fp = s.extracted.get("original/-" if model == "original" else f"{model}/{extractor}")
                if fp in measured:
                    regrets[extractor].append(s.time(backend, fp) / best)
            if model in s.predicted and len(measured) >= 3:
                fps = sorted(measured)
                predicted = [s.predicted[model][fp] for fp in fps]
                taus.append(kendall_tau(predicted, [s.time(backend, fp) for fp in fps]))
                tau, pairs = separated_tau(predicted, [measured[fp] for fp in fps])
                if pairs:
                    separated.append(tau)
        out[model] = {"tau": taus, "regret": regrets, **_summary(taus, regrets),
                      "separated_tau_median": float(np.median(separated)) if separated else None,
                      "separated_tau_programs": len(separated)}
    return out


def by_group(studies: list[Study], backend: str) -> dict:
    groups = sorted({s.subject.group for s in studies})
    out = {}
    for g in groups:
        members = [s for s in studies if s.subject.group == g]
        verdicts = judge(members, backend)
        out[g] = {"programs": len(members),
                  "verdicts": {m: {k: v for k, v in r.items() if k not in ("tau", "regret")}
                               for m, r in verdicts.items()}}
    return out


def _summary(taus: list[float], regrets: dict) -> dict:
    def q(xs, p):
        return float(np.quantile(xs, p)) if xs else None

    return {"tau_median": q(taus, 0.5), "tau_programs": len(taus),
            **{f"regret_{e}_median": q(r, 0.5) for e, r in regrets.items()},
            **{f"regret_{e}_p90": q(r, 0.9) for e, r in regrets.items()}}


def noise(studies: list[Study], backend: str) -> dict:
    """How much a program's time moves between the runs: max/min of its run medians, minus 1."""
    spread = [max(t) / min(t) - 1 for s in studies for t in s.times.get(backend, {}).values() if len(t) > 1]
    return {"programs": len(spread), "median": float(np.median(spread)) if spread else None,
            "p90": float(np.quantile(spread, 0.9)) if spread else None}


def ilp_vs_greedy(studies: list[Study], backend: str, model: str, tolerance: float = 0.05) -> dict:
    faster = slower = same = 0
    for s in studies:
        measured = s.times.get(backend, {})
        g, i = s.extracted.get(f"{model}/greedy_dag"), s.extracted.get(f"{model}/ilp")
        if g not in measured or i not in measured:
            continue
        ratio = s.time(backend, i) / s.time(backend, g)
        faster += ratio < 1 - tolerance
        slower += ratio > 1 + tolerance
        same += 1 - tolerance <= ratio <= 1 + tolerance
    return {"ilp_faster": faster, "ilp_slower": slower, "within_5pct": same}


def latency_vs_flops(studies: list[Study], backend: str) -> list[dict]:
    """The runtime suite: the latency model's greedy extraction against the FLOPs model's, measured."""
    rows = []
    for s in studies:
        if s.subject.group != "runtime":
            continue
        lat, fl = s.extracted[f"latency-{backend}/greedy_dag"], s.extracted["flops/greedy_dag"]
        rows.append({"program": s.subject.name, "latency_s": s.time(backend, lat), "flops_s": s.time(backend, fl),
                     "ratio": s.time(backend, lat) / s.time(backend, fl), "same_program": lat == fl})
    return rows


def jit_latency_vs_flops(backend: str, min_time: float, runs: int, small: bool) -> list[dict]:
    """The target as the user meets it: `jit` (and `grad`) with cost="latency" against cost="flops" on the
    runtime suite, each program built by the transform itself and measured side by side on `backend`."""
    import ir
    from transforms import grad, jit
    from transforms.runtime_suite import workloads

    rows = []
    for w in workloads():
        if small and w.name not in SMALL_RUNTIME:
            continue
        built = {}
        for cost in ("flops", "latency"):
            if w.is_grad:
                fun = grad(w.fun, argnums=w.argnums, cost=cost, backend=backend)
            else:
                fun = jit(w.fun, cost=cost, backend=backend)
            built[cost] = ir.make_jaxpr(fun)(*w.args)
        study = Study(Subject(w.name, "runtime", built["flops"], tuple(w.args)))
        fps = {cost: study.add(p) for cost, p in built.items()}
        measure(study, backend, min_time, runs)
        t = {cost: study.time(backend, fp) for cost, fp in fps.items()}
        rows.append({"program": w.name, "latency_s": t["latency"], "flops_s": t["flops"],
                     "ratio": t["latency"] / t["flops"], "same_program": fps["latency"] == fps["flops"]})
    return rows


# --- outputs -----------------------------------------------------------------------------------------------

def _fmt(x, digits=3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def tables(verdicts: dict, extras: dict) -> str:
    lines = []
    for backend in BACKENDS:
        v = verdicts[backend]
        lines += [f"## {backend}", "",
                  "| model | median τ | programs | median τ, separated pairs | programs "
                  "| regret median (greedy) | regret p90 (greedy) | regret median (ILP) | regret p90 (ILP) |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for model, r in v.items():
            lines.append(f"| {model} | {_fmt(r['tau_median'])} | {r['tau_programs']} "
                         f"| {_fmt(r['separated_tau_median'])} | {r['separated_tau_programs']} "
                         f"| {_fmt(r['regret_greedy_dag_median'])} | {_fmt(r['regret_greedy_dag_p90'])} "
                         f"| {_fmt(r['regret_ilp_median'])} | {_fmt(r['regret_ilp_p90'])} |")
        lines += ["", "ILP against greedy, per model (programs whose ILP extraction is >5% faster, slower, within):",
                  "", "| model | ILP faster | ILP slower | within 5% |", "|---|---|---|---|"]
        for model, r in extras["ilp_vs_greedy"][backend].items():
            lines.append(f"| {model} | {r['ilp_faster']} | {r['ilp_slower']} | {r['within_5pct']} |")
        for key, title in (("latency_vs_flops", "Runtime suite programs re-saturated: the latency model's greedy "
                                                 "extraction over the FLOPs model's"),
                           ("jit_latency_vs_flops", "Runtime suite through `jit`/`grad` with cost=\"latency\" over "
                                                     "cost=\"flops\"")):
            lines += ["", f"{title} (measured side by side):", "",
                      "| program | latency | flops | ratio | same program |", "|---|---|---|---|---|"]
            for r in extras[key][backend]:
                lines.append(f"| {r['program']} | {r['latency_s'] * 1e3:.3f} ms | {r['flops_s'] * 1e3:.3f} ms "
                             f"| {r['ratio']:.3f} | {'yes' if r['same_program'] else 'no'} |")
        groups = extras["by_group"][backend]
        lines += ["", "By group: median τ / median τ over separated pairs / 90th-percentile regret (greedy):", "",
                  "| model | " + " | ".join(f"{g} ({groups[g]['programs']})" for g in groups) + " |",
                  "|---|" + "---|" * len(groups)]
        for model in v:
            cells = [f"{_fmt(groups[g]['verdicts'][model]['tau_median'], 2)} / "
                     f"{_fmt(groups[g]['verdicts'][model]['separated_tau_median'], 2)} / "
                     f"{_fmt(groups[g]['verdicts'][model]['regret_greedy_dag_p90'], 2)}" for g in groups]
            lines.append(f"| {model} | " + " | ".join(cells) + " |")
        n = extras["noise"][backend]
        lines += ["", f"Noise: a program's time moves by a median {_fmt(n['median'])} (p90 {_fmt(n['p90'])}) "
                  f"between the {extras['runs']} runs (max/min − 1, {n['programs']} programs).", ""]
    return "\n".join(lines) + "\n"


def figures(studies: list[Study], verdicts: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for backend in BACKENDS:
        models = models_of(backend)
        fig, axes = plt.subplots(2, 3, figsize=(13, 8), sharex=False, sharey=True)
        for ax, model in zip(axes.flat, models, strict=True):
            xs, ys = [], []
            for s in studies:
                measured = s.times.get(backend, {})
                if model not in s.predicted or len(measured) < 2:
                    continue
                pred = {fp: s.predicted[model][fp] for fp in measured}
                p_mid = statistics.median(pred.values()) or 1.0
                t_mid = statistics.median(s.time(backend, fp) for fp in measured)
                xs += [max(pred[fp] / p_mid, 1e-3) for fp in measured]
                ys += [s.time(backend, fp) / t_mid for fp in measured]
            ax.scatter(xs, ys, s=4, alpha=0.4)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{model}: median τ {_fmt(verdicts[backend][model]['tau_median'], 2)}")
            ax.set_xlabel("predicted cost / program median")
            ax.set_ylabel("measured time / program median")
        fig.suptitle(f"Predicted cost against measured time on {backend} (each point a variant)")
        fig.tight_layout()
        fig.savefig(out / f"scatter-{backend}.png", dpi=110)
        plt.close(fig)

        fig, ax = plt.subplots(figsize=(7, 5))
        for model in [*models, "original"]:
            r = sorted(verdicts[backend][model]["regret"]["greedy_dag"])
            if r:
                ax.step(r, np.arange(1, len(r) + 1) / len(r), where="post", label=model)
        ax.set_xscale("log")
        ax.set_xlabel("regret: time of the extracted program / fastest measured")
        ax.set_ylabel("fraction of programs")
        ax.set_title(f"Regret CDF on {backend} (greedy extraction)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / f"regret-{backend}.png", dpi=110)
        plt.close(fig)


def deterministic_record(studies: list[Study]) -> list[dict]:
    """What does not depend on the clock: the programs, their variants and every fixed model's costs."""
    out = []
    for s in studies:
        extracted = {k: v for k, v in sorted(s.extracted.items()) if not k.startswith("learned")}
        fixed = {*s.sampled, *extracted.values()}
        out.append({"name": s.subject.name, "group": s.subject.group, "eqns": len(s.subject.closed.jaxpr.eqns),
                    "sampled": s.sampled, "extracted": extracted,
                    "predicted": {m: {fp: c for fp, c in sorted(costs.items()) if fp in fixed}
                                  for m, costs in sorted(s.predicted.items()) if not m.startswith("learned")}})
    return out


def main(argv: list[str] | None = None) -> None:
    from rich.progress import track

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="13 programs, up to 8 variants each (~2 minutes)")
    ap.add_argument("--k", type=int, default=None, help="sampled variants per program (default 32; 8 small)")
    ap.add_argument("--runs", type=int, default=3, help="measurement runs (the noise estimate)")
    ap.add_argument("--min-time", type=float, default=None, help="seconds per variant per run")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--no-measure", action="store_true", help="only the deterministic part: programs.json")
    add_study_args(ap)  # the deterministic part, a task per program; the clock runs serially in this process
    args = ap.parse_args(argv)
    k = args.k or (8 if args.small else 32)
    min_time = args.min_time or 0.02
    args.out.mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()

    models = {m: get_cost_model(m) for m in FIXED_MODELS}
    subjects = population(args.small)
    try:
        sweep = run_tasks(args, [variant_task(subject, k) for subject in subjects], "programs saturated")
    except UsageError as e:
        ap.error(str(e))
    except StudyInterrupted as e:  # Ctrl-C: the finished programs are in --json-lines
        print(e, file=sys.stderr)
        raise SystemExit(130) from None
    for record in sweep.failed:
        raise SystemExit(f"{record['args']['program']['name']}: {record['error']['type']}: "
                         f"{record['error']['message']}")
    studies = [build(subject, record["result"]) for subject, record in zip(subjects, sweep.records, strict=True)]
    saturations, failures = {}, []
    settings = {"small": args.small, "k": k, "runs": args.runs, "min_time": min_time}
    for study in [] if args.no_measure else track(studies, description="measure", disable=args.quiet):
        for backend in BACKENDS:
            try:
                measure(study, backend, min_time, args.runs)
            except Exception as e:  # a program a backend cannot run is reported, not hidden
                failures.append(f"{study.subject.name} on {backend}: {type(e).__name__}: {str(e)[:120]}")
                study.times.pop(backend, None)
    (args.out / "programs.json").write_text(json.dumps({"settings": {k2: v for k2, v in settings.items() if k2 in (
        "small", "k")}, "programs": deterministic_record(studies)}, indent=1, sort_keys=True) + "\n")
    if args.no_measure:
        return
    learned = {b: fit_learned([s for s in studies if s.times.get(b)], b, saturations, min_time, args.runs)
               for b in BACKENDS}
    for study in studies:  # the learned models' extractions are new programs for the fixed models too
        predict(study, models)
    for b in BACKENDS:  # fitted on every program: what `cost="learned:results/learned-B.json"` loads
        from rewrites.latency.learned import fit

        pairs = [(s.programs[fp], s.time(b, fp)) for s in studies for fp in s.times.get(b, {})]
        if pairs:
            fit([p for p, _ in pairs], [t for _, t in pairs], b).save(args.out / f"learned-{b}.json")

    verdicts = {b: judge(studies, b) for b in BACKENDS}
    extras = {"runs": args.runs,
              "noise": {b: noise(studies, b) for b in BACKENDS},
              "ilp_vs_greedy": {b: {m: ilp_vs_greedy(studies, b, m) for m in models_of(b)} for b in BACKENDS},
              "latency_vs_flops": {b: latency_vs_flops(studies, b) for b in BACKENDS},
              "by_group": {b: by_group(studies, b) for b in BACKENDS},
              "jit_latency_vs_flops": {b: jit_latency_vs_flops(b, min_time, args.runs, args.small)
                                       for b in BACKENDS}}
    (args.out / "measured.json").write_text(json.dumps({
        "machine": machine.fingerprint(), "settings": settings, "seconds": time.perf_counter() - clock,
        "failures": failures,
        "learned": learned, "extras": extras,
        "verdicts": {b: {m: {k2: v for k2, v in r.items()} for m, r in v.items()} for b, v in verdicts.items()},
        "times": {s.subject.name: s.times for s in studies}}, indent=1, sort_keys=True) + "\n")
    (args.out / "tables.md").write_text(tables(verdicts, extras))
    figures(studies, verdicts, args.out)
    print((args.out / "tables.md").read_text())
    print(f"{len(studies)} programs, {sum(len(s.programs) for s in studies)} distinct variants, "
          f"{time.perf_counter() - clock:.0f} s; failures: {len(failures)}")
    for f in failures:
        print("  ", f)


if __name__ == "__main__":
    import os

    if os.environ.get("PYTHONHASHSEED") != "0":  # extraction breaks ties by hash order in a few places
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    main()
