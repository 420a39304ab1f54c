"""Equations written as one NumPy expression in generated code, where that computes exactly what the
equation's implementation in `eval/impls` computes (the same NumPy calls on the same dtypes, without
the implementation's dispatch, widening and re-casting, which are no-ops for these dtypes).

`inline_op(eqn)` returns an `Op` or None (then the implementation is called). An `Op` is
- `ufunc`: one NumPy ufunc call on the operands; it allocates a fresh result in the layout of its
  operands (NumPy's order "K"), and can write into a dead operand's buffer through `out=`;
- `expr`: another expression allocating a fresh result in the layout of its operands (`where`, `astype`);
- `fresh`: an expression allocating a fresh C-contiguous result (reductions, matmul, broadcasts);
- `view`: an expression that may return a view of operand 0 (reshape, transpose, squeeze).

Every rule here is checked bit for bit against the implementation by tests/eval/test_codegen.py
(each primitive on special values, every oracle case, and random programs).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ir.core import Eqn, Literal
from ir.params import as_ints

UFUNC, EXPR, FRESH, VIEW = "ufunc", "expr", "fresh", "view"


@dataclass(frozen=True)
class Op:
    kind: str  # UFUNC, EXPR, FRESH or VIEW
    template: str  # a format string over the operands {0}, {1}, ... and constants named by `consts`
    consts: tuple = ()  # values the template names as {c0}, {c1}, ...: bound as globals of the program
    ufunc: str = ""  # a UFUNC's function (a reduction's ufunc), as the template calls it
    operator: str = ""  # the same computation on NumPy scalars as a Python operator ("{0} + {1}")
    axes: tuple[int, ...] | None = None  # a reduction's axes
    keeps_c: bool = True  # a VIEW of a C-contiguous operand is C-contiguous
    permutes: bool = False  # a VIEW that permutes the axes of its operand (of a dense operand: dense)
    needs_dense: bool = False  # valid only on dense operands (the emitter calls the implementation else)


_NARROW = ("f16", "bf16")
_FLOAT = ("f32", "f64")
_INEXACT = ("f32", "f64", "c64", "c128")


def _dt(eqn: Eqn, i: int = 0) -> str:
    return eqn.invars[i].aval.dtype.short


def _out_dt(eqn: Eqn) -> str:
    return eqn.outvars[0].aval.dtype.short


def _only_params(eqn: Eqn, *names: str) -> bool:
    """The equation has no params but these ignorable ones (`accuracy` of newer JAX is met by NumPy)."""
    return all(k in names and (k != "accuracy" or v is None) for k, v in eqn.params.items())


# NumPy's scalar operators compute these as the ufuncs do, at a tenth of the cost. Not + - * /: with two
# NaN operands the scalar code may return the other one (its sign and payload), where the ufunc loop
# returns the first.
_OPERATORS = {"_np.negative": "(-{0})", "_np.equal": "({0} == {1})", "_np.not_equal": "({0} != {1})",
              "_np.less": "({0} < {1})", "_np.less_equal": "({0} <= {1})", "_np.greater": "({0} > {1})",
              "_np.greater_equal": "({0} >= {1})"}


def _ufunc(fn: str, n: int) -> Op:
    return Op(UFUNC, f"{fn}({', '.join('{' + str(i) + '}' for i in range(n))})", ufunc=fn,
              operator=_OPERATORS.get(fn, ""))


Rule = Callable[[Eqn], "Op | None"]
RULES: dict[str, Rule] = {}


def _rule(*names: str):
    def register(fn: Rule) -> Rule:
        for name in names:
            RULES[name] = fn
        return fn
    return register


def inline_op(eqn: Eqn) -> Op | None:
    """The inline form of `eqn`, or None when its implementation must be called."""
    if any(x.aval.dtype.kind == "key" for x in (*eqn.invars, *eqn.outvars)):
        return None
    rule = RULES.get(eqn.primitive)
    return rule(eqn) if rule is not None else None


# --- elementwise maps (eval/impls/elementwise.py `_map`: fn on the operands, same dtype out) --------------

_INEXACT_UNARY = {
    "sin": "_np.sin", "cos": "_np.cos", "tan": "_np.tan", "asin": "_np.arcsin", "acos": "_np.arccos",
    "atan": "_np.arctan", "sinh": "_np.sinh", "cosh": "_np.cosh", "tanh": "_np.tanh", "asinh": "_np.arcsinh",
    "acosh": "_np.arccosh", "atanh": "_np.arctanh", "exp": "_np.exp", "exp2": "_np.exp2", "expm1": "_np.expm1",
    "log": "_np.log", "log1p": "_np.log1p", "sqrt": "_np.sqrt",
}
_FLOAT_MAPS = {"cbrt": "_np.cbrt", "floor": "_np.floor", "ceil": "_np.ceil", "logistic": "_expit",
                "abs": "_np.abs", "atan2": "_np.arctan2", "rem": "_np.fmod"}
_ANY_UNARY = {"neg": "_np.negative", "square": "_np.square"}  # every non-narrow dtype, integers included
_ARITH = {"add": "_np.add", "add_any": "_np.add", "sub": "_np.subtract", "mul": "_np.multiply"}
_COMPARE = {"eq": "_np.equal", "ne": "_np.not_equal", "lt": "_np.less", "le": "_np.less_equal",
            "gt": "_np.greater", "ge": "_np.greater_equal"}
_BITWISE = {"and": "_np.bitwise_and", "or": "_np.bitwise_or", "xor": "_np.bitwise_xor", "not": "_np.invert"}


@_rule(*_INEXACT_UNARY, *_FLOAT_MAPS, *_ANY_UNARY, *_ARITH, *_BITWISE, "div", "max", "min", "rsqrt",
       "is_finite", *_COMPARE)
def _elementwise(eqn: Eqn) -> Op | None:
    name, dt, n = eqn.primitive, _dt(eqn), len(eqn.invars)
    if not _only_params(eqn, "accuracy"):
        return None
    if name in _COMPARE:  # `_compare`: no widening, bool out, every dtype
        return _ufunc(_COMPARE[name], n)
    if dt in _NARROW:
        return None
    if name in _INEXACT_UNARY and dt in _INEXACT:
        return _ufunc(_INEXACT_UNARY[name], n)
    if name in _FLOAT_MAPS and dt in _FLOAT:
        return _ufunc(_FLOAT_MAPS[name], n)
    if name in _ANY_UNARY or name in _ARITH:
        return _ufunc({**_ANY_UNARY, **_ARITH}[name], n)
    if name in _BITWISE and dt[0] in "biu":
        return _ufunc(_BITWISE[name], n)
    if name == "abs" and dt[0] in "iu":
        return _ufunc("_np.abs", n)
    if name == "div" and dt in _INEXACT:
        return _ufunc("_np.true_divide", n)
    if name == "rsqrt" and dt in _INEXACT:  # 1 / np.sqrt(x): the weak 1 takes x's dtype
        return Op(EXPR, "1 / _np.sqrt({0})")
    if name == "is_finite":
        return _ufunc("_np.isfinite", n)
    if name in ("max", "min"):
        return _max_min(eqn, name, dt)
    return None


def _max_min(eqn: Eqn, name: str, dt: str) -> Op | None:
    """Integers: np.maximum/np.minimum. Floats against a literal +0 on either side (relu): XLA's
    max(x, +0) is +0 for x <= 0 (-0 included) and x otherwise (nan included): one `where`, the same
    values as `_max`."""
    if dt[0] in "biu":
        return _ufunc("_np.maximum" if name == "max" else "_np.minimum", 2)
    if dt not in _FLOAT:
        return None
    for x, zero in ((0, 1), (1, 0)):  # XLA's max and min treat their operands alike
        y = eqn.invars[zero]
        if isinstance(y, Literal) and float(y.value) == 0.0 and not _signbit(y.value):
            test = f"{{{x}}} <= 0" if name == "max" else f"{{{x}}} > 0"  # min(x, +0): +0 for x > 0, else x
            return Op(EXPR, f"_np.where({test}, {{{zero}}}, {{{x}}})")
    return None


def _signbit(value) -> bool:
    return math.copysign(1.0, float(value)) < 0


@_rule("integer_pow")
def _integer_pow(eqn: Eqn) -> Op | None:
    """The implementation's repeated squaring, spelled out (so rounding and wrapping are the same)."""
    y, dt = int(eqn.params["y"]), _dt(eqn)
    if dt in _NARROW or y in (0, 1) or (y < 0 and dt[0] in "iub") or abs(y) > 64:
        return None
    base, acc, n = "{0}", None, abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else f"({acc} * {base})"
        n >>= 1
        if n:
            base = f"({base} * {base})"
    return Op(EXPR, acc if y > 0 else f"(1 / {acc})")


