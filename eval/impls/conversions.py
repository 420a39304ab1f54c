"""Dtype primitives: convert_element_type, bitcast_convert_type, reduce_precision (XLA CPU semantics).

- convert_element_type: complex to a real dtype takes the real part; anything to bool is `x != 0`
  (nan is true); float to integer truncates toward zero and saturates (nan gives 0, out-of-range
  values the type's min or max); integer narrowing wraps; conversions to bfloat16 go through float32,
  as XLA's emitter does.
- bitcast_convert_type: reinterprets the bits; to a narrower dtype adds a trailing dimension of the
  width ratio, to a wider one removes the trailing dimension.
- reduce_precision: XLA's bit-level rounding to `exponent_bits`/`mantissa_bits` (round to nearest
  even, overflow to inf, values below the target's smallest normal flushed to signed zero, nan kept).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from eval.registry import impl

_BF16, _F32 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)


def _numpy_dtype(dtype) -> np.dtype:
    """A param's dtype (an `ir.dtypes.DType` or anything NumPy names) as a NumPy dtype."""
    return dtype.numpy if hasattr(dtype, "numpy") else np.dtype(dtype)


def _is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt == _BF16


@impl("convert_element_type")
@np.errstate(all="ignore")
def convert_element_type(x, *, new_dtype, weak_type=False, sharding=None):
    to = _numpy_dtype(new_dtype)
    if x.dtype.kind == "c" and to.kind != "c":
        x = x.real
    if to == np.bool_:
        return np.asarray(x != 0)
    if _is_float(x.dtype) and to.kind in "iu":
        return _float_to_int(x, to)
    if to == _BF16 and x.dtype != _BF16:
        x = x.astype(_F32)
    return x.astype(to)


def _float_to_int(x: np.ndarray, to: np.dtype) -> np.ndarray:
    """Truncation toward zero, saturating at the integer range; nan converts to 0 (XLA)."""
    info = np.iinfo(to)
    x = x.astype(np.float64) if x.dtype.itemsize < 8 else x
    low, high = x <= info.min, x >= float(info.max)
    in_range = ~(low | high | np.isnan(x))
    result = np.where(in_range, x, 0).astype(to)
    return np.where(low, to.type(info.min), np.where(high, to.type(info.max), result)).astype(to)


@impl("bitcast_convert_type")
def bitcast_convert_type(x, *, new_dtype):
    to = _numpy_dtype(new_dtype)
    old_size, new_size = x.dtype.itemsize, to.itemsize
    if old_size == new_size:
        return x.view(to)
    flat = np.ascontiguousarray(x).reshape(-1).view(to)
    if old_size > new_size:
        return flat.reshape(x.shape + (old_size // new_size,))
    if not x.shape or x.shape[-1] != new_size // old_size:
        raise ValueError(f"bitcast_convert_type: {x.dtype}{list(x.shape)} to {to} needs a trailing "
                         f"dimension of {new_size // old_size}")
    return flat.reshape(x.shape[:-1])


@impl("reduce_precision")
@np.errstate(all="ignore")
def reduce_precision(x, *, exponent_bits, mantissa_bits):
    """XLA's EmitReducePrecisionIR on the unsigned bit pattern of `x` (which keeps its dtype)."""
    if not _is_float(x.dtype):
        raise TypeError(f"reduce_precision: needs a floating-point operand, got {x.dtype}")
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision: exponent_bits={exponent_bits} must be >= 1 and "
                         f"mantissa_bits={mantissa_bits} >= 0")
    nbits = 8 * x.dtype.itemsize
    src_mantissa = int(ml_dtypes.finfo(x.dtype).nmant)
    src_exponent = nbits - 1 - src_mantissa
    all_ones = (1 << nbits) - 1
    bits = x.view(f"u{x.dtype.itemsize}")
    if mantissa_bits < src_mantissa:
        dropped = src_mantissa - mantissa_bits
        last_kept_bit = 1 << dropped
        # Round to nearest even: add 0111... plus the last kept bit, then clear the dropped bits.
        bias = (bits & last_kept_bit) >> dropped
        bits = (bits + bias + ((last_kept_bit >> 1) - 1)) & (all_ones ^ (last_kept_bit - 1))
    if exponent_bits < src_exponent:
        exponent_mask = ((1 << src_exponent) - 1) << src_mantissa
        exponent_bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & exponent_mask
        overflows = exponent > ((exponent_bias + reduced_bias) << src_mantissa)
        underflows = exponent <= ((exponent_bias - reduced_bias) << src_mantissa)
        signed_zero = bits & (1 << (nbits - 1))
        bits = np.where(overflows, signed_zero | exponent_mask, bits)
        bits = np.where(underflows, signed_zero, bits)
    result = np.asarray(bits).view(x.dtype)
    nan_value = x if mantissa_bits > 0 else np.asarray(np.inf, x.dtype)
    return np.where(np.isnan(x), nan_value, result).astype(x.dtype)
