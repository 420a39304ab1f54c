"""Shape/dtype rules of contractions: dot_general, ragged_dot_general, conv_general_dilated.

Ported from jax/_src/lax/lax.py (`_dot_general_shape_rule`, `_dot_general_dtype_rule`,
`_ragged_dot_general_shape_rule`) and jax/_src/lax/convolution.py (`_conv_general_dilated_shape_rule`).
"""

from __future__ import annotations

from ir import dtypes as D
from ir.core import ShapedArray
from ir.dtypes import DType
from ir.params import Record, as_ints
from ir.primitives import shape_rule
from ir.shapes.arrays import dilate_dim
from ir.shapes.common import COMPLEX, FLOAT, INT, NUM, check_dtype, dtype_param, fail, same_dtypes, weak


def _dot_dimension_numbers(prim: str, dn) -> tuple[tuple[int, ...], ...]:
    try:
        (lc, rc), (lb, rb) = dn
    except (TypeError, ValueError):
        fail(prim, "malformed dimension_numbers",
             expected="((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))", actual=repr(dn))
    return as_ints(lc), as_ints(rc), as_ints(lb), as_ints(rb)


def _dims_ok(prim: str, side: str, dims: tuple[int, ...], ndim: int, kind: str) -> None:
    if len(set(dims)) != len(dims) or any(not 0 <= d < ndim for d in dims):
        fail(prim, f"{side} {kind} dimensions must be distinct axes of the {side}",
             expected=f"distinct axes in [0, {ndim})", actual=dims)


def dot_shape(prim: str, lhs: ShapedArray, rhs: ShapedArray, dn, rhs_group=()) -> tuple[int, ...]:
    """Batch axes, then the free axes of lhs, then the free axes of rhs (minus any rhs group axes)."""
    lc, rc, lb, rb = _dot_dimension_numbers(prim, dn)
    for side, aval, contract, batch in (("lhs", lhs, lc, lb), ("rhs", rhs, rc, rb)):
        _dims_ok(prim, side, contract, aval.ndim, "contracting")
        _dims_ok(prim, side, batch, aval.ndim, "batch")
        if set(contract) & set(batch):
            fail(prim, f"{side} batch and contracting dimensions must be disjoint", expected="disjoint axes",
                 actual=f"batch {batch}, contracting {contract}")
    for kind, ldims, rdims in (("batch", lb, rb), ("contracting", lc, rc)):
        lsizes, rsizes = [lhs.shape[d] for d in ldims], [rhs.shape[d] for d in rdims]
        if len(ldims) != len(rdims) or lsizes != rsizes:
            fail(prim, f"lhs and rhs {kind} dimensions must pair axes of equal size",
                 expected=f"rhs sizes {lsizes}", actual=f"{rsizes} ({lhs} and {rhs})")
    lfree = [s for i, s in enumerate(lhs.shape) if i not in lc and i not in lb]
    rfree = [s for i, s in enumerate(rhs.shape) if i not in rc and i not in rb and i not in rhs_group]
    return tuple(lhs.shape[d] for d in lb) + tuple(lfree) + tuple(rfree)


def _rank_key(dt: DType) -> tuple:
    """XLA's HigherPrecisionType order of operand dtypes (complex, exponent, mantissa, width, signed)."""
    part = {"c64": D.float32, "c128": D.float64}.get(dt.short, dt)
    info = D.finfo(part) if part.is_float else None
    return (dt.is_complex, info.maxexp if info else -1, info.nmant if info else -1,
            1 if part.is_bool else part.bits, part.kind != "u")


def _preferred(prim: str, result: DType, preferred) -> DType:
    """JAX's `_validate_preferred_element_type` and `_maybe_upcast` for the accumulation dtype."""
    if preferred is None:
        return result
    want = dtype_param(prim, "preferred_element_type", preferred)
    if want == result:
        return result
    if not (result.kind in INT and want.kind in FLOAT):
        for group in (INT, FLOAT, COMPLEX):
            if result.kind in group and want.kind not in group:
                fail(prim, "preferred_element_type must be of the operands' kind (or float for integers)",
                     expected=f"a dtype like {result}", actual=str(want))
        if result.kind == "i" and want.kind != "i":
            fail(prim, "preferred_element_type must keep the operands' signedness",
                 expected="a signed integer", actual=str(want))
    if want.itemsize < result.itemsize:
        fail(prim, "preferred_element_type must not be narrower than the operands",
             expected=f"at least {result.bits} bits", actual=str(want))
    return want


