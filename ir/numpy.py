"""A `jax.numpy`-like namespace for traced code, emitting the primitives JAX 0.10.2 emits.

Binary functions promote dtypes on JAX's x64 lattice with weak types (`ir.dtypes.promote`):
a Python scalar next to an f32 array becomes an f32 literal, an i32 array next to 2.5 is
converted to a weak f64 first. Shapes broadcast as in JAX: operands of different nonzero ranks
get leading 1s through `broadcast_in_dim`, and the primitive itself broadcasts size-1 and
rank-0 operands (JAX prints `add g h` with g:f64[4,5], h:f64[1,5]).

Departures from JAX's traced text, all numerically identical: JAX's `jit` wrappers around some
functions (`_where`, `clip`, `cumsum`, `remainder`, ...) are inlined; `logaddexp` is inlined
without its `custom_jvp_call`; `einsum` contracts left to right instead of opt_einsum's order;
`var`/`std` divide by a static normalizer; integer-array (advanced) indexing is not supported.
Constants (`asarray(2.0)`, `zeros(())`, `arange(1, 9, 2)`) are tracers of the current trace
holding a Literal or a constvar, so operations on them are recorded, as JAX stages them out.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ir import dtypes as _dt
from ir import lax
from ir.core import Literal
from ir.lax import to_dtype
from ir.tracing import Tracer, aval_of, const_tracer, literal

bool_ = _dt.bool_
int8, int16, int32, int64 = _dt.int8, _dt.int16, _dt.int32, _dt.int64
uint8, uint16, uint32, uint64 = _dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64
bfloat16, float16, float32, float64 = _dt.bfloat16, _dt.float16, _dt.float32, _dt.float64
complex64, complex128 = _dt.complex64, _dt.complex128
float_, int_, complex_ = float64, int64, complex128
inf, nan, pi, e = np.inf, np.nan, np.pi, np.e
newaxis = None

# This module defines sum/max/min/abs/all/any/round like NumPy; helpers use these for Python's.
_python_max, _python_min, _python_abs, _python_sum = builtins.max, builtins.min, builtins.abs, builtins.sum


def _is_python_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def _check_arraylike(name: str, *xs: Any) -> None:
    for i, x in enumerate(xs):
        if not isinstance(x, (Tracer, Literal, np.ndarray, np.generic, bool, int, float, complex)):
            raise TypeError(f"{name} requires arrays or scalars, got {type(x).__name__} at position {i}")


def shape(x) -> tuple[int, ...]:
    return aval_of(x).shape


def ndim(x) -> int:
    return aval_of(x).ndim


def size(x) -> int:
    return aval_of(x).size


def result_type(*xs) -> _dt.DType:
    return _dt.promote(*((a.dtype, a.weak_type) for a in map(aval_of, xs)))[0]


def _as_traced(x: Any) -> Any:
    """A value for the caller: constants (Literals, NumPy arrays) become tracers of the trace."""
    return x if isinstance(x, Tracer) else const_tracer(x)


def _convert(x: Any, dtype: _dt.DType, weak_type: bool = False) -> Any:
    """JAX's `_convert_element_type`: traced values get an equation, constants are converted now."""
    if isinstance(x, Tracer):
        return lax.convert_element_type(x, dtype, weak_type)
    if isinstance(x, np.ndarray) and x.ndim > 0:
        return x if x.dtype == dtype.numpy else x.astype(dtype.numpy)
    return literal(x, dtype, weak_type)


def promote_dtypes(*xs: Any) -> list[Any]:
    if len(xs) < 2:
        return list(xs)
    dtype, weak = _dt.promote(*((a.dtype, a.weak_type) for a in map(aval_of, xs)))
    return [_convert(x, dtype, weak) for x in xs]


def _to_inexact(dt: _dt.DType) -> _dt.DType:
    return dt if dt.is_inexact else float64


def _to_numeric(dt: _dt.DType) -> _dt.DType:
    return int64 if dt.is_bool else dt


def promote_dtypes_inexact(*xs: Any) -> list[Any]:
    dtype, weak = _dt.promote(*((a.dtype, a.weak_type) for a in map(aval_of, xs)))
    return [_convert(x, _to_inexact(dtype), weak) for x in xs]


