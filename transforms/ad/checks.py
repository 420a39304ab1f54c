"""Conformance checks of the AD transforms against the JAX oracle (`eval.oracle.CHECKS`).

    jvp        jvp_program on the case's tangents vs JAX's out_tangents
    vjp        vjp_program on the case's cotangents vs JAX's arg_cotangents
    grad       the gradient program (seed 1) at the fixture's argnums vs JAX's grad
    grad_grad  the gradient of the gradient program vs JAX's grad(grad(f))

Every check builds the derivative program through the e-graph with the `default` rules; a primitive
lacking a rule makes the check `skipped` with the rule named. `transforms.checks.register_checks` registers
them (with the batching checks and those of composed transforms: vmap of grad, hessian).
"""

from __future__ import annotations

from eval.interpreter import eval_jaxpr
from eval.oracle import CHECKS, Case, compare_lists, decode_array
from ir.core import ClosedJaxpr
from transforms.ad.build import differentiable, float_positions
from transforms.ad.programs import grad_program, jvp_program, vjp_program


def check_jvp(case: Case, closed: ClosedJaxpr) -> None:
    spec = case.raw["jvp"]
    args = case.arrays("args")
    tangents = [decode_array(t) for t in spec["tangents"]]
    wrt = float_positions(closed.jaxpr.invars)
    program, _ = jvp_program(closed, wrt)
    got = eval_jaxpr(program, *args, *[tangents[i] for i in wrt], check=True)
    n_out = len(closed.jaxpr.outvars)
    it = iter(got[n_out:])
    got_tangents = [next(it) if differentiable(v.aval) else None for v in closed.jaxpr.outvars]
    compare_lists("out_tangents", got_tangents, [decode_array(t) for t in spec["out_tangents"]], case.rtol, case.atol)


def check_vjp(case: Case, closed: ClosedJaxpr) -> None:
    spec = case.raw["vjp"]
    args = case.arrays("args")
    cts = [decode_array(c) for c in spec["cotangents"]]
    outs = float_positions(closed.jaxpr.outvars)
    wrt = float_positions(closed.jaxpr.invars)
    program, _ = vjp_program(closed, wrt, seed="inputs", cotangent_outputs=outs)
    got = eval_jaxpr(program, *args, *[cts[j] for j in outs], check=True)
    it = iter(got)
    got_cts = [next(it) if differentiable(v.aval) else None for v in closed.jaxpr.invars]
    compare_lists("arg_cotangents", got_cts, [decode_array(c) for c in spec["arg_cotangents"]], case.rtol, case.atol)


def check_grad(case: Case, closed: ClosedJaxpr) -> None:
    spec = case.raw["grad"]
    got = eval_jaxpr(grad_program(closed, spec["argnums"])[0], *case.arrays("args"), check=True)
    compare_lists("grad", got, [decode_array(g) for g in spec["out"]], case.rtol, case.atol)


def check_grad_grad(case: Case, closed: ClosedJaxpr) -> None:
    spec = case.raw["grad_grad"]
    second, _ = grad_program(grad_program(closed, [0])[0], [0])
    got = eval_jaxpr(second, *case.arrays("args"), check=True)
    compare_lists("grad_grad", got, [decode_array(spec["out"])], case.rtol, case.atol)


def register() -> None:
    """Put the AD checks into `eval.oracle.CHECKS` (`transforms.checks.register_checks` calls it)."""
    CHECKS.update({"jvp": check_jvp, "vjp": check_vjp, "grad": check_grad, "grad_grad": check_grad_grad})
