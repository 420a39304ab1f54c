"""Elementwise primitives: arithmetic, math and special functions, comparisons, bitwise, select.

The semantics are XLA's on CPU, as JAX (x64) runs them:
- results keep the operand dtype; float16/bfloat16 are computed in float32 and rounded back, as XLA's
  CPU backend does (exact for + - * / sqrt, and the same rounding XLA does for everything else);
- IEEE special values come out as XLA gives them: `max`/`min` propagate nan and order -0 < +0,
  `sign(-0.0)` is -0.0, `pow` and `rem` follow C's `pow` and `fmod`;
- integers wrap; `div` truncates toward zero with `x / 0 = -1` and `INT_MIN / -1 = INT_MIN`, `rem`
  gives `x % 0 = x`; shift amounts that are negative or at least the bit width give 0 (the arithmetic
  shift fills with the sign bit, also for unsigned operands);
- special functions come from scipy.special (the derivatives of the incomplete gamma function in `a`,
  which scipy lacks, from mpmath), with XLA's values at poles and outside the domain.
"""

from __future__ import annotations

from functools import partial

import ml_dtypes
import numpy as np
from scipy import special

from eval.registry import impl

_F16, _BF16, _F32, _F64 = (np.dtype(t) for t in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64))
_NARROW = (_F16, _BF16)
_ignore_fp_errors = np.errstate(all="ignore")  # a decorator only: as a `with` block it is not re-entrant


def _is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt == _BF16


def _wide(x: np.ndarray) -> np.ndarray:
    """float16/bfloat16 as float32 (the precision XLA computes them in); anything else unchanged."""
    return x.astype(_F32) if x.dtype in _NARROW else x


def _as(value, dtype: np.dtype) -> np.ndarray:
    return np.asarray(value, dtype=dtype)


def _unsigned(dt: np.dtype) -> np.dtype:
    return np.dtype(f"u{dt.itemsize}")


def _signed(dt: np.dtype) -> np.dtype:
    return np.dtype(f"i{dt.itemsize}")


# --- unary and binary maps that keep the operand dtype ------------------------------------------


@_ignore_fp_errors
def _map(fn, *operands: np.ndarray, accuracy=None) -> np.ndarray:
    """`fn` on the (widened) operands, rounded back to the first operand's dtype.

    `accuracy` (a requested tolerance of newer JAX versions) is met by NumPy's results and ignored.
    """
    return _as(fn(*map(_wide, operands)), operands[0].dtype)


def _rsqrt(x):
    return 1 / np.sqrt(x)


def _logistic(x):
    return 1 / (1 + np.exp(-x)) if x.dtype.kind == "c" else special.expit(x)


def _sign(x):
    if _is_float(x.dtype):
        return np.where(np.isnan(x), x, np.copysign(x != 0, x))  # XLA: sign(±0) = ±0
    return np.sign(x)


def _round(x, *, rounding_method):
    if _rounding_method(rounding_method) == "to_nearest_even":
        return np.rint(x)
    whole = np.trunc(x)  # away from zero, as C's round(): x - trunc(x) is exact
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)


def _rounding_method(value) -> str:
    text = str(value).upper()
    if text in ("0", "ROUNDINGMETHOD.AWAY_FROM_ZERO", "AWAY_FROM_ZERO"):
        return "away_from_zero"
    if text in ("1", "ROUNDINGMETHOD.TO_NEAREST_EVEN", "TO_NEAREST_EVEN"):
        return "to_nearest_even"
    raise ValueError(f"round: unknown rounding_method={value!r} (expected 0 or 1)")


_UNARY = {
    "neg": np.negative, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1,
    "log": np.log, "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": _rsqrt, "cbrt": np.cbrt,
    "floor": np.floor, "ceil": np.ceil, "square": np.square, "logistic": _logistic, "sign": _sign,
}
for _name, _fn in _UNARY.items():
    impl(_name)(partial(_map, _fn))


@impl("round")
def round_(x, *, rounding_method=0):
    return _map(partial(_round, rounding_method=rounding_method), x)


def _max(x, y):
    """XLA's maximum: nan if either is nan, and +0 above -0."""
    if not _is_float(x.dtype):
        return np.maximum(x, y)
    return np.where((x == 0) & (y == 0), np.where(np.signbit(x), y, x), np.maximum(x, y))


def _min(x, y):
    if not _is_float(x.dtype):
        return np.minimum(x, y)
    return np.where((x == 0) & (y == 0), np.where(np.signbit(x), x, y), np.minimum(x, y))


