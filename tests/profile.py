"""The hypothesis profile of the run (`HYPOTHESIS_PROFILE`, default `ci`; tests/conftest.py loads it). Tests
that run every row of a deterministic table nightly and a subset under `ci` read `NIGHTLY`, or take the subset
with `ci_share`."""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
NIGHTLY = PROFILE == "nightly"
# Random programs of the semantics run (tests/rewrites/test_semantics_run.py): ~1 s each under three rule sets.
SEMANTICS_PROGRAMS = 2000 if NIGHTLY else 16

T = TypeVar("T")


def ci_share(items: Iterable[T], keep_every: int | None, by: Callable[[T], Hashable] | None = None) -> list[T]:
    """Every item nightly; under `ci` a deterministic share in the items' given order (which the caller keeps
    stable): within each group of `by(item)` (one group when `by` is None) the 1st, (k+1)-th, (2k+1)-th... item
    for `keep_every=k`, or only the first when `keep_every` is None. Every group keeps at least one item."""
    items = list(items)
    if NIGHTLY:
        return items
    seen: dict[Hashable, int] = {}
    kept = []
    for item in items:
        group = by(item) if by is not None else None
        index = seen[group] = seen.get(group, -1) + 1
        if index == 0 or keep_every is not None and index % keep_every == 0:
            kept.append(item)
    return kept


# Whole-corpus sweeps: `make test` (CI) and nightly run them, `make check` skips them (`pytest -m "not sweep"`) for
# a quick inner loop. One row per test-id prefix, with what it sweeps; tests/conftest.py marks the tests, and
# fails a full run in which a row matches no test (a renamed test would otherwise leave `make check` slow).
SWEEPS = {
    "tests/golden/": "every oracle case's derived programs against the golden record",
    "tests/rewrites/test_verify_builtin.py": "every built-in rule verified",
    "tests/rewrites/test_conformance_optimized.py": "every oracle case optimized, against JAX's values",
    "tests/rewrites/test_semantics_run.py": "random programs and fixtures under every rule set",
    "tests/rewrites/test_optimize_properties.py": "optimized oracle programs agree with the originals",
    "tests/rewrites/test_engine.py::test_decode_encode_round_trip": "every fixture family decoded and re-encoded",
    "tests/rewrites/test_scale.py": "10,000-equation programs",
    "tests/rewrites/test_show_browser.py": "eqjax show's page in a real browser",
    "tests/transforms/test_verify_transforms.py": "every VJP rule against its JVP, every batching rule against a loop",
    "tests/transforms/test_ad_conformance.py": "grad, hessian, JVP and VJP of every whole program",
    "tests/transforms/test_vmap_conformance.py": "vmap and vmap-of-grad of every whole program",
    "tests/transforms/test_jax_custom_rules.py": "every custom rule of JAX's own library",
    "tests/transforms/test_wheel_install.py": "the wheel built and every command run from it",
    "tests/transforms/test_bench_runtime.py": "first calls in fresh processes",
    "tests/library/": "jax.nn, jax.scipy, flax and optax programs",
    "tests/eval/test_xla_backend.py": "every oracle case printed back through XLA",
    "tests/eval/test_jax_gradient_programs.py": "JAX's gradient programs of every fixture",
    **{f"tests/transforms/test_{kind}_{family}.py::test_{what}oracle": f"every {family} oracle case under {kind}"
       for kind, families in (("ad", ("unary", "binary", "shape", "reduce", "indexing", "dot_conv", "linalg", "fft",
                                      "random", "control")),
                              ("vmap", ("elementwise", "shape", "reduce", "indexing", "dot_conv", "linalg", "fft",
                                        "random", "control")))
       for family in families for what in ("control_flow_" if family == "control" else "",)},
}
