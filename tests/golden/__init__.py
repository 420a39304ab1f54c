"""Golden record: the programs eqjax derives from every oracle case, printed, so that a refactor that must not
change behaviour (issue 19) can be checked byte for byte.

For each case: `optimize` (default rules, flops, greedy_dag), `jvp` (a tangent per float input), `vjp` (a
cotangent input per float output, every float input), `vmap` (the case's `in_axes`, or every input on axis 0;
batch size 3) and, for whole programs, `grad` (the case's argnums). A derivation eqjax refuses records the typed
error instead; that must repeat too. Saturation runs without its wall-clock bound (`Limits.seconds`), the one
bound that depends on the machine's load: a loaded machine would otherwise stop a run early and derive another
program (seen once: cholesky's JVP under five processes on two cores).

    python -m tests.golden record [--jobs N]     (re)write tests/golden/<family>.json
    python -m tests.golden check [--jobs N] [--every K] [ID...]   compare, print the differences, exit 1 on any

`tests/golden/test_golden.py` checks a sample under the `ci` profile and every case under `nightly`.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path

from eval.oracle import Case, load_fixtures, parse_case
from ir.errors import EqjaxError
from tests.oracle_paths import ORACLE

HERE = Path(__file__).resolve().parent
UNBOUNDED = 3600.0  # seconds


def cases() -> list[Case]:
    return list(_cases_by_id().values())


@cache
def _cases_by_id() -> dict[str, Case]:
    """The oracle cases by id, loaded once per process (a pool worker derives many)."""
    return {c.id: c for c in load_fixtures([ORACLE])}


def derivations(case: Case) -> dict[str, str]:
    """What eqjax derives from `case`, each printed (or the typed error that refused it)."""
    from rewrites.engine import optimize
    from rewrites.options import Limits, Options
    from transforms.ad.programs import grad_program, jvp_program, vjp_program
    from transforms.batching.programs import vmap_program

    data = case.raw
    closed = parse_case(case)
    floats = [i for i, v in enumerate(closed.jaxpr.invars) if v.aval.dtype.kind in "fc"]
    in_axes = data["vmap"]["in_axes"] if "vmap" in data else [0] * len(closed.jaxpr.invars)
    limits = Limits(seconds=UNBOUNDED)
    options = Options(limits=limits)
    derive = {
        "optimize": lambda: optimize(closed, limits=limits),
        "jvp": lambda: jvp_program(closed, options=options),
        "vjp": lambda: vjp_program(closed, floats, options=options),
        "vmap": lambda: vmap_program(closed, in_axes, size=3, options=options),
    }
    if "grad" in data:
        derive["grad"] = lambda: grad_program(closed, data["grad"]["argnums"], options=options)
    return {what: _printed(f) for what, f in derive.items()}


def _printed(derive) -> str:
    try:
        return str(derive()[0])
    except EqjaxError as e:
        return f"{type(e).__name__}: {e}"


def _derive_id(case_id: str) -> tuple[str, dict[str, str]]:
    return case_id, derivations(_cases_by_id()[case_id])


def derive_all(ids: list[str], jobs: int) -> dict[str, dict[str, str]]:
    if jobs <= 1:
        return dict(map(_derive_id, ids))
    with ProcessPoolExecutor(jobs) as pool:
        return dict(pool.map(_derive_id, ids, chunksize=1))


def recorded() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for f in sorted(HERE.glob("*.json")):
        out.update(json.loads(f.read_text())["cases"])
    return out


def record(jobs: int) -> None:
    all_cases = cases()
    derived = derive_all([c.id for c in all_cases], jobs)
    for family in sorted({c.family for c in all_cases}):
        rows = {c.id: derived[c.id] for c in all_cases if c.family == family}
        text = json.dumps({"family": family, "cases": rows}, indent=1, sort_keys=True)
        (HERE / f"{family}.json").write_text(text + "\n")


def differences(ids: list[str], jobs: int) -> list[str]:
    want = recorded()
    missing = [i for i in ids if i not in want]
    got = derive_all([i for i in ids if i in want], jobs)
    out = [f"{i}: not recorded" for i in missing]
    for i, programs in got.items():
        for what in sorted(set(programs) | set(want[i])):
            if programs.get(what) != want[i].get(what):
                out.append(f"{i} {what}:\n--- recorded\n{want[i].get(what)}\n+++ now\n{programs.get(what)}")
    return out


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m tests.golden")
    ap.add_argument("command", choices=["record", "check"])
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--every", type=int, default=1, help="check every K-th case only")
    args = ap.parse_intermixed_args(argv)
    if args.command == "record":
        record(args.jobs)
        return 0
    ids = args.ids or [c.id for c in cases()][::args.every]
    diffs = differences(ids, args.jobs)
    for d in diffs:
        print(d)
    print(f"{len(ids)} cases checked, {len(diffs)} differences")
    return 1 if diffs else 0
