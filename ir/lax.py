"""A `jax.lax`-like namespace: one thin function per primitive, binding it in the current trace.

Params are what the jaxpr parser (`ir.text`) produces for the same printed equation: the printed
params plus the hidden ones it restores (`broadcast_in_dim`'s `shape`/`sharding`, `dot_general`'s
`out_sharding` and None-valued `precision`/`preferred_element_type`), so a traced and a parsed
jaxpr compare equal. (JAX also keeps a hidden `sharding=None` on `convert_element_type`; eqjax,
like the parser, leaves it out.) Param dicts are in sorted key order, the order JAX prints them.
Values follow `ir.params`: dtypes are `DType`s, enum
members are `Symbol`s, dimension-number records are `Record`s.

A Python scalar operand next to a traced one takes the traced operand's dtype as a weak-typed
literal (`lax.mul(x, 2.0)` with x:f32 gives `mul x 2.0:f32[]`); otherwise lax does no promotion.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from ir import dtypes
from ir.core import ClosedJaxpr, ShapedArray
from ir.params import Opaque, Record, Symbol
from ir.tracing import Tracer, aval_of, bind, literal, trace_flat


def _params(**kw) -> dict:
    return dict(sorted(kw.items()))


def to_dtype(dt: Any) -> dtypes.DType:
    """A `DType` from a DType, a NumPy dtype or type, or a dtype name (`"float32"`, `"f32"`)."""
    if isinstance(dt, dtypes.DType):
        return dt
    if isinstance(dt, str):
        if dt in dtypes.BY_NAME:
            return dtypes.BY_NAME[dt]
        if dt in dtypes.BY_SHORT:
            return dtypes.BY_SHORT[dt]
    if dt is float:
        return dtypes.float64
    if dt is int:
        return dtypes.int64
    if dt is builtins.complex:
        return dtypes.complex128
    if dt is bool:
        return dtypes.bool_
    try:
        return dtypes.from_numpy(dt)
    except KeyError:
        raise TypeError(f"not a dtype: {dt!r}") from None


def _is_python_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, builtins.complex)) and not isinstance(x, np.generic)


def _coerce_scalars(*args: Any) -> list[Any]:
    """Python scalars become weak literals of the first non-Python-scalar operand's dtype."""
    ref = next((a for a in args if not _is_python_scalar(a)), None)
    if ref is None:
        return list(args)
    dt = aval_of(ref).dtype
    return [literal(a, dt, weak_type=True) if _is_python_scalar(a) else a for a in args]


# --- elementwise -------------------------------------------------------------------------------

def _unary(name: str, x):
    return bind(name, x)


def _binary(name: str, x, y):
    return bind(name, *_coerce_scalars(x, y))


neg = partial(_unary, "neg")
sign = partial(_unary, "sign")
floor = partial(_unary, "floor")
ceil = partial(_unary, "ceil")
is_finite = partial(_unary, "is_finite")
exp = partial(_unary, "exp")
exp2 = partial(_unary, "exp2")
log = partial(_unary, "log")
log1p = partial(_unary, "log1p")
expm1 = partial(_unary, "expm1")
tanh = partial(_unary, "tanh")
logistic = partial(_unary, "logistic")
sin = partial(_unary, "sin")
cos = partial(_unary, "cos")
tan = partial(_unary, "tan")
asin = partial(_unary, "asin")
acos = partial(_unary, "acos")
atan = partial(_unary, "atan")
sinh = partial(_unary, "sinh")
cosh = partial(_unary, "cosh")
asinh = partial(_unary, "asinh")
acosh = partial(_unary, "acosh")
atanh = partial(_unary, "atanh")
sqrt = partial(_unary, "sqrt")
rsqrt = partial(_unary, "rsqrt")
cbrt = partial(_unary, "cbrt")
square = partial(_unary, "square")
abs = partial(_unary, "abs")  # noqa: A001  (jax.lax's name)
lgamma = partial(_unary, "lgamma")
digamma = partial(_unary, "digamma")
erf = partial(_unary, "erf")
erfc = partial(_unary, "erfc")
erf_inv = partial(_unary, "erf_inv")
bessel_i0e = partial(_unary, "bessel_i0e")
bessel_i1e = partial(_unary, "bessel_i1e")
real = partial(_unary, "real")
imag = partial(_unary, "imag")
bitwise_not = partial(_unary, "not")
population_count = partial(_unary, "population_count")
clz = partial(_unary, "clz")
stop_gradient = partial(_unary, "stop_gradient")
copy = partial(_unary, "copy")