def promote_dtypes_numeric(*xs: Any) -> list[Any]:
    dtype, weak = _dt.promote(*((a.dtype, a.weak_type) for a in map(aval_of, xs)))
    return [_convert(x, _to_numeric(dtype), weak) for x in xs]


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    rank = _python_max((len(s) for s in shapes), default=0)
    out = []
    for dims in zip(*((1,) * (rank - len(s)) + tuple(s) for s in shapes), strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {[tuple(s) for s in shapes]} cannot be broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def promote_shapes(name: str, *xs: Any) -> list[Any]:
    """Rank promotion as JAX's `promote_shapes`: leading 1s unless ranks agree or only scalars differ."""
    if len(xs) < 2:
        return list(xs)
    shapes = [aval_of(x).shape for x in xs]
    if builtins.all(len(s) == len(shapes[0]) for s in shapes[1:]):
        return list(xs)
    if len({len(s) for s in shapes if s}) < 2:
        return list(xs)
    rank = len(broadcast_shapes(*shapes))
    return [lax.broadcast_to_rank(x, rank) for x in xs]


def _promote_args(name: str, *xs: Any, kind: str = "") -> list[Any]:
    _check_arraylike(name, *xs)
    promote = {"": promote_dtypes, "inexact": promote_dtypes_inexact, "numeric": promote_dtypes_numeric}[kind]
    return promote_shapes(name, *promote(*xs))


# --- elementwise functions ---------------------------------------------------------------------

def _unary_inexact(lax_fn, name):
    def fn(x):
        (x,) = _promote_args(name, x, kind="inexact")
        return lax_fn(x)
    fn.__name__ = name
    return fn


sin, cos, tan = (_unary_inexact(f, n) for f, n in ((lax.sin, "sin"), (lax.cos, "cos"), (lax.tan, "tan")))
arcsin, arccos, arctan = (_unary_inexact(f, n) for f, n in ((lax.asin, "arcsin"), (lax.acos, "arccos"),
                                                          (lax.atan, "arctan")))
sinh, cosh, tanh = (_unary_inexact(f, n) for f, n in ((lax.sinh, "sinh"), (lax.cosh, "cosh"),
                                                     (lax.tanh, "tanh")))
arcsinh, arccosh, arctanh = (_unary_inexact(f, n) for f, n in ((lax.asinh, "arcsinh"), (lax.acosh, "arccosh"),
                                                             (lax.atanh, "arctanh")))
exp, exp2, expm1 = (_unary_inexact(f, n) for f, n in ((lax.exp, "exp"), (lax.exp2, "exp2"),
                                                     (lax.expm1, "expm1")))
log, log1p = _unary_inexact(lax.log, "log"), _unary_inexact(lax.log1p, "log1p")
sqrt, cbrt = _unary_inexact(lax.sqrt, "sqrt"), _unary_inexact(lax.cbrt, "cbrt")
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


def _log_base(base: float, name: str):
    def fn(x):
        (x,) = _promote_args(name, x, kind="inexact")
        return lax.div(lax.log(x), literal(np.log(base), aval_of(x).dtype, False))
    fn.__name__ = name
    return fn


log2, log10 = _log_base(2.0, "log2"), _log_base(10.0, "log10")


def negative(x):
    (x,) = _promote_args("negative", x)
    if aval_of(x).dtype.is_bool:
        raise TypeError("negative does not accept dtype bool")
    return lax.neg(x)


def positive(x):
    (x,) = _promote_args("positive", x)
    return x


def abs(x):  # noqa: A001  (NumPy's name)
    (x,) = _promote_args("abs", x)
    dt = aval_of(x).dtype
    return x if dt.kind in ("u", "b") else lax.abs(x)


absolute = abs


def sign(x):
    (x,) = _promote_args("sign", x)
    return lax.sign(x)


def _round_like(lax_fn, name):
    def fn(x):
        (x,) = _promote_args(name, x, kind="numeric")
        return x if aval_of(x).dtype.is_integer else lax_fn(x)
    fn.__name__ = name
    return fn


floor, ceil = _round_like(lax.floor, "floor"), _round_like(lax.ceil, "ceil")


def round(a, decimals: int = 0):  # noqa: A001
    """Round half to even, as NumPy (`round[rounding_method=1]`)."""
    (a,) = _promote_args("round", a, kind="numeric")
    dt = aval_of(a).dtype
    if dt.is_integer:
        if decimals < 0:
            raise NotImplementedError("round: negative decimals for integer arrays")
        return a
    if decimals == 0:
        return lax.round(a, 1)
    factor = literal(10.0 ** decimals, dt, False)
    return lax.div(lax.round(lax.mul(a, factor), 1), factor)


around = round


def square(x):
    (x,) = _promote_args("square", x, kind="numeric")
    return lax.square(x)


def real(x):
    (x,) = _promote_args("real", x)
    return lax.real(x) if aval_of(x).dtype.is_complex else x


def imag(x):
    (x,) = _promote_args("imag", x)
    return lax.imag(x) if aval_of(x).dtype.is_complex else zeros_like(x)


def conj(x):
    (x,) = _promote_args("conj", x)
    return lax.conj(x) if aval_of(x).dtype.is_complex else x


conjugate = conj


def isfinite(x):
    (x,) = _promote_args("isfinite", x)
    dt = aval_of(x).dtype
    if dt.is_float:
        return lax.is_finite(x)
    if dt.is_complex:
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return full_like(x, True, dtype=bool_)


def isnan(x):
    (x,) = _promote_args("isnan", x)
    return lax.ne(x, x) if aval_of(x).dtype.is_inexact else full_like(x, False, dtype=bool_)


def isinf(x):
    (x,) = _promote_args("isinf", x)
    dt = aval_of(x).dtype
    if not dt.is_float:
        return full_like(x, False, dtype=bool_)
    return lax.eq(lax.abs(x), literal(np.inf, dt, False))


def _binary(lax_fn, name: str, kind: str = ""):
    def fn(x1, x2):
        x1, x2 = _promote_args(name, x1, x2, kind=kind)
        return lax_fn(x1, x2)
    fn.__name__ = name
    return fn


add = _binary(lax.add, "add")
subtract = _binary(lax.sub, "subtract")
multiply = _binary(lax.mul, "multiply")
maximum = _binary(lax.max, "maximum")
minimum = _binary(lax.min, "minimum")
equal = _binary(lax.eq, "equal")
not_equal = _binary(lax.ne, "not_equal")
less = _binary(lax.lt, "less")
less_equal = _binary(lax.le, "less_equal")
greater = _binary(lax.gt, "greater")
greater_equal = _binary(lax.ge, "greater_equal")
arctan2 = _binary(lax.atan2, "arctan2", "inexact")
atan2 = arctan2
nextafter = _binary(lax.nextafter, "nextafter", "inexact")
true_divide = _binary(lax.div, "true_divide", "inexact")
divide = true_divide


def _bitwise(lax_fn, name: str):
    def fn(x1, x2):
        x1, x2 = _promote_args(name, x1, x2)
        dt = aval_of(x1).dtype
        if not (dt.is_integer or dt.is_bool):
            raise TypeError(f"{name} needs integer or bool operands, got {dt}")
        return lax_fn(x1, x2)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise(lax.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(lax.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(lax.bitwise_xor, "bitwise_xor")
left_shift = _bitwise(lax.shift_left, "left_shift")


def right_shift(x1, x2):
    x1, x2 = _promote_args("right_shift", x1, x2)
    dt = aval_of(x1).dtype
    if not dt.is_integer:
        raise TypeError(f"right_shift needs integer operands, got {dt}")
    return (lax.shift_right_logical if dt.kind == "u" else lax.shift_right_arithmetic)(x1, x2)


def invert(x):
    (x,) = _promote_args("invert", x)
    dt = aval_of(x).dtype
    if not (dt.is_integer or dt.is_bool):
        raise TypeError(f"invert needs an integer or bool operand, got {dt}")
    return lax.bitwise_not(x)


bitwise_not = invert


def _logical(lax_fn, name: str):
    def fn(*xs):
        xs = [x if aval_of(x).dtype.is_bool else not_equal(x, 0) for x in xs]
        return lax_fn(*promote_shapes(name, *xs))
    fn.__name__ = name
    return fn


logical_and = _logical(lax.bitwise_and, "logical_and")
logical_or = _logical(lax.bitwise_or, "logical_or")
logical_xor = _logical(lax.bitwise_xor, "logical_xor")
logical_not = _logical(lax.bitwise_not, "logical_not")


def power(x1, x2):
    """`x ** 2` with a static integer exponent is `integer_pow[y=2]`, as in JAX."""
    _check_arraylike("power", x1, x2)
    if isinstance(x2, (int, np.integer)) and not isinstance(x2, (bool, np.bool_)):
        (x1,) = promote_dtypes_numeric(x1)
        return lax.integer_pow(x1, int(x2))
    x1, x2 = promote_shapes("power", x1, x2)
    a1, a2 = aval_of(x1), aval_of(x2)
    if a1.dtype.is_inexact and a2.dtype.is_integer:
        return lax.pow(x1, x2)
    x1, x2 = promote_dtypes_numeric(x1, x2)
    if not aval_of(x1).dtype.is_inexact:
        raise NotImplementedError("power: integer base with a traced integer exponent is not supported "
                                  "(use a static Python int exponent)")
    return lax.pow(x1, x2)


pow = power  # noqa: A001


def float_power(x1, x2):
    x1, x2 = _promote_args("float_power", x1, x2, kind="inexact")
    return lax.pow(x1, x2)


def floor_divide(x1, x2):
    x1, x2 = _promote_args("floor_divide", x1, x2, kind="numeric")
    dt = aval_of(x1).dtype
    if dt.kind == "u":
        return lax.div(x1, x2)
    if dt.is_integer:
        quotient = lax.div(x1, x2)
        select = logical_and(not_equal(lax.sign(x1), lax.sign(x2)), not_equal(lax.rem(x1, x2), 0))
        return where(select, subtract(quotient, 1), quotient)
    if dt.is_complex:
        raise NotImplementedError("floor_divide of complex values")
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1, x2):
    mod = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, mod), x2)
    ind = lax.bitwise_and(not_equal(mod, 0), not_equal(lax.sign(x2), lax.sign(mod)))
    mod = lax.select(ind, add(mod, x2), mod)
    div = lax.select(ind, subtract(div, 1), div)
    return lax.round(div, 0), mod


