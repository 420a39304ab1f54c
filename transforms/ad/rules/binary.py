"""JVP and VJP rules of binary and n-ary elementwise primitives (and select_n, clamp). An elementwise
op's linearization is diagonal, so one `linear` entry per operand gives both its JVP and its VJP.
Forms follow JAX's own rules (jax/_src/lax/lax.py) so that special values give JAX's results."""

from __future__ import annotations

from rewrites.terms import T
from transforms.ad.rule import ADBook

A = ADBook("binary")

A.linear("add", 0, lambda g, x, y, ans: g, math="d(x + y) = dx + dy")
A.linear("add", 1, lambda g, x, y, ans: g, math="d(x + y) = dx + dy")
A.linear("sub", 0, lambda g, x, y, ans: g, math="d(x - y) = dx - dy")
A.linear("sub", 1, lambda g, x, y, ans: T.neg(g), math="d(x - y) = dx - dy")
A.linear("mul", 0, lambda g, x, y, ans: T.mul(g, y), math="d(x y) = dx y + x dy")
A.linear("mul", 1, lambda g, x, y, ans: T.mul(x, g), math="d(x y) = dx y + x dy")