@_rule("select_n")
def _select_n(eqn: Eqn) -> Op | None:
    """which ? case1 : case0 for a boolean predicate and two cases (`select_n` does np.where)."""
    if len(eqn.invars) != 3 or _dt(eqn) != "bool" or _dt(eqn, 1) in _NARROW:
        return None
    return Op(EXPR, "_np.where({0}, {2}, {1})")


@_rule("convert_element_type")
def _convert(eqn: Eqn) -> Op | None:
    """x.astype(to) where the implementation does just that (no bool target, no float -> int saturation,
    no complex -> real, no bfloat16)."""
    src, to = _dt(eqn), _out_dt(eqn)
    if to in ("bool", "bf16") or src == "bf16" or (src[0] in "fb" and src != "bool" and to[0] in "iu"):
        return None
    if src[0] == "c" and to[0] != "c":
        return None
    if src in ("f16",) and to[0] in "iu":
        return None
    return Op(EXPR, "{0}.astype({c0})", consts=(eqn.outvars[0].aval.dtype.numpy,))


_MONOID = {"reduce_sum": "add", "reduce_prod": "multiply", "reduce_max": "maximum", "reduce_min": "minimum",
           "reduce_and": "bitwise_and", "reduce_or": "bitwise_or", "reduce_xor": "bitwise_xor"}