def remainder(x1, x2):
    """Python's `%`: the result has the sign of the divisor."""
    x1, x2 = _promote_args("remainder", x1, x2, kind="numeric")
    dt = aval_of(x1).dtype
    zero = literal(0, dt, False)
    if aval_of(x2).dtype.is_integer:
        x2 = where(equal(x2, 0), literal(1, dt, False), x2)
    trunc_mod = lax.rem(x1, x2)
    trunc_mod_not_zero = lax.ne(trunc_mod, zero)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)), trunc_mod_not_zero)
    return lax.select(do_plus, lax.add(trunc_mod, x2), trunc_mod)


mod = remainder


def fmod(x1, x2):
    x1, x2 = _promote_args("fmod", x1, x2, kind="numeric")
    return lax.rem(x1, x2)


def divmod(x1, x2):  # noqa: A001
    return floor_divide(x1, x2), remainder(x1, x2)


def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)), stably; JAX's custom_jvp body, inlined."""
    x1, x2 = _promote_args("logaddexp", x1, x2, kind="inexact")
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    stable = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
    return lax.select(isnan(delta), lax.add(x1, x2), stable)


def where(condition, x=None, y=None):
    """`x` where `condition` else `y` (select_n(condition, y, x) after broadcasting)."""
    if x is None or y is None:
        raise NotImplementedError("where(condition) with one argument (nonzero) has a data-dependent shape")
    _check_arraylike("where", condition, x, y)
    if not aval_of(condition).dtype.is_bool:
        condition = not_equal(condition, 0)
    x, y = promote_dtypes(x, y)
    if aval_of(condition).ndim == 0:
        x, y = broadcast_arrays(x, y)
    else:
        condition, x, y = broadcast_arrays(condition, x, y)
    return lax.select(condition, x, y)


def select(condlist, choicelist, default=0):
    out = default
    for cond, choice in reversed(list(zip(condlist, choicelist, strict=True))):
        out = where(cond, choice, out)
    return out


def clip(a, min=None, max=None):  # noqa: A002
    if min is not None:
        a = maximum(min, a)
    if max is not None:
        a = minimum(max, a)
    return a


def heaviside(x1, x2):
    x1, x2 = _promote_args("heaviside", x1, x2, kind="inexact")
    zero = literal(0, aval_of(x1).dtype, False)
    return where(lax.lt(x1, zero), zero, where(lax.gt(x1, zero), literal(1, aval_of(x1).dtype, False), x2))


# --- constructors ------------------------------------------------------------------------------