add = partial(_binary, "add")
sub = partial(_binary, "sub")
mul = partial(_binary, "mul")
div = partial(_binary, "div")
rem = partial(_binary, "rem")
pow = partial(_binary, "pow")  # noqa: A001
max = partial(_binary, "max")  # noqa: A001
min = partial(_binary, "min")  # noqa: A001
atan2 = partial(_binary, "atan2")
nextafter = partial(_binary, "nextafter")
complex = partial(_binary, "complex")  # noqa: A001
igamma = partial(_binary, "igamma")
igammac = partial(_binary, "igammac")
zeta = partial(_binary, "zeta")
polygamma = partial(_binary, "polygamma")
random_gamma_grad = partial(_binary, "random_gamma_grad")
eq = partial(_binary, "eq")
ne = partial(_binary, "ne")
lt = partial(_binary, "lt")
le = partial(_binary, "le")
gt = partial(_binary, "gt")
ge = partial(_binary, "ge")
eq_to = partial(_binary, "eq_to")
le_to = partial(_binary, "le_to")
lt_to = partial(_binary, "lt_to")
bitwise_and = partial(_binary, "and")
bitwise_or = partial(_binary, "or")
bitwise_xor = partial(_binary, "xor")
shift_left = partial(_binary, "shift_left")
shift_right_arithmetic = partial(_binary, "shift_right_arithmetic")
shift_right_logical = partial(_binary, "shift_right_logical")


def betainc(a, b, x):
    return bind("regularized_incomplete_beta", *_coerce_scalars(a, b, x))


def round(x, rounding_method: int = 0):  # noqa: A001
    """`rounding_method` 0 rounds half away from zero, 1 to nearest even (JAX's RoundingMethod)."""
    return bind("round", x, rounding_method=int(rounding_method))


def conj(x):
    return bind("conj", x, **_params(input_dtype=aval_of(x).dtype))


def integer_pow(x, y: int):
    return bind("integer_pow", x, y=int(y))


def reduce_precision(x, exponent_bits: int, mantissa_bits: int):
    return bind("reduce_precision", x, **_params(exponent_bits=int(exponent_bits),
                                                 mantissa_bits=int(mantissa_bits)))


def convert_element_type(x, new_dtype, weak_type: bool = False):
    """Convert to `new_dtype`. Python and NumPy scalars are converted at trace time (a literal)."""
    new_dtype = to_dtype(new_dtype)
    if not isinstance(x, Tracer) and np.ndim(x) == 0:
        return literal(x, new_dtype, weak_type)
    if not isinstance(x, Tracer):
        return np.asarray(x).astype(new_dtype.numpy)
    if (x.dtype, x.weak_type) == (new_dtype, bool(weak_type)):
        return x
    return bind("convert_element_type", x, **_params(new_dtype=new_dtype, sharding=None, weak_type=bool(weak_type)))


def bitcast_convert_type(x, new_dtype):
    return bind("bitcast_convert_type", x, new_dtype=to_dtype(new_dtype))


def select_n(which, *cases):
    if not cases:
        raise ValueError("select_n needs at least one case")
    return bind("select_n", which, *_coerce_scalars(*cases))


def select(pred, on_true, on_false):
    """`on_true` where `pred` else `on_false` (select_n takes the cases in the opposite order)."""
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002
    return bind("clamp", *_coerce_scalars(min, x, max))


# --- shapes ------------------------------------------------------------------------------------

def _canon_axis(axis: int, ndim: int) -> int:
    axis = int(axis)
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim if ndim else 0


def iota(dtype, size: int):
    return broadcasted_iota(dtype, (int(size),), 0)


def broadcasted_iota(dtype, shape: Sequence[int], dimension: int):
    shape = tuple(int(d) for d in shape)
    return bind("iota", **_params(dimension=_canon_axis(dimension, len(shape)), dtype=to_dtype(dtype),
                                  shape=shape, sharding=None))


def reshape(operand, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None):
    """Reshape; `dimensions` first transposes the operand (printed as JAX's `dimensions=`)."""
    aval = aval_of(operand)
    new_sizes = tuple(int(d) for d in new_sizes)
    dims = None if dimensions is None else tuple(int(d) for d in dimensions)
    same_dims = dims is None or dims == tuple(range(aval.ndim))
    if isinstance(operand, Tracer) and aval.shape and new_sizes == aval.shape and same_dims:
        return operand
    return bind("reshape", operand, **_params(dimensions=None if same_dims else dims,
                                              new_sizes=new_sizes, sharding=None))


def transpose(operand, permutation: Sequence[int]):
    permutation = tuple(int(d) for d in permutation)
    if isinstance(operand, Tracer) and permutation == tuple(range(operand.ndim)):
        return operand
    return bind("transpose", operand, permutation=permutation)


