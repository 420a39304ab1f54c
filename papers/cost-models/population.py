"""The study's programs: each a program and its inputs, in four groups.

| group       | programs                                                                     |
|-------------|------------------------------------------------------------------------------|
| `oracle`    | the oracle's hand-written programs (`programs` family), minus `redundant_*`   |
| `redundant` | the oracle's `redundant_*` programs, written with algebra to remove          |
| `batched`   | larger variants: each oracle program vmapped over a batch of 512              |
| `runtime`   | the realistic-size suite of `eqjax bench runtime`, gradients included         |

A gradient workload enters as its gradient program (what `grad` builds); every program then goes
through the same saturation, sampling and extraction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ir.core import ClosedJaxpr

BATCH = 512
SMALL = ("program/mlp_tanh", "program/softmax_xent", "program/layernorm", "program/redundant_mixed",
         "program/lennard_jones", "program/horner")
SMALL_RUNTIME = ("layernorm", "mlp_grad")


@dataclass
class Subject:
    name: str
    group: str
    closed: ClosedJaxpr
    args: tuple[np.ndarray, ...]


def _oracle(small: bool) -> list[Subject]:
    from eval.oracle import DEFAULT_ORACLE, load_fixtures, parse_case

    out = []
    for case in load_fixtures([DEFAULT_ORACLE], ["programs"]):
        if small and case.id not in SMALL:
            continue
        name = case.id.removeprefix("program/")
        group = "redundant" if name.startswith("redundant_") else "oracle"
        out.append(Subject(name, group, parse_case(case), tuple(case.arrays("args"))))
    return out


def _batched(subjects: list[Subject]) -> list[Subject]:
    """Each program vmapped over a leading batch axis of every input; a program the batching rules do
    not cover is left out (listed in `skipped`)."""
    from transforms.batching.programs import vmap_program

    out, skipped = [], []
    for s in subjects:
        try:
            batched, _ = vmap_program(s.closed, [0] * len(s.args), 0, size=BATCH)
        except Exception as e:  # an unsupported primitive or shape: recorded, not hidden
            skipped.append(f"{s.name}: {type(e).__name__}: {str(e)[:80]}")
            continue
        rng = np.random.default_rng(0)
        args = tuple(_batch(a, rng) for a in s.args)
        out.append(Subject(f"{s.name}@{BATCH}", "batched", batched, args))
    _batched.skipped = skipped
    return out


def _batch(a: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """BATCH copies of an input; floats get a relative jitter of 1e-3 so the rows differ but stay in the
    input's domain (positive stays positive)."""
    stacked = np.stack([a] * BATCH)
    if stacked.dtype.kind == "f":
        stacked = stacked * (1 + 1e-3 * rng.uniform(-1, 1, stacked.shape)).astype(stacked.dtype)
    return stacked


def _runtime(small: bool) -> list[Subject]:
    import ir
    from transforms import grad
    from transforms.runtime_suite import workloads

    out = []
    for w in workloads():
        if small and w.name not in SMALL_RUNTIME:
            continue
        fun = grad(w.fun, argnums=w.argnums) if w.is_grad else w.fun
        out.append(Subject(f"suite_{w.name}", "runtime", ir.make_jaxpr(fun)(*w.args), tuple(w.args)))
    return out


def population(small: bool = False) -> list[Subject]:
    oracle = _oracle(small)
    return [*oracle, *_batched([s for s in oracle if s.group == "oracle"]), *_runtime(small)]