def asarray(a, dtype=None):
    """An array of the current trace: tracers pass through (converted if `dtype` differs);
    Python scalars become weak literals, NumPy data constants (as `jnp.asarray` under a trace)."""
    if isinstance(a, Tracer):
        return a if dtype is None else astype(a, dtype)
    if isinstance(a, (list, tuple)) and builtins.any(isinstance(x, Tracer) for x in a):
        out = stack([asarray(x) for x in a])
        return out if dtype is None else astype(out, dtype)
    if isinstance(a, Literal) or _is_python_scalar(a) or isinstance(a, np.generic):
        lit = literal(a) if dtype is None else literal(a, to_dtype(dtype), False)
        return const_tracer(lit)
    arr = np.asarray(a)
    if dtype is not None:
        arr = arr.astype(to_dtype(dtype).numpy)
    return const_tracer(arr) if arr.ndim > 0 else const_tracer(literal(arr[()]))


array = asarray


def astype(x, dtype):
    dt = to_dtype(dtype)
    if isinstance(x, Tracer):
        return lax.convert_element_type(x, dt, False)
    return _as_traced(_convert(x, dt))


def full(shape, fill_value, dtype=None):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if dtype is None and not isinstance(fill_value, Tracer):
        dtype = aval_of(fill_value).dtype
    return _as_traced(lax.full(shape, fill_value, dtype))


def zeros(shape, dtype=None):
    return full(shape, 0, float64 if dtype is None else dtype)


def ones(shape, dtype=None):
    return full(shape, 1, float64 if dtype is None else dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    return _as_traced(lax.full_like(a, fill_value, dtype, shape))


def zeros_like(a, dtype=None, shape=None):
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return full_like(a, 1, dtype, shape)


def arange(start, stop=None, step=None, dtype=None):
    """`arange(n)` (and `arange(0, n)`) is an `iota`; other ranges are NumPy constants."""
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            raise TypeError("arange needs static (Python) bounds; the result shape would be traced")
    if dtype is None:
        dtype = result_type(*(v for v in (start, stop, step) if v is not None))
    dt = to_dtype(dtype)
    if step is None and (stop is None or start == 0):
        n = start if stop is None else stop
        return lax.iota(dt, int(np.ceil(n)))
    return const_tracer(np.arange(start, stop, step, dtype=dt.numpy))


def eye(N: int, M: int | None = None, k: int = 0, dtype=None):
    dt = float64 if dtype is None else to_dtype(dtype)
    shape_ = (N, N if M is None else M)
    rows, cols = lax.broadcasted_iota(int64, shape_, 0), lax.broadcasted_iota(int64, shape_, 1)
    mask = lax.eq(lax.add(rows, literal(k, int64, False)), cols)
    return lax.convert_element_type(mask, dt, False) if dt != bool_ else mask


def identity(n: int, dtype=None):
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype=None):
    shape_ = (N, N if M is None else M)
    rows = lax.add(lax.broadcasted_iota(int64, shape_, 0), literal(k, int64, False))
    mask = lax.ge(rows, lax.broadcasted_iota(int64, shape_, 1))
    dt = float64 if dtype is None else to_dtype(dtype)
    return mask if dt == bool_ else lax.convert_element_type(mask, dt, False)


def tril(m, k: int = 0):
    s = shape(m)
    mask = tri(s[-2], s[-1], k=k, dtype=bool_)
    return lax.select(lax.broadcast_in_dim(mask, s, (len(s) - 2, len(s) - 1)) if len(s) > 2 else mask,
                      m, zeros_like(m))


def triu(m, k: int = 0):
    s = shape(m)
    mask = tri(s[-2], s[-1], k=k - 1, dtype=bool_)
    return lax.select(lax.broadcast_in_dim(mask, s, (len(s) - 2, len(s) - 1)) if len(s) > 2 else mask,
                      zeros_like(m), m)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None):
    if isinstance(start, Tracer) or isinstance(stop, Tracer):
        raise NotImplementedError("linspace with traced bounds")
    dt = None if dtype is None else to_dtype(dtype).numpy
    return const_tracer(np.linspace(start, stop, num, endpoint=endpoint, dtype=dt))


# --- shape manipulation ------------------------------------------------------------------------

def _canon_axis(axis: int, nd: int) -> int:
    if not -nd <= axis < _python_max(nd, 1):
        raise ValueError(f"axis {axis} is out of bounds for an array of rank {nd}")
    return axis % nd if nd else 0


def _tracer_like(x):
    _check_arraylike("array function", x)
    return x if isinstance(x, Tracer) else asarray(x)