def broadcast_in_dim(operand, shape: Sequence[int], broadcast_dimensions: Sequence[int]):
    shape = tuple(int(d) for d in shape)
    bdims = tuple(int(d) for d in broadcast_dimensions)
    if isinstance(operand, Tracer) and operand.ndim == len(shape) and not bdims:
        return operand
    return bind("broadcast_in_dim", operand, **_params(broadcast_dimensions=bdims, shape=shape,
                                                       sharding=None))


def broadcast(operand, sizes: Sequence[int]):
    """Add leading dimensions of the given sizes."""
    aval = aval_of(operand)
    sizes = tuple(int(d) for d in sizes)
    return broadcast_in_dim(operand, sizes + aval.shape, tuple(range(len(sizes), len(sizes) + aval.ndim)))


def broadcast_to_rank(x, rank: int):
    ndim = aval_of(x).ndim
    return x if ndim == rank else broadcast(x, (1,) * (rank - ndim))


def expand_dims(x, dimensions: Sequence[int]):
    """Insert size-1 dimensions at `dimensions` (positions in the result), via broadcast_in_dim."""
    aval = aval_of(x)
    ndim_out = aval.ndim + len(dimensions)
    dims = sorted(_canon_axis(d, ndim_out) for d in dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in expand_dims: {dimensions}")
    shape = list(aval.shape)
    for d in dims:
        shape.insert(d, 1)
    kept = tuple(i for i in range(ndim_out) if i not in dims)
    return broadcast_in_dim(x, shape, kept)


def squeeze(array, dimensions: Sequence[int]):
    ndim = aval_of(array).ndim
    dims = tuple(sorted(_canon_axis(d, ndim) for d in dimensions))
    if not dims and isinstance(array, Tracer):
        return array
    return bind("squeeze", array, dimensions=dims)


def concatenate(operands: Sequence[Any], dimension: int):
    operands = list(operands)
    if not operands:
        raise ValueError("concatenate needs at least one operand")
    if len(operands) == 1 and isinstance(operands[0], Tracer):
        return operands[0]
    ndim = aval_of(operands[0]).ndim
    return bind("concatenate", *operands, dimension=_canon_axis(dimension, ndim))


def pad(operand, padding_value, padding_config: Sequence[tuple[int, int, int]]):
    config = tuple(tuple(c) for c in padding_config)
    return bind("pad", *_coerce_scalars(operand, padding_value), padding_config=config)


def rev(operand, dimensions: Sequence[int]):
    return bind("rev", operand, dimensions=tuple(int(d) for d in dimensions))


def split(operand, sizes: Sequence[int], axis: int = 0):
    ndim = aval_of(operand).ndim
    return list(bind("split", operand, **_params(axis=_canon_axis(axis, ndim),
                                                  sizes=tuple(int(s) for s in sizes))))


def tile(operand, reps: Sequence[int]):
    return bind("tile", operand, reps=tuple(int(r) for r in reps))


def stack(operands: Sequence[Any], axis: int = 0):
    operands = list(operands)
    ndim = aval_of(operands[0]).ndim + 1
    return bind("stack", *operands, axis=_canon_axis(axis, ndim))


def device_put(x):
    out = bind("device_put", x, **_params(copy_semantics=(Symbol("ArrayCopySemantics.REUSE_INPUT"),),
                                          devices=(None,), srcs=(None,)))
    return out[0] if isinstance(out, list) else out


def full(shape: Sequence[int], fill_value, dtype=None):
    """An array of `shape` filled with a scalar (broadcast_in_dim of a literal, as in JAX)."""
    shape = tuple(int(d) for d in shape)
    if np.ndim(fill_value) != 0:
        raise ValueError("full: fill_value must be a scalar")
    if dtype is None:
        value = fill_value if isinstance(fill_value, Tracer) else literal(fill_value)
    else:
        value = convert_element_type(fill_value, dtype, False)
    return broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape=None):
    aval = aval_of(x)
    dt = aval.dtype if dtype is None else to_dtype(dtype)
    weak = dtype is None and aval.weak_type
    value = convert_element_type(fill_value, dt, weak)
    return broadcast_in_dim(value, aval.shape if shape is None else shape, ())


# --- slicing and indexing ----------------------------------------------------------------------

def slice(operand, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None):
    return bind("slice", operand, **_params(
        limit_indices=tuple(int(i) for i in limit_indices),
        start_indices=tuple(int(i) for i in start_indices),
        strides=None if strides is None else tuple(int(s) for s in strides)))


