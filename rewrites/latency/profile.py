"""Latency profiles on disk: the JSON format, its validation, where profiles are looked for, and the
typed errors for a profile that does not fit this machine.

A profile (format 1) is one JSON object, written with sorted keys:

    {"format": 1, "backend": "numpy" | "xla",
     "machine": eval.machine.fingerprint(), "machine_key": eval.machine.machine_key(),
     "call_overhead_s": seconds of a call of a program that only returns its one input,
     "per_operand_overhead_s": seconds each further input or output adds to that,
     "overhead_by_arity": {"<inputs>x<outputs>": seconds, ...},   (the baselines measured)
     "primitives": {name: {"segments": [{"max_elements": int | null, "coef": {"c0", "c_elem", "c_flops",
                                                                           "c_bytes"}}, ...],
                           "points": n, "median_rel_error": x, "size_terms": "fitted" | "borrowed",
                           "max_elements_measured": n,
                           "variants": {"f64,f64->f64": {"segments": ..., "points": ..., ...}, ...},
                           "measured": [[source, variant, size, elements, flops, bytes, seconds], ...]}},
     "fallback": {"segments": [...], "points": n, "median_rel_error": x, "fitted_on": "..."},
     "skipped": {name: reason},   (primitives calibration tried and could not time)
     "noise_floor_s": times below this were fitted as absolute errors,
     "created": ISO date, "elapsed_s": seconds the calibration took, "settings": {...}}

Coefficients are seconds (per output element, flop, byte); `max_elements` bounds the size of the
equation's largest operand or result; `variants` (when a primitive has several) are keyed by dtypes and
scalar params; `rewrites.latency.fit` says what all of them mean. `measured` holds the rows fitted
(`rewrites.latency.calibrate.refit` fits them again).

Profiles are machine-specific: a time means nothing on another CPU. `default_profile(backend)` looks for
`{backend}-{machine_key}.json` in `$EQJAX_PROFILE_DIR` (if set), then the user cache directory
(`$XDG_CACHE_HOME/eqjax/profiles`, by default `~/.cache/eqjax/profiles`, where `eqjax calibrate` writes),
then the profiles shipped in this package (`rewrites/latency/profiles/`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from eval.machine import machine_key
from ir.errors import EqjaxError

FORMAT = 1
BACKENDS = ("numpy", "xla")
SHIPPED_DIR = Path(__file__).parent / "profiles"
COEFFICIENTS = ("c0", "c_elem", "c_flops", "c_bytes")


class ProfileError(EqjaxError, ValueError):
    """A latency profile that is not valid JSON of the current format."""


class ProfileMachineError(EqjaxError, ValueError):
    """A latency profile measured on another machine (or none for this one)."""


class ProfileNotFound(ProfileMachineError):
    """No latency profile for this machine and backend in any of the places looked at."""


def check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"latency profiles are for the backends {', '.join(BACKENDS)}, not {backend!r}")
    return backend


def calibrate_command(backend: str) -> str:
    return f"eqjax calibrate --backend {backend}"


def describe_machine(fingerprint: dict) -> str:
    return f"{fingerprint.get('cpu', 'unknown CPU')} ({fingerprint.get('cores', '?')} cores)"


# --- paths -------------------------------------------------------------------------------------------------

def profile_filename(backend: str, key: str | None = None) -> str:
    return f"{check_backend(backend)}-{key or machine_key()}.json"


def user_profile_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "eqjax" / "profiles"


def search_dirs() -> list[Path]:
    """Where `default_profile` looks, in order."""
    dirs = [Path(os.environ["EQJAX_PROFILE_DIR"])] if os.environ.get("EQJAX_PROFILE_DIR") else []
    return [*dirs, user_profile_dir(), SHIPPED_DIR]


def default_profile(backend: str) -> Path:
    """The path of this machine's profile for `backend` (see the module doc for where it is looked for);
    raises `ProfileNotFound` naming the machines shipped profiles exist for and the calibrate command."""
    name = profile_filename(backend)
    dirs = search_dirs()
    for directory in dirs:
        if (directory / name).is_file():
            return directory / name
    shipped = sorted({describe_machine(_read_json(p).get("machine", {})) + f", {p.name}"
                      for p in SHIPPED_DIR.glob(f"{backend}-*.json")})
    listing = "; ".join(shipped) if shipped else "none"
    raise ProfileNotFound(
        f"no {backend} latency profile for this machine ({_this_machine()}) named {name} in "
        f"{', '.join(map(str, dirs))}; shipped {backend} profiles are for: {listing}. "
        f"Run `{calibrate_command(backend)}` to measure one")


def _this_machine() -> str:
    from eval.machine import fingerprint
    return f"{describe_machine(fingerprint())}, key {machine_key()}"


# --- reading, writing, checking ----------------------------------------------------------------------------

def _read_json(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ProfileError(f"latency profile {path} is not valid JSON: {e}") from None


def load_profile(path: str | os.PathLike) -> dict:
    return validate_profile(_read_json(Path(path)), str(path))


def save_profile(profile: dict, path: str | os.PathLike) -> Path:
    """Write `profile` (validated) as JSON with sorted keys; creates the directory."""
    validate_profile(profile)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(profile))
    return path


def dumps(profile: dict) -> str:
    return json.dumps(profile, sort_keys=True, indent=1) + "\n"


def check_machine(profile: dict, source: str = "the profile") -> None:
    """Raise `ProfileMachineError` if `profile` was measured on another machine than this one."""
    if profile["machine_key"] == machine_key():
        return
    backend = profile["backend"]
    raise ProfileMachineError(
        f"{source} is a {backend} latency profile of {describe_machine(profile['machine'])}, key "
        f"{profile['machine_key']}, but this machine is {_this_machine()}: its times do not apply here. "
        f"Run `{calibrate_command(backend)}` on this machine (or pass allow_other_machine=True to use it anyway)")


def validate_profile(profile: object, source: str = "latency profile") -> dict:
    """`profile` itself if it is a well-formed profile of the current format; else a `ProfileError` naming
    what is wrong."""
    def fail(what: str):
        raise ProfileError(f"{source}: {what}")

    if not isinstance(profile, dict):
        fail(f"expected a JSON object, got {type(profile).__name__}")
    if profile.get("format") != FORMAT:
        fail(f"format {profile.get('format')!r}, expected {FORMAT} (recalibrate with this eqjax)")
    for key in ("backend", "machine", "machine_key", "call_overhead_s", "per_operand_overhead_s", "noise_floor_s",
                "primitives", "fallback", "created", "settings"):
        if key not in profile:
            fail(f"missing {key!r}")
    if profile["backend"] not in BACKENDS:
        fail(f"unknown backend {profile['backend']!r}")
    for key in ("call_overhead_s", "per_operand_overhead_s", "noise_floor_s"):
        if not _non_negative(profile[key]):
            fail(f"{key} must be a non-negative number, got {profile[key]!r}")
    if not isinstance(profile["primitives"], dict):
        fail("'primitives' must be an object keyed by primitive name")
    entries = [("fallback", profile["fallback"])]
    for name, entry in profile["primitives"].items():
        entries.append((name, entry))
        variants = entry.get("variants", {}) if isinstance(entry, dict) else {}
        entries += [(f"{name} {variant}", sub) for variant, sub in variants.items()]
    for name, entry in entries:
        _check_entry(entry, f"{name!r}", fail)
    return profile


def _non_negative(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and x >= 0 and x == x


def _check_entry(entry, name: str, fail) -> None:
    if not isinstance(entry, dict) or not isinstance(entry.get("segments"), list) or not entry["segments"]:
        fail(f"{name} needs a non-empty list of segments")
    previous = 0
    for i, segment in enumerate(entry["segments"]):
        last = i == len(entry["segments"]) - 1
        bound = segment.get("max_elements")
        if last != (bound is None) or (bound is not None and (not isinstance(bound, int) or bound < previous)):
            fail(f"{name} segment {i}: max_elements must increase, and be null exactly for the last segment")
        previous = bound or previous
        coef = segment.get("coef")
        if not isinstance(coef, dict) or set(coef) != set(COEFFICIENTS):
            fail(f"{name} segment {i}: coef must have exactly {', '.join(COEFFICIENTS)}")
        bad = [k for k, v in coef.items() if not _non_negative(v)]
        if bad:
            fail(f"{name} segment {i}: coefficients {bad} must be non-negative numbers")