def reshape(a, newshape, order: str = "C"):
    a = _tracer_like(a)
    newshape = (newshape,) if isinstance(newshape, int) else tuple(int(d) for d in newshape)
    total = size(a)
    if newshape.count(-1) > 1:
        raise ValueError("reshape: only one dimension may be -1")
    if -1 in newshape:
        known = math.prod(d for d in newshape if d != -1)
        if known == 0 or total % known:
            raise ValueError(f"cannot reshape {shape(a)} into {newshape}")
        newshape = tuple(total // known if d == -1 else d for d in newshape)
    if math.prod(newshape) != total:
        raise ValueError(f"cannot reshape array of shape {shape(a)} into {newshape}")
    if order == "C":
        return lax.reshape(a, newshape)
    if order == "F":
        dims = tuple(range(ndim(a) - 1, -1, -1))
        return transpose(lax.reshape(a, newshape[::-1], dims), tuple(range(len(newshape) - 1, -1, -1)))
    raise ValueError(f"reshape: unsupported order {order!r}")


def ravel(a):
    return reshape(a, (size(a),))


def transpose(a, axes=None):
    a = _tracer_like(a)
    nd = ndim(a)
    axes = tuple(range(nd - 1, -1, -1)) if axes is None else tuple(_canon_axis(int(x), nd) for x in axes)
    return lax.transpose(a, axes)


def swapaxes(a, axis1: int, axis2: int):
    nd = ndim(a)
    perm = list(range(nd))
    i, j = _canon_axis(axis1, nd), _canon_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(_tracer_like(a), perm)


def moveaxis(a, source: int, destination: int):
    nd = ndim(a)
    src, dst = _canon_axis(source, nd), _canon_axis(destination, nd)
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return lax.transpose(_tracer_like(a), perm)


def expand_dims(a, axis):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return lax.expand_dims(_tracer_like(a), axes)


def squeeze(a, axis=None):
    s = shape(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(s) if d == 1)
    else:
        axes = tuple(_canon_axis(x, len(s)) for x in ((axis,) if isinstance(axis, int) else axis))
        for x in axes:
            if s[x] != 1:
                raise ValueError(f"cannot squeeze axis {x} of size {s[x]}")
    return lax.squeeze(_tracer_like(a), axes)


def broadcast_to(a, shape_):
    a = _tracer_like(a)
    shape_ = (shape_,) if isinstance(shape_, int) else tuple(shape_)
    s = shape(a)
    if s == shape_:
        return a
    nlead = len(shape_) - len(s)
    if nlead < 0 or builtins.any(d not in (1, t) for d, t in zip(s, shape_[nlead:], strict=True)):
        raise ValueError(f"cannot broadcast shape {s} to {shape_}")
    return lax.broadcast_in_dim(a, shape_, tuple(range(nlead, len(shape_))))


def broadcast_arrays(*args):
    shapes = [shape(a) for a in args]
    if builtins.all(s == shapes[0] for s in shapes):
        return list(args)
    out = broadcast_shapes(*shapes)
    return [broadcast_to(a, out) for a in args]


def atleast_1d(a):
    return reshape(a, (1,)) if ndim(a) == 0 else a


def atleast_2d(a):
    nd = ndim(a)
    return a if nd >= 2 else expand_dims(a, tuple(range(2 - nd)))


def concatenate(arrays, axis: int = 0):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("concatenate needs at least one array")
    if axis is None:
        return concatenate([ravel(a) for a in arrays], 0)
    arrays = [_tracer_like(a) if ndim(a) else a for a in promote_dtypes(*arrays)]
    if builtins.any(ndim(a) == 0 for a in arrays):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    return lax.concatenate(arrays, _canon_axis(axis, ndim(arrays[0])))


def stack(arrays, axis: int = 0):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("stack needs at least one array")
    s = shape(arrays[0])
    if builtins.any(shape(a) != s for a in arrays):
        raise ValueError("stack: all input arrays must have the same shape")
    arrays = [_tracer_like(a) for a in promote_dtypes(*arrays)]
    return lax.stack(arrays, _canon_axis(axis, len(s) + 1))


def vstack(arrays):
    return concatenate([atleast_2d(a) for a in arrays], 0)


def hstack(arrays):
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, 0 if ndim(arrays[0]) == 1 else 1)


def tile(A, reps):
    A = _tracer_like(A)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    nd = ndim(A)
    if len(reps) > nd:
        A = reshape(A, (1,) * (len(reps) - nd) + shape(A))
    reps = (1,) * (ndim(A) - len(reps)) + reps
    return lax.tile(A, reps)


def repeat(a, repeats: int, axis: int | None = None):
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError("repeat: only a static integer number of repeats is supported")
    a = _tracer_like(a)
    if axis is None:
        a, axis = ravel(a), 0
    s = shape(a)
    axis = _canon_axis(axis, len(s))
    expanded = s[:axis + 1] + (int(repeats),) + s[axis + 1:]
    dims = tuple(range(axis + 1)) + tuple(range(axis + 2, len(s) + 1))
    b = lax.broadcast_in_dim(a, expanded, dims)
    return lax.reshape(b, s[:axis] + (s[axis] * int(repeats),) + s[axis + 1:])


def flip(m, axis=None):
    nd = ndim(m)
    axes = tuple(range(nd)) if axis is None else tuple(
        _canon_axis(x, nd) for x in ((axis,) if isinstance(axis, int) else axis))
    return lax.rev(_tracer_like(m), axes)


def pad(array, pad_width, mode: str = "constant", constant_values=0):
    if mode != "constant":
        raise NotImplementedError(f"pad: mode {mode!r} (only 'constant')")
    array = _tracer_like(array)
    nd = ndim(array)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (nd, 2))
    value = _convert(constant_values, aval_of(array).dtype)
    return lax.pad(array, value, [(int(lo), int(hi), 0) for lo, hi in pw])


