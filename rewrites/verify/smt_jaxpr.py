"""A Jaxpr of scalar elementwise primitives as z3 terms that compute what eqjax's NumPy evaluator computes
(`eval/impls/elementwise.py`, `eval/impls/conversions.py`), for proving rules bit-exact (`rewrites.verify.smt`).

    to_z3(closed, *inputs) -> [term per output]
    variable(name, dtype) -> a z3 constant of the dtype's sort
    constant(value, dtype) -> a z3 value holding `value` exactly

Sorts: float32 and float64 are z3's IEEE FPSort(8, 24) and FPSort(11, 53), every operation rounding to
nearest, ties to even (as XLA and NumPy do); signed and unsigned integers are bit-vectors of their width
(wrapping; the signedness picks comparison, division and shift); bool is Bool. z3's floating-point theory
has one nan, so the terms are faithful only where no operation reveals a nan's sign or payload: none of
the modelled ones does (a comparison with nan is false, nan passes through neg, abs, select, conversions).

Modelled, as eval defines them:
- floats: add sub mul div neg abs sqrt square; floor ceil round (z3's roundToIntegral toward -inf, +inf,
  nearest-even or nearest-away); integer_pow by repeated squaring as JAX lowers it (1/x^n for n < 0);
  max/min propagate nan and order -0 < +0 (not IEEE maxNum, which z3's fp.max is: it drops a nan and
  leaves max(-0, +0) unspecified); sign keeps nan and ±0; is_finite;
- integers: wrapping add sub mul neg abs square integer_pow; div truncating with x/0 = -1 and
  INT_MIN/-1 = INT_MIN; rem with x%0 = x; and or xor not; shifts (amounts compared unsigned, out of
  range giving 0, the arithmetic one the sign); max min sign;
- bool: and or xor not, max (or), min (and), comparisons as False < True;
- every dtype: eq ne lt le gt ge (nan unordered, ne true on nan), select_n (a bool or an integer
  predicate, clipped to the cases), clamp (min(max(x, lo), hi)), copy, the shape operations that map a
  scalar to a scalar (broadcast_in_dim, reshape, squeeze, transpose: the identity), convert_element_type between
  float32, float64, the integers and bool (float to integer truncates and saturates, nan giving 0;
  integers narrow by wrapping; to bool is x != 0).

Anything else raises `NotModelled` naming the primitive and why: transcendental functions (z3 has no sin
or exp), pow and rem of floats (C's pow and fmod; z3's fp.rem is the IEEE remainder), reductions and other
operations on arrays, complex values, dtypes other than float32/float64, the integers and bool.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ir import dtypes as D
from ir.core import ClosedJaxpr, Literal

try:
    import z3
except ImportError:  # the rest of the verifier works without z3; `smt.require_solver` says how to get it
    z3 = None

FP_SORTS = {32: (8, 24), 64: (11, 53)}  # exponent and significand bits (the latter with the hidden bit)
TRANSCENDENTAL = frozenset({
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp",
    "exp2", "expm1", "log", "log1p", "cbrt", "logistic", "atan2", "erf", "erfc", "erf_inv", "lgamma",
    "digamma", "polygamma", "zeta", "igamma", "igammac", "bessel_i0e", "bessel_i1e",
    "regularized_incomplete_beta", "igamma_grad_a", "random_gamma_grad",
})
COMPLEX = frozenset({"complex", "real", "imag", "conj"})
RANK_ZERO_IDENTITIES = frozenset({"broadcast_in_dim", "reshape", "squeeze", "transpose"})  # scalar to scalar
WHY = {
    "pow": "C's pow, no IEEE basic operation (z3 has none)",
    "rsqrt": "eqjax computes 1/sqrt(x), XLA a correctly rounded or approximate rsqrt: no single semantics",
    "rem": "C's fmod on floats (z3's fp.rem is the IEEE remainder, another function)",
    "nextafter": "no z3 translation",
}


class NotModelled(Exception):
    """What z3 cannot model here: `primitive` (or a dtype) and why."""

    def __init__(self, primitive: str, why: str):
        self.primitive, self.why = primitive, why
        super().__init__(f"{primitive}: {why}")


def _why_not(prim: str, dtype: D.DType | None) -> str:
    if prim in TRANSCENDENTAL:
        return "a transcendental function (z3's floating-point theory has + - * / sqrt fma rem round min max)"
    if prim in COMPLEX:
        return "complex values"
    if prim.startswith(("reduce_", "arg", "cum")):
        return "a reduction"
    if prim in WHY and (prim != "rem" or dtype is None or dtype.kind == "f"):
        return WHY[prim]
    return f"no z3 translation{f' for {dtype.name}' if dtype is not None else ''}"


def sort(dtype: D.DType):
    if dtype.kind == "f" and dtype.bits in FP_SORTS:
        return z3.FPSort(*FP_SORTS[dtype.bits])
    if dtype.kind in "iu":
        return z3.BitVecSort(dtype.bits)
    if dtype.kind == "b":
        return z3.BoolSort()
    raise NotModelled(dtype.name, "values of this dtype (z3 models float32, float64, the integers and bool)")


def variable(name: str, dtype: D.DType):
    return z3.Const(name, sort(dtype))


def constant(value, dtype: D.DType):
    """`value` in `dtype` exactly: a float through its bit pattern (-0.0, inf and nan included)."""
    s = sort(dtype)
    if dtype.kind == "f":
        word = np.asarray(value, dtype=dtype.numpy).reshape(()).view(f"u{dtype.itemsize}")
        return z3.simplify(z3.fpBVToFP(z3.BitVecVal(int(word), dtype.bits), s))
    if dtype.kind in "iu":
        return z3.BitVecVal(int(value) % (1 << dtype.bits), dtype.bits)
    return z3.BoolVal(bool(value))


def _fp(value: float, dtype: D.DType):
    return constant(value, dtype)


def _rne():
    return z3.RNE()


# --- the operations, by operand kind: (args, operand dtype, result dtype, params) -> term --------------

Op = Callable[[list, D.DType, D.DType, dict], object]


def _fp_max(x, y, dtype: D.DType, larger: bool):
    """eval's max/min: nan if either is nan; of two zeros max takes +0, min -0; else np.maximum/minimum."""
    pick_x = z3.fpGT(x, y) if larger else z3.fpLT(x, y)
    zeros = z3.If(z3.fpIsNegative(x), y, x) if larger else z3.If(z3.fpIsNegative(x), x, y)
    return z3.If(z3.Or(z3.fpIsNaN(x), z3.fpIsNaN(y)), z3.fpNaN(sort(dtype)),
                 z3.If(z3.And(z3.fpIsZero(x), z3.fpIsZero(y)), zeros, z3.If(pick_x, x, y)))


