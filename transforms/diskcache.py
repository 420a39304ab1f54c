"""The persistent cache of optimized programs, as JAX's compilation cache is for XLA executables.

`jit`, `grad`/`value_and_grad` and `vmap` look a program up here before building it through the e-graph,
so the same call in a new process skips tracing rules into egglog, saturation and extraction. An entry is
keyed by the SHA-256 of
- the input program's fingerprint (its canonical text and constant values),
- what is built from it (`jit`, a gradient with respect to given inputs, a batching) and the optimizer's
  settings (rule set, cost model, extractor, limits, loop rewrites),
- the content of a rule file or a latency profile the settings name (`cost="latency"`),
- the eqjax code: its version and the size and modification time of every source file of `ir`, `eval`,
  `rewrites` and `transforms`, so an edited rule never meets a program optimized before the edit.
Settings that cannot be named stably (a cost model given as a Python function, rules given as objects, a
program with custom derivative rules registered in `ir.custom_rules`) bypass the cache.

Location: `$EQJAX_CACHE_DIR`, else `$XDG_CACHE_HOME/eqjax`, else `~/.cache/eqjax`. `EQJAX_CACHE=off`
turns it off (the test suite does, but for the tests of the cache itself). An entry is one JSON file
(the optimized jaxpr text, its constants' bytes, the optimization report), written atomically; a file
that cannot be read is ignored and rebuilt.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from eval.study.task import code_version  # the sources' and libraries' versions (a digest of contents)
from ir.core import ClosedJaxpr


def cache_dir() -> Path | None:
    if os.environ.get("EQJAX_CACHE", "").lower() in ("0", "off", "false", "no"):
        return None
    if os.environ.get("EQJAX_CACHE_DIR"):
        return Path(os.environ["EQJAX_CACHE_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "eqjax"


def _setting(value: Any) -> Any:
    """A JSON-able name of a setting, or raise TypeError when it has none that is stable."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (tuple, list)):
        return [_setting(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _setting(v) for k, v in sorted(value.items())}
    if hasattr(value, "__dataclass_fields__"):  # Limits, Options
        return {k: _setting(getattr(value, k)) for k in value.__dataclass_fields__}
    raise TypeError(f"no stable name for {type(value).__name__}")


def _rule_files(rules: Any) -> list[str]:
    """The contents' hashes of the rule files a rule-set spec names (`default,+my.rules`)."""
    if not isinstance(rules, str):
        return []
    out = []
    for item in rules.split(","):
        item = item.strip().lstrip("+")
        if item.endswith(".rules") and Path(item).is_file():
            out.append(hashlib.sha256(Path(item).read_bytes()).hexdigest())
    return out


def entry_key(kind: str, program: ClosedJaxpr, settings: dict) -> str | None:
    """The cache key of building `kind` from `program` with `settings`, or None when not cacheable."""
    from ir.custom_rules import registered
    from ir.typecheck import fingerprint
    from rewrites.costs import cost_source

    if registered():
        return None
    try:
        named = _setting(settings)
    except TypeError:
        return None
    options = settings.get("options")
    cost = getattr(options, "cost", None) if options is not None else settings.get("cost")
    basis = {"kind": kind, "program": fingerprint(program), "settings": named,
             "rule_files": _rule_files(settings.get("rules") or getattr(options, "rules", None)),
             "cost_source": cost_source(cost), "code": code_version()}
    return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()


def _encode_array(a: np.ndarray) -> dict:
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": base64.b64encode(a.tobytes(order="C")).decode()}


def _decode_array(d: dict) -> np.ndarray:
    from ir.dtypes import BY_NAME

    dtype = np.dtype(BY_NAME[d["dtype"]].numpy) if d["dtype"] in BY_NAME else np.dtype(d["dtype"])
    return np.frombuffer(base64.b64decode(d["data"]), dtype=dtype).reshape(tuple(d["shape"])).copy()


def load(key: str):
    """The cached (program, report) of `key`, or None."""
    from ir.errors import EqjaxError
    from ir.text import parse_jaxpr
    from rewrites.engine import Report

    directory = cache_dir()
    path = directory / f"{key}.json" if directory else None
    if path is None or not path.is_file():
        return None
    try:
        entry = json.loads(path.read_text())
        parsed = parse_jaxpr(entry["jaxpr"])
        program = ClosedJaxpr(parsed.jaxpr, [_decode_array(c) for c in entry["consts"]])
        return program, Report(**entry["report"])
    except (OSError, ValueError, KeyError, TypeError, EqjaxError):  # a damaged entry is rebuilt
        return None


def store(key: str, program: ClosedJaxpr, report) -> None:
    """Write an entry, if the program's text reads back as the same program (else it is not cached)."""
    from ir.errors import EqjaxError
    from ir.text import parse_jaxpr

    directory = cache_dir()
    if directory is None:
        return
    text = str(program)
    try:
        if str(parse_jaxpr(text)) != text:
            return
    except EqjaxError:
        return
    entry = {"jaxpr": text, "consts": [_encode_array(np.asarray(c)) for c in program.consts],
             "report": report.as_dict()}
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=directory, suffix=".tmp", delete=False) as f:
            json.dump(entry, f)
        os.replace(f.name, directory / f"{key}.json")
    except OSError:  # a read-only or full disk: the cache is an optimization only
        pass


def cached(kind: str, program: ClosedJaxpr, settings: dict, build: Callable[[], tuple]) -> tuple:
    """`build()`'s (program, report), from the cache when this build was done before."""
    key = entry_key(kind, program, settings) if cache_dir() is not None else None
    if key is not None:
        hit = load(key)
        if hit is not None:
            return hit
    result = build()
    if key is not None:
        store(key, *result)
    return result
