"""Shape/dtype rules of array-construction and shape primitives.

iota, reshape, transpose, broadcast_in_dim, squeeze, concatenate, stack, unstack, tile, pad, rev, split,
device_put. These accept every dtype (keys included): they move elements, they do not compute with
them. Rules follow the `_..._shape_rule`s of jax/_src/lax/lax.py.
"""

from __future__ import annotations

import math

from ir.core import ShapedArray
from ir.params import as_ints
from ir.primitives import shape_rule
from ir.shapes.common import NUM, check_axes, check_axis, check_dtype, dtype_param, fail, same_dtypes, weak


def _sizes(prim: str, name: str, value) -> tuple[int, ...]:
    sizes = as_ints(value)
    if any(s < 0 for s in sizes):
        fail(prim, f"{name} must be non-negative", expected=f"{name} >= 0", actual=sizes)
    return sizes


@shape_rule("iota")
def _iota(*dyn_shape, dtype, shape, dimension, **params):
    if dyn_shape:
        fail("iota", "dynamic shapes are not supported", expected="no operands", actual=len(dyn_shape))
    dt = dtype_param("iota", "dtype", dtype)
    shape = _sizes("iota", "shape", shape)
    check_dtype("iota", ShapedArray(shape, dt), NUM)
    check_axis("iota", dimension, len(shape), "dimension")
    return [ShapedArray(shape, dt)]


@shape_rule("reshape")
def _reshape(x, *dyn_shape, new_sizes, dimensions=None, **params):
    if dyn_shape:
        fail("reshape", "dynamic shapes are not supported", expected="one operand", actual=1 + len(dyn_shape))
    new_sizes = _sizes("reshape", "new_sizes", new_sizes)
    if math.prod(new_sizes) != x.size:
        fail("reshape", "the total size must not change", expected=f"{x.size} elements",
             actual=f"new_sizes {new_sizes} for {x}")
    if dimensions is not None and sorted(as_ints(dimensions)) != list(range(x.ndim)):
        fail("reshape", "dimensions must be a permutation of the operand's axes",
             expected=f"a permutation of {tuple(range(x.ndim))}", actual=as_ints(dimensions))
    return [ShapedArray(new_sizes, x.dtype, x.weak_type)]


@shape_rule("transpose")
def _transpose(x, *, permutation, **params):
    perm = as_ints(permutation)
    if sorted(perm) != list(range(x.ndim)):
        fail("transpose", "permutation must be a permutation of the operand's axes",
             expected=f"a permutation of {tuple(range(x.ndim))}", actual=perm)
    return [ShapedArray(tuple(x.shape[i] for i in perm), x.dtype, x.weak_type)]


@shape_rule("broadcast_in_dim")
def _broadcast_in_dim(x, *dyn_shape, shape, broadcast_dimensions, **params):
    prim = "broadcast_in_dim"
    if dyn_shape:
        fail(prim, "dynamic shapes are not supported", expected="one operand", actual=1 + len(dyn_shape))
    shape, dims = _sizes(prim, "shape", shape), as_ints(broadcast_dimensions)
    if len(dims) != x.ndim:
        fail(prim, "broadcast_dimensions needs one entry per operand axis", expected=x.ndim, actual=dims)
    if list(dims) != sorted(set(dims)) or any(not 0 <= d < len(shape) for d in dims):
        fail(prim, "broadcast_dimensions must be strictly increasing axes of the result",
             expected=f"increasing axes in [0, {len(shape)})", actual=dims)
    for axis, d in enumerate(dims):
        if x.shape[axis] not in (1, shape[d]):
            fail(prim, f"operand axis {axis} has size {x.shape[axis]}, neither 1 nor result axis {d}",
                 expected=f"size 1 or {shape[d]}", actual=f"{x} into {shape}")
    return [ShapedArray(shape, x.dtype, x.weak_type)]


@shape_rule("squeeze")
def _squeeze(x, *, dimensions, **params):
    dims = check_axes("squeeze", dimensions, x.ndim, "dimensions")
    if any(x.shape[d] != 1 for d in dims):
        fail("squeeze", "only axes of size 1 can be squeezed", expected="size-1 axes",
             actual=f"dimensions {dims} of {x}")
    return [ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dims), x.dtype, x.weak_type)]


