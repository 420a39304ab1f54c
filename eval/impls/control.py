"""Higher-order primitives: calls of nested jaxprs, cond, while, scan, barriers."""

from __future__ import annotations

import numpy as np

from eval.interpreter import eval_jaxpr, runtime_shape
from eval.registry import impl
from ir.core import ShapedArray


def _call(param: str):
    def run(*args, check: bool = False, **params):
        return tuple(eval_jaxpr(params[param], *args, check=check))

    run.takes_check = True
    run.__name__ = f"call_{param}"
    return run


# The call-like primitives, each with the param holding the jaxpr it runs. custom_jvp_call and
# custom_vjp_call evaluate their primal body; the jvp/fwd/bwd rules matter only to AD.
CALLS = {**dict.fromkeys(("jit", "pjit", "remat2", "checkpoint", "composite"), "jaxpr"),
         **dict.fromkeys(("closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
                          "custom_vjp_call_jaxpr"), "call_jaxpr")}
for _name, _param in CALLS.items():
    impl(_name)(_call(_param))


@impl("optimization_barrier")
def optimization_barrier(*args):
    return tuple(args)


@impl("empty2")
def empty2(*, dtype, memory_space=None):
    """The placeholder JAX's partial evaluation stages for a value nobody reads (a residual a cond branch
    does not produce, a scan carry's initial buffer); XLA lowers it to a zero constant, so does this."""
    return np.zeros(runtime_shape(ShapedArray((), dtype)), dtype.numpy)


@impl("platform_index")
def platform_index(*, platforms, **_):
    """The branch XLA would pick on CPU: the entry naming 'cpu', else the default (None) entry."""
    for i, names in enumerate(platforms):
        if names is not None and "cpu" in names:
            return np.asarray(i, np.int32)
    for i, names in enumerate(platforms):
        if names is None:
            return np.asarray(i, np.int32)
    raise NotImplementedError(f"platform_index: no CPU or default entry in platforms={platforms!r}")


def _cond(index, *operands, branches, check: bool = False, **_):
    i = int(np.clip(int(index), 0, len(branches) - 1))
    return tuple(eval_jaxpr(branches[i], *operands, check=check))


_cond.takes_check = True
impl("cond")(_cond)


def _while(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, check: bool = False, **_):
    cond_consts, body_consts = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(eval_jaxpr(cond_jaxpr, *cond_consts, *carry, check=check)[0]):
        carry = eval_jaxpr(body_jaxpr, *body_consts, *carry, check=check)
    return tuple(carry)


_while.takes_check = True
impl("while")(_while)


def _scan(*args, jaxpr, num_consts, num_carry, length, reverse, check: bool = False, **_):
    consts, carry = args[:num_consts], list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [np.empty((length,) + runtime_shape(a), a.dtype.numpy) for a in y_avals]
    for step in range(length):
        t = length - 1 - step if reverse else step
        out = eval_jaxpr(jaxpr, *consts, *carry, *(x[t] for x in xs), check=check)
        carry = out[:num_carry]
        for y, v in zip(ys, out[num_carry:], strict=True):
            y[t] = v
    return (*carry, *ys)


_scan.takes_check = True
impl("scan")(_scan)