def slice_in_dim(operand, start_index: int | None, limit_index: int | None, stride: int = 1, axis: int = 0):
    shape = aval_of(operand).shape
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    axis = _canon_axis(axis, len(shape))
    size = shape[axis]
    starts[axis] = 0 if start_index is None else int(start_index) % size if start_index < 0 else start_index
    limits[axis] = size if limit_index is None else (limit_index + size if limit_index < 0 else limit_index)
    strides[axis] = stride
    return slice(operand, starts, limits, None if stride == 1 else strides)


def _index_dtype(indices: Sequence[Any]) -> dtypes.DType:
    traced = [aval_of(i).dtype for i in indices if not _is_python_scalar(i) and not isinstance(i, np.integer)]
    return dtypes.result_type(*traced) if traced else dtypes.int64


def _dynamic_slice_indices(shape: tuple[int, ...], start_indices: Sequence[Any],
                           allow_negative_indices: bool | Sequence[bool] = True) -> list[Any]:
    """Static ints become literals; traced indices get `select_n(i < 0, i, i + size)` as in JAX."""
    if len(start_indices) != len(shape):
        raise ValueError(f"{len(start_indices)} start indices for an operand of rank {len(shape)}")
    if isinstance(allow_negative_indices, bool):
        allow_negative_indices = [allow_negative_indices] * len(shape)
    dt = _index_dtype(start_indices)
    out = []
    for i, d, allow_negative in zip(start_indices, shape, allow_negative_indices, strict=True):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            out.append(literal(int(i) + d if i < 0 and allow_negative else int(i), dt, False))
            continue
        aval = aval_of(i)
        if aval.shape != () or not aval.dtype.is_integer:
            raise TypeError(f"dynamic index must be an integer scalar, got {aval}")
        if aval.dtype.kind == "u" or not allow_negative:
            out.append(i)
        else:
            out.append(select(lt(i, 0), add(i, d), i))
    return out


def dynamic_slice(operand, start_indices: Sequence[Any], slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True):
    shape = aval_of(operand).shape
    starts = _dynamic_slice_indices(shape, list(start_indices), allow_negative_indices)
    return bind("dynamic_slice", operand, *starts, slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(operand, update, start_indices: Sequence[Any], *,
                         allow_negative_indices: bool | Sequence[bool] = True):
    shape = aval_of(operand).shape
    starts = _dynamic_slice_indices(shape, list(start_indices), allow_negative_indices)
    return bind("dynamic_update_slice", operand, update, *starts)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True):
    shape = aval_of(operand).shape
    axis = _canon_axis(axis, len(shape))
    starts = [0] * len(shape)
    starts[axis] = index
    sizes = list(shape)
    sizes[axis] = 1
    out = dynamic_slice(operand, starts, sizes)
    return out if keepdims else squeeze(out, (axis,))


class GatherScatterMode:
    """The mode symbols as JAX prints them."""

    CLIP = Symbol("GatherScatterMode.CLIP")
    FILL_OR_DROP = Symbol("GatherScatterMode.FILL_OR_DROP")
    PROMISE_IN_BOUNDS = Symbol("GatherScatterMode.PROMISE_IN_BOUNDS")
    ONE_HOT = Symbol("GatherScatterMode.ONE_HOT")

    @classmethod
    def from_any(cls, mode) -> Symbol:
        if mode is None:
            return cls.FILL_OR_DROP
        if isinstance(mode, Symbol):
            return mode
        names = {"clip": cls.CLIP, "fill": cls.FILL_OR_DROP, "drop": cls.FILL_OR_DROP,
                 "promise_in_bounds": cls.PROMISE_IN_BOUNDS, "one_hot": cls.ONE_HOT}
        try:
            return names[str(mode).lower()]
        except KeyError:
            raise ValueError(f"unknown gather/scatter mode {mode!r}") from None


def GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(), start_index_map=(),  # noqa: N802
                           operand_batching_dims=(), start_indices_batching_dims=()) -> Record:
    return Record("GatherDimensionNumbers", (
        ("offset_dims", tuple(offset_dims)), ("collapsed_slice_dims", tuple(collapsed_slice_dims)),
        ("start_index_map", tuple(start_index_map)), ("operand_batching_dims", tuple(operand_batching_dims)),
        ("start_indices_batching_dims", tuple(start_indices_batching_dims))))


def ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(),  # noqa: N802
                            scatter_dims_to_operand_dims=(), operand_batching_dims=(),
                            scatter_indices_batching_dims=()) -> Record:
    return Record("ScatterDimensionNumbers", (
        ("update_window_dims", tuple(update_window_dims)),
        ("inserted_window_dims", tuple(inserted_window_dims)),
        ("scatter_dims_to_operand_dims", tuple(scatter_dims_to_operand_dims)),
        ("operand_batching_dims", tuple(operand_batching_dims)),
        ("scatter_indices_batching_dims", tuple(scatter_indices_batching_dims))))