@shape_rule("concatenate")
def _concatenate(*xs, dimension, **params):
    if not xs:
        fail("concatenate", "needs at least one operand", expected=">= 1 operand", actual=0)
    dt = same_dtypes("concatenate", *xs)
    if len({x.ndim for x in xs}) != 1:
        fail("concatenate", "operands must have equal rank", expected="equal ranks",
             actual=", ".join(map(str, xs)))
    axis = check_axis("concatenate", dimension, xs[0].ndim, "dimension")
    rest = {x.shape[:axis] + x.shape[axis + 1:] for x in xs}
    if len(rest) != 1:
        fail("concatenate", f"operands may differ only along dimension {axis}",
             expected="equal other dimensions", actual=", ".join(map(str, xs)))
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return [ShapedArray(tuple(shape), dt, weak(dt, *xs))]


@shape_rule("stack")
def _stack(*xs, axis, **params):
    if not xs:
        fail("stack", "needs at least one operand", expected=">= 1 operand", actual=0)
    dt = same_dtypes("stack", *xs)
    if any(x.shape != xs[0].shape for x in xs):
        fail("stack", "operands must have the same shape", expected="equal shapes",
             actual=", ".join(map(str, xs)))
    axis = check_axis("stack", axis, xs[0].ndim, "axis", allow_end=True)
    shape = xs[0].shape[:axis] + (len(xs),) + xs[0].shape[axis:]
    return [ShapedArray(shape, dt, weak(dt, *xs))]


@shape_rule("tile")
def _tile(x, *, reps, **params):
    reps = _sizes("tile", "reps", reps)
    if len(reps) != x.ndim:
        fail("tile", "reps needs one entry per operand axis", expected=x.ndim, actual=reps)
    return [ShapedArray(tuple(s * r for s, r in zip(x.shape, reps, strict=True)), x.dtype, x.weak_type)]


def dilate_dim(size: int, dilation: int) -> int:
    """Size of an axis after inserting `dilation - 1` holes between its elements."""
    return 0 if size == 0 else 1 + dilation * (size - 1)


@shape_rule("pad")
def _pad(x, padding_value, *, padding_config, **params):
    dt = same_dtypes("pad", x, padding_value, what="operand and padding value")
    if padding_value.shape:
        fail("pad", "the padding value must be a scalar", expected="shape ()", actual=str(padding_value))
    config = [as_ints(c) for c in padding_config]
    if len(config) != x.ndim or any(len(c) != 3 for c in config):
        fail("pad", "padding_config needs one (low, high, interior) triple per axis",
             expected=f"{x.ndim} triples", actual=tuple(config))
    if any(interior < 0 for _, _, interior in config):
        fail("pad", "interior padding must be non-negative", expected="interior >= 0", actual=tuple(config))
    shape = tuple(lo + hi + dilate_dim(d, interior + 1)
                  for (lo, hi, interior), d in zip(config, x.shape, strict=True))
    if any(d < 0 for d in shape):
        fail("pad", "negative padding removes more than the axis holds", expected="sizes >= 0", actual=shape)
    return [ShapedArray(shape, dt, weak(dt, x, padding_value))]


@shape_rule("rev")
def _rev(x, *, dimensions, **params):
    check_axes("rev", dimensions, x.ndim, "dimensions")
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]


@shape_rule("split")
def _split(x, *, sizes, axis, **params):
    sizes = _sizes("split", "sizes", sizes)
    axis = check_axis("split", axis, x.ndim)
    if sum(sizes) != x.shape[axis]:
        fail("split", f"sizes must add up to the size of axis {axis}", expected=x.shape[axis],
             actual=f"sum{sizes} = {sum(sizes)}")
    return [ShapedArray(x.shape[:axis] + (s,) + x.shape[axis + 1:], x.dtype, x.weak_type) for s in sizes]


@shape_rule("unstack")
def _unstack(x, *, axis, **params):
    """The transpose of stack (JAX's grad of `jnp.stack` prints it): one result per index of `axis`, that
    axis removed."""
    axis = check_axis("unstack", axis, x.ndim)
    return [ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype, x.weak_type)] * x.shape[axis]


@shape_rule("device_put")
def _device_put(*xs, **params):
    """A transfer: each operand comes back unchanged (the params name devices and copy semantics)."""
    return list(xs)
