"""Shape/dtype rules of reductions: axis reductions, arg-reductions, variadic `reduce`, cumulative
reductions and windowed reductions (`reduce_window*`, `select_and_scatter_add`, `select_and_gather_add`).

Rules follow jax/_src/lax/lax.py (`_reduce_op_shape_rule`, `_argminmax_shape_rule`, `_reduce_shape_rule`),
control_flow/loops.py (`_cumred_shape_rule`) and windowed_reductions.py (`reduce_window_shape_tuple`).
"""

from __future__ import annotations

from functools import partial

from ir.core import ClosedJaxpr, ShapedArray
from ir.params import as_ints
from ir.primitives import primitives_with, shape_rule
from ir.shapes.arrays import dilate_dim
from ir.shapes.common import ANY, BOOL_OR_INT, INT, NUM, check_axes, check_axis, check_dtype, dtype_param, fail

# --- axis reductions --------------------------------------------------------------------------

AXIS_REDUCTIONS = {
    # name: (accepted dtypes, keeps weak type)
    "reduce_sum": (NUM, True), "reduce_prod": (NUM, True),
    "reduce_max": (ANY, True), "reduce_min": (ANY, True),
    "reduce_and": (BOOL_OR_INT, False), "reduce_or": (BOOL_OR_INT, False), "reduce_xor": (BOOL_OR_INT, False),
}


def _axis_reduction(prim, accepted, keeps_weak, x, *, axes, **params):
    check_dtype(prim, x, accepted)
    axes = check_axes(prim, axes, x.ndim)
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return [ShapedArray(shape, x.dtype, keeps_weak and x.weak_type)]


for _name, (_accepted, _keeps_weak) in AXIS_REDUCTIONS.items():
    shape_rule(_name)(partial(_axis_reduction, _name, _accepted, _keeps_weak))


def _arg_reduction(prim, x, *, axes, index_dtype, **params):
    axes = as_ints(axes)
    if len(axes) != 1:
        fail(prim, "reduces exactly one axis", expected="axes=(axis,)", actual=axes)
    axis = check_axis(prim, axes[0], x.ndim)
    if x.shape[axis] < 1:
        fail(prim, "the reduced axis must not be empty", expected="size >= 1", actual=str(x))
    check_dtype(prim, x, ANY)
    index = dtype_param(prim, "index_dtype", index_dtype)
    if index.kind not in INT:
        fail(prim, "index_dtype must be an integer dtype", expected="an integer dtype", actual=str(index))
    return [ShapedArray(x.shape[:axis] + x.shape[axis + 1:], index)]


for _name in ("argmax", "argmin"):
    shape_rule(_name)(partial(_arg_reduction, _name))


def body_jaxpr(prim: str, value):
    """The Jaxpr of a jaxpr-valued param (a ClosedJaxpr, or a bare Jaxpr when traced)."""
    jaxpr = value.jaxpr if isinstance(value, ClosedJaxpr) else value
    if not hasattr(jaxpr, "invars"):
        fail(prim, "the jaxpr param is not a jaxpr", expected="{ lambda ... }", actual=repr(value))
    return jaxpr


def check_scalar_body(prim: str, value, dtypes: list) -> None:
    """A reducer body takes two scalars per operand (accumulators, then values) and returns one each."""
    jaxpr = body_jaxpr(prim, value)
    want_in = [ShapedArray((), d) for d in dtypes + dtypes]
    want_out = [ShapedArray((), d) for d in dtypes]
    got_in, got_out = [v.aval for v in jaxpr.invars], [v.aval for v in jaxpr.outvars]
    if [str(a) for a in got_in] != [str(a) for a in want_in] or \
            [str(a) for a in got_out] != [str(a) for a in want_out]:
        fail(prim, "the reducer jaxpr does not fit the operands",
             expected=f"({', '.join(map(str, want_in))}) -> ({', '.join(map(str, want_out))})",
             actual=f"({', '.join(map(str, got_in))}) -> ({', '.join(map(str, got_out))})")


def _operands_and_inits(prim: str, avals) -> tuple[list, list]:
    if not avals or len(avals) % 2:
        fail(prim, "takes operands followed by as many initial values",
             expected="an even, non-zero number of operands", actual=len(avals))
    n = len(avals) // 2
    operands, inits = list(avals[:n]), list(avals[n:])
    for x, init in zip(operands, inits, strict=True):
        if init.shape:
            fail(prim, "initial values must be scalars", expected="shape ()", actual=str(init))
        if init.dtype != x.dtype:
            fail(prim, "each initial value has the dtype of its operand", expected=str(x.dtype),
                 actual=str(init))
    if any(x.shape != operands[0].shape for x in operands):
        fail(prim, "operands must have the same shape", expected="equal shapes",
             actual=", ".join(map(str, operands)))
    return operands, inits