def gather(operand, start_indices, dimension_numbers: Record, slice_sizes: Sequence[int], *,
           unique_indices: bool = False, indices_are_sorted: bool = False, mode=None, fill_value=None):
    return bind("gather", operand, start_indices, **_params(
        dimension_numbers=dimension_numbers, fill_value=fill_value,
        indices_are_sorted=bool(indices_are_sorted), mode=GatherScatterMode.from_any(mode),
        slice_sizes=tuple(int(s) for s in slice_sizes), unique_indices=bool(unique_indices)))


def _scalar_jaxpr(fn: Callable, dtype: dtypes.DType, n: int = 2) -> ClosedJaxpr:
    closed, _ = trace_flat(fn, [ShapedArray((), dtype)] * n)
    return closed


def _scatter(name: str, combine: Callable | None, operand, scatter_indices, updates,
             dimension_numbers: Record, *, indices_are_sorted: bool = False,
             unique_indices: bool = False, mode=None):
    dt = aval_of(operand).dtype
    update_jaxpr = None if combine is None else _scalar_jaxpr(combine, dt)
    return bind(name, operand, scatter_indices, updates, **_params(
        dimension_numbers=dimension_numbers, indices_are_sorted=bool(indices_are_sorted),
        mode=GatherScatterMode.from_any(mode), unique_indices=bool(unique_indices),
        update_consts=(), update_jaxpr=update_jaxpr))


scatter = partial(_scatter, "scatter", None)
scatter_add = partial(_scatter, "scatter-add", lambda a, b: add(a, b))
scatter_mul = partial(_scatter, "scatter-mul", lambda a, b: mul(a, b))
scatter_min = partial(_scatter, "scatter-min", lambda a, b: min(a, b))
scatter_max = partial(_scatter, "scatter-max", lambda a, b: max(a, b))


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort one array, or a sequence of arrays by the first `num_keys` of them (a tuple back)."""
    single = not isinstance(operand, (list, tuple))
    operands = [operand] if single else list(operand)
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"num_keys={num_keys} must be between 1 and {len(operands)}")
    dim = _canon_axis(dimension, aval_of(operands[0]).ndim)
    outs = bind("sort", *operands,
                **_params(dimension=dim, is_stable=bool(is_stable), num_keys=int(num_keys)))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    return sort((keys, values), dimension, is_stable, 1)


def top_k(operand, k: int, axis: int = -1):
    dim = _canon_axis(axis, aval_of(operand).ndim)
    if k < 0:
        raise ValueError(f"top_k: k must be nonnegative, got {k}")
    return tuple(bind("top_k", operand, **_params(axis=dim, k=int(k))))


def _approx_top_k(is_max_k: bool, operand, k: int, reduction_dimension: int = -1,
                  recall_target: float = 0.95, reduction_input_size_override: int = -1,
                  aggregate_to_topk: bool = True):
    return tuple(bind("approx_top_k", operand, **_params(
        aggregate_to_topk=bool(aggregate_to_topk), is_max_k=is_max_k, k=int(k),
        recall_target=float(recall_target), reduction_dimension=int(reduction_dimension),
        reduction_input_size_override=int(reduction_input_size_override))))


approx_max_k = partial(_approx_top_k, True)
approx_min_k = partial(_approx_top_k, False)


# --- reductions --------------------------------------------------------------------------------

def _axes(x, axes: Sequence[int]) -> tuple[int, ...]:
    ndim = aval_of(x).ndim
    return tuple(_canon_axis(a, ndim) for a in axes)


def reduce_sum(operand, axes: Sequence[int]):
    return bind("reduce_sum", operand, **_params(axes=_axes(operand, axes), out_sharding=None))


def _reduce(name: str, operand, axes: Sequence[int]):
    return bind(name, operand, axes=_axes(operand, axes))


reduce_max = partial(_reduce, "reduce_max")
reduce_min = partial(_reduce, "reduce_min")
reduce_prod = partial(_reduce, "reduce_prod")
reduce_and = partial(_reduce, "reduce_and")
reduce_or = partial(_reduce, "reduce_or")
reduce_xor = partial(_reduce, "reduce_xor")


def _arg_reduce(name: str, operand, axis: int, index_dtype):
    return bind(name, operand, **_params(axes=_axes(operand, (axis,)), index_dtype=to_dtype(index_dtype)))


argmax = partial(_arg_reduce, "argmax")
argmin = partial(_arg_reduce, "argmin")


def _identity(dt: dtypes.DType, op: str):
    """The identity of a monoid reducer for `dt`, as JAX's `_get_*_identity`."""
    npd = dt.numpy
    if op == "add" or op == "or" or op == "xor":
        return np.zeros((), npd)[()]
    if op == "mul":
        return np.ones((), npd)[()]
    if op == "and":
        return np.array(-1).astype(npd)[()]
    if dt.is_inexact:
        return np.array(-np.inf if op == "max" else np.inf, npd)[()]
    if dt.is_integer:
        info = np.iinfo(npd)
        return npd.type(info.min if op == "max" else info.max)
    return np.bool_(op == "min")


