"""JVP and VJP rules of unary elementwise primitives. An elementwise op's linearization is diagonal,
so one `linear` entry gives both its JVP and its VJP. Forms follow JAX's own rules
(jax/_src/lax/lax.py, jax/_src/lax/special.py) so that special values give JAX's results."""

from __future__ import annotations

from rewrites.terms import T
from transforms.ad.rule import ADBook

A = ADBook("unary")

A.linear("neg", 0, lambda g, x, ans: T.neg(g), math="d(-x) = -dx")
A.linear("sin", 0, lambda g, x, ans: T.mul(g, T.cos(x)), math="d sin x = cos x dx")
A.linear("cos", 0, lambda g, x, ans: T.neg(T.mul(g, T.sin(x))), math="d cos x = -sin x dx")
A.linear("exp", 0, lambda g, x, ans: T.mul(g, ans), math="d exp x = exp x dx")
A.linear("log", 0, lambda g, x, ans: T.div(g, x), math="d log x = dx / x")
