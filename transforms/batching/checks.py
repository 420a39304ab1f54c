"""Conformance checks of batching against the JAX oracle (`eval.oracle.CHECKS`).

    vmap       the batched program at the case's in_axes (out_axes 0) vs jax.vmap(f, in_axes)

It builds the batched program through the e-graph with the `default` rules; a primitive lacking a rule
makes the check `skipped` with the rule named. `batch_case` is shared with the vmap-of-grad check
(`transforms.checks`, which registers both).
"""

from __future__ import annotations

from eval.interpreter import eval_jaxpr
from eval.oracle import CHECKS, Case, CheckFailed, compare_lists, decode_array
from ir.core import ClosedJaxpr
from transforms.batching.programs import vmap_program


def batch_case(case: Case, key: str, closed: ClosedJaxpr) -> tuple[list, list]:
    """`closed` batched at the in_axes of the case's `key` fixture and run on its args; and JAX's outputs."""
    spec = case.raw[key]
    args = [decode_array(a) for a in spec["args"]]
    axes = spec["in_axes"]
    sizes = {a.shape[0] for a, ax in zip(args, axes, strict=True) if ax is not None}
    if len(sizes) != 1:
        raise CheckFailed(f"{key}: the mapped args disagree on the batch size ({sorted(sizes)})")
    program, _ = vmap_program(closed, axes, 0, sizes.pop())
    return eval_jaxpr(program, *args, check=True), [decode_array(o) for o in spec["out"]]


def check_vmap(case: Case, closed: ClosedJaxpr) -> None:
    got, want = batch_case(case, "vmap", closed)
    compare_lists("vmap", got, want, case.rtol, case.atol)


def register() -> None:
    """Put the batching check into `eval.oracle.CHECKS` (`transforms.checks.register_checks` calls it)."""
    CHECKS["vmap"] = check_vmap
