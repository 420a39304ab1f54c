"""Calibration: microbenchmark every primitive on a backend and fit its latency model.

    profile = calibrate("numpy")                                  # minutes; `eqjax calibrate --backend numpy`
    profile = calibrate("xla", primitives=["add", "exp"], quick=True, progress=False)   # seconds

Which primitives: those the evaluation registry implements that appear in the oracle samples or have a
grid family (`rewrites.latency.probes`), except those that run jaxprs (priced by their bodies).

How a probe is timed: its one-equation program runs on the backend (`eval.backends.runner`; the xla
backend's inputs are on the device, its first call compiles and is not timed). Its time is the median
per-call time over `ROUNDS` rounds, minus the *baseline*: the same backend calling a program with as
many inputs and outputs that does nothing but return its inputs (with scalar inputs: it is the per-call
cost of dispatch and argument handling, not of data). A primitive's probes and the baselines of their
arities are timed side by side, interleaved round by round, so that the load of a shared machine, which
drifts over seconds, touches a probe and the baseline subtracted from it alike. The net time is
clamped at `FLOOR_FRACTION` of the baseline, so that it stays positive for ops cheaper than the noise;
the fit treats times under `NOISE_FRACTION` of the call overhead as noise (`rewrites.latency.fit`).
A series of probes (one primitive, dtype and params at increasing sizes) stops at the first probe
whose call takes `max_probe_s` (unless that is the series' smallest).

The profile's call overhead per arity is the median of every measurement of that baseline in the run
(those of `BASELINE_ARITIES` at its start and end, and each primitive's).

The fit (`rewrites.latency.fit`) gives each primitive piecewise non-negative coefficients; the fallback,
which prices primitives the profile does not name, is fitted with a fixed cost and a per-byte cost over
all scaled elementwise probes (or over every probe, if the selection has no elementwise primitive).
A profile keeps the rows it was fitted to, so `refit(profile)` fits them again without measuring.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache

import numpy as np

from eval.backends import block, runner
from eval.machine import fingerprint, machine_key
from ir import dtypes
from ir.core import ClosedJaxpr, Jaxpr, Literal, ShapedArray, Var
from ir.errors import EqjaxError
from ir.primitives import get_primitive
from rewrites.costs import bytes_moved, flops
from rewrites.latency import fit, probes
from rewrites.latency.profile import FORMAT, check_backend, validate_profile

FLOOR_FRACTION = 0.01
ROUNDS = 5  # interleaved timing rounds per probe
NOISE_FRACTION = 0.1  # of the 1x1 call overhead: the fit's noise floor (rewrites.latency.fit)
BASELINE_ARITIES = ((1, 1), (2, 1), (4, 1), (8, 1), (1, 4))  # always measured: they give the per-operand cost
SEED = 0


class CalibrationError(EqjaxError, ValueError):
    """A calibration that cannot be done as asked (a primitive it cannot time, nothing timed)."""


def calibratable(samples: dict) -> list[str]:
    """The primitives `calibrate` times, given the oracle samples."""
    import eval.impls  # noqa: F401  (registers every implementation)
    from eval.registry import IMPLS

    return sorted(p for p in set(samples) | set(probes.GRID_FAMILIES) if p in IMPLS and probes.is_probed(p))


def _check_primitives(requested: Iterable[str], available: list[str]) -> list[str]:
    from eval.registry import IMPLS

    requested = list(dict.fromkeys(requested))
    problems = []
    for name in requested:
        if name in available:
            continue
        try:
            row = get_primitive(name)
        except EqjaxError:
            problems.append(f"{name!r} (no such primitive)")
            continue
        if row.higher_order:
            problems.append(f"{name!r} (runs jaxprs: the latency model prices it by its bodies)")
        elif name not in IMPLS:
            problems.append(f"{name!r} (no NumPy implementation)")
        else:
            problems.append(f"{name!r} (no oracle sample or grid probe to time it with)")
    if problems:
        raise CalibrationError(f"cannot calibrate {', '.join(problems)}; {len(available)} primitives can be "
                               f"calibrated: {', '.join(available)}")
    return requested


def settings_for(quick: bool, grid: probes.Grid) -> dict:
    return {"quick": quick, "seed": SEED, **grid.as_dict(), "samples_per_primitive": 2 if quick else 4,
            "min_time_s": 0.002 if quick else 0.01, "max_probe_s": 0.02 if quick else 0.1}


# --- timing ------------------------------------------------------------------------------------------------

def _caller(closed: ClosedJaxpr, args, backend: str) -> Callable[[], object]:
    run = runner(closed, backend)
    inputs = list(args)
    if backend == "xla":
        import jax
        inputs = [jax.device_put(a) for a in inputs]
    return lambda: block(run(*inputs))


@contextmanager
def _quiet() -> Iterator[None]:
    """Probes at the edge of a domain (overflowing exp at f32) warn; the warnings are no news here."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def _pilot(call: Callable[[], object]) -> float:
    """Seconds of one call after a warm-up call (which compiles on xla)."""
    call()
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def time_interleaved(calls: list[tuple[Callable[[], object], float]], min_time: float,
                     rounds: int = ROUNDS) -> list[float]:
    """Median seconds per call of each `(call, pilot seconds)`, timed in `rounds` interleaved rounds: each
    round runs a batch of every call in turn (a batch fills about min_time / rounds), so that a change of
    load on the machine touches all of them alike."""
    batches = [max(1, int(min_time / rounds / max(pilot, 1e-7))) for _, pilot in calls]
    times: list[list[float]] = [[] for _ in calls]
    with _quiet():
        for _ in range(rounds):
            for (call, _), n, kept in zip(calls, batches, times, strict=True):
                t0 = time.perf_counter()
                for _ in range(n):
                    call()
                kept.append((time.perf_counter() - t0) / n)
    return [float(np.median(t)) for t in times]