def _int_max(x, y, dtype: D.DType, larger: bool):
    if dtype.kind == "u":
        return z3.If(z3.UGT(x, y) if larger else z3.ULT(x, y), x, y)
    return z3.If(x > y if larger else x < y, x, y)


def max_of(x, y, dtype: D.DType, larger: bool = True):
    if dtype.kind == "f":
        return _fp_max(x, y, dtype, larger)
    if dtype.kind == "b":
        return z3.Or(x, y) if larger else z3.And(x, y)
    return _int_max(x, y, dtype, larger)


def _power(x, y: int, mul: Callable, one, recip: Callable):
    """x**y by repeated squaring, multiplying in eval's order (`eval.impls.elementwise.integer_pow`)."""
    if y == 0:
        return one
    base, acc, n = x, None, abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else mul(acc, base)
        n >>= 1
        if n:
            base = mul(base, base)
    return recip(acc) if y < 0 else acc


def _fp_ipow(a, dt, out, p):
    return _power(a[0], int(p["y"]), lambda u, v: z3.fpMul(_rne(), u, v), _fp(1.0, dt),
                  lambda u: z3.fpDiv(_rne(), _fp(1.0, dt), u))


def _int_ipow(a, dt, out, p):
    y = int(p["y"])
    if y < 0:
        raise NotModelled("integer_pow", f"a negative power ({y}) of an integer, which eval refuses")
    return _power(a[0], y, lambda u, v: u * v, constant(1, dt), None)


def _fp_sign(a, dt, out, p):
    x = a[0]
    return z3.If(z3.Or(z3.fpIsNaN(x), z3.fpIsZero(x)), x,
                 z3.If(z3.fpIsNegative(x), _fp(-1.0, dt), _fp(1.0, dt)))


def _int_sign(a, dt, out, p):
    x, zero, one = a[0], constant(0, dt), constant(1, dt)
    if dt.kind == "u":
        return z3.If(x == zero, zero, one)
    return z3.If(x > zero, one, z3.If(x < zero, constant(-1, dt), zero))


def _round(a, dt, out, p):
    method = str(p.get("rounding_method", 0)).upper()
    nearest_even = method == "1" or method.endswith("TO_NEAREST_EVEN")
    return z3.fpRoundToIntegral(z3.RNE() if nearest_even else z3.RNA(), a[0])


def _int_div(a, dt, out, p):
    x, y = a
    all_ones = constant(-1, dt)
    if dt.kind == "u":
        return z3.If(y == constant(0, dt), all_ones, z3.UDiv(x, y))
    smallest = constant(-(1 << (dt.bits - 1)), dt)
    return z3.If(y == constant(0, dt), all_ones,
                 z3.If(z3.And(x == smallest, y == all_ones), smallest, x / y))  # `/`: bvsdiv, truncating


