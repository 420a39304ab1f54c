"""Task functions for tests/eval/test_study.py, importable by path in worker processes."""

from __future__ import annotations

import os
from pathlib import Path


def square(x: int, log: str | None = None) -> dict:
    """x squared; appends x to the file `log` (one line a call), which counts how often the task ran."""
    if log is not None:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{x}\n")
    return {"x": x, "square": x * x, "pair": (x, -x)}


def square_or_fail(x: int, fail_at: int) -> dict:
    if x == fail_at:
        raise ValueError(f"no square of {x} today")
    return square(x)


def square_until(x: int, stop_at: int, log: str) -> dict:
    """Like Ctrl-C at the task `stop_at`: the tasks before it finish, this one raises KeyboardInterrupt."""
    if x == stop_at and not Path(log + ".resumed").exists():
        raise KeyboardInterrupt
    return square(x, log)


def square_or_die(x: int, die_at: int) -> dict:
    """Like a crash in native code (an egglog panic that aborts, the OOM killer): the process ends at `die_at`."""
    if x == die_at:
        os._exit(3)
    return square(x)