def _pow(x, y):
    # XLA converts an integer exponent to the base's dtype. The exponent is made a real array: NumPy
    # computes power(x, 0.5) of a scalar (or stride-0) 0.5 as sqrt(x), so pow(-inf, 0.5) would be nan and
    # pow(-0.0, 0.5) -0.0, where XLA (C's pow) gives +inf and +0.0.
    # Single precision is computed in double and rounded once: NumPy's vectorized float32 power is not
    # exact even at exponent 1 (pow(2.6769117e15, 1) gave 2.6769114e15), where libm's powf, which XLA
    # calls, is correctly rounded.
    wide = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}.get(x.dtype, x.dtype)
    shape = np.broadcast_shapes(x.shape, y.shape)
    flat = [np.ascontiguousarray(np.broadcast_to(v.astype(wide), shape)).reshape(-1) for v in (x, y)]
    return np.power(*flat).reshape(shape)


def _atan2(x, y):
    if x.dtype.kind == "c":  # StableHLO's complex atan2
        return -1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))
    return np.arctan2(x, y)


_BINARY = {"add": np.add, "add_any": np.add, "sub": np.subtract, "mul": np.multiply, "max": _max, "min": _min,
           "pow": _pow, "atan2": _atan2}
for _name, _fn in _BINARY.items():
    impl(_name)(partial(_map, _fn))


@impl("div")
def div(x, y):
    return _integer_div(x, y) if x.dtype.kind in "iu" else _map(np.true_divide, x, y)


@impl("rem")
@_ignore_fp_errors
def rem(x, y):
    """C's fmod; for integers XLA's x % 0 = x (and INT_MIN % -1 = 0, the same as x % 1)."""
    if x.dtype.kind in "iu":
        unsafe = (y == 0) | (y == -1) if x.dtype.kind == "i" else y == 0
        return _as(np.where(y == 0, x, np.fmod(x, np.where(unsafe, 1, y))), x.dtype)
    return _map(np.fmod, x, y)


@_ignore_fp_errors
def _integer_div(x, y):
    """Division truncating toward zero, with XLA's x / 0 = -1 (all ones) and INT_MIN / -1 = INT_MIN."""
    dt = x.dtype
    zero = y == 0
    unsafe = zero | ((x == np.iinfo(dt).min) & (y == -1)) if dt.kind == "i" else zero
    safe_y = np.where(unsafe, 1, y).astype(dt)
    floor = np.floor_divide(x, safe_y)
    inexact_negative = (np.remainder(x, safe_y) != 0) & ((x < 0) != (safe_y < 0))
    return _as(np.where(zero, np.invert(np.zeros((), dt)), floor + inexact_negative), dt)


@impl("nextafter")
def nextafter(x, y):
    return _as(np.nextafter(x, y), x.dtype)  # in the operand dtype itself: widening would change the step


@impl("integer_pow")
@_ignore_fp_errors
def integer_pow(x, *, y):
    """x**y by repeated squaring, as JAX lowers it (so rounding and integer wrapping match)."""
    y = int(y)
    if y < 0 and x.dtype.kind in "iub":
        raise TypeError(f"integer_pow: integer operand {x.dtype} cannot be raised to the negative power {y}")
    if y == 0:
        return np.ones_like(x)
    base, acc, n = x, None, abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else acc * base
        n >>= 1
        if n:
            base = base * base
    return _as(1 / acc if y < 0 else acc, x.dtype)


# --- dtype-changing unary ops ------------------------------------------------------------------

_COMPLEX_OF = {_F32: np.dtype(np.complex64), _F64: np.dtype(np.complex128)}


@impl("abs")
@_ignore_fp_errors
def abs_(x):
    result = np.abs(_wide(x))
    return _as(result, result.dtype if x.dtype.kind == "c" else x.dtype)


@impl("is_finite")
def is_finite(x):
    return _as(np.isfinite(x), np.bool_)


@impl("real")
def real(x):
    return x.real.copy()


@impl("imag")
def imag(x):
    return x.imag.copy()


@impl("conj")
def conj(x, *, input_dtype=None):
    """The complex conjugate; a real operand gives a complex result, as in JAX."""
    out = x.dtype if x.dtype.kind == "c" else _COMPLEX_OF[np.dtype(_wide(x).dtype)]
    return _as(np.conj(x), out)


@impl("complex")
def complex_(x, y):
    if x.dtype not in _COMPLEX_OF:
        raise TypeError(f"complex: needs float32 or float64 operands, got {x.dtype}")
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), _COMPLEX_OF[x.dtype])
    out.real, out.imag = x, y  # not x + 1j*y, which turns an infinite y into a nan real part
    return out


@impl("stop_gradient")
def stop_gradient(x):
    return x


@impl("copy", "copy_p")
def copy(x):
    return x.copy()


@impl("device_put")
def device_put(*xs, devices=None, srcs=None, copy_semantics=None):
    return tuple(xs)


# --- comparisons, bitwise and shift ops ---------------------------------------------------------


