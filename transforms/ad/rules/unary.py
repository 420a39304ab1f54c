"""JVP and VJP rules of unary elementwise primitives. An elementwise op's linearization is diagonal,
so one `linear` entry gives both its JVP and its VJP. Forms follow JAX's own rules
(jax/_src/lax/lax.py, jax/_src/lax/special.py; the default `accuracy`) so that special values give
JAX's results: `_const(x, c)` is a rank-0 literal of x's dtype, `_ones(x)` a filled array.

Where the transpose is not the JVP's own map (real, imag, complex abs, real-input conj), the VJP is
JAX's transpose of the JVP (no conjugation). Two primitives have dtype-dependent forms (abs, conj):
both rules hang on the same tag, each guarded by whether the operand has the result's dtype."""

from __future__ import annotations

import math

from egglog import Vec, eq, f64, i64, ne

from ir import dtypes as D
from rewrites.terms import Arr, T, args_list, dtype_of
from transforms.ad.rule import INT, STR, ADBook, Values, dtype, params, shape

A = ADBook("unary")
EMPTY = Vec[i64].empty()


def const(value: float, like: Arr) -> Arr:
    """JAX's `_const(like, value)`: a rank-0 literal of like's dtype."""
    return Arr.scalar(value, dtype(like))


def filled(value, like: Arr) -> Arr:
    """JAX's `full_like(like, value)`."""
    return T.broadcast_in_dim(Arr.scalar(value, dtype(like)), shape(like), EMPTY)


def select(pred: Arr, on_true: Arr, on_false: Arr) -> Arr:
    return T.select_n(args_list([pred, on_false, on_true]))


def replace_zero(v: Arr, like: Arr) -> Arr:
    """JAX's `_replace_zero`: 1 where v == 0, else v (v a built term with like's shape and dtype: the
    shape analysis is read on operands and results only)."""
    return select(T.eq(v, const(0.0, like)), filled(1.0, like), v)


# --- smooth functions: d f(x) = f'(x) dx, f' in JAX's form ---------------------------------------

