"""Runtime measurement of a program on a backend: wall-clock time per call, repeated.

    m = measure(closed, *args, backend="numpy")          # warm up, then time calls until `min_time`
    m.median, m.iqr, m.count                              # seconds, seconds, timed calls
    m.as_dict()                                           # with the machine fingerprint, for --json

Each timed call runs the program once and waits for its results (`eval.backends.block`: JAX computes
asynchronously); the first `warmup` calls (compilation, caches) are not timed. Inputs of the xla backend
are placed on the device before timing, as a JAX user's arrays are. Thread pools are left as they are
and recorded in the fingerprint; pin them with `threadpoolctl` or the environment (OMP_NUM_THREADS, ...)
to compare systems under the same settings.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from eval import machine
from eval.backends import block, runner
from ir.core import ClosedJaxpr


@dataclass
class Measurement:
    backend: str
    times: list[float]  # seconds per timed call, in run order
    warmup: int
    machine: dict = field(repr=False, default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def quartiles(self) -> tuple[float, float]:
        if len(self.times) < 2:
            return self.times[0], self.times[0]
        q = statistics.quantiles(self.times, n=4, method="inclusive")
        return q[0], q[2]

    @property
    def iqr(self) -> float:
        q1, q3 = self.quartiles
        return q3 - q1

    def summary(self) -> str:
        return f"{self.backend}: median {_seconds(self.median)}, IQR {_seconds(self.iqr)}, {self.count} calls"

    def as_dict(self) -> dict:
        q1, q3 = self.quartiles
        return {"backend": self.backend, "median_s": self.median, "q1_s": q1, "q3_s": q3, "iqr_s": self.iqr,
                "count": self.count, "warmup": self.warmup, "machine": self.machine}


def _seconds(t: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t * 1e9:.3g} ns"


def time_calls(fn: Callable[[], object], warmup: int = 1, repeats: int | None = None,
               min_time: float = 0.2, max_repeats: int = 10_000) -> list[float]:
    """Seconds per call of `fn` (which must block until its work is done): `repeats` calls, or as many
    as fill `min_time` (at least 5, at most `max_repeats`), after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    times: list[float] = []
    clock = time.perf_counter
    spent = 0.0
    while True:
        t0 = clock()
        fn()
        t = clock() - t0
        times.append(t)
        spent += t
        if repeats is not None:
            if len(times) >= repeats:
                return times
        elif (spent >= min_time and len(times) >= 5) or len(times) >= max_repeats:
            return times


def time_side_by_side(runs: dict[str, Callable[[], object]], min_time: float = 0.2, rounds: int = 7,
                      ) -> dict[str, list[float]]:
    """Seconds per call of each of `runs` (each blocking until done), measured in interleaved rounds: each
    round times a batch of calls of every run in turn, so a change of load on the machine touches all of
    them alike. Returns each run's per-call time of every round (at least `rounds` rounds, and until each
    run has had `min_time` seconds). A run's first call is a warm-up."""
    for fn in runs.values():
        fn()
    batch = {}
    for name, fn in runs.items():  # calls per batch: about 1/rounds of min_time, at least one
        t0 = time.perf_counter()
        fn()
        one = max(time.perf_counter() - t0, 1e-7)
        batch[name] = max(1, int(min_time / rounds / one))
    times: dict[str, list[float]] = {name: [] for name in runs}
    spent = dict.fromkeys(runs, 0.0)
    while min(len(t) for t in times.values()) < rounds or min(spent.values()) < min_time:
        for name, fn in runs.items():
            n = batch[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            t = time.perf_counter() - t0
            times[name].append(t / n)
            spent[name] += t
    return times


def measure(closed: ClosedJaxpr, *args, backend: str = "numpy", warmup: int = 1, repeats: int | None = None,
            min_time: float = 0.2) -> Measurement:
    """Time `closed` on `args` with `backend` ("interpreter", "numpy" or "xla"); see the module doc."""
    run = runner(closed, backend)
    inputs: Sequence = [np.asarray(a) for a in args]
    if backend == "xla":
        import jax
        inputs = [jax.device_put(a) for a in inputs]
    if backend == "xla":
        warmup = max(warmup, 1)  # the first call compiles
    times = time_calls(lambda: block(run(*inputs)), warmup=warmup, repeats=repeats, min_time=min_time)
    return Measurement(backend, times, warmup, machine.fingerprint())