def split(ary, indices_or_sections, axis: int = 0):
    s = shape(ary)
    axis = _canon_axis(axis, len(s))
    if isinstance(indices_or_sections, (int, np.integer)):
        n = int(indices_or_sections)
        if s[axis] % n:
            raise ValueError("array split does not result in an equal division")
        sizes = [s[axis] // n] * n
    else:
        bounds = [0, *(int(i) for i in indices_or_sections), s[axis]]
        sizes = [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return lax.split(_tracer_like(ary), sizes, axis)


# --- reductions --------------------------------------------------------------------------------

def _reduction_axes(a, axis) -> tuple[int, ...]:
    nd = ndim(a)
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(_canon_axis(int(x), nd) for x in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate axis in reduction: {axis}")
    return out


def _upcast_f16(dt: _dt.DType) -> _dt.DType:
    return float32 if dt in (float16, bfloat16) else dt


def _promote_integer(dt: _dt.DType) -> _dt.DType:
    if dt.is_bool:
        return int64
    if dt.kind == "u" and dt.bits < 64:
        return uint64
    if dt.kind == "i" and dt.bits < 64:
        return int64
    return dt


def _keepdims(result, axes, keepdims: bool):
    return lax.expand_dims(result, axes) if keepdims and axes else result


def _sum_like(lax_reduce, bool_reduce, a, axis, dtype, keepdims):
    a = _tracer_like(a)
    axes = _reduction_axes(a, axis)
    in_dt = aval_of(a).dtype
    result_dt = _promote_integer(in_dt) if dtype is None else to_dtype(dtype)
    comp_dt = _upcast_f16(result_dt) if result_dt.is_inexact else result_dt
    a = lax.convert_element_type(a, comp_dt) if isinstance(a, Tracer) else _convert(a, comp_dt)
    out = (bool_reduce if comp_dt.is_bool else lax_reduce)(a, axes)
    out = _keepdims(out, axes, keepdims)
    return lax.convert_element_type(out, result_dt)


def sum(a, axis=None, dtype=None, keepdims: bool = False):  # noqa: A001
    return _sum_like(lax.reduce_sum, lax.reduce_or, a, axis, dtype, keepdims)


def prod(a, axis=None, dtype=None, keepdims: bool = False):
    return _sum_like(lax.reduce_prod, lax.reduce_and, a, axis, dtype, keepdims)


def _max_like(lax_reduce, bool_reduce, a, axis, keepdims):
    a = _tracer_like(a)
    axes = _reduction_axes(a, axis)
    if 0 in [shape(a)[i] for i in axes]:
        raise ValueError("zero-size array to reduction operation which has no identity")
    out = (bool_reduce if aval_of(a).dtype.is_bool else lax_reduce)(a, axes)
    return _keepdims(out, axes, keepdims)


def max(a, axis=None, keepdims: bool = False):  # noqa: A001
    return _max_like(lax.reduce_max, lax.reduce_or, a, axis, keepdims)


def min(a, axis=None, keepdims: bool = False):  # noqa: A001
    return _max_like(lax.reduce_min, lax.reduce_and, a, axis, keepdims)


amax, amin = max, min


def all(a, axis=None, keepdims: bool = False):  # noqa: A001
    a = _tracer_like(a)
    a = a if aval_of(a).dtype.is_bool else not_equal(a, 0)
    axes = _reduction_axes(a, axis)
    return _keepdims(lax.reduce_and(a, axes), axes, keepdims)


def any(a, axis=None, keepdims: bool = False):  # noqa: A001
    a = _tracer_like(a)
    a = a if aval_of(a).dtype.is_bool else not_equal(a, 0)
    axes = _reduction_axes(a, axis)
    return _keepdims(lax.reduce_or(a, axes), axes, keepdims)


def mean(a, axis=None, dtype=None, keepdims: bool = False):
    """`reduce_sum` then `div` by the element count as a literal, as in JAX."""
    a = _tracer_like(a)
    axes = _reduction_axes(a, axis)
    result_dt = _to_inexact(aval_of(a).dtype) if dtype is None else to_dtype(dtype)
    comp_dt = _upcast_f16(result_dt) if result_dt.is_inexact else result_dt
    count = math.prod(shape(a)[i] for i in axes)
    total = sum(a, axis, dtype=comp_dt, keepdims=keepdims)
    return astype(lax.div(total, literal(count, comp_dt, False)), result_dt)


def var(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False):
    a = _tracer_like(a)
    axes = _reduction_axes(a, axis)
    dt = _to_inexact(aval_of(a).dtype) if dtype is None else to_dtype(dtype)
    a = astype(a, dt)
    centered = lax.sub(a, mean(a, axis, keepdims=True))
    if dt.is_complex:
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        centered = lax.square(centered)
    count = math.prod(shape(a)[i] for i in axes) - ddof
    out_dt = aval_of(centered).dtype
    return lax.div(sum(centered, axis, keepdims=keepdims), literal(float(count) if count > 0 else np.nan,
                                                                   out_dt, False))


def std(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False):
    return sqrt(var(a, axis, dtype, ddof, keepdims))


def _arg_reduce(lax_fn, a, axis, keepdims):
    a = _tracer_like(a)
    if axis is None:
        out = lax_fn(ravel(a), 0, int64)
        return reshape(out, (1,) * ndim(a)) if keepdims else out
    axis = _canon_axis(int(axis), ndim(a))
    if shape(a)[axis] == 0:
        raise ValueError("attempt to get argmax/argmin of an empty sequence")
    out = lax_fn(a, axis, int64)
    return _keepdims(out, (axis,), keepdims)


def argmax(a, axis=None, keepdims: bool = False):
    return _arg_reduce(lax.argmax, a, axis, keepdims)


def argmin(a, axis=None, keepdims: bool = False):
    return _arg_reduce(lax.argmin, a, axis, keepdims)


def _cumulative(lax_fn, promote: bool, a, axis, dtype):
    a = _tracer_like(a)
    if axis is None or ndim(a) == 0:
        a, axis = ravel(a), 0
    axis = _canon_axis(int(axis), ndim(a))
    dt = aval_of(a).dtype
    target = to_dtype(dtype) if dtype is not None else (_promote_integer(dt) if promote else dt)
    a = astype(a, target)
    return lax_fn(a, axis)


def cumsum(a, axis=None, dtype=None):
    return _cumulative(lax.cumsum, True, a, axis, dtype)


def cumprod(a, axis=None, dtype=None):
    return _cumulative(lax.cumprod, True, a, axis, dtype)


def sort(a, axis: int | None = -1):
    a = _tracer_like(a)
    if axis is None:
        a, axis = ravel(a), 0
    return lax.sort(a, _canon_axis(axis, ndim(a)))


def argsort(a, axis: int | None = -1):
    a = _tracer_like(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _canon_axis(axis, ndim(a))
    iota = lax.broadcasted_iota(int64, shape(a), axis)
    return lax.sort((a, iota), axis, True, 1)[1]


# --- contractions ------------------------------------------------------------------------------

def matmul(a, b, precision=None, preferred_element_type=None):
    """JAX's matmul: batch dims broadcast (size-1 ones squeezed), one dot_general, then a transpose."""
    a, b = promote_dtypes(_tracer_like(a), _tracer_like(b))
    for i, x in enumerate((a, b)):
        if ndim(x) < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1")
    pet = result_type(a, b) if preferred_element_type is None else to_dtype(preferred_element_type)
    sa, sb = shape(a), shape(b)
    a_is_mat, b_is_mat = len(sa) > 1, len(sb) > 1
    a_batch = sa[:-2] if a_is_mat else ()
    b_batch = sb[:-2] if b_is_mat else ()
    nbatch = _python_max(len(a_batch), len(b_batch))
    a_batch = (None,) * (nbatch - len(a_batch)) + a_batch
    b_batch = (None,) * (nbatch - len(b_batch)) + b_batch
    a_squeeze, b_squeeze, a_bdims, b_bdims = [], [], [], []
    idx_batch, idx_a_other, idx_b_other = [], [], []
    for i, (ba, bb) in enumerate(zip(a_batch, b_batch, strict=True)):
        if ba is None:
            idx_b_other.append(i)
        elif bb is None:
            idx_a_other.append(i)
        elif ba == 1:
            idx_b_other.append(i)
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
        elif bb == 1:
            idx_a_other.append(i)
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
        elif ba == bb:
            a_bdims.append(len(idx_batch) + len(idx_a_other))
            b_bdims.append(len(idx_batch) + len(idx_b_other))
            idx_batch.append(i)
        else:
            raise ValueError(f"incompatible shapes for matmul: {sa} and {sb}")
    if a_is_mat:
        idx_a_other.append(nbatch)
    if b_is_mat:
        idx_b_other.append(nbatch + a_is_mat)
    perm = tuple(int(p) for p in np.argsort(np.array(idx_batch + idx_a_other + idx_b_other, dtype=np.int64)))
    a = lax.squeeze(a, a_squeeze)
    b = lax.squeeze(b, b_squeeze)
    out = lax.dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 1 - b_is_mat,)), (a_bdims, b_bdims)),
                          precision=precision, preferred_element_type=pet)
    return lax.transpose(out, perm)