@_ignore_fp_errors
def _compare(fn, x, y):
    return _as(fn(x, y), np.bool_)


def _total_order_key(x):
    """Integers ordered as XLA's TOTALORDER orders floats: -nan < -inf < ... < -0 < +0 < ... < inf < nan."""
    if not _is_float(x.dtype):
        return x
    bits = x.view(_signed(x.dtype))
    return np.where(bits < 0, bits ^ np.iinfo(bits.dtype).max, bits)


def _total_order(fn, x, y):
    return _compare(fn, _total_order_key(x), _total_order_key(y))


_COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                "gt": np.greater, "ge": np.greater_equal}
for _name, _fn in _COMPARISONS.items():
    impl(_name)(partial(_compare, _fn))
for _name in ("eq", "le", "lt"):  # the total-order comparisons JAX has (sort and searchsorted use them)
    impl(f"{_name}_to")(partial(_total_order, _COMPARISONS[_name]))

_BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "not": np.invert}
for _name, _fn in _BITWISE.items():
    impl(_name)(partial(_map, _fn))


def _shift(kind: str, x, y):
    """Shifts on the unsigned bit pattern; amounts are compared unsigned, as XLA does."""
    ut, bits = _unsigned(x.dtype), 8 * x.dtype.itemsize
    amount = y.astype(ut)  # a negative amount becomes huge, hence out of range
    in_range = amount < bits
    amount = np.where(in_range, amount, 0).astype(ut)
    if kind == "left":
        result = np.where(in_range, x.view(ut) << amount, 0).astype(ut)
    elif kind == "right_logical":
        result = np.where(in_range, x.view(ut) >> amount, 0).astype(ut)
    else:
        st = _signed(x.dtype)
        signed_x = x.view(st)
        result = np.where(in_range, signed_x >> amount.astype(st), signed_x >> (bits - 1)).astype(st)
    return result.view(x.dtype)


for _kind in ("left", "right_logical", "right_arithmetic"):
    impl(f"shift_{_kind}")(partial(_shift, _kind))


@impl("population_count")
def population_count(x):
    return _as(np.bitwise_count(x.view(_unsigned(x.dtype))), x.dtype)


@impl("clz")
def clz(x):
    smeared = x.view(_unsigned(x.dtype)).copy()  # every bit below the highest set bit becomes set
    step = 1
    while step < 8 * x.dtype.itemsize:
        smeared |= smeared >> step
        step *= 2
    return _as(8 * x.dtype.itemsize - np.bitwise_count(smeared).astype(np.int64), x.dtype)


@impl("select_n")
def select_n(which, *cases):
    """cases[which]; an out-of-range index picks the nearest end, as XLA's tree of selects does."""
    if not cases:
        raise TypeError("select_n: needs at least one case")
    if which.dtype != np.bool_:
        which = np.clip(which, 0, len(cases) - 1)
    out = cases[0]
    for i, case in enumerate(cases[1:], start=1):
        out = np.where(which == i, case, out)
    return _as(out, cases[0].dtype)


@impl("clamp")
def clamp(lo, x, hi):
    """min(max(x, lo), hi) with XLA's nan-propagating max and min."""
    return _map(lambda x, lo, hi: _min(_max(x, lo), hi), x, lo, hi)


# --- special functions ------------------------------------------------------------------------------


@_ignore_fp_errors
def _special(name: str, fn, *operands: np.ndarray, accuracy=None) -> np.ndarray:
    """`fn` computed in float64 on real floating-point operands, rounded to the first operand's dtype."""
    if not all(_is_float(x.dtype) for x in operands):
        got = ", ".join(str(x.dtype) for x in operands)
        raise TypeError(f"{name}: needs real floating-point operands, got {got}")
    return _as(fn(*(x.astype(_F64) for x in operands)), operands[0].dtype)


def _is_int(x):
    return x == np.floor(x)


def _lgamma(x):
    return np.where(np.isinf(x), np.inf, special.gammaln(x))  # log|Γ|; XLA gives +inf at -inf


def _digamma(x):
    return np.where((x <= 0) & _is_int(x), np.nan, special.psi(x))  # XLA: nan at the poles 0, -1, ...


# Below this q, SciPy's zeta sums (q + k)^-x term by term up to q + k > 9 (~|q| terms: it never ends at q = -1e12).
_FAR_NEGATIVE_Q = -(2.0**20)