def _dot_dtype(prim: str, lhs: ShapedArray, rhs: ShapedArray, preferred) -> DType:
    for i, aval in enumerate((lhs, rhs)):
        check_dtype(prim, aval, NUM | {"b"}, i)
    lk, rk = _rank_key(lhs.dtype), _rank_key(rhs.dtype)
    if lk == rk and lhs.dtype != rhs.dtype:
        fail(prim, "operand dtypes are incomparable", expected="compatible dtypes", actual=f"{lhs}, {rhs}")
    return _preferred(prim, lhs.dtype if lk >= rk else rhs.dtype, preferred)


@shape_rule("dot_general")
def _dot_general(lhs, rhs, *, dimension_numbers, preferred_element_type=None, **params):
    shape = dot_shape("dot_general", lhs, rhs, dimension_numbers)
    dt = _dot_dtype("dot_general", lhs, rhs, preferred_element_type)
    return [ShapedArray(shape, dt, weak(dt, lhs, rhs))]


def _ragged_mode(lhs_ragged: int, lc, lb) -> str:
    return "batch" if lhs_ragged in lb else "contracting" if lhs_ragged in lc else "noncontracting"


@shape_rule("ragged_dot_general")
def _ragged_dot_general(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers, preferred_element_type=None,
                        **params):
    prim, rdn = "ragged_dot_general", ragged_dot_dimension_numbers
    dn = rdn.dot_dimension_numbers
    lc, rc, lb, rb = _dot_dimension_numbers(prim, dn)
    ragged, groups = as_ints(rdn.lhs_ragged_dimensions), as_ints(rdn.rhs_group_dimensions)
    if len(ragged) != 1 or not 0 <= ragged[0] < lhs.ndim:
        fail(prim, "needs exactly one lhs ragged dimension, an axis of the lhs", expected="one lhs axis",
             actual=ragged)
    mode = _ragged_mode(ragged[0], lc, lb)
    check_dtype(prim, group_sizes, INT, 2)
    if group_sizes.ndim == 0:
        fail(prim, "group_sizes must have rank >= 1", expected="rank >= 1", actual=str(group_sizes))
    if group_sizes.ndim != 1:
        free = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
        prefix = {"noncontracting": list(lb) + free[:free.index(ragged[0])],
                  "contracting": list(lb) + list(lc[:lc.index(ragged[0])]),
                  "batch": list(lb[:lb.index(ragged[0])])}[mode]
        want = tuple(lhs.shape[d] for d in prefix) + group_sizes.shape[-1:]
        if group_sizes.shape != want:
            fail(prim, "group_sizes must have the lhs axes before the ragged one, then the groups",
                 expected=f"shape {want}", actual=str(group_sizes))
    num_groups = group_sizes.shape[-1]
    if mode == "noncontracting":
        if len(groups) != 1 or not 0 <= groups[0] < rhs.ndim or groups[0] in rc or groups[0] in rb:
            fail(prim, "a noncontracting ragged dimension needs one rhs group axis, free in the rhs",
                 expected="one free rhs axis", actual=groups)
        if rhs.shape[groups[0]] != num_groups:
            fail(prim, "the rhs group axis must have one entry per group", expected=num_groups,
                 actual=str(rhs))
    elif groups:
        fail(prim, "a contracting or batch ragged dimension takes no rhs group axes", expected="()",
             actual=groups)
    shape = dot_shape(prim, lhs, rhs, dn, groups)
    if mode == "contracting":
        shape = (num_groups,) + shape
    dt = _dot_dtype(prim, lhs, rhs, preferred_element_type)
    return [ShapedArray(shape, dt, weak(dt, lhs, rhs))]


