"""A scalar interpreter of a rule instance over the extended reals, in high precision (mpmath).

    evaluate(instance, point, dps=30, domain=False) -> (left value, right value, reliable)

`instance` is a rank-0 `Instance` (`instantiate(rule, dtype)`); `point` gives one Python number per
input. Floats are mpmath numbers of `dps` digits and an unbounded exponent, so nothing overflows or
underflows (exp(1000) is a number, exp(inf) is inf): the two sides are compared as the real-number
programs they stand for. Integers are Python ints (no wrapping; division truncates toward zero as in
XLA), bools are bools. Literals are the numbers they spell (`0.1` is 1/10: the simplest number within a
few ulps, `sympy_jaxpr.number`).

A value outside the reals is nan (log(-1), sqrt(-1), 0/0, inf - inf); a nonzero x over 0 is an infinity of
x's sign (the sign of a zero is not tracked), log(0) = -inf. Comparisons and logic with a nan operand
follow IEEE (False, `ne` True), or give None ("undefined") with `domain=True`, the mode of the real-number
check, so that `lt(sqrt(x), 1)` at x = -1 is not mistaken for a defined False. A primitive without an
entry raises `UnsupportedPrimitive`.

`reliable` is False when rounding could have decided a result (see the significance section below):
a real difference or a kind computed that way is no evidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache

import mpmath
import numpy as np
from mpmath.ctx_mp_python import _mpf

from ir.core import Literal
from ir.errors import UnsupportedPrimitive
from rewrites.verify.instantiate import Instance
from rewrites.verify.sympy_jaxpr import number

WHERE = "rewrites/verify/highprec.py"


@lru_cache(maxsize=8)
def context(dps: int) -> mpmath.ctx_mp.MPContext:
    ctx = mpmath.MPContext()
    ctx.dps = dps
    return ctx


def is_float(v) -> bool:
    return isinstance(v, _mpf)


def is_nan(v) -> bool:
    return isinstance(v, _mpf) and v != v


def kind(v):
    """nan / inf / -inf / num for floats (a float program's result kinds), the value for bools and ints,
    "undef" for an undefined bool or int."""
    if v is None:
        return "undef"
    if isinstance(v, _mpf):
        if v != v:
            return "nan"
        return "num" if mpmath.isfinite(v) else "inf" if v > 0 else "-inf"
    return v


def _real(ctx, f: Callable) -> Callable:
    """f on mpmath numbers, nan where it leaves the reals (a complex result or a pole)."""

    def g(x):
        try:
            r = f(x)
        except (ZeroDivisionError, ValueError, OverflowError):
            return ctx.nan
        return r if isinstance(r, _mpf) else ctx.mpf(r) if isinstance(r, (int, float)) else ctx.nan

    return g


def _nan_if(cond: Callable, f: Callable, ctx) -> Callable:
    return lambda x: ctx.nan if x != x or cond(x) else f(x)


# mpmath reduces a huge argument of exp and of the trigonometric functions with too few digits
# (exp(1e300) at 30 digits is wrong in every digit): these reduce it with as many extra bits as the
# argument has before the point, then call mpmath on the small remainder.
HUGE = 1000


def _reduced(ctx, x, period):
    """(k, r) with x = k*period + r, |r| <= period/2, r accurate to the working precision."""
    with ctx.extraprec(max(0, int(ctx.mag(x))) + 20):
        p = period()
        k = ctx.nint(x / p)
        r = x - k * p
    return int(k), +r


def _exp(ctx, x):
    if not ctx.isfinite(x) or abs(x) < HUGE:
        return ctx.exp(x)
    k, r = _reduced(ctx, x, lambda: ctx.ln2)
    return ctx.ldexp(ctx.exp(r), k)


def _trig(ctx, f: Callable) -> Callable:
    def g(x):
        if not ctx.isfinite(x) or abs(x) < HUGE:
            return f(x)
        return f(_reduced(ctx, x, lambda: 2 * ctx.pi)[1])

    return g


def _exp_based(ctx, small: Callable, big: Callable) -> Callable:
    return lambda x: small(x) if not ctx.isfinite(x) or abs(x) < HUGE else big(x)


def _exp2(ctx, x):
    if not ctx.isfinite(x) or abs(x) < HUGE:
        return ctx.power(2, x)
    k, r = _reduced(ctx, x, lambda: ctx.one)
    return ctx.ldexp(ctx.power(2, r), k)


def _div(ctx, x, y):
    if y == 0:
        return ctx.nan if x == 0 or x != x else ctx.inf * ctx.sign(x)
    return x / y


def _pow(ctx, x, y):
    if y == 0 or x == 1:
        return ctx.one
    if x != x or y != y:
        return ctx.nan
    if ctx.isinf(y):
        ax = abs(x)
        if ax == 1:
            return ctx.one
        return ctx.inf if (ax > 1) == (y > 0) else ctx.zero
    odd = ctx.isint(y) and int(y) % 2 == 1
    if ctx.isinf(x):
        if y > 0:
            return -ctx.inf if x < 0 and odd else ctx.inf
        return ctx.zero
    if x == 0:
        return ctx.zero if y > 0 else ctx.inf
    if x < 0 and not ctx.isint(y):
        return ctx.nan
    with ctx.extraprec(max(0, int(ctx.mag(y))) + 20):
        t = y * ctx.log(abs(x))
    if abs(t) < HUGE:
        return ctx.power(x, y)
    return -_exp(ctx, t) if x < 0 and odd else _exp(ctx, t)


def _atan2(ctx, y, x):
    if ctx.isinf(y) and ctx.isinf(x):
        q = ctx.pi / 4 if x > 0 else 3 * ctx.pi / 4
        return q if y > 0 else -q
    return ctx.atan2(y, x)


def _minmax(pick: Callable) -> Callable:
    def f(ctx, x, y):
        if is_nan(x) or is_nan(y):
            return ctx.nan
        return pick(x, y)

    return f


def _lgamma(ctx, x):
    if x != x:
        return x
    if ctx.isinf(x):
        return ctx.inf
    if x <= 0 and ctx.isint(x):
        return ctx.inf
    return ctx.log(abs(ctx.gamma(x)))


def _erfc(ctx, x):
    """erfc, also where mpmath's series check overflows (|x| ~ 1e300): beyond 2^20, erfc x < exp(-2^40), a
    positive value below every float's least subnormal, stands in for it (and 2 minus it for -x)."""
    if ctx.isfinite(x) and abs(x) > 2**20:
        tiny = ctx.ldexp(ctx.one, -(2**21))
        return tiny if x > 0 else 2 - tiny
    return ctx.erfc(x)


def _round(ctx, x, method: int):
    if not ctx.isfinite(x):
        return x
    if int(method) == 1:  # to nearest even
        return ctx.nint(x)
    return ctx.sign(x) * ctx.floor(abs(x) + ctx.mpf(0.5))


def _fmod(ctx, x, y):
    if x != x or y != y or ctx.isinf(x) or y == 0:
        return ctx.nan
    if ctx.isinf(y):
        return x
    q = x / y
    return x - y * (ctx.floor(q) if q >= 0 else ctx.ceil(q))


def _float_unary(ctx) -> dict[str, Callable]:
    r = lambda f: _real(ctx, f)  # noqa: E731
    return {
        "neg": lambda x: -x, "abs": abs, "sign": lambda x: x if x != x else ctx.sign(x),
        "square": lambda x: x * x, "exp": r(lambda x: _exp(ctx, x)), "exp2": r(lambda x: _exp2(ctx, x)),
        "expm1": r(_exp_based(ctx, ctx.expm1, lambda x: _exp(ctx, x) - 1)),
        "log": r(_nan_if(lambda x: x < 0, ctx.log, ctx)),
        "log1p": r(_nan_if(lambda x: x < -1, ctx.log1p, ctx)),
        "sqrt": r(_nan_if(lambda x: x < 0, ctx.sqrt, ctx)),
        "rsqrt": r(_nan_if(lambda x: x < 0, lambda x: _div(ctx, ctx.one, ctx.sqrt(x)), ctx)),
        "cbrt": r(lambda x: ctx.sign(x) * ctx.cbrt(abs(x)) if ctx.isfinite(x) else x),
        "sin": r(_trig(ctx, ctx.sin)), "cos": r(_trig(ctx, ctx.cos)), "tan": r(_trig(ctx, ctx.tan)),
        "atan": r(ctx.atan),
        "asin": r(_nan_if(lambda x: abs(x) > 1, ctx.asin, ctx)),
        "acos": r(_nan_if(lambda x: abs(x) > 1, ctx.acos, ctx)),
        "sinh": r(_exp_based(ctx, ctx.sinh, lambda x: (_exp(ctx, x) - _exp(ctx, -x)) / 2)),
        "cosh": r(_exp_based(ctx, ctx.cosh, lambda x: (_exp(ctx, x) + _exp(ctx, -x)) / 2)),
        "tanh": r(ctx.tanh), "asinh": r(ctx.asinh),
        "acosh": r(_nan_if(lambda x: x < 1, ctx.acosh, ctx)),
        "atanh": r(_nan_if(lambda x: abs(x) > 1, ctx.atanh, ctx)),
        "logistic": r(lambda x: _div(ctx, ctx.one, 1 + _exp(ctx, -x))),
        "erf": r(ctx.erf), "erfc": r(lambda x: _erfc(ctx, x)),
        "erf_inv": r(_nan_if(lambda x: abs(x) > 1, lambda x: ctx.erfinv(x) if abs(x) < 1 else ctx.inf * x, ctx)),
        "lgamma": r(lambda x: _lgamma(ctx, x)), "digamma": r(ctx.digamma),
        "floor": r(ctx.floor), "ceil": r(ctx.ceil),
    }


def _float_binary(ctx) -> dict[str, Callable]:
    return {
        "add": lambda x, y: x + y, "add_any": lambda x, y: x + y, "sub": lambda x, y: x - y,
        "mul": lambda x, y: x * y, "div": lambda x, y: _div(ctx, x, y), "pow": lambda x, y: _pow(ctx, x, y),
        "atan2": lambda y, x: _atan2(ctx, y, x), "rem": lambda x, y: _fmod(ctx, x, y),
        "max": lambda x, y: _minmax(max)(ctx, x, y), "min": lambda x, y: _minmax(min)(ctx, x, y),
    }


def _trunc_div(x: int, y: int):
    if y == 0:
        return None
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _trunc_rem(x: int, y: int):
    if y == 0:
        return None
    return x - y * _trunc_div(x, y)


INT_UNARY: dict[str, Callable] = {"neg": lambda x: -x, "abs": abs, "square": lambda x: x * x,
                                  "sign": lambda x: (x > 0) - (x < 0)}
INT_BINARY: dict[str, Callable] = {
    "add": lambda x, y: x + y, "add_any": lambda x, y: x + y, "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y, "div": _trunc_div, "rem": _trunc_rem, "max": max, "min": min,
}
COMPARE: dict[str, Callable] = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
                                "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
IDENTITY = frozenset({"broadcast_in_dim", "reshape", "squeeze", "copy", "copy_p", "stop_gradient",
                      "reduce_precision", "optimization_barrier"})


def _wrap(value: int, dtype) -> int:
    bits = dtype.bits
    value %= 1 << bits
    return value - (1 << bits) if dtype.kind == "i" and value >= 1 << (bits - 1) else value


class Interpreter:
    """The elementwise rules of the module docstring on scalars (also applied element by element to whole
    arrays: rewrites/accuracy/)."""

    def __init__(self, dps: int, domain: bool):
        self.ctx = context(dps)
        self.domain = domain
        self.unary, self.binary = _float_unary(self.ctx), _float_binary(self.ctx)

    def undefined(self, aval):
        return self.ctx.nan if aval.dtype.kind == "f" else None

    def apply(self, eqn, args: list):
        prim, out = eqn.primitive, eqn.outvars[0].aval
        if prim in IDENTITY or (prim.startswith("reduce_") and tuple(eqn.params.get("axes", (0,))) == ()):
            return args[0]
        if any(a is None for a in args) and prim != "select_n":
            return self.undefined(out)
        if prim in COMPARE:
            return self.compare(prim, *args)
        if prim in ("not", "and", "or", "xor"):
            return self.logic(prim, args, out)
        if prim == "select_n":
            which, cases = args[0], args[1:]
            return self.undefined(out) if which is None or is_nan(which) else cases[int(which)]
        if prim == "clamp":
            lo, x, hi = args
            return self.apply_named("min", [self.apply_named("max", [x, lo], out), hi], out)
        if prim == "is_finite":
            x = args[0]
            return None if self.domain and is_nan(x) else bool(self.ctx.isfinite(x))
        if prim == "convert_element_type":
            return self.convert(args[0], eqn.params["new_dtype"])
        if prim == "integer_pow":
            return self.integer_pow(args[0], int(eqn.params["y"]))
        if prim == "round":
            return _round(self.ctx, args[0], eqn.params.get("rounding_method", 0))
        return self.apply_named(prim, args, out)

    def apply_named(self, prim: str, args: list, out):
        if out.dtype.kind == "f":
            table = self.unary if len(args) == 1 else self.binary
        elif out.dtype.kind in "iu":
            table = INT_UNARY if len(args) == 1 else INT_BINARY
        else:
            table = {}
        if prim not in table:
            raise UnsupportedPrimitive(prim, f"high-precision evaluation on {out.dtype.name}", WHERE)
        r = table[prim](*args)
        return r

    def compare(self, prim: str, x, y):
        if is_nan(x) or is_nan(y):
            return None if self.domain else prim == "ne"
        return bool(COMPARE[prim](x, y))

    def logic(self, prim: str, args: list, out):
        if out.dtype.kind == "b":
            ops = {"not": lambda a: not a, "and": lambda a, b: a and b, "or": lambda a, b: a or b,
                   "xor": lambda a, b: a != b}
            return bool(ops[prim](*args))
        if out.dtype.kind in "iu":
            ops = {"not": lambda a: ~a, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
                   "xor": lambda a, b: a ^ b}
            return _wrap(ops[prim](*args), out.dtype)
        raise UnsupportedPrimitive(prim, f"high-precision evaluation on {out.dtype.name}", WHERE)

    def convert(self, x, dtype):
        if dtype.kind == "f":
            return self.ctx.mpf(int(x)) if isinstance(x, (bool, int)) else x
        if dtype.kind == "b":
            return None if is_nan(x) and self.domain else bool(x != 0)
        if dtype.kind in "iu":
            if is_float(x):
                if not self.ctx.isfinite(x):
                    return None
                x = int(self.ctx.floor(x) if x >= 0 else self.ctx.ceil(x))
            return _wrap(int(x), dtype)
        raise UnsupportedPrimitive("convert_element_type", f"high-precision evaluation to {dtype.name}", WHERE)

    def integer_pow(self, x, n: int):
        if is_float(x):
            if n < 0:
                return _div(self.ctx, self.ctx.one, self.integer_pow(x, -n))
            return self.ctx.nan if is_nan(x) else x ** n if n else self.ctx.one
        return x ** n if n >= 0 else _trunc_div(1, x ** -n)


def literal_value(lit: Literal, dps: int):
    v = np.asarray(lit.value)[()]
    if v.dtype.kind == "b":
        return bool(v)
    if v.dtype.kind in "iu":
        return int(v)
    return _float_literal(float(v), dps)


@lru_cache(maxsize=4096)
def _float_literal(v: float, dps: int):
    ctx = context(dps)
    if not math.isfinite(v):
        return ctx.mpf(v)
    return ctx.mpf(number(np.float64(v)).evalf(dps + 5))


def input_value(x, dtype, dps: int):
    if dtype.kind == "b":
        return bool(x)
    if dtype.kind in "iu":
        return int(x)
    return context(dps).mpf(float(x))


# --- significance ---------------------------------------------------------------------------------------
# A value is exact when no operation rounded it (inputs, binary literals, sums and products whose bits fit
# the precision). A result computed from inexact operands is unreliable when rounding could have decided it:
# a cancellation losing nearly all the digits, an amplified error (exp, sin of a huge inexact argument), a
# pole or a domain boundary hit by an inexact argument, a comparison of nearly equal inexact values. Such
# results are never taken as evidence (exp(x) - 1 at x = -1e308 is -1, log1p of it is -inf, at any feasible
# precision: not a real difference from x).
EXACT_PRESERVING = frozenset({"neg", "abs", "sign", "select_n", "max", "min", "clamp", "convert_element_type",
                              *IDENTITY})
AMPLIFYING = frozenset({"exp", "exp2", "expm1", "sinh", "cosh", "logistic"})
PERIODIC = frozenset({"sin", "cos", "tan"})


def _mag(v) -> int:
    sign, man, exp, bc = v._mpf_
    return exp + bc if man else -(1 << 62)


def _bits(v) -> tuple[int, int]:
    """(lowest, highest) bit position of a finite nonzero mpf."""
    sign, man, exp, bc = v._mpf_
    return exp, exp + bc


def _finite_nonzero(ctx, v) -> bool:
    return is_float(v) and bool(ctx.isfinite(v)) and v != 0


def _sum_exact(ctx, a, b) -> bool:
    if a == 0 or b == 0:
        return True
    (la, ha), (lb, hb) = _bits(a), _bits(b)
    return max(ha, hb) + 1 - min(la, lb) <= ctx.prec


def significance(ctx, prim: str, args: list, exacts: list[bool], r) -> tuple[bool, bool]:
    """(exact, unreliable) of `r = prim(*args)`."""
    floats = [a for a in args if is_float(a)]
    if not is_float(r) and prim not in COMPARE:
        return all(exacts), False
    finite_args = all(ctx.isfinite(a) for a in floats)
    if all(exacts):
        if prim in EXACT_PRESERVING or prim in COMPARE or not floats or not finite_args:
            return True, False
        if prim in ("add", "sub", "add_any"):
            return _sum_exact(ctx, *args), False
        if prim == "mul":
            return any(a == 0 for a in args) or sum(_bits(a)[1] - _bits(a)[0] for a in args) <= ctx.prec, False
        if prim == "div":
            return args[0] == 0 or (_finite_nonzero(ctx, args[1]) and args[1]._mpf_[1] == 1), False
        return False, False
    prec = ctx.prec - int(tolerance_digits(ctx.dps) * 3.33) - 8  # errors below the comparison's tolerance
    if not finite_args:
        return False, False
    if prim in COMPARE:
        a, b = args
        return True, bool(a == b or abs(a - b) <= ctx.ldexp(max(abs(a), abs(b)), -prec))
    if prim in EXACT_PRESERVING:
        return False, False
    if not ctx.isfinite(r):
        return False, True  # a pole or a domain boundary reached by a rounded argument
    if prim in ("add", "sub", "add_any"):
        top = max(_mag(a) for a in args)
        return False, bool(r == 0 or top - _mag(r) > prec)
    x = args[0]
    if prim in AMPLIFYING and x != 0 and _mag(x) > prec:
        return False, True
    if prim in PERIODIC and x != 0 and (r == 0 or _mag(r) < _mag(x) - prec):
        return False, True
    if prim == "log" and (r == 0 or _mag(r) < -prec):
        return False, True
    if prim == "log1p" and _mag(1 + x) < -prec:
        return False, True
    if prim == "pow" and args[0] != 0 and abs(args[0]) != 1:
        t = args[1] * ctx.log(abs(args[0]))
        return False, bool(t != 0 and _mag(t) > prec)
    return False, False


def run(closed, point: Sequence, in_dtypes: Sequence, dps: int, domain: bool) -> tuple:
    """(the output value, whether it is reliable: no step's result was decided by rounding)."""
    interp = Interpreter(dps, domain)
    ctx = interp.ctx
    jaxpr = closed.jaxpr
    env: dict[int, tuple] = {}
    for v, x, dt in zip(jaxpr.invars, point, in_dtypes, strict=True):
        env[id(v)] = (input_value(x, dt, dps), True)
    unreliable = False

    def read(atom) -> tuple:
        if isinstance(atom, Literal):
            value = literal_value(atom, dps)
            return value, not is_float(value) or not ctx.isfinite(value) or value == float(value)
        return env[id(atom)]

    for eqn in jaxpr.eqns:
        if len(eqn.outvars) != 1:
            raise UnsupportedPrimitive(eqn.primitive, "high-precision evaluation (one result)", WHERE)
        args, exacts = zip(*[read(a) for a in eqn.invars], strict=True) if eqn.invars else ((), ())
        r = interp.apply(eqn, list(args))
        exact, bad = significance(ctx, eqn.primitive, list(args), list(exacts), r)
        unreliable |= bad
        env[id(eqn.outvars[0])] = (r, exact)
    return read(jaxpr.outvars[0])[0], not unreliable


def evaluate(instance: Instance, point: Sequence, dps: int = 30, domain: bool = False) -> tuple:
    """(left value, right value, both reliable) of a rank-0 instance at `point` (one number per input)."""
    dtypes = [a.dtype for a in instance.in_avals]
    left, left_ok = run(instance.lhs, point, dtypes, dps, domain)
    right, right_ok = run(instance.rhs, point, dtypes, dps, domain)
    return left, right, left_ok and right_ok


def tolerance_digits(dps: int) -> int:
    return min(dps // 2, 40)


def close(a, b, dps: int) -> bool:
    """Equal at `dps` digits: floats within a relative 10^-tolerance_digits(dps), other values identical."""
    if not (is_float(a) and is_float(b)):
        return a == b
    if a == b:
        return True
    if not (context(dps).isfinite(a) and context(dps).isfinite(b)):
        return False
    return abs(a - b) <= context(dps).mpf(10) ** (-tolerance_digits(dps)) * max(abs(a), abs(b))
