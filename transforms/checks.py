"""Conformance checks of composed transforms against the JAX oracle, and the one registration of every
transform check into `eval.oracle.CHECKS`.

    vmap_grad  the batched gradient program vs jax.vmap(jax.grad(f, argnums), in_axes)
    hessian    jacfwd(jacrev(f)) at argnum 0 vs JAX's hessian

They build on both AD and batching, so they live above both (`transforms.ad.checks` and
`transforms.batching.checks` hold each transform's own checks). Call `register_checks()` before running
a conformance suite that checks transforms.
"""

from __future__ import annotations

from eval.interpreter import eval_jaxpr
from eval.oracle import CHECKS, Case, CheckFailed, compare_lists, decode_array
from ir.core import ClosedJaxpr
from transforms.ad import checks as ad_checks
from transforms.ad.programs import grad_program
from transforms.batching import checks as batching_checks
from transforms.jacobians import hessian_program


def check_vmap_grad(case: Case, closed: ClosedJaxpr) -> None:
    gradient, _ = grad_program(closed, case.raw["vmap_grad"]["argnums"])
    got, want = batching_checks.batch_case(case, "vmap_grad", gradient)
    compare_lists("vmap_grad", got, want, case.rtol, case.atol)


def check_hessian(case: Case, closed: ClosedJaxpr) -> None:
    spec = case.raw["hessian"]
    if spec["argnum"] != 0:
        raise CheckFailed(f"hessian at argnum {spec['argnum']} is not what this check computes")
    got = eval_jaxpr(hessian_program(closed, 0), *case.arrays("args"), check=True)
    compare_lists("hessian", got, [decode_array(spec["out"])], case.rtol, case.atol)


def register_checks() -> None:
    """Every transform check: AD's (jvp, vjp, grad, grad_grad), batching's (vmap) and the composed ones."""
    ad_checks.register()
    batching_checks.register()
    CHECKS.update({"vmap_grad": check_vmap_grad, "hessian": check_hessian})
