"""JVP and VJP rules of the PRNG primitives. Keys, seeds and random bits are integers (or key arrays made
from them): they never carry a tangent, so the primitives that make them have a zero derivative (JAX's
`ad.defjvp_zero`), and only random_gamma's float operand `a` has rules.

JAX (jax/_src/random.py) defines random_gamma's JVP with `ad.defjvp2`: tangent * _gamma_grad(ans, a), the
implicit reparameterization gradient d sample / d a = random_gamma_grad(a, sample) (for log_space, of
sample = exp(ans), a zero replaced by the dtype's smallest normal, divided by sample). It is linear in the
tangent and elementwise, so one `linear` entry per form gives the JVP and its transpose, the VJP, as JAX's
linearization does. random_gamma_grad itself has no derivative in JAX, so neither here.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from egglog import Vec, eq, i64

from rewrites.terms import Arr, T, args_list
from transforms.ad.rule import INT, ADBook, Values, dtype, require, shape

A = ADBook("random")
_LOG_SPACE = Values(lambda params, ins, outs: {"log_space": int(bool(params.get("log_space", False)))}, log_space=INT)
_TINY = {name: float(ml_dtypes.finfo(np.dtype(name)).tiny) for name in ("float64", "float32", "float16", "bfloat16")}


def _sample_grad(g: Arr, a: Arr, ans: Arr, log_space, want: int) -> Arr:
    require(eq(log_space).to(i64(want)))
    return T.mul(g, T.random_gamma_grad(a, ans))


A.linear("random_gamma", 1, lambda g, k, a, ans, *, log_space: _sample_grad(g, a, ans, log_space, 0), values=_LOG_SPACE,
         variant="linear-space", math="d gamma(k, a) = random_gamma_grad(a, sample) da (implicit reparameterization)")


def _log_space_grad(name: str, tiny: float):
    def grad(g: Arr, k: Arr, a: Arr, ans: Arr, *, log_space) -> Arr:
        require(eq(log_space).to(i64(1)))
        require(eq(dtype(ans)).to(name))
        sample = T.exp(ans)
        filled = T.broadcast_in_dim(Arr.scalar(tiny, name), shape(ans), Vec[i64].empty())
        safe = T.select_n(args_list([T.eq(sample, Arr.scalar(0.0, name)), sample, filled]))
        return T.mul(g, T.div(T.random_gamma_grad(a, safe), safe))

    return grad


for _dtype, _tiny in _TINY.items():
    A.linear("random_gamma", 1, _log_space_grad(_dtype, _tiny), values=_LOG_SPACE, variant=f"log-space-{_dtype}",
             math="d log gamma(k, a) = random_gamma_grad(a, s) / s da with s = exp(sample), 0 -> tiny")