def dot(a, b, precision=None, preferred_element_type=None):
    a, b = promote_dtypes(_tracer_like(a), _tracer_like(b))
    pet = result_type(a, b) if preferred_element_type is None else to_dtype(preferred_element_type)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        return multiply(a, b)
    contract = ((na - 1,), (0,)) if nb == 1 else ((na - 1,), (nb - 2,))
    return lax.dot_general(a, b, (contract, ((), ())), precision=precision, preferred_element_type=pet)


def vdot(a, b):
    return dot(ravel(conj(a)), ravel(b))


def inner(a, b):
    a, b = promote_dtypes(_tracer_like(a), _tracer_like(b))
    if ndim(a) == 0 or ndim(b) == 0:
        return multiply(a, b)
    return lax.dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 1,)), ((), ())),
                           preferred_element_type=result_type(a, b))


def outer(a, b):
    return multiply(reshape(a, (size(a), 1)), ravel(b))


def tensordot(a, b, axes=2):
    a, b = promote_dtypes(_tracer_like(a), _tracer_like(b))
    if isinstance(axes, int):
        ca, cb = tuple(range(ndim(a) - axes, ndim(a))), tuple(range(axes))
    else:
        ca, cb = ((axes[0],) if isinstance(axes[0], int) else tuple(axes[0]),
                  (axes[1],) if isinstance(axes[1], int) else tuple(axes[1]))
        ca = tuple(_canon_axis(x, ndim(a)) for x in ca)
        cb = tuple(_canon_axis(x, ndim(b)) for x in cb)
    return lax.dot_general(a, b, ((ca, cb), ((), ())), preferred_element_type=result_type(a, b))


def einsum(subscripts: str, *operands, precision=None, preferred_element_type=None):
    """Explicit or implicit einsum without ellipses; operands are contracted left to right."""
    if "." in subscripts:
        raise NotImplementedError("einsum with ellipsis ('...')")
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        ins, out_names = spec.split("->")
    else:
        ins = spec
        letters = ins.replace(",", "")
        out_names = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    in_names = ins.split(",")
    if len(in_names) != len(operands):
        raise ValueError(f"einsum: {len(in_names)} input specs for {len(operands)} operands")
    ops = promote_dtypes(*(_tracer_like(o) for o in operands))
    pet = result_type(*ops) if preferred_element_type is None else to_dtype(preferred_element_type)
    for names, op in zip(in_names, ops, strict=True):
        if len(names) != ndim(op):
            raise ValueError(f"einsum: spec {names!r} does not match an operand of rank {ndim(op)}")
    terms = list(zip(ops, in_names, strict=True))
    x, xn = _einsum_reduce_single(*terms[0], _keep=set(out_names) | set("".join(in_names[1:])))
    for k in range(1, len(terms)):
        later = set(out_names) | set("".join(in_names[k + 1:]))
        y, yn = _einsum_reduce_single(*terms[k], _keep=later | set(xn))
        x, xn = _einsum_reduce_single(x, xn, _keep=later | set(yn))
        shared = [c for c in xn if c in yn]
        batch = [c for c in shared if c in later]
        contract = [c for c in shared if c not in later]
        dn = (([xn.index(c) for c in contract], [yn.index(c) for c in contract]),
              ([xn.index(c) for c in batch], [yn.index(c) for c in batch]))
        x = lax.dot_general(x, y, dn, precision=precision, preferred_element_type=pet)
        free_x, free_y = (c for c in xn if c not in shared), (c for c in yn if c not in shared)
        xn = "".join(batch) + "".join(free_x) + "".join(free_y)
    x, xn = _einsum_reduce_single(x, xn, _keep=set(out_names))
    if sorted(xn) != sorted(out_names):
        raise ValueError(f"einsum: output spec {out_names!r} does not match the inputs")
    return lax.transpose(x, tuple(xn.index(c) for c in out_names))