@_rule(*_MONOID)
def _reduce(eqn: Eqn) -> Op | None:
    """ufunc.reduce(x, axis, dtype, initial=identity), as `_reduce_monoid` for non-narrow dtypes."""
    from eval.impls.reductions import _check_monoid_dtype, _identity

    dt = eqn.invars[0].aval.dtype
    if dt.short in _NARROW or not _only_params(eqn, "axes", "out_sharding"):
        return None
    name = eqn.primitive.removeprefix("reduce_")
    try:
        _check_monoid_dtype(eqn.primitive, name, dt.numpy)
    except (TypeError, NotImplementedError):
        return None  # the implementation raises the error
    axes = as_ints(eqn.params["axes"])
    ufunc = f"_np.{_MONOID[eqn.primitive]}"
    return Op(FRESH, f"{ufunc}.reduce({{0}}, axis={axes!r}, dtype={{c0}}, initial={{c1}})", ufunc=ufunc, axes=axes,
              consts=(dt.numpy, _identity(name, dt.numpy)))


@_rule("dot_general")
def _dot_general(eqn: Eqn) -> Op | None:
    """The implementation's matmul without its copies. The implementation copies each transposed operand
    in order "K", which for a dense operand (C order or a permutation of it) keeps its strides: on dense
    operands `matmul` then sees the same layouts and gives the same bits. Floating dtypes whose work dtype
    is their own."""
    from eval.impls.dot_conv import _dimension_numbers, _free_dims

    lhs, rhs = (x.aval for x in eqn.invars)
    out = eqn.outvars[0].aval
    if lhs.dtype != rhs.dtype or lhs.dtype.short not in _INEXACT or out.dtype != lhs.dtype:
        return None
    lc, rc, lb, rb = _dimension_numbers(eqn.params["dimension_numbers"])
    lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
    batch = tuple(lhs.shape[d] for d in lb)
    k = math.prod(lhs.shape[d] for d in lc)
    m, n = math.prod(lhs.shape[d] for d in lf), math.prod(rhs.shape[d] for d in rf)
    a = _permuted("{0}", lhs.shape, (*lb, *lf, *lc), batch + (m, k))
    b = _permuted("{1}", rhs.shape, (*rb, *rc, *rf), batch + (k, n))
    text = f"_np.matmul({a}, {b})"
    if batch + (m, n) != out.shape:
        text = f"{text}.reshape({out.shape!r})"
    return Op(FRESH, text, needs_dense=True)