def time_program(closed: ClosedJaxpr, args, backend: str, min_time: float) -> float:
    """Median seconds per call of `closed` on `args` on `backend`, after a warm-up call."""
    call = _caller(closed, args, backend)
    with _quiet():
        pilot = _pilot(call)
    return time_interleaved([(call, pilot)], min_time)[0]


class Baselines:
    """Do-nothing programs on a backend by (inputs, outputs), and every median measured of each."""

    def __init__(self, backend: str):
        self.backend = backend
        self.calls: dict[tuple[int, int], tuple[Callable[[], object], float]] = {}
        self.measured: dict[tuple[int, int], list[float]] = {}

    def call(self, n_in: int, n_out: int) -> tuple[Callable[[], object], float]:
        """The program's call and its pilot time, made on first use."""
        key = (n_in, n_out)
        if key not in self.calls:
            invars = [Var(ShapedArray((), dtypes.float32)) for _ in range(n_in)]
            zero = Literal(np.float32(0), ShapedArray((), dtypes.float32))
            outvars = [invars[i % n_in] if n_in else zero for i in range(n_out)]
            program = ClosedJaxpr(Jaxpr([], invars, outvars, []), [])
            args = [np.asarray(i, np.float32) for i in range(n_in)]  # 0-d arrays: scalars would be coerced
            call = _caller(program, args, self.backend)
            self.calls[key] = call, _pilot(call)
        return self.calls[key]

    def seconds(self, n_in: int, n_out: int) -> float:
        """The median of every measurement of that arity's baseline in this run."""
        return float(np.median(self.measured[(n_in, n_out)]))

    def per_operand(self) -> float:
        """Seconds each input or output beyond one of each adds (least squares through the 1x1 baseline)."""
        base = self.seconds(1, 1)
        extra = [(i + o - 2, self.seconds(i, o) - base) for i, o in self.measured if i + o > 2]
        return max(sum(n * s for n, s in extra) / sum(n * n for n, _ in extra), 0.0) if extra else 0.0