def _einsum_reduce_single(x, names: str, _keep: set[str]):
    """Take diagonals of repeated names and sum out names nobody else needs."""
    for c in sorted({c for c in names if names.count(c) > 1}):
        first, second = names.index(c), names.index(c, names.index(c) + 1)
        s = shape(x)
        mask = lax.eq(lax.broadcasted_iota(uint32, s, first), lax.broadcasted_iota(uint32, s, second))
        x = lax.select(mask, x, lax.full_like(x, 0))
        if c in _keep:
            x = lax.reduce_sum(x, (second,))
            names = names[:second] + names[second + 1:]
        else:
            axes = (first, second)
            x = lax.reduce_sum(x, axes)
            names = "".join(n for i, n in enumerate(names) if i not in axes)
    drop = [i for i, c in enumerate(names) if c not in _keep]
    if drop:
        x = lax.reduce_sum(x, drop)
        names = "".join(c for i, c in enumerate(names) if i not in drop)
    return x, names


# --- indexing ----------------------------------------------------------------------------------

def _is_int_index(i) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _expand_ellipsis(idx: tuple, nd: int) -> tuple:
    consumed = _python_sum(1 for i in idx if i is not None and i is not Ellipsis)
    if consumed > nd:
        raise IndexError(f"too many indices: a {nd}-dimensional array indexed with {consumed}")
    n_ell = _python_sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    fill = (slice(None),) * (nd - consumed)
    if n_ell:
        k = next(k for k, i in enumerate(idx) if i is Ellipsis)
        return idx[:k] + fill + idx[k + 1:]
    return idx + fill


def getitem(arr, idx):
    """`arr[idx]` for ints, slices (any step), None and Ellipsis (static slice), and traced
    integer scalars (dynamic slice), as JAX's `rewriting_take`."""
    arr = _tracer_like(arr)
    idx = idx if isinstance(idx, tuple) else (idx,)
    for i in idx:
        if isinstance(i, (list, np.ndarray)) or (isinstance(i, Tracer) and i.ndim > 0):
            raise NotImplementedError("integer-array (advanced) and boolean-mask indexing are not supported; "
                                      "use lax.gather")
        if isinstance(i, (bool, np.bool_)):
            raise NotImplementedError("boolean scalar indexing is not supported")
        if isinstance(i, Tracer) and not i.dtype.is_integer:
            raise TypeError(f"indexer must be an integer, got a traced {i.aval}")
    s = shape(arr)
    idx = _expand_ellipsis(idx, len(s))
    if builtins.any(isinstance(i, Tracer) for i in idx):
        return _dynamic_getitem(arr, idx, s)
    starts, limits, strides, rev_axes, squeeze_axes, newaxis = [], [], [], [], [], []
    axis = 0
    for i in idx:
        if i is None:
            newaxis.append(len(starts) - len(squeeze_axes) + len(newaxis))
            continue
        size_ = s[axis]
        if _is_int_index(i):
            if not -size_ <= i < size_:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size_}")
            start = int(i) % size_
            starts.append(start)
            limits.append(start + 1)
            strides.append(1)
            squeeze_axes.append(axis)
        elif isinstance(i, slice):
            start, stop, step = i.indices(size_)
            if step < 0:
                new_start = _python_min(size_, stop + 1 + _python_abs(start - stop - 1) % -step)
                starts.append(new_start)
                limits.append(_python_max(new_start, start + 1))
                strides.append(-step)
                rev_axes.append(axis)
            else:
                starts.append(start)
                limits.append(_python_max(start, stop))
                strides.append(step)
        else:
            raise TypeError(f"unsupported index {i!r} of type {type(i).__name__}")
        axis += 1
    result = arr
    trivial = builtins.all(st == 1 for st in strides) and builtins.all(
        (a, b) == (0, d) for a, b, d in zip(starts, limits, s, strict=True))
    if not trivial:
        result = lax.slice(arr, starts, limits, None if builtins.all(st == 1 for st in strides) else strides)
    if rev_axes:
        result = lax.rev(result, rev_axes)
    if squeeze_axes:
        result = lax.squeeze(result, squeeze_axes)
    if newaxis:
        result = lax.expand_dims(result, newaxis)
    return result


def _dynamic_getitem(arr, idx: tuple, s: tuple[int, ...]):
    starts, sizes, rev_axes, squeeze_axes, newaxis = [], [], [], [], []
    axis = 0
    for i in idx:
        if i is None:
            newaxis.append(len(starts) - len(squeeze_axes) + len(newaxis))
            continue
        if _is_int_index(i) or isinstance(i, Tracer):
            starts.append(i)
            sizes.append(1)
            squeeze_axes.append(axis)
        elif isinstance(i, slice):
            start, stop, step = i.indices(s[axis])
            if step not in (1, -1):
                raise NotImplementedError("a traced index combined with a strided slice (step not ±1)")
            if step < 0:
                new_start = stop + 1
                starts.append(new_start)
                sizes.append(_python_max(0, start + 1 - new_start))
                rev_axes.append(axis)
            else:
                starts.append(start)
                sizes.append(_python_max(0, stop - start))
        else:
            raise TypeError(f"unsupported index {i!r} of type {type(i).__name__}")
        axis += 1
    if len(starts) > 1:
        starts = [_convert(i, int32) if not isinstance(i, Tracer) else lax.convert_element_type(i, int32)
                  for i in starts]
    result = lax.dynamic_slice(arr, starts, sizes)
    if rev_axes:
        result = lax.rev(result, rev_axes)
    if squeeze_axes:
        result = lax.squeeze(result, squeeze_axes)
    if newaxis:
        result = lax.expand_dims(result, newaxis)
    return result

