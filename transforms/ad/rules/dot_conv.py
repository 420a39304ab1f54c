"""JVP and VJP rules of the contractions: dot_general, conv_general_dilated, ragged_dot_general.

Each is bilinear, so its JVP in either operand is the op itself with the tangent in that operand's place
(`jvp_linear`), and its VJP is JAX's transpose (jax/_src/lax/lax.py `_dot_general_transpose_lhs/rhs` and
`_ragged_dot_general_transpose_rule`, jax/_src/lax/convolution.py `_conv_general_dilated_transpose_lhs/rhs`):
the same contraction of the cotangent with the other operand, under dimension numbers (for conv also
strides, dilations, padding and group counts) computed here in Python, then a transpose or a regrouping of
axes back to the operand's layout. Complex operands are not conjugated (JAX's convention).

JAX's transposes branch on the params: feature or batch groups regroup the kernel (batch groups also the
result), and a preferred_element_type that differs from an operand's dtype adds conversions. Each branch
is its own rule, guarded by a case number its values compute (`_cases`), so no branch leaves identity ops.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from egglog import String, eq, i64, var

from ir.core import ShapedArray
from ir.errors import UnsupportedPrimitive
from ir.lax import ConvDimensionNumbers
from ir.params import Record, as_ints
from ir.primitives import abstract_eval
from rewrites.analyses.shapes import dimension_numbers
from rewrites.terms import T
from transforms.ad.rule import INT, INTS, STR, ADBook, Values, dtype, params, require, zeros_like
from transforms.rulebook import ValueType

A = ADBook("dot_conv")


# --- guarded cases ------------------------------------------------------------------------------------


def _cases(prim: str, i: int, arity: int, cases: dict[str, Callable], fn: Callable, *, math: str,
           **types: ValueType) -> None:
    """VJP rules of operand i, one per case. `fn(params, in_avals, out_avals)` returns the values of
    `types` by name and the case's name under "case"; each case's rule fires only for its own case number
    and builds `f(ct, *operands, ans, **values)`. All cases read the same values from one node; they are
    added through `ADBook.add`, each with a suffix (the book has no public way to give one slot several
    guarded rules)."""
    names = list(cases)

    def computed(params, ins, outs):
        found = fn(params, ins, outs)
        return {**found, "case": names.index(found["case"])}

    values = Values(computed, case=INT, **types)
    for k, (name, f) in enumerate(cases.items()):
        def build(seeds, xs, outs, vals, f=f, k=k):
            require(eq(vals["case"]).to(i64(k)))
            return f(seeds[0], *xs, outs[0], **{n: v for n, v in vals.items() if n != "case"})

        A.add("vjp", prim, str(i), "one", values, f"{math} ({name})", arity, 1, 1, build, suffix=f"-{name}")


def _remaining(axes, *removed) -> list[int]:
    return [a for a in axes if not any(a in r for r in removed)]


def _ranges_like(*groups) -> list[list[int]]:
    """Consecutive ranges with the lengths of `groups` (JAX's `ranges_like`)."""
    out, start = [], 0
    for g in groups:
        out.append(list(range(start, start + len(g))))
        start += len(g)
    return out


def _argsort(values) -> tuple[int, ...]:
    return tuple(int(a) for a in np.argsort(np.asarray(values, dtype=np.int64), kind="stable"))


def _dtype_case(result, aval: ShapedArray) -> str:
    """JAX converts a transpose's result to the operand's dtype when preferred_element_type changed it."""
    return "convert" if result.dtype != aval.dtype else "same"


# --- dot_general ----------------------------------------------------------------------------------------

A.jvp_linear("dot_general", [0, 1], math="d dot(x, y) = dot(dx, y) + dot(x, dy) (same params)")


def _dot_numbers(dn) -> tuple:
    (lc, rc), (lb, rb) = dn
    return (as_ints(lc), as_ints(rc)), (as_ints(lb), as_ints(rb))


def _dot_transpose_lhs(dn, x_ndim: int, y_ndim: int, swap_ans: bool = False):
    """JAX's `_dot_general_transpose_lhs`: the dimension numbers of dot(ct, y) and the permutation back
    to x's layout."""
    (x_contract, y_contract), (x_batch, y_batch) = dn
    x_kept = _remaining(range(x_ndim), x_contract, x_batch)
    y_kept = _remaining(range(y_ndim), y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    x_contract_sorted_by_y = [x_contract[k] for k in _argsort(y_contract)]
    unsorted_axes = [*x_batch, *x_kept, *x_contract_sorted_by_y]
    return ((ans_y, y_kept), (ans_batch, list(y_batch))), _argsort(unsorted_axes)


def _dot_values(operand: int) -> Callable:
    def fn(params, ins, outs):
        x, y = ins
        (xc, yc), (xb, yb) = _dot_numbers(params["dimension_numbers"])
        if operand == 0:
            dims, perm = _dot_transpose_lhs(((xc, yc), (xb, yb)), x.ndim, y.ndim)
        else:
            dims, perm = _dot_transpose_lhs(((yc, xc), (yb, xb)), y.ndim, x.ndim, swap_ans=True)
        [res] = abstract_eval("dot_general", [outs[0], ins[1 - operand]], {**params, "dimension_numbers": dims})
        (lc, rc), (lb, rb) = dims
        return {"case": _dtype_case(res, ins[operand]), "dims": dimension_numbers(lc, rc, lb, rb), "perm": perm}

    return fn


def _dot_params(ans, x, y) -> dict:
    """The original dot's params other than the dimension numbers, which the transposed dot keeps
    (precision, preferred_element_type; the operand-dtype default stays a default, the ct has the result
    dtype)."""
    params = T.params("dot_general", "dot")
    require(eq(ans).to(T.dot_general(x, y, var("dot_numbers", String), **params)))
    return params


def _dot_vjp(operand: int, convert: bool) -> Callable:
    def f(ct, x, y, ans, *, dims, perm):
        other = y if operand == 0 else x
        out = T.transpose(T.dot_general(ct, other, dims, **_dot_params(ans, x, y)), perm)
        return T.convert_element_type(out, dtype((x, y)[operand])) if convert else out

    return f


for _i, _side in ((0, "lhs"), (1, "rhs")):
    _cases("dot_general", _i, 2, {"same": _dot_vjp(_i, False), "convert": _dot_vjp(_i, True)}, _dot_values(_i),
           math=f"{_side} ct = transpose(dot(ct, other operand), perm) (JAX's _dot_general_transpose_{_side})",
           dims=STR, perm=INTS)


# --- conv_general_dilated ------------------------------------------------------------------------------

A.jvp_linear("conv_general_dilated", [0, 1],
             math="d conv(x, w) = conv(dx, w) + conv(x, dw) (same params)")


def _conv_specs(params) -> tuple[tuple[int, ...], ...]:
    dn = params["dimension_numbers"]
    return as_ints(dn.lhs_spec), as_ints(dn.rhs_spec), as_ints(dn.out_spec)


def _spec_transpose(spec) -> tuple[int, ...]:
    return (spec[1], spec[0], *spec[2:])


def _dilate_shape(shape, dilation) -> np.ndarray:
    return np.array([0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, dilation, strict=True)], np.int64)


def _regroup(shape, src: int, size: int, dst: int):
    """JAX's `_reshape_axis_out_of(src, size)` then `_reshape_axis_into(src, dst)` as (split shape,
    permutation, merged shape): reshape, transpose, reshape."""
    split = list(shape)
    split[src:src + 1] = [size, shape[src] // size]
    perm = [a for a in range(len(split)) if a != src]
    perm.insert(dst, src)
    merged = [n for a, n in enumerate(split) if a != src]
    merged[dst] *= split[src]
    return tuple(split), tuple(perm), tuple(merged)


def _conv_geometry(params, lhs, rhs, g):
    """Spatial sizes of lhs, rhs and the result, and the conv params as ints."""
    lhs_spec, rhs_spec, out_spec = _conv_specs(params)
    n = lhs.ndim - 2
    strides = as_ints(params["window_strides"])
    lhs_dil = as_ints(params["lhs_dilation"]) or (1,) * n
    rhs_dil = as_ints(params["rhs_dilation"]) or (1,) * n
    pads = [as_ints(p) for p in params["padding"]]
    in_shape = [lhs.shape[a] for a in lhs_spec[2:]]
    window = [rhs.shape[a] for a in rhs_spec[2:]]
    out_shape = [g.shape[a] for a in out_spec[2:]]
    return in_shape, window, out_shape, strides, pads, lhs_dil, rhs_dil


def _pairs(before, after) -> tuple[tuple[int, int], ...]:
    return tuple((int(b), int(a)) for b, a in zip(before, after, strict=True))


def _vjp_lhs_padding(in_shape, window, strides, out_shape, pads, lhs_dil, rhs_dil):
    lhs_d, rhs_d = _dilate_shape(in_shape, lhs_dil), _dilate_shape(window, rhs_dil)
    out_d = _dilate_shape(out_shape, strides)
    before = rhs_d - np.array([lo for lo, _ in pads], np.int64) - 1
    return _pairs(before, lhs_d + rhs_d - 1 - out_d - before)


def _vjp_rhs_padding(in_shape, window, strides, out_shape, pads, lhs_dil, rhs_dil):
    if not in_shape:
        return ()
    lhs_d, rhs_d = _dilate_shape(in_shape, lhs_dil), _dilate_shape(window, rhs_dil)
    out_d = _dilate_shape(out_shape, strides)
    lo = np.array([p[0] for p in pads], np.int64)
    return _pairs(lo, (out_d - lhs_d) + (rhs_d - lo - 1))


def _conv_lhs_values(params, ins, outs):
    """JAX's `_conv_general_dilated_transpose_lhs`: conv(ct, rev(w')) with strides and lhs dilation
    swapped, where w' moves the feature (or batch) groups from the kernel's output features to its input
    features; batch groups then move from the result's features to its batch axis."""
    lhs, rhs = ins
    g = outs[0]
    lhs_spec, rhs_spec, out_spec = _conv_specs(params)
    in_shape, window, out_shape, strides, pads, lhs_dil, rhs_dil = _conv_geometry(params, lhs, rhs, g)
    features, batches = int(params["feature_group_count"]), int(params["batch_group_count"])
    groups = features if features > 1 else batches
    kernel = regroup = ()
    w_shape = rhs.shape
    if groups > 1:
        kernel = _regroup(rhs.shape, rhs_spec[0], groups, rhs_spec[1])
        w_shape = kernel[2]
    conv = {**params, "window_strides": lhs_dil, "lhs_dilation": strides, "rhs_dilation": rhs_dil,
            "padding": _vjp_lhs_padding(in_shape, window, strides, out_shape, pads, lhs_dil, rhs_dil),
            "dimension_numbers": ConvDimensionNumbers(out_spec, _spec_transpose(rhs_spec), lhs_spec),
            "feature_group_count": groups, "batch_group_count": 1}
    [res] = abstract_eval("conv_general_dilated", [g, ShapedArray(w_shape, g.dtype)], conv)
    if batches > 1:
        regroup = _regroup(res.shape, lhs_spec[1], batches, lhs_spec[0])
    layout = "batch-groups" if batches > 1 else "feature-groups" if features > 1 else "plain"
    case = layout + ("-convert" if _dtype_case(res, lhs) == "convert" else "")
    k_split, k_perm, k_merged = kernel or ((),) * 3
    r_split, r_perm, r_merged = regroup or ((),) * 3
    return {"case": case, "k_split": k_split, "k_perm": k_perm, "k_merged": k_merged, "spatial": tuple(rhs_spec[2:]),
            "conv": conv, "r_split": r_split, "r_perm": r_perm, "r_merged": r_merged}


def _conv_lhs_vjp(kernel_regroup: bool, result_regroup: bool, convert: bool) -> Callable:
    def f(ct, x, w, ans, *, k_split, k_perm, k_merged, spatial, conv, r_split, r_perm, r_merged):
        if kernel_regroup:
            w = T.reshape(T.transpose(T.reshape(w, k_split), k_perm), k_merged)
        w = T.rev(w, spatial)
        if convert:
            w = T.convert_element_type(w, dtype(ct))
        out = T.conv_general_dilated(ct, w, **conv)
        if convert:
            out = T.convert_element_type(out, dtype(x))
        if result_regroup:
            out = T.reshape(T.transpose(T.reshape(out, r_split), r_perm), r_merged)
        return out

    return f


def _conv_rhs_values(params, ins, outs):
    """JAX's `_conv_general_dilated_transpose_rhs`: conv(x, ct) with strides and rhs dilation swapped and
    batch and feature axes exchanged; feature groups become batch groups and vice versa."""
    lhs, rhs = ins
    g = outs[0]
    lhs_spec, rhs_spec, out_spec = _conv_specs(params)
    in_shape, window, out_shape, strides, pads, lhs_dil, rhs_dil = _conv_geometry(params, lhs, rhs, g)
    features, batches = int(params["feature_group_count"]), int(params["batch_group_count"])
    conv = {**params, "window_strides": rhs_dil, "lhs_dilation": lhs_dil, "rhs_dilation": strides,
            "padding": _vjp_rhs_padding(in_shape, window, strides, out_shape, pads, lhs_dil, rhs_dil),
            "dimension_numbers": ConvDimensionNumbers(_spec_transpose(lhs_spec), _spec_transpose(out_spec),
                                                      _spec_transpose(rhs_spec)),
            "feature_group_count": batches, "batch_group_count": features}
    if g.size == 0:  # JAX returns a symbolic zero rather than a degenerate convolution
        return {"case": "empty", "conv": conv}
    [res] = abstract_eval("conv_general_dilated", [ShapedArray(lhs.shape, g.dtype), g], conv)
    return {"case": "plain-convert" if _dtype_case(res, rhs) == "convert" else "plain", "conv": conv}


def _conv_rhs_vjp(convert: bool) -> Callable:
    def f(ct, x, w, ans, *, conv):
        if convert:
            x = T.convert_element_type(x, dtype(ct))
        out = T.conv_general_dilated(x, ct, **conv)
        return T.convert_element_type(out, dtype(w)) if convert else out

    return f


_LHS_LAYOUTS = {"plain": (False, False), "feature-groups": (True, False), "batch-groups": (True, True)}
_cases("conv_general_dilated", 0, 2,
       {layout + suffix: _conv_lhs_vjp(*regroups, convert=bool(suffix))
        for layout, regroups in _LHS_LAYOUTS.items() for suffix in ("", "-convert")},
       _conv_lhs_values,
       math="lhs ct = conv(ct, rev(kernel regrouped)) with strides <-> lhs dilation, padding recomputed "
            "(JAX's _conv_general_dilated_transpose_lhs)",
       k_split=INTS, k_perm=INTS, k_merged=INTS, spatial=INTS, conv=params("conv_general_dilated"), r_split=INTS,
       r_perm=INTS, r_merged=INTS)
_cases("conv_general_dilated", 1, 2,
       {"plain": _conv_rhs_vjp(False), "plain-convert": _conv_rhs_vjp(True),
        "empty": lambda ct, x, w, ans, *, conv: zeros_like(w)},
       _conv_rhs_values,
       math="rhs ct = conv(x, ct) with strides <-> rhs dilation, feature <-> batch groups "
            "(JAX's _conv_general_dilated_transpose_rhs)",
       conv=params("conv_general_dilated"))


# --- ragged_dot_general --------------------------------------------------------------------------------

A.jvp_linear("ragged_dot_general", [0, 1],
             math="d ragged_dot(x, y, gs) = ragged_dot(dx, y, gs) + ragged_dot(x, dy, gs) (same params)")


def _ragged_values(operand: int) -> Callable:
    """JAX's `_ragged_dot_general_transpose_rule`, which JAX implements only for a ragged lhs
    non-contracting dimension (the `ragged_dot` form); other modes are unsupported there too."""

    def fn(params, ins, outs):
        x, y, group_sizes = ins
        rdn = params["ragged_dot_dimension_numbers"]
        (x_contract, y_contract), (x_batch, y_batch) = _dot_numbers(rdn.dot_dimension_numbers)
        [ragged] = as_ints(rdn.lhs_ragged_dimensions)
        y_group = as_ints(rdn.rhs_group_dimensions)
        x_kept = _remaining(range(x.ndim), x_contract, x_batch)
        y_kept = _remaining(range(y.ndim), y_contract, y_batch, y_group)
        if ragged not in x_kept:
            raise UnsupportedPrimitive("ragged_dot_general", "VJP (ragged contracting or batch dimension, "
                                       "which JAX does not transpose either)", "transforms/ad/rules/dot_conv.py")
        if params.get("group_offset") is not None:
            raise UnsupportedPrimitive("ragged_dot_general", "VJP with group_offset", "transforms/ad/rules/dot_conv.py")
        if operand == 0:
            ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
            dot = ((tuple(ans_y), tuple(y_kept)), (tuple(ans_batch), y_batch))
            lhs_ragged, groups = (len(x_batch) + x_kept.index(ragged),), y_group
            unsorted = [*x_batch, *x_kept, *(x_contract[k] for k in _argsort(y_contract))]
            operands = [outs[0], y, group_sizes]
        else:
            ans_batch, ans_x, _ = _ranges_like(x_batch, x_kept, y_kept)
            dot = ((tuple(x_kept), tuple(ans_x)), (x_batch, tuple(ans_batch)))
            lhs_ragged, groups = (ragged,), ()
            unsorted = [*y_group, *y_batch, *(y_contract[k] for k in _argsort(x_contract)), *y_kept]
            operands = [x, outs[0], group_sizes]
        rdn = Record("RaggedDotDimensionNumbers", (("dot_dimension_numbers", dot),
                                                   ("lhs_ragged_dimensions", lhs_ragged),
                                                   ("rhs_group_dimensions", groups)))
        ragged_params = {**params, "ragged_dot_dimension_numbers": rdn}
        [res] = abstract_eval("ragged_dot_general", operands, ragged_params)
        return {"case": _dtype_case(res, ins[operand]), "ragged": ragged_params, "perm": _argsort(unsorted)}

    return fn


def _ragged_vjp(operand: int, convert: bool) -> Callable:
    def f(ct, x, y, group_sizes, ans, *, ragged, perm):
        operands = [ct, y, group_sizes] if operand == 0 else [x, ct, group_sizes]
        out = T.transpose(T.ragged_dot_general(*operands, **ragged), perm)
        return T.convert_element_type(out, dtype((x, y)[operand])) if convert else out

    return f


for _i, _side in ((0, "lhs"), (1, "rhs")):
    _cases("ragged_dot_general", _i, 3, {"same": _ragged_vjp(_i, False), "convert": _ragged_vjp(_i, True)},
           _ragged_values(_i),
           math=f"{_side} ct = transpose(ragged_dot(ct with the other operand, group_sizes), perm) "
                f"(JAX's _ragged_dot_general_transpose_rule)",
           ragged=params("ragged_dot_general"), perm=INTS)