SMOOTH = {  # name: (g, x, ans) -> tangent, math
    "tan": (lambda g, x, ans: T.mul(g, T.add(const(1.0, x), T.square(ans))), "d tan x = (1 + tan² x) dx"),
    "asin": (lambda g, x, ans: T.mul(g, T.rsqrt(T.sub(const(1.0, x), T.square(x)))), "d asin x = dx / √(1 - x²)"),
    "acos": (lambda g, x, ans: T.mul(g, T.neg(T.rsqrt(T.sub(const(1.0, x), T.square(x))))),
             "d acos x = -dx / √(1 - x²)"),
    "atan": (lambda g, x, ans: T.div(g, T.add(const(1.0, x), T.square(x))), "d atan x = dx / (1 + x²)"),
    "sinh": (lambda g, x, ans: T.mul(g, T.cosh(x)), "d sinh x = cosh x dx"),
    "cosh": (lambda g, x, ans: T.mul(g, T.sinh(x)), "d cosh x = sinh x dx"),
    "asinh": (lambda g, x, ans: T.mul(g, T.rsqrt(T.add(T.square(x), const(1.0, x)))), "d asinh x = dx / √(x² + 1)"),
    "acosh": (lambda g, x, ans: T.mul(g, T.rsqrt(T.sub(T.square(x), const(1.0, x)))), "d acosh x = dx / √(x² - 1)"),
    "atanh": (lambda g, x, ans: T.mul(T.integer_pow(T.add(const(1.0, x), x), -1), T.div(g, T.sub(const(1.0, x), x))),
              "d atanh x = dx / ((1 + x)(1 - x))"),
    "exp2": (lambda g, x, ans: T.mul(T.log(const(2.0, x)), T.mul(g, ans)), "d 2^x = log 2 · 2^x dx"),
    "expm1": (lambda g, x, ans: T.mul(g, T.add(ans, const(1.0, x))), "d expm1 x = (expm1 x + 1) dx"),
    "log1p": (lambda g, x, ans: T.div(g, T.add(x, const(1.0, x))), "d log1p x = dx / (x + 1)"),
    "tanh": (lambda g, x, ans: T.mul(T.add(g, T.mul(g, ans)), T.sub(const(1.0, x), ans)),
             "d tanh x = (1 + tanh x)(1 - tanh x) dx"),
    "logistic": (lambda g, x, ans: T.mul(g, T.mul(ans, T.sub(const(1.0, x), ans))), "d σ(x) = σ(x)(1 - σ(x)) dx"),
    "sqrt": (lambda g, x, ans: T.mul(g, T.div(const(0.5, x), ans)), "d √x = dx / (2√x)"),
    "rsqrt": (lambda g, x, ans: T.mul(g, T.mul(const(-0.5, x), T.div(ans, x))), "d x^(-1/2) = -½ x^(-1/2) / x dx"),
    "cbrt": (lambda g, x, ans: T.mul(g, T.mul(const(1 / 3, x), T.integer_pow(ans, -2))), "d ∛x = ⅓ (∛x)^(-2) dx"),
    "square": (lambda g, x, ans: T.mul(g, T.mul(const(2.0, x), x)), "d x² = 2x dx"),
    "lgamma": (lambda g, x, ans: T.mul(g, T.digamma(x)), "d lgamma x = digamma x dx"),
    "digamma": (lambda g, x, ans: T.mul(g, T.polygamma(const(1.0, x), x)), "d digamma x = polygamma(1, x) dx"),
    "erf": (lambda g, x, ans: T.mul(const(2 / math.sqrt(math.pi), x), T.mul(g, T.exp(T.neg(T.square(x))))),
            "d erf x = 2/√π exp(-x²) dx"),
    "erfc": (lambda g, x, ans: T.mul(const(-2 / math.sqrt(math.pi), x), T.mul(g, T.exp(T.neg(T.square(x))))),
             "d erfc x = -2/√π exp(-x²) dx"),
    "erf_inv": (lambda g, x, ans: T.mul(const(math.sqrt(math.pi) / 2, x), T.mul(g, T.exp(T.square(ans)))),
                "d erf⁻¹ x = √π/2 exp(erf⁻¹(x)²) dx"),
    "bessel_i0e": (lambda g, x, ans: T.mul(g, T.sub(T.bessel_i1e(x), T.mul(T.sign(x), ans))),
                   "d i0e x = (i1e x - sign x · i0e x) dx"),
}

A.linear("neg", 0, lambda g, x, ans: T.neg(g), math="d(-x) = -dx")
A.linear("sin", 0, lambda g, x, ans: T.mul(g, T.cos(x)), math="d sin x = cos x dx")
A.linear("cos", 0, lambda g, x, ans: T.neg(T.mul(g, T.sin(x))), math="d cos x = -sin x dx")
A.linear("exp", 0, lambda g, x, ans: T.mul(g, ans), math="d exp x = exp x dx")
A.linear("log", 0, lambda g, x, ans: T.div(g, x), math="d log x = dx / x")
for _name, (_f, _math) in SMOOTH.items():
    A.linear(_name, 0, _f, math=_math)


def _bessel_i1e(g, x, ans, *, one_over_eps):
    """JAX's `_bessel_i1e_jvp`: x is replaced by eps where |x| <= eps, and the slope there is ½."""
    eps = f64(1.0) / f64.from_i64(one_over_eps)
    not_tiny = T.gt(T.abs(x), Arr.scalar(eps, dtype(x)))
    safe_x = select(not_tiny, x, filled(eps, x))
    slope = T.sub(T.bessel_i0e(safe_x), T.mul(ans, T.add(T.sign(safe_x), T.integer_pow(safe_x, -1))))
    return T.mul(g, select(not_tiny, slope, filled(0.5, x)))


A.linear("bessel_i1e", 0, _bessel_i1e, math="d i1e x = (i0e x - i1e x (sign x + 1/x)) dx, ½ dx near 0",
         values=Values(lambda p, ins, outs: {"one_over_eps": round(1 / float(D.finfo(ins[0].dtype).eps))},
                       one_over_eps=INT))


def _integer_pow_exponents(params, in_avals, out_avals):
    """The factor y and the exponent y - 1 of JAX's `y x^(y-1)`; for y = 0 (JAX: zeros) 0 · x^0."""
    y = int(params["y"])
    return {"y": y, "e": y - 1} if y else {"y": 0, "e": 0}