def _conv_specs(dn) -> tuple[tuple[int, ...], ...]:
    if isinstance(dn, Record):
        return as_ints(dn.lhs_spec), as_ints(dn.rhs_spec), as_ints(dn.out_spec)
    lhs_spec, rhs_spec, out_spec = dn
    return as_ints(lhs_spec), as_ints(rhs_spec), as_ints(out_spec)


@shape_rule("conv_general_dilated")
def _conv_general_dilated(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                          feature_group_count=1, batch_group_count=1, preferred_element_type=None, **params):
    prim = "conv_general_dilated"
    lhs_spec, rhs_spec, out_spec = _conv_specs(dimension_numbers)
    n = lhs.ndim
    if rhs.ndim != n or n < 2:
        fail(prim, "lhs and rhs must have the same rank (at least 2)", expected=f"rank {n}",
             actual=f"{lhs}, {rhs}")
    for name, spec in (("lhs_spec", lhs_spec), ("rhs_spec", rhs_spec), ("out_spec", out_spec)):
        if sorted(spec) != list(range(n)):
            fail(prim, f"{name} must be a permutation of the axes",
                 expected=f"a permutation of {tuple(range(n))}", actual=spec)
    strides, pads = as_ints(window_strides), [as_ints(p) for p in padding]
    ldil, rdil = as_ints(lhs_dilation) or (1,) * (n - 2), as_ints(rhs_dilation) or (1,) * (n - 2)
    for name, value in (("window_strides", strides), ("padding", pads), ("lhs_dilation", ldil),
                        ("rhs_dilation", rdil)):
        if len(value) != n - 2:
            fail(prim, f"{name} needs one entry per spatial axis", expected=n - 2, actual=tuple(value))
    if any(len(p) != 2 for p in pads) or any(v < 1 for v in strides + ldil + rdil):
        fail(prim, "padding needs (low, high) pairs; strides and dilations must be positive",
             expected="positive strides and dilations", actual=(strides, pads, ldil, rdil))
    groups, batch_groups = int(feature_group_count), int(batch_group_count)
    features, batch = lhs.shape[lhs_spec[1]], lhs.shape[lhs_spec[0]]
    in_features, out_features = rhs.shape[rhs_spec[1]], rhs.shape[rhs_spec[0]]
    if groups < 1 or batch_groups < 1 or (groups > 1 and batch_groups > 1):
        fail(prim, "group counts must be positive and at most one of them > 1",
             expected="feature_group_count or batch_group_count = 1", actual=(groups, batch_groups))
    if features % groups or features // groups != in_features or out_features % groups:
        fail(prim, "lhs features / feature_group_count must equal the rhs input features, and the rhs output "
             "features must be a multiple of feature_group_count",
             expected=f"rhs input features {features // groups}",
             actual=f"{lhs}, {rhs} with feature_group_count={groups}")
    if batch % batch_groups or out_features % batch_groups:
        fail(prim, "batch_group_count must divide the lhs batch size and the rhs output features",
             expected=f"divisors of {batch} and {out_features}", actual=batch_groups)
    spatial = []
    for i in range(n - 2):
        size = dilate_dim(lhs.shape[lhs_spec[i + 2]], ldil[i]) + pads[i][0] + pads[i][1]
        window = dilate_dim(rhs.shape[rhs_spec[i + 2]], rdil[i])
        if size < 0:
            fail(prim, "negative padding is larger than the spatial axis", expected="padded size >= 0",
                 actual=f"padding {pads[i]} of {lhs}")
        spatial.append(0 if size < window else (size - window) // strides[i] + 1)
    out_trans = (batch // batch_groups, out_features, *spatial)
    shape = [0] * n
    for position, size in zip(out_spec, out_trans, strict=True):
        shape[position] = size
    dt = same_dtypes(prim, lhs, rhs)
    check_dtype(prim, lhs, NUM | {"b"})
    dt = _preferred(prim, dt, preferred_element_type)
    return [ShapedArray(tuple(shape), dt, weak(dt, lhs, rhs))]
