"""The optimized, gradient and batched programs of fixture programs, as text: what the determinism test
compares between this process and another one started with another `PYTHONHASHSEED`.

    python -m tests.rewrites.determinism_probe ID...   one JSON object {id: {"optimize"|"grad"|"vmap": text}}
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ProcessPoolExecutor

from eval.oracle import load_fixtures
from ir.errors import EqjaxError
from ir.text import parse_jaxpr
from tests.oracle_paths import ORACLE


def programs_of(case_id: str) -> dict[str, str]:
    """The three programs eqjax derives from the fixture program `case_id`, printed."""
    from rewrites.engine import optimize
    from transforms.ad.programs import grad_program
    from transforms.batching.programs import vmap_program

    case = next(c for c in load_fixtures([ORACLE], ["programs"]) if c.id == case_id)
    closed = parse_jaxpr(case.jaxpr_text)
    floats = [i for i, v in enumerate(closed.jaxpr.invars) if v.aval.dtype.kind == "f"]
    derive = {
        "optimize": lambda: optimize(closed),
        "grad": lambda: grad_program(closed, floats),
        "vmap": lambda: vmap_program(closed, [0] * len(closed.jaxpr.invars), size=3),
    }
    return {what: _printed(f) for what, f in derive.items()}


def _printed(derive) -> str:
    """The derived program's text, or the typed error refusing it (`while` has no VJP): both must repeat."""
    try:
        return str(derive()[0])
    except EqjaxError as e:
        return f"{type(e).__name__}: {e}"


def main(ids: list[str], workers: int = 2) -> dict[str, dict[str, str]]:
    with ProcessPoolExecutor(workers) as pool:
        return dict(zip(ids, pool.map(programs_of, ids), strict=True))


if __name__ == "__main__":
    json.dump(main(sys.argv[1:]), sys.stdout)