A.linear("integer_pow", 0, lambda g, x, ans, *, y, e: T.mul(g, T.mul(Arr.scalar(f64.from_i64(y), dtype(x)),
                                                                   T.integer_pow(x, e))),
         values=Values(_integer_pow_exponents, y=INT, e=INT), math="d x^y = y x^(y-1) dx (0 for y = 0)")

# --- linear ops --------------------------------------------------------------------------------------

A.linear("reduce_precision", 0, lambda g, x, ans, *, own: T.reduce_precision(g, **own),
         values=Values(lambda p, ins, outs: {"own": p}, own=params("reduce_precision")),
         math="d reduce_precision x = reduce_precision dx (JAX treats it as linear)")
A.jvp("real", 0, lambda g, x, ans: T.real(g), math="d re z = re dz")
A.vjp("real", 0, lambda ct, x, ans: T.complex(ct, const(0.0, ans)), math="re^T(c) = c + 0i")
A.jvp("imag", 0, lambda g, x, ans: T.imag(g), math="d im z = im dz")
A.vjp("imag", 0, lambda ct, x, ans: T.complex(const(0.0, ans), T.neg(ct)), math="im^T(c) = 0 - c i")
A.jvp_linear("convert_element_type", [0], math="d convert x = convert dx (float to float)")
A.vjp("convert_element_type", 0, lambda ct, x, ans, *, old, back: T.convert_element_type(ct, old, **back),
      values=Values(lambda p, ins, outs: {"old": ins[0].dtype.name,
                                          "back": {"sharding": p.get("sharding"), "weak_type": ins[0].weak_type}},
                    old=STR, back=params("convert_element_type")),
      math="convert^T(c) = convert c back to the operand's dtype and weak type")
_OWN_CONJ = Values(lambda p, ins, outs: {"own": p}, own=params("conj"))
A.jvp("conj", 0, lambda g, x, ans, *, own: T.conj(g, **own), values=_OWN_CONJ,
      math="d conj z = conj dz")


# --- forms that depend on the operand's dtype ----------------------------------------------------


def by_dtype(mode: str, prim: str, same, other, *, values: Values, math: str) -> None:
    """Two rules for one (primitive, operand 0) slot: `same` where the operand has the result's dtype,
    `other` where it does not. Both read the same values (one node serves the slot)."""
    entry = A.jvp if mode == "jvp" else A.vjp
    for f, fact, variant in ((same, eq, ""), (other, ne, "other-dtype")):
        entry(prim, 0, f, values=values, math=math, variant=variant,
              when=lambda x, ans, fact=fact: [fact(dtype_of(x)).to(dtype_of(ans))])


def _complex_abs_slope(x, ans, conj_params):
    """conj(z) / |z| (1 where z = 0), JAX's `_abs_jvp_rule` for complex z."""
    return T.div(T.conj(x, **conj_params), replace_zero(T.convert_element_type(ans, dtype(x)), x))


_CONJ_OF_X = Values(lambda p, ins, outs: {"conj": {"input_dtype": ins[0].dtype}}, conj=params("conj"))
by_dtype("jvp", "abs", lambda g, x, ans, *, conj: select(T.ge(x, const(0.0, x)), g, T.neg(g)),
         lambda g, x, ans, *, conj: T.real(T.mul(g, _complex_abs_slope(x, ans, conj))),
         values=_CONJ_OF_X, math="d|x| = ±dx (real, + at 0); d|z| = re(dz conj z / |z|) (complex)")
by_dtype("vjp", "abs", lambda ct, x, ans, *, conj: select(T.ge(x, const(0.0, x)), ct, T.neg(ct)),
         lambda ct, x, ans, *, conj: T.mul(T.complex(ct, const(0.0, ans)), _complex_abs_slope(x, ans, conj)),
         values=_CONJ_OF_X, math="the transpose of abs's JVP: ±c (real); (c + 0i) conj z / |z| (complex)")
by_dtype("vjp", "conj", lambda ct, x, ans, *, own: T.conj(ct, **own), lambda ct, x, ans, *, own: T.real(ct),
         values=_OWN_CONJ, math="conj^T(c) = conj c (complex z); re c (real x)")

# Results that never carry a tangent (JAX's defjvp_zero), and integer-only ops.
