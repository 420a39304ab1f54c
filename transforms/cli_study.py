"""The flags every long command shares, and running its tasks as a sweep (`eval.study`).

    --jobs N            worker processes: a local process pool (spawned), or N Dask workers with --scheduler local;
                        0: one per core; 1 (the default): in this process
    --scheduler ADDR    run on Dask: `local` starts a LocalCluster, `tcp://host:8786` uses a running scheduler
    --json-lines PATH   stream one JSON line per finished task to PATH (in task order once the sweep completes)
    --resume            with --json-lines: run only the tasks whose results are not in PATH yet
    --quiet             no progress bar (it is drawn on stderr when that is a terminal)

Ctrl-C keeps the finished tasks' lines; the command exits with status 130 and says how to resume.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager

from transforms.cli_options import UsageError


def add_study_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", type=_jobs, default=1, metavar="N",
                   help="worker processes (default 1: in this process; 0: one per core)")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="run the tasks on Dask: 'local' (a LocalCluster of --jobs workers) or tcp://host:8786")
    p.add_argument("--json-lines", metavar="PATH", help="stream one JSON line per finished task to PATH")
    p.add_argument("--resume", action="store_true", help="with --json-lines: skip the tasks already in PATH")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0: {text!r}")
    return value or os.cpu_count() or 1


@contextmanager
def preparing(args, what: str):
    """A spinner on stderr (a terminal, not --quiet) while the tasks are made, so a sweep shows life at once."""
    if args.quiet or not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(what):
        yield


RELEASE = "rewrites.sweep:release_engine_state"  # what a Dask worker runs before it closes (`eval.study.Dask`)


def script_main(main) -> None:
    """Run a script's `main()` (a paper's run.py) as the CLI runs a command: Ctrl-C in a sweep prints where the
    finished tasks are and exits with status 130, not a traceback."""
    from eval.study import StudyInterrupted

    try:
        main()
    except StudyInterrupted as e:
        print(e, file=sys.stderr)
        raise SystemExit(130) from None


def run_tasks(args, tasks, label: str = "tasks"):
    """Run `tasks` as the study flags of `args` say; the `eval.study.Study`."""
    from eval.study import executor_for, run_study

    _check_resume(args)
    executor = executor_for(args.jobs, args.scheduler, release=RELEASE)
    return run_study(tasks, out=args.json_lines, executor=executor,
                     resume=args.resume, quiet=args.quiet, label=label)


def row_runner(args, bench: str, timed: str | None = None):
    """The `eval.study.RowRunner` of `eqjax bench BENCH` on the study flags of `args`. `timed` says why every row
    of the bench is a wall-clock timing: --jobs > 1 and --scheduler are then refused (rows timed side by side on
    shared cores slow each other down). A bench with untimed sections runs only those on the executor asked for."""
    from eval.study import RowRunner

    _check_resume(args)
    if args.jobs > 1 or args.scheduler:
        if timed:
            raise UsageError(f"bench {bench} runs its rows one at a time in this process, {timed}: "
                             "drop --jobs and --scheduler")
        print(f"bench {bench}: the timed rows run one at a time in this process; --jobs and --scheduler apply to "
              "the untimed ones", file=sys.stderr)
    return RowRunner(args.jobs, args.scheduler, args.json_lines, args.resume, args.quiet, release=RELEASE)


def _check_resume(args) -> None:
    if args.resume and not args.json_lines:
        raise UsageError("--resume continues the results of --json-lines PATH: name the file")
