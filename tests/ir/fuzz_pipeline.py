"""Mutated fixture texts through decode → parse → typecheck → eval (and, for one case in `OPTIMIZE_EVERY`,
`optimize` with a small iteration limit). Each case ends in one outcome:

| outcome         | meaning                                                            |
|-----------------|--------------------------------------------------------------------|
| `ok`            | the mutated text parsed, type checked and evaluated                |
| an error's name | a typed error (`JaxprSyntaxError`, `JaxprTypeError`, ...)          |
| `untyped:NAME`  | any other exception: a bug                                        |
| `hang`          | the case ran over its time bound (SIGALRM): a bug                  |

    python -m tests.ir.fuzz_pipeline --n 10000           # the table of outcomes
    python -m tests.ir.fuzz_pipeline --seed 4711 --show  # one case: its mutations, text and outcome

Cases are numbered by seed (`ir.text.mutations.mutate`), so a failure is reproduced by its seed alone.
"""

from __future__ import annotations

import argparse
import collections
import signal
import sys
import time
import traceback
from dataclasses import dataclass

import numpy as np

from eval.interpreter import eval_jaxpr, runtime_shape
from ir.errors import EqjaxError
from ir.text import decode_source, parse_jaxpr
from ir.text.mutations import mutate

OPTIMIZE_EVERY = 25  # one case in 25 also goes through optimize
# Seconds per case: generous, since CI machines are shared (the slowest of 10,000 cases takes 1.5 s of CPU);
# a real hang never returns.
TIME_BOUND = 20.0
TYPED = ("JaxprSyntaxError", "JaxprTypeError", "UnsupportedPrimitive")


class Hang(Exception):
    """Raised by SIGALRM in the main thread when a case runs over its bound."""


@dataclass
class Outcome:
    seed: int
    kind: str  # "ok", a typed error's class name, "untyped:<class>" or "hang"
    mutations: list[str]
    text: str | bytes
    detail: str = ""
    seconds: float = 0.0

    @property
    def bad(self) -> bool:
        return self.kind == "hang" or self.kind.startswith("untyped")

    def describe(self, limit: int = 2000) -> str:
        shown = repr(self.text)
        if len(shown) > limit:
            shown = shown[:limit // 2] + f" ... ({len(shown)} chars) ... " + shown[-limit // 2:]
        return (f"seed {self.seed}: {self.kind} after {self.seconds:.1f} s; mutations {self.mutations}\n"
                f"{self.detail}\ntext: {shown}")


def fixture_texts() -> list[str]:
    from tests.ir.test_text_roundtrip import TEXTS

    return [TEXTS[k] for k in sorted(TEXTS)]


def sample_args(closed, rng: np.random.Generator) -> list[np.ndarray]:
    """Arguments of the program's input avals: small random values (integers in [0, 3), keys zero)."""
    args = []
    for v in closed.jaxpr.invars:
        dt, shape = v.aval.dtype, runtime_shape(v.aval)
        if dt.kind == "key":
            args.append(np.zeros(shape, dt.numpy))
        elif dt.kind in ("i", "u"):
            args.append(rng.integers(0, 3, size=shape).astype(dt.numpy))
        elif dt.kind in ("b", "float0"):
            args.append((rng.random(shape) < 0.5).astype(dt.numpy))
        elif dt.kind == "c":
            args.append((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt.numpy))
        else:
            args.append(rng.standard_normal(shape).astype(dt.numpy))
    return args


def _pipeline(data: str | bytes, seed: int) -> None:
    text = decode_source(data) if isinstance(data, bytes) else data
    closed = parse_jaxpr(text)
    if sum(int(np.prod(runtime_shape(v.aval), dtype=np.float64)) for v in closed.jaxpr.invars) > 10**6:
        return  # a mutated dimension asks for more memory than a test should use; parsing was the point
    eval_jaxpr(closed, *sample_args(closed, np.random.default_rng(seed)))
    if seed % OPTIMIZE_EVERY == 0:
        from rewrites.engine import Limits, optimize

        optimize(closed, limits=Limits(iterations=2, seconds=2.0))


def _on_alarm(signum, frame):
    raise Hang()


def run_case(seed: int, sources: list[str], time_bound: float = TIME_BOUND) -> Outcome:
    data, names = mutate(sources, seed)
    outcome = Outcome(seed, "ok", names, data)
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, time_bound)
    start = time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            _pipeline(data, seed)
    except Hang:
        outcome.kind = "hang"
    except EqjaxError as e:
        outcome.kind, outcome.detail = type(e).__name__, str(e).split("\n")[0][:300]
    except Exception as e:  # the bug this fuzzing looks for
        outcome.kind = f"untyped:{type(e).__name__}"
        outcome.detail = "".join(traceback.format_exception(e)[-6:])[-3000:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        outcome.seconds = time.perf_counter() - start
    return outcome


def run(n: int, first_seed: int = 0, time_bound: float = TIME_BOUND, progress: bool = False) -> list[Outcome]:
    sources = fixture_texts()
    outcomes = []
    for seed in range(first_seed, first_seed + n):
        outcomes.append(run_case(seed, sources, time_bound))
        if progress and len(outcomes) % 500 == 0:
            bad = sum(o.bad for o in outcomes)
            print(f"{len(outcomes)} cases, {bad} bad", file=sys.stderr, flush=True)
    return outcomes


def table(outcomes: list[Outcome]) -> str:
    counts = collections.Counter(o.kind for o in outcomes)
    for kind in ("ok", *TYPED, "untyped", "hang"):
        counts.setdefault(kind, 0)
    untyped = sum(v for k, v in counts.items() if k.startswith("untyped:"))
    rows = [(k, v) for k, v in sorted(counts.items()) if k != "untyped"] + [("untyped (total)", untyped)]
    width = max(len(k) for k, _ in rows)
    lines = [f"{'outcome':<{width}}  count", f"{'-' * width}  -----"]
    lines += [f"{k:<{width}}  {v:5d}" for k, v in rows]
    slowest = max(outcomes, key=lambda o: o.seconds)
    lines.append(f"{len(outcomes)} cases; slowest: seed {slowest.seed} ({slowest.seconds:.2f} s)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.ir.fuzz_pipeline", description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="number of mutated texts")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--time-bound", type=float, default=TIME_BOUND, help="seconds per case")
    ap.add_argument("--show", action="store_true", help="print every bad case in full")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    outcomes = run(args.n, args.seed, args.time_bound, progress=True)
    print(table(outcomes))
    print(f"{time.perf_counter() - start:.1f} s")
    bad = [o for o in outcomes if o.bad or (args.show and args.n == 1)]
    for o in bad if args.show else bad[:5]:
        print("\n" + o.describe(), file=sys.stderr)
    return 1 if any(o.bad for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