def _int_rem(a, dt, out, p):
    x, y = a
    if dt.kind == "u":
        return z3.If(y == constant(0, dt), x, z3.URem(x, y))
    return z3.If(y == constant(0, dt), x, z3.If(y == constant(-1, dt), constant(0, dt), z3.SRem(x, y)))


def _shift(kind: str) -> Op:
    def shift(a, dt, out, p):
        x, y = a
        width = constant(dt.bits, dt)
        in_range = z3.ULT(y, width)
        if kind == "left":
            return z3.If(in_range, x << y, constant(0, dt))
        if kind == "right_logical":
            return z3.If(in_range, z3.LShR(x, y), constant(0, dt))
        return z3.If(in_range, x >> y, x >> constant(dt.bits - 1, dt))  # `>>`: the arithmetic shift

    return shift


def _rounded(name: str) -> Op:
    """z3's operation `name` rounding to nearest even (looked up when called: z3 may be missing)."""
    return lambda a, dt, out, p: getattr(z3, name)(_rne(), *a)


def _plain(fn: Callable) -> Op:
    return lambda a, dt, out, p: fn(*a)


FLOAT_OPS: dict[str, Op] = {
    "add": _rounded("fpAdd"), "add_any": _rounded("fpAdd"), "sub": _rounded("fpSub"), "mul": _rounded("fpMul"),
    "div": _rounded("fpDiv"), "sqrt": _rounded("fpSqrt"),
    "neg": _plain(lambda x: z3.fpNeg(x)), "abs": _plain(lambda x: z3.fpAbs(x)),
    "square": _plain(lambda x: z3.fpMul(_rne(), x, x)),
    "floor": _plain(lambda x: z3.fpRoundToIntegral(z3.RTN(), x)),
    "ceil": _plain(lambda x: z3.fpRoundToIntegral(z3.RTP(), x)),
    "round": _round, "integer_pow": _fp_ipow, "sign": _fp_sign,
    "max": lambda a, dt, out, p: max_of(*a, dt, True), "min": lambda a, dt, out, p: max_of(*a, dt, False),
    "is_finite": _plain(lambda x: z3.Not(z3.Or(z3.fpIsInf(x), z3.fpIsNaN(x)))),
}
INT_OPS: dict[str, Op] = {
    "add": _plain(lambda x, y: x + y), "add_any": _plain(lambda x, y: x + y), "sub": _plain(lambda x, y: x - y),
    "mul": _plain(lambda x, y: x * y), "square": _plain(lambda x: x * x), "neg": _plain(lambda x: -x),
    "abs": lambda a, dt, out, p: a[0] if dt.kind == "u" else z3.If(a[0] < constant(0, dt), -a[0], a[0]),
    "div": _int_div, "rem": _int_rem, "integer_pow": _int_ipow, "sign": _int_sign,
    "and": _plain(lambda x, y: x & y), "or": _plain(lambda x, y: x | y), "xor": _plain(lambda x, y: x ^ y),
    "not": _plain(lambda x: ~x),
    "shift_left": _shift("left"), "shift_right_logical": _shift("right_logical"),
    "shift_right_arithmetic": _shift("right_arithmetic"),
    "max": lambda a, dt, out, p: max_of(*a, dt, True), "min": lambda a, dt, out, p: max_of(*a, dt, False),
}
BOOL_OPS: dict[str, Op] = {
    "and": _plain(lambda x, y: z3.And(x, y)), "or": _plain(lambda x, y: z3.Or(x, y)),
    "xor": _plain(lambda x, y: z3.Xor(x, y)), "not": _plain(lambda x: z3.Not(x)),
    "max": _plain(lambda x, y: z3.Or(x, y)), "min": _plain(lambda x, y: z3.And(x, y)),
}


def _compare(prim: str, x, y, dt: D.DType):
    if dt.kind == "f":
        fn = {"eq": z3.fpEQ, "lt": z3.fpLT, "le": z3.fpLEQ, "gt": z3.fpGT, "ge": z3.fpGEQ}
        return z3.Not(z3.fpEQ(x, y)) if prim == "ne" else fn[prim](x, y)
    if dt.kind == "b":  # False < True
        return {"eq": x == y, "ne": z3.Xor(x, y), "lt": z3.And(z3.Not(x), y), "le": z3.Or(z3.Not(x), y),
                "gt": z3.And(x, z3.Not(y)), "ge": z3.Or(x, z3.Not(y))}[prim]
    if dt.kind == "u":
        return {"eq": x == y, "ne": x != y, "lt": z3.ULT(x, y), "le": z3.ULE(x, y), "gt": z3.UGT(x, y),
                "ge": z3.UGE(x, y)}[prim]
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[prim]