@shape_rule("reduce")
def _reduce(*avals, jaxpr, dimensions, **params):
    operands, inits = _operands_and_inits("reduce", avals)
    axes = check_axes("reduce", dimensions, operands[0].ndim, "dimensions")
    check_scalar_body("reduce", jaxpr, [x.dtype for x in operands])
    shape = tuple(d for i, d in enumerate(operands[0].shape) if i not in axes)
    return [ShapedArray(shape, x.dtype, x.weak_type and i.weak_type)
            for x, i in zip(operands, inits, strict=True)]


# --- cumulative reductions --------------------------------------------------------------------

def _cumulative(prim, x, *, axis, reverse=False, **params):
    check_dtype(prim, x, NUM)
    check_axis(prim, axis, x.ndim)
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]


for _name in primitives_with("cumulative"):
    shape_rule(_name)(partial(_cumulative, _name))


# --- windowed reductions ----------------------------------------------------------------------

def window_shape(prim: str, shape, window_dimensions, window_strides, padding,
                 base_dilation=None, window_dilation=None) -> tuple[int, ...]:
    """The result shape of sliding a (dilated) window over a padded, (dilated) operand."""
    ndim = len(shape)
    windows, strides = as_ints(window_dimensions), as_ints(window_strides)
    base = as_ints(base_dilation) if base_dilation is not None else (1,) * ndim
    wdil = as_ints(window_dilation) if window_dilation is not None else (1,) * ndim
    pads = [as_ints(p) for p in padding]
    for name, value in (("window_dimensions", windows), ("window_strides", strides),
                        ("base_dilation", base), ("window_dilation", wdil), ("padding", pads)):
        if len(value) != ndim:
            fail(prim, f"{name} needs one entry per operand axis", expected=ndim, actual=tuple(value))
    if any(len(p) != 2 for p in pads):
        fail(prim, "padding needs a (low, high) pair per axis", expected="pairs", actual=tuple(pads))
    for name, value in (("window_dimensions", windows), ("window_strides", strides),
                        ("base_dilation", base), ("window_dilation", wdil)):
        if any(v < 1 for v in value):
            fail(prim, f"{name} must be positive", expected=f"{name} >= 1", actual=value)
    out = []
    for d, w, s, b, wd, (lo, hi) in zip(shape, windows, strides, base, wdil, pads, strict=True):
        padded, window = dilate_dim(d, b) + lo + hi, dilate_dim(w, wd)
        out.append(0 if padded < window else (padded - window) // s + 1)
    return tuple(out)


WINDOW_REDUCTIONS = {"reduce_window_sum": NUM, "reduce_window_max": ANY, "reduce_window_min": ANY}


def _window_reduction(prim, accepted, x, *, window_dimensions, window_strides, padding,
                      base_dilation=None, window_dilation=None, **params):
    check_dtype(prim, x, accepted)
    shape = window_shape(prim, x.shape, window_dimensions, window_strides, padding, base_dilation,
                         window_dilation)
    return [ShapedArray(shape, x.dtype, x.weak_type)]


for _name, _accepted in WINDOW_REDUCTIONS.items():
    shape_rule(_name)(partial(_window_reduction, _name, _accepted))


@shape_rule("reduce_window")
def _reduce_window(*avals, jaxpr, window_dimensions, window_strides, padding, base_dilation=None,
                   window_dilation=None, consts=(), **params):
    operands, inits = _operands_and_inits("reduce_window", avals)
    body = body_jaxpr("reduce_window", jaxpr)
    n_consts = len(getattr(body, "constvars", ()))
    if n_consts and len(consts) != n_consts:
        fail("reduce_window", "consts must supply the reducer's constants", expected=n_consts,
             actual=len(consts))
    check_scalar_body("reduce_window", jaxpr, [x.dtype for x in operands])
    shape = window_shape("reduce_window", operands[0].shape, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation)
    return [ShapedArray(shape, x.dtype, x.weak_type and i.weak_type)
            for x, i in zip(operands, inits, strict=True)]


@shape_rule("select_and_scatter_add")
def _select_and_scatter_add(source, operand, *, window_dimensions, window_strides, padding, **params):
    """Scatters each window's `source` value to the element of `operand` the window selects."""
    prim = "select_and_scatter_add"
    windows = window_shape(prim, operand.shape, window_dimensions, window_strides, padding)
    if source.shape != windows:
        fail(prim, "source must have one value per window of the operand", expected=f"shape {windows}",
             actual=str(source))
    return [ShapedArray(operand.shape, source.dtype, source.weak_type)]


@shape_rule("select_and_gather_add")
def _select_and_gather_add(tangents, operand, *, window_dimensions, window_strides, padding,
                           base_dilation=None, window_dilation=None, **params):
    """Gathers from `tangents` the element each window of `operand` selects."""
    prim = "select_and_gather_add"
    if tangents.shape != operand.shape or tangents.dtype != operand.dtype:
        fail(prim, "tangents must have the operand's type", expected=str(operand), actual=str(tangents))
    shape = window_shape(prim, operand.shape, window_dimensions, window_strides, padding, base_dilation,
                         window_dilation)
    return [ShapedArray(shape, tangents.dtype, tangents.weak_type)]

