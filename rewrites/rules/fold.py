"""Constant folding of scalar literals, computed with egglog's f64 arithmetic.

A folded literal must hold exactly the value the primitive computes in the literal's dtype:
- float64: egglog's f64 + - * / are IEEE float64's, so folding is exact for any operands;
- other dtypes: the f64 result is kept only when it is an integer the dtype holds exactly
  (`exact_low`..`exact_high`, below 2^53 in magnitude). For integers such a result is the exact one
  (a non-integer quotient of integers below 2^53 never rounds to an integer in f64); for
  float32/float16/bfloat16, an f64 result the dtype can hold is the dtype's own correctly rounded
  result (f64 has more than 2p+2 bits, so rounding the exact value to the dtype gives that number),
  and XLA computes float16/bfloat16 in float32 and rounds back, which changes nothing either.
  Integer division truncates, so only exact quotients fold.
The encoder never makes a literal of nan or -0.0 (egglog's f64 equates -0.0 with 0.0), so no fold
produces one: nan results are excluded (every comparison with nan is false), and a zero result is
folded only where its sign is +: x + y and x - y of literals give +0 (both operands would have to be
-0.0 for -0), a product or quotient only when nonzero or from operands >= 0. Division by zero does
not fold (egglog's f64 division fails there).

Each fold retires the node it folds (`subsume`) and runs eagerly, with the analyses, before the other rules:
otherwise the rules go on building on `1.0 * 1.0` and `integer_pow[y=k](1.0)` in the class of 1 (and on `k * 0`
in the class of 0), and saturation never ends (`x*1.0` did not saturate under `default`).
"""

from functools import partial

from egglog import String, eq, f64, i64, ne, var

from rewrites.analyses.shapes import float_dtype
from rewrites.analyses.values import INF, exact_high, exact_low
from rewrites.rule import EXACT, RuleBook
from rewrites.rules.common import T, a, b, d, lit

R = RuleBook("fold")
fold = partial(R.rw, subsume=True, eager=True)

F64 = String("float64")
d2 = var("d2", String)  # a conversion's target dtype
convert = T.params("convert_element_type", "c")  # the other params of a matched convert, carried over
low, high = var("low", f64), var("high", f64)
n = var("n", i64)  # an integer_pow exponent


def is_number(r) -> list:
    """Conditions: r is not nan (every comparison with nan is false)."""
    return [r <= INF]


def exact_integer(r, dtype=d) -> list:
    """Conditions: r is an integer that `dtype` holds exactly (and f64 computed exactly)."""
    return [eq(f64.from_i64(r.to_i64())).to(r), eq(exact_low(dtype)).to(low), eq(exact_high(dtype)).to(high),
            r >= low, r <= high]


_BINARY = {"add": (a + b, "a+b"), "sub": (a - b, "a-b"), "mul": (a * b, "a*b"), "div": (a / b, "a/b")}

for _prim, (_r, _text) in _BINARY.items():
    _zero_ok = _prim in ("add", "sub")
    _sign = is_number(_r) if _zero_ok else [ne(_r).to(f64(0.0))]
    fold(f"fold-{_prim}-f64", EXACT, getattr(T, _prim)(lit(a, F64), lit(b, F64)), lit(_r, F64), *_sign,
         math=f"{_text} of float64 literals (not when nan{'' if _zero_ok else ' or zero'})")
    fold(f"fold-{_prim}-exact", EXACT, getattr(T, _prim)(lit(a), lit(b)), lit(_r), *exact_integer(_r),
         *([] if _zero_ok else [ne(_r).to(f64(0.0))]),
         math=f"{_text} of literals of any int or float dtype when the result is an integer the dtype holds")
fold("fold-mul-zero", EXACT, T.mul(lit(a), lit(b)), lit(0.0), eq(a * b).to(f64(0.0)), a >= 0.0, b >= 0.0,
     math="a*b = +0 for literals a, b >= 0 whose product is 0 (0*inf is nan, not 0)")

fold("fold-neg-float", EXACT, T.neg(lit(a)), lit(-a), float_dtype(d), ne(a).to(f64(0.0)),
     math="-a of a float literal a != 0 (-0.0 is no literal)")
fold("fold-neg-int", EXACT, T.neg(lit(a)), lit(-a), *exact_integer(-a), eq(d.replace("float", "")).to(d),
     math="-a of an int literal when -a is in the dtype's range (-INT_MIN wraps)")
fold("fold-abs-nonneg", EXACT, T.abs(lit(a)), lit(a), a >= 0.0, math="|a| -> a for a literal a >= 0")
fold("fold-abs-negative", EXACT, T.abs(lit(a)), T.neg(lit(a)), a < 0.0,
     math="|a| -> -a for a literal a < 0 (abs(INT_MIN) = -INT_MIN = INT_MIN)")
fold("fold-max", EXACT, T.max(lit(a), lit(b)), lit(a.max(b)), math="max(a, b) of literals (no nan, no -0.0)")
fold("fold-min", EXACT, T.min(lit(a), lit(b)), lit(a.min(b)), math="min(a, b) of literals (no nan, no -0.0)")
fold("fold-sqrt", EXACT, T.sqrt(lit(a)), lit(a ** 0.5), float_dtype(d), a >= 0.0,
     eq(f64.from_i64((a ** 0.5 * 1024.0).to_i64())).to(a ** 0.5 * 1024.0), a ** 0.5 < 65536.0,
     eq(a ** 0.5 * (a ** 0.5)).to(a),
     math="sqrt(a) -> r when r = k/1024 (k < 2^26) and r*r = a: r*r is then exact, so r is sqrt(a) exactly")
fold("fold-ipow", EXACT, T.integer_pow(lit(a), n), lit(a ** f64.from_i64(n)), n >= 1,
     *exact_integer(a ** f64.from_i64(n)),
     math="a^n of a literal for n >= 1 when the result is an integer the dtype holds (then so is every "
          "square and product JAX's repeated squaring forms, all exact)")
fold("fold-exp-zero", EXACT, T.exp(lit(0.0)), lit(1.0), float_dtype(d), math="exp(0) -> 1")
fold("fold-log-one", EXACT, T.log(lit(1.0)), lit(0.0), float_dtype(d), math="log(1) -> +0")
fold("fold-convert-f64", EXACT, T.convert_element_type(lit(a), F64, **convert), lit(a, F64),
     math="a literal converted to float64 (a literal's value is a float64)")
fold("fold-convert-exact", EXACT, T.convert_element_type(lit(a), d2, **convert), lit(a, d2),
     *exact_integer(a, d2), math="an integer literal converted to a dtype that holds it exactly")