def _zeta(x, q):
    """Hurwitz zeta with XLA's (chlo.zeta) values outside x > 1, q > 0. At q below `_FAR_NEGATIVE_Q`, XLA's
    Euler-Maclaurin terms taken at q itself, as chlo.zeta computes there: q^(1-x)/(x-1) + q^-x/2 + x q^(-x-1)/12."""
    far = q < _FAR_NEGATIVE_Q
    with np.errstate(all="ignore"):
        asymptotic = (np.power(q, 1.0 - x) / (x - 1.0) + 0.5 * np.power(q, -x)
                      + x * np.power(q, -x - 1.0) / 12.0)
    result = np.where(far, asymptotic, special.zeta(x, np.where(far, 1.0, q)))
    result = np.where(x < 1, np.nan, result)
    q_nonpositive = q <= 0
    result = np.where(q_nonpositive & ~_is_int(x), np.nan, result)
    at_pole = q_nonpositive & _is_int(q)
    result = np.where(at_pole, np.where(_is_int(x) & (np.fmod(x, 2) == 0), np.inf, np.nan), result)
    return np.where(x == 1, np.inf, result)


def _polygamma(m, x):
    """(-1)^(m+1) m! zeta(m+1, x) for natural m >= 1, digamma for m = 0, nan otherwise (as chlo)."""
    safe_m = np.where(m > 0, m, 1)
    result = np.where(np.fmod(safe_m, 2) == 1, 1.0, -1.0) * special.gamma(safe_m + 1) * _zeta(safe_m + 1, x)
    result = np.where(m == 0, _digamma(x), result)
    return np.where((m < 0) | ~_is_int(m), np.nan, result)


def _igamma(a, x):
    result = np.where(np.isinf(x), 1.0, np.where(x == 0, 0.0, special.gammainc(a, x)))
    domain_error = (x < 0) | (a < 0) | ((a == 0) & (x == 0)) | np.isnan(a) | np.isnan(x)
    return np.where(domain_error, np.nan, result)


def _igammac(a, x):
    result = np.where(np.isinf(x) | (a == 0), 0.0, special.gammaincc(a, x))
    result = np.where(np.isinf(a), 1.0, result)
    domain_error = ((x < 0) | (a < 0) | ((a == 0) & (x == 0)) | np.isnan(a) | np.isnan(x)
                    | (np.isinf(a) & np.isinf(x)))
    return np.where(domain_error, np.nan, result)


def _betainc(a, b, x):
    """I_x(a, b) with the limits and domain JAX's regularized_incomplete_beta gives."""
    a_is_zero = (a == 0) | (b == np.inf)
    b_is_zero = (b == 0) | (a == np.inf)
    safe = ~(a_is_zero | b_is_zero)
    result = special.betainc(np.where(safe, a, 1), np.where(safe, b, 1), x)
    result = np.where((b_is_zero & (x != 1)) | (a_is_zero & (x == 0)), 0.0, result)
    result = np.where((a_is_zero & (x != 0)) | (b_is_zero & (x == 1)), 1.0, result)
    is_nan = ((a < 0) | (b < 0) | (x < 0) | (x > 1) | (a_is_zero & b_is_zero)
              | np.isnan(a) | np.isnan(b) | np.isnan(x))
    return np.where(is_nan, np.nan, result)


def _igamma_derivatives(a: float, x: float) -> tuple[float, float]:
    """(dP/da, dP/dx) of the regularized lower incomplete gamma P(a, x), to float64 accuracy."""
    import mpmath

    with mpmath.workdps(40):
        a_mp, x_mp = mpmath.mpf(a), mpmath.mpf(x)
        d_a = mpmath.diff(lambda t: mpmath.gammainc(t, 0, x_mp, regularized=True), a_mp)
        d_x = mpmath.exp((a_mp - 1) * mpmath.log(x_mp) - x_mp - mpmath.loggamma(a_mp))
        return float(d_a), float(d_x)


def _igamma_grad(which: str, a, x):
    """dP/da (`igamma_grad_a`) or the sample derivative dx/da = -(dP/da)/(dP/dx) (`random_gamma_grad`)."""
    a, x = np.broadcast_arrays(a, x)
    out = np.full(a.shape, np.nan)
    valid = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    for idx in filter(valid.__getitem__, np.ndindex(a.shape)):
        d_a, d_x = _igamma_derivatives(float(a[idx]), float(x[idx]))
        out[idx] = d_a if which == "a" else -d_a / d_x
    return np.where((x == 0) & (a > 0), 0.0, out)


_SPECIAL = {
    "erf": special.erf, "erfc": special.erfc, "erf_inv": special.erfinv, "lgamma": _lgamma,
    "digamma": _digamma, "bessel_i0e": special.i0e, "bessel_i1e": special.i1e, "polygamma": _polygamma,
    "zeta": _zeta, "igamma": _igamma, "igammac": _igammac, "regularized_incomplete_beta": _betainc,
    "igamma_grad_a": partial(_igamma_grad, "a"), "random_gamma_grad": partial(_igamma_grad, "sample"),
}
for _name, _fn in _SPECIAL.items():
    impl(_name)(partial(_special, _name, _fn))