def _select_n(which, which_dtype: D.DType, cases: list):
    """cases[which]; an integer index out of range picks the nearest end (`eval`'s select_n)."""
    if which_dtype.kind == "b":
        return z3.If(which, cases[1], cases[0]) if len(cases) > 1 else cases[0]
    out = cases[0]
    for i, case in enumerate(cases[1:], start=1):
        index = constant(i, which_dtype)
        if i == len(cases) - 1:
            hit = z3.UGE(which, index) if which_dtype.kind == "u" else which >= index
        else:
            hit = which == index
        out = z3.If(hit, case, out)
    return out


def _convert(x, src: D.DType, dst: D.DType):
    """eval's convert_element_type (`eval/impls/conversions.py`)."""
    if src == dst:
        return x
    if src.kind == "b":
        return z3.If(x, constant(1, dst), constant(0, dst)) if dst.kind != "b" else x
    if dst.kind == "b":
        return z3.Not(z3.fpIsZero(x)) if src.kind == "f" else x != constant(0, src)  # nan is true
    if src.kind == "f" and dst.kind == "f":
        return z3.fpFPToFP(_rne(), x, sort(dst))
    if src.kind == "f":  # truncation toward zero, saturating; nan gives 0 (compared in float64, as eval)
        wide = z3.fpFPToFP(_rne(), x, sort(D.float64)) if src.bits < 64 else x
        info = np.iinfo(dst.numpy)
        low, high = _fp(float(info.min), D.float64), _fp(float(info.max), D.float64)
        to_bv = z3.fpToUBV if dst.kind == "u" else z3.fpToSBV
        return z3.If(z3.fpIsNaN(wide), constant(0, dst),
                     z3.If(z3.fpLEQ(wide, low), constant(int(info.min), dst),
                           z3.If(z3.fpGEQ(wide, high), constant(int(info.max), dst),
                                 to_bv(z3.RTZ(), wide, sort(dst)))))
    if dst.kind == "f":
        to_fp = z3.fpUnsignedToFP if src.kind == "u" else z3.fpSignedToFP
        return to_fp(_rne(), x, sort(dst))
    if dst.bits < src.bits:
        return z3.Extract(dst.bits - 1, 0, x)
    if dst.bits > src.bits:
        extend = z3.SignExt if src.kind == "i" else z3.ZeroExt
        return extend(dst.bits - src.bits, x)
    return x  # same width, other signedness: the same bits


def _apply(prim: str, params: dict, args: list, dtypes: list[D.DType], out: D.DType):
    operand = dtypes[0] if dtypes else out
    if prim in ("eq", "ne", "lt", "le", "gt", "ge"):
        return _compare(prim, *args, operand)
    if prim == "select_n":
        return _select_n(args[0], dtypes[0], args[1:])
    if prim == "clamp":
        lo, x, hi = args
        return max_of(max_of(x, lo, dtypes[1], True), hi, dtypes[1], False)
    if prim == "convert_element_type":
        return _convert(args[0], operand, out)
    if prim in ("copy", "copy_p") or prim in RANK_ZERO_IDENTITIES:  # `to_z3` admits rank-0 operands only
        return args[0]
    table = FLOAT_OPS if operand.kind == "f" else BOOL_OPS if operand.kind == "b" else INT_OPS
    fn = table.get(prim)
    if fn is None:
        raise NotModelled(prim, _why_not(prim, operand))
    return fn(args, operand, out, params)


def to_z3(closed: ClosedJaxpr, *inputs) -> list:
    """The outputs of `closed` (rank-0 values of modelled dtypes) as z3 terms of `inputs`."""
    jaxpr = closed.jaxpr
    if jaxpr.constvars:
        raise NotModelled("constants", "a program with constant arrays")
    env = dict(zip(jaxpr.invars, inputs, strict=True))

    def read(atom):
        if isinstance(atom, Literal):
            if atom.aval.shape != ():
                raise NotModelled("literal", f"an array literal of shape {atom.aval.shape}")
            return constant(atom.value, atom.aval.dtype)
        return env[atom]

    for eqn in jaxpr.eqns:
        prim = str(eqn.primitive)
        if prim in TRANSCENDENTAL or prim in COMPLEX or prim.startswith("reduce_"):
            raise NotModelled(prim, _why_not(prim, None))
        shapes = [a.aval.shape for a in [*eqn.invars, *eqn.outvars]]
        if any(s != () for s in shapes) or len(eqn.outvars) != 1:
            raise NotModelled(prim, "an array operation (z3 models rank-0 elementwise programs)")
        dtypes = [a.aval.dtype for a in eqn.invars]
        out = eqn.outvars[0].aval.dtype
        for dt in [*dtypes, out]:
            sort(dt)
        env[eqn.outvars[0]] = _apply(prim, eqn.params, [read(a) for a in eqn.invars], dtypes, out)
    return [read(v) for v in jaxpr.outvars]