_MONOIDS = {"add": ("reduce_sum", "reduce_window_sum"), "mul": ("reduce_prod", None),
            "max": ("reduce_max", "reduce_window_max"), "min": ("reduce_min", "reduce_window_min"),
            "or": ("reduce_or", None), "and": ("reduce_and", None), "xor": ("reduce_xor", None)}


def _monoid(computation: Callable, init) -> str | None:
    """The monoid name when `computation` is a lax reducer and `init` its concrete identity."""
    ops = {add: "add", mul: "mul", max: "max", min: "min", bitwise_or: "or", bitwise_and: "and",
           bitwise_xor: "xor"}
    op = ops.get(computation)
    if op is None or isinstance(init, Tracer) or np.ndim(init) != 0:
        return None
    aval = aval_of(init)
    if op in ("or", "and", "xor") and not (aval.dtype.is_integer or aval.dtype.is_bool):
        return None
    value = init.value if hasattr(init, "value") else init
    return op if np.asarray(value) == _identity(aval.dtype, op) else None


def _opaque_function(fn: Callable) -> Opaque:
    return Opaque(f"<function {getattr(fn, '__qualname__', 'computation')} at 0xXXXXXXXXXXXX>")


def reduce(operands, init_values, computation: Callable, dimensions: Sequence[int]):
    """Variadic reduce; a known monoid (lax.add with 0, lax.max with -inf, ...) uses its primitive."""
    single = not isinstance(operands, (list, tuple))
    ops = [operands] if single else list(operands)
    inits = [init_values] if single else list(init_values)
    if len(ops) != len(inits):
        raise ValueError(f"reduce: {len(ops)} operands but {len(inits)} init values")
    if len(ops) == 1:
        op = _monoid(computation, inits[0])
        if op is not None:
            name = _MONOIDS[op][0]
            out = reduce_sum(ops[0], dimensions) if op == "add" else _reduce(name, ops[0], dimensions)
            return out if single else (out,)
    avals = [ShapedArray((), aval_of(o).dtype) for o in ops]

    def body(*xs):
        k = len(ops)
        out = computation(xs[0], xs[k]) if single else computation(tuple(xs[:k]), tuple(xs[k:]))
        return [out] if single else list(out)

    jaxpr, _ = trace_flat(body, avals * 2)
    inits = [i if isinstance(i, Tracer) else literal(i, a.dtype) for i, a in zip(inits, avals, strict=True)]
    outs = bind("reduce", *ops, *inits, **_params(
        computation=_opaque_function(computation), dimensions=_axes(ops[0], dimensions), jaxpr=jaxpr))
    return outs[0] if single else tuple(outs)


def _cumulative(name: str, operand, axis: int = 0, reverse: bool = False):
    axis = _canon_axis(axis, aval_of(operand).ndim)
    return bind(name, operand, **_params(axis=axis, reverse=bool(reverse)))