def _row(probe: probes.Probe, seconds: float) -> fit.Row:
    eqn = probe.eqn
    ins = [getattr(x, "aval", x) for x in eqn.invars]
    outs = [v.aval for v in eqn.outvars]
    source = probe.source if probe.source.startswith("grid") else probe.source.split(":")[0]
    return fit.Row(source, fit.variant_of(eqn.params, ins, outs), probe.size, sum(a.size for a in outs),
                   flops(eqn.primitive, eqn.params, ins, outs), bytes_moved(eqn.primitive, eqn.params, ins, outs),
                   seconds)


def measure_baselines(baselines: Baselines, arities, min_time: float) -> dict[tuple[int, int], float]:
    """Time the baselines of `arities` side by side; each median is also kept in `baselines.measured`."""
    arities = sorted(set(arities))
    medians = time_interleaved([baselines.call(*a) for a in arities], min_time)
    for arity, median in zip(arities, medians, strict=True):
        baselines.measured.setdefault(arity, []).append(median)
    return dict(zip(arities, medians, strict=True))


def measure_primitive(primitive: str, samples, backend: str, grid: probes.Grid, settings: dict, baselines: Baselines,
                      rng: np.random.Generator) -> tuple[list[fit.Row], str | None]:
    """The rows of every probe of `primitive`, and the first failure's text if a probe could not run.
    Each probe gets a warm-up and a pilot call in turn (a series stops at the first probe whose call
    takes `max_probe_s`); then all of them and the baselines of their arities are timed side by side
    (`time_interleaved`)."""
    ready: list[tuple[probes.Probe, Callable[[], object], float]] = []
    failure = None
    too_slow: dict[tuple, int] = {}  # series -> the smallest size whose call took max_probe_s
    with _quiet():
        for probe in probes.probes_for(primitive, samples, grid, rng):
            if probe.size >= too_slow.get(probe.series, math.inf):
                continue
            try:
                call = _caller(probe.closed, probe.args, backend)
                pilot = _pilot(call)
            except Exception as e:  # noqa: BLE001  a probe the backend cannot run is reported, not fatal
                failure = failure or f"{probe}: {type(e).__name__}: {e}".splitlines()[0][:300]
                continue
            smallest = all(p.series != probe.series for p, _, _ in ready)
            if pilot >= settings["max_probe_s"]:
                too_slow[probe.series] = probe.size
                if not smallest:
                    continue
            ready.append((probe, call, pilot))
    arities = [(len(p.closed.jaxpr.invars), len(p.closed.jaxpr.outvars)) for p, _, _ in ready]
    base_arities = sorted(set(arities))
    for arity in base_arities:
        baselines.call(*arity)[0]()  # warm again: on xla, caches are cleared between primitives
    medians = time_interleaved([(c, t) for _, c, t in ready] + [baselines.call(*a) for a in base_arities],
                               settings["min_time_s"])
    base = dict(zip(base_arities, medians[len(ready):], strict=True))
    for arity, median in base.items():
        baselines.measured.setdefault(arity, []).append(median)
    rows = [_row(probe, max(seconds - base[arity], FLOOR_FRACTION * base[arity]))
            for (probe, _, _), arity, seconds in zip(ready, arities, medians, strict=False)]
    return rows, failure


# --- fitting the measurements -----------------------------------------------------------------------------

def fit_profile(measured: dict[str, list[fit.Row]], floor: float) -> dict:
    """The fitted part of a profile: "primitives", "fallback" and "noise_floor_s". Rows are fitted in sorted
    order, the order a profile stores them in, so that `refit` reproduces a profile to the last bit."""
    measured = {name: sorted(rows, key=fit.Row.as_list) for name, rows in measured.items()}
    fallback = fit.fallback_entry([r for rows in measured.values() for r in rows], floor)
    primitives = {name: fit.fit_primitive(rows, fallback["segments"], floor) for name, rows in sorted(measured.items())}
    return {"primitives": primitives, "fallback": fallback, "noise_floor_s": floor}