def _permuted(operand: str, shape: tuple[int, ...], perm: tuple[int, ...], to: tuple[int, ...]) -> str:
    """`np.transpose(x, perm).reshape(to)` for x of `shape`, leaving out the steps that are identities."""
    if perm != tuple(range(len(perm))):
        operand = f"_np.transpose({operand}, {perm!r})"
        shape = tuple(shape[d] for d in perm)
    return operand if shape == to else f"{operand}.reshape({to!r})"


@_rule("reshape")
def _reshape(eqn: Eqn) -> Op | None:
    if eqn.params.get("dimensions") is not None or len(eqn.invars) != 1:
        return None
    return Op(VIEW, f"_np.reshape({{0}}, {as_ints(eqn.params['new_sizes'])!r})")


@_rule("transpose")
def _transpose(eqn: Eqn) -> Op | None:
    perm = as_ints(eqn.params["permutation"])
    return Op(VIEW, f"_np.transpose({{0}}, {perm!r})", keeps_c=perm == tuple(range(len(perm))), permutes=True)


@_rule("squeeze")
def _squeeze(eqn: Eqn) -> Op | None:
    return Op(VIEW, f"_np.squeeze({{0}}, axis={as_ints(eqn.params['dimensions'])!r})")


@_rule("broadcast_in_dim")
def _broadcast(eqn: Eqn) -> Op | None:
    """The implementation's copy of the broadcast (`eval.impls.arrays.broadcast_copy`)."""
    if len(eqn.invars) != 1:
        return None
    shape = as_ints(eqn.params["shape"])
    kept = [1] * len(shape)
    for d, n in zip(as_ints(eqn.params["broadcast_dimensions"]), eqn.invars[0].aval.shape, strict=True):
        kept[d] = n
    return Op(FRESH, f"_broadcast_copy({{0}}, {tuple(kept)!r}, {shape!r})")


@_rule("slice")
def _slice(eqn: Eqn) -> Op | None:
    """`x[start:limit:step, ...]`, the view the implementation returns."""
    x = eqn.invars[0].aval
    starts, limits = as_ints(eqn.params["start_indices"]), as_ints(eqn.params["limit_indices"])
    steps = as_ints(eqn.params.get("strides")) or (1,) * x.ndim
    index = ", ".join(f"{a}:{b}" + (f":{c}" if c != 1 else "") for a, b, c in zip(starts, limits, steps, strict=True))
    full_after_first = all(a == 0 and b == n for a, b, n in zip(starts[1:], limits[1:], x.shape[1:], strict=True))
    return Op(VIEW, f"{{0}}[{index}{',' if x.ndim == 1 else ''}]", keeps_c=full_after_first and set(steps) <= {1})


@_rule("pow")
def _pow(eqn: Eqn) -> Op | None:
    """float64 and complex128 (which the implementation does not widen): np.power on operands made full
    and contiguous, as the implementation makes them (`eval.codegen.runtime.power`)."""
    if _dt(eqn) not in ("f64", "c128") or _dt(eqn, 1) != _dt(eqn) or not _only_params(eqn, "accuracy"):
        return None
    return Op(FRESH, f"_power({{0}}, {{1}}, {eqn.outvars[0].aval.shape!r})")
