"""A task: a pure function named by its import path and JSON-able arguments, and what running it records.

    Task("rewrites.verify.study:verify_builtin_rule", {"name": "mul-one", "budget": 1000})

The key of a task is the SHA-256 of its function path, its arguments as canonical JSON (sorted keys, no
spaces) and the code version, so a result is reused only by the same call of the same code.

The code version is the SHA-256 of the contents of every source file of `ir`, `eval`, `rewrites` and
`transforms`, with the versions of the libraries whose results they depend on. Contents, not `git describe`:
an installed wheel has no git, a checkout with uncommitted edits has the same `git describe` as without them,
and a Dask worker on another machine has other file times but the same contents when it runs the same code.
Every worker checks that it runs the code version the sweep was keyed by (`call_task`).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ir.errors import EqjaxError

PACKAGES = ("ir", "eval", "rewrites", "transforms")
LIBRARIES = ("egglog", "numpy", "scipy", "sympy", "hypothesis", "mpmath", "ml_dtypes")


class TaskError(EqjaxError):
    """A task that cannot be run as given: a function path that names nothing, arguments that are not JSON."""


@dataclass(frozen=True)
class Task:
    function: str  # "package.module:function"
    args: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        module, sep, name = self.function.partition(":")
        if not (sep and module and name):
            raise TaskError(f"a task function is named 'package.module:function', got {self.function!r}")
        try:
            canonical_json(self.args)
        except (TypeError, ValueError) as e:
            raise TaskError(f"the arguments of {self.function} are not JSON: {e}") from None

    def key(self, code: str) -> str:
        basis = canonical_json({"function": self.function, "args": self.args, "code": code})
        return hashlib.sha256(basis.encode()).hexdigest()[:32]


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


@cache
def code_version() -> str:
    from importlib import metadata

    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for name in LIBRARIES:
        try:
            h.update(f"{name}={metadata.version(name)};".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{name}=none;".encode())
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            h.update(f"{path.relative_to(root).as_posix()}:".encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:16]


def resolve(function: str) -> Callable[..., Any]:
    module, _, name = function.partition(":")
    try:
        target = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise TaskError(f"no task function {function}: {e}") from None
    if not callable(target):
        raise TaskError(f"the task function {function} is not callable")
    return target


def call_task(function: str, args: dict[str, Any], code: str) -> dict[str, Any]:
    """Run one task where this is called (a worker): {"result": JSON or None, "error": None or {type, message,
    traceback}, "seconds": wall time}. The result goes through JSON here, so every executor returns the same
    values (tuples as lists, keys as strings). An exception of the task, egglog's Rust panics included (a
    `BaseException`), is recorded; KeyboardInterrupt and SystemExit stop the sweep."""
    start = time.perf_counter()
    try:
        if code != code_version():
            raise TaskError(f"this worker runs eqjax code {code_version()}, the sweep was keyed by {code}: install "
                            "the same eqjax on every worker")
        result = json.loads(json.dumps(resolve(function)(**args), allow_nan=False))  # keeps the order of keys
        error = None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: B036 -- egglog's PanicException is a BaseException
        result = None
        error = {"type": type(e).__name__, "message": str(e),
                 "traceback": "".join(traceback.format_exception(e, limit=-4)).rstrip()}
    return {"result": result, "error": error, "seconds": round(time.perf_counter() - start, 4)}