def refit(profile: dict) -> dict:
    """`profile` fitted anew from the rows it measured (its `measured` lists), as this version of
    `rewrites.latency.fit` fits them: no probe runs again."""
    measured = {name: [fit.Row(*row) for row in entry["measured"]]
                for name, entry in validate_profile(profile)["primitives"].items()}
    return validate_profile({**profile, **fit_profile(measured, profile["noise_floor_s"])}, "the refitted profile")


# --- the whole calibration ---------------------------------------------------------------------------------

@cache
def oracle_samples(per_primitive: int) -> dict:
    """`eval.samples.equation_samples` of the default oracle (kept: it takes seconds to cut them)."""
    from eval.oracle import DEFAULT_ORACLE, load_fixtures
    from eval.samples import equation_samples

    return equation_samples(load_fixtures([DEFAULT_ORACLE]), per_primitive)


def calibrate(backend: str = "numpy", primitives: Iterable[str] | None = None, quick: bool = False,
              progress: bool = True) -> dict:
    """Measure and fit a latency profile of this machine for `backend` (see the module doc and
    `rewrites.latency.profile` for the format). `primitives` restricts it to those names; `quick` uses
    fewer, smaller probes and shorter timings (for tests and a first look)."""
    check_backend(backend)
    start = time.perf_counter()
    grid = probes.QUICK if quick else probes.FULL
    settings = settings_for(quick, grid)
    samples = oracle_samples(settings["samples_per_primitive"])
    available = calibratable(samples)
    names = available if primitives is None else _check_primitives(primitives, available)
    settings["primitives"] = None if primitives is None else sorted(names)

    rng = np.random.default_rng(SEED)
    baselines = Baselines(backend)
    measure_baselines(baselines, BASELINE_ARITIES, 4 * settings["min_time_s"])
    measured: dict[str, list[fit.Row]] = {}
    skipped: dict[str, str] = {}
    with _progress(progress, len(names), backend) as advance:
        for name in names:
            advance(name)
            rows, failure = measure_primitive(name, samples.get(name, []), backend, grid, settings, baselines, rng)
            if backend == "xla":
                import jax
                jax.clear_caches()  # thousands of compiled probes would otherwise stay in memory (GBs)
            if rows:
                measured[name] = rows
            else:
                skipped[name] = failure or "no probe"
    if not measured:
        raise CalibrationError(f"no probe of {', '.join(names)} ran on the {backend} backend: {skipped}")

    measure_baselines(baselines, BASELINE_ARITIES, 4 * settings["min_time_s"])  # at the end too: load drifts
    floor = NOISE_FRACTION * baselines.seconds(1, 1)
    profile = {
        "format": FORMAT, "backend": backend, "machine": fingerprint(), "machine_key": machine_key(),
        "call_overhead_s": baselines.seconds(1, 1), "per_operand_overhead_s": baselines.per_operand(),
        "overhead_by_arity": {f"{i}x{o}": baselines.seconds(i, o) for i, o in sorted(baselines.measured)},
        **fit_profile(measured, floor), "skipped": skipped,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "elapsed_s": round(time.perf_counter() - start, 3), "settings": settings,
    }
    return validate_profile(profile, f"the calibrated {backend} profile")


@contextmanager
def _progress(enabled: bool, total: int, backend: str) -> Iterator[Callable[[str], None]]:
    """`advance(name)` per primitive, drawing a rich progress bar on stderr (nothing if not `enabled`)."""
    if not enabled:
        yield lambda name: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn(f"calibrating {backend}: {{task.description:<28}}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("", total=total)
        done = [-1]

        def advance(name: str) -> None:
            done[0] += 1
            bar.update(task, description=name, completed=done[0])
        yield advance
