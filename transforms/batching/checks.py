"""Conformance checks of batching against the JAX oracle (`eval.oracle.CHECKS`).

    vmap       the batched program at the case's in_axes (out_axes 0) vs jax.vmap(f, in_axes)
    vmap_grad  the batched gradient program vs jax.vmap(jax.grad(f, argnums), in_axes)

Both build their programs through the e-graph with the `default` rules; a primitive lacking a rule
makes the check `skipped` with the rule named.
"""

from __future__ import annotations

from eval.interpreter import eval_jaxpr
from eval.oracle import CHECKS, Case, CheckFailed, compare_lists, decode_array
from ir.core import ClosedJaxpr
from transforms.ad.programs import grad_program
from transforms.batching.programs import vmap_program


def _batch(case: Case, key: str, closed: ClosedJaxpr) -> tuple[list, list]:
    spec = case.raw[key]
    args = [decode_array(a) for a in spec["args"]]
    axes = spec["in_axes"]
    sizes = {a.shape[0] for a, ax in zip(args, axes, strict=True) if ax is not None}
    if len(sizes) != 1:
        raise CheckFailed(f"{key}: the mapped args disagree on the batch size ({sorted(sizes)})")
    program, _ = vmap_program(closed, axes, 0, sizes.pop())
    return eval_jaxpr(program, *args, check=True), [decode_array(o) for o in spec["out"]]


def check_vmap(case: Case, closed: ClosedJaxpr) -> None:
    got, want = _batch(case, "vmap", closed)
    compare_lists("vmap", got, want, case.rtol, case.atol)


def check_vmap_grad(case: Case, closed: ClosedJaxpr) -> None:
    gradient, _ = grad_program(closed, case.raw["vmap_grad"]["argnums"])
    got, want = _batch(case, "vmap_grad", gradient)
    compare_lists("vmap_grad", got, want, case.rtol, case.atol)


def register() -> None:
    CHECKS.update({"vmap": check_vmap, "vmap_grad": check_vmap_grad})


register()
