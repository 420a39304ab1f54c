"""Associativity and commutativity, and the reassociation of subtraction (explosive: run under back-off).

Commutativity is `exact` for every op here. Associativity is `exact` for max/min (nan absorbs, and
XLA orders -0 < +0, a total order) and for the bitwise ops; for + and * it is `real`: floats round
(and may overflow) differently. Shapes agree on both sides: broadcasting is associative.
"""

from rewrites.rule import EXACT, REAL, RuleBook
from rewrites.rules.common import T, x, y, z

R = RuleBook("assoc")

R.rw("add-comm", EXACT, T.add(x, y), T.add(y, x), math="x+y -> y+x", explosive=True)
R.rw("mul-comm", EXACT, T.mul(x, y), T.mul(y, x), math="x*y -> y*x", explosive=True)

_COMM = {"max": "max(x, y) -> max(y, x)", "min": "min(x, y) -> min(y, x)", "and": "x & y -> y & x",
         "or": "x | y -> y | x", "xor": "x ^ y -> y ^ x", "eq": "(x == y) -> (y == x)",
         "ne": "(x != y) -> (y != x)"}
for _prim, _math in _COMM.items():
    _op = getattr(T, _prim)
    R.rw(f"{_prim}-comm", EXACT, _op(x, y), _op(y, x), math=_math, explosive=True)

_ASSOC = {"add": (REAL, "(x+y)+z <=> x+(y+z)"), "mul": (REAL, "(x*y)*z <=> x*(y*z)"),
          "max": (EXACT, "max(max(x, y), z) <=> max(x, max(y, z))"),
          "min": (EXACT, "min(min(x, y), z) <=> min(x, min(y, z))"),
          "and": (EXACT, "(x & y) & z <=> x & (y & z)"), "or": (EXACT, "(x | y) | z <=> x | (y | z)"),
          "xor": (EXACT, "(x ^ y) ^ z <=> x ^ (y ^ z)")}
for _prim, (_class, _math) in _ASSOC.items():
    _op = getattr(T, _prim)
    R.birw(f"{_prim}-assoc", _class, _op(_op(x, y), z), _op(x, _op(y, z)), math=_math, explosive=True)

# Subtraction reassociates as the addition of a negation does: the three terms x, -y, z give nan on both
# sides exactly when +inf and -inf are among them (`real`: sums round differently, signed zeros change).
# One direction only: the two-way (x+y)-z <=> x+(y-z) and (x-y)-z <=> x-(y+z) grew the e-graph enough to stop
# saturation an iteration earlier on the oracle programs (random_gamma_grad: 2 more equations extracted).
R.rw("sub-sub-reassoc", REAL, T.sub(x, T.sub(y, z)), T.add(T.sub(x, y), z), math="x-(y-z) -> (x-y)+z",
     explosive=True)