cumsum = partial(_cumulative, "cumsum")
cumprod = partial(_cumulative, "cumprod")
cummax = partial(_cumulative, "cummax")
cummin = partial(_cumulative, "cummin")
cumlogsumexp = partial(_cumulative, "cumlogsumexp")


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int], window_strides: Sequence[int],
                    padding: str) -> tuple[tuple[int, int], ...]:
    """Explicit (low, high) pads for 'SAME', 'SAME_LOWER' or 'VALID' padding (as jax.lax)."""
    kind = padding.upper()
    if kind == "VALID":
        return tuple((0, 0) for _ in in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"unknown padding {padding!r}: use 'SAME', 'SAME_LOWER', 'VALID' or explicit pairs")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides, strict=True):
        out = -(-n // s)
        total = builtins.max((out - 1) * s + w - n, 0)
        lo = total // 2 if kind == "SAME" else total - total // 2
        pads.append((lo, total - lo))
    return tuple(pads)


def reduce_window(operand, init_value, computation: Callable, window_dimensions: Sequence[int],
                  window_strides: Sequence[int], padding, base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None):
    shape = aval_of(operand).shape
    ones = (1,) * len(shape)
    window_dimensions = tuple(int(d) for d in window_dimensions)
    window_strides = tuple(int(s) for s in window_strides)
    if isinstance(padding, str):
        padding = padtype_to_pads(shape, window_dimensions, window_strides, padding)
    common = _params(base_dilation=tuple(base_dilation or ones), padding=tuple(tuple(p) for p in padding),
                     window_dilation=tuple(window_dilation or ones), window_dimensions=window_dimensions,
                     window_strides=window_strides)
    op = _monoid(computation, init_value)
    if op is not None and _MONOIDS[op][1] is not None:
        return bind(_MONOIDS[op][1], operand, **common)
    dt = aval_of(operand).dtype
    jaxpr = _scalar_jaxpr(lambda a, b: [computation(a, b)], dt)
    init = init_value if isinstance(init_value, Tracer) else literal(init_value, dt)
    return bind("reduce_window", operand, init, **_params(consts=(), jaxpr=jaxpr, **common))


# --- contractions ------------------------------------------------------------------------------

class Precision:
    DEFAULT = Symbol("Precision.DEFAULT")
    HIGH = Symbol("Precision.HIGH")
    HIGHEST = Symbol("Precision.HIGHEST")


def canonicalize_precision(precision) -> tuple[Symbol, Symbol] | None:
    if precision is None:
        return None
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        return tuple(_precision(p) for p in precision)
    p = _precision(precision)
    return (p, p)


def _precision(p) -> Symbol:
    if isinstance(p, Symbol):
        return p
    name = str(p).upper().removeprefix("PRECISION.")
    if name not in ("DEFAULT", "HIGH", "HIGHEST"):
        raise ValueError(f"unknown precision {p!r}")
    return getattr(Precision, name)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """`dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))`."""
    (lc, rc), (lb, rb) = dimension_numbers
    dn = (([int(d) for d in lc], [int(d) for d in rc]), ([int(d) for d in lb], [int(d) for d in rb]))
    pet = None if preferred_element_type is None else to_dtype(preferred_element_type)
    return bind("dot_general", lhs, rhs, **_params(
        dimension_numbers=dn, out_sharding=None, precision=canonicalize_precision(precision),
        preferred_element_type=pet))


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix products contracting the last axis of `lhs` with the first of `rhs`."""
    l_nd, r_nd = aval_of(lhs).ndim, aval_of(rhs).ndim
    if not (1 <= l_nd <= 2 and 1 <= r_nd <= 2):
        raise TypeError(f"lax.dot needs rank-1 or rank-2 operands, got ranks {l_nd} and {r_nd}")
    return dot_general(lhs, rhs, (((l_nd - 1,), (0,)), ((), ())), precision, preferred_element_type)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None, group_offset=None):
    """`lhs[m,k]`, `rhs[g,k,n]`, `group_sizes[g]` -> `[m,n]` (JAX's default ragged dimension numbers)."""
    dn = Record("RaggedDotDimensionNumbers", (
        ("dot_dimension_numbers", (((1,), (1,)), ((), ()))),
        ("lhs_ragged_dimensions", (0,)), ("rhs_group_dimensions", (0,))))
    pet = None if preferred_element_type is None else to_dtype(preferred_element_type)
    operands = [lhs, rhs, group_sizes] + ([] if group_offset is None else [group_offset])
    return bind("ragged_dot_general", *operands, **_params(
        group_offset=None, out_sharding=None, precision=canonicalize_precision(precision),
        preferred_element_type=pet, ragged_dot_dimension_numbers=dn))


def ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec) -> Record:  # noqa: N802
    return Record("ConvDimensionNumbers", (("lhs_spec", tuple(lhs_spec)), ("rhs_spec", tuple(rhs_spec)),
                                           ("out_spec", tuple(out_spec))))


def conv_dimension_numbers(ndim: int, dimension_numbers) -> Record:
    """A ConvDimensionNumbers record from None, a record, or three spec strings ('NHWC', 'HWIO', 'NHWC')."""
    if dimension_numbers is None:
        iota_ = tuple(range(ndim))
        return ConvDimensionNumbers(iota_, iota_, iota_)
    if isinstance(dimension_numbers, Record):
        return dimension_numbers
    lhs, rhs, out = dimension_numbers
    if not all(isinstance(s, str) for s in (lhs, rhs, out)):
        return ConvDimensionNumbers(lhs, rhs, out)
    if not len(lhs) == len(rhs) == len(out) == ndim:
        raise TypeError(f"conv dimension_numbers {dimension_numbers} do not match rank {ndim}")

    def perm(spec: str, pair: str) -> tuple[int, ...]:
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs:
            spatial = sorted(spatial, key=lambda i: rhs.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

    return ConvDimensionNumbers(perm(lhs, "NC"), perm(rhs, "OI"), perm(out, "NC"))


def conv_general_dilated(lhs, rhs, window_strides: Sequence[int], padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision=None, preferred_element_type=None):
    lhs_shape, rhs_shape = aval_of(lhs).shape, aval_of(rhs).shape
    dn = conv_dimension_numbers(len(lhs_shape), dimension_numbers)
    nspatial = len(lhs_shape) - 2
    lhs_dilation = tuple(lhs_dilation or (1,) * nspatial)
    rhs_dilation = tuple(rhs_dilation or (1,) * nspatial)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("conv_general_dilated: string padding is not supported with lhs_dilation")
        in_spatial = [lhs_shape[i] for i in dn.lhs_spec[2:]]
        window = [(rhs_shape[i] - 1) * d + 1 for i, d in zip(dn.rhs_spec[2:], rhs_dilation, strict=True)]
        padding = padtype_to_pads(in_spatial, window, window_strides, padding)
    pet = None if preferred_element_type is None else to_dtype(preferred_element_type)
    return bind("conv_general_dilated", lhs, rhs, **_params(
        batch_group_count=int(batch_group_count), dimension_numbers=dn,
        feature_group_count=int(feature_group_count), lhs_dilation=lhs_dilation, out_sharding=None,
        padding=tuple(tuple(int(v) for v in p) for p in padding), precision=canonicalize_precision(precision),
        preferred_element_type=pet, rhs_dilation=rhs_dilation,
        window_strides=tuple(int(s) for s in window_strides)))


def conv(lhs, rhs, window_strides: Sequence[int], padding, precision=None, preferred_element_type=None):
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def optimization_barrier(operand):
    """`operand` (a pytree) unchanged, behind a barrier no rewrite crosses."""
    from ir.tree import tree_flatten, tree_unflatten

    leaves, treedef = tree_flatten(operand)
    return tree_unflatten(treedef, bind("optimization_barrier", *leaves))


# --- linear algebra and FFT (jax.lax.linalg, jax.lax.fft) --------------------------------------------

def cholesky_p(x):
    """The raw `cholesky` primitive (lower factor; JAX's `lax.linalg.cholesky` symmetrizes first)."""
    return bind("cholesky", x)


def triangular_solve(a, b, left_side: bool = False, lower: bool = False, transpose_a: bool = False,
                     conjugate_a: bool = False, unit_diagonal: bool = False):
    return bind("triangular_solve", a, b, **_params(
        conjugate_a=bool(conjugate_a), left_side=bool(left_side), lower=bool(lower),
        transpose_a=bool(transpose_a), unit_diagonal=bool(unit_diagonal)))


def qr(x, full_matrices: bool = True):
    """(q, r)."""
    return tuple(bind("qr", x, **_params(full_matrices=bool(full_matrices), pivoting=False, use_magma=None)))


def svd(x, full_matrices: bool = True, compute_uv: bool = True):
    """(u, s, vh) with `compute_uv`, else s (JAX's `lax.linalg.svd` order; the primitive gives s first)."""
    outs = bind("svd", x, **_params(algorithm=None, compute_uv=bool(compute_uv),
                                    full_matrices=bool(full_matrices), subset_by_index=None))
    return (outs[1], outs[0], outs[2]) if compute_uv else outs[0]


def eigh(x, lower: bool = True, sort_eigenvalues: bool = True):
    """(eigenvectors, eigenvalues), as `lax.linalg.eigh`."""
    return tuple(bind("eigh", x, **_params(algorithm=None, lower=bool(lower),
                                           sort_eigenvalues=bool(sort_eigenvalues), subset_by_index=None)))


def eig(x, compute_left_eigenvectors: bool = False, compute_right_eigenvectors: bool = True):
    return tuple(bind("eig", x, **_params(
        compute_left_eigenvectors=bool(compute_left_eigenvectors),
        compute_right_eigenvectors=bool(compute_right_eigenvectors), enable_eigvec_derivs=False,
        implementation=None)))


def lu(x):
    """(lu, pivots, permutation)."""
    return tuple(bind("lu", x))


def fft(x, fft_type: int, fft_lengths: Sequence[int]):
    """`fft_type` 0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT over the trailing `len(fft_lengths)` axes."""
    return bind("fft", x, **_params(fft_lengths=tuple(int(n) for n in fft_lengths), fft_type=int(fft_type)))


from ir.control import cond, fori_loop, map, scan, switch, while_loop  # noqa: E402, F401, A004
